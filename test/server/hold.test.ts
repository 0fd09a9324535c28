// A route's Hold (server/hold.ts) over a real metering thread, on both ledgers: commit and release
// each settle once and say the quota to tell, release after commit (a route's `finally`) changes
// nothing, and refusals arrive as the client's problem. The routes' use of it is tested over HTTP
// in quota.test.ts and export.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../core/config.ts';
import { ApiError } from '../../server/errors.ts';
import { holdRecords } from '../../server/hold.ts';
import { createLogger } from '../../server/log.ts';
import { Meter } from '../../server/meter.ts';
import { keyHash } from '../../core/keys.ts';
import { ledgerBackends, testLedger, type TestLedger } from '../ledger.ts';

const CAP = 10;
const AT_MS = Date.parse('2026-11-21T09:00:00-08:00');
const PLAN = { name: 'hold_test', monthlyRecordLimit: CAP, excludedCategories: [], attributionRequired: false, requestsPerMinute: 60 };
const { logger } = createLogger('silent');

for (const backend of await ledgerBackends()) {
  describe(`on ${backend.name}`, { skip: backend.skip }, () => {
    let ledger: TestLedger;
    let meter: Meter;

    before(async () => {
      ledger = await testLedger(backend, 'hold');
      await ledger.setPlan(PLAN);
      meter = await Meter.start(loadConfig({ DATA_DIR: ledger.dir, ...ledger.env }), logger);
    });

    after(async () => {
      await meter?.close();
      await ledger?.drop();
    });

    /** A new organization on the capped plan, and what its quota is now (holds counted). */
    async function freshKey(): Promise<{ keyId: string; remaining: () => Promise<number | null> }> {
      const { key, keyId } = await ledger.provisionKey({ plan: PLAN.name });
      // As a request does: a key made a moment ago elsewhere (here, by the test) is looked up first.
      assert.ok(await meter.lookup(keyHash(key)));
      const remaining = async (): Promise<number | null> => {
        const p = await meter.peek(keyId, AT_MS);
        assert.ok(p.ok, JSON.stringify(p));
        return p.quota.remaining;
      };
      return { keyId, remaining };
    }

    test('commit charges what was delivered and gives the rest back; release after it changes nothing', async () => {
      const k = await freshKey();
      const hold = await holdRecords(meter, k.keyId, 6, { settle: false, atMs: AT_MS });
      assert.equal(hold.granted, 6);
      assert.equal(await k.remaining(), 4, 'held');
      const committed = await hold.commit(4);
      assert.equal(committed.used, 4);
      assert.equal(committed.remaining, 6);
      assert.deepEqual(await hold.commit(4), committed, 'a second commit is the first');
      assert.deepEqual(hold.release(), committed, "the route's finally: nothing more given back");
      assert.equal(await k.remaining(), 6);
    });

    test('release gives all of it back, once, and says the quota with it; commit after release is a bug', async () => {
      const k = await freshKey();
      const other = await holdRecords(meter, k.keyId, 3, { settle: false, atMs: AT_MS });
      const hold = await holdRecords(meter, k.keyId, 5, { settle: false, atMs: AT_MS });
      assert.equal(hold.granted, 5);
      const told = hold.release();
      assert.equal(told.remaining, 7, 'what the ledger said at the grant (2), plus the 5 given back');
      assert.deepEqual(hold.release(), told);
      assert.equal(await k.remaining(), 7, 'given back exactly once');
      assert.throws(() => hold.commit(5), /after its release/);
      other.release();
      assert.equal(await k.remaining(), CAP);
    });

    test('settle: all granted is charged at once, and commit or release only tell the quota', async () => {
      const k = await freshKey();
      const hold = await holdRecords(meter, k.keyId, 3, { settle: true, atMs: AT_MS });
      assert.equal(hold.granted, 3);
      assert.equal((await hold.commit(0)).used, 3, 'not charged again');
      assert.equal(hold.release().remaining, CAP - 3, 'nothing to give back');
      const head = await holdRecords(meter, k.keyId, 3, { settle: true, atMs: AT_MS });
      assert.equal(head.release().remaining, CAP - 6, 'released at once, as the event route does: charged all the same');
      assert.equal(await k.remaining(), CAP - 6);
    });

    test('nothing left is 429 quota_exhausted, an unknown key 401: thrown as the client gets them', async () => {
      const k = await freshKey();
      await (await holdRecords(meter, k.keyId, CAP, { settle: true, atMs: AT_MS })).commit(CAP);
      await assert.rejects(holdRecords(meter, k.keyId, 1, { settle: true, atMs: AT_MS }), (e) => e instanceof ApiError && e.code === 'quota_exhausted');
      await assert.rejects(holdRecords(meter, 'no-such-key', 1, { settle: true, atMs: AT_MS }), (e) => e instanceof ApiError && e.code === 'invalid_api_key');
    });
  });
}
