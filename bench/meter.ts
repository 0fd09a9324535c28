// The metering thread alone: how many quota decisions and durable charges a second it settles,
// how it groups them into commits (requests per transaction, fsyncs per second), and what a caller
// waits. Drives server/meter.ts exactly as the server does, on a real ledger, with N callers each
// keeping one request outstanding (as N connections would), on either ledger in the same run: the
// embedded one (SQLite files, ledger/sqlite/thread.ts) and the shared one (a fresh PostgreSQL
// database per scenario on the machine's server, ledger/postgres/thread.ts).
//
//   npm run bench:meter -- [--duration 5] [--callers 1,8,32,128] [--ledger sqlite,postgres]
//
// Scenarios per caller count and ledger (bench/scenarios.ts has the HTTP ones):
//   peek        a quota read (no write): the cost of the round trip itself, the baseline;
//   charge      reserve with settle, as on a cached answer: one request, one durable charge;
//   reserve+commit  as on a capped plan's cache miss: two requests, one durable charge;
// and, per ledger, the first level's charge again at the end: the same-vs-same noise floor.
// PostgreSQL is skipped, with the reason printed, when no server answers (BENCH_DATABASE_URL, or
// the local socket as postgres).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Histogram } from 'prom-client';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../server/log.ts';
import { Meter } from '../server/meter.ts';
import { Metrics } from '../server/metrics.ts';
import { openPool } from '../ledger/postgres/db.ts';
import { PgAccounts } from '../ledger/postgres/store.ts';
import { AccountsDb } from '../ledger/sqlite/store.ts';
import { BenchError, describeMachine, exitOnError, fmt, log, machineInfo, percentile, REPO_ROOT, sleep, table, wholeArg, writeResult } from './lib/common.ts';
import { describeServer, freshDatabase, postgresMissing, probe, serverInfo, type PgServerInfo, type Probe } from './lib/pg-ledger.ts';
import { cpuTicks, TICK_US } from './lib/server.ts';
import type { Plan } from '../ledger/accounts.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    callers: { type: 'string', default: '1,8,32,128' },
    ledger: { type: 'string', default: 'sqlite,postgres' },
  },
});
const durationS = wholeArg('duration', opts.duration, 1);
const callerCounts = opts.callers.split(',').map((c) => wholeArg('callers', c, 1));

const LEDGERS = ['sqlite', 'postgres'] as const;
type Ledger = (typeof LEDGERS)[number];
const askedLedgers: Ledger[] = opts.ledger.split(',').map((l) => {
  const found = LEDGERS.find((x) => x === l);
  if (!found) throw new BenchError(`--ledger takes ${LEDGERS.join(', ')} (got ${l})`);
  return found;
});

type Kind = 'peek' | 'charge' | 'reserve+commit';

interface Result {
  readonly ledger: Ledger;
  readonly scenario: Kind;
  readonly callers: number;
  readonly operations_per_s: number;
  readonly charges_per_s: number;
  readonly commits_per_s: number;
  readonly requests_per_commit: number | null;
  readonly commit_ms_avg: number | null;
  readonly wait_p50_ms: number | null;
  readonly wait_p99_ms: number | null;
  /**
   * CPU µs per operation of this process's threads other than the main one (/proc): the metering
   * thread (its SQLite or its PostgreSQL client), plus V8's and libuv's helpers.
   */
  readonly thread_cpu_us_per_op: number | null;
}

/** Sum and count of a prom-client histogram, read straight from the registry. */
async function histogram(metrics: Metrics, name: string): Promise<{ sum: number; count: number }> {
  const h = metrics.registry.getSingleMetric(name) as Histogram | undefined;
  const values = (await h?.get())?.values ?? [];
  const sum = values.find((v) => v.metricName === `${name}_sum`)?.value ?? 0;
  const count = values.find((v) => v.metricName === `${name}_count`)?.value ?? 0;
  return { sum, count };
}

async function counter(metrics: Metrics, name: string): Promise<number> {
  const c = metrics.registry.getSingleMetric(name);
  return (await c?.get())?.values[0]?.value ?? 0;
}

/** The capped plan every key is on, with a cap no run reaches: every decision is a real cap check. */
const CAPPED: Plan = {
  name: 'bench-capped',
  monthlyRecordLimit: 1_000_000_000,
  excludedCategories: [],
  attributionRequired: true,
  requestsPerMinute: 1_000_000_000,
};
const orgOf = (i: number): string => `org ${i % 16}`;

/**
 * The shared ledger's thread answers `unavailable` until it has connected, read the accounts and
 * started listening (Meter.start resolves at the first of those): wait for a real answer.
 */
async function answering(meter: Meter, keyId: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await meter.peek(keyId, Date.now());
    if (r.ok) return;
    if (Date.now() > deadline) throw new BenchError(`the metering thread did not answer within 15 s: ${r.detail}`);
    await sleep(50);
  }
}

