// Drives wrk and reads its report: requests/s, the --latency percentiles, errors. wrk counts only
// statuses >= 400 as "Non-2xx or 3xx"; the server's own metrics fill in the rest (see search.ts).
import { existsSync } from 'node:fs';
import { BenchError, log, run } from './common.ts';

export const WRK = '/usr/bin/wrk';

export interface WrkOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  /** A Lua request generator and the arguments its init() receives. */
  readonly script?: string;
  readonly scriptArgs?: readonly string[];
  /** Extra request headers, "Name: value" (wrk -H; Lua-generated requests carry them too). */
  readonly headers?: readonly string[];
}

export interface WrkResult {
  readonly rps: number;
  readonly requests: number;
  readonly seconds: number;
  readonly p50_ms: number | null;
  readonly p75_ms: number | null;
  readonly p90_ms: number | null;
  readonly p99_ms: number | null;
  readonly latency_avg_ms: number | null;
  readonly max_ms: number | null;
  /** Responses with status >= 400, as wrk counts them. */
  readonly non2xx_or_3xx: number;
  readonly socket_errors: { readonly connect: number; readonly read: number; readonly write: number; readonly timeout: number };
  readonly command: string;
  readonly raw: string;
}

const UNIT_MS: Record<string, number> = { us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
const TIME_UNIT_S: Record<string, number> = { us: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

const toMs = (value: string | undefined, unit: string | undefined): number | null =>
  value === undefined || unit === undefined || UNIT_MS[unit] === undefined ? null : +(Number(value) * UNIT_MS[unit]).toFixed(4);

export function parseWrk(raw: string, command: string): WrkResult {
  // Line by line on trimmed lines: anchored, linear regexes only.
  const lines = raw.split('\n').map((l) => l.trim());
  const find = (re: RegExp): RegExpExecArray | null => {
    for (const l of lines) {
      const m = re.exec(l);
      if (m) return m;
    }
    return null;
  };
  const rps = find(/^Requests\/sec:\s+([\d.]+)$/);
  const total = find(/^(\d+) requests in ([\d.]+)([a-z]+),/);
  if (!rps || !total) throw new BenchError(`cannot read wrk's report:\n${raw}`);
  const pct = (p: number): number | null => {
    const m = find(new RegExp(`^${p}%\\s+([\\d.]+)([a-z]+)$`));
    return toMs(m?.[1], m?.[2]);
  };
  // Latency  avg  stdev  max  +/- stdev
  const lat = find(/^Latency\s+([\d.]+)([a-z]+)\s+([\d.]+)([a-z]+)\s+([\d.]+)([a-z]+)\s/);
  const sock = find(/^Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const non2xx = find(/^Non-2xx or 3xx responses: (\d+)/);
  return {
    rps: Number(rps[1]),
    requests: Number(total[1]),
    seconds: Number(total[2]) * (TIME_UNIT_S[total[3] ?? 's'] ?? 1),
    p50_ms: pct(50),
    p75_ms: pct(75),
    p90_ms: pct(90),
    p99_ms: pct(99),
    latency_avg_ms: toMs(lat?.[1], lat?.[2]),
    max_ms: toMs(lat?.[5], lat?.[6]),
    non2xx_or_3xx: non2xx ? Number(non2xx[1]) : 0,
    socket_errors: {
      connect: Number(sock?.[1] ?? 0),
      read: Number(sock?.[2] ?? 0),
      write: Number(sock?.[3] ?? 0),
      timeout: Number(sock?.[4] ?? 0),
    },
    command,
    raw,
  };
}

export function wrkArgs(o: WrkOptions): string[] {
  // One load-generator thread: the server under test needs the other core. A 10 s timeout keeps
  // slow answers in the latency figures instead of turning them into timeouts at wrk's default 2 s.
  const args = ['-t1', `-c${o.connections}`, `-d${o.durationS}s`, '--latency', '--timeout', '10s'];
  for (const h of o.headers ?? []) args.push('-H', h);
  if (o.script) args.push('-s', o.script);
  args.push(o.url);
  if (o.scriptArgs?.length) args.push('--', ...o.scriptArgs);
  return args;
}

export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const args = wrkArgs(o);
  const r = await run(WRK, args);
  // The report names the command without the key it carried.
  const command = `wrk ${args.map((a) => (a.startsWith('Authorization:') ? 'Authorization: Bearer <bench key>' : a)).join(' ')}`;
  if (r.code !== 0) throw new BenchError(`${command} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return parseWrk(r.stdout, command);
}

/** wrk comes from Debian: installed on first use (as the PostGIS peer is), or a clear error saying how. */
export async function ensureWrk(): Promise<void> {
  if (existsSync(WRK)) return;
  log('wrk is not installed: apt-get install -y wrk');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = await run('apt-get', ['install', '-y', '-q', 'wrk'], { env });
  if (r.code !== 0) {
    await run('apt-get', ['update', '-q'], { env });
    r = await run('apt-get', ['install', '-y', '-q', 'wrk'], { env });
  }
  if (!existsSync(WRK))
    throw new BenchError(
      `could not install wrk (apt-get install -y wrk exited ${r.code}); install it by hand as root and rerun:\n${r.stderr.trim().split('\n').slice(-5).join('\n')}`,
    );
}
