// Where the server spends its time under load, two ways: the V8 CPU profile that `node --cpu-prof`
// writes on exit, reduced to self time per function (DevTools' "Bottom-Up" view), and Linux perf
// samples of the process, which also see what V8 calls "idle": uWS's native code and the kernel.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { BenchError, run } from './common.ts';

interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileSummary {
  readonly file: string;
  readonly total_ms: number;
  /** Functions by self time, largest first; "(idle)" is time outside JavaScript: uWS's native loop, the kernel. */
  readonly top: readonly { readonly name: string; readonly pct: number }[];
}

/** Summarizes the main thread's profile in `dir` (workers write their own; the main thread's is the largest). */
export async function profileSummary(dir: string): Promise<ProfileSummary> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (!files.length) throw new BenchError(`no .cpuprofile in ${dir}`);
  let best: { file: string; p: CpuProfile; total: number } | null = null;
  for (const f of files) {
    const p = JSON.parse(await readFile(path.join(dir, f), 'utf8')) as CpuProfile;
    const total = p.timeDeltas.reduce((a, b) => a + b, 0);
    if (!best || total > best.total) best = { file: f, p, total };
  }
  if (!best) throw new BenchError(`no readable profile in ${dir}`);
  const byId = new Map(best.p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  best.p.samples.forEach((id, i) => {
    const cf = byId.get(id)?.callFrame;
    const where = cf?.url ? ` ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}` : '';
    const key = `${cf?.functionName || '(anonymous)'}${where}`;
    self.set(key, (self.get(key) ?? 0) + (best.p.timeDeltas[i] ?? 0));
  });
  const top = [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 30)
    .map(([name, us]) => ({ name, pct: +((us / best.total) * 100).toFixed(2) }));
  return { file: best.file, total_ms: Math.round(best.total / 1000), top };
}

export interface PerfSummary {
  readonly command: string;
  /** Share of samples per binary: node (V8 and its builtins), the kernel, uWS's addon, libduckdb, libc, JIT code. */
  readonly by_dso: readonly { readonly dso: string; readonly pct: number }[];
  readonly top_symbols: readonly { readonly symbol: string; readonly pct: number }[];
}

/** Lines of `perf report --stdio` such as "  51.89%  node   [.] Builtins_LoadIC": percentage, then the rest. */
function perfLines(text: string): { pct: number; rest: string }[] {
  const out: { pct: number; rest: string }[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const cut = t.indexOf('%');
    const pct = Number(t.slice(0, cut));
    if (cut > 0 && Number.isFinite(pct)) out.push({ pct, rest: t.slice(cut + 1).trim() });
  }
  return out;
}

/**
 * Samples a process's CPU with Linux perf for `seconds` (all its threads, or its main thread only),
 * then reduces the record to shares per binary and the top symbols. Where a V8 profile says "idle"
 * (native code, the kernel), this says which. Null when perf is not available or not permitted.
 */
export async function perfSample(pid: number, seconds: number, file: string, mainThreadOnly: boolean): Promise<PerfSummary | null> {
  const target = mainThreadOnly ? ['-t', String(pid)] : ['-p', String(pid)];
  const args = ['record', '-F', '999', '-g', ...target, '-o', file, '--', 'sleep', String(seconds)];
  const rec = await run('perf', args).catch(() => null);
  if (!rec || rec.code !== 0) return null;
  const report = async (sort: string): Promise<{ pct: number; rest: string }[]> =>
    perfLines((await run('perf', ['report', '-i', file, '--stdio', '--no-children', '-g', 'none', '--sort', sort])).stdout);
  const dsos = await report('dso');
  const syms = await report('dso,sym');
  return {
    command: `perf ${args.join(' ')}`,
    by_dso: dsos.slice(0, 8).map((l) => ({ dso: l.rest, pct: l.pct })),
    top_symbols: syms.slice(0, 15).map((l) => ({ symbol: l.rest.replace(/\s+/g, ' '), pct: l.pct })),
  };
}
