// The metering thread alone: how many quota decisions and durable charges a second it settles,
// how it groups them into commits (requests per transaction, fsyncs per second), and what a caller
// waits. Drives server/meter.ts exactly as the server does, on a real ledger file, with N callers
// each keeping one request outstanding (as N connections would).
//
//   npm run bench:meter -- [--duration 5] [--callers 1,8,32,128]
//
// Scenarios per caller count (bench/scenarios.ts has the HTTP ones):
//   peek        a quota read (no write): the cost of the round trip itself, the baseline;
//   charge      reserve with settle, as on a cached answer: one request, one durable charge;
//   reserve+commit  as on a capped plan's cache miss: two requests, one durable charge;
// and the first level again at the end: the same-vs-same noise floor.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Histogram } from 'prom-client';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { Meter } from '../server/meter.ts';
import { Metrics } from '../server/metrics.ts';
import { AccountsDb } from '../workers/meter/store.ts';
import { describeMachine, exitOnError, fmt, log, machineInfo, percentile, REPO_ROOT, table, wholeArg, writeResult } from './lib/common.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    callers: { type: 'string', default: '1,8,32,128' },
  },
});
const durationS = wholeArg('duration', opts.duration, 1);
const callerCounts = opts.callers.split(',').map((c) => wholeArg('callers', c, 1));

type Kind = 'peek' | 'charge' | 'reserve+commit';

interface Result {
  readonly scenario: Kind;
  readonly callers: number;
  readonly operations_per_s: number;
  readonly charges_per_s: number;
  readonly commits_per_s: number;
  readonly requests_per_commit: number | null;
  readonly commit_ms_avg: number | null;
  readonly wait_p50_ms: number | null;
  readonly wait_p99_ms: number | null;
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

async function scenario(kind: Kind, callers: number): Promise<Result> {
  const ledgerDir = await mkdtemp(path.join(os.tmpdir(), 'fe-bench-meter-'));
  const { logger, flush } = createLogger('warn');
  try {
    // Keys spread over organizations (as many callers as there are keys, up to 16 orgs), on the
    // capped plan, with a cap no run reaches: every decision is a real cap check.
    const accounts = AccountsDb.open(ledgerDir);
    accounts.setPlan({ name: 'bench-capped', monthlyRecordLimit: 1_000_000_000, excludedCategories: [], attributionRequired: true, requestsPerMinute: 1_000_000_000 });
    const keyIds: string[] = [];
    for (let i = 0; i < callers; i++) keyIds.push(accounts.createKey(`org ${i % 16}`, 'bench@localhost', 'bench-capped').keyId);
    accounts.close();

    const config = loadConfig({ DATA_DIR: ledgerDir, LEDGER_DIR: ledgerDir, LOG_LEVEL: 'warn' });
    const metrics = new Metrics({ queueDepth: () => 0, snapshotId: () => null, snapshotEvents: () => 0, cacheBytes: () => 0, inFlight: () => 0, snapshotPending: () => null });
    const meter = await Meter.start(config, logger, metrics);
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
    const started = performance.now();
    setTimeout(() => (running = false), durationS * 1000);
    await Promise.all(
      keyIds.map(async (k) => {
        while (running) await one(k);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const commits = (await counter(metrics, 'meter_commits_total')) - commits0;
    const batches = await histogram(metrics, 'meter_batch_requests');
    const commitS = await histogram(metrics, 'meter_commit_seconds');
    await meter.close();
    waits.sort((a, b) => a - b);
    const chargeBatches = commitS.count - commitS0.count;
    return {
      scenario: kind,
      callers,
      operations_per_s: Math.round(operations / seconds),
      charges_per_s: Math.round(charges / seconds),
      commits_per_s: Math.round(commits / seconds),
      requests_per_commit: chargeBatches > 0 ? +((batches.sum - batches0.sum) / (batches.count - batches0.count)).toFixed(1) : null,
      commit_ms_avg: chargeBatches > 0 ? +(((commitS.sum - commitS0.sum) / chargeBatches) * 1000).toFixed(3) : null,
      wait_p50_ms: percentile(waits, 50),
      wait_p99_ms: percentile(waits, 99),
    };
  } finally {
    flush();
    await rm(ledgerDir, { recursive: true, force: true });
  }
}

const machine = machineInfo();
log(describeMachine(machine));
const results: Result[] = [];
for (const callers of callerCounts) {
  for (const kind of ['peek', 'charge', 'reserve+commit'] as const) {
    log(`${kind}, ${callers} callers, ${durationS} s`);
    results.push(await scenario(kind, callers));
  }
}
const first = callerCounts[0] ?? 1;
log(`charge, ${first} callers again (noise floor)`);
const again = await scenario('charge', first);
const firstCharge = results.find((r) => r.scenario === 'charge' && r.callers === first);
const noise = firstCharge ? +Math.abs(1 - again.charges_per_s / firstCharge.charges_per_s).toFixed(3) : null;

console.log(`\n${describeMachine(machine)}; ledger on ${os.tmpdir()} (SQLite WAL, synchronous=FULL), ${durationS} s per run`);
console.log(
  table(
    ['scenario', 'callers', 'ops/s', 'charges/s', 'vs peek', 'fsyncs/s', 'reqs/commit', 'commit ms', 'wait p50 ms', 'wait p99 ms'],
    results.map((r) => {
      const peek = results.find((p) => p.scenario === 'peek' && p.callers === r.callers);
      return [
        r.scenario,
        String(r.callers),
        String(r.operations_per_s),
        String(r.charges_per_s),
        peek && r.scenario !== 'peek' ? fmt(r.operations_per_s / peek.operations_per_s, 3) : '-',
        String(r.commits_per_s),
        fmt(r.requests_per_commit, 1),
        fmt(r.commit_ms_avg, 3),
        fmt(r.wait_p50_ms, 3),
        fmt(r.wait_p99_ms, 3),
      ];
    }),
  ),
);
console.log(`noise floor (charge, ${first} callers, first vs last run): ${fmt(noise === null ? null : noise * 100, 1)}%`);
const out = await writeResult('meter', { kind: 'meter', at: new Date().toISOString(), machine, settings: { duration_s: durationS, callers: callerCounts }, results, noise_floor: noise, rerun: again });
console.log(`written ${path.relative(REPO_ROOT, out)}`);
