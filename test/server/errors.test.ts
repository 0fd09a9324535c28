// Every kind of bad request over real HTTP against one server on the bundled sample: each answer is a
// problem+json with the right status and code, a sentence naming the parameter, and nothing leaked;
// plus routing (404/405/414), HEAD, oversized and garbage raw requests, and the /api twin.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as v from 'valibot';
import type { ErrorCode } from '../../server/errors.ts';
import { ProblemSchema } from '../../server/schemas.ts';
import { get, sampleFixture, startTestServer, type Fixture, type Got, type TestServer } from './helpers.ts';

const EXCLUDED = ['seasonal', 'festivals'];
/** Text that would mean an internal failure reached the client. */
const LEAKS = ['    at ', 'SELECT', 'FROM events', 'WHERE', '/work/', 'node_modules'];

let fx: Fixture;
let srv: TestServer;
/** A city and a plan-included category that the sample really has. */
let realCity = '';
let realCategory = '';

const mostCommon = (xs: readonly string[]): string => {
  const counts = new Map<string, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  const best = [...counts].sort((a, b) => b[1] - a[1])[0];
  assert.ok(best, 'the sample has values to choose from');
  return best[0];
};

before(async () => {
  fx = await sampleFixture();
  // The demo's rate limit is tested elsewhere; here a 429 would hide the error under test.
  srv = await startTestServer(fx.dataDir, { DEMO_RATE_PER_MINUTE: '10000' });
  realCity = mostCommon(fx.rows.map((r) => r.venue_city));
  realCategory = mostCommon(fx.rows.flatMap((r) => r.categories).filter((c) => !EXCLUDED.includes(c)));
});

after(async () => {
  await srv.stop();
  await fx.cleanup();
});

type Problem = v.InferOutput<typeof ProblemSchema>;

interface Expect {
  readonly status: number;
  readonly code: ErrorCode;
  /** errors[] must hold an entry for one of these (alternatives, for cross-field checks), and detail must name one. */
  readonly param?: readonly string[];
  /** Every one of these must appear in detail. */
  readonly mentions?: readonly string[];
}

