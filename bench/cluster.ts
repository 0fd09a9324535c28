// Several nodes: the cached, keyed, metered search (bench/scenarios.ts' repeatedPath, bench/run.ts's
// `repeated` scenario: every answer after the first a response-cache hit, every answer durably
// charged before it leaves) with wrk against, in one run on one machine and one snapshot:
//   (a) one node on the embedded ledger (SQLite files), direct: the baseline;
//   (b) one node on the PostgreSQL ledger (a fresh database on the machine's server), direct;
//   (c) that node behind nginx (the shipped site, deploy/nginx/family-events.conf);
//   (d) two nodes on the same PostgreSQL database behind nginx (round-robin);
// and (a) again at the end: the same-vs-same noise floor. Every node shares one DATA_DIR (the
// snapshot volume), PUBLIC_BASE_URL and WEB_BASE_URL, so every target must answer the same bytes;
// the run checks that before measuring. Ratios: b/a (the shared ledger's cost), c/b (nginx's),
// d/c (a second node's). On a machine of few cores the nodes, nginx, PostgreSQL and wrk share the
// same cores, so d/c there measures what a second node costs, not how the service scales.
//
//   npm run bench:cluster -- [--duration 10] [--warmup 2] [--connections 32] [--dataset sample]
//                            [--pool-threads 1] [--log-level info] [--nginx-workers 1] [--keep]
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openPool } from '../ledger/postgres/db.ts';
import { recordSnapshot } from '../ledger/postgres/cluster.ts';
import { PgAccounts } from '../ledger/postgres/store.ts';
import { repeatedPath } from './scenarios.ts';
import {
  BenchError,
  describeMachine,
  exitOnError,
  fmt,
  log,
  machineInfo,
  REPO_ROOT,
  SCRATCH_DIR,
  sleep,
  stamp,
  table,
  wholeArg,
  writeResult,
} from './lib/common.ts';
import { datasetFacts, datasetName, EXCLUDED_CATEGORIES, prepareDataset } from './lib/dataset.ts';
import { crossCheck } from './lib/load.ts';
import { DEBIAN_HTTP, findNginx, nginxPids, startNginx, type Nginx } from './lib/nginx.ts';
import { describeServer, freshDatabase, postgresMissing, probe, serverInfo, type BenchDatabase, type PgServerInfo, type Probe } from './lib/pg-ledger.ts';
import { BENCH_PLAN, counterDelta, cpuTicks, headerObject, scrapeCounters, startServer, TICK_US, type Child, type Counters } from './lib/server.ts';
import { ensureWrk, runWrk, type WrkResult } from './lib/wrk.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    dataset: { type: 'string', default: 'sample' },
    'pool-threads': { type: 'string', default: '1' },
    'log-level': { type: 'string', default: 'info' },
    'nginx-workers': { type: 'string', default: '1' },
    keep: { type: 'boolean', default: false },
  },
});
const durationS = wholeArg('duration', opts.duration, 1);
const warmupS = wholeArg('warmup', opts.warmup, 0);
const connections = wholeArg('connections', opts.connections, 1);
const poolThreads = wholeArg('pool-threads', opts['pool-threads'], 1);
const nginxWorkers = wholeArg('nginx-workers', opts['nginx-workers'], 1);
const dataset = datasetName(opts.dataset);
const logLevel = opts['log-level'];

/** The same on every node, so one snapshot gives the same bodies (their links) everywhere. */
const BASES = { PUBLIC_BASE_URL: 'https://api.example.org', WEB_BASE_URL: 'https://www.example.org' };

type TargetId = 'a' | 'b' | 'c' | 'd' | 'a-again';
const LABELS: Record<TargetId, string> = {
  a: '(a) 1 node, embedded ledger, direct',
  b: '(b) 1 node, PostgreSQL ledger, direct',
  c: '(c) 1 node, PostgreSQL, behind nginx',
  d: '(d) 2 nodes, PostgreSQL, behind nginx',
  'a-again': "(a') (a) again: noise floor",
};

interface NodeFigures {
  readonly node: string;
  readonly requests: number;
  readonly statuses: Record<string, number>;
}

interface MeterFigures {
  /** Batches (one ledger transaction each) that charged, per second, all nodes together. */
  readonly commits_per_s: number;
  readonly requests_per_commit: number | null;
  /** Embedded: the COMMIT (its fsync) alone; PostgreSQL: the whole batch transaction. */
  readonly commit_ms_avg: number | null;
}

