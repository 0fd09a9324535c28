// Search API throughput: runs the scenarios of bench/scenarios.ts with wrk against `family-events
// serve` (and a bare uWS hello-world as the ceiling), per dataset, and reports req/s, p50, p99 and
// every non-2xx answer. Writes bench/results/search-<timestamp>.json.
// Usage: node --import tsx bench/search.ts [--dataset sample|synthetic-1m|both] [--duration 10]
//        [--connections 32] [--data-dir-1m DIR] [--warmup 1] [--log-level info] [--pool-threads 2] [--seed N] [--keep]
import { readFileSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SCENARIOS, type Scenario, type ScenarioContext } from './scenarios.ts';
import { BenchError, describeMachine, exitOnError, fmt, log, machineInfo, REPO_ROOT, SCRATCH_DIR, stamp, table, wholeArg, writeResult } from './lib/common.ts';
import { DATASETS, datasetFacts, DEFAULT_DIR_1M, EXCLUDED_CATEGORIES, prepareDataset, type DatasetFacts, type DatasetName } from './lib/dataset.ts';
import { counterDelta, headerObject, scrapeCounters, startHello, startServer, type Child, type CounterDelta } from './lib/server.ts';
import { runWrk, type WrkResult } from './lib/wrk.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'sample' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    'data-dir-1m': { type: 'string', default: DEFAULT_DIR_1M },
    warmup: { type: 'string', default: '1' },
    'log-level': { type: 'string', default: 'info' },
    'pool-threads': { type: 'string', default: '2' },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

const datasets: DatasetName[] = opts.dataset === 'both' ? [...DATASETS] : DATASETS.includes(opts.dataset as DatasetName) ? [opts.dataset as DatasetName] : [];
if (!datasets.length) throw new BenchError(`--dataset must be sample, synthetic-1m or both (got ${opts.dataset})`);
const durationS = wholeArg('duration', opts.duration, 1);
const connections = wholeArg('connections', opts.connections, 1);
const warmupS = wholeArg('warmup', opts.warmup, 0);
const poolThreads = wholeArg('pool-threads', opts['pool-threads'], 1);
const seed = opts.seed === undefined ? Date.now() % 1_000_000_007 : wholeArg('seed', opts.seed, 0);
const logLevel = opts['log-level'];

interface CheckedUrl {
  readonly path: string;
  readonly status: number;
  readonly total: number | null;
  /** The page's event ids: bench/postgis.ts asks PostgreSQL the same search and compares. */
  readonly ids: readonly string[];
}

interface ScenarioResult {
  readonly name: string;
  readonly connections: number;
  readonly description: string;
  readonly request: string;
  readonly rps: number;
  readonly p50_ms: number | null;
  readonly p75_ms: number | null;
  readonly p90_ms: number | null;
  readonly p99_ms: number | null;
  readonly requests: number;
  /** Every status answered during the measured run (server metrics; wrk's own count for hello-world). */
  readonly statuses: Record<string, number> | null;
  /** Non-2xx answers other than 499 (wrk's count, or the server's when larger). */
  readonly non2xx: number;
  /** 499s: requests still in flight when wrk stopped and closed its connections. */
  readonly aborted_at_end: number;
  readonly socket_errors: WrkResult['socket_errors'];
  readonly cache_hits: number | null;
  readonly cache_misses: number | null;
  /**
   * CPU time per request answered, in µs, from /proc: the server's main thread (where uWS, routing,
   * the cache and the metering client run) and the whole process (workers and the metering thread
   * too). Steadier than req/s on a machine whose load generator shares the cores.
   */
  readonly cpu_us_per_request: { readonly main: number; readonly process: number } | null;
  /** Any non-2xx answer or socket error: the figure is not a clean one. */
  readonly flagged: boolean;
  readonly ratio_vs_baseline: number | null;
  readonly ratio_vs_repeat: number | null;
  readonly sample_urls?: readonly CheckedUrl[];
  readonly wrk_command: string;
}

