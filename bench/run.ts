// The benchmark suite (`npm run bench`): micro-benchmarks, HTTP load on our server, the same load
// on its peers (a bare uWS hello-world, PostgreSQL + PostGIS through pgbench and COPY, Fastify + pg),
// and the distinct mix at 50k, 1M and 10M events, all in one run on one machine, printed as one
// table with the targets, and written as JSON to bench/results/bench-<timestamp>.json.
// Usage: npm run bench [-- --quick] [--sections micro,http,peers,scale] [--scale synthetic-1m,synthetic-10m]
//        [--duration 10] [--warmup 2] [--connections 32] [--pool-threads 2] [--seed N] [--profile] [--reload-pg] [--keep]
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runMicro, type MicroResult } from './micro.ts';
import { generateMix, type MixRow } from './mix.ts';
import { DISTINCT_CONNECTIONS, repeatedPath, SCENARIOS, type Scenario, type ScenarioContext } from './scenarios.ts';
import { BenchError, describeMachine, exitOnError, fmt, freePort, log, machineInfo, NOW_MS, REPO_ROOT, SCRATCH_DIR, stamp, table, wholeArg, writeResult } from './lib/common.ts';
import { datasetFacts, datasetName, EXCLUDED_CATEGORIES, prepareDataset, type Dataset, type DatasetFacts, type DatasetName } from './lib/dataset.ts';
import { checkGenerator, checkUrl, crossCheck, measure, type CheckedUrl, type LoadResult, type LoadSettings } from './lib/load.ts';
import { copyExport, loadMix, parity, PG_SCENARIOS, preparePostgis, runPgbench, WEB, type CopyResult, type PgbenchResult, type Postgis } from './lib/postgis.ts';
import { perfSample, profileSummary, type PerfSummary, type ProfileSummary } from './lib/profile.ts';
import { startHello, startProcess, startServer, type Child } from './lib/server.ts';
import { ensureWrk } from './lib/wrk.ts';
import { ensurePeerRole } from './peers/setup.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    sections: { type: 'string', default: 'micro,http,peers,scale' },
    main: { type: 'string', default: 'synthetic-50k' },
    scale: { type: 'string', default: 'synthetic-1m,synthetic-10m' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '32' },
    'pool-threads': { type: 'string', default: '2' },
    'log-level': { type: 'string', default: 'info' },
    'copy-rows': { type: 'string', default: '1000000' },
    seed: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'reload-pg': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});

const SECTIONS = ['micro', 'http', 'peers', 'scale'] as const;
const sections = new Set(opts.sections.split(',').map((s) => {
  const found = SECTIONS.find((x) => x === s);
  if (!found) throw new BenchError(`--sections takes ${SECTIONS.join(', ')} (got ${s})`);
  return found;
}));
const quick = opts.quick;
const mainName = datasetName(opts.main);
// --quick measures the main dataset only: building 1M events takes minutes, 10M far longer.
const scaleNames: DatasetName[] = quick ? [] : opts.scale.split(',').filter(Boolean).map(datasetName).filter((d) => d !== mainName);
const load: LoadSettings = {
  durationS: wholeArg('duration', opts.duration ?? (quick ? '3' : '10'), 1),
  warmupS: wholeArg('warmup', opts.warmup ?? (quick ? '1' : '2'), 0),
  connections: wholeArg('connections', opts.connections, 1),
};
const poolThreads = wholeArg('pool-threads', opts['pool-threads'], 1);
const copyRows = wholeArg('copy-rows', opts['copy-rows'], 1);
const seed = opts.seed === undefined ? Date.now() % 1_000_000_007 : wholeArg('seed', opts.seed, 0);

/** A peer that could not be run: printed and recorded, never counted as a pass. */
interface Skip {
  readonly what: string;
  readonly reason: string;
}

interface Target {
  readonly name: string;
  readonly goal: string;
  readonly value: string;
  /** null: not evaluated (a peer was skipped, or the section was not run). */
  readonly met: boolean | null;
  readonly detail: string;
}

interface DatasetRun {
  readonly dataset: DatasetName;
  readonly snapshot: string;
  readonly events: number;
  readonly facts: DatasetFacts;
  readonly setup_s: number;
  readonly server_log_bytes: number | null;
  readonly results: LoadResult[];
}

