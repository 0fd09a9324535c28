// The heading a search gets (server/web/pages/search-heading.ts) for the website's own filters:
// When and Near (issue 28 items 3 and 4 together). The words for the API's filters are checked
// over HTTP in browse.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchHeading } from '../../../server/web/pages/search-heading.ts';

const ctx = { cities: ['Berkeley', 'San Francisco'], nowMs: Date.parse('2026-11-19T12:00:00-08:00') };

test('When: each choice of the form is said as the form offers it', () => {
  for (const [when, words] of [
    ['today', 'Events today'],
    ['tomorrow', 'Events tomorrow'],
    ['weekend', 'Events this weekend'],
    ['week', 'Events this week'],
    ['next-week', 'Events next week'],
  ] as const)
    assert.equal(searchHeading({ when }, ctx), words);
  // "Specific dates" is said by its dates.
  assert.equal(searchHeading({ when: 'dates', start_date: '2026-11-28', end_date: '2026-11-28' }, ctx), 'Events on Sat, Nov 28');
});

test('Near: a typed ZIP code or town by the place it resolved to, in miles; a link’s point in miles', () => {
  assert.equal(searchHeading({ near: '94704', miles: '5', when: 'weekend' }, { ...ctx, place: 'Berkeley' }), 'Events within 5 miles of Berkeley, this weekend');
  assert.equal(searchHeading({ near: 'berkeley' }, { ...ctx, place: 'Berkeley' }), 'Events within 10 miles of Berkeley');
  assert.equal(
    searchHeading({ category: 'storytime', near: '94704', miles: '1' }, { ...ctx, place: 'Berkeley' }),
    'Storytime events within 1 mile of Berkeley',
  );
  assert.equal(searchHeading({ lat: '37.87', lng: '-122.27', radius_km: '8.04672' }, ctx), 'Events within 5 miles of 37.87, -122.27');
});
