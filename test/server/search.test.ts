// GET /v1/events filter by filter over real HTTP on the bundled sample, against an oracle written
// here from the snapshot's rows (own folding, haversine, date and week bounds), plus paging, record
// invariants, the /api twin and the keyless demo with its rate limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DateTime } from 'luxon';
import * as v from 'valibot';
import { EventListSchema, ProblemSchema } from '../../server/schemas.ts';
import {
  get,
  NOW,
  parseProm,
  PUBLIC,
  WEB,
  recordLines,
  sampleFixture,
  startTestServer,
  type Fixture,
  type Got,
  type OracleRow,
  type TestServer,
} from './helpers.ts';
import { matches } from './q-oracle.ts';

type EventList = v.InferOutput<typeof EventListSchema>;
type EventRecord = EventList['events'][number];
type Params = Readonly<Record<string, string>>;

const LA = 'America/Los_Angeles';
const EXCLUDED = ['seasonal', 'festivals'];
const EARTH_KM = 6371.0088;
const HOUR = 3_600_000;
const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const WEEK_RE = /^(\d{4})-W(\d{2})$/;
const ADDRESS_RE = /, [A-Z][a-zA-Z .'-]*, CA \d{5}$/;
const OFFSET_RE = /([+-]\d{2}:\d{2})$/;

// ---------------------------------------------------------------- the oracle

/** Own folding, deliberately not the server's: compatibility-decompose, drop marks, lower-case. */
const fold = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
const wordsOf = (s: string): string[] => fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];

const rowWordCache = new Map<string, readonly string[]>();
function rowWords(r: OracleRow): readonly string[] {
  let w = rowWordCache.get(r.id);
  if (!w) {
    const texts = [r.title, r.summary, r.description, r.venue_name, r.organizer, ...r.tags];
    w = [...new Set(texts.flatMap((t) => (t ? wordsOf(t) : [])))];
    rowWordCache.set(r.id, w);
  }
  return w;
}

function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A YYYY-MM-DD day in LA: first and last (inclusive) ms. */
function laDay(s: string): { from: number; to: number } {
  const d = DateTime.fromISO(s, { zone: LA });
  assert.ok(d.isValid, s);
  const from = d.startOf('day').toMillis();
  return { from, to: d.plus({ days: 1 }).startOf('day').toMillis() - 1 };
}

function bound(s: string, side: 'from' | 'to'): number {
  if (DAY_RE.test(s)) return laDay(s)[side];
  const t = DateTime.fromISO(s, { setZone: true });
  assert.ok(t.isValid, s);
  return t.toMillis();
}

/** Monday 00:00 to Sunday's last ms in LA, of an ISO week. */
function isoWeek(year: number, week: number): { from: number; to: number } {
  const monday = DateTime.fromObject({ weekYear: year, weekNumber: week, weekday: 1 }, { zone: LA }).startOf('day');
  return { from: monday.toMillis(), to: monday.plus({ days: 7 }).toMillis() - 1 };
}

function weekBounds(spec: string): { from: number; to: number } {
  const m = WEEK_RE.exec(spec);
  if (m) return isoWeek(Number(m[1]), Number(m[2]));
  const here = DateTime.fromJSDate(NOW, { zone: LA }).plus({ weeks: spec === 'next' ? 1 : 0 });
  return isoWeek(here.weekYear, here.weekNumber);
}

interface Expected {
  readonly ids: string[];
  readonly dist: ReadonlyMap<string, number>;
}

/** What /v1/events must answer for `p` under the Community rules, in order. */
function oracle(rows: readonly OracleRow[], p: Params): Expected {
  const list = (s: string | undefined): string[] | null =>
    s === undefined
      ? null
      : s
          .split(',')
          .map((x) => x.trim())
          .filter((x) => x !== '');
  const cities = list(p.city)?.map((c) => fold(c).replace(/\s+/g, ' ')) ?? null;
  const cats = list(p.category);
  const qWords = p.q === undefined ? null : wordsOf(p.q);
  const geo = p.lat === undefined || p.lng === undefined ? null : { lat: Number(p.lat), lng: Number(p.lng), r: Number(p.radius_km ?? '10') };
  const ages = p.age_min === undefined && p.age_max === undefined ? null : { lo: Number(p.age_min ?? '0') * 12, hi: Number(p.age_max ?? '18') * 12 + 11 };
  const isFree = p.is_free === undefined ? null : p.is_free === 'true' || p.is_free === '1';
  let range: { from: number; to: number };
  // week=current: the rest of this week, nothing already ended (contract, amended 2026-11-26).
  if (p.week !== undefined) range = p.week === 'current' ? { ...weekBounds(p.week), from: NOW.getTime() } : weekBounds(p.week);
  else if (p.start_date !== undefined || p.end_date !== undefined)
    range = { from: p.start_date === undefined ? -Infinity : bound(p.start_date, 'from'), to: p.end_date === undefined ? Infinity : bound(p.end_date, 'to') };
  else range = { from: NOW.getTime(), to: Infinity };

  const dist = new Map<string, number>();
  const hits: OracleRow[] = [];
  for (const r of rows) {
    if (r.categories.some((c) => EXCLUDED.includes(c))) continue;
    if (!(r.start_ms <= range.to && r.end_ms >= range.from)) continue;
    if (cities && !cities.includes(fold(r.venue_city).replace(/\s+/g, ' '))) continue;
    if (ages && r.age_min_months !== null && r.age_max_months !== null && !(r.age_min_months <= ages.hi && r.age_max_months >= ages.lo)) continue;
    if (cats && !r.categories.some((c) => cats.includes(c))) continue;
    if (isFree !== null && r.is_free !== isFree) continue;
    if (qWords) {
      // The amended contract: singular and plural, compounds apart or together (./q-oracle.ts).
      if (!matches(r, p.q as string)) continue;
    }
    if (geo) {
      const d = haversineKm(geo.lat, geo.lng, r.venue_lat, r.venue_lng);
      if (!(d <= geo.r)) continue;
      dist.set(r.id, d);
    }
    hits.push(r);
  }
  const byStart = (a: OracleRow, b: OracleRow): number => a.start_ms - b.start_ms || byString(a.id, b.id);
  hits.sort(p.sort === 'distance' ? (a, b) => (dist.get(a.id) ?? 0) - (dist.get(b.id) ?? 0) || byStart(a, b) : byStart);
  return { ids: hits.map((r) => r.id), dist };
}