async function scenario(ledger: Ledger, kind: Kind, callers: number): Promise<Result> {
  const ledgerDir = await mkdtemp(path.join(os.tmpdir(), 'fe-bench-meter-'));
  const { logger, flush } = createLogger('warn');
  const db = ledger === 'postgres' ? await freshDatabase('meter') : null;
  try {
    // Keys spread over organizations (as many callers as there are keys, up to 16 orgs), on the
    // capped plan.
    const keyIds: string[] = [];
    if (db) {
      const pool = openPool(db.settings, 'family-events bench');
      try {
        const accounts = new PgAccounts(pool);
        await accounts.setPlan(CAPPED);
        for (let i = 0; i < callers; i++) keyIds.push((await accounts.createKey(orgOf(i), 'bench@localhost', CAPPED.name)).keyId);
      } finally {
        await pool.end();
      }
    } else {
      const accounts = AccountsDb.open(ledgerDir);
      accounts.setPlan(CAPPED);
      for (let i = 0; i < callers; i++) keyIds.push(accounts.createKey(orgOf(i), 'bench@localhost', CAPPED.name).keyId);
      accounts.close();
    }

    const config = loadConfig({
      DATA_DIR: ledgerDir,
      LEDGER_DIR: ledgerDir,
      LOG_LEVEL: 'warn',
      ...(db ? { DATABASE_URL: db.url, NODE_NAME: 'bench-meter' } : {}),
    });
    const metrics = new Metrics({
      queueDepth: () => 0,
      snapshotId: () => null,
      snapshotEvents: () => 0,
      cacheBytes: () => 0,
      inFlight: () => 0,
      snapshotPending: () => null,
    });
    const meter = await Meter.start(config, logger, metrics);
    try {
      await answering(meter, keyIds[0] ?? '');
    } catch (err) {
      await meter.close();
      throw err;
    }
    const nowMs = Date.now();
    const waits: number[] = [];
    let operations = 0;
    let charges = 0;
    let running = true;
    const one = async (keyId: string): Promise<void> => {
      const t0 = performance.now();
      if (kind === 'peek') {
        const r = await meter.peek(keyId, nowMs);
        if (!r.ok) throw new Error(r.detail);
        operations++;
      } else if (kind === 'charge') {
        const r = await meter.reserve(keyId, 20, true, nowMs);
        if (!r.ok || r.reservation !== null) throw new Error('expected a settled charge');
        operations++;
        charges++;
      } else {
        const r = await meter.reserve(keyId, 20, false, nowMs);
        if (!r.ok || r.reservation === null) throw new Error('expected a reservation');
        const c = await meter.commit(r.reservation, 17, nowMs);
        if (!c.ok) throw new Error(c.detail);
        operations += 2;
        charges++;
      }
      waits.push(performance.now() - t0);
    };
    // Warm-up: the first batches open statements and load each organization's period.
    await Promise.all(keyIds.map((k) => one(k)));
    waits.length = 0;
    operations = 0;
    charges = 0;
    const commits0 = await counter(metrics, 'meter_commits_total');
    const batches0 = await histogram(metrics, 'meter_batch_requests');
    const commitS0 = await histogram(metrics, 'meter_commit_seconds');
    const cpu0 = cpuTicks(process.pid);
    const started = performance.now();
    setTimeout(() => (running = false), durationS * 1000);
    await Promise.all(
      keyIds.map(async (k) => {
        while (running) await one(k);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu1 = cpuTicks(process.pid);
    const commits = (await counter(metrics, 'meter_commits_total')) - commits0;
    const batches = await histogram(metrics, 'meter_batch_requests');
    const commitS = await histogram(metrics, 'meter_commit_seconds');
    await meter.close();
    waits.sort((a, b) => a - b);
    const chargeBatches = commitS.count - commitS0.count;
    return {
      ledger,
      scenario: kind,
      callers,
      operations_per_s: Math.round(operations / seconds),
      charges_per_s: Math.round(charges / seconds),
      commits_per_s: Math.round(commits / seconds),
      requests_per_commit: chargeBatches > 0 ? +((batches.sum - batches0.sum) / (batches.count - batches0.count)).toFixed(1) : null,
      commit_ms_avg: chargeBatches > 0 ? +(((commitS.sum - commitS0.sum) / chargeBatches) * 1000).toFixed(3) : null,
      wait_p50_ms: percentile(waits, 50),
      wait_p99_ms: percentile(waits, 99),
      thread_cpu_us_per_op:
        cpu0 && cpu1 && operations > 0 ? Math.round(((cpu1.process - cpu1.main - (cpu0.process - cpu0.main)) * TICK_US) / operations) : null,
    };
  } finally {
    flush();
    await rm(ledgerDir, { recursive: true, force: true });
    await db?.drop();
  }
}

const machine = machineInfo();
log(describeMachine(machine));
const ledgers: Ledger[] = [];
let skipped: string | null = null;
let pgServer: PgServerInfo | null = null;
let pgProbe: Probe | null = null;
for (const l of askedLedgers) {
  if (l === 'postgres') {
    skipped = await postgresMissing();
    if (skipped) {
      log(`SKIPPED postgres: ${skipped}`);
      continue;
    }
    pgServer = await serverInfo(os.tmpdir());
    log(describeServer(pgServer));
    // What one batch's transaction is made of, on an idle server: a round trip per statement, and a commit.
    const db = await freshDatabase('probe');
    try {
      pgProbe = await probe(db.url);
    } finally {
      await db.drop();
    }
  }
  ledgers.push(l);
}
if (!ledgers.length) throw new BenchError(`no ledger to measure (${skipped ?? 'none asked'})`);

const results: Result[] = [];
// Ledgers interleaved per scenario, so that what disturbs the machine for a while disturbs both.
for (const callers of callerCounts) {
  for (const kind of ['peek', 'charge', 'reserve+commit'] as const) {
    for (const ledger of ledgers) {
      log(`${ledger}: ${kind}, ${callers} callers, ${durationS} s`);
      results.push(await scenario(ledger, kind, callers));
    }
  }
}
const first = callerCounts[0] ?? 1;
const reruns: Result[] = [];
const noise: Partial<Record<Ledger, number | null>> = {};
for (const ledger of ledgers) {
  log(`${ledger}: charge, ${first} callers again (noise floor)`);
  const again = await scenario(ledger, 'charge', first);
  reruns.push(again);
  const firstCharge = results.find((r) => r.ledger === ledger && r.scenario === 'charge' && r.callers === first);
  noise[ledger] = firstCharge ? +Math.abs(1 - again.charges_per_s / firstCharge.charges_per_s).toFixed(3) : null;
}

console.log(`\n${describeMachine(machine)}; ${durationS} s per run`);
console.log(`sqlite: the embedded ledger on ${os.tmpdir()} (SQLite WAL, synchronous=FULL: an fsync per commit)`);
if (pgServer) {
  console.log(`postgres: a fresh database per scenario on the local server, over its Unix socket; ${describeServer(pgServer)}`);
  if (pgProbe) {
    console.log(
      `postgres alone, one client: a round trip (SELECT 1) p50 ${fmt(pgProbe.round_trip_p50_ms, 3)} ms, p99 ${fmt(pgProbe.round_trip_p99_ms, 3)} ms; ` +
        `a one-row commit p50 ${fmt(pgProbe.commit_p50_ms, 3)} ms, p99 ${fmt(pgProbe.commit_p99_ms, 3)} ms. ` +
        'A batch is one transaction of 5 statements (BEGIN, lock the organizations, one read, one write, COMMIT), each a round trip.',
    );
  }
}
if (skipped) console.log(`SKIPPED postgres: ${skipped}`);
const vsSqlite = (r: Result): string => {
  if (r.ledger === 'sqlite') return '-';
  const base = results.find((s) => s.ledger === 'sqlite' && s.scenario === r.scenario && s.callers === r.callers);
  if (!base) return '-';
  // peek charges nothing: its operations a second are compared instead.
  return r.scenario === 'peek' ? fmt(r.operations_per_s / base.operations_per_s, 3) : fmt(r.charges_per_s / base.charges_per_s, 3);
};
console.log(
  table(
    [
      'scenario',
      'ledger',
      'callers',
      'ops/s',
      'charges/s',
      'vs sqlite',
      'vs peek',
      'commits/s',
      'reqs/commit',
      'commit ms',
      'wait p50 ms',
      'wait p99 ms',
      'thread µs/op',
    ],
    results.map((r) => {
      const peek = results.find((p) => p.ledger === r.ledger && p.scenario === 'peek' && p.callers === r.callers);
      return [
        r.scenario,
        r.ledger,
        String(r.callers),
        String(r.operations_per_s),
        String(r.charges_per_s),
        vsSqlite(r),
        peek && r.scenario !== 'peek' ? fmt(r.operations_per_s / peek.operations_per_s, 3) : '-',
        String(r.commits_per_s),
        fmt(r.requests_per_commit, 1),
        fmt(r.commit_ms_avg, 3),
        fmt(r.wait_p50_ms, 3),
        fmt(r.wait_p99_ms, 3),
        fmt(r.thread_cpu_us_per_op, 0),
      ];
    }),
  ),
);
console.log(
  'vs sqlite: charges/s of the postgres row over the sqlite row of the same scenario and callers (peek: operations/s). ' +
    'commit ms: sqlite, the COMMIT (its fsync) alone; postgres, the whole batch transaction from taking a pooled connection to COMMIT returning. ' +
    "thread µs/op: CPU of the threads other than the callers' (the metering thread, mostly) per operation.",
);
for (const ledger of ledgers) console.log(`noise floor ${ledger} (charge, ${first} callers, first vs last run): ${fmt((noise[ledger] ?? NaN) * 100, 1)}%`);
const out = await writeResult('meter', {
  kind: 'meter',
  at: new Date().toISOString(),
  machine,
  settings: { duration_s: durationS, callers: callerCounts, ledgers },
  postgres: pgServer ? { server: pgServer, probe: pgProbe } : null,
  skipped: skipped ? { postgres: skipped } : {},
  results,
  noise_floor: noise,
  reruns,
});
console.log(`written ${path.relative(REPO_ROOT, out)}`);
