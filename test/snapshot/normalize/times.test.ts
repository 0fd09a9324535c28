import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { eventSpan, isoLocal, parseUpstreamTime } from '../../../snapshot/normalize/times.ts';
import { ZONE } from '../../../core/zone.ts';

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

describe('parseUpstreamTime', () => {
  test('fast path agrees with luxon on ISO local, ISO with offset and US forms (incl. DST days)', () => {
    const arb = fc.record({
      y: fc.integer({ min: 2024, max: 2028 }),
      mo: fc.integer({ min: 1, max: 12 }),
      d: fc.integer({ min: 1, max: 31 }),
      h: fc.integer({ min: 0, max: 23 }),
      mi: fc.integer({ min: 0, max: 59 }),
      off: fc.constantFrom('Z', '-08:00', '-07:00', '+05:30', '+00:00'),
    });
    fc.assert(
      fc.property(arb, ({ y, mo, d, h, mi, off }) => {
        const local = `${y}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}`;
        const oracleLocal = DateTime.fromISO(local, { zone: ZONE });
        const got = parseUpstreamTime(local);
        if (!oracleLocal.isValid) assert.equal(got?.at.isValid ?? false, false);
        else assert.equal(got?.at.toMillis(), oracleLocal.toMillis(), local);

        const withOffset = `${local}:00${off}`;
        const oracleAbs = DateTime.fromISO(withOffset, { setZone: true });
        const abs = parseUpstreamTime(withOffset);
        if (oracleAbs.isValid) assert.equal(abs?.at.toMillis(), oracleAbs.toMillis(), withOffset);

        const h12 = h % 12 === 0 ? 12 : h % 12;
        const us = `${mo}/${d}/${y} ${h12}:${pad(mi)} ${h < 12 ? 'AM' : 'PM'}`;
        const oracleUs = DateTime.fromFormat(us, 'M/d/yyyy h:mm a', { zone: ZONE, locale: 'en-US' });
        if (oracleUs.isValid) assert.equal(parseUpstreamTime(us)?.at.toMillis(), oracleUs.toMillis(), us);
      }),
      { numRuns: 500 },
    );
  });

  test('a DST gap time moves forward; an ambiguous time is a valid instant', () => {
    // 2026-03-08 02:30 does not exist in Los Angeles; 2026-11-01 01:30 happens twice.
    assert.equal(isoLocal(parseUpstreamTime('2026-03-08T02:30')!.at), '2026-03-08T03:30:00-07:00');
    assert.match(isoLocal(parseUpstreamTime('2026-11-01T01:30')!.at), /^2026-11-01T01:30:00-0[78]:00$/);
  });

  test('RFC 2822, date-only and long US forms', () => {
    assert.equal(isoLocal(parseUpstreamTime('Sat, 21 Nov 2026 18:00:00 GMT')!.at), '2026-11-21T10:00:00-08:00');
    assert.deepEqual([parseUpstreamTime('2026-11-21')!.dateOnly, isoLocal(parseUpstreamTime('2026-11-21')!.at)], [true, '2026-11-21T00:00:00-08:00']);
    assert.equal(isoLocal(parseUpstreamTime('November 21, 2026 10:30 a.m.')!.at), '2026-11-21T10:30:00-08:00');
    assert.equal(parseUpstreamTime('next Tuesday'), null);
    assert.equal(parseUpstreamTime('2026-02-30T10:00'), null);
  });
});

describe('eventSpan', () => {
  const t = (s: string) => parseUpstreamTime(s)!;
  test('all-day runs from local midnight to 23:59:59 of the last day; iCal DTEND dates are exclusive', () => {
    const one = eventSpan(t('2026-11-21'), t('2026-11-22'), true);
    assert.equal(isoLocal(one.start), '2026-11-21T00:00:00-08:00');
    assert.equal(isoLocal(one.end!), '2026-11-21T23:59:59-08:00');
    const multi = eventSpan(t('2026-11-21'), t('2026-11-23'), false);
    assert.equal(isoLocal(multi.end!), '2026-11-23T23:59:59-08:00');
  });
  test('an all-day span across the DST change keeps each day local', () => {
    const s = eventSpan(t('2026-10-31'), t('2026-11-02'), true);
    assert.equal(isoLocal(s.start), '2026-10-31T00:00:00-07:00');
    assert.equal(isoLocal(s.end!), '2026-11-01T23:59:59-08:00');
  });
  test('an end before the start is dropped, not guessed', () => {
    assert.equal(eventSpan(t('2026-11-21T10:00'), t('2026-11-21T09:00')).end, null);
  });
  test('all-day: a date without a time, or whole days written as times; anything else is timed', () => {
    // [start, end, exclusive DATE end, all-day, start as served, end as served]
    const cases: [string, string | null, boolean, boolean, string, string | null][] = [
      ['2026-11-21', null, false, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      ['2026-11-21', '2026-11-22', true, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      ['2026-11-21', '2026-11-21T15:00', false, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      // Midnight with no end, or ending as it starts: a date a calendar wrote as a time (WordPress, "00:00-00:00").
      ['2026-11-21T00:00', null, false, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      ['2026-11-21 00:00:00', '2026-11-21 00:00:00', false, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      // Midnight to the day's last half hour, or to a later midnight: whole days.
      ['2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00', false, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      ['2026-11-21T00:00', '2026-11-21T23:30', false, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      ['2026-11-21T00:00', '2026-11-22T00:00', false, true, '2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00'],
      ['2026-11-21T00:00', '2026-11-24T00:00', false, true, '2026-11-21T00:00:00-08:00', '2026-11-23T23:59:59-08:00'],
      ['2026-10-31T00:00', '2026-11-01T23:59', false, true, '2026-10-31T00:00:00-07:00', '2026-11-01T23:59:59-08:00'],
      // Timed: a real time of day, a midnight start that ends at a time, a UTC midnight (16:00 in Los Angeles).
      ['2026-11-21T10:00', '2026-11-21T11:00', false, false, '2026-11-21T10:00:00-08:00', '2026-11-21T11:00:00-08:00'],
      ['2026-11-21T10:00', null, false, false, '2026-11-21T10:00:00-08:00', null],
      ['2026-11-21T00:00', '2026-11-21T02:00', false, false, '2026-11-21T00:00:00-08:00', '2026-11-21T02:00:00-08:00'],
      ['2026-11-21T00:00', '2026-11-21T23:00', false, false, '2026-11-21T00:00:00-08:00', '2026-11-21T23:00:00-08:00'],
      ['2026-11-22T00:00:00Z', null, false, false, '2026-11-21T16:00:00-08:00', null],
      ['2026-11-21T00:30', null, false, false, '2026-11-21T00:30:00-08:00', null],
    ];
    for (const [start, end, exclusive, allDay, s, e] of cases) {
      const span = eventSpan(t(start), end === null ? null : t(end), exclusive);
      const what = `${start} → ${end ?? 'no end'}`;
      assert.equal(span.allDay, allDay, what);
      assert.equal(isoLocal(span.start), s, what);
      assert.equal(span.end && isoLocal(span.end), e, what);
    }
  });
});