interface Result {
  readonly target: TargetId;
  readonly label: string;
  readonly ledger: 'sqlite' | 'postgres';
  readonly nodes: number;
  readonly nginx: boolean;
  readonly connections: number;
  readonly rps: number;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly max_ms: number | null;
  readonly requests: number;
  /** Answers other than 200 that the nodes counted (their /metrics), 499s included. */
  readonly non_200: number;
  /** 499s: requests in flight when wrk stopped and closed its connections (up to one per connection). */
  readonly aborted_at_end: number;
  readonly per_node: readonly NodeFigures[];
  readonly wrk_non2xx_or_3xx: number;
  readonly socket_errors: WrkResult['socket_errors'];
  readonly cache_hits: number;
  readonly cache_misses: number;
  readonly meter: MeterFigures | null;
  /**
   * CPU µs per request (/proc): the nodes' main threads (uWS, routing, cache, the metering client)
   * and their whole processes (the metering thread too), nginx's master and workers, and the
   * PostgreSQL backends serving the database.
   */
  readonly cpu_us_per_request: {
    readonly nodes_main: number | null;
    readonly nodes: number | null;
    readonly nginx: number | null;
    readonly postgres: number | null;
  };
  /**
   * PostgreSQL targets: the share of 20 ms samples of pg_stat_activity during the run in which at
   * least one of the nodes' backends waited for a lock (an organization's row, held by another
   * node's batch until it commits).
   */
  readonly lock_wait_share: number | null;
  readonly nginx_error_log_lines: number | null;
  readonly flagged: boolean;
  readonly wrk_command: string;
}

interface Skip {
  readonly what: string;
  readonly reason: string;
}

// ---------------------------------------------------------------- what the nodes report

interface MeterCounters {
  readonly batchSum: number;
  readonly batchCount: number;
  readonly commitSum: number;
  readonly commitCount: number;
  readonly commits: number;
}

async function scrapeMeter(adminBase: string): Promise<MeterCounters> {
  const text = await (await fetch(`${adminBase}/metrics`)).text();
  const value = (name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : 0;
  };
  return {
    batchSum: value('meter_batch_requests_sum'),
    batchCount: value('meter_batch_requests_count'),
    commitSum: value('meter_commit_seconds_sum'),
    commitCount: value('meter_commit_seconds_count'),
    commits: value('meter_commits_total'),
  };
}

const nodeName = (n: Child, i: number): string => `node-${i + 1} (pid ${n.pid})`;
const portOf = (c: Child): number => Number(new URL(c.base).port);

/** CPU ticks of each process still alive (a process gone since is left out of both ends), or of its main thread. */
function ticks(pids: readonly number[], mainThread = false): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const t = cpuTicks(pid);
    if (t) out.set(pid, mainThread ? t.main : t.process);
  }
  return out;
}

function ticksDelta(before: Map<number, number>, after: Map<number, number>): number {
  let d = 0;
  for (const [pid, t] of after) d += t - (before.get(pid) ?? t);
  return d;
}

/** The PostgreSQL backends serving the bench database (the nodes' pools and listeners), not this process's own. */
async function backendPids(c: pg.Client | null): Promise<number[]> {
  if (!c) return [];
  const r = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  return r.rows.map((x) => x.pid);
}