const mediaType = (r: Got): string => (r.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

function assertNoLeak(text: string, what: string): void {
  for (const leak of LEAKS) assert.ok(!text.includes(leak), `${what}: body leaks ${JSON.stringify(leak)}: ${text}`);
}

/** The checks every problem answer must pass; returns the parsed body for case-specific ones. */
function assertProblem(r: Got, e: Expect, what: string): Problem {
  assert.equal(r.status, e.status, `${what}: status (body ${r.text})`);
  assert.equal(mediaType(r), 'application/problem+json', `${what}: content-type`);
  const p = v.parse(ProblemSchema, JSON.parse(r.text));
  assert.equal(p.code, e.code, `${what}: code`);
  assert.equal(p.status, r.status, `${what}: status field equals the HTTP status`);
  assert.ok(p.type.endsWith(`#${e.code}`), `${what}: type ${p.type} ends with #${e.code}`);
  // One human sentence: words, ending in a full stop, on one line.
  assert.ok(p.detail.trim().split(/\s+/).length >= 3, `${what}: detail is a sentence: ${p.detail}`);
  assert.match(p.detail, /[.!?]$/, `${what}: detail ends like a sentence: ${p.detail}`);
  assert.ok(!p.detail.includes('\n'), `${what}: detail is one line`);
  if (e.param) {
    const params = (p.errors ?? []).map((x) => x.param);
    assert.ok(
      e.param.some((x) => params.includes(x)),
      `${what}: errors[] names one of ${e.param.join('/')}, got ${JSON.stringify(p.errors)}`,
    );
    assert.ok(
      e.param.some((x) => p.detail.includes(x)),
      `${what}: detail names ${e.param.join(' or ')}: ${p.detail}`,
    );
    for (const x of p.errors ?? []) assert.ok(x.message.trim() !== '', `${what}: errors[].message is not empty`);
  }
  for (const m of e.mentions ?? []) assert.ok(p.detail.includes(m), `${what}: detail mentions ${m}: ${p.detail}`);
  assertNoLeak(r.text, what);
  return p;
}

const bad = (param: string, extra: Partial<Expect> = {}): Expect => ({ status: 400, code: 'invalid_parameter', param: [param], ...extra });

interface Case {
  readonly name: string;
  readonly query: () => string;
  readonly expect: () => Expect;
}

const C = (name: string, query: string | (() => string), expect: Expect | (() => Expect)): Case => ({
  name,
  query: typeof query === 'string' ? () => query : query,
  expect: typeof expect === 'function' ? expect : () => expect,
});

const CASES: readonly Case[] = [
  C('unknown parameter', 'foo=1', { status: 400, code: 'unknown_parameter', param: ['foo'] }),
  C('unknown parameter that differs from a real one only in case', 'LIMIT=5', { status: 400, code: 'unknown_parameter', param: ['LIMIT'] }),
  C('parameter given twice (even with equal values)', 'limit=5&limit=5', bad('limit')),
  C('parameter given twice with different values', () => `city=${encodeURIComponent(realCity)}&city=Oakland`, bad('city')),
  C('broken percent-encoding %zz', 'city=%zz', bad('city')),
  C('percent-encoding that is not UTF-8', 'q=caf%E9', bad('q')),
  C('empty value city=', 'city=', bad('city')),
  C('empty value limit=', 'limit=', bad('limit')),
  C('lat above 90', 'lat=90.5&lng=0', bad('lat')),
  C('lat below -90', 'lat=-91&lng=0', bad('lat')),
  C('lng above 180', 'lat=0&lng=180.01', bad('lng')),
  C('lat=abc', 'lat=abc&lng=-122', bad('lat')),
  C('lat=1e5', 'lat=1e5&lng=-122', bad('lat')),
  C('lat=NaN', 'lat=NaN&lng=-122', bad('lat')),
  C('lat=Infinity', 'lat=Infinity&lng=-122', bad('lat')),
  C('lat without lng', 'lat=37.8', bad('lng', { param: ['lat', 'lng'], mentions: ['lat', 'lng'] })),
  C('lng without lat', 'lng=-122.3', bad('lat', { param: ['lat', 'lng'], mentions: ['lat', 'lng'] })),
  C('radius_km without lat/lng', 'radius_km=5', bad('radius_km', { mentions: ['lat'] })),
  C('radius_km=0', 'lat=37.8&lng=-122.3&radius_km=0', bad('radius_km')),
  C('radius_km=501', 'lat=37.8&lng=-122.3&radius_km=501', bad('radius_km')),
  C('radius_km=-1', 'lat=37.8&lng=-122.3&radius_km=-1', bad('radius_km')),
  C('age_min=19', 'age_min=19', bad('age_min')),
  C('age_min=-1', 'age_min=-1', bad('age_min')),
  C('age_min=2.5', 'age_min=2.5', bad('age_min')),
  C('age_max=19', 'age_max=19', bad('age_max')),
  C('age_min > age_max', 'age_min=10&age_max=5', bad('age_max', { param: ['age_min', 'age_max'], mentions: ['age_min', 'age_max'] })),
  C('unknown category is named', 'category=underwater-basket-weaving', bad('category', { mentions: ['underwater-basket-weaving'] })),
  C('unknown category among known ones is named', () => `category=${realCategory},nope`, bad('category', { mentions: ['nope'] })),
  C('category=seasonal', 'category=seasonal', { status: 403, code: 'category_not_in_plan', mentions: ['seasonal'] }),
  C('category=festivals', 'category=festivals', { status: 403, code: 'category_not_in_plan', mentions: ['festivals'] }),
  C('an excluded category next to an included one', () => `category=${realCategory},seasonal`, {
    status: 403,
    code: 'category_not_in_plan',
    mentions: ['seasonal'],
  }),
  C('city=Atlantis is named', 'city=Atlantis', bad('city', { mentions: ['Atlantis'] })),
  C('Atlantis next to a real city is named', () => `city=${encodeURIComponent(realCity)},Atlantis`, bad('city', { mentions: ['Atlantis'] })),
  C('q empty', 'q=', bad('q')),
  C('q of 201 characters', `q=${'a'.repeat(201)}`, bad('q')),
  C('q with no letters or digits', 'q=!!!', bad('q')),
  C('is_free=yes', 'is_free=yes', bad('is_free')),
  C('start_date=2026-02-30', 'start_date=2026-02-30', bad('start_date')),
  C('start_date=2026/12/01', 'start_date=2026/12/01', bad('start_date')),
  C('start_date with a time but no offset', 'start_date=2026-12-01T10:00:00', bad('start_date')),
  C(
    'end_date before start_date',
    'start_date=2026-12-05&end_date=2026-12-01',
    bad('end_date', { param: ['start_date', 'end_date'], mentions: ['start_date', 'end_date'] }),
  ),
  C(
    'end instant before start instant',
    'start_date=2026-12-05T10:00:00-08:00&end_date=2026-12-05T09:59:59-08:00',
    bad('end_date', { param: ['start_date', 'end_date'] }),
  ),
  C('week=2026-W54', 'week=2026-W54', bad('week')),
  C('week=2026-W00', 'week=2026-W00', bad('week')),
  // 2025 starts on a Wednesday and is not a leap year, so it has only 52 ISO weeks.
  C('week=2025-W53', 'week=2025-W53', bad('week')),
  C('week=someday', 'week=someday', bad('week')),
  C('week with start_date', 'week=current&start_date=2026-12-01', bad('week', { param: ['week', 'start_date'], mentions: ['week', 'start_date'] })),
  C('week with end_date', 'week=next&end_date=2026-12-01', bad('week', { param: ['week', 'end_date'], mentions: ['week', 'end_date'] })),
  C('sort=distance without lat/lng', 'sort=distance', bad('sort', { mentions: ['lat'] })),
  C('sort=price', 'sort=price', bad('sort')),
  C('limit=0', 'limit=0', bad('limit')),
  C('limit=101', 'limit=101', bad('limit')),
  C('limit=abc', 'limit=abc', bad('limit')),
  C('offset=-1', 'offset=-1', bad('offset')),
  C('offset=100001', 'offset=100001', bad('offset')),
];

describe('parameter errors on /v1/events', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const path = `/v1/events?${c.query()}`;
      assertProblem(await get(srv.base, path), c.expect(), path);
    });
  }

  test('several errors at once: errors[] lists each parameter', async () => {
    const path = '/v1/events?lat=100&lng=0&limit=abc&offset=-1&is_free=maybe&sort=price&week=2026-W99';
    const p = assertProblem(await get(srv.base, path), bad('lat'), path);
    const params = new Set((p.errors ?? []).map((e) => e.param));
    for (const want of ['lat', 'limit', 'offset', 'is_free', 'sort', 'week'])
      assert.ok(params.has(want), `errors[] lists ${want}: ${JSON.stringify(p.errors)}`);
    assert.equal(p.errors?.length, params.size, 'one entry per parameter');
  });

  test('the demo caps limit at 10', async () => {
    assertProblem(await get(srv.base, '/v1/demo/events?limit=11'), bad('limit'), '/v1/demo/events?limit=11');
    const ok = await get(srv.base, '/v1/demo/events?limit=10');
    assert.equal(ok.status, 200, ok.text);
  });

  test('the values just inside every bound are accepted', async () => {
    // The other side of each range above, so an off-by-one in either direction fails one test or the other.
    // 2026 starts on a Thursday, so it has a W53.
    const inside = [
      'lat=-90&lng=180&radius_km=500',
      'lat=90&lng=-180&radius_km=0.001',
      'age_min=0&age_max=18',
      'age_min=7&age_max=7',
      `q=${'a'.repeat(200)}`,
      'is_free=1',
      'is_free=false',
      'start_date=2026-12-05&end_date=2026-12-05',
      'start_date=2028-02-29',
      'start_date=2026-12-01T10:00:00-08:00',
      'week=2026-W53',
      'week=2026-W01',
      'limit=1',
      'limit=100',
      'offset=100000',
      'offset=0',
      'sort=distance&lat=37.8&lng=-122.3',
    ];
    for (const q of inside) {
      const r = await get(srv.base, `/v1/events?${q}`);
      assert.equal(r.status, 200, `${q}: ${r.text.slice(0, 300)}`);
    }
  });
});