interface PeerResults {
  postgis: {
    readonly version: string;
    readonly settings: Record<string, string>;
    readonly load: Postgis['load'];
    readonly started_by_bench: boolean;
    readonly pgbench: Record<string, PgbenchResult>;
    readonly copy: CopyResult | null;
    readonly parity: Awaited<ReturnType<typeof parity>> | null;
  } | null;
  fastify: LoadResult[];
}

const machine = machineInfo();
const runDir = path.join(SCRATCH_DIR, `bench-run-${stamp()}`);
await mkdir(runDir, { recursive: true });
log(describeMachine(machine));
const t0 = performance.now();
const skipped: Skip[] = [];
/** Parts that were run and broke: printed, recorded, and the run exits 1. */
const failed: Skip[] = [];
let micro: MicroResult[] = [];
let hello: LoadResult | null = null;
const runs: DatasetRun[] = [];
const peers: PeerResults = { postgis: null, fastify: [] };
const profiles: Record<string, ProfileSummary> = {};
const perfs: Record<string, PerfSummary> = {};
/** Scenarios --profile samples with perf. */
const PERF_SCENARIOS = ['repeated', 'distinct', 'csv-10k'];
let mainSamples: CheckedUrl[] = [];

/** The dataset's distinct mix, generated from its facts and the run's seed, written for wrk. */
async function mixOf(ds: Dataset, facts: DatasetFacts): Promise<{ rows: MixRow[]; ctx: ScenarioContext }> {
  const rows = generateMix(facts, seed);
  const mixFile = path.join(runDir, `mix-${ds.name}.txt`);
  await writeFile(mixFile, `${rows.map((r) => r.path).join('\n')}\n`);
  return { rows, ctx: { facts, seed, mixFile } };
}
const wanted = (sc: Scenario, scaleOnly: boolean): boolean => (!quick || sc.quick) && (!scaleOnly || sc.scale);

/** Our server on one dataset: the scenarios wanted there, each measured with wrk. */
async function runOurs(ds: Dataset, facts: DatasetFacts, ctx: ScenarioContext, scaleOnly: boolean): Promise<DatasetRun> {
  const logFile = path.join(runDir, `server-${ds.name}.log`);
  const profDir = path.join(runDir, `prof-${ds.name}`);
  log(`starting family-events serve on ${ds.name} (LOG_LEVEL=${opts['log-level']}, POOL_THREADS=${poolThreads}${opts.profile ? ', --cpu-prof' : ''})`);
  const server = await startServer({
    dataDir: ds.dataDir,
    logFile,
    logLevel: opts['log-level'],
    poolThreads,
    ...(opts.profile ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir] } : {}),
  });
  const results: LoadResult[] = [];
  try {
    const first = await crossCheck(server, facts, repeatedPath(facts), EXCLUDED_CATEGORIES);
    if (!scaleOnly) mainSamples = [first];
    for (const sc of SCENARIOS.filter((s) => s.target === 'server' && wanted(s, scaleOnly))) {
      const sample = await checkGenerator(server, sc, ctx);
      if (sample.length && !scaleOnly) mainSamples.push(...sample);
      if (sc.versus && sc.path) {
        // A page answering 404 at full speed would be a figure about the error page.
        const page = await checkUrl(server, sc.path(ctx));
        if (page.status !== 200) throw new BenchError(`${sc.name}: ${page.path} answered ${page.status}, not 200`);
      }
      // perf samples the measured run (after the warm-up): the main thread for the cached search,
      // every thread for the distinct mix, whose work is in the query workers.
      const perf =
        opts.profile && PERF_SCENARIOS.includes(sc.name)
          ? delay(load.warmupS * 1000 + 300).then(() => perfSample(server.pid, Math.max(1, load.durationS - 1), path.join(runDir, `perf-${ds.name}-${sc.name}.data`), sc.name !== 'distinct'))
          : null;
      results.push(await measure(sc, server, 'ours', ctx, load, sample));
      const summary = await perf;
      if (summary) perfs[`${ds.name}/${sc.name}`] = summary;
    }
  } finally {
    await server.stop();
  }
  if (opts.profile) {
    const summary = await profileSummary(profDir).catch((err: unknown) => (log(`no CPU profile: ${(err as Error).message}`), null));
    if (summary) profiles[ds.name] = summary;
  }
  return {
    dataset: ds.name,
    snapshot: ds.manifest.id,
    events: facts.events,
    facts,
    setup_s: ds.setupS,
    server_log_bytes: await stat(logFile).then((s) => s.size, () => null),
    results,
  };
}