interface DatasetResult {
  readonly dataset: DatasetName;
  readonly data_dir: string;
  readonly snapshot: string;
  readonly events: number;
  readonly facts: DatasetFacts;
  readonly setup_s: number;
  readonly server_log_bytes: number | null;
  readonly scenarios: ScenarioResult[];
  /** The fixed search's first answer, for bench/postgis.ts to compare with. */
  readonly repeated_sample: CheckedUrl | null;
  readonly targets: {
    readonly repeated_vs_hello: number | null;
    readonly repeated_vs_hello_met: boolean | null;
    readonly noise_floor: number | null;
    /** repeated-10 / repeated-demo-10: the throughput left after key lookup and metering. */
    readonly metered_vs_unmetered: number | null;
    /** The same at 256 connections, where the commit's latency is spread over more requests. */
    readonly metered_vs_unmetered_256: number | null;
  };
}

async function getJson(target: Child, p: string): Promise<{ status: number; body: unknown }> {
  const headers = headerObject(target.headers);
  const r = await fetch(`${target.base}${p}`, { headers });
  const text = await r.text();
  try {
    return { status: r.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: r.status, body: text };
  }
}

const totalOf = (body: unknown): number | null =>
  body && typeof body === 'object' && 'total' in body && typeof body.total === 'number' ? body.total : null;

const idsOf = (body: unknown): string[] =>
  body && typeof body === 'object' && 'events' in body && Array.isArray(body.events) ? body.events.map((e: { id?: unknown }) => String(e.id)) : [];

async function checkUrl(target: Child, p: string): Promise<CheckedUrl> {
  const r = await getJson(target, p);
  return { path: p, status: r.status, total: totalOf(r.body), ids: idsOf(r.body) };
}

/** The server's catalogue must agree with what the scenarios were drawn from, or the run measures errors. */
async function crossCheck(server: Child, facts: DatasetFacts, repeated: string): Promise<CheckedUrl> {
  const cats = await getJson(server, '/v1/categories');
  const served = (cats.body as { categories?: { slug: string; excluded_from_plans: string[] }[] }).categories ?? [];
  const allowed = served.filter((c) => !c.excluded_from_plans.includes('community')).map((c) => c.slug);
  const missing = facts.categories.filter((c) => !allowed.includes(c));
  if (missing.length) throw new BenchError(`/v1/categories does not allow ${missing.join(', ')} (expected excluded: ${EXCLUDED_CATEGORIES.join(', ')})`);
  const cities = await getJson(server, '/v1/cities');
  const names = ((cities.body as { cities?: { name: string }[] }).cities ?? []).map((c) => c.name);
  if (!names.includes(facts.city)) throw new BenchError(`/v1/cities does not list ${facts.city}`);
  const r = await checkUrl(server, repeated);
  if (r.status !== 200 || !r.total) throw new BenchError(`${repeated} answered ${r.status} with total ${r.total}; the repeated scenario needs a non-empty 200`);
  return r;
}

/** Runs the generator for a second to capture the first 20 paths it makes, and asks each of them ourselves. */
async function checkGenerator(server: Child, sc: Scenario, ctx: ScenarioContext): Promise<CheckedUrl[]> {
  if (!sc.lua) return [];
  const checkCtx = { ...ctx, seed: ctx.seed + 2 };
  const w = await runWrk({ url: server.base, connections: 1, durationS: 1, script: sc.lua.script, scriptArgs: sc.lua.args(checkCtx, true), headers: server.headers });
  const paths = w.raw
    .split('\n')
    .filter((l) => l.startsWith('CHECK '))
    .map((l) => l.slice('CHECK '.length).trim());
  if (paths.length < 20) throw new BenchError(`the ${sc.name} generator printed ${paths.length} paths, expected 20:\n${w.raw}`);
  const checked: CheckedUrl[] = [];
  for (const p of paths) checked.push(await checkUrl(server, p));
  const bad = checked.filter((c) => c.status !== 200);
  if (bad.length) throw new BenchError(`generated URLs that do not answer 200:\n${bad.map((b) => `  ${b.status} ${b.path}`).join('\n')}`);
  return checked;
}

