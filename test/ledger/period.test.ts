// Quota periods are calendar months in America/Los_Angeles: their bounds across the DST changes,
// the instant on each side of a reset, and the ledger's day keys, against instants written out with
// their UTC offsets (an independent statement of the calendar, not the code's arithmetic).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dayAt, daysBetween, isoLocal, periodAt } from '../../ledger/period.ts';

const ms = (iso: string): number => Date.parse(iso);

test('November 2026 runs from 00:00 PDT on the 1st to 00:00 PST on December 1st: 721 hours', () => {
  const p = periodAt(ms('2026-11-21T09:00:00-08:00'));
  assert.equal(p.month, '2026-11');
  assert.equal(p.startMs, ms('2026-11-01T00:00:00-07:00'));
  assert.equal(p.resetMs, ms('2026-12-01T00:00:00-08:00'));
  assert.equal((p.resetMs - p.startMs) / 3_600_000, 30 * 24 + 1);
  assert.deepEqual([p.firstDay, p.lastDay], ['2026-11-01', '2026-11-30']);
});

test('March 2027 loses an hour: 743 hours', () => {
  const p = periodAt(ms('2027-03-15T12:00:00-07:00'));
  assert.equal(p.startMs, ms('2027-03-01T00:00:00-08:00'));
  assert.equal(p.resetMs, ms('2027-04-01T00:00:00-07:00'));
  assert.equal((p.resetMs - p.startMs) / 3_600_000, 31 * 24 - 1);
});

test('the reset instant belongs to the next month; the millisecond before it does not', () => {
  const reset = ms('2026-12-01T00:00:00-08:00');
  assert.equal(periodAt(reset - 1).month, '2026-11');
  assert.equal(periodAt(reset).month, '2026-12');
  // In UTC it is already December 1st eight hours before the Pacific reset.
  assert.equal(periodAt(ms('2026-12-01T07:59:59Z')).month, '2026-11');
  assert.equal(periodAt(ms('2026-12-31T23:00:00-08:00')).resetMs, ms('2027-01-01T00:00:00-08:00'));
});

test('ledger days are Pacific dates, whatever the instant asked before', () => {
  // Alternating days checks that the remembered day is never served for another one.
  const cases: [string, string][] = [
    ['2026-11-21T23:59:59-08:00', '2026-11-21'],
    ['2026-11-22T00:00:00-08:00', '2026-11-22'],
    ['2026-11-21T08:00:00Z', '2026-11-21'],
    ['2026-11-22T07:59:59Z', '2026-11-21'],
    ['2026-11-01T01:30:00-07:00', '2026-11-01'],
    ['2026-11-01T01:30:00-08:00', '2026-11-01'],
    ['2026-10-31T23:59:59-07:00', '2026-10-31'],
  ];
  for (const [iso, day] of cases) assert.equal(dayAt(ms(iso)), day, iso);
  assert.deepEqual(daysBetween('2026-11-28', '2026-12-02'), ['2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']);
  assert.deepEqual(daysBetween('2026-11-01', '2026-11-01'), ['2026-11-01']);
});

test('instants are written with the Pacific offset of their own date', () => {
  assert.equal(isoLocal(ms('2026-11-01T00:00:00-07:00')), '2026-11-01T00:00:00-07:00');
  assert.equal(isoLocal(ms('2026-12-01T08:00:00Z')), '2026-12-01T00:00:00-08:00');
});
