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
import { DISTINCT_CONNECTIONS, MIX_LISTS, repeatedPath, SCENARIOS, type MixList, type Scenario, type ScenarioContext } from './scenarios.ts';
import {
  BenchError,
  describeMachine,
  exitOnError,
  fmt,
  freePort,
  log,
  machineInfo,
  NOW_MS,
  REPO_ROOT,
  SCRATCH_DIR,
  stamp,
  table,
  wholeArg,
  writeResult,
} from './lib/common.ts';
import { datasetFacts, datasetName, EXCLUDED_CATEGORIES, prepareDataset, type Dataset, type DatasetFacts, type DatasetName } from './lib/dataset.ts';
import { checkGenerator, checkUrl, crossCheck, measure, type CheckedUrl, type LoadResult, type LoadSettings } from './lib/load.ts';
import {
  copyExport,
  copyWhole,
  loadMix,
  parity,
  PG_SCENARIOS,
  preparePostgis,
  runPgbench,
  WEB,
  type CopyResult,
  type PgbenchResult,
  type Postgis,
} from './lib/postgis.ts';
import { perfSample, profileSummary, type PerfSummary, type ProfileSummary } from './lib/profile.ts';
import { headerObject, startHello, startProcess, startServer, type Child } from './lib/server.ts';
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
    scenarios: { type: 'string' },
  },
});

const SECTIONS = ['micro', 'http', 'peers', 'scale'] as const;
const sections = new Set(
  opts.sections.split(',').map((s) => {
    const found = SECTIONS.find((x) => x === s);
    if (!found) throw new BenchError(`--sections takes ${SECTIONS.join(', ')} (got ${s})`);
    return found;
  }),
);
const quick = opts.quick;
const mainName = datasetName(opts.main);
// --quick measures the main dataset only: building 1M events takes minutes, 10M far longer.
const scaleNames: DatasetName[] = quick
  ? []
  : opts.scale
      .split(',')
      .filter(Boolean)
      .map(datasetName)
      .filter((d) => d !== mainName);
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
    /** COPY of every exportable event: /v1/export.csv's peer. */
    readonly copy_whole?: CopyResult | null;
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
/** The hello-world's runs (baseline, baseline-c256, baseline-body); `hello` is the first. */
const hellos: LoadResult[] = [];
let hello: LoadResult | null = null;
const runs: DatasetRun[] = [];
/** pgbench on a scale dataset loaded into PostGIS too (1M): the distinct mix at 4 clients. */
const scalePg: Record<string, PgbenchResult> = {};
/** The body of the repeated search on the main dataset, written for the hello-world's /body. */
let repeatedBodyFile: string | null = null;
const peers: PeerResults = { postgis: null, fastify: [] };
const profiles: Record<string, ProfileSummary> = {};
const perfs: Record<string, PerfSummary> = {};
/** Scenarios --profile samples with perf. */
const PERF_SCENARIOS = ['repeated', 'distinct', 'csv-10k'];
let mainSamples: CheckedUrl[] = [];