/** Clock ticks are 1/100 s on Linux (USER_HZ); /proc/<pid>/stat fields 14 and 15 are utime and stime. */
const TICK_US = 10_000;

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
function cpuTicks(pid: number): { main: number; process: number } | null {
  const all = ticksOf(`/proc/${pid}/stat`);
  const main = ticksOf(`/proc/${pid}/task/${pid}/stat`);
  return all === null || main === null ? null : { main, process: all };
}

async function measure(sc: Scenario, target: Child, ctx: ScenarioContext, sample: CheckedUrl[]): Promise<Omit<ScenarioResult, 'ratio_vs_baseline' | 'ratio_vs_repeat'>> {
  const request = sc.path ? sc.path(ctx) : `${path.relative(REPO_ROOT, sc.lua?.script ?? '')} ${(sc.lua?.args(ctx, false) ?? []).join(' ')}`;
  const conns = sc.connections ?? connections;
  const headers = [...target.headers, ...(sc.acceptEncoding ? [`Accept-Encoding: ${sc.acceptEncoding}`] : [])];
  if (sc.conditional && sc.path) {
    const r = await fetch(`${target.base}${request}`, { headers: headerObject(headers) });
    await r.arrayBuffer();
    const etag = r.headers.get('etag');
    if (r.status !== 200 || !etag) throw new BenchError(`${sc.name}: ${request} answered ${r.status} without an ETag`);
    headers.push(`If-None-Match: ${etag}`);
  }
  const wrkOpts = sc.path
    ? { url: `${target.base}${request}`, connections: conns, durationS, headers }
    : { url: target.base, connections: conns, durationS, script: sc.lua?.script ?? '', scriptArgs: sc.lua?.args(ctx, false) ?? [], headers };
  if (warmupS > 0) {
    // Another seed for the warm-up, or its searches would be cache hits in the measured run.
    const warm = sc.lua ? { ...wrkOpts, durationS: warmupS, scriptArgs: sc.lua.args({ ...ctx, seed: ctx.seed + 1 }, false) } : { ...wrkOpts, durationS: warmupS };
    await runWrk(warm);
  }
  const before = target.adminBase ? await scrapeCounters(target.adminBase) : null;
  log(`${sc.name}: ${durationS} s, ${conns} connections`);
  const cpu0 = cpuTicks(target.pid);
  const w = await runWrk(wrkOpts);
  const cpu1 = cpuTicks(target.pid);
  const delta: CounterDelta | null = before && target.adminBase ? counterDelta(before, await scrapeCounters(target.adminBase)) : null;
  // 499 is the server's record of a client that went away before its answer: wrk closes its
  // connections when the time is up, so up to one request per connection ends that way. More
  // than that means something else closed them, and is flagged with the rest.
  const aborted = delta?.statuses['499'] ?? 0;
  // A conditional scenario's answers are 304s by design: those count as successes there.
  const fine = (status: string): boolean => status.startsWith('2') || status === '499' || (sc.conditional === true && status === '304');
  const non2xx = delta ? Object.entries(delta.statuses).reduce((n, [s, c]) => (fine(s) ? n : n + c), 0) : w.non2xx_or_3xx;
  const sockErrors = Object.values(w.socket_errors).reduce((a, b) => a + b, 0);
  return {
    name: sc.name,
    description: sc.description,
    connections: conns,
    request,
    rps: w.rps,
    p50_ms: w.p50_ms,
    p75_ms: w.p75_ms,
    p90_ms: w.p90_ms,
    p99_ms: w.p99_ms,
    requests: w.requests,
    statuses: delta?.statuses ?? null,
    // wrk counts 304s among its "non-2xx or 3xx": on conditional scenarios only the server's own count is meaningful.
    non2xx: sc.conditional && delta ? non2xx : Math.max(non2xx, w.non2xx_or_3xx),
    socket_errors: w.socket_errors,
    cache_hits: delta?.cache_hits ?? null,
    cache_misses: delta?.cache_misses ?? null,
    cpu_us_per_request:
      cpu0 && cpu1 && w.requests > 0
        ? { main: Math.round(((cpu1.main - cpu0.main) * TICK_US) / w.requests), process: Math.round(((cpu1.process - cpu0.process) * TICK_US) / w.requests) }
        : null,
    aborted_at_end: aborted,
    flagged: non2xx > 0 || (!sc.conditional && w.non2xx_or_3xx > 0) || sockErrors > 0 || aborted > conns,
    ...(sample.length ? { sample_urls: sample } : {}),
    wrk_command: w.command,
  };
}

