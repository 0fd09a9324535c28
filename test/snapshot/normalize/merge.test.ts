// mergeGroup and all_day: copies of one event from several sources share a start minute, so an
// all-day copy means midnight; the merged record's flag and its end must agree.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mergeGroup, mergeRows } from '../../../snapshot/normalize/merge.ts';
import type { EventRow } from '../../../core/record.ts';

const MIDNIGHT = '2026-12-05T00:00:00-08:00';
const ms = (iso: string): number => Date.parse(iso);

function row(id: string, rank: number, over: Partial<EventRow>): EventRow {
  return {
    id,
    title: 'Holiday Craft Fair',
    description: null,
    summary: null,
    start_datetime: MIDNIGHT,
    end_datetime: null,
    start_ms: ms(MIDNIGHT),
    end_ms: ms(MIDNIGHT),
    venue_key: 'v',
    venue_name: 'Main Library',
    venue_address: '100 Larkin St, San Francisco, CA 94102',
    venue_city: 'San Francisco',
    venue_lat: 37.78,
    venue_lng: -122.42,
    venue_geo_precision: 'venue',
    organizer: null,
    organizer_url: null,
    categories: ['community'],
    tags: [],
    image_url: null,
    is_free: true,
    price_min: null,
    price_max: null,
    price_note: null,
    ticket_url: null,
    source: null,
    destination: 'san-francisco',
    age_min_months: null,
    age_max_months: null,
    is_canceled: false,
    all_day: false,
    city_key: 'san francisco',
    search_text: '',
    source_id: `s${rank}`,
    source_rank: rank,
    ...over,
  };
}

const allDay = (id: string, rank: number, last = '2026-12-05T23:59:59-08:00'): EventRow =>
  row(id, rank, { all_day: true, end_datetime: last, end_ms: ms(last) });

describe('merging copies of an event: all_day', () => {
  test('all-day copies merge all-day, with the primary’s days', () => {
    const m = mergeGroup([allDay('b', 1, '2026-12-06T23:59:59-08:00'), allDay('a', 0)]);
    assert.equal(m.id, 'a');
    assert.equal(m.all_day, true);
    assert.equal(m.end_datetime, '2026-12-05T23:59:59-08:00');
  });

  test('a better-ranked copy at midnight with no end takes an all-day copy’s reading: it says no more than a date', () => {
    const m = mergeGroup([row('a', 0, {}), allDay('b', 1, '2026-12-06T23:59:59-08:00')]);
    assert.equal(m.id, 'a');
    assert.equal(m.all_day, true);
    assert.equal(m.end_datetime, '2026-12-06T23:59:59-08:00');
    assert.equal(m.end_ms, ms('2026-12-06T23:59:59-08:00'));
  });

  test('a timed primary with an end stays timed; an all-day copy’s 23:59:59 never becomes a timed end', () => {
    const timed = mergeGroup([row('a', 0, { end_datetime: '2026-12-05T02:00:00-08:00', end_ms: ms('2026-12-05T02:00:00-08:00') }), allDay('b', 1)]);
    assert.equal(timed.all_day, false);
    assert.equal(timed.end_datetime, '2026-12-05T02:00:00-08:00');
    const primaryAllDay = mergeGroup([allDay('a', 0), row('b', 1, { end_datetime: '2026-12-05T02:00:00-08:00', end_ms: ms('2026-12-05T02:00:00-08:00') })]);
    assert.equal(primaryAllDay.all_day, true);
    assert.equal(primaryAllDay.end_datetime, '2026-12-05T23:59:59-08:00');
  });

  test('timed copies still fill a missing end from each other', () => {
    const m = mergeGroup([row('a', 0, {}), row('b', 1, { end_datetime: '2026-12-05T01:00:00-08:00', end_ms: ms('2026-12-05T01:00:00-08:00') })]);
    assert.equal(m.all_day, false);
    assert.equal(m.end_datetime, '2026-12-05T01:00:00-08:00');
    assert.equal(m.end_ms, ms('2026-12-05T01:00:00-08:00'));
  });

  test('mergeRows (the normalize CLI’s merge) keeps the flag of each record', () => {
    const other = row('c', 0, { title: 'Storytime', start_datetime: '2026-12-05T10:00:00-08:00', start_ms: ms('2026-12-05T10:00:00-08:00') });
    const { rows } = mergeRows([row('a', 0, {}), allDay('b', 1), other]);
    assert.deepEqual(
      rows.map((r) => [r.id, r.all_day]),
      [
        ['a', true],
        ['c', false],
      ],
    );
  });
});
