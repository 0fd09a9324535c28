// The processes under load: our server (`family-events serve`, a child process exactly as an
// operator runs it, logging to a file) and the uWS hello-world ceiling; plus the admin /metrics
// counters that tell us every status the server answered, which wrk alone does not.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { AccountsDb } from '../../ledger/sqlite/store.ts';
import { BenchError, freePort, NOW_ISO, REPO_ROOT, sleep } from './common.ts';
import { EXCLUDED_CATEGORIES } from './dataset.ts';
import type { Plan } from '../../ledger/accounts.ts';

export interface Child {
  readonly base: string;
  /** Request headers every request to this target carries (the server's API key). */
  readonly headers: readonly string[];
  readonly adminBase: string | null;
  readonly pid: number;
  readonly logFile: string;
  stop(): Promise<void>;
}

/** "Name: value" header lines (wrk's -H form) as the object fetch and undici take. */
export const headerObject = (lines: readonly string[]): Record<string, string> =>
  Object.fromEntries(lines.map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1).trim()]));

function stopper(child: ChildProcess, what: string): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    // SIGTERM drains in-flight requests; wrk has stopped by now, so a few seconds is plenty.
    const timer = setTimeout(() => {
      process.stderr.write(`[bench] ${what} did not exit after SIGTERM; sending SIGKILL\n`);
      child.kill('SIGKILL');
    }, 15_000);
    await exited;
    clearTimeout(timer);
  };
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-15).join('\n');
  } catch {
    return '(no output)';
  }
}

async function waitFor(url: string, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new BenchError(`the process exited (${child.exitCode}) before ${url} answered 200; its output:\n${tail(logFile)}`);
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status === 200) return;
      last = `status ${r.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(200);
  }
  throw new BenchError(`${url} did not answer 200 within ${timeoutMs / 1000} s (${last}); output:\n${tail(logFile)}`);
}

export interface ServerOptions {
  readonly dataDir: string;
  readonly logFile: string;
  readonly logLevel: string;
  readonly poolThreads: number;
  /** Extra node flags, e.g. --cpu-prof for a profile of the main thread under load. */
  readonly nodeArgs?: readonly string[];
  /**
   * Settings on top of the bench's own (DATABASE_URL, NODE_NAME, PUBLIC_BASE_URL, WEB_BASE_URL…).
   * DATABASE_URL is never inherited from the bench's environment: the server is on the embedded
   * ledger unless this names a database.
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The API key every request carries. By default a new key on BENCH_PLAN in the embedded ledger
   * of DATA_DIR (benchKey); a server on the PostgreSQL ledger needs one made there (PgAccounts).
   */
  readonly key?: string;
  /** The checkout whose compiled server runs (bench/ab.ts: another commit's); this one by default. */
  readonly repoRoot?: string;
}

/**
 * The plan of the benchmark's key: Community's exclusions (so the scenarios search what a
 * Community caller sees) without its monthly cap or request rate, which a load test would hit in
 * its first second. Every request is still metered: reserved, charged and fsynced like any other.
 */
export const BENCH_PLAN: Plan = {
  name: 'bench',
  monthlyRecordLimit: null,
  excludedCategories: [...EXCLUDED_CATEGORIES],
  attributionRequired: true,
  requestsPerMinute: 1_000_000_000,
};

/** A key on BENCH_PLAN in the data directory's ledger (as `family-events keys create` makes one). */
export function benchKey(dataDir: string): string {
  const accounts = AccountsDb.open(path.join(dataDir, 'ledger'));
  try {
    accounts.setPlan(BENCH_PLAN);
    return accounts.createKey('Benchmarks', 'bench@localhost', BENCH_PLAN.name).key;
  } finally {
    accounts.close();
  }
}

/** Starts `node bin/family-events.js serve` and resolves once /readyz answers 200. */
export async function startServer(o: ServerOptions): Promise<Child> {
  const port = await freePort();
  let adminPort = await freePort();
  while (adminPort === port) adminPort = await freePort();
  const key = o.key ?? benchKey(o.dataDir);
  // stdout straight into a file: logging is part of the product's cost, but a pipe read by this
  // process would add our own CPU time to the figures.
  const fd = openSync(o.logFile, 'a');
  const inherited = { ...process.env };
  delete inherited.DATABASE_URL;
  const root = o.repoRoot ?? REPO_ROOT;
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), path.join(root, 'bin', 'family-events.js'), 'serve'], {
    cwd: root,
    env: {
      ...inherited,
      DATA_DIR: o.dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      FAMILY_EVENTS_NOW: NOW_ISO,
      LOG_LEVEL: o.logLevel,
      POOL_THREADS: String(o.poolThreads),
      DEMO_RATE_PER_MINUTE: '100000000',
      // The website's per-address limits would answer a load test from one address with 429 pages.
      WEB_LISTINGS_PER_MINUTE: '100000000',
      WEB_CALENDARS_PER_MINUTE: '100000000',
      ...o.env,
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const s: Child = {
    base: `http://127.0.0.1:${port}`,
    headers: [`Authorization: Bearer ${key}`],
    adminBase: `http://127.0.0.1:${adminPort}`,
    pid: child.pid ?? -1,
    logFile: o.logFile,
    stop: stopper(child, 'the server'),
  };
  try {
    // A fresh DATA_DIR builds the sample on first start (~5 s); loading 1M events takes longer.
    await waitFor(`${s.base}/readyz`, child, o.logFile, 300_000);
  } catch (err) {
    await s.stop();
    throw err;
  }
  return s;
}

