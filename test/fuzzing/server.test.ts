// Random and malformed query strings against one running server, over real HTTP: no 5xx but 503
// `unavailable`, every failure a parseable problem, every search answer a valid envelope; and random
// valid searches always page consistently. Time-budgeted, like the parser fuzzing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import * as v from 'valibot';
import { ROUTES } from '../../server/start/main.ts';
import { isApiPath } from '../../server/app.ts';
import { CategoryListSchema, CityListSchema, EventListSchema, HealthSchema, ProblemSchema } from '../../server/schemas.ts';
import { get, sampleFixture, startTestServer, type Fixture, type Got, type TestServer } from '../server/helpers.ts';

const BUDGET_MS = 13_000;
const VALID_BUDGET_MS = 6_000;
const EXCLUDED = ['seasonal', 'festivals'];
const SEARCH_PATHS = ['/v1/events', '/v1/demo/events'];

let fx: Fixture;
let srv: TestServer;
let cities: string[] = [];
let categories: string[] = [];

before(async () => {
  fx = await sampleFixture();
  // The demo route should answer searches here, not mostly 429s.
  srv = await startTestServer(fx.dataDir, { DEMO_RATE_PER_MINUTE: '100000' });
  cities = v.parse(CityListSchema, (await get(srv.base, '/v1/cities')).json).cities.map((c) => c.name);
  categories = v
    .parse(CategoryListSchema, (await get(srv.base, '/v1/categories')).json)
    .categories.map((c) => c.slug)
    .filter((s) => !EXCLUDED.includes(s));
  assert.ok(cities.length > 3 && categories.length > 3, 'the sample has cities and categories to draw from');
});

after(async () => {
  await srv.stop();
  await fx.cleanup();
});

// ------------------------------------------------------------------ generators

const PARAMS = [
  'city',
  'lat',
  'lng',
  'radius_km',
  'age_min',
  'age_max',
  'category',
  'q',
  'is_free',
  'start_date',
  'end_date',
  'week',
  'sort',
  'limit',
  'offset',
  'api_key',
];
const UNKNOWN = ['foo', 'LIMIT', 'page', 'categories', 'city[]', '', ' ', 'q ', '%71', '%zz', 'ç', 'limit%00'];

const UNRESERVED = /^[\w.~-]$/;
/** Percent-encodes the UTF-8 bytes (lone surrogates become U+FFFD, as a browser would send them). */
const enc = (s: string): string =>
  [...Buffer.from(s, 'utf8')]
    .map((b) => {
      const ch = String.fromCharCode(b);
      return UNRESERVED.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');

/** Values sent as-is: broken escapes, edge numbers, separators. Only characters a URL carries verbatim. */
const RAW = [
  '%',
  '%z',
  '%zz',
  '%E9',
  '%C3',
  '%C3%28',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%00',
  '%2C',
  '%25',
  '%2B',
  '+',
  '++',
  ',',
  ',,,',
  'a,,b',
  '%20,%20',
  '-0',
  '+0',
  '0',
  '00',
  '007',
  '1e309',
  '-1e309',
  '1e-400',
  '0x10',
  '.5',
  '5.',
  '-',
  '+5',
  '1_000',
  'NaN',
  'Infinity',
  '-Infinity',
  '9'.repeat(40),
  '9'.repeat(400),
  '-' + '9'.repeat(30),
  '0.' + '0'.repeat(30) + '1',
  '90.000000000000001',
  '180',
  '-180.0',
  '500',
  '500.0000001',
  '2026-W53',
  '2026-W54',
  '2025-W53',
  '0000-W01',
  '9999-W52',
  'current',
  'next',
  'CURRENT',
  'last',
  '2026-02-29',
  '2028-02-29',
  '2026-13-01',
  '0000-01-01',
  '9999-12-31',
  '2026-12-01T10:00:00Z',
  '2026-12-01T10:00:00-08:00',
  '2026-12-01t10:00:00+14:00',
  '2026-12-01T10:00:00.123456789-08:00',
  '2026-12-01T10:00:00',
  '2026-12-01T25:00:00Z',
  '2026-12-01%2010:00:00Z',
  '1970-01-01',
  '2026-12-01T10:00:00%2B08:00',
  'true',
  'false',
  'TRUE',
  '1',
  '0',
  'yes',
  'start',
  'distance',
  'Distance',
  'seasonal',
  'festivals',
  'seasonal,festivals',
  'bsc_live_' + 'a'.repeat(32),
  '%27%20OR%201%3D1--',
  '%3Cscript%3E',
  '%E2%80%AE',
  '%EF%BB%BF',
  '%CC%81',
];

const values = (): fc.Arbitrary<string> => {
  const word = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.constantFrom(...cities),
    fc.constantFrom(...cities).map((c) => c.toUpperCase().normalize('NFD')),
    fc.constantFrom(...categories),
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...RAW) },
    { weight: 3, arbitrary: word.map(enc) },
    { weight: 2, arbitrary: fc.array(word, { maxLength: 5 }).map((ws) => ws.map(enc).join(',')) },
    { weight: 2, arbitrary: fc.integer({ min: -1000, max: 200_000 }).map(String) },
    { weight: 1, arbitrary: fc.double().map((d) => enc(String(d))) },
    { weight: 1, arbitrary: fc.bigInt().map(String) },
    { weight: 1, arbitrary: fc.double({ min: -200, max: 200, noNaN: true }).map((d) => d.toFixed(6)) },
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }).map(enc) },
  );
};