describe('routing and methods', () => {
  for (const path of ['/v1/events/', '/v1/Events', '/v2/events', '/v1', '/api', '/api/nope', '/api/v1/events/', '/api/v1/events/nope']) {
    test(`unknown route ${path} -> 404 not_found`, async () => {
      assertProblem(await get(srv.base, path), { status: 404, code: 'not_found' }, path);
    });
  }

  // Everything outside the API's paths is the website's: its 404 is a page, not a problem.
  for (const path of ['/nope', '/v1events', '/apix', '/healthz/x']) {
    test(`unknown website page ${path} -> HTML 404`, async () => {
      const r = await get(srv.base, path);
      assert.equal(r.status, 404, path);
      assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8', path);
    });
  }

  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    for (const path of ['/v1/events', '/api/v1/events', '/v1/categories', '/healthz']) {
      test(`${method} ${path} -> 405 with Allow: GET, HEAD`, async () => {
        const r = await get(srv.base, path, { method });
        assertProblem(r, { status: 405, code: 'method_not_allowed', mentions: [method] }, `${method} ${path}`);
        assert.equal(r.headers.get('allow'), 'GET, HEAD');
      });
    }
  }

  test('HEAD /v1/events: 200, no body, the headers of the GET', async () => {
    const path = '/v1/events?limit=7';
    const init = { headers: { 'accept-encoding': 'identity' } };
    const g = await get(srv.base, path, init);
    const h = await get(srv.base, path, { ...init, method: 'HEAD' });
    assert.equal(g.status, 200);
    assert.equal(h.status, 200);
    assert.equal(h.text, '');
    assert.ok(g.text.length > 0);
    assert.equal(h.headers.get('content-length'), String(Buffer.byteLength(g.text)), 'HEAD announces the length of the GET body');
    assert.equal(h.headers.get('content-type'), g.headers.get('content-type'));
    assert.ok(g.headers.get('link'), 'the first page of the sample has a next page');
    for (const [name, value] of g.headers) {
      if (name === 'date' || name === 'transfer-encoding') continue;
      assert.equal(h.headers.get(name), value, `HEAD has the GET's ${name}`);
    }
  });

  test('HEAD of a bad request: the problem status and headers, no body', async () => {
    const g = await get(srv.base, '/v1/events?foo=1');
    const h = await get(srv.base, '/v1/events?foo=1', { method: 'HEAD' });
    assert.equal(h.status, 400);
    assert.equal(h.text, '');
    assert.equal(mediaType(h), 'application/problem+json');
    assert.equal(h.headers.get('content-length'), String(Buffer.byteLength(g.text)));
  });

  test('a URL over 8 KiB -> 414 request_too_large; exactly 8 KiB is not', async () => {
    const prefix = '/v1/events?q=';
    const exact = prefix + 'a'.repeat(8192 - prefix.length);
    const over = prefix + 'a'.repeat(8193 - prefix.length);
    const atLimit = await get(srv.base, exact);
    // q is far too long, but that is a parameter error, not a size one.
    assertProblem(atLimit, bad('q'), '8192-byte URL');
    assertProblem(await get(srv.base, over), { status: 414, code: 'request_too_large' }, '8193-byte URL');
    assertProblem(await get(srv.base, `/v1/events?foo=${'x'.repeat(40_000)}`), { status: 414, code: 'request_too_large' }, '40 KB URL');
  });
});