/** Samples pg_stat_activity every 20 ms until stopped: the share of samples with a backend waiting on a lock. */
function lockSampler(c: pg.Client | null): { stop(): Promise<number | null> } {
  if (!c) return { stop: () => Promise.resolve(null) };
  let running = true;
  let samples = 0;
  let waiting = 0;
  const loop = (async () => {
    while (running) {
      const r = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      samples++;
      if ((r.rows[0]?.n ?? 0) > 0) waiting++;
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return samples ? +(waiting / samples).toFixed(3) : null;
    },
  };
}

// ---------------------------------------------------------------- the checks and the measurement

interface Target {
  readonly id: TargetId;
  readonly base: string;
  readonly headers: readonly string[];
  readonly nodes: readonly Child[];
  readonly nginx: Nginx | null;
  readonly ledger: 'sqlite' | 'postgres';
}

/** Every node behind the target answers 200 with the reference bytes (enough requests to reach each node twice). */
async function checkSame(t: Target, pathAndQuery: string, reference: Buffer | null): Promise<Buffer> {
  let ref = reference;
  for (let i = 0; i < 2 * t.nodes.length + 1; i++) {
    const r = await fetch(`${t.base}${pathAndQuery}`, { headers: headerObject(t.headers) });
    const body = Buffer.from(await r.arrayBuffer());
    if (r.status !== 200) throw new BenchError(`${LABELS[t.id]}: ${pathAndQuery} answered ${r.status}: ${body.toString('utf8').slice(0, 300)}`);
    if (ref === null) ref = body;
    else if (!body.equals(ref)) {
      let at = 0;
      while (at < body.length && body[at] === ref[at]) at++;
      throw new BenchError(
        `${LABELS[t.id]}: ${pathAndQuery} answered other bytes than (a) (${body.length} against ${ref.length}, first difference at byte ${at}: ` +
          `${JSON.stringify(body.subarray(Math.max(0, at - 40), at + 40).toString('utf8'))} against ${JSON.stringify(ref.subarray(Math.max(0, at - 40), at + 40).toString('utf8'))})`,
      );
    }
  }
  return ref ?? Buffer.alloc(0);
}

async function measure(t: Target, pathAndQuery: string, pgClient: pg.Client | null): Promise<Result> {
  const wrkOpts = { url: `${t.base}${pathAndQuery}`, connections, durationS, headers: t.headers };
  if (warmupS > 0) await runWrk({ ...wrkOpts, durationS: warmupS });
  const admin = t.nodes.map((n) => n.adminBase ?? '');
  const before: Counters[] = await Promise.all(admin.map((a) => scrapeCounters(a)));
  const meter0 = await Promise.all(admin.map((a) => scrapeMeter(a)));
  const nodePids = t.nodes.map((n) => n.pid);
  const ngPids = t.nginx ? await nginxPids(t.nginx.pid) : [];
  const pgPids = t.ledger === 'postgres' ? await backendPids(pgClient) : [];
  const cpu0 = { main: ticks(nodePids, true), nodes: ticks(nodePids), nginx: ticks(ngPids), pg: ticks(pgPids) };
  log(`${LABELS[t.id]}: ${durationS} s, ${connections} connections`);
  const sampler = t.ledger === 'postgres' ? lockSampler(pgClient) : null;
  const w = await runWrk(wrkOpts);
  const lockShare = (await sampler?.stop()) ?? null;
  const cpu1 = { main: ticks(nodePids, true), nodes: ticks(nodePids), nginx: ticks(ngPids), pg: ticks(pgPids) };
  const after = await Promise.all(admin.map((a) => scrapeCounters(a)));
  const meter1 = await Promise.all(admin.map((a) => scrapeMeter(a)));

  const perNode: NodeFigures[] = t.nodes.map((n, i) => {
    const d = counterDelta(before[i]!, after[i]!);
    return { node: nodeName(n, i), requests: Object.values(d.statuses).reduce((a, b) => a + b, 0), statuses: d.statuses };
  });
  const deltas = t.nodes.map((_, i) => counterDelta(before[i]!, after[i]!));
  const statuses: Record<string, number> = {};
  for (const d of deltas) for (const [s, c] of Object.entries(d.statuses)) statuses[s] = (statuses[s] ?? 0) + c;
  const non200 = Object.entries(statuses).reduce((n, [s, c]) => (s === '200' ? n : n + c), 0);
  const aborted = statuses['499'] ?? 0;
  const m = meter1.reduce(
    (acc, m1, i) => {
      const m0 = meter0[i]!;
      return {
        batchSum: acc.batchSum + m1.batchSum - m0.batchSum,
        batchCount: acc.batchCount + m1.batchCount - m0.batchCount,
        commitSum: acc.commitSum + m1.commitSum - m0.commitSum,
        commitCount: acc.commitCount + m1.commitCount - m0.commitCount,
        commits: acc.commits + m1.commits - m0.commits,
      };
    },
    { batchSum: 0, batchCount: 0, commitSum: 0, commitCount: 0, commits: 0 },
  );
  const perRequest = (d: number, any: boolean): number | null => (any && w.requests > 0 ? Math.round((d * TICK_US) / w.requests) : null);
  const sockErrors = Object.values(w.socket_errors).reduce((a, b) => a + b, 0);
  const errorLog = t.nginx ? (await t.nginx.errorLog()).split('\n').filter((l) => l.trim()) : null;
  return {
    target: t.id,
    label: LABELS[t.id],
    ledger: t.ledger,
    nodes: t.nodes.length,
    nginx: t.nginx !== null,
    connections,
    rps: w.rps,
    p50_ms: w.p50_ms,
    p99_ms: w.p99_ms,
    max_ms: w.max_ms,
    requests: w.requests,
    non_200: non200,
    aborted_at_end: aborted,
    per_node: perNode,
    wrk_non2xx_or_3xx: w.non2xx_or_3xx,
    socket_errors: w.socket_errors,
    cache_hits: deltas.reduce((n, d) => n + d.cache_hits, 0),
    cache_misses: deltas.reduce((n, d) => n + d.cache_misses, 0),
    meter:
      m.commitCount > 0
        ? {
            commits_per_s: Math.round(m.commits / w.seconds),
            requests_per_commit: m.batchCount > 0 ? +(m.batchSum / m.batchCount).toFixed(1) : null,
            commit_ms_avg: +((m.commitSum / m.commitCount) * 1000).toFixed(3),
          }
        : null,
    cpu_us_per_request: {
      nodes_main: perRequest(ticksDelta(cpu0.main, cpu1.main), nodePids.length > 0),
      nodes: perRequest(ticksDelta(cpu0.nodes, cpu1.nodes), nodePids.length > 0),
      nginx: perRequest(ticksDelta(cpu0.nginx, cpu1.nginx), ngPids.length > 0),
      postgres: perRequest(ticksDelta(cpu0.pg, cpu1.pg), pgPids.length > 0),
    },
    lock_wait_share: lockShare,
    nginx_error_log_lines: errorLog ? errorLog.length : null,
    // A 499 is a request wrk abandoned when it stopped: up to one per connection at the end of the
    // measured run, and of the warm-up's (noticed late). Anything else is not clean.
    flagged: non200 - aborted > 0 || aborted > 2 * connections || w.non2xx_or_3xx > 0 || sockErrors > 0 || (errorLog?.length ?? 0) > 0,
    wrk_command: w.command,
  };
}

// ---------------------------------------------------------------- the run

const machine = machineInfo();
log(describeMachine(machine));
await ensureWrk();
const runDir = path.join(SCRATCH_DIR, `bench-cluster-${stamp()}`);
const skipped: Skip[] = [];
const results: Result[] = [];
const started = performance.now();

const pgMissing = await postgresMissing();
if (pgMissing) skipped.push({ what: '(b), (c), (d): the PostgreSQL ledger', reason: pgMissing });
const nginxBin = findNginx();
if (!nginxBin && !pgMissing) skipped.push({ what: '(c), (d): nginx', reason: 'nginx is not installed: apt-get install -y nginx' });
let pgServer: PgServerInfo | null = null;
let pgProbe: Probe | null = null;
let db: BenchDatabase | null = null;
let pgClient: pg.Client | null = null;
const running: { stop(): Promise<void> }[] = [];
const stopAll = async (): Promise<void> => {
  for (const p of running.splice(0).reverse()) await p.stop();
};
/** What the run measured on, filled in once the snapshot is built. */
const data = { request: '', snapshot: '', events: 0 };

try {
  const ds = await prepareDataset(dataset, runDir);
  const facts = await datasetFacts(ds.parquet);
  const requestPath = repeatedPath(facts);
  Object.assign(data, { request: requestPath, snapshot: ds.manifest.id, events: facts.events });
  const nodeOpts = (name: string) => ({ dataDir: ds.dataDir, logFile: path.join(runDir, `${name}.log`), logLevel, poolThreads });

  // The shared ledger: a database of this run's own, migrated, with the bench plan, a key on it,
  // and the snapshot recorded as the one every node serves (as `family-events snapshot build` does).
  let pgKey = '';
  if (!pgMissing) {
    pgServer = await serverInfo(ds.dataDir);
    log(describeServer(pgServer));
    db = await freshDatabase('cluster');
    const pool = openPool(db.settings, 'family-events bench');
    try {
      const accounts = new PgAccounts(pool);
      await accounts.setPlan(BENCH_PLAN);
      pgKey = (await accounts.createKey('Benchmarks', 'bench@localhost', BENCH_PLAN.name)).key;
    } finally {
      await pool.end();
    }
    await recordSnapshot(db.settings, ds.manifest.id);
    pgProbe = await probe(db.url);
    pgClient = new pg.Client({ connectionString: db.url });
    await pgClient.connect();
  }

  // (a) the embedded ledger: its key in DATA_DIR/ledger (startServer's default).
  let reference: Buffer | null = null;
  const embedded = async (id: 'a' | 'a-again'): Promise<void> => {
    log(`starting ${LABELS[id]}`);
    const node = await startServer({ ...nodeOpts(`${id}-node`), env: BASES });
    running.push(node);
    if (id === 'a') await crossCheck(node, facts, requestPath, EXCLUDED_CATEGORIES);
    const t: Target = { id, base: node.base, headers: node.headers, nodes: [node], nginx: null, ledger: 'sqlite' };
    reference = await checkSame(t, requestPath, reference);
    results.push(await measure(t, requestPath, null));
    await stopAll();
  };
  await embedded('a');

  if (db) {
    const url = db.url;
    const pgEnv = (name: string): Record<string, string> => ({ ...BASES, DATABASE_URL: url, NODE_NAME: name });
    log(`starting ${LABELS.b}`);
    const node1 = await startServer({ ...nodeOpts('node-1'), env: pgEnv('node-1'), key: pgKey });
    running.push(node1);
    const headers = node1.headers;
    const b: Target = { id: 'b', base: node1.base, headers, nodes: [node1], nginx: null, ledger: 'postgres' };
    await checkSame(b, requestPath, reference);
    results.push(await measure(b, requestPath, pgClient));

    if (nginxBin) {
      const lb1 = await startNginx(nginxBin, [portOf(node1)], { workers: nginxWorkers, http: DEBIAN_HTTP });
      running.push(lb1);
      const c: Target = { id: 'c', base: lb1.base, headers, nodes: [node1], nginx: lb1, ledger: 'postgres' };
      await checkSame(c, requestPath, reference);
      results.push(await measure(c, requestPath, pgClient));
      await lb1.stop();
      running.splice(running.indexOf(lb1), 1);

      log('starting node-2 on the same database');
      const node2 = await startServer({ ...nodeOpts('node-2'), env: pgEnv('node-2'), key: pgKey });
      running.push(node2);
      const lb2 = await startNginx(nginxBin, [portOf(node1), portOf(node2)], { workers: nginxWorkers, http: DEBIAN_HTTP });
      running.push(lb2);
      const d: Target = { id: 'd', base: lb2.base, headers, nodes: [node1, node2], nginx: lb2, ledger: 'postgres' };
      await checkSame(d, requestPath, reference);
      results.push(await measure(d, requestPath, pgClient));
    }
    await stopAll();
  }

  await embedded('a-again');
} finally {
  await stopAll();
  await pgClient?.end().catch(() => undefined);
  await db?.drop();
  if (!opts.keep) await rm(runDir, { recursive: true, force: true });
  else log(`kept ${path.relative(REPO_ROOT, runDir)} (data, node logs)`);
}

// ---------------------------------------------------------------- the report

const byId = (id: TargetId): Result | undefined => results.find((r) => r.target === id);
const ratio = (x: TargetId, y: TargetId): number | null => {
  const [rx, ry] = [byId(x), byId(y)];
  return rx && ry && ry.rps > 0 ? +(rx.rps / ry.rps).toFixed(3) : null;
};
const ratios = { b_over_a: ratio('b', 'a'), c_over_b: ratio('c', 'b'), d_over_c: ratio('d', 'c'), d_over_a: ratio('d', 'a') };
const noise = ratio('a-again', 'a');
const noiseFloor = noise === null ? null : +Math.abs(1 - noise).toFixed(3);
const RATIO_OF: Partial<Record<TargetId, string>> = {
  b: `b/a ${fmt(ratios.b_over_a, 3)}`,
  c: `c/b ${fmt(ratios.c_over_b, 3)}`,
  d: `d/c ${fmt(ratios.d_over_c, 3)}`,
  'a-again': `a'/a ${fmt(noise, 3)}`,
};
const cores = os.cpus().length;
const sharing =
  `All on one machine of ${cores} cores: the nodes, nginx, PostgreSQL and wrk share the same cores` +
  (cores <= 4
    ? ', so (d) against (c) shows what a second node costs, not how the service scales: a second node adds a process competing for the same CPUs, not capacity.'
    : '; (d) against (c) is only a scaling figure if the two nodes do not compete for cores with the rest.');

console.log(`\n${describeMachine(machine)}`);
console.log(
  `${dataset} snapshot ${data.snapshot} (${data.events} events); GET ${data.request} with a key on the bench plan (every answer a cache hit after the first, and durably charged before it leaves); ` +
    `wrk -t1 -c${connections} -d${durationS}s after a ${warmupS} s warm-up; POOL_THREADS=${poolThreads}, LOG_LEVEL=${logLevel}; nginx: the shipped site, ${nginxWorkers} worker${nginxWorkers > 1 ? 's' : ''}.`,
);
console.log(
  `embedded ledger: SQLite WAL, synchronous=FULL, in DATA_DIR/ledger${pgServer ? `; ${describeServer(pgServer)}; a fresh database of the run's own, over the Unix socket` : ''}`,
);
if (pgProbe) {
  console.log(
    `PostgreSQL alone, one client: a round trip p50 ${fmt(pgProbe.round_trip_p50_ms, 3)} ms (p99 ${fmt(pgProbe.round_trip_p99_ms, 3)}), a one-row commit p50 ${fmt(pgProbe.commit_p50_ms, 3)} ms (p99 ${fmt(pgProbe.commit_p99_ms, 3)}); ` +
      "a node's batch of charges is one transaction of 5 statements (BEGIN, the organizations' locks, one read, one write, COMMIT), each a round trip.",
  );
}
console.log(sharing);
for (const s of skipped) console.log(`SKIPPED ${s.what}: ${s.reason}`);
console.log(
  table(
    [
      'target',
      'req/s',
      'ratio',
      'p50 ms',
      'p99 ms',
      'non-200',
      'spread',
      'commits/s',
      'reqs/commit',
      'commit ms',
      'lock waits',
      'CPU µs/req: node main/all',
      'nginx',
      'postgres',
    ],
    results.map((r) => [
      r.label,
      fmt(r.rps, 0),
      RATIO_OF[r.target] ?? '1',
      fmt(r.p50_ms, 2),
      fmt(r.p99_ms, 2),
      `${r.non_200}${r.aborted_at_end ? ` (${r.aborted_at_end}×499)` : ''}${r.flagged ? ' !' : ''}`,
      r.per_node.map((n) => n.requests).join('/'),
      r.meter ? String(r.meter.commits_per_s) : '-',
      fmt(r.meter?.requests_per_commit, 1),
      fmt(r.meter?.commit_ms_avg, 3),
      r.lock_wait_share === null ? '-' : `${(r.lock_wait_share * 100).toFixed(0)}%`,
      `${fmt(r.cpu_us_per_request.nodes_main, 0)}/${fmt(r.cpu_us_per_request.nodes, 0)}`,
      fmt(r.cpu_us_per_request.nginx, 0),
      fmt(r.cpu_us_per_request.postgres, 0),
    ]),
  ),
);
console.log(
  `ratios: b/a ${fmt(ratios.b_over_a, 3)} (the PostgreSQL ledger's cost on one node), c/b ${fmt(ratios.c_over_b, 3)} (nginx's), d/c ${fmt(ratios.d_over_c, 3)} (a second node's, on the same cores), d/a ${fmt(ratios.d_over_a, 3)}; ` +
    `noise floor (a first vs last): ${fmt(noiseFloor === null ? null : noiseFloor * 100, 1)}%`,
);
console.log(
  "non-200: every status but 200 the nodes' /metrics counted (499: a request wrk abandoned when it stopped; '!' flags anything else, a socket error or an nginx error-log line). spread: requests per node. " +
    "commit ms: embedded, the COMMIT (its fsync) alone; PostgreSQL, the whole batch transaction. lock waits: share of 20 ms samples in which a backend of the nodes waited for a lock. CPU: /proc, µs per request: the nodes' main threads / their whole processes (the metering thread included), nginx master and workers, the database's PostgreSQL backends.",
);
const out = await writeResult('cluster', {
  kind: 'cluster',
  at: new Date().toISOString(),
  machine,
  seconds: +((performance.now() - started) / 1000).toFixed(1),
  settings: {
    dataset,
    ...data,
    duration_s: durationS,
    warmup_s: warmupS,
    connections,
    pool_threads: poolThreads,
    log_level: logLevel,
    nginx_workers: nginxWorkers,
  },
  postgres: pgServer ? { server: pgServer, probe: pgProbe } : null,
  note: sharing,
  skipped,
  results,
  ratios,
  noise_floor: noiseFloor,
});
console.log(`written ${path.relative(REPO_ROOT, out)}`);