// ---------------------------------------------------------------- HTTP side

const qs = (p: Params): string =>
  Object.entries(p)
    .map(([k, val]) => `${encodeURIComponent(k)}=${encodeURIComponent(val)}`)
    .join('&');

let fx: Fixture;
let srv: TestServer;
let limited: TestServer;
let rows: readonly OracleRow[];
let allowed: OracleRow[];
let upcoming: OracleRow[];
const lineById = new Map<string, string>();
const rowById = new Map<string, OracleRow>();

before(async () => {
  fx = await sampleFixture();
  rows = fx.rows;
  for (const r of rows) rowById.set(r.id, r);
  for (const line of await recordLines(fx.build)) lineById.set((JSON.parse(line) as { id: string }).id, line);
  allowed = rows.filter((r) => !r.categories.some((c) => EXCLUDED.includes(c)));
  upcoming = allowed.filter((r) => r.end_ms >= NOW.getTime());
  // The demo tests make a few dozen calls; the rate limit gets its own server with a tiny bucket.
  srv = await startTestServer(fx.dataDir, { DEMO_RATE_PER_MINUTE: '1000' });
  limited = await startTestServer(fx.dataDir, { DEMO_RATE_PER_MINUTE: '3', POOL_THREADS: '1' });
});

after(async () => {
  await srv?.stop();
  await limited?.stop();
  await fx?.cleanup();
});

async function page(route: string, p: Params): Promise<{ got: Got; body: EventList }> {
  const got = await get(srv.base, `${route}?${qs(p)}`);
  assert.equal(got.status, 200, `${route}?${qs(p)} -> ${got.status} ${got.text.slice(0, 500)}`);
  return { got, body: v.parse(EventListSchema, got.json) };
}

/** Every page of a search (limit 100), checking the paging fields on the way. */
async function fetchAll(p: Params, route = '/v1/events'): Promise<{ total: number; events: EventRecord[] }> {
  const events: EventRecord[] = [];
  let total: number | null = null;
  for (let offset = 0; ;) {
    const { body } = await page(route, { ...p, limit: '100', offset: String(offset) });
    total ??= body.total;
    assert.equal(body.total, total, 'total must not change between pages');
    assert.equal(body.limit, 100);
    assert.equal(body.offset, offset);
    assert.equal(body.events.length, Math.max(0, Math.min(100, total - offset)), `page at ${offset}`);
    assert.equal(body.next_offset, offset + 100 < total ? offset + 100 : null);
    events.push(...body.events);
    if (body.next_offset === null) break;
    offset = body.next_offset;
    assert.ok(offset <= total, 'runaway paging');
  }
  return { total, events };
}

/** The whole answer of the server equals the oracle's, in order; returns both. */
async function expectSearch(p: Params): Promise<{ exp: Expected; events: EventRecord[] }> {
  const exp = oracle(rows, p);
  const got = await fetchAll(p);
  assert.equal(got.total, exp.ids.length, `total for ${qs(p)}`);
  assert.deepEqual(
    got.events.map((e) => e.id),
    exp.ids,
    `ids for ${qs(p)}`,
  );
  const isGeo = p.lat !== undefined;
  for (const e of got.events) {
    if (isGeo) {
      assert.equal(typeof e.distance_km, 'number', `${e.id} lacks distance_km`);
      const d = exp.dist.get(e.id) ?? NaN;
      assert.ok(Math.abs((e.distance_km ?? NaN) - d) <= 0.0015, `${e.id}: distance_km ${e.distance_km} vs haversine ${d}`);
    } else {
      assert.ok(!('distance_km' in e), `${e.id} has distance_km on a non-geo search`);
    }
  }
  return { exp, events: got.events };
}

/** A filter must select something, but not everything it is compared with. */
function nonTrivial(exp: Expected, than: number, what: string): void {
  assert.ok(exp.ids.length > 0, `${what}: the oracle expects nothing, pick other data`);
  assert.ok(exp.ids.length < than, `${what}: the oracle expects everything (${exp.ids.length} of ${than})`);
}

