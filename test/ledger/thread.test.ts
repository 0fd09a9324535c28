// The metering thread against a model of the quota, written here: random rounds of reservations,
// settled charges, commits and releases (each round sent in one turn, as concurrent requests are)
// must get exactly the grants the model computes, never exceed the cap, and leave in the ledger
// (usage.sqlite, or usage_days of the PostgreSQL ledger) what the model charged, across a restart of
// the thread. Time-budgeted, like the other fuzzing. Run once per backend: the embedded thread
// (thread.ts) and the PostgreSQL one (pg-thread.ts), the latter skipped where no server answers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { loadConfig, type Config } from '../../core/config.ts';
import { createLogger } from '../../server/log.ts';
import { Meter } from '../../server/meter.ts';
import { keyHash } from '../../core/keys.ts';
import { ledgerBackends, testLedger, type TestLedger } from '../ledger.ts';

const BUDGET_MS = 6_000;
const CAP = 30;
const AT_MS = Date.parse('2026-11-21T09:00:00-08:00');
const { logger } = createLogger('silent');

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

for (const backend of await ledgerBackends()) {
  describe(`on ${backend.name}`, { skip: backend.skip }, () => {
    let ledger: TestLedger;
    let config: Config;
    let meter: Meter;

    before(async () => {
      ledger = await testLedger(backend, 'meter_model');
      config = loadConfig({ DATA_DIR: ledger.dir, ...ledger.env });
      await ledger.setPlan({ name: 'model', monthlyRecordLimit: CAP, excludedCategories: [], attributionRequired: false, requestsPerMinute: 60 });
      meter = await Meter.start(config, logger);
    });

    after(async () => {
      if (meter) await closeWithin(meter, 10_000);
      await ledger?.drop();
    });

    // tryReserve: the ledger's grants themselves. The line a request waits in when others hold its
    // records (Meter.reserve) is tested over HTTP in test/server/quota.test.ts.
    test('grants, charges and holds follow the model exactly; the cap is never exceeded; charges survive a restart', async (t) => {
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 }), async (rounds) => {
          // A fresh organization (two keys sharing its quota) per run: the model starts at zero.
          const org = `Model org ${runs++}`;
          const made = [await ledger.createKey(org, 'model@test.example', 'model'), await ledger.createKey(org, 'model@test.example', 'model')];
          // As a request does: the key is looked up by its hash first (a key made a moment ago elsewhere, here by the test).
          for (const k of made) {
            const found = await meter.lookup(keyHash(k.key));
            assert.ok(found !== null && !('ok' in found), `lookup of a new key: ${JSON.stringify(found)}`);
            assert.equal(found.keyId, k.keyId);
          }
          const keys = made.map((k) => k.keyId);
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
                  meter.tryReserve(keys[op.key]!, op.want, op.settle, AT_MS).then((r) => {
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
          const [usage, peek] = await Promise.all([meter.usage(keys[0]!, AT_MS), meter.peek(keys[1]!, AT_MS)]);
          assert.ok(usage.ok, JSON.stringify(usage));
          assert.equal(usage.usage.records.used, m.used);
          assert.equal(usage.usage.records.remaining, CAP - m.used);
          // The quota itself (holds included) is whole again: no release was lost.
          assert.ok(peek.ok, JSON.stringify(peek));
          assert.equal(peek.quota.remaining, CAP - m.used, 'every hold was given back');
        }),
        { numRuns: 1_000, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false },
      );
      assert.ok(runs >= 5, `only ${runs} runs fit the budget`);

      // The ledger holds every charge the model made, and a new thread reads the same totals.
      await meter.close();
      const rows = [...(await ledger.usageByOrg())];
      meter = await Meter.start(config, logger);
      const keyRows = await ledger.keys();
      for (const [orgId, { records }] of rows) {
        const key = keyRows.find((k) => k.org_id === orgId);
        assert.ok(key);
        const after = await meter.usage(key.id, AT_MS);
        assert.ok(after.ok, JSON.stringify(after));
        assert.equal(after.usage.records.used, records, 'the restarted thread reads what the ledger holds');
        assert.ok(records <= CAP, 'no organization was ever charged past its cap');
      }
      assert.ok(rows.length > 0, 'something was charged');
      t.diagnostic(`${runs} runs, ${rows.length} organizations charged`);
    });

    // A started thread is ready: the server listens (and /readyz says 200) as soon as Meter.start
    // resolves, so the first request after it must be served, not answered `unavailable`.
    test('the first request right after Meter.start is served', async () => {
      const { keyId } = await ledger.provisionKey({ plan: 'model' });
      await closeWithin(meter, 10_000);
      try {
        for (let i = 0; i < 3; i++) {
          const fresh = await Meter.start(config, logger);
          const r = await fresh.peek(keyId, AT_MS);
          const closed = await closeWithin(fresh, 10_000);
          assert.ok(r.ok, `start #${i + 1}, the first request: ${JSON.stringify(r)}`);
          assert.equal(r.quota.remaining, CAP);
          assert.ok(closed, `start #${i + 1}: close() did not finish within 10 s`);
        }
      } finally {
        meter = await Meter.start(config, logger);
      }
    });

    // A server stopped right after it started (SIGTERM during start-up) must still exit.
    test('close() right after Meter.start ends the thread', async () => {
      await closeWithin(meter, 10_000);
      try {
        for (let i = 0; i < 3; i++) {
          const fresh = await Meter.start(config, logger);
          assert.ok(await closeWithin(fresh, 10_000), `start #${i + 1}: close() right after start did not finish within 10 s`);
        }
      } finally {
        meter = await Meter.start(config, logger);
      }
    });
  });
}

/** meter.close(), or false if it has not finished within `ms` (the thread is then terminated, so the file can end). */
async function closeWithin(m: Meter, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([m.close().then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  // The Meter keeps its worker private; a hung one is ended here rather than left to hold the process open.
  if (!closed) await (m as unknown as { readonly worker: Worker }).worker.terminate();
  return closed;
}