async function runDataset(name: DatasetName, runDir: string): Promise<DatasetResult> {
  const ds = await prepareDataset(name, runDir, opts['data-dir-1m']);
  const facts = await datasetFacts(ds.parquet);
  log(`${name}: snapshot ${ds.manifest.id}, ${facts.events} events (${facts.upcoming} upcoming, outside excluded categories); repeated city ${facts.city}`);
  const ctx: ScenarioContext = { facts, seed };
  const logFile = path.join(runDir, `server-${name}.log`);
  const raw: Omit<ScenarioResult, 'ratio_vs_baseline' | 'ratio_vs_repeat'>[] = [];
  let repeatedSample: CheckedUrl | null;

  for (const sc of SCENARIOS.filter((s) => s.target === 'hello')) {
    const hello = await startHello(path.join(runDir, 'hello.log'));
    try {
      raw.push(await measure(sc, hello, ctx, []));
    } finally {
      await hello.stop();
    }
  }
  log(`starting family-events serve on ${name} (LOG_LEVEL=${logLevel}, POOL_THREADS=${poolThreads})`);
  const server = await startServer({ dataDir: ds.dataDir, logFile, logLevel, poolThreads });
  try {
    const first = SCENARIOS.find((s) => s.target === 'server' && s.path);
    repeatedSample = await crossCheck(server, facts, first?.path?.(ctx) ?? '/v1/events');
    for (const sc of SCENARIOS.filter((s) => s.target === 'server')) {
      const sample = await checkGenerator(server, sc, ctx);
      if (sample.length) {
        const hits = sample.filter((s) => (s.total ?? 0) > 0).length;
        log(`${sc.name}: 20 generated URLs answered 200; ${hits}/20 found events`);
      }
      raw.push(await measure(sc, server, ctx, sample));
    }
  } finally {
    await server.stop();
  }

  const baseline = raw.find((r) => r.name === 'baseline')?.rps ?? null;
  const scenarios: ScenarioResult[] = raw.map((r) => {
    const repeats = SCENARIOS.find((s) => s.name === r.name)?.repeats;
    const of = repeats ? raw.find((x) => x.name === repeats)?.rps : undefined;
    return { ...r, ratio_vs_baseline: baseline ? +(r.rps / baseline).toFixed(3) : null, ratio_vs_repeat: of ? +(r.rps / of).toFixed(3) : null };
  });
  const repeated = scenarios.find((s) => s.name === 'repeated');
  const repeat = scenarios.find((s) => s.ratio_vs_repeat !== null);
  return {
    dataset: name,
    data_dir: path.relative(REPO_ROOT, ds.dataDir),
    snapshot: ds.manifest.id,
    events: facts.events,
    facts,
    setup_s: ds.setupS,
    server_log_bytes: await stat(logFile).then((s) => s.size, () => null),
    scenarios,
    repeated_sample: repeatedSample,
    targets: {
      repeated_vs_hello: repeated?.ratio_vs_baseline ?? null,
      repeated_vs_hello_met: repeated?.ratio_vs_baseline == null ? null : repeated.ratio_vs_baseline >= 0.5,
      noise_floor: repeat?.ratio_vs_repeat == null ? null : +Math.abs(1 - repeat.ratio_vs_repeat).toFixed(3),
      metered_vs_unmetered: ratio(scenarios, 'repeated-10', 'repeated-demo-10'),
      metered_vs_unmetered_256: ratio(scenarios, 'repeated-10-c256', 'repeated-demo-10-c256'),
    },
  };
}

