// CSV export throughput and memory: `family-events serve` streaming /v1/events.csv pages of 10,000
// rows to a client that reads as fast as it can, sampling the server's resident memory (/proc)
// all the while. Two phases per dataset:
//   pages: the first N pages of limit=10000 (offset paging), one after another;
//   full:  every event of the snapshot, as an exporter must page it: day windows
//          (start_date=end_date=D) over the snapshot's whole window, each paged by offset, since
//          offset stops at 100,000. Events spanning days come in every day they touch; the client
//          dedupes by id, as an exporter would, and the unique count must equal the snapshot's.
//   whole: /v1/export.csv, every event of the snapshot the key's plan includes in one streamed body
//          (--whole; --rounds times each, the median reported), read by undici (rows counted in the
//          body) and by curl (piped here and counted, as psql's output is), and with --copy
//          PostgreSQL's COPY ... TO STDOUT of the same rows from the same data through psql
//          (bench/lib/postgis.ts copyWhole), the same number of rounds: the ratio is curl's rows/s
//          against psql's, a C client on both sides.
// Writes bench/results/export-<timestamp>.json.
// Usage: node --import tsx bench/export.ts [--dataset sample|synthetic-50k|synthetic-1m|synthetic-10m[,...]]
//        [--pages 10] [--full] [--whole] [--copy] [--rounds 3] [--encoding identity|gzip] [--pool-threads 2] [--keep]
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { request } from 'undici';
import { DateTime } from 'luxon';
import {
  BenchError,
  describeMachine,
  exitOnError,
  fmt,
  log,
  machineInfo,
  REPO_ROOT,
  run,
  SCRATCH_DIR,
  stamp,
  table,
  wholeArg,
  writeResult,
} from './lib/common.ts';
import { datasetFacts, datasetName, prepareDataset, type Dataset, type DatasetName } from './lib/dataset.ts';
import { copyWhole, preparePostgis, type CopyResult } from './lib/postgis.ts';
import { headerObject, memory, rssSampler, startServer, type Child } from './lib/server.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'sample' },
    pages: { type: 'string', default: '10' },
    full: { type: 'boolean', default: false },
    whole: { type: 'boolean', default: false },
    copy: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    encoding: { type: 'string', default: 'identity' },
    'pool-threads': { type: 'string', default: '2' },
    keep: { type: 'boolean', default: false },
  },
});
const datasets: DatasetName[] = opts.dataset.split(',').map(datasetName);
if (opts.encoding !== 'identity' && opts.encoding !== 'gzip') throw new BenchError(`--encoding must be identity or gzip (got ${opts.encoding})`);
const pages = wholeArg('pages', opts.pages, 1);
const poolThreads = wholeArg('pool-threads', opts['pool-threads'], 1);
const rounds = wholeArg('rounds', opts.rounds, 1);
const PAGE = 10_000;

interface Page {
  readonly rows: number;
  readonly wireBytes: number;
  readonly csvBytes: number;
  readonly next: string | null;
  readonly ids: string[] | null;
}

