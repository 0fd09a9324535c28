// The change feed as an aggregator uses it (/v1/changes): a full sync of a data set through the
// feed, page after page (limit 1000), then the idle poll of the last page with If-None-Match,
// and a filtered sync (one city). Reports each phase's pages, entries/s and page latency (p50,
// p99), with the server's resident memory, and the full sync's rows/s against the whole CSV
// export's on the same server (/v1/export.csv) as the baseline of the same run.
// Writes bench/results/changes-<timestamp>.json.
// Usage: node --import tsx bench/changes.ts [--dataset sample|synthetic-50k|synthetic-1m[,...]] [--pool-threads 2] [--polls 200]
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { describeMachine, exitOnError, fmt, log, machineInfo, percentile, SCRATCH_DIR, stamp, table, wholeArg, writeResult, BenchError } from './lib/common.ts';
import { datasetName, prepareDataset, type DatasetName } from './lib/dataset.ts';
import { headerObject, rssSampler, startServer, type Child } from './lib/server.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'sample' },
    'pool-threads': { type: 'string', default: '2' },
    polls: { type: 'string', default: '200' },
  },
});
const datasets: DatasetName[] = opts.dataset.split(',').map(datasetName);
const poolThreads = wholeArg('pool-threads', opts['pool-threads'], 1);
const polls = wholeArg('polls', opts.polls, 1);
const LIMIT = 1000;

interface Phase {
  readonly phase: string;
  readonly requests: number;
  readonly entries: number;
  readonly seconds: number;
  readonly entries_per_s: number;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly statuses: Record<string, number>;
  readonly rss_peak_mb: number;
}

const pathOf = (url: string): string => url.slice(url.indexOf('/v1/'));

async function sync(server: Child, first: string, label: string): Promise<{ phase: Phase; last: string }> {
  const sampler = rssSampler(server.pid);
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  let entries = 0;
  let next = first;
  const t0 = performance.now();
  for (;;) {
    const t = performance.now();
    const res = await request(`${server.base}${next}`, { headers: headerObject(server.headers) });
    const body = (await res.body.json()) as { changes: unknown[]; next: string; has_more: boolean };
    times.push(performance.now() - t);
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    if (res.statusCode !== 200) throw new BenchError(`${next} answered ${res.statusCode}`);
    entries += body.changes.length;
    next = pathOf(body.next);
    if (!body.has_more) break;
  }
  const s = (performance.now() - t0) / 1000;
  times.sort((a, b) => a - b);
  const m = sampler.stop();
  return {
    phase: {
      phase: label,
      requests: times.length,
      entries,
      seconds: +s.toFixed(2),
      entries_per_s: Math.round(entries / s),
      p50_ms: percentile(times, 50),
      p99_ms: percentile(times, 99),
      statuses,
      rss_peak_mb: +(m.peak / 1048576).toFixed(1),
    },
    last: next,
  };
}

/** The poller's loop on the page after the last: every answer should be a 304 while nothing changes. */
async function idle(server: Child, target: string): Promise<Phase> {
  // The first poll of the page after the last gets its body (an empty page) and its ETag.
  const first = await request(`${server.base}${target}`, { headers: headerObject(server.headers) });
  await first.body.text();
  const etag = String(first.headers.etag ?? '');
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const t0 = performance.now();
  for (let i = 0; i < polls; i++) {
    const t = performance.now();
    const res = await request(`${server.base}${target}`, { headers: { ...headerObject(server.headers), 'if-none-match': etag } });
    await res.body.text();
    times.push(performance.now() - t);
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
  }
  const s = (performance.now() - t0) / 1000;
  times.sort((a, b) => a - b);
  return {
    phase: 'idle poll (If-None-Match)',
    requests: polls,
    entries: 0,
    seconds: +s.toFixed(2),
    entries_per_s: 0,
    p50_ms: percentile(times, 50),
    p99_ms: percentile(times, 99),
    statuses,
    rss_peak_mb: 0,
  };
}

/** The baseline of the same run: the whole data set as one CSV export, rows/s. */
async function wholeExport(server: Child): Promise<{ rows: number; rows_per_s: number }> {
  const t0 = performance.now();
  const res = await request(`${server.base}/v1/export.csv`, { headers: headerObject(server.headers) });
  let lines = 0;
  for await (const chunk of res.body) for (let i = (chunk as Buffer).indexOf(10); i !== -1; i = (chunk as Buffer).indexOf(10, i + 1)) lines++;
  const s = (performance.now() - t0) / 1000;
  return { rows: lines - 1, rows_per_s: Math.round((lines - 1) / s) };
}

const machine = machineInfo();
log(describeMachine(machine));
const runDir = path.join(SCRATCH_DIR, `changes-${stamp()}`);
await mkdir(runDir, { recursive: true });
const results: unknown[] = [];
for (const name of datasets) {
  const ds = await prepareDataset(name, runDir);
  const server = await startServer({ dataDir: ds.dataDir, logFile: path.join(runDir, `server-${name}.log`), logLevel: 'info', poolThreads });
  try {
    log(`${name}: a full sync through /v1/changes (limit ${LIMIT})`);
    const full = await sync(server, `/v1/changes?limit=${LIMIT}`, `full sync, pages of ${LIMIT}`);
    log(`${name}: ${polls} idle polls of the page after the last`);
    const poll = await idle(server, full.last);
    const city = ds.manifest.cities[0] ?? 'Oakland';
    log(`${name}: a sync of ${city} alone`);
    const filtered = await sync(server, `/v1/changes?limit=${LIMIT}&city=${encodeURIComponent(city)}`, `sync of ${city}`);
    log(`${name}: the whole CSV export, as the baseline`);
    const whole = await wholeExport(server);
    const phases = [full.phase, poll, filtered.phase];
    console.log(
      table(
        ['phase', 'requests', 'entries', 's', 'entries/s', 'p50 ms', 'p99 ms', 'statuses', 'RSS peak MB'],
        phases.map((p) => [
          p.phase,
          String(p.requests),
          String(p.entries),
          fmt(p.seconds),
          String(p.entries_per_s),
          fmt(p.p50_ms),
          fmt(p.p99_ms),
          JSON.stringify(p.statuses),
          fmt(p.rss_peak_mb, 1),
        ]),
      ),
    );
    const ratio = whole.rows_per_s > 0 ? full.phase.entries_per_s / whole.rows_per_s : null;
    console.log(`${name}: full sync ${full.phase.entries_per_s} entries/s against the whole CSV export's ${whole.rows_per_s} rows/s: ${fmt(ratio)}x`);
    results.push({ dataset: name, events: ds.manifest.counts.events, phases, whole_export: whole, sync_vs_export: ratio });
  } finally {
    await server.stop();
  }
}
const out = await writeResult('changes', { machine, pool_threads: poolThreads, results });
log(`wrote ${out}`);