async function runPostgis(ds: Dataset, facts: DatasetFacts, mix: readonly MixRow[], ctx: ScenarioContext): Promise<void> {
  let p: Postgis;
  try {
    p = await preparePostgis(ds, facts, runDir, opts['reload-pg']);
  } catch (err) {
    skipped.push({ what: 'PostgreSQL + PostGIS (pgbench, COPY)', reason: (err as Error).message.split('\n')[0] ?? 'unknown' });
    return;
  }
  try {
    await loadMix(p, mix);
    const pgbench: Record<string, PgbenchResult> = {};
    for (const name of PG_SCENARIOS) {
      pgbench[name] = await runPgbench(p, name, mix.length, { clients: DISTINCT_CONNECTIONS, seed, durationS: load.durationS, warmupS: load.warmupS });
    }
    log(`PostGIS COPY ... TO STDOUT (CSV), at most ${copyRows} rows`);
    const copy = await copyExport(p, copyRows);
    const check = mainSamples.length ? await parity(mainSamples, mix, p) : null;
    peers.postgis = { version: p.version, settings: p.settings, load: p.load, started_by_bench: p.startedByBench, pgbench, copy, parity: check };
  } finally {
    await p.close();
  }
  await runFastify(p, ctx);
}

/** The conventional Node stack on the same PostgreSQL: optional, so a failure to start is a skip. */
async function runFastify(p: Postgis, ctx: ScenarioContext): Promise<void> {
  let peer: Child;
  try {
    const role = await ensurePeerRole({ port: p.pg.port, schema: p.pg.schema });
    const port = await freePort();
    peer = await startProcess({
      what: 'the Fastify + pg peer',
      args: [path.join(REPO_ROOT, 'bench', 'peers', 'fastify-pg.ts'), String(port)],
      env: {
        PGHOST: '127.0.0.1',
        PGPORT: String(p.pg.port),
        PGUSER: role.user,
        PGPASSWORD: role.password,
        PGDATABASE: 'fe_bench',
        PG_SCHEMA: p.pg.schema,
        WEB_BASE_URL: WEB,
        NOW_MS: String(NOW_MS),
      },
      logFile: path.join(runDir, 'fastify-pg.log'),
      readyPath: '/healthz',
      port,
    });
  } catch (err) {
    skipped.push({ what: 'Fastify + pg', reason: (err as Error).message.split('\n')[0] ?? 'unknown' });
    return;
  }
  try {
    for (const sc of SCENARIOS.filter((s) => s.peer && wanted(s, false))) {
      // The same generator, checked the same way: every generated search must answer 200 there too.
      const sample = await checkGenerator(peer, sc, ctx);
      peers.fastify.push(await measure(sc, peer, 'fastify-pg', ctx, load, sample));
    }
  } finally {
    await peer.stop();
  }
}

try {
  if (sections.has('http') || sections.has('peers') || sections.has('scale')) await ensureWrk();
  const main = await prepareDataset(mainName, runDir);
  const mainFacts = await datasetFacts(main.parquet);
  log(`${mainName}: snapshot ${main.manifest.id}, ${mainFacts.events} events (${mainFacts.upcoming} upcoming outside excluded categories); fixed search in ${mainFacts.city}`);
  const mainMix = await mixOf(main, mainFacts);

  if (sections.has('micro')) {
    log('micro-benchmarks (tinybench)');
    micro = await runMicro({ quick, snapshotDir: path.dirname(main.parquet), scratchDir: runDir });
  }
  if (sections.has('http') || sections.has('peers')) {
    const h = await startHello(path.join(runDir, 'hello.log'));
    try {
      const baseline = SCENARIOS.find((s) => s.target === 'hello');
      if (baseline) hello = await measure(baseline, h, 'uws-hello', mainMix.ctx, load);
    } finally {
      await h.stop();
    }
  }
  if (sections.has('http')) runs.push(await runOurs(main, mainFacts, mainMix.ctx, false));
  if (sections.has('peers')) await runPostgis(main, mainFacts, mainMix.rows, mainMix.ctx);
  if (sections.has('scale')) {
    for (const name of scaleNames) {
      // One dataset failing (disk, memory, a 45-minute build) must not lose the figures measured so far.
      try {
        const ds = await prepareDataset(name, runDir);
        const facts = await datasetFacts(ds.parquet);
        log(`${name}: snapshot ${ds.manifest.id}, ${facts.events} events`);
        runs.push(await runOurs(ds, facts, (await mixOf(ds, facts)).ctx, true));
      } catch (err) {
        failed.push({ what: `scale ${name}`, reason: (err as Error).message.split('\n')[0] ?? 'unknown' });
      }
    }
  }
} finally {
  if (!opts.keep) await rm(runDir, { recursive: true, force: true });
  else log(`kept ${path.relative(REPO_ROOT, runDir)} (data, server logs, profiles)`);
}

