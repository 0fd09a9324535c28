// The metering decision alone (ledger/decide.ts), which both ledgers' threads call: a table
// of the cases each rule names, and random sequences of operations against a model of the quota
// written here, applying each decision's effects as a thread does. The threads themselves are
// tested against the same kind of model, over the real ledgers, in thread.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decide, type Effects, type MeterView } from '../../ledger/decide.ts';
import { periodAt } from '../../ledger/period.ts';

const AT_MS = Date.parse('2026-11-21T09:00:00-08:00');
const view = (used: number, held: number, limit: number | null = 30): MeterView => ({ orgId: 'o', plan: 'p', limit, used, held, atMs: AT_MS });
const effects = (e: Effects): Effects => ({ charge: e.charge, hold: e.hold, free: e.free });

describe('decide', () => {
  test('reserve: settled when all is granted, held when cut or not settled, nothing opened when nothing is left', () => {
    const cases: { name: string; v: MeterView; want: number; settle: boolean; granted: number; e: Effects; remaining: number | null }[] = [
      { name: 'settle, all granted: charged at once', v: view(10, 5), want: 7, settle: true, granted: 7, e: { charge: 7, hold: 0, free: 0 }, remaining: 8 },
      { name: 'settle, cut: held, not charged', v: view(10, 15), want: 7, settle: true, granted: 5, e: { charge: null, hold: 5, free: 0 }, remaining: 0 },
      { name: 'no settle: held', v: view(10, 5), want: 7, settle: false, granted: 7, e: { charge: null, hold: 7, free: 0 }, remaining: 8 },
      { name: 'nothing left: nothing written', v: view(20, 10), want: 7, settle: true, granted: 0, e: { charge: null, hold: 0, free: 0 }, remaining: 0 },
      {
        name: 'overdrawn view: remaining is 0, not negative',
        v: view(31, 2),
        want: 1,
        settle: false,
        granted: 0,
        e: { charge: null, hold: 0, free: 0 },
        remaining: 0,
      },
      {
        name: 'want 0, settle: a charged response of 0 records',
        v: view(30, 0),
        want: 0,
        settle: true,
        granted: 0,
        e: { charge: 0, hold: 0, free: 0 },
        remaining: 0,
      },
      {
        name: 'no cap: all granted',
        v: view(1e9, 1e9, null),
        want: 500,
        settle: false,
        granted: 500,
        e: { charge: null, hold: 500, free: 0 },
        remaining: null,
      },
    ];
    for (const c of cases) {
      const d = decide({ op: 'reserve', want: c.want, settle: c.settle }, c.v);
      assert.equal(d.granted, c.granted, c.name);
      assert.deepEqual(effects(d), c.e, c.name);
      assert.equal(d.quota.remaining, c.remaining, c.name);
    }
  });

  test('commit charges what was delivered, at most what was held, and gives the hold back; release only gives it back', () => {
    for (const [delivered, charge] of [
      [4, 4],
      [9, 6],
      [-3, 0],
      [0, 0],
    ] as const) {
      const d = decide({ op: 'commit', amount: 6, delivered }, view(10, 8));
      assert.deepEqual(effects(d), { charge, hold: 0, free: 6 }, `delivered ${delivered} of 6`);
      assert.equal(d.quota.used, 10 + charge);
      assert.equal(d.quota.remaining, 30 - (10 + charge) - 2);
    }
    assert.deepEqual(effects(decide({ op: 'release', amount: 6 })), { charge: null, hold: 0, free: 6 });
  });

  test('peek writes nothing and tells the quota of the period holding atMs', () => {
    const d = decide({ op: 'peek' }, view(12, 3));
    assert.deepEqual(effects(d), { charge: null, hold: 0, free: 0 });
    const p = periodAt(AT_MS);
    assert.deepEqual(d.quota, { orgId: 'o', plan: 'p', limit: 30, used: 12, remaining: 15, periodStartMs: p.startMs, resetMs: p.resetMs });
  });

  type Op =
    | { readonly kind: 'reserve'; readonly want: number; readonly settle: boolean }
    | { readonly kind: 'commit' | 'release'; readonly pick: number; readonly share: number };

  test('random sequences: grants follow the model, the cap is never exceeded, every quota answered is the state after', () => {
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('reserve' as const), want: fc.nat(25), settle: fc.boolean() }),
      fc.record({ kind: fc.constantFrom('commit' as const, 'release' as const), pick: fc.nat(), share: fc.double({ min: -0.5, max: 1.5, noNaN: true }) }),
    );
    fc.assert(
      fc.property(fc.option(fc.nat(60), { nil: null }), fc.array(opArb, { maxLength: 40 }), (limit, ops) => {
        // The state a thread keeps, changed only by applying decisions' effects.
        const s = { used: 0, held: 0, open: [] as number[] };
        const apply = (e: Effects): void => {
          s.used += e.charge ?? 0;
          s.held += e.hold - e.free;
        };
        for (const op of ops) {
          const v = view(s.used, s.held, limit);
          if (op.kind === 'reserve') {
            const left = limit === null ? Infinity : limit - s.used - s.held;
            const d = decide({ op: 'reserve', want: op.want, settle: op.settle }, v);
            assert.equal(d.granted, Math.min(op.want, left));
            if (d.hold > 0) s.open.push(d.hold);
            assert.equal(d.charge === null ? 0 : d.charge, op.settle && d.granted === op.want ? op.want : 0);
            apply(d);
            assert.equal(d.quota.used, s.used);
            assert.equal(d.quota.remaining, limit === null ? null : limit - s.used - s.held);
          } else if (s.open.length > 0) {
            const [amount] = s.open.splice(op.pick % s.open.length, 1) as [number];
            if (op.kind === 'release') apply(decide({ op: 'release', amount }));
            else {
              const delivered = Math.floor(amount * op.share);
              const d = decide({ op: 'commit', amount, delivered }, v);
              assert.equal(d.charge, Math.min(Math.max(0, delivered), amount));
              apply(d);
              assert.equal(d.quota.remaining, limit === null ? null : limit - s.used - s.held);
            }
          }
          assert.equal(
            s.held,
            s.open.reduce((a, b) => a + b, 0),
            'what is held is exactly the open holds',
          );
          if (limit !== null) assert.ok(s.used + s.held <= limit, 'the cap is never exceeded');
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