function assertProblem(got: Got, status: number, code: string): v.InferOutput<typeof ProblemSchema> {
  assert.equal(got.status, status, got.text);
  assert.match(got.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const p = v.parse(ProblemSchema, got.json);
  assert.equal(p.status, status);
  assert.equal(p.code, code);
  return p;
}

const countBy = <T>(xs: readonly T[], key: (x: T) => readonly string[]): [string, number][] => {
  const m = new Map<string, number>();
  for (const x of xs) for (const k of key(x)) m.set(k, (m.get(k) ?? 0) + 1);
  return [...m].sort((a, b) => b[1] - a[1] || byString(a[0], b[0]));
};

const nth = <T>(xs: readonly T[], i: number): T => {
  const x = xs[i];
  assert.ok(x !== undefined, `no element ${i}`);
  return x;
};

/** Adds an acute accent to the last plain vowel: "San Jose" -> "San José". */
function accented(name: string): string {
  for (let i = name.length - 1; i >= 0; i--) {
    if ('aeiouAEIOU'.includes(name[i] ?? '')) return `${name.slice(0, i)}${name[i]}\u0301${name.slice(i + 1)}`.normalize('NFC');
  }
  assert.fail(`no vowel in ${name}`);
}

/** Venue coordinates no allowed event sits within 1 m of the radius from (rounding can't flip a match). */
function clearCentre(radiusKm: number, accept: (n: number, c: { lat: number; lng: number }) => boolean): { lat: number; lng: number } {
  const coords = [...new Map(rows.map((r) => [`${r.venue_lat},${r.venue_lng}`, { lat: r.venue_lat, lng: r.venue_lng }])).values()];
  coords.sort((a, b) => a.lat - b.lat || a.lng - b.lng);
  for (const c of coords) {
    const km = (r: OracleRow): number => haversineKm(c.lat, c.lng, r.venue_lat, r.venue_lng);
    if (allowed.some((r) => Math.abs(km(r) - radiusKm) <= 0.001)) continue;
    if (accept(upcoming.filter((r) => km(r) <= radiusKm).length, c)) return c;
  }
  assert.fail(`no venue is a clear centre for ${radiusKm} km`);
}

// ---------------------------------------------------------------- filters

describe('city', () => {
  test('a single city', async () => {
    const city = nth(
      countBy(upcoming, (r) => [r.venue_city]),
      1,
    )[0];
    const { exp, events } = await expectSearch({ city });
    nonTrivial(exp, upcoming.length, 'city');
    for (const e of events) assert.equal(e.venue.city, city);
  });

  test('two comma-separated cities match either', async () => {
    const ranked = countBy(upcoming, (r) => [r.venue_city]);
    const a = nth(ranked, 2)[0];
    const b = nth(ranked, 4)[0];
    const { exp } = await expectSearch({ city: `${a},${b}` });
    nonTrivial(exp, upcoming.length, 'two cities');
    assert.ok(exp.ids.length > oracle(rows, { city: a }).ids.length, 'the second city must add events');
  });

  test('city names are case- and accent-insensitive', async () => {
    // A two-word name, so the accent lands inside a multi-word value.
    const city = nth(
      countBy(upcoming, (r) => [r.venue_city]).filter(([c]) => c.includes(' ')),
      1,
    )[0];
    const plain = oracle(rows, { city });
    nonTrivial(plain, upcoming.length, 'city');
    for (const variant of [city.toUpperCase(), accented(city), accented(city.toLowerCase())]) {
      assert.notEqual(variant, city);
      const { exp } = await expectSearch({ city: variant });
      assert.deepEqual(exp.ids, plain.ids, `the oracle folds ${variant} to ${city}`);
    }
  });
});

describe('radius', () => {
  test('lat/lng with an explicit radius_km', async () => {
    const radius = 4;
    const c = clearCentre(radius, (n) => n > 20 && n < upcoming.length / 4);
    const { exp } = await expectSearch({ lat: String(c.lat), lng: String(c.lng), radius_km: String(radius) });
    nonTrivial(exp, upcoming.length, 'radius');
  });

  test('lat/lng without radius_km means 10 km', async () => {
    // A centre where 10 km is what decides: 9 and 11 km would answer differently.
    const count = (c: { lat: number; lng: number }, r: number): number =>
      oracle(rows, { lat: String(c.lat), lng: String(c.lng), radius_km: String(r) }).ids.length;
    const c = clearCentre(10, (n, at) => n > 20 && n < upcoming.length / 2 && count(at, 9) !== n && count(at, 11) !== n);
    const { exp } = await expectSearch({ lat: String(c.lat), lng: String(c.lng) });
    nonTrivial(exp, upcoming.length, 'default radius');
  });

  test('sort=distance orders by distance, then start, then id', async () => {
    const radius = 25;
    const c = clearCentre(radius, (n) => n > 200 && n < upcoming.length);
    const { exp, events } = await expectSearch({ lat: String(c.lat), lng: String(c.lng), radius_km: String(radius), sort: 'distance' });
    nonTrivial(exp, upcoming.length, 'sort=distance');
    const byStart = oracle(rows, { lat: String(c.lat), lng: String(c.lng), radius_km: String(radius) });
    assert.notDeepEqual(exp.ids, byStart.ids, 'the two sorts must differ on this data');
    for (let i = 1; i < events.length; i++) assert.ok((events[i]?.distance_km ?? 0) >= (events[i - 1]?.distance_km ?? 0), `distance order at ${i}`);
  });
});

describe('age', () => {
  const nullAge = (exp: Expected): number => exp.ids.filter((id) => rowById.get(id)?.age_min_months === null).length;

  test('age_min and age_max overlap, events without an age range included', async () => {
    const { exp } = await expectSearch({ age_min: '2', age_max: '4' });
    nonTrivial(exp, upcoming.length, 'ages 2-4');
    assert.ok(nullAge(exp) > 0, 'events without an age range must be part of the answer');
  });

  test('age_min alone', async () => {
    const { exp } = await expectSearch({ age_min: '13' });
    nonTrivial(exp, upcoming.length, 'age_min 13');
    assert.ok(nullAge(exp) > 0);
  });

  test('age_max alone', async () => {
    const { exp } = await expectSearch({ age_max: '1' });
    nonTrivial(exp, upcoming.length, 'age_max 1');
    assert.ok(nullAge(exp) > 0);
  });
});

describe('category', () => {
  const ranked = (): string[] => countBy(upcoming, (r) => r.categories).map(([c]) => c);

  test('a single category', async () => {
    const cat = nth(ranked(), 0);
    const { exp, events } = await expectSearch({ category: cat });
    nonTrivial(exp, upcoming.length, 'category');
    for (const e of events) assert.ok(e.categories.includes(cat));
  });

  test('two categories match either', async () => {
    const [a, b] = [nth(ranked(), 1), nth(ranked(), 3)];
    const { exp } = await expectSearch({ category: `${a},${b}` });
    nonTrivial(exp, upcoming.length, 'two categories');
    assert.ok(exp.ids.length > Math.max(oracle(rows, { category: a }).ids.length, oracle(rows, { category: b }).ids.length));
  });

  test('the Community plan refuses seasonal and festivals with 403', async () => {
    assert.ok(
      rows.some((r) => r.categories.includes('seasonal')),
      'the sample has seasonal events',
    );
    for (const category of ['seasonal', 'festivals', `${nth(ranked(), 0)},seasonal`]) {
      assertProblem(await get(srv.base, `/v1/events?${qs({ category })}`), 403, 'category_not_in_plan');
    }
  });

  test('events in an excluded category never appear, even under another category', async () => {
    const both = rows.filter((r) => r.end_ms >= NOW.getTime() && r.categories.includes('seasonal') && r.categories.length > 1);
    const other = nth(
      countBy(both, (r) => r.categories.filter((c) => !EXCLUDED.includes(c))),
      0,
    )[0];
    const { events } = await expectSearch({ category: other });
    const seen = new Set(events.map((e) => e.id));
    assert.ok(both.filter((r) => r.categories.includes(other)).every((r) => !seen.has(r.id)));
  });
});

describe('q', () => {
  /** Words of the upcoming rows' titles by how many rows hold them. */
  const titleWords = (): [string, number][] => countBy(upcoming, (r) => [...new Set(wordsOf(r.title))]).filter(([w]) => w.length >= 6 && /^[a-z]+$/.test(w));

  test('a single word prefix', async () => {
    const word = nth(titleWords(), 2)[0];
    const prefix = word.slice(0, 4);
    const { exp } = await expectSearch({ q: prefix });
    nonTrivial(exp, upcoming.length, `q=${prefix}`);
    assert.ok(exp.ids.length >= oracle(rows, { q: word }).ids.length);
  });

  test('letters from inside a word are not a word prefix', async () => {
    // Letters from inside a common title word that start no word anywhere: a substring search would
    // find them, a word-prefix search must not.
    const all = rows.flatMap((r) => rowWords(r));
    const starts = (x: string): boolean => all.some((w) => w.startsWith(x));
    let infix: string | null = null;
    for (const [w] of titleWords()) {
      for (let i = 1; i + 4 <= w.length && !infix; i++) if (!starts(w.slice(i, i + 4))) infix = w.slice(i, i + 4);
      if (infix) break;
    }
    assert.ok(infix, 'no title word with an inner 4-letter run that starts no word');
    const { exp } = await expectSearch({ q: infix });
    assert.equal(exp.ids.length, 0);
  });

  test('two words must both match', async () => {
    const words = titleWords()
      .slice(0, 12)
      .map(([w]) => w);
    let pair: [string, string] | null = null;
    for (const a of words) {
      for (const b of words) {
        if (a >= b) continue;
        const n = oracle(rows, { q: `${a} ${b}` }).ids.length;
        if (n > 0 && n < Math.min(oracle(rows, { q: a }).ids.length, oracle(rows, { q: b }).ids.length)) pair = [a, b];
        if (pair) break;
      }
      if (pair) break;
    }
    assert.ok(pair, 'no two title words that narrow each other');
    const { exp } = await expectSearch({ q: `${pair[0]} ${pair[1].slice(0, 5)}` });
    nonTrivial(exp, upcoming.length, 'two words');
  });

  test('accents and case do not matter, either way', async () => {
    // A data word that carries an accent, asked for without it and in capitals.
    const withMarks = countBy(upcoming, (r) =>
      [r.title, r.description ?? '', r.venue_name].flatMap((t) => t.match(/\p{L}+/gu) ?? []).filter((w) => w.length >= 4 && w.normalize('NFKD') !== w),
    ).map(([w]) => w);
    const dataWord = nth(withMarks, 0);
    const bare = fold(dataWord).toUpperCase();
    assert.notEqual(bare, dataWord);
    const one = await expectSearch({ q: bare });
    nonTrivial(one.exp, upcoming.length, `q=${bare}`);
    assert.deepEqual(one.exp.ids, oracle(rows, { q: dataWord }).ids);

    // An unaccented data word asked for with an É and in capitals.
    const plain = nth(
      titleWords().filter(([w]) => w.includes('e')),
      0,
    )[0];
    const fancy = plain.toUpperCase().replace('E', 'É');
    const two = await expectSearch({ q: fancy });
    nonTrivial(two.exp, upcoming.length, `q=${fancy}`);
    assert.deepEqual(two.exp.ids, oracle(rows, { q: plain }).ids);
  });

  test('a word found only in tags or organizer matches', async () => {
    const textWords = (r: OracleRow): Set<string> => new Set([r.title, r.summary, r.description, r.venue_name].flatMap((t) => (t ? wordsOf(t) : [])));
    let pick: { word: string; id: string } | null = null;
    for (const r of upcoming) {
      const own = textWords(r);
      const extra = [...r.tags, r.organizer ?? ''].flatMap(wordsOf).find((w) => w.length >= 5 && ![...own].some((x) => x.startsWith(w)));
      if (extra) {
        pick = { word: extra, id: r.id };
        break;
      }
    }
    assert.ok(pick, 'no row with a tag or organizer word absent from its text');
    const { exp } = await expectSearch({ q: pick.word });
    assert.ok(exp.ids.includes(pick.id));
  });

  test('a word prefix within a city or a radius: each event text is tested, not the word table', async () => {
    // With a place filter the worker tests each remaining event's text; without, it reads the word
    // table: both must give the oracle's answer, the same events in the same order.
    const [city] = nth(
      countBy(upcoming, (r) => [r.venue_city]),
      0,
    );
    const inCity = upcoming.filter((r) => r.venue_city === city);
    const word = nth(
      countBy(inCity, (r) => [...new Set(wordsOf(r.title))]).filter(([w]) => w.length >= 5),
      0,
    )[0];
    const prefix = word.slice(0, 4);
    const { exp } = await expectSearch({ city, q: prefix });
    nonTrivial(exp, inCity.length, `city=${city}&q=${prefix}`);
    const at = inCity[0] as OracleRow;
    const near = await expectSearch({ lat: String(at.venue_lat), lng: String(at.venue_lng), radius_km: '5', q: prefix });
    assert.ok(near.exp.ids.length > 0, 'the radius around an event of the city holds no match');
  });

  test('a word that matches nothing gives total 0 and no events', async () => {
    const q = 'qzxjvwk';
    assert.equal(oracle(rows, { q }).ids.length, 0);
    const { body } = await page('/v1/events', { q });
    assert.equal(body.total, 0);
    assert.deepEqual(body.events, []);
    assert.equal(body.next_offset, null);
  });
});

describe('searches asked together', () => {
  /** query_batch_searches' sum (searches) and count (statements) on a server's /metrics. */
  async function batched(server: TestServer): Promise<{ searches: number; statements: number }> {
    const samples = parseProm((await get(server.adminBase, '/metrics')).text);
    const one = (name: string): number => samples.find((x) => x.name === name)?.value ?? 0;
    return { searches: one('query_batch_searches_sum'), statements: one('query_batch_searches_count') };
  }

  test('wait for the one worker and are answered in batches, each page exactly what the oracle gives for it alone', async () => {
    // One query thread (the `limited` server): whatever arrives while it is busy waits, and goes
    // to it as one batch, one statement. Shapes that differ, geo and distance order, the word
    // table and each event's text, pages past the end (counted apart) and short pages all mix.
    const cities = countBy(upcoming, (r) => [r.venue_city])
      .slice(0, 4)
      .map(([c]) => c);
    const words = countBy(upcoming, (r) => [...new Set(wordsOf(r.title))])
      .filter(([w]) => w.length >= 5)
      .slice(0, 3)
      .map(([w]) => w);
    const at = nth(upcoming, 0);
    const centre = { lat: String(at.venue_lat), lng: String(at.venue_lng) };
    const category = nth(
      countBy(upcoming, (r) => r.categories),
      0,
    )[0];
    const shapes: Params[] = [
      ...cities.map((city) => ({ city })),
      { city: nth(cities, 0), q: nth(words, 0).slice(0, 4) },
      ...words.map((q) => ({ q })),
      { q: `${nth(words, 0)} ${nth(words, 1).slice(0, 3)}` },
      { ...centre, radius_km: '8', sort: 'distance' },
      { ...centre, radius_km: '15', category },
      { week: 'next', age_min: '2', age_max: '5' },
      { city: nth(cities, 1), offset: '900' },
      { is_free: 'true', limit: '7', offset: '3' },
    ];
    const searches = [...shapes, ...shapes.map((p) => ({ ...p, limit: '5', offset: String(Number(p.offset ?? '0') + 2) }))];
    const before = await batched(limited);
    const answers = await Promise.all(searches.map((p) => get(limited.base, `/v1/events?${qs(p)}`)));
    answers.forEach((got, i) => {
      const p = searches[i] as Params;
      assert.equal(got.status, 200, `${qs(p)} -> ${got.status} ${got.text.slice(0, 300)}`);
      const body = v.parse(EventListSchema, got.json);
      const exp = oracle(rows, p);
      const offset = Number(p.offset ?? '0');
      const limit = Number(p.limit ?? '20');
      assert.equal(body.total, exp.ids.length, `total for ${qs(p)}`);
      assert.deepEqual(
        body.events.map((e) => e.id),
        exp.ids.slice(offset, offset + limit),
        `page for ${qs(p)}`,
      );
      if (p.lat !== undefined)
        for (const e of body.events) assert.ok(Math.abs((e.distance_km ?? NaN) - (exp.dist.get(e.id) ?? NaN)) <= 0.0015, `${e.id} distance`);
    });
    const after = await batched(limited);
    assert.equal(after.searches - before.searches, searches.length, 'every search went to the worker');
    assert.ok(
      after.statements - before.statements < searches.length,
      `${searches.length} searches in ${after.statements - before.statements} statements: nothing was batched`,
    );
  });
});

test('is_free: true, false, 1 and 0', async () => {
  const t = await expectSearch({ is_free: 'true' });
  const f = await expectSearch({ is_free: 'false' });
  nonTrivial(t.exp, upcoming.length, 'is_free=true');
  nonTrivial(f.exp, upcoming.length, 'is_free=false');
  assert.equal(t.exp.ids.length + f.exp.ids.length, upcoming.length);
  assert.deepEqual((await expectSearch({ is_free: '1' })).exp.ids, t.exp.ids);
  assert.deepEqual((await expectSearch({ is_free: '0' })).exp.ids, f.exp.ids);
});

// ---------------------------------------------------------------- dates

const laDate = (ms: number): string => DateTime.fromMillis(ms, { zone: LA }).toISODate() ?? '';
const laMinutes = (ms: number): number => {
  const t = DateTime.fromMillis(ms, { zone: LA });
  return t.hour * 60 + t.minute;
};

describe('dates', () => {
  test('YYYY-MM-DD range; end_date includes its whole day', async () => {
    // The end day is the one holding the latest-starting allowed event after now (no event in the
    // sample starts after 19:00, so that one stands in for "23:30 on end_date").
    const late = [...upcoming]
      .filter((r) => r.start_ms > NOW.getTime() + 7 * 24 * HOUR)
      .sort((a, b) => laMinutes(b.start_ms) - laMinutes(a.start_ms) || a.start_ms - b.start_ms)[0];
    assert.ok(late);
    assert.ok(laMinutes(late.start_ms) >= 18 * 60, 'an evening event to test the inclusive end');
    const end = laDate(late.start_ms);
    const start = laDate(late.start_ms - 2 * 24 * HOUR);
    const { exp } = await expectSearch({ start_date: start, end_date: end });
    nonTrivial(exp, allowed.length, 'date range');
    assert.ok(exp.ids.includes(late.id), 'the oracle includes the evening event of end_date');
    // And nothing starting the next day.
    const nextDay = laDay(end).to + 1;
    assert.ok(exp.ids.every((id) => (rowById.get(id)?.start_ms ?? Infinity) < nextDay));
  });

  test('RFC 3339 bounds with offsets are instants, both bounds included', async () => {
    const later = upcoming.filter((r) => r.start_ms > NOW.getTime() + 10 * 24 * HOUR);
    const a = nth(later, 0);
    const b = nth(
      later.filter((r) => r.start_ms > a.end_ms + 36 * HOUR),
      0,
    );
    // start_date = a's end exactly, written at +01:00; end_date = b's start exactly, at LA's offset.
    const startDate = DateTime.fromMillis(a.end_ms, { zone: 'UTC+1' }).toISO({ suppressMilliseconds: true }) ?? '';
    assert.match(startDate, /\+01:00$/);
    const endDate = b.start_datetime;
    const { exp } = await expectSearch({ start_date: startDate, end_date: endDate });
    nonTrivial(exp, allowed.length, 'RFC 3339 range');
    assert.ok(exp.ids.includes(a.id) && exp.ids.includes(b.id), 'both boundary events are in the oracle');
  });

  test('only start_date: everything overlapping from that day on', async () => {
    const day = laDate(nth(upcoming, Math.floor(upcoming.length / 2)).start_ms);
    const { exp } = await expectSearch({ start_date: day });
    nonTrivial(exp, upcoming.length, 'start_date only');
  });

  test('only end_date: also events that already ended', async () => {
    const day = laDate(NOW.getTime() + 4 * 24 * HOUR);
    const { exp } = await expectSearch({ end_date: day });
    nonTrivial(exp, allowed.length, 'end_date only');
    assert.ok(
      exp.ids.some((id) => (rowById.get(id)?.end_ms ?? Infinity) < NOW.getTime()),
      'past events are part of a range that reaches back',
    );
  });

  test('DST: LA day bounds, and ranges across the changes', async () => {
    // The sample covers 2026-11-07 .. 2027-02-19, so neither change (2026-11-01 fall-back,
    // 2027-03-14 spring-forward) has events; the day lengths are checked on the oracle, and the
    // server on ranges that cross a change and end (or start) on covered days.
    const len = (d: string): number => laDay(d).to + 1 - laDay(d).from;
    assert.equal(len('2026-11-01'), 25 * HOUR);
    assert.equal(len('2027-03-14'), 23 * HOUR);
    assert.equal(len('2026-12-01'), 24 * HOUR);
    assert.equal(laDay('2026-11-01').from, Date.parse('2026-11-01T00:00:00-07:00'));
    assert.equal(laDay('2026-11-01').to, Date.parse('2026-11-01T23:59:59.999-08:00'));
    assert.equal(laDay('2027-03-14').to, Date.parse('2027-03-14T23:59:59.999-07:00'));

    const dstDay = await expectSearch({ start_date: '2026-11-01', end_date: '2026-11-01' });
    assert.equal(dstDay.exp.ids.length, 0);
    const fall = await expectSearch({ start_date: '2026-10-30', end_date: '2026-11-08' });
    nonTrivial(fall.exp, allowed.length, 'range across the fall-back change');
    const spring = await expectSearch({ start_date: '2027-02-15', end_date: '2027-03-20' });
    nonTrivial(spring.exp, allowed.length, 'range across the spring-forward change');
    const instants = await expectSearch({ start_date: '2026-11-01T01:30:00-07:00', end_date: '2026-11-08T12:00:00-08:00' });
    nonTrivial(instants.exp, allowed.length, 'RFC 3339 across the change');
  });
});

describe('week', () => {
  for (const week of ['current', 'next', '2026-W49']) {
    test(`week=${week}`, async () => {
      const b = weekBounds(week);
      const monday = DateTime.fromMillis(b.from, { zone: LA });
      assert.equal(monday.weekday, 1);
      assert.equal(monday.hour + monday.minute + monday.second, 0);
      const sundayEnd = DateTime.fromMillis(b.to, { zone: LA });
      assert.equal(sundayEnd.weekday, 7);
      assert.equal(sundayEnd.toFormat('HH:mm:ss.SSS'), '23:59:59.999');
      if (week === 'current') assert.ok(b.from <= NOW.getTime() && NOW.getTime() <= b.to);
      if (week === 'next') assert.ok(b.from > NOW.getTime() && b.from - NOW.getTime() <= 7 * 24 * HOUR);
      if (week === '2026-W49') assert.equal(monday.toISODate(), '2026-11-30');
      const { exp } = await expectSearch({ week });
      nonTrivial(exp, allowed.length, `week=${week}`);
      if (week === 'current') {
        // The case the contract's amendment is about: this week holds events that ended before now,
        // and the answer leaves every one of them out.
        const ended = allowed.filter((r) => r.start_ms <= b.to && r.end_ms >= b.from && r.end_ms < NOW.getTime());
        assert.ok(ended.length > 0, 'the snapshot has events of this week that ended before now');
        const served = new Set(exp.ids);
        assert.deepEqual(
          ended.filter((r) => served.has(r.id)).map((r) => r.id),
          [],
          'no ended event is served',
        );
      }
    });
  }
});

test('combined filters: city + category + age + is_free', async () => {
  // A real event's own values, so the combination is known to match something.
  const seed = nth(
    upcoming.filter((r) => r.is_free && r.age_min_months !== null && r.categories.length > 0),
    Math.floor(upcoming.length / 7),
  );
  const age = Math.floor((seed.age_min_months ?? 0) / 12);
  const p = { city: seed.venue_city, category: nth(seed.categories, 0), age_min: String(age), age_max: String(Math.min(18, age + 1)), is_free: 'true' };
  const { exp } = await expectSearch(p);
  assert.ok(exp.ids.includes(seed.id));
  nonTrivial(exp, oracle(rows, { city: seed.venue_city }).ids.length, 'combined');
});

// ---------------------------------------------------------------- paging and envelope

test('paging with limit=37: no gaps, no duplicates, Link exactly when next_offset', async () => {
  const exp = oracle(rows, {});
  assert.equal(exp.ids.length, upcoming.length);
  const seen: string[] = [];
  for (let offset = 0; ;) {
    const { got, body } = await page('/v1/events', { limit: '37', offset: String(offset) });
    assert.equal(body.total, exp.ids.length);
    assert.deepEqual(
      body.events.map((e) => e.id),
      exp.ids.slice(offset, offset + 37),
      `page at ${offset}`,
    );
    seen.push(...body.events.map((e) => e.id));
    const link = got.headers.get('link');
    if (body.next_offset === null) {
      assert.equal(link, null, 'no Link on the last page');
      assert.ok(offset + 37 >= body.total);
      break;
    }
    assert.equal(body.next_offset, offset + 37);
    const m = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
    assert.ok(m?.[1], `Link header: ${link}`);
    const url = new URL(m[1]);
    assert.equal(`${url.origin}${url.pathname}`, `${PUBLIC}/v1/events`);
    assert.equal(url.searchParams.get('offset'), String(body.next_offset));
    assert.equal(url.searchParams.get('limit'), '37');
    offset = body.next_offset;
  }
  assert.equal(new Set(seen).size, seen.length, 'no duplicates');
  assert.deepEqual(seen, exp.ids);
});

test('the Link of an /api search points at the web host and keeps every filter', async () => {
  const city = nth(
    countBy(upcoming, (r) => [r.venue_city]),
    0,
  )[0];
  const category = nth(
    countBy(upcoming, (r) => r.categories),
    0,
  )[0];
  const p = { city, category, limit: '5', offset: '5' };
  const exp = oracle(rows, p);
  assert.ok(exp.ids.length > 10);
  const { got, body } = await page('/api/v1/events', p);
  assert.equal(body.next_offset, 10);
  const m = /^<([^>]+)>; rel="next"$/.exec(got.headers.get('link') ?? '');
  assert.ok(m?.[1], `Link header: ${got.headers.get('link')}`);
  const url = new URL(m[1]);
  assert.equal(`${url.origin}${url.pathname}`, `${WEB}/api/v1/events`);
  assert.deepEqual(Object.fromEntries(url.searchParams), { ...p, offset: '10' });
});

test('an offset past the end: no events, the true total, no next page', async () => {
  const total = oracle(rows, { is_free: 'false' }).ids.length;
  for (const offset of [total, total + 50]) {
    const { got, body } = await page('/v1/events', { is_free: 'false', offset: String(offset) });
    assert.deepEqual(body.events, []);
    assert.equal(body.total, total);
    assert.equal(body.offset, offset);
    assert.equal(body.next_offset, null);
    assert.equal(got.headers.get('link'), null);
  }
});

test('envelope fields', async () => {
  const total = upcoming.length;
  const first = await page('/v1/events', {});
  assert.equal(first.body.limit, 20);
  assert.equal(first.body.offset, 0);
  assert.equal(first.body.next_offset, 20);
  assert.equal(first.body.total, total);
  assert.equal(first.body.truncated, false);
  assert.equal(first.body.attribution.url, WEB);
  assert.ok(first.body.attribution.text.length > 0);
  const { body } = await page('/v1/events', { limit: '7', offset: '3' });
  assert.deepEqual(
    { limit: body.limit, offset: body.offset, next_offset: body.next_offset, n: body.events.length },
    { limit: 7, offset: 3, next_offset: 10, n: 7 },
  );
  assert.deepEqual(
    body.events.map((e) => e.id),
    oracle(rows, {}).ids.slice(3, 10),
  );
});

// ---------------------------------------------------------------- records

function checkRecord(e: EventRecord): void {
  const row = rowById.get(e.id);
  assert.ok(row, `${e.id} is not in the snapshot`);
  assert.ok(e.id.startsWith('bsc_evt_'));
  assert.equal(e.source_url, null);
  assert.equal(e.event_url, `${WEB}/events/${e.id}`);
  if (e.age_range === null) assert.equal(e.age_range_years, null, e.id);
  else assert.deepEqual(e.age_range_years, { min_years: Math.floor(e.age_range.min_months / 12), max_years: Math.floor(e.age_range.max_months / 12) }, e.id);
  assert.match(e.venue.address, ADDRESS_RE, e.id);
  for (const [text, ms] of [
    [e.start_datetime, row.start_ms],
    [e.end_datetime, row.end_ms],
  ] as const) {
    if (text === null) continue;
    const off = OFFSET_RE.exec(text)?.[1];
    assert.ok(off === '-08:00' || off === '-07:00', `${e.id}: ${text}`);
    assert.equal(off, DateTime.fromMillis(ms, { zone: LA }).toFormat('ZZ'), `${e.id}: the LA offset of that instant`);
    assert.equal(Date.parse(text), ms, `${e.id}: ${text}`);
  }
  const line = lineById.get(e.id);
  assert.ok(line, `${e.id} has no records.jsonl line`);
  const rest: Record<string, unknown> = { ...e };
  delete rest.event_url;
  delete rest.distance_km;
  assert.deepEqual(rest, JSON.parse(line), `${e.id} differs from its snapshot record`);
}

test('every record of the unfiltered search keeps the record invariants and equals its snapshot line', async () => {
  const { events } = await expectSearch({});
  assert.equal(events.length, upcoming.length);
  for (const e of events) checkRecord(e);
});

test('geo records are the snapshot records plus event_url and distance_km', async () => {
  const c = clearCentre(10, (n) => n > 20);
  const { events } = await expectSearch({ lat: String(c.lat), lng: String(c.lng), sort: 'distance' });
  for (const e of events) {
    checkRecord(e);
    assert.equal(Math.round((e.distance_km ?? NaN) * 1000) / 1000, e.distance_km, 'distance_km rounded to 0.001');
  }
});

test('/api/v1/events answers byte-identical bodies to /v1/events', async () => {
  const city = nth(
    countBy(upcoming, (r) => [r.venue_city]),
    3,
  )[0];
  const c = clearCentre(10, (n) => n > 20);
  const queries: Params[] = [{}, { city, is_free: 'true', limit: '50' }, { lat: String(c.lat), lng: String(c.lng), sort: 'distance', offset: '5' }];
  for (const p of queries) {
    const a = await page('/v1/events', p);
    const b = await page('/api/v1/events', p);
    assert.ok(a.body.events.length > 0);
    assert.equal(b.got.text, a.got.text, `bodies of ${qs(p)}`);
  }
});

// ---------------------------------------------------------------- demo

describe('demo', () => {
  test('at most 10, default 10, the same records as /v1/events', async () => {
    const city = nth(
      countBy(upcoming, (r) => [r.venue_city]),
      0,
    )[0];
    for (const p of [{}, { city }, { city, age_max: '5' }] as Params[]) {
      const demo = await page('/v1/demo/events', p);
      assert.equal(demo.body.limit, 10);
      assert.ok(demo.body.events.length <= 10);
      const exp = oracle(rows, p);
      assert.ok(exp.ids.length > 10);
      assert.equal(demo.body.total, exp.ids.length);
      assert.equal(demo.body.next_offset, 10);
      const live = await page('/v1/events', p);
      assert.deepEqual(demo.body.events, live.body.events.slice(0, 10));
      assert.deepEqual(
        demo.body.events.map((e) => e.id),
        exp.ids.slice(0, 10),
      );
    }
  });

  test('limit=11 is 400 invalid_parameter naming limit', async () => {
    const p = assertProblem(await get(srv.base, '/v1/demo/events?limit=11'), 400, 'invalid_parameter');
    assert.ok(
      p.errors?.some((x) => x.param === 'limit'),
      JSON.stringify(p),
    );
    const ok = await page('/v1/demo/events', { limit: '10', offset: '10' });
    assert.deepEqual(
      ok.body.events.map((e) => e.id),
      oracle(rows, {}).ids.slice(10, 20),
    );
  });

  test('the 4th call within a minute from one address is 429 rate_limited (DEMO_RATE_PER_MINUTE=3)', async () => {
    for (let i = 0; i < 3; i++) {
      const got = await get(limited.base, '/v1/demo/events');
      assert.equal(got.status, 200, `call ${i + 1}: ${got.text.slice(0, 300)}`);
    }
    const got = await get(limited.base, '/v1/demo/events');
    assertProblem(got, 429, 'rate_limited');
    const retry = got.headers.get('retry-after');
    assert.match(retry ?? '', /^\d+$/);
    assert.ok(Number(retry) >= 1, `Retry-After ${retry}`);
  });
});