const entry = (): fc.Arbitrary<string> =>
  fc
    .record({
      name: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...PARAMS) }, { weight: 1, arbitrary: fc.constantFrom(...UNKNOWN) }),
      value: values(),
      form: fc.constantFrom('pair', 'pair', 'pair', 'bare', 'double-eq'),
    })
    .map(({ name, value, form }) => (form === 'bare' ? name : form === 'double-eq' ? `${name}==${value}` : `${name}=${value}`));

/** A query string: entries joined by '&' (sometimes doubled), some keys repeated. */
const queryString = (): fc.Arbitrary<string> =>
  fc.record({ entries: fc.array(entry(), { maxLength: 8 }), dup: fc.boolean(), sep: fc.constantFrom('&', '&', '&', '&&') }).map(({ entries, dup, sep }) => {
    const all = dup && entries[0] !== undefined ? [...entries, entries[0]] : entries;
    return all.join(sep);
  });

const ROUTE_PATHS = ROUTES.map((r) => r.path);
const BOGUS_PATHS = [
  '/',
  '/v1',
  '/v1/events/',
  '/v1/events.csv',
  '/v1//events',
  '/%zz',
  '/v1/events%00',
  '/api',
  '/api/',
  '/v1/EVENTS',
  '/v1/events/..',
  '/api/api/v1/events',
  '/v1/events/bsc_evt_%zz',
];
/** The website's pages: every path outside the API's takes any query too. */
const WEB_PATHS = [
  '/',
  '/events',
  '/events/',
  '/events.ics',
  '/cities/berkeley',
  '/cities/%zz',
  '/categories/storytime',
  '/docs',
  '/docs/errors',
  '/events/bsc_evt_00000000000000000000',
  '/events/x.ics',
  '/static/site.css',
  '/%zz',
  '/events%00',
];
const paths = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SEARCH_PATHS).chain((p) => fc.constantFrom(p, `/api${p}`)) },
  { weight: 3, arbitrary: fc.constantFrom(...ROUTE_PATHS).chain((p) => fc.constantFrom(p, `/api${p}`)) },
  { weight: 1, arbitrary: fc.constantFrom(...BOGUS_PATHS) },
  { weight: 2, arbitrary: fc.constantFrom(...WEB_PATHS) },
);

// ------------------------------------------------------------------ checks