/** Starts a bench process (a peer) and resolves once `readyPath` answers 200. */
export async function startProcess(o: {
  what: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  logFile: string;
  readyPath: string;
  port: number;
  timeoutMs?: number;
}): Promise<Child> {
  const fd = openSync(o.logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', ...o.args], { cwd: REPO_ROOT, env: { ...process.env, ...o.env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const s: Child = { base: `http://127.0.0.1:${o.port}`, headers: [], adminBase: null, pid: child.pid ?? -1, logFile: o.logFile, stop: stopper(child, o.what) };
  try {
    await waitFor(`${s.base}${o.readyPath}`, child, o.logFile, o.timeoutMs ?? 30_000);
  } catch (err) {
    await s.stop();
    throw err;
  }
  return s;
}

/** Starts the bare uWS hello-world and resolves once it answers. */
/** The hello-world; with `bodyFile`, it also answers /body with that file's bytes. */
export async function startHello(logFile: string, bodyFile: string | null = null): Promise<Child> {
  const port = await freePort();
  const args = [path.join(REPO_ROOT, 'bench', 'lib', 'hello.ts'), String(port), ...(bodyFile ? [bodyFile] : [])];
  return startProcess({ what: 'the hello-world server', args, logFile, readyPath: '/', port });
}

/** Counter samples by metric name and label set, e.g. counters.get('http_requests_total{route="/v1/events",status="200"}'). */
export type Counters = ReadonlyMap<string, number>;

export async function scrapeCounters(adminBase: string): Promise<Counters> {
  const text = await (await fetch(`${adminBase}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('http_requests_total{') && !line.startsWith('response_cache_total{')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

function labels(key: string): Record<string, string> {
  const inner = key.slice(key.indexOf('{') + 1, key.lastIndexOf('}'));
  const out: Record<string, string> = {};
  for (const part of inner.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq)] = part.slice(eq + 1).replaceAll('"', '');
  }
  return out;
}

export interface CounterDelta {
  /** Status → responses during the interval, every route. */
  readonly statuses: Record<string, number>;
  readonly cache_hits: number;
  readonly cache_misses: number;
}

export function counterDelta(before: Counters, after: Counters): CounterDelta {
  const statuses: Record<string, number> = {};
  let hits = 0;
  let misses = 0;
  for (const [key, value] of after) {
    const d = value - (before.get(key) ?? 0);
    if (!d) continue;
    const l = labels(key);
    if (key.startsWith('http_requests_total{') && l.status) statuses[l.status] = (statuses[l.status] ?? 0) + d;
    else if (l.result === 'hit') hits += d;
    else if (l.result === 'miss') misses += d;
  }
  return { statuses, cache_hits: hits, cache_misses: misses };
}

/** Resident set size of a process in bytes (VmRSS), and its lifetime peak (VmHWM). */
export function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 'NaN') * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Samples VmRSS every 50 ms until stopped; the largest sample is the phase's peak. */
export function rssSampler(pid: number): { stop(): { peak: number; start: number } } {
  const start = memory(pid).rss;
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, memory(pid).rss);
  }, 50);
  return {
    stop: () => {
      clearInterval(timer);
      return { peak: Math.max(peak, memory(pid).rss), start };
    },
  };
}

/** Clock ticks are 1/100 s on Linux (USER_HZ); /proc/<pid>/stat fields 14 and 15 are utime and stime. */
export const TICK_US = 10_000;

function ticksOf(statFile: string): number | null {
  try {
    const text = readFileSync(statFile, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** CPU ticks used so far by a process and by its main thread (whose thread id is the pid). */
export function cpuTicks(pid: number): { main: number; process: number } | null {
  const all = ticksOf(`/proc/${pid}/stat`);
  const main = ticksOf(`/proc/${pid}/task/${pid}/stat`);
  return all === null || main === null ? null : { main, process: all };
}