// ---- the report ----

const ours = (dataset: DatasetName, name: string): LoadResult | undefined => runs.find((r) => r.dataset === dataset)?.results.find((x) => x.name === name);
const mainRun = (name: string): LoadResult | undefined => ours(mainName, name);
const mib = (r: LoadResult): string => (r.rss_mib ? `RSS ${r.rss_mib.start}→${r.rss_mib.peak} MiB` : '');

function targets(): Target[] {
  const out: Target[] = [];
  const repeated = mainRun('repeated');
  const r1 = repeated && hello ? repeated.rps / hello.rps : null;
  out.push({
    name: 'repeated query vs uWS hello-world',
    goal: '>= 0.5x',
    value: r1 === null ? '-' : `${r1.toFixed(3)}x`,
    met: r1 === null ? null : r1 >= 0.5,
    detail: r1 === null ? 'not run' : r1 >= 0.5 ? 'met' : `missed: ${(0.5 / r1).toFixed(1)}x short (${fmt(repeated?.rps, 0)} vs ${fmt(hello?.rps, 0)} req/s)`,
  });
  const distinct = mainRun('distinct');
  const pgd = peers.postgis?.pgbench.distinct;
  const r2 = distinct && pgd ? distinct.rps / pgd.tps : null;
  const p99ok = distinct?.p99_ms != null && distinct.p99_ms < 25;
  out.push({
    name: `distinct mix vs PostGIS pgbench (${mainName})`,
    goal: '>= 2x tps, p99 < 25 ms',
    value: r2 === null ? '-' : `${r2.toFixed(2)}x, p99 ${fmt(distinct?.p99_ms, 1)} ms`,
    met: r2 === null ? null : r2 >= 2 && p99ok,
    detail:
      r2 === null
        ? distinct ? 'not evaluated: PostGIS was not run' : 'not run'
        : `${fmt(distinct?.rps, 0)} req/s vs ${fmt(pgd?.tps, 0)} tps at ${DISTINCT_CONNECTIONS} clients each; ${r2 >= 2 ? 'throughput met' : `throughput ${(2 / r2).toFixed(1)}x short`}; ${p99ok ? 'p99 met' : `p99 ${fmt(distinct?.p99_ms, 1)} ms`}`,
  });
  const csv = mainRun('csv-10k');
  const copy = peers.postgis?.copy;
  const r3 = csv?.rows_per_s && copy ? csv.rows_per_s / copy.rows_per_s : null;
  const growth = csv?.rss_mib ? csv.rss_mib.peak - csv.rss_mib.start : null;
  // Flat: the export's peak adds less than 64 MiB (a few 1 MiB stream windows and zlib state) to the server.
  const flat = growth !== null && growth < 64;
  out.push({
    name: 'CSV export vs PostgreSQL COPY',
    goal: '>= 1x rows/s, flat memory',
    value: r3 === null ? '-' : `${r3.toFixed(2)}x, +${growth} MiB`,
    met: r3 === null ? null : r3 >= 1 && flat,
    detail:
      r3 === null
        ? csv ? 'not evaluated: PostGIS was not run' : 'not run'
        : `${fmt(csv?.rows_per_s, 0)} vs ${fmt(copy?.rows_per_s, 0)} rows/s; ${r3 >= 1 ? 'speed met' : `${(1 / r3).toFixed(1)}x short`}; memory ${flat ? 'flat' : 'grew'} (${csv?.rss_mib?.start}→${csv?.rss_mib?.peak} MiB)`,
  });
  return out;
}

function loadRow(section: string, dataset: string, r: LoadResult, ratio: string): string[] {
  const cpu = r.cpu_us_per_request ? `CPU ${r.cpu_us_per_request.main}/${r.cpu_us_per_request.process} µs/req` : '';
  const extra = [r.rows_per_s ? `${r.rows_per_s} rows/s` : '', cpu, mib(r), r.cache_hits !== null && r.cache_hits + (r.cache_misses ?? 0) > 0 ? `cache ${r.cache_hits}/${r.cache_hits + (r.cache_misses ?? 0)}` : '']
    .filter(Boolean)
    .join('; ');
  return [section, dataset, r.target, r.connections === load.connections ? r.name : `${r.name} (c${r.connections})`, fmt(r.rps, 0), fmt(r.p50_ms, 2), fmt(r.p99_ms, 2), fmt(r.max_ms, 1), r.flagged ? `${r.errors}!` : String(r.errors), ratio, extra];
}