const mediaType = (r: Got): string => (r.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** A website answer: a page (or a static file or calendar) whatever the query, never a failure but 503, always the security headers on HTML. */
function checkPage(at: string, r: Got): void {
  assert.ok(r.status < 500 || r.status === 503, `no server failure: ${at}`);
  const type = mediaType(r);
  if (type === 'text/html') {
    assert.ok(r.text.startsWith('<!doctype html>'), `a whole page: ${at}`);
    assert.match(r.headers.get('content-security-policy') ?? '', /object-src 'none'/, at);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', at);
  } else assert.ok(r.status === 200 && ['text/calendar', 'text/css', 'text/plain'].includes(type), `a page, a calendar or a file: ${at}`);
}

function checkAnswer(url: string, path: string, r: Got): void {
  const at = `${url} -> ${r.status} ${r.text.slice(0, 300)}`;
  if (!isApiPath(path)) return checkPage(at, r);
  if (r.status >= 500) {
    assert.equal(r.status, 503, `no server failure: ${at}`);
    assert.equal(v.parse(ProblemSchema, JSON.parse(r.text)).code, 'unavailable', at);
  }
  if (r.status < 200 || r.status >= 300) {
    assert.equal(mediaType(r), 'application/problem+json', at);
    const p = v.parse(ProblemSchema, JSON.parse(r.text));
    assert.equal(p.status, r.status, at);
    return;
  }
  assert.equal(r.status, 200, at);
  const route = path.startsWith('/api/') ? path.slice(4) : path;
  if (SEARCH_PATHS.includes(route)) {
    assert.equal(mediaType(r), 'application/json', at);
    const body = v.parse(EventListSchema, JSON.parse(r.text));
    assert.ok(body.events.length <= body.limit && body.total >= body.events.length, at);
  } else if (route === '/v1/categories') v.parse(CategoryListSchema, JSON.parse(r.text));
  else if (route === '/v1/cities') v.parse(CityListSchema, JSON.parse(r.text));
  else if (route === '/healthz' || route === '/readyz') v.parse(HealthSchema, JSON.parse(r.text));
}

async function assertAlive(): Promise<void> {
  const r = await get(srv.base, '/healthz');
  assert.equal(r.status, 200);
}

describe('the server under random requests', () => {
  test('any query on any path: no 5xx but 503, problems parse, envelopes parse', async () => {
    const seen = { ok: 0, problem: 0 };
    await fc.assert(
      fc.asyncProperty(paths, queryString(), async (path, query) => {
        const url = query === '' ? path : `${path}?${query}`;
        const r = await get(srv.base, url);
        checkAnswer(url, path, r);
        if (r.status === 200) seen.ok++;
        else seen.problem++;
      }),
      { interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false, numRuns: 100_000 },
    );
    // Both sides of the property were exercised, or the run proved little.
    assert.ok(seen.ok > 10 && seen.problem > 10, `200s ${seen.ok}, problems ${seen.problem}`);
    await assertAlive();
  });

  test('random valid searches: 200, and the page agrees with total, limit and offset', async () => {
    let nonEmpty = 0;
    const ages = fc.tuple(fc.integer({ min: 0, max: 18 }), fc.integer({ min: 0, max: 18 })).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
    const search = fc.record(
      {
        prefix: fc.constantFrom('', '/api'),
        limit: fc.integer({ min: 1, max: 100 }),
        offset: fc.integer({ min: 0, max: 300 }),
        category: fc.uniqueArray(fc.constantFrom(...categories), { minLength: 1, maxLength: 3 }),
        city: fc.uniqueArray(fc.constantFrom(...cities), { minLength: 1, maxLength: 3 }),
        is_free: fc.constantFrom('true', 'false', '1', '0'),
        ages,
        ageForm: fc.constantFrom('both', 'min', 'max'),
      },
      { requiredKeys: ['prefix'] },
    );
    await fc.assert(
      fc.asyncProperty(search, async (s) => {
        const params = new URLSearchParams();
        if (s.limit !== undefined) params.set('limit', String(s.limit));
        if (s.offset !== undefined) params.set('offset', String(s.offset));
        if (s.category) params.set('category', s.category.join(','));
        if (s.city) params.set('city', s.city.join(','));
        if (s.is_free !== undefined) params.set('is_free', s.is_free);
        if (s.ages) {
          if (s.ageForm !== 'max') params.set('age_min', String(s.ages[0]));
          if (s.ageForm !== 'min') params.set('age_max', String(s.ages[1]));
        }
        const url = `${s.prefix}/v1/events?${params.toString()}`;
        const r = await get(srv.base, url);
        assert.equal(r.status, 200, `${url}: ${r.text.slice(0, 300)}`);
        const body = v.parse(EventListSchema, JSON.parse(r.text));
        const limit = s.limit ?? 20;
        const offset = s.offset ?? 0;
        assert.equal(body.limit, limit, url);
        assert.equal(body.offset, offset, url);
        assert.ok(body.total >= body.events.length, url);
        assert.ok(body.events.length <= limit, url);
        assert.equal(body.events.length, Math.max(0, Math.min(limit, body.total - offset)), `${url}: a full page unless the matches run out`);
        assert.equal(body.next_offset, offset + limit < body.total ? offset + limit : null, url);
        for (const e of body.events) assert.ok(!e.categories.some((c) => EXCLUDED.includes(c)), `${url}: ${e.id} is in an excluded category`);
        if (body.events.length > 0) nonEmpty++;
      }),
      { interruptAfterTimeLimit: VALID_BUDGET_MS, markInterruptAsFailure: false, numRuns: 100_000 },
    );
    assert.ok(nonEmpty > 5, `some random searches found events (${nonEmpty})`);
    await assertAlive();
  });
});