/** One CSV page, read as it streams: rows counted by CRLF, ids taken from the first cell when asked. */
async function fetchPage(server: Child, pathAndQuery: string, wantIds: boolean): Promise<Page> {
  const headers: Record<string, string> = headerObject(server.headers);
  if (opts.encoding === 'gzip') headers['accept-encoding'] = 'gzip';
  const res = await request(`${server.base}${pathAndQuery}`, { headers });
  if (res.statusCode !== 200)
    throw new BenchError(`${pathAndQuery.replace(/api_key=[^&]*/, 'api_key=…')} answered ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  const nextPart = String(res.headers.link ?? '')
    .split(', ')
    .find((p) => p.endsWith('rel="next"'));
  const next = nextPart ? nextPart.slice(1, nextPart.indexOf('>')) : null;
  let wireBytes = 0;
  let csvBytes = 0;
  let lines = 0;
  let carry = '';
  const ids: string[] | null = wantIds ? [] : null;
  let source: AsyncIterable<Buffer> = res.body;
  if (res.headers['content-encoding'] === 'gzip') {
    const gunzip = createGunzip();
    res.body.on('data', (c: Buffer) => (wireBytes += c.length));
    res.body.pipe(gunzip);
    source = gunzip;
  }
  for await (const chunk of source) {
    if (source === res.body) wireBytes += chunk.length;
    csvBytes += chunk.length;
    const text = carry + chunk.toString('utf8');
    const parts = text.split('\r\n');
    carry = parts.pop() ?? '';
    for (const line of parts) {
      lines++;
      // Quoted cells may hold CRLF, but an id never does: a data line starting with the id prefix is a row.
      if (ids && line.startsWith('bsc_evt_')) ids.push(line.slice(0, line.indexOf(',')));
    }
  }
  return { rows: ids ? ids.length : Math.max(0, lines - 1), wireBytes, csvBytes, next: next ? next.slice(next.indexOf('/v1/')) : null, ids };
}

interface PhaseResult {
  readonly phase: string;
  readonly requests: number;
  readonly rows: number;
  readonly unique_rows: number | null;
  readonly seconds: number;
  readonly rows_per_s: number;
  readonly csv_mb_per_s: number;
  readonly wire_mb: number;
  readonly rss_start_mb: number;
  readonly rss_peak_mb: number;
  readonly expected_unique: number | null;
}

const mb = (b: number): number => +(b / 1048576).toFixed(1);

async function pagesPhase(server: Child): Promise<PhaseResult> {
  const sampler = rssSampler(server.pid);
  const t0 = performance.now();
  let rows = 0;
  let wire = 0;
  let csv = 0;
  let requests = 0;
  let next: string | null = `/v1/events.csv?limit=${PAGE}`;
  while (next !== null && requests < pages) {
    const p = await fetchPage(server, next, false);
    requests++;
    rows += p.rows;
    wire += p.wireBytes;
    csv += p.csvBytes;
    next = p.next;
  }
  const s = (performance.now() - t0) / 1000;
  const m = sampler.stop();
  return {
    phase: `pages of ${PAGE}`,
    requests,
    rows,
    unique_rows: null,
    seconds: +s.toFixed(2),
    rows_per_s: Math.round(rows / s),
    csv_mb_per_s: +(csv / 1048576 / s).toFixed(1),
    wire_mb: mb(wire),
    rss_start_mb: mb(m.start),
    rss_peak_mb: mb(m.peak),
    expected_unique: null,
  };
}

/** How many events the whole window holds for the bench key (its plan's exclusions apply): one search's total. */
async function windowTotal(server: Child, window: { start: string; end: string }): Promise<number> {
  const headers = headerObject(server.headers);
  const q = new URLSearchParams({ limit: '1', start_date: window.start.slice(0, 10), end_date: window.end.slice(0, 10) });
  const r = await fetch(`${server.base}/v1/events?${q.toString()}`, { headers });
  return ((await r.json()) as { total: number }).total;
}

async function fullPhase(server: Child, window: { start: string; end: string }): Promise<PhaseResult> {
  const events = await windowTotal(server, window);
  const sampler = rssSampler(server.pid);
  const t0 = performance.now();
  const seen = new Set<string>();
  let rows = 0;
  let wire = 0;
  let csv = 0;
  let requests = 0;
  const last = DateTime.fromISO(window.end, { setZone: true });
  for (let day = DateTime.fromISO(window.start, { setZone: true }).startOf('day'); day <= last; day = day.plus({ days: 1 })) {
    const d = day.toISODate() ?? '';
    let next: string | null = `/v1/events.csv?limit=${PAGE}&start_date=${d}&end_date=${d}`;
    while (next !== null) {
      const p = await fetchPage(server, next, true);
      requests++;
      rows += p.rows;
      wire += p.wireBytes;
      csv += p.csvBytes;
      for (const id of p.ids ?? []) seen.add(id);
      next = p.next;
    }
  }
  const s = (performance.now() - t0) / 1000;
  const m = sampler.stop();
  return {
    phase: 'full export (day windows)',
    requests,
    rows,
    unique_rows: seen.size,
    seconds: +s.toFixed(2),
    rows_per_s: Math.round(rows / s),
    csv_mb_per_s: +(csv / 1048576 / s).toFixed(1),
    wire_mb: mb(wire),
    rss_start_mb: mb(m.start),
    rss_peak_mb: mb(m.peak),
    expected_unique: events,
  };
}

/**
 * /v1/export.csv read as fast as the client can: rows counted as the ids that start a line
 * (CRLF then the id prefix: quoted cells may hold CRLF, never followed by an id), with a native
 * search over each chunk so the client's own CPU stays small beside the server's on a shared machine.
 */
interface WholeRun {
  readonly rows: number;
  readonly total: number;
  readonly wire: number;
  readonly csv: number;
  readonly seconds: number;
  readonly peak: number;
  readonly start: number;
}

async function wholeOnce(server: Child): Promise<WholeRun> {
  const headers: Record<string, string> = headerObject(server.headers);
  if (opts.encoding === 'gzip') headers['accept-encoding'] = 'gzip';
  const sampler = rssSampler(server.pid);
  const t0 = performance.now();
  const res = await request(`${server.base}/v1/export.csv`, { headers });
  if (res.statusCode !== 200) throw new BenchError(`/v1/export.csv answered ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  const total = Number(res.headers['x-total-count']);
  const marker = Buffer.from('\r\nbsc_evt_');
  let rows = 0;
  let wire = 0;
  let csv = 0;
  let tail = Buffer.alloc(0);
  let source: AsyncIterable<Buffer> = res.body;
  if (res.headers['content-encoding'] === 'gzip') {
    const gunzip = createGunzip();
    res.body.on('data', (c: Buffer) => (wire += c.length));
    res.body.pipe(gunzip);
    source = gunzip;
  }
  for await (const chunk of source) {
    if (source === res.body) wire += chunk.length;
    csv += chunk.length;
    // The marker may straddle two chunks: search the previous chunk's last bytes with this one's head.
    const seam = Buffer.concat([tail, chunk.subarray(0, marker.length - 1)]);
    for (let at = seam.indexOf(marker); at !== -1; at = seam.indexOf(marker, at + 1)) rows++;
    for (let at = chunk.indexOf(marker); at !== -1; at = chunk.indexOf(marker, at + 1)) rows++;
    tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - (marker.length - 1))));
  }
  const seconds = (performance.now() - t0) / 1000;
  const m = sampler.stop();
  return { rows, total, wire, csv, seconds, peak: m.peak, start: m.start };
}