/** The dataset's distinct mix, generated from its facts and the run's seed, written for wrk. */
async function mixOf(ds: Dataset, facts: DatasetFacts): Promise<{ rows: MixRow[]; ctx: ScenarioContext }> {
  const rows = generateMix(facts, seed);
  const write = async (name: string, list: readonly MixRow[]): Promise<string> => {
    const file = path.join(runDir, `mix-${ds.name}${name}.txt`);
    await writeFile(file, `${list.map((r) => r.path).join('\n')}\n`);
    return file;
  };
  const mixFile = await write('', rows);
  const mixFiles = {} as Record<MixList, string>;
  // No list repeats a search of an earlier one: it would be a response-cache hit there.
  const asked = new Set(rows.map((r) => r.path));
  for (const [i, list] of MIX_LISTS.entries()) {
    const other = generateMix(facts, seed + 1 + i).filter((r) => !asked.has(r.path) && (list !== 'q' || r.kind === 'q'));
    for (const r of other) asked.add(r.path);
    mixFiles[list] = await write(`-${list}`, other);
  }
  return { rows, ctx: { facts, seed, mixFile, mixFiles } };
}
/** --scenarios a,b: only those (and the hello-world baselines the ratios are against), for quick before/after runs. */
const only = opts.scenarios === undefined ? null : new Set(opts.scenarios.split(',').map((s) => s.trim()));
if (only) for (const name of only) if (!SCENARIOS.some((sc) => sc.name === name)) throw new BenchError(`--scenarios: there is no scenario ${name}`);
const wanted = (sc: Scenario, scaleOnly: boolean): boolean =>
  (!quick || sc.quick) && (!scaleOnly || sc.scale) && (only === null || only.has(sc.name) || sc.target === 'hello');

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
    if (!scaleOnly) {
      mainSamples = [first];
      const r = await fetch(`${server.base}${repeatedPath(facts)}`, { headers: headerObject(server.headers) });
      repeatedBodyFile = path.join(runDir, 'repeated-body.json');
      await writeFile(repeatedBodyFile, Buffer.from(await r.arrayBuffer()));
    }
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
          ? delay(load.warmupS * 1000 + 300).then(() =>
              perfSample(server.pid, Math.max(1, load.durationS - 1), path.join(runDir, `perf-${ds.name}-${sc.name}.data`), sc.name !== 'distinct'),
            )
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
    server_log_bytes: await stat(logFile).then(
      (s) => s.size,
      () => null,
    ),
    results,
  };
}

/**
 * PostGIS loaded with `ds` (the table kept between runs) and the run's mix, handed to `use`, then
 * closed. A PostGIS that cannot be set up is a skip, never a failure: null then.
 */
async function withPostgis(
  ds: Dataset,
  facts: DatasetFacts,
  mix: readonly MixRow[],
  what: string,
  use: (p: Postgis) => Promise<void>,
): Promise<Postgis | null> {
  let p: Postgis;
  try {
    p = await preparePostgis(ds, facts, runDir, opts['reload-pg']);
  } catch (err) {
    skipped.push({ what, reason: (err as Error).message.split('\n')[0] ?? 'unknown' });
    return null;
  }
  try {
    await loadMix(p, mix);
    await use(p);
  } finally {
    await p.close();
  }
  return p;
}

/** The distinct mix on PostGIS at `clients`, with the run's seed and durations. */
const pgDistinct = (p: Postgis, mix: readonly MixRow[], clients: number): Promise<PgbenchResult> =>
  runPgbench(p, 'distinct', mix.length, { clients, seed, durationS: load.durationS, warmupS: load.warmupS });

async function runPostgis(ds: Dataset, facts: DatasetFacts, mix: readonly MixRow[], ctx: ScenarioContext): Promise<void> {
  const p = await withPostgis(ds, facts, mix, 'PostgreSQL + PostGIS (pgbench, COPY)', async (pg) => {
    const pgbench: Record<string, PgbenchResult> = {};
    for (const name of PG_SCENARIOS) {
      pgbench[name] = await runPgbench(pg, name, mix.length, { clients: DISTINCT_CONNECTIONS, seed, durationS: load.durationS, warmupS: load.warmupS });
    }
    // The distinct mix at our distinct-c16 and distinct-c32 scenarios' concurrency, under their names.
    for (const clients of [16, 32]) pgbench[`distinct-c${clients}`] = await pgDistinct(pg, mix, clients);
    log(`PostGIS COPY ... TO STDOUT (CSV), at most ${copyRows} rows`);
    const copy = await copyExport(pg, copyRows);
    log("PostGIS COPY ... TO STDOUT (CSV) of every exportable event: /v1/export.csv's peer");
    const copyAll = await copyWhole(pg);
    const check = mainSamples.length ? await parity(mainSamples, mix, pg) : null;
    peers.postgis = {
      version: pg.version,
      settings: pg.settings,
      load: pg.load,
      started_by_bench: pg.startedByBench,
      pgbench,
      copy,
      copy_whole: copyAll,
      parity: check,
    };
  });
  if (p) await runFastify(p, ctx);
}

