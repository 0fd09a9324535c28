// The metering thread against a model of the quota, written here: random rounds of reservations,
// settled charges, commits and releases (each round sent in one turn, as concurrent requests are)
// must get exactly the grants the model computes, never exceed the cap, and leave in usage.sqlite
// what the model charged, across a restart of the thread. Time-budgeted, like the other fuzzing.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { loadConfig, type Config } from '../../../server/config.ts';
import { createLogger } from '../../../server/log.ts';
import { Meter } from '../../../server/meter.ts';
import { AccountsDb } from '../../../workers/meter/store.ts';

const BUDGET_MS = 6_000;
const CAP = 30;
const AT_MS = Date.parse('2026-11-21T09:00:00-08:00');

let dir: string;
let config: Config;
let accounts: AccountsDb;
let meter: Meter;
const { logger } = createLogger('silent');

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-meter-model-'));
  config = loadConfig({ DATA_DIR: dir, LEDGER_DIR: dir });
  accounts = AccountsDb.open(dir);
  accounts.setPlan({ name: 'model', monthlyRecordLimit: CAP, excludedCategories: [], attributionRequired: false, requestsPerMinute: 60 });
  meter = await Meter.start(config, logger);
});

after(async () => {
  await meter?.close();
  accounts?.close();
  await rm(dir, { recursive: true, force: true });
});

type Op =
  | { readonly kind: 'reserve'; readonly key: number; readonly want: number; readonly settle: boolean }
  | { readonly kind: 'commit'; readonly pick: number; readonly deliveredShare: number }
  | { readonly kind: 'release'; readonly pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('reserve' as const), key: fc.nat(1), want: fc.nat(25), settle: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('commit' as const), pick: fc.nat(), deliveredShare: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
);

/** What the quota must be: the records charged, and those held by open reservations. */
interface Model {
  used: number;
  held: number;
  /** Open reservations: the thread's id and the amount held. */
  open: { id: number; amount: number }[];
}

test('grants, charges and holds follow the model exactly; the cap is never exceeded; charges survive a restart', async () => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 }), async (rounds) => {
      // A fresh organization (two keys sharing its quota) per run: the model starts at zero.
      const org = `Model org ${runs++}`;
      const keys = [accounts.createKey(org, 'model@test.example', 'model').keyId, accounts.createKey(org, 'model@test.example', 'model').keyId];
      const m: Model = { used: 0, held: 0, open: [] };
      for (const round of rounds) {
        // One round = requests of one turn of the event loop: sent together, decided in order.
        const calls: Promise<unknown>[] = [];
        for (const op of round) {
          if (op.kind === 'reserve') {
            const remaining = CAP - m.used - m.held;
            const granted = Math.min(op.want, remaining);
            const settled = op.settle && granted === op.want;
            if (settled) m.used += granted;
            const holds = !settled && granted > 0;
            if (holds) m.held += granted;
            const remainingAfter = CAP - m.used - m.held;
            calls.push(
              meter.reserve(keys[op.key]!, op.want, op.settle, AT_MS).then((r) => {
                assert.ok(r.ok, JSON.stringify(r));
                assert.equal(r.granted, granted, `reserve ${op.want} (settle ${op.settle}) with ${remaining} left`);
                assert.equal(r.reservation === null, !holds, 'a reservation exactly when records are held');
                assert.equal(r.quota.remaining, remainingAfter);
                if (r.reservation !== null) m.open.push({ id: r.reservation, amount: granted });
              }),
            );
          } else if (m.open.length > 0) {
            const [res] = m.open.splice(op.pick % m.open.length, 1);
            if (!res) continue;
            m.held -= res.amount;
            if (op.kind === 'commit') {
              const delivered = Math.floor(res.amount * op.deliveredShare);
              m.used += delivered;
              const remainingAfter = CAP - m.used - m.held;
              calls.push(
                meter.commit(res.id, delivered, AT_MS).then((r) => {
                  assert.ok(r.ok, JSON.stringify(r));
                  assert.equal(r.quota.remaining, remainingAfter, 'remaining after a commit');
                }),
              );
            } else meter.release(res.id);
          }
          assert.ok(m.used + m.held <= CAP, 'the model itself never overdraws');
        }
        // Reservation ids arrive in the replies: the next round may commit or release them.
        await Promise.all(calls);
      }
      // Whatever is still held is released, as the server does when a request ends.
      for (const res of m.open.splice(0)) meter.release(res.id);
      m.held = 0;
      const usage = await meter.usage(keys[0]!, AT_MS);
      assert.ok(usage.ok, JSON.stringify(usage));
      assert.equal(usage.usage.records.used, m.used);
      assert.equal(usage.usage.records.remaining, CAP - m.used);
    }),
    { numRuns: 1_000, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false },
  );
  assert.ok(runs >= 5, `only ${runs} runs fit the budget`);

  // The ledger file holds every charge the model made, and a new thread reads the same totals.
  await meter.close();
  const file = new Database(path.join(dir, 'usage.sqlite'), { readonly: true });
  const rows = file.prepare('SELECT org_id, sum(records) AS records FROM usage_days GROUP BY org_id').all() as { org_id: string; records: number }[];
  file.close();
  meter = await Meter.start(config, logger);
  for (const row of rows) {
    const key = accounts.keys().find((k) => k.org_id === row.org_id);
    assert.ok(key);
    const after = await meter.usage(key.id, AT_MS);
    assert.ok(after.ok);
    assert.equal(after.usage.records.used, row.records, 'the restarted thread reads what the file holds');
    assert.ok(row.records <= CAP, 'no organization was ever charged past its cap');
  }
  assert.ok(rows.length > 0, 'something was charged');
});