/**
 * /v1/export.csv read by curl, its body piped to this process and counted, as psql's COPY output
 * is (bench/lib/postgis.ts copyWhole): a C client on both sides, so the ratio compares the two
 * servers rather than undici with psql. Rows are X-Total-Count, which the Node client's rounds
 * check against the rows they count in the body.
 */
async function wholeOnceCurl(server: Child, headerFile: string): Promise<WholeRun> {
  const args = ['-sS', '--fail', '-D', headerFile, '-o', '-'];
  for (const h of server.headers) args.push('-H', h);
  if (opts.encoding === 'gzip') args.push('--compressed');
  const sampler = rssSampler(server.pid);
  const t0 = performance.now();
  const r = await run('curl', [...args, `${server.base}/v1/export.csv`], { countStdout: true });
  const seconds = (performance.now() - t0) / 1000;
  const m = sampler.stop();
  if (r.code !== 0) throw new BenchError(`curl /v1/export.csv exited ${r.code}: ${r.stderr.trim()}`);
  const total = Number(/^x-total-count:\s*(\d+)/im.exec(await readFile(headerFile, 'utf8'))?.[1]);
  if (!Number.isInteger(total)) throw new BenchError('curl /v1/export.csv: no X-Total-Count');
  return { rows: total, total, wire: r.stdoutBytes, csv: r.stdoutBytes, seconds, peak: m.peak, start: m.start };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
};

async function wholePhase(server: Child, client: 'curl' | 'node'): Promise<PhaseResult> {
  const runs: WholeRun[] = [];
  const headerFile = path.join(runDir, 'export-headers.txt');
  for (let i = 0; i < rounds; i++) {
    const r = client === 'curl' ? await wholeOnceCurl(server, headerFile) : await wholeOnce(server);
    if (r.rows !== r.total) throw new BenchError(`/v1/export.csv: ${r.rows} rows read, X-Total-Count ${r.total}`);
    runs.push(r);
  }
  const mid = runs.find((r) => r.seconds === median(runs.map((x) => x.seconds)));
  if (mid === undefined) throw new BenchError('no whole export ran');
  return {
    phase: `whole export (/v1/export.csv, ${client === 'curl' ? 'curl' : 'Node client'}, median of ${rounds})`,
    requests: 1,
    rows: mid.rows,
    unique_rows: null,
    seconds: +mid.seconds.toFixed(3),
    rows_per_s: Math.round(mid.rows / mid.seconds),
    csv_mb_per_s: +(mid.csv / 1048576 / mid.seconds).toFixed(1),
    wire_mb: mb(mid.wire),
    rss_start_mb: mb(Math.min(...runs.map((r) => r.start))),
    rss_peak_mb: mb(Math.max(...runs.map((r) => r.peak))),
    expected_unique: mid.total,
  };
}