const rows: string[][] = [];
for (const m of micro) {
  // What each op is (the note) is in the JSON; the table keeps to the figures.
  rows.push(['micro', '-', 'ours', `${m.group}: ${m.name}`, fmt(m.ops_per_s, 0), fmt(m.p50_us / 1000, 4), fmt(m.p99_us / 1000, 4), '-', '0', '-', `mean ${fmt(m.mean_us, 1)} µs ±${fmt(m.rme_pct, 1)}%`]);
}
if (hello) rows.push(loadRow('http', mainName, hello, '1.000'));
for (const run of runs) {
  const section = run.dataset === mainName ? 'http' : 'scale';
  for (const r of run.results) {
    const sc = SCENARIOS.find((s) => s.name === r.name);
    const ref = sc?.repeats ? run.results.find((x) => x.name === sc.repeats) : undefined;
    const versus = sc?.versus?.[0] === undefined ? undefined : run.results.find((x) => x.name === sc.versus?.[0]);
    // Only answers of the size of a hello-world's work compare with it: not 10,000-row pages or DuckDB queries.
    const helloRps = !sc?.lua && !sc?.rowsPerRequest ? hello?.rps : undefined;
    const ratio = ref
      ? `${fmt(r.rps / ref.rps, 3)} vs 1st`
      : versus
        ? `${fmt(r.rps / versus.rps, 3)} vs ${versus.name}`
        : helloRps
          ? `${fmt(r.rps / helloRps, 3)} vs hello`
          : '-';
    rows.push(loadRow(section, run.dataset, r, ratio));
  }
}
const pgRows = peers.postgis;
if (pgRows) {
  for (const [name, r] of Object.entries(pgRows.pgbench)) {
    const o = mainRun(name);
    rows.push(['peers', mainName, 'postgis-pgbench', `${name} (c${DISTINCT_CONNECTIONS})`, fmt(r.tps, 0), fmt(r.p50_ms, 2), fmt(r.p99_ms, 2), fmt(r.max_ms, 1), String(r.failed), o ? `ours ${fmt(o.rps / r.tps, 2)}x` : '-', `avg ${fmt(r.latency_avg_ms, 2)} ms`]);
  }
  if (pgRows.copy) {
    const c = pgRows.copy;
    const o = mainRun('csv-10k');
    rows.push(['peers', mainName, 'postgis-copy', 'COPY TO STDOUT csv', '-', '-', '-', '-', '0', o?.rows_per_s ? `ours ${fmt(o.rows_per_s / c.rows_per_s, 2)}x` : '-', `${c.rows_per_s} rows/s; ${c.rows} rows, ${(c.bytes / 2 ** 20).toFixed(0)} MiB in ${c.seconds} s`]);
  }
}
for (const r of peers.fastify) {
  const o = mainRun(r.name);
  rows.push(loadRow('peers', mainName, r, o ? `ours ${fmt(o.rps / r.rps, 2)}x` : '-'));
}

/** Scenarios reported against another of the same run (the website's pages against the API's cached JSON), main dataset. */
interface Comparison {
  readonly name: string;
  readonly versus: string;
  readonly rps: number;
  readonly versus_rps: number;
  readonly rps_ratio: number;
  readonly p99_ms: number | null;
  readonly versus_p99_ms: number | null;
  /** p99 of this scenario over the other's: above 1, this one's tail is longer. */
  readonly p99_ratio: number | null;
}
const comparisons: Comparison[] = SCENARIOS.flatMap((sc) =>
  (sc.versus ?? []).flatMap((other) => {
    const a = mainRun(sc.name);
    const b = mainRun(other);
    if (!a || !b) return [];
    const p99Ratio = a.p99_ms !== null && b.p99_ms ? a.p99_ms / b.p99_ms : null;
    return [{ name: sc.name, versus: other, rps: a.rps, versus_rps: b.rps, rps_ratio: a.rps / b.rps, p99_ms: a.p99_ms, versus_p99_ms: b.p99_ms, p99_ratio: p99Ratio }];
  }),
);

