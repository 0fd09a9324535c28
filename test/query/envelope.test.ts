// The paging figures a page carries (query/envelope.ts): the next cursor follows the last delivered
// row whenever more rows follow it in start order (pages asked by offset, past the offset cap, by
// cursor, and cut by the quota), and never on a last page or a page by distance.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCursor } from '../../core/cursor.ts';
import type { PageRow, SearchPage } from '../../query/db.ts';
import { nextCursor, nextOffset } from '../../query/envelope.ts';
import { searchQuery } from './search-query.ts';

const MAX_OFFSET = 100_000;
const id = (i: number): string => `bsc_evt_${i.toString(16).padStart(20, '0')}`;
const rows = (from: number, n: number): PageRow[] =>
  Array.from({ length: n }, (_, i) => ({ rid: from + i, id: id(from + i), distanceKm: null, startMs: 1_000 * (from + i) }));
const page = (p: Partial<SearchPage> & { rows: PageRow[] }): SearchPage => ({ total: 1_000_000, firstEndMs: null, suggestion: null, ...p });
const keyOf = (cursor: string | null) => (cursor === null ? null : decodeCursor(cursor));

test('an offset page with more after it offers the cursor of its last row', () => {
  const p = page({ rows: rows(20, 10) });
  assert.deepEqual(keyOf(nextCursor(searchQuery({ offset: 20 }), p)), { startMs: 29_000, id: id(29) });
});

test('where the next offset would pass the cap, the cursor is still there (and the offset is not)', () => {
  const q = searchQuery({ offset: 99_995, limit: 10 });
  const p = page({ rows: rows(99_995, 10) });
  assert.equal(nextOffset(p.total, q.limit, q.offset, MAX_OFFSET), null);
  assert.deepEqual(keyOf(nextCursor(q, p)), { startMs: 100_004_000, id: id(100_004) });
});

test('the last page, an empty page and a page by distance have none', () => {
  assert.equal(nextCursor(searchQuery({ offset: 20 }), page({ total: 30, rows: rows(20, 10) })), null);
  assert.equal(nextCursor(searchQuery({ offset: 40 }), page({ total: 30, rows: [] })), null);
  const geo = { lat: 37.7, lng: -122.4, radiusKm: 10 };
  assert.equal(nextCursor(searchQuery({ geo, sort: 'distance' }), page({ rows: rows(0, 10) })), null);
  // A centre sorted by start pages by start: it has one.
  assert.notEqual(nextCursor(searchQuery({ geo }), page({ rows: rows(0, 10) })), null);
});

test('a page asked by cursor offers one while rows remain after its own', () => {
  const after = { startMs: 4_000, id: id(4) };
  assert.deepEqual(keyOf(nextCursor(searchQuery({ after }), page({ rows: rows(5, 10), remaining: 11 }))), { startMs: 14_000, id: id(14) });
  assert.equal(nextCursor(searchQuery({ after }), page({ rows: rows(5, 10), remaining: 10 })), null);
  // Cut by the quota to 3 of 10: the next page starts after the third.
  assert.deepEqual(keyOf(nextCursor(searchQuery({ after }), page({ rows: rows(5, 3), remaining: 10 }))), { startMs: 7_000, id: id(7) });
});

test('rows whose start is unknown give no cursor rather than a wrong one', () => {
  assert.equal(nextCursor(searchQuery({}), page({ rows: [{ rid: 1, id: id(1), distanceKm: null }] })), null);
});