function ratio(scenarios: readonly ScenarioResult[], a: string, b: string): number | null {
  const x = scenarios.find((s) => s.name === a)?.rps;
  const y = scenarios.find((s) => s.name === b)?.rps;
  return x && y ? +(x / y).toFixed(3) : null;
}

function printDataset(d: DatasetResult): void {
  const rows = d.scenarios.map((s) => [
    s.connections === connections ? s.name : `${s.name} (-c${s.connections})`,
    fmt(s.rps, 0),
    fmt(s.p50_ms, 2),
    fmt(s.p99_ms, 2),
    fmt(s.ratio_vs_baseline, 3),
    fmt(s.ratio_vs_repeat, 3),
    s.cpu_us_per_request ? `${s.cpu_us_per_request.main}/${s.cpu_us_per_request.process}` : '-',
    s.cache_hits === null ? '-' : `${s.cache_hits}/${(s.cache_hits ?? 0) + (s.cache_misses ?? 0)}`,
    s.flagged
      ? `FLAGGED: ${s.non2xx} non-2xx ${JSON.stringify(s.statuses ?? {})}, socket ${JSON.stringify(s.socket_errors)}`
      : s.aborted_at_end
        ? `ok (${s.aborted_at_end} in flight at stop: 499)`
        : 'ok',
  ]);
  console.log(`\n${d.dataset}: snapshot ${d.snapshot}, ${d.events} events; fixed search in ${d.facts.city}`);
  console.log(table(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'vs hello', 'vs repeat', 'CPU µs/req main/all', 'cache hits', 'status'], rows));
  for (const s of d.scenarios.filter((x) => x.sample_urls?.length)) {
    const found = s.sample_urls?.filter((u) => (u.total ?? 0) > 0).length ?? 0;
    // A search far from every venue is cheap for an index and not for a scan: say how many found events.
    console.log(`${s.name}: ${found}/${s.sample_urls?.length} of the sampled generated searches found events`);
  }
  const t = d.targets;
  console.log(
    `repeated / hello-world = ${fmt(t.repeated_vs_hello, 3)} (target >= 0.5: ${t.repeated_vs_hello_met === null ? '-' : t.repeated_vs_hello_met ? 'met' : 'NOT met'}); ` +
      `metered / unmetered (repeated-10 / repeated-demo-10) = ${fmt(t.metered_vs_unmetered, 3)} at ${connections} connections, ${fmt(t.metered_vs_unmetered_256, 3)} at 256; noise floor (same vs same) = ${fmt(t.noise_floor === null ? null : t.noise_floor * 100, 1)}%`,
  );
}

const machine = machineInfo();
const runDir = path.join(SCRATCH_DIR, `bench-${stamp()}`);
await mkdir(runDir, { recursive: true });
log(describeMachine(machine));
const results: DatasetResult[] = [];
try {
  for (const name of datasets) results.push(await runDataset(name, runDir));
} finally {
  if (!opts.keep) await rm(runDir, { recursive: true, force: true });
  else log(`kept ${path.relative(REPO_ROOT, runDir)} (sample DATA_DIR and server logs)`);
}
console.log(`\n${describeMachine(machine)}; wrk -t1 -c${connections} -d${durationS}s, warm-up ${warmupS} s, LOG_LEVEL=${logLevel}, POOL_THREADS=${poolThreads}, seed ${seed}`);
for (const d of results) printDataset(d);
const flagged = results.flatMap((d) => d.scenarios.filter((s) => s.flagged).map((s) => `${d.dataset}/${s.name}`));
const out = await writeResult('search', {
  kind: 'search',
  at: new Date().toISOString(),
  machine,
  settings: { duration_s: durationS, connections, warmup_s: warmupS, log_level: logLevel, pool_threads: poolThreads, seed, wrk_threads: 1 },
  datasets: results,
  flagged,
});
if (flagged.length) console.log(`\nFLAGGED (non-2xx answers or socket errors): ${flagged.join(', ')}`);
console.log(`written ${path.relative(REPO_ROOT, out)}`);
if (flagged.length) process.exitCode = 1;
