// Times of day as real feeds write them: MissingMaps' time_string column and Trumba's RSS blurbs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DateTime } from 'luxon';
import { atClock, parseClockRange } from '../../../snapshot/parse/clock.ts';
import { ZONE } from '../../../core/zone.ts';

const hm = (h: number, m = 0): number => h * 60 + m;

describe('parseClockRange', () => {
  test('12-hour ranges with am/pm on both ends (missingmaps: "6pm-9pm", "11am-1:30pm", "5:30pm-8pm")', () => {
    assert.deepEqual(parseClockRange('6pm-9pm'), { start: hm(18), end: hm(21) });
    assert.deepEqual(parseClockRange('11am-1:30pm'), { start: hm(11), end: hm(13, 30) });
    assert.deepEqual(parseClockRange('5:30pm-8pm'), { start: hm(17, 30), end: hm(20) });
  });

  test('24-hour ranges, with or without a leading zero or a colon (missingmaps: "9:30-16:30", "19:00-22:00", "1700-2100", "14:30 - 20:00")', () => {
    assert.deepEqual(parseClockRange('9:30-16:30'), { start: hm(9, 30), end: hm(16, 30) });
    assert.deepEqual(parseClockRange('19:00-22:00'), { start: hm(19), end: hm(22) });
    assert.deepEqual(parseClockRange('1700-2100'), { start: hm(17), end: hm(21) });
    assert.deepEqual(parseClockRange('14:30 - 20:00'), { start: hm(14, 30), end: hm(20) });
  });

  test('Trumba shares the end\'s meridiem: "6 – 8:30pm", "12 – 7pm", "7:30 – 9am", "9 – 10am"', () => {
    assert.deepEqual(parseClockRange('6\u00a0–\u00a08:30pm'), { start: hm(18), end: hm(20, 30) });
    assert.deepEqual(parseClockRange('12 – 7pm'), { start: hm(12), end: hm(19) });
    assert.deepEqual(parseClockRange('7:30 – 9am'), { start: hm(7, 30), end: hm(9) });
    assert.deepEqual(parseClockRange('9 – 10am'), { start: hm(9), end: hm(10) });
    // Shared "pm" would start after the end: the start is the morning.
    assert.deepEqual(parseClockRange('11 – 1pm'), { start: hm(11), end: hm(13) });
  });

  test('a meridiem-less 12-hour end before its start is the afternoon (missingmaps: "10:00-4:00", "8:30-5:00", "12:00-1:30"); the start never moves', () => {
    assert.deepEqual(parseClockRange('10:00-4:00'), { start: hm(10), end: hm(16) });
    assert.deepEqual(parseClockRange('8:30-5:00'), { start: hm(8, 30), end: hm(17) });
    assert.deepEqual(parseClockRange('12:00-1:30'), { start: hm(12), end: hm(13, 30) });
    // "8:00-8:00" says no length: a start and no end rather than a guessed 12 hours.
    assert.deepEqual(parseClockRange('8:00-8:00'), { start: hm(8), end: null });
  });

  test('single times (missingmaps: "7pm", "17:00", "10:00:00 AM", "6pm start"; Trumba: "4:30pm")', () => {
    assert.deepEqual(parseClockRange('7pm'), { start: hm(19), end: null });
    assert.deepEqual(parseClockRange('17:00'), { start: hm(17), end: null });
    assert.deepEqual(parseClockRange('10:00:00 AM'), { start: hm(10), end: null });
    assert.deepEqual(parseClockRange('6pm start'), { start: hm(18), end: null });
    assert.deepEqual(parseClockRange('4:30pm'), { start: hm(16, 30), end: null });
  });

  test('both ends with am/pm and an earlier end: past midnight', () => {
    assert.deepEqual(parseClockRange('9pm-1am'), { start: hm(21), end: hm(25) });
  });

  test('what is not a time reads as nothing (missingmaps: "TBD", "18:00 BRT"; out of range)', () => {
    for (const s of ['TBD', '18:00 BRT', '', '25:00', '13pm', '9:75', '1-2-3', 'noon']) assert.equal(parseClockRange(s), null, s);
  });

  test('adversarial input is read in linear time', () => {
    const t = performance.now();
    parseClockRange(`${'1'.repeat(50_000)}-${'1:'.repeat(50_000)}`);
    assert.ok(performance.now() - t < 200);
  });
});

describe('atClock', () => {
  test('wall-clock minutes of the day, across a DST change and past midnight', () => {
    const day = DateTime.fromISO('2026-03-08', { zone: ZONE });
    assert.equal(atClock(day, hm(18)).toISO(), '2026-03-08T18:00:00.000-07:00');
    assert.equal(atClock(day, hm(25)).toISO(), '2026-03-09T01:00:00.000-07:00');
  });
});