/** PostgreSQL's COPY of the same rows, `rounds` times on the same loaded table: the median. */
async function copyPhase(ds: Dataset): Promise<CopyResult & { readonly runs: readonly number[] }> {
  const p = await preparePostgis(ds, await datasetFacts(ds.parquet), runDir, false);
  try {
    const runs: CopyResult[] = [];
    for (let i = 0; i < rounds; i++) runs.push(await copyWhole(p));
    const mid = median(runs.map((r) => r.seconds));
    const r = runs.find((x) => x.seconds === mid);
    if (r === undefined) throw new BenchError('no COPY ran');
    return { ...r, runs: runs.map((x) => x.rows_per_s) };
  } finally {
    await p.close();
  }
}

const machine = machineInfo();
const runDir = path.join(SCRATCH_DIR, `bench-export-${stamp()}`);
await mkdir(runDir, { recursive: true });
log(describeMachine(machine));
const results: {
  dataset: DatasetName;
  snapshot: string;
  events: number;
  phases: PhaseResult[];
  rss_hwm_mb: number;
  copy: (CopyResult & { readonly runs: readonly number[] }) | null;
}[] = [];
try {
  for (const name of datasets) {
    const ds = await prepareDataset(name, runDir);
    const server = await startServer({ dataDir: ds.dataDir, logFile: path.join(runDir, `server-${name}.log`), logLevel: 'info', poolThreads });
    try {
      const phases: PhaseResult[] = [];
      log(`${name}: ${pages} pages of ${PAGE}`);
      phases.push(await pagesPhase(server));
      if (opts.full) {
        log(`${name}: full export by day windows`);
        phases.push(await fullPhase(server, ds.manifest.window));
      }
      if (opts.whole) {
        // The Node client's rounds first: they count the rows in the body, which curl's take from X-Total-Count.
        log(`${name}: whole export (/v1/export.csv), ${rounds} rounds read by undici, then ${rounds} by curl`);
        phases.push(await wholePhase(server, 'node'));
        phases.push(await wholePhase(server, 'curl'));
      }
      results.push({ dataset: name, snapshot: ds.manifest.id, events: ds.manifest.counts.events, phases, rss_hwm_mb: mb(memory(server.pid).hwm), copy: null });
    } finally {
      await server.stop();
    }
    if (opts.copy) {
      // After our server stopped: PostgreSQL gets the machine as our export had it.
      log(`${name}: PostgreSQL COPY ... TO STDOUT of the same rows, ${rounds} rounds`);
      const last = results[results.length - 1];
      if (last) last.copy = await copyPhase(ds);
    }
  }
} finally {
  if (!opts.keep) await rm(runDir, { recursive: true, force: true });
}

console.log(`\n${describeMachine(machine)}; POOL_THREADS=${poolThreads}, Accept-Encoding: ${opts.encoding}, one client reading as fast as it can`);
for (const r of results) {
  console.log(`\n${r.dataset}: snapshot ${r.snapshot}, ${r.events} events; server peak RSS over its life ${r.rss_hwm_mb} MB`);
  console.log(
    table(
      ['phase', 'requests', 'rows', 'unique / expected', 'seconds', 'rows/s', 'CSV MB/s', 'wire MB', 'RSS start → peak MB'],
      r.phases.map((p) => [
        p.phase,
        String(p.requests),
        String(p.rows),
        p.unique_rows === null ? '-' : `${p.unique_rows} / ${p.expected_unique}`,
        fmt(p.seconds, 1),
        String(p.rows_per_s),
        fmt(p.csv_mb_per_s, 1),
        fmt(p.wire_mb, 1),
        `${p.rss_start_mb} → ${p.rss_peak_mb}`,
      ]),
    ),
  );
  const whole = r.phases.find((p) => p.phase.startsWith('whole export') && p.phase.includes('curl'));
  if (r.copy) {
    console.log(
      `PostgreSQL COPY ... TO STDOUT, same rows: ${r.copy.rows} rows, ${fmt(r.copy.seconds, 2)} s, ${r.copy.rows_per_s} rows/s (rounds: ${r.copy.runs.join(', ')} rows/s)`,
    );
    if (whole)
      console.log(
        `whole export (curl) against COPY (psql): ${(whole.rows_per_s / r.copy.rows_per_s).toFixed(2)}x rows/s (target >= 4x); server RSS ${whole.rss_start_mb} → ${whole.rss_peak_mb} MB`,
      );
  }
}
const out = await writeResult('export', {
  kind: 'export',
  at: new Date().toISOString(),
  machine,
  settings: { pages, full: opts.full, whole: opts.whole, copy: opts.copy, rounds, encoding: opts.encoding, pool_threads: poolThreads, page: PAGE },
  datasets: results,
});
console.log(`written ${path.relative(REPO_ROOT, out)}`);