/** What came back on a raw connection: the bytes and whether the server closed it before we gave up. */
function rawExchange(base: string, data: string, waitMs = 2_000): Promise<{ text: string; closed: boolean }> {
  const port = Number(new URL(base).port);
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let text = '';
    let settled = false;
    const done = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve({ text, closed });
    };
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      // One complete answer is all we need; keep-alive would otherwise hold the socket open.
      if (text.includes('\r\n\r\n')) done(false);
    });
    sock.on('error', () => done(true));
    sock.on('close', () => done(true));
    sock.setTimeout(waitMs, () => done(false));
    sock.write(data, 'latin1');
  });
}

const statusOf = (raw: string): number | null => {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
  return m ? Number(m[1]) : null;
};

async function assertAlive(): Promise<void> {
  const r = await get(srv.base, '/healthz');
  assert.equal(r.status, 200, 'the server still answers /healthz');
}

describe('hostile raw requests', () => {
  test('a 64 KiB header: 431/400 or a closed connection, and the server stays up', async () => {
    const { text, closed } = await rawExchange(srv.base, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    const status = statusOf(text);
    assert.ok(
      status === 431 || status === 400 || (status === null && closed),
      `expected 431/400 or a close, got ${status ?? 'nothing'} (closed ${closed}): ${text.slice(0, 200)}`,
    );
    await assertAlive();
  });

  for (const [name, data] of [
    ['a garbage request line', 'GARBAGE\r\n\r\n'],
    ['binary noise', '\x00\x01\x02\xff\xfe\r\n\r\n'],
    ['an unknown HTTP version', 'GET /healthz HTTP/9.9\r\n\r\n'],
    ['a request line without a target', 'GET\r\nHost: x\r\n\r\n'],
    ['a header without a colon', 'GET /healthz HTTP/1.1\r\nHost x\r\n\r\n'],
    ['a truncated request', 'GET /v1/events?limit=5 HTTP/1.1\r\nHost: x\r\n'],
  ] as const) {
    test(`${name} does not take the server down`, async () => {
      const { text } = await rawExchange(srv.base, data, 500);
      const status = statusOf(text);
      // Whatever it answers (if anything), it is not a success for nonsense, nor a server failure.
      if (status !== null) assert.ok(status >= 400 && status < 500, `${name}: got ${status}`);
      await assertAlive();
    });
  }
});

describe('the /api twin', () => {
  for (const q of ['foo=1', 'lat=100&lng=0&limit=abc', 'category=seasonal', 'city=Atlantis']) {
    test(`/api/v1/events?${q} gives the same problem`, async () => {
      const direct = await get(srv.base, `/v1/events?${q}`);
      const twin = await get(srv.base, `/api/v1/events?${q}`);
      assert.ok(direct.status >= 400);
      assert.equal(twin.status, direct.status);
      assert.equal(mediaType(twin), 'application/problem+json');
      assert.deepEqual(v.parse(ProblemSchema, JSON.parse(twin.text)), v.parse(ProblemSchema, JSON.parse(direct.text)));
    });
  }
});

describe('the server log after all of the above', () => {
  test('no error was logged and no request answered 5xx', () => {
    // pino level 50 is error: an unhandled exception inside a handler is logged there.
    const errors = srv.logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
    assert.deepEqual(errors, []);
    const requests = srv.logs.filter((l) => l.msg === 'request');
    assert.ok(requests.length > 100, 'the access log saw the requests of this file');
    assert.deepEqual(
      requests.filter((l) => typeof l.status === 'number' && l.status >= 500),
      [],
    );
  });
});
