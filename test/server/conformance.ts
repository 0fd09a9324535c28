// The shared conformance case: queries chosen from the snapshot's own rows (a small and a big city,
// a place, a category with ages, a word, a later page), each with its oracle, every match in order,
// computed here from the Parquet rows and never through the server. formats.test.ts holds every
// format to them directly; test/deploy/nginx.test.ts holds them through nginx.
import assert from 'node:assert/strict';
import type { OracleRow } from './helpers.ts';

export const EXCLUDED = ['festivals', 'seasonal'];
const EARTH_KM = 6371.0088;

const fold = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
const wordsOf = (s: string): string[] => fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];
export const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
export const byStart = (a: OracleRow, b: OracleRow): number => a.start_ms - b.start_ms || byString(a.id, b.id);
export const isExcluded = (cats: readonly string[]): boolean => cats.some((c) => EXCLUDED.includes(c));

const rowWordCache = new Map<string, readonly string[]>();
function rowWords(r: OracleRow): readonly string[] {
  let w = rowWordCache.get(r.id);
  if (!w) {
    w = [...new Set([r.title, r.summary, r.description, r.venue_name, r.organizer, ...r.tags].flatMap((t) => (t ? wordsOf(t) : [])))];
    rowWordCache.set(r.id, w);
  }
  return w;
}
export const matchesQ = (r: OracleRow, q: string): boolean => wordsOf(q).every((qw) => rowWords(r).some((w) => w.startsWith(qw)));

export function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** A query of the shared conformance case: its query string, and every match in order per the oracle. */
export interface Query {
  readonly qs: string;
  readonly params: readonly (readonly [string, string])[];
  readonly limit: number;
  readonly offset: number;
  readonly geo: boolean;
  readonly expected: readonly OracleRow[];
}

function query(params: readonly (readonly [string, string])[], expected: readonly OracleRow[]): Query {
  const p = new Map(params);
  return {
    qs: params.map(([k, val]) => `${encodeURIComponent(k)}=${encodeURIComponent(val)}`).join('&'),
    params,
    limit: Number(p.get('limit') ?? '20'),
    offset: Number(p.get('offset') ?? '0'),
    geo: p.has('lat'),
    expected,
  };
}

export const QUERY_NAMES = ['plain', 'city', 'geo', 'category+age', 'q word', 'paged'] as const;
export type QueryName = (typeof QUERY_NAMES)[number];

/** The page the oracle says query `q` answers: its ids, the total, and the next page's offset. */
export function oraclePage(q: Query): { ids: string[]; total: number; next: number | null } {
  return {
    ids: q.expected.slice(q.offset, q.offset + q.limit).map((r) => r.id),
    total: q.expected.length,
    next: q.offset + q.limit < q.expected.length ? q.offset + q.limit : null,
  };
}

export interface Conformance {
  /** Not-ended events under Community's exclusions, in start order. */
  readonly communityUp: OracleRow[];
  readonly queries: ReadonlyMap<QueryName, Query>;
}

/** Chooses the conformance queries from a snapshot's rows (as the Community plan sees them at `now`). */
export function conformanceQueries(rows: readonly OracleRow[], now: Date): Conformance {
  const queries = new Map<QueryName, Query>();
  const communityUp = rows.filter((r) => r.end_ms >= now.getTime() && !isExcluded(r.categories)).sort(byStart);
  assert.ok(communityUp.length > 1000, `${communityUp.length} upcoming community events`);

  const countBy = (key: (r: OracleRow) => readonly string[]): [string, number][] => {
    const m = new Map<string, number>();
    for (const r of communityUp) for (const k of key(r)) m.set(k, (m.get(k) ?? 0) + 1);
    return [...m].sort((a, b) => b[1] - a[1] || byString(a[0], b[0]));
  };
  const cities = countBy((r) => [r.venue_city]);
  // A city whose matches fit one page of 100 (no next page), and one that spans several.
  const small = cities.find(([, n]) => n >= 20 && n < 100);
  const big = [...cities].reverse().find(([, n]) => n > 100);
  assert.ok(small && big, 'the sample has a small and a big city');
  const [smallCity] = small;
  const [bigCity] = big;

  queries.set('plain', query([['limit', '30']], communityUp));
  const inSmall = communityUp.filter((r) => r.venue_city === smallCity);
  queries.set(
    'city',
    query(
      [
        ['city', smallCity],
        ['limit', '100'],
      ],
      inSmall,
    ),
  );

  const centre = inSmall[0];
  assert.ok(centre);
  const radius = 3;
  const dist = new Map(communityUp.map((r) => [r.id, haversineKm(centre.venue_lat, centre.venue_lng, r.venue_lat, r.venue_lng)]));
  const d = (r: OracleRow): number => dist.get(r.id) ?? Infinity;
  const near = communityUp.filter((r) => d(r) <= radius).sort((a, b) => d(a) - d(b) || byStart(a, b));
  queries.set(
    'geo',
    query(
      [
        ['lat', String(centre.venue_lat)],
        ['lng', String(centre.venue_lng)],
        ['radius_km', String(radius)],
        ['sort', 'distance'],
        ['limit', '25'],
      ],
      near,
    ),
  );

  const [topCategory] = countBy((r) => r.categories)[0] ?? [''];
  const lo = 2 * 12;
  const hi = 4 * 12 + 11;
  const catAge = communityUp.filter((r) => r.categories.includes(topCategory) && (r.age_min_months ?? 0) <= hi && (r.age_max_months ?? Infinity) >= lo);
  queries.set(
    'category+age',
    query(
      [
        ['category', topCategory],
        ['age_min', '2'],
        ['age_max', '4'],
        ['limit', '40'],
      ],
      catAge,
    ),
  );

  // A title word of the data with a few dozen matches (prefix rule over every searched field).
  const candidates = [...new Set(communityUp.flatMap((r) => wordsOf(r.title)))].filter((w) => /^[a-z]{5,}$/.test(w)).sort(byString);
  let word = '';
  let wordHits: OracleRow[] = [];
  for (const w of candidates) {
    const hits = communityUp.filter((r) => matchesQ(r, w));
    if (hits.length >= 15 && hits.length <= 80) {
      word = w;
      wordHits = hits;
      break;
    }
  }
  assert.ok(word, 'a word of the data with 15-80 matches');
  queries.set(
    'q word',
    query(
      [
        ['q', word],
        ['limit', '10'],
      ],
      wordHits,
    ),
  );

  // Parameters deliberately out of name order: the feeds' self links must sort them.
  const inBig = communityUp.filter((r) => r.venue_city === bigCity);
  queries.set(
    'paged',
    query(
      [
        ['sort', 'start'],
        ['offset', '40'],
        ['limit', '20'],
        ['city', bigCity],
      ],
      inBig,
    ),
  );

  for (const [name, q] of queries) {
    assert.ok(q.expected.length > q.offset, `${name}: the oracle has matches past the offset`);
    if (name !== 'plain') assert.ok(q.expected.length < communityUp.length, `${name}: the filter excludes something`);
  }
  return { communityUp, queries };
}
