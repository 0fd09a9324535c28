// How bench/micro.ts times its tasks: tinybench settings per budget, and the extraction of one
// MicroResult per task.
import { Bench, type FnReturnedObject } from 'tinybench';
import type { MicroResult } from '../micro.ts';

/** One benchmark task; `consumed` adds up what its ops returned, so no result is dead code. */
export interface MicroTask {
  readonly group: string;
  readonly name: string;
  readonly note: string | undefined;
  readonly async: boolean;
  readonly fn: () => unknown;
  readonly consumed: { n: number };
}

export function syncTask(group: string, name: string, op: () => number, note?: string): MicroTask {
  const consumed = { n: 0 };
  return {
    group,
    name,
    note,
    async: false,
    consumed,
    fn: () => {
      consumed.n += op();
    },
  };
}

export function asyncTask(group: string, name: string, op: () => Promise<number>, note?: string): MicroTask {
  const consumed = { n: 0 };
  return {
    group,
    name,
    note,
    async: true,
    consumed,
    fn: async () => {
      consumed.n += await op();
    },
  };
}

/**
 * An op far below a microsecond, timed `calls` at a time: one sample is one batch's mean per call.
 * Timed one by one, such an op would measure performance.now() itself.
 */
export function batchTask(group: string, name: string, calls: number, op: (i: number) => number, note: string): MicroTask {
  const consumed = { n: 0 };
  let i = 0;
  const fn = (): FnReturnedObject => {
    let n = 0;
    const t0 = performance.now();
    for (let k = 0; k < calls; k++) n += op(i++);
    const ms = performance.now() - t0;
    consumed.n += n;
    return { overriddenDuration: ms / calls, overriddenIterationCost: ms };
  };
  return { group, name, note: `${note}; a sample is the mean of ${calls} calls`, async: false, consumed, fn };
}

/** Per-task budgets: measured and warm-up time (ms), and the fewest iterations of each. */
export function budget(quick: boolean): { time: number; warmupTime: number; iterations: number; warmupIterations: number } {
  // Fewer minimum iterations in quick mode: a 10 ms op would otherwise take 64 × 10 ms, not 150.
  return quick ? { time: 150, warmupTime: 50, iterations: 10, warmupIterations: 4 } : { time: 1000, warmupTime: 200, iterations: 64, warmupIterations: 16 };
}

/** Runs the tasks one after another and reads tinybench's latency statistics (ms) into results (µs). */
export async function measure(tasks: readonly MicroTask[], quick: boolean): Promise<MicroResult[]> {
  const bench = new Bench({ ...budget(quick), throws: true });
  for (const t of tasks) bench.add(t.name, t.fn, { async: t.async });
  await bench.run();
  return tasks.map((t) => {
    const r = bench.getTask(t.name)?.result;
    if (r?.state !== 'completed') throw new Error(`micro ${t.group}/${t.name}: ${r?.state === 'errored' ? r.error.message : `ended ${r?.state ?? 'missing'}`}`);
    if (!(t.consumed.n > 0)) throw new Error(`micro ${t.group}/${t.name}: its ops produced nothing`);
    const lat = r.latency;
    // ops/s from the mean latency, not tinybench's throughput.mean: that is the mean of per-sample
    // rates, which a few fast samples inflate, and would disagree with mean_us.
    return {
      group: t.group,
      name: t.name,
      ops_per_s: 1000 / lat.mean,
      mean_us: lat.mean * 1000,
      p50_us: lat.p50 * 1000,
      p99_us: lat.p99 * 1000,
      rme_pct: lat.rme,
      samples: lat.samplesCount,
      ...(t.note !== undefined ? { note: t.note } : {}),
    };
  });
}
