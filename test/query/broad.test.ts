// The broad searches' postings (query/broad.ts, snapshot/search-broad.ts) against the full search
// as the oracle: one synthetic snapshot, its search database written twice (with postings for
// every prefix and city of 150+ events, and without any), and the same searches asked of both must
// give the same page, total and earliest end: at the build's time and after some events have
// ended, with the plan's excluded categories, every cheap filter, bounded and open ranges, and
// offsets past the first pages and past the last match.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildSnapshot } from '../../snapshot/build/build.ts';
import { syntheticStart, writeSynthetic } from '../../snapshot/sample/synthetic.ts';
import { SEARCH_DB, writeSearchDb } from '../../snapshot/search-db.ts';
import { queryForms } from '../../core/stem.ts';
import { BroadIndex, MAX_BROAD_ROWS } from '../../query/broad.ts';
import { SnapshotDb } from '../../query/db.ts';
import type { SearchQuery } from '../../query/protocol.ts';
import { searchQuery } from './search-query.ts';

const NOW = new Date('2026-11-21T17:00:00Z');
const DAY = 86_400_000;
const EXCLUDED = ['festivals', 'seasonal'];
const BASE: SearchQuery = searchQuery({ limit: 20 });

let tmp = '';
let withPostings: SnapshotDb;
let without: SnapshotDb;
let keys: { kind: string; key: string }[] = [];
let answered = 0;

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fe-broad-'));
  const registryFile = await writeSynthetic({ events: 3000, seed: 7, outDir: path.join(tmp, 'feeds'), start: syntheticStart(NOW), days: 90 });
  const { manifest } = await buildSnapshot({ dataDir: path.join(tmp, 'data'), registryFile, now: NOW });
  const built = path.join(tmp, 'data', 'snapshots', manifest.id);
  const dirs = { broad: path.join(tmp, 'broad'), full: path.join(tmp, 'full') };
  for (const dir of Object.values(dirs)) await cp(built, dir, { recursive: true });
  await writeSearchDb(path.join(built, 'events.parquet'), dirs.broad, { minEvents: 150, budgetPerEvent: 40 });
  await writeSearchDb(path.join(built, 'events.parquet'), dirs.full, null);

  const db = await DuckDBInstance.create(path.join(dirs.broad, SEARCH_DB), { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  keys = (await conn.runAndReadAll('SELECT kind, key FROM broad_keys ORDER BY kind, key')).getRowObjectsJson() as { kind: string; key: string }[];
  conn.closeSync();
  db.closeSync();

  withPostings = await SnapshotDb.open({ id: manifest.id, dir: dirs.broad });
  without = await SnapshotDb.open({ id: manifest.id, dir: dirs.full });
  const answer = BroadIndex.prototype.answer;
  BroadIndex.prototype.answer = async function (...args) {
    const a = await answer.apply(this, args);
    if (a !== null) answered++;
    return a;
  };
});

after(async () => {
  withPostings?.close();
  without?.close();
  await rm(tmp, { recursive: true, force: true });
});

/** A small deterministic generator, so a failure names a case that can be asked again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

test('the snapshot has broad word prefixes, two-prefix words and cities', () => {
  const kinds = new Set(keys.map((k) => k.kind));
  assert.deepEqual([...kinds].sort(), ['city', 'pair', 'word']);
  // Nested prefixes that start the same terms share one key: "synth" and "synthe" are both looked up.
  assert.ok(keys.some((k) => k.kind === 'word' && k.key === 'synth'));
});

test('broad searches give the full search page, total and earliest end', async () => {
  const rand = rng(29);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const now = NOW.getTime();
  const ranges: SearchQuery['range'][] = [
    'upcoming',
    { fromMs: now + 2 * DAY, toMs: now + 9 * DAY },
    { fromMs: now, toMs: now + 3 * DAY, fromNow: true },
    { fromMs: now - 30 * DAY, toMs: now + 400 * DAY },
    // Ending on a UTC midnight (the postings count starts per UTC day), and one ending before it starts.
    { fromMs: now + 5 * DAY, toMs: Math.floor(now / DAY + 12) * DAY },
    { fromMs: now + 10 * DAY, toMs: now + 9 * DAY },
  ];
  // The build's time, a day and a few hours on (events of the first day have ended), and weeks on.
  const nows = [now, now + DAY + 3 * 3_600_000, now + 20 * DAY];
  const words = keys.filter((k) => k.kind !== 'city');
  const cities = keys.filter((k) => k.kind === 'city').map((k) => k.key);
  let cases = 0;
  for (let i = 0; i < 700; i++) {
    const k = rand() < 0.7 ? pick(words) : null;
    const word = k ? (k.kind === 'pair' ? (k.key.split(' ')[0] as string) : k.key) : null;
    const limit = pick([20, 5, 50]);
    const q: SearchQuery = {
      ...BASE,
      words: word ? queryForms([word]) : null,
      cities: word ? null : [pick(cities)],
      ages: pick([null, null, { loMonths: 36, hiMonths: 83 }, { loMonths: 0, hiMonths: 11 }, { loMonths: 144, hiMonths: 227 }]),
      categories: pick([null, null, ['storytime'], ['arts-crafts', 'stem']]),
      isFree: pick([null, null, true, false]),
      range: pick(ranges),
      limit,
      // Past the first pages, and past the last match.
      offset: Math.min(MAX_BROAD_ROWS - limit, pick([0, 0, 20, 40, 140, 900])),
    };
    const excluded = pick([EXCLUDED, []]);
    const at = pick(nows);
    const expected = await without.page(q, excluded, at);
    const actual = await withPostings.page(q, excluded, at);
    assert.deepEqual(actual, expected, `case ${i}: ${JSON.stringify({ q, excluded, at })}`);
    cases++;
  }
  assert.equal(cases, 700);
  // The postings answered (nearly) all of them: the comparison tested them, not the fallback.
  assert.ok(answered > 600, `the postings answered ${answered} of 700`);
});

test('a batch mixing broad and other searches gives each its own page', async () => {
  const now = NOW.getTime();
  const word = keys.find((k) => k.kind === 'word' && k.key === 'synth')?.key as string;
  const city = keys.find((k) => k.kind === 'city')?.key as string;
  const searches = [
    { ...BASE, words: queryForms([word]) },
    { ...BASE, cities: [city], ages: { loMonths: 36, hiMonths: 83 }, offset: 40 },
    { ...BASE, cities: [city], words: queryForms(['story']) },
    { ...BASE, geo: { lat: 37.8, lng: -122.27, radiusKm: 50 }, sort: 'distance' as const },
    { ...BASE, words: queryForms([word, 'museum']) },
    { ...BASE, words: queryForms([word]), offset: MAX_BROAD_ROWS },
  ].map((query) => ({ query, excluded: EXCLUDED, nowMs: now + DAY }));
  const expected = [];
  for (const s of searches) expected.push(await without.page(s.query, s.excluded, s.nowMs));
  assert.deepEqual(await withPostings.pages(searches), expected);
});