/** PostGIS on a scale dataset: the distinct mix at 4 clients. */
async function runPostgisScale(ds: Dataset, facts: DatasetFacts, mix: readonly MixRow[]): Promise<void> {
  await withPostgis(ds, facts, mix, `PostgreSQL + PostGIS on ${ds.name}`, async (pg) => {
    scalePg[ds.name] = await pgDistinct(pg, mix, DISTINCT_CONNECTIONS);
  });
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
  log(
    `${mainName}: snapshot ${main.manifest.id}, ${mainFacts.events} events (${mainFacts.upcoming} upcoming outside excluded categories); fixed search in ${mainFacts.city}`,
  );
  const mainMix = await mixOf(main, mainFacts);

  if (sections.has('micro')) {
    log('micro-benchmarks (tinybench)');
    micro = await runMicro({ quick, snapshotDir: path.dirname(main.parquet), scratchDir: runDir });
  }
  if (sections.has('http')) runs.push(await runOurs(main, mainFacts, mainMix.ctx, false));
  if (sections.has('http') || sections.has('peers')) {
    // After our server: /body serves its repeated answer's bytes.
    const h = await startHello(path.join(runDir, 'hello.log'), repeatedBodyFile);
    try {
      for (const sc of SCENARIOS.filter((x) => x.target === 'hello' && wanted(x, false) && (x.name !== 'baseline-body' || repeatedBodyFile))) {
        hellos.push(await measure(sc, h, 'uws-hello', mainMix.ctx, load));
      }
      hello = hellos.find((r) => r.name === 'baseline') ?? null;
    } finally {
      await h.stop();
    }
  }
  if (sections.has('peers')) await runPostgis(main, mainFacts, mainMix.rows, mainMix.ctx);
  if (sections.has('scale')) {
    for (const name of scaleNames) {
      // One dataset failing (disk, memory, a 45-minute build) must not lose the figures measured so far.
      try {
        const ds = await prepareDataset(name, runDir);
        const facts = await datasetFacts(ds.parquet);
        log(`${name}: snapshot ${ds.manifest.id}, ${facts.events} events`);
        const mix = await mixOf(ds, facts);
        runs.push(await runOurs(ds, facts, mix.ctx, true));
        // PostGIS loaded with the same events (1M; 10M is not loaded: hours, and disk), the same mix.
        if (name === 'synthetic-1m' && sections.has('peers')) await runPostgisScale(ds, facts, mix.rows);
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
  const helloAt = (name: string): LoadResult | undefined => hellos.find((r) => r.name === name);
  /** Our cached answer as a share of the hello-world at the same concurrency. */
  const cached = (name: string, baseline: string, goal: number, what: string): void => {
    const r = mainRun(name);
    const h = helloAt(baseline);
    const ratio = r && h ? r.rps / h.rps : null;
    const cpu =
      r?.cpu_us_per_request && h?.cpu_us_per_request
        ? `; main-thread CPU ${r.cpu_us_per_request.main} µs/answer vs hello-world's ${h.cpu_us_per_request.main}`
        : '';
    const body = helloAt('baseline-body');
    const ceiling =
      body && h && name.startsWith('repeated') && !name.includes('c256') ? `; a bare uWS answering the same bytes: ${(body.rps / h.rps).toFixed(3)}x` : '';
    out.push({
      name: `${what} vs uWS hello-world (c${r?.connections ?? h?.connections ?? '?'})`,
      goal: `>= ${goal}x`,
      value: ratio === null ? '-' : `${ratio.toFixed(3)}x`,
      met: ratio === null ? null : ratio >= goal,
      detail:
        ratio === null
          ? 'not run'
          : `${fmt(r?.rps, 0)} vs ${fmt(h?.rps, 0)} req/s${ratio >= goal ? '' : `, ${(goal / ratio).toFixed(1)}x short`}${cpu}${ceiling}`,
    });
  };
  cached('repeated', 'baseline', 0.5, 'repeated keyed, metered, durably charged search');
  cached('repeated-c256', 'baseline-c256', 0.5, 'repeated keyed, metered, durably charged search');
  cached('poll-304', 'baseline', 0.6, '304 poll');

  /** Ours against pgbench on the same mix at the same concurrency. */
  const versusPg = (ours: LoadResult | undefined, pg: PgbenchResult | undefined, label: string, goal: number, p99Ms: number): void => {
    const ratio = ours && pg ? ours.rps / pg.tps : null;
    const p99ok = ours?.p99_ms != null && ours.p99_ms < p99Ms;
    out.push({
      name: `distinct mix vs PostGIS pgbench (${label})`,
      goal: `>= ${goal}x tps, p99 < ${p99Ms} ms`,
      value: ratio === null ? '-' : `${ratio.toFixed(2)}x, p99 ${fmt(ours?.p99_ms, 1)} ms`,
      met: ratio === null ? null : ratio >= goal && p99ok,
      detail:
        ratio === null
          ? ours
            ? 'not evaluated: PostGIS was not run'
            : 'not run'
          : `${fmt(ours?.rps, 0)} req/s vs ${fmt(pg?.tps, 0)} tps (PostGIS p99 ${fmt(pg?.p99_ms, 1)} ms); ${ratio >= goal ? 'throughput met' : `throughput ${(goal / ratio).toFixed(1)}x short`}; ${p99ok ? 'p99 met' : `p99 ${fmt(ours?.p99_ms, 1)} ms`}`,
    });
  };
  for (const [name, conns] of [
    ['distinct', DISTINCT_CONNECTIONS],
    ['distinct-c16', 16],
    ['distinct-c32', 32],
  ] as const) {
    versusPg(mainRun(name), peers.postgis?.pgbench[name], `${mainName}, ${conns} connections each`, 2, 25);
  }
  if (scaleNames.includes('synthetic-1m')) versusPg(ours('synthetic-1m', 'distinct'), scalePg['synthetic-1m'], 'synthetic-1m, 4 connections each', 1, 50);

  if (scaleNames.includes('synthetic-10m')) {
    const mix = ours('synthetic-10m', 'distinct');
    const q = ours('synthetic-10m', 'distinct-q');
    const unavailable = (r: LoadResult | undefined): number => r?.statuses?.['503'] ?? 0;
    const met = mix && q ? unavailable(mix) + unavailable(q) === 0 && (q.p99_ms ?? Infinity) < 100 && (mix.p99_ms ?? Infinity) < 250 : null;
    out.push({
      name: 'distinct mix at synthetic-10m',
      goal: 'no 503, q p99 < 100 ms, mix p99 < 250 ms',
      value: mix && q ? `${unavailable(mix) + unavailable(q)} 503s, q p99 ${fmt(q.p99_ms, 1)} ms, mix p99 ${fmt(mix.p99_ms, 1)} ms` : '-',
      met,
      detail: mix && q ? `${fmt(mix.rps, 0)} req/s; server ${mib(mix)}` : 'not run',
    });
  }

  /**
   * A CSV export's rows/s against PostgreSQL's COPY of the same rows, and whether its memory stayed
   * flat: the peak adds less than 64 MiB (a few 1 MiB stream windows and zlib state) to the server.
   */
  const againstCopy = (name: string, goal: number, run: LoadResult | undefined, copy: { readonly rows_per_s: number } | null | undefined): void => {
    const ratio = run?.rows_per_s && copy ? run.rows_per_s / copy.rows_per_s : null;
    const growth = run?.rss_mib ? run.rss_mib.peak - run.rss_mib.start : null;
    const flat = growth !== null && growth < 64;
    out.push({
      name,
      goal: `>= ${goal}x rows/s, flat memory`,
      value: ratio === null ? '-' : `${ratio.toFixed(2)}x, +${growth} MiB`,
      met: ratio === null ? null : ratio >= goal && flat,
      detail:
        ratio === null
          ? run
            ? 'not evaluated: PostGIS was not run'
            : 'not run'
          : `${fmt(run?.rows_per_s, 0)} vs ${fmt(copy?.rows_per_s, 0)} rows/s; ${ratio >= goal ? 'speed met' : `${(goal / ratio).toFixed(1)}x short`}; memory ${flat ? 'flat' : 'grew'} (${run?.rss_mib?.start}→${run?.rss_mib?.peak} MiB)`,
    });
  };
  againstCopy('Whole export vs PostgreSQL COPY', 4, mainRun('export-whole'), peers.postgis?.copy_whole);
  againstCopy('CSV export vs PostgreSQL COPY', 1, mainRun('csv-10k'), peers.postgis?.copy);
  return out;
}

function loadRow(section: string, dataset: string, r: LoadResult, ratio: string): string[] {
  const cpu = r.cpu_us_per_request ? `CPU ${r.cpu_us_per_request.main}/${r.cpu_us_per_request.process} µs/req` : '';
  const extra = [
    r.rows_per_s ? `${r.rows_per_s} rows/s` : '',
    cpu,
    mib(r),
    r.cache_hits !== null && r.cache_hits + (r.cache_misses ?? 0) > 0 ? `cache ${r.cache_hits}/${r.cache_hits + (r.cache_misses ?? 0)}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  return [
    section,
    dataset,
    r.target,
    r.connections === load.connections ? r.name : `${r.name} (c${r.connections})`,
    fmt(r.rps, 0),
    fmt(r.p50_ms, 2),
    fmt(r.p99_ms, 2),
    fmt(r.max_ms, 1),
    r.flagged ? `${r.errors}!` : String(r.errors),
    ratio,
    extra,
  ];
}

const rows: string[][] = [];
for (const m of micro) {
  // What each op is (the note) is in the JSON; the table keeps to the figures.
  rows.push([
    'micro',
    '-',
    'ours',
    `${m.group}: ${m.name}`,
    fmt(m.ops_per_s, 0),
    fmt(m.p50_us / 1000, 4),
    fmt(m.p99_us / 1000, 4),
    '-',
    '0',
    '-',
    `mean ${fmt(m.mean_us, 1)} µs ±${fmt(m.rme_pct, 1)}%`,
  ]);
}
for (const h of hellos) rows.push(loadRow('http', mainName, h, h === hello ? '1.000' : `${fmt(h.rps / (hello?.rps ?? h.rps), 3)} vs hello`));
for (const run of runs) {
  const section = run.dataset === mainName ? 'http' : 'scale';
  for (const r of run.results) {
    const sc = SCENARIOS.find((s) => s.name === r.name);
    const ref = sc?.repeats ? run.results.find((x) => x.name === sc.repeats) : undefined;
    const versus = sc?.versus?.[0] === undefined ? undefined : run.results.find((x) => x.name === sc.versus?.[0]);
    // Only answers of the size of a hello-world's work compare with it: not 10,000-row pages or DuckDB queries.
    const sameConns = hellos.find((h) => h.connections === r.connections && h.request === '/') ?? hello;
    const helloRps = !sc?.lua && !sc?.rowsPerRequest ? sameConns?.rps : undefined;
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
    rows.push([
      'peers',
      mainName,
      'postgis-pgbench',
      name.includes('-c') ? name : `${name} (c${DISTINCT_CONNECTIONS})`,
      fmt(r.tps, 0),
      fmt(r.p50_ms, 2),
      fmt(r.p99_ms, 2),
      fmt(r.max_ms, 1),
      String(r.failed),
      o ? `ours ${fmt(o.rps / r.tps, 2)}x` : '-',
      `avg ${fmt(r.latency_avg_ms, 2)} ms`,
    ]);
  }
  if (pgRows.copy) {
    const c = pgRows.copy;
    const o = mainRun('csv-10k');
    rows.push([
      'peers',
      mainName,
      'postgis-copy',
      'COPY TO STDOUT csv',
      '-',
      '-',
      '-',
      '-',
      '0',
      o?.rows_per_s ? `ours ${fmt(o.rows_per_s / c.rows_per_s, 2)}x` : '-',
      `${c.rows_per_s} rows/s; ${c.rows} rows, ${(c.bytes / 2 ** 20).toFixed(0)} MiB in ${c.seconds} s`,
    ]);
  }
  if (pgRows.copy_whole) {
    const c = pgRows.copy_whole;
    const o = mainRun('export-whole');
    rows.push([
      'peers',
      mainName,
      'postgis-copy',
      'COPY TO STDOUT csv, every exportable event',
      '-',
      '-',
      '-',
      '-',
      '0',
      o?.rows_per_s ? `ours ${fmt(o.rows_per_s / c.rows_per_s, 2)}x` : '-',
      `${c.rows_per_s} rows/s; ${c.rows} rows, ${(c.bytes / 2 ** 20).toFixed(0)} MiB in ${c.seconds} s`,
    ]);
  }
}
for (const [dataset, r] of Object.entries(scalePg)) {
  const o = ours(dataset as DatasetName, 'distinct');
  rows.push([
    'peers',
    dataset,
    'postgis-pgbench',
    `distinct (c${DISTINCT_CONNECTIONS})`,
    fmt(r.tps, 0),
    fmt(r.p50_ms, 2),
    fmt(r.p99_ms, 2),
    fmt(r.max_ms, 1),
    String(r.failed),
    o ? `ours ${fmt(o.rps / r.tps, 2)}x` : '-',
    `avg ${fmt(r.latency_avg_ms, 2)} ms`,
  ]);
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
    return [
      { name: sc.name, versus: other, rps: a.rps, versus_rps: b.rps, rps_ratio: a.rps / b.rps, p99_ms: a.p99_ms, versus_p99_ms: b.p99_ms, p99_ratio: p99Ratio },
    ];
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
for (const t of tg)
  console.log(`  ${t.met === null ? 'NOT EVALUATED' : t.met ? 'met          ' : 'MISSED       '}  ${t.name} (${t.goal}): ${t.value}; ${t.detail}`);
const parityLine = pgRows?.parity;
if (parityLine)
  console.log(
    `same answers: PostGIS returns the same page and total for ${parityLine.matched}/${parityLine.checked} of our sampled searches${parityLine.mismatches.length ? `\n  ${parityLine.mismatches.slice(0, 5).join('\n  ')}` : ''}`,
  );
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
  console.log(
    `\nperf on ${name} (${name.endsWith('distinct') ? 'all threads' : 'main thread'}): ${p.by_dso.map((d) => `${d.dso} ${d.pct.toFixed(1)}%`).join(', ')}`,
  );
  console.log(
    p.top_symbols
      .slice(0, 8)
      .map((x) => `  ${x.pct.toFixed(2).padStart(6)}%  ${x.symbol}`)
      .join('\n'),
  );
}
for (const [name, p] of Object.entries(profiles)) {
  console.log(`\nCPU profile of the server's main thread on ${name} (--cpu-prof, whole run; self time):`);
  console.log(
    p.top
      .slice(0, 15)
      .map((f) => `  ${f.pct.toFixed(1).padStart(5)}%  ${f.name}`)
      .join('\n'),
  );
}

const flagged = [...hellos, ...runs.flatMap((r) => r.results), ...peers.fastify].filter((r) => r.flagged).map((r) => `${r.target}/${r.name}`);
const out = await writeResult('bench', {
  kind: 'bench',
  at: new Date().toISOString(),
  elapsed_s: elapsedS,
  machine,
  settings: {
    quick,
    sections: [...sections],
    main: mainName,
    scale: scaleNames,
    ...load,
    distinct_connections: DISTINCT_CONNECTIONS,
    pool_threads: poolThreads,
    log_level: opts['log-level'],
    seed,
    copy_rows: copyRows,
    wrk_threads: 1,
  },
  micro,
  hello,
  hellos,
  datasets: runs,
  scale_postgis: scalePg,
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