const elapsedS = Math.round((performance.now() - t0) / 1000);
const tg = targets();
console.log(`\n${describeMachine(machine)}`);
console.log(
  `npm run bench${quick ? ' -- --quick' : ''}: ${elapsedS} s; wrk -t1 -c${load.connections} -d${load.durationS}s (distinct mix -c${DISTINCT_CONNECTIONS}), warm-up ${load.warmupS} s, POOL_THREADS=${poolThreads}, LOG_LEVEL=${opts['log-level']}, seed ${seed}` +
    (pgRows ? `\n${pgRows.version}` : ''),
);
console.log(`\n${table(['section', 'dataset', 'target', 'scenario', 'req|ops/s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'ratio', 'notes'], rows)}`);
console.log('\ntargets (reported, not asserted):');
for (const t of tg) console.log(`  ${t.met === null ? 'NOT EVALUATED' : t.met ? 'met          ' : 'MISSED       '}  ${t.name} (${t.goal}): ${t.value}; ${t.detail}`);
const parityLine = pgRows?.parity;
if (parityLine) console.log(`same answers: PostGIS returns the same page and total for ${parityLine.matched}/${parityLine.checked} of our sampled searches${parityLine.mismatches.length ? `\n  ${parityLine.mismatches.slice(0, 5).join('\n  ')}` : ''}`);
const noise = (() => {
  const a = mainRun('repeated');
  const b = mainRun('same-vs-same');
  return a && b ? Math.abs(1 - b.rps / a.rps) : null;
})();
if (noise !== null) console.log(`noise floor (same vs same): ${(noise * 100).toFixed(1)}%`);
if (comparisons.length) {
  // Today: the website's pages against the API's cached JSON paths.
  console.log(`scenarios against others of the same run (${mainName}; a ratio within the noise floor is no difference):`);
  for (const c of comparisons) {
    console.log(
      `  ${c.name}: ${fmt(c.rps, 0)} req/s, p99 ${fmt(c.p99_ms, 2)} ms = ${c.rps_ratio.toFixed(3)}x the req/s of ${c.versus} (${fmt(c.versus_rps, 0)} req/s, p99 ${fmt(c.versus_p99_ms, 2)} ms)` +
        (c.p99_ratio === null ? '' : `, ${c.p99_ratio.toFixed(2)}x its p99`),
    );
  }
}
for (const s of skipped) console.log(`SKIPPED ${s.what}: ${s.reason}`);
for (const s of failed) console.log(`FAILED ${s.what}: ${s.reason}`);
if (quick) console.log('scale (1M, 10M events): not run with --quick');
for (const [name, p] of Object.entries(perfs)) {
  console.log(`\nperf on ${name} (${name.endsWith('distinct') ? 'all threads' : 'main thread'}): ${p.by_dso.map((d) => `${d.dso} ${d.pct.toFixed(1)}%`).join(', ')}`);
  console.log(p.top_symbols.slice(0, 8).map((x) => `  ${x.pct.toFixed(2).padStart(6)}%  ${x.symbol}`).join('\n'));
}
for (const [name, p] of Object.entries(profiles)) {
  console.log(`\nCPU profile of the server's main thread on ${name} (--cpu-prof, whole run; self time):`);
  console.log(p.top.slice(0, 15).map((f) => `  ${f.pct.toFixed(1).padStart(5)}%  ${f.name}`).join('\n'));
}

const flagged = [...(hello ? [hello] : []), ...runs.flatMap((r) => r.results), ...peers.fastify].filter((r) => r.flagged).map((r) => `${r.target}/${r.name}`);
const out = await writeResult('bench', {
  kind: 'bench',
  at: new Date().toISOString(),
  elapsed_s: elapsedS,
  machine,
  settings: { quick, sections: [...sections], main: mainName, scale: scaleNames, ...load, distinct_connections: DISTINCT_CONNECTIONS, pool_threads: poolThreads, log_level: opts['log-level'], seed, copy_rows: copyRows, wrk_threads: 1 },
  micro,
  hello,
  datasets: runs,
  peers,
  targets: tg,
  noise_floor: noise,
  comparisons,
  skipped,
  failed,
  profiles,
  perf: perfs,
  flagged,
});
if (flagged.length) console.log(`\nFLAGGED (unexpected answers or socket errors): ${flagged.join(', ')}`);
console.log(`written ${path.relative(REPO_ROOT, out)}`);
if (flagged.length || failed.length) process.exitCode = 1;
