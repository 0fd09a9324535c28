// Quota and metering over real HTTP against a real in-process server and its real ledger: the
// exact monthly cap under concurrency, truncation then 429, quota headers, what counts and what does
// not, shared org quota, plan exclusions, /v1/usage, month rollover and the per-key request rate.
// Run once per ledger backend: the embedded one (LEDGER_DIR) and PostgreSQL (DATABASE_URL, a
// database of its own; skipped with the reason where no PostgreSQL server answers).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import * as v from 'valibot';
import { QUOTA_HELD_RETRY_S } from '../../server/quota.ts';
import { EventListSchema, ProblemSchema, UsageSchema } from '../../server/schemas.ts';
import { ledgerBackends, testLedger, type Provisioned, type TestLedger } from '../ledger.ts';
import { get, NOW, sampleFixture, startTestServer, type Fixture, type Got, type OracleRow, type TestServer } from './helpers.ts';
import type { Plan } from '../../ledger/accounts.ts';

type EventList = v.InferOutput<typeof EventListSchema>;
type Usage = v.InferOutput<typeof UsageSchema>;

const EXCLUDED = ['festivals', 'seasonal'];
const CAP = 25;
// The instants of the pinned month, written out rather than derived, so the server's own period
// arithmetic is checked against an independent statement of it.
const MONTH_START_ISO = '2026-11-01T00:00:00-07:00';
const RESET_ISO = '2026-12-01T00:00:00-08:00';
const MONTH_START_MS = Date.parse(MONTH_START_ISO);
const RESET_MS = Date.parse(RESET_ISO);
const RESET_S = RESET_MS / 1000;
/** Seconds from the pinned now to the reset, and in the whole month (November gains an hour in LA). */
const TO_RESET_S = (RESET_MS - NOW.getTime()) / 1000;
const MONTH_S = (RESET_MS - MONTH_START_MS) / 1000;
const TODAY = '2026-11-21';

let fx: Fixture;
/** The server and the ledger of the backend whose suite is running (the suites run one after the other). */
let srv: TestServer;
/** A ledger of the test's own, so the rollover test can restart servers on it. */
let ledger: TestLedger;
/** Not-ended events in start order: under Community's exclusions, and all of them (partner). */
let communityUp: OracleRow[];
let partnerUp: OracleRow[];

const byStart = (a: OracleRow, b: OracleRow): number => a.start_ms - b.start_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const isExcluded = (r: { categories: readonly string[] }): boolean => r.categories.some((c) => EXCLUDED.includes(c));

before(async () => {
  fx = await sampleFixture();
  partnerUp = fx.rows.filter((r) => r.end_ms >= NOW.getTime()).sort(byStart);
  communityUp = partnerUp.filter((r) => !isExcluded(r));
  // Every query below pages well inside the results; a tiny sample would make these tests vacuous.
  assert.ok(communityUp.length > 3000, `the sample has ${communityUp.length} upcoming community events`);
  assert.ok(partnerUp.length > communityUp.length, 'the sample has upcoming seasonal/festivals events');
});

after(async () => {
  await fx?.cleanup();
});

// ---------------------------------------------------------------- helpers

function community(org?: string): Promise<Provisioned> {
  return ledger.provisionKey({ plan: 'community', ...(org === undefined ? {} : { org }) });
}

/** A request presenting `key` (and no other). */
function call(key: string, pathAndQuery: string, init: RequestInit = {}): Promise<Got> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${key}`);
  return get(srv.base, pathAndQuery, { ...init, headers });
}

function page(g: Got, what: string): EventList {
  assert.equal(g.status, 200, `${what}: ${g.status} ${g.text.slice(0, 400)}`);
  return v.parse(EventListSchema, g.json);
}

function problem(g: Got, status: number, code: string, what: string): void {
  assert.equal(g.status, status, `${what}: ${g.status} ${g.text.slice(0, 400)}`);
  const p = v.parse(ProblemSchema, g.json);
  assert.equal(p.code, code, what);
  assert.equal(p.status, status, what);
}

async function usageOf(key: string): Promise<Usage> {
  const g = await call(key, '/v1/usage');
  assert.equal(g.status, 200, `/v1/usage: ${g.status} ${g.text.slice(0, 400)}`);
  return v.parse(UsageSchema, g.json);
}

function header(g: Got, name: string): string {
  const h = g.headers.get(name);
  assert.ok(h !== null, `missing ${name} (status ${g.status})`);
  return h;
}

function intHeader(g: Got, name: string): number {
  const h = header(g, name);
  assert.match(h, /^\d+$/, `${name}: ${h}`);
  return Number(h);
}

const ids = (xs: readonly { id: string }[]): string[] => xs.map((x) => x.id);

/** The quota headers a capped Community answer must carry, `remaining` after it. */
function assertCommunityHeaders(g: Got, remaining: number, what: string): void {
  assert.equal(header(g, 'x-quota-limit'), String(CAP), what);
  assert.equal(header(g, 'x-quota-remaining'), String(remaining), what);
  assert.equal(intHeader(g, 'x-quota-reset'), RESET_S, what);
  assert.equal(header(g, 'ratelimit-policy'), `"community";q=${CAP};w=${MONTH_S}`, what);
  const m = /^"community";r=(\d+);t=(\d+)$/.exec(header(g, 'ratelimit'));
  assert.ok(m, `${what}: RateLimit ${g.headers.get('ratelimit')}`);
  assert.equal(Number(m[1]), remaining, `${what}: RateLimit r`);
  assert.ok(Math.abs(Number(m[2]) - TO_RESET_S) <= 1, `${what}: RateLimit t=${m[2]}, want ${TO_RESET_S}`);
}

function todayOf(u: Usage): { records: number; requests: number } {
  const d = u.by_day.find((x) => x.date === TODAY);
  assert.ok(d, `by_day has ${TODAY}`);
  return { records: d.records, requests: d.requests };
}

/**
 * Fires `queries` all at once on one key, then checks the cap from what came back: records over
 * every 200 sum to exactly the cap, the rest are 429 quota_exhausted, each 200 is the oracle's
 * page (cut short only with truncated:true), and /v1/usage agrees.
 */
async function burst(key: string, queries: readonly { offset: number; qs: string }[]): Promise<void> {
  const answers = await Promise.all(queries.map((q) => call(key, `/v1/events?${q.qs}`)));
  let received = 0;
  let oks = 0;
  let truncated = 0;
  answers.forEach((g, i) => {
    const q = queries[i];
    assert.ok(q);
    const what = `burst #${i} ${q.qs}`;
    if (g.status === 429) {
      problem(g, 429, 'quota_exhausted', what);
      assert.equal(header(g, 'x-quota-remaining'), '0', what);
      assert.ok(intHeader(g, 'retry-after') >= 1, what);
      return;
    }
    const body = page(g, what);
    oks += 1;
    received += body.events.length;
    const n = body.events.length;
    assert.ok(n >= 1 && n <= 20, `${what}: ${n} events`);
    assert.deepEqual(ids(body.events), ids(communityUp.slice(q.offset, q.offset + n)), `${what}: the page is the oracle's`);
    assert.equal(body.total, communityUp.length, what);
    assert.equal(body.limit, 20, what);
    assert.equal(body.offset, q.offset, what);
    assert.equal(body.next_offset, q.offset + n, what);
    assert.equal(body.truncated, n < 20, `${what}: a short page of a full query is a quota cut`);
    assert.equal(g.headers.get('x-quota-truncated'), n < 20 ? 'true' : null, what);
    if (body.truncated) truncated += 1;
    for (const e of body.events) assert.ok(!isExcluded(e), `${what}: ${e.id} is excluded from community`);
  });
  assert.equal(received, CAP, `records received over all ${oks} answers with 200`);
  assert.ok(truncated >= 1, 'at least one answer was cut by the quota');
  const u = await usageOf(key);
  assert.equal(u.records.used, CAP);
  assert.equal(u.records.remaining, 0);
  assert.equal(u.requests.count, oks, 'requests counted = answers with 200');
  assert.deepEqual(todayOf(u), { records: CAP, requests: oks });
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

for (const backend of await ledgerBackends()) {
  describe(`on ${backend.name}`, { skip: backend.skip }, () => {
    before(async () => {
      ledger = await testLedger(backend, 'quota');
      srv = await startTestServer(fx.dataDir, ledger.env);
      assert.equal(srv.config.database?.url ?? null, ledger.databaseUrl, 'the server meters on the backend of the suite');
    });

    after(async () => {
      await srv?.stop();
      await ledger?.drop();
    });

    // ---------------------------------------------------------------- exact cap under concurrency

    describe('the cap holds exactly under concurrency', () => {
      test('50 identical simultaneous requests on a fresh community key receive 25 records in all', async () => {
        await burst(
          (await community()).key,
          range(50).map(() => ({ offset: 0, qs: 'limit=20' })),
        );
      });

      test('50 different simultaneous queries receive 25 records in all', async () => {
        await burst(
          (await community()).key,
          range(50)
            .map((i) => 40 + 20 * i + (i % 7))
            .map((o) => ({ offset: o, qs: `limit=20&offset=${o}` })),
        );
      });

      test('a mix of cached and uncached queries receives 25 records in all', async () => {
        const offsets = range(50).map((i) => 1500 + 13 * i);
        // Half the pages are answered once (same exclusions, no cap) so they sit in the response cache.
        for (const [i, o] of offsets.entries()) {
          if (i % 2 !== 0) continue;
          const warm = page(await get(srv.base, `/v1/events?limit=20&offset=${o}`), `warm offset ${o}`);
          assert.deepEqual(ids(warm.events), ids(communityUp.slice(o, o + 20)));
        }
        await burst(
          (await community()).key,
          offsets.map((o) => ({ offset: o, qs: `limit=20&offset=${o}` })),
        );
      });
    });

    // ---------------------------------------------------------------- sequential truncation

    test('sequential pages: 10, 10, then cut to 5, then 429 until the month resets', async () => {
      const { key } = await community();
      const base = 200;
      const a = await call(key, `/v1/events?limit=10&offset=${base}`);
      const pa = page(a, 'first');
      assert.deepEqual(ids(pa.events), ids(communityUp.slice(base, base + 10)));
      assert.equal(pa.truncated, false);
      assert.equal(a.headers.get('x-quota-truncated'), null);
      assertCommunityHeaders(a, 15, 'first');

      const b = await call(key, `/v1/events?limit=10&offset=${base + 10}`);
      const pb = page(b, 'second');
      assert.deepEqual(ids(pb.events), ids(communityUp.slice(base + 10, base + 20)));
      assert.equal(pb.truncated, false);
      assertCommunityHeaders(b, 5, 'second');

      const off = base + 20;
      const c = await call(key, `/v1/events?limit=10&offset=${off}`);
      const pc = page(c, 'third');
      assert.equal(pc.events.length, 5);
      assert.equal(pc.truncated, true);
      assert.equal(header(c, 'x-quota-truncated'), 'true');
      assert.equal(pc.limit, 10, 'limit echoes the request');
      assert.equal(pc.offset, off);
      assert.equal(pc.next_offset, off + 5);
      assert.equal(pc.total, communityUp.length, 'total is the true total');
      assertCommunityHeaders(c, 0, 'third');
      assert.match(header(c, 'link'), new RegExp(`[?&]offset=${off + 5}[&>]`), 'Link rel=next goes on from what was delivered');
      // The cut page is the head of the page an unmetered key gets for the same query.
      const full = page(await get(srv.base, `/v1/events?limit=10&offset=${off}`), 'unmetered');
      assert.equal(full.events.length, 10);
      assert.equal(full.truncated, false);
      assert.deepEqual(pc.events, full.events.slice(0, 5));
      assert.deepEqual(ids(pc.events), ids(communityUp.slice(off, off + 5)));

      const d = await call(key, `/v1/events?limit=10&offset=${off + 5}`);
      problem(d, 429, 'quota_exhausted', 'fourth');
      const retry = intHeader(d, 'retry-after');
      assert.ok(Math.abs(retry - TO_RESET_S) <= 1, `Retry-After ${retry}, want ${TO_RESET_S}`);
      assertCommunityHeaders(d, 0, 'fourth');

      const u = await usageOf(key);
      assert.equal(u.records.used, 25);
      assert.equal(u.requests.count, 3);
    });

    // ---------------------------------------------------------------- headers

    test('quota headers on 200, 400, 403, 429 and /v1/usage; partner says unlimited', async () => {
      const { key } = await community();
      const ok = await call(key, '/v1/events?limit=15&offset=3');
      assert.equal(page(ok, '200').events.length, 15);
      assertCommunityHeaders(ok, 10, '200');

      const bad = await call(key, '/v1/events?limit=abc');
      problem(bad, 400, 'invalid_parameter', '400');
      assertCommunityHeaders(bad, 10, '400');

      const unknown = await call(key, '/v1/events?colour=blue');
      problem(unknown, 400, 'unknown_parameter', '400 unknown');
      assertCommunityHeaders(unknown, 10, '400 unknown');

      const seasonal = await call(key, '/v1/events?category=seasonal');
      problem(seasonal, 403, 'category_not_in_plan', '403');
      assertCommunityHeaders(seasonal, 10, '403');

      const u = await call(key, '/v1/usage');
      assert.equal(u.status, 200);
      assertCommunityHeaders(u, 10, '/v1/usage');

      const rest = await call(key, '/v1/events?limit=10&offset=100');
      assert.equal(page(rest, 'rest').events.length, 10);
      assertCommunityHeaders(rest, 0, 'rest');
      const exhausted = await call(key, '/v1/events?limit=10&offset=100');
      problem(exhausted, 429, 'quota_exhausted', '429');
      assertCommunityHeaders(exhausted, 0, '429');

      const partner = await ledger.provisionKey({ plan: 'partner' });
      const p = await call(partner.key, '/v1/events?limit=30');
      assert.equal(page(p, 'partner').events.length, 30);
      assert.equal(header(p, 'x-quota-limit'), 'unlimited');
      assert.equal(header(p, 'x-quota-remaining'), 'unlimited');
      assert.equal(intHeader(p, 'x-quota-reset'), RESET_S);
      const pbad = await call(partner.key, '/v1/events?limit=0');
      problem(pbad, 400, 'invalid_parameter', 'partner 400');
      assert.equal(header(pbad, 'x-quota-limit'), 'unlimited');
      assert.equal(header(pbad, 'x-quota-remaining'), 'unlimited');
    });

    // ---------------------------------------------------------------- bodies do not carry quota state

    test('identical polls give byte-identical bodies, equal across keys of the same plan', async () => {
      const one = await community();
      const two = await community();
      const q = '/v1/events?limit=5&offset=321';
      const a1 = await call(one.key, q);
      const a2 = await call(one.key, q);
      const b1 = await call(two.key, q);
      assert.equal(page(a1, 'a1').events.length, 5);
      page(a2, 'a2');
      page(b1, 'b1');
      assert.equal(header(a1, 'x-quota-remaining'), '20');
      assert.equal(header(a2, 'x-quota-remaining'), '15', 'the headers moved on');
      assert.equal(a2.text, a1.text, 'quota travels in headers only');
      assert.equal(b1.text, a1.text, 'another key of the same plan sees the same body');
      // ETags come with the caching work; where they are sent they must not move with the quota either.
      assert.equal(a2.headers.get('etag'), a1.headers.get('etag'));
      assert.equal(b1.headers.get('etag'), a1.headers.get('etag'));
      assert.deepEqual(ids(v.parse(EventListSchema, a1.json).events), ids(communityUp.slice(321, 326)));
    });

    // ---------------------------------------------------------------- what counts nothing

    test('HEAD, errors, /v1/usage and the demo count nothing; an empty result counts a request', async () => {
      const { key } = await community();
      const zero = { records: 0, requests: 0 };
      const expectUsage = async (used: number, requests: number, what: string): Promise<void> => {
        const u = await usageOf(key);
        assert.equal(u.records.used, used, `${what}: used`);
        assert.equal(u.records.remaining, CAP - used, `${what}: remaining`);
        assert.equal(u.requests.count, requests, `${what}: requests`);
        assert.deepEqual(todayOf(u), { records: used, requests }, `${what}: today`);
      };
      assert.deepEqual(todayOf(await usageOf(key)), zero);

      // HEAD of an uncached page, and of a page already in the cache, in both encodings.
      const uncached = '/v1/events?limit=20&offset=2777';
      const cached = '/v1/events?limit=20&offset=2888';
      page(await get(srv.base, cached), 'warm');
      const heads = new Map<string, string>();
      for (const q of [uncached, cached]) {
        for (const enc of ['identity', 'gzip']) {
          const h = await call(key, q, { method: 'HEAD', headers: { 'accept-encoding': enc } });
          assert.equal(h.status, 200, `HEAD ${q} ${enc}`);
          assert.equal(h.text, '');
          assert.equal(header(h, 'x-quota-remaining'), String(CAP), `HEAD ${q} ${enc} leaves the quota`);
          heads.set(`${q} ${enc}`, header(h, 'content-length'));
        }
      }
      await expectUsage(0, 0, 'after HEAD');

      problem(await call(key, '/v1/events?limit=abc'), 400, 'invalid_parameter', '400');
      problem(await call(key, '/v1/events?offset=-1'), 400, 'invalid_parameter', '400');
      problem(await call(key, '/v1/events?category=seasonal'), 403, 'category_not_in_plan', '403');
      problem(await call(key, '/v1/events?category=festivals&limit=5'), 403, 'category_not_in_plan', '403');
      await expectUsage(0, 0, 'after errors');

      const demo = await get(srv.base, '/v1/demo/events?limit=10', { headers: { authorization: '' } });
      assert.equal(page(demo, 'demo').events.length, 10);
      const demoWithKey = await call(key, '/v1/demo/events?limit=10&offset=50');
      assert.equal(page(demoWithKey, 'demo with a key').events.length, 10);
      await expectUsage(0, 0, 'after the demo');
      await expectUsage(0, 0, 'after /v1/usage itself');

      // A word that no event holds anywhere: a 200 with nothing in it.
      const nothing = 'zqxjvwkb';
      const haystack = (r: OracleRow): string => [r.title, r.description, r.summary, r.venue_name, r.organizer, ...r.tags].join(' ').toLowerCase();
      assert.ok(!fx.rows.some((r) => haystack(r).includes(nothing)), 'the oracle has no match');
      const empty = page(await call(key, `/v1/events?q=${nothing}`), 'zero matches');
      assert.equal(empty.total, 0);
      assert.equal(empty.events.length, 0);
      assert.equal(empty.truncated, false);
      await expectUsage(0, 1, 'after a zero-match search');

      // The GETs that the HEADs stood for: the same length. The cached page is fetched by another
      // community key each (same plan, same body), as a key's quota would cut a second page short.
      const plain = await call(key, uncached, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(page(plain, uncached).events.length, 20);
      assert.equal(header(plain, 'x-quota-remaining'), '5');
      await expectUsage(20, 2, 'after a GET');
      for (const q of [uncached, cached]) {
        for (const enc of ['identity', 'gzip']) {
          const g = q === uncached && enc === 'identity' ? plain : await call((await community()).key, q, { headers: { 'accept-encoding': enc } });
          assert.equal(page(g, `${q} ${enc}`).events.length, 20);
          assert.equal(header(g, 'content-length'), heads.get(`${q} ${enc}`), `GET ${q} ${enc}: HEAD announced the same length`);
          if (enc === 'identity') assert.equal(String(Buffer.byteLength(g.text)), heads.get(`${q} ${enc}`), `${q}: the body has that length`);
        }
      }
    });

    // ---------------------------------------------------------------- one quota per organization

    test("all the organization's keys share one quota", async () => {
      const org = `Shared quota ${Math.random().toString(36).slice(2)}`;
      const k1 = await community(org);
      const k2 = await community(org);
      assert.equal(k2.orgId, k1.orgId, 'the second key joined the same organization');
      assert.notEqual(k2.key, k1.key);

      const a = page(await call(k1.key, '/v1/events?limit=20&offset=10'), 'key 1');
      assert.equal(a.events.length, 20);
      const bg = await call(k2.key, '/v1/events?limit=20&offset=30');
      const b = page(bg, 'key 2');
      assert.equal(b.events.length, 5, 'the second key gets what the first left');
      assert.equal(b.truncated, true);
      assertCommunityHeaders(bg, 0, 'key 2');
      problem(await call(k1.key, '/v1/events?limit=20&offset=50'), 429, 'quota_exhausted', 'key 1 after');
      problem(await call(k2.key, '/v1/events?limit=1&offset=50'), 429, 'quota_exhausted', 'key 2 after');
      for (const k of [k1, k2]) {
        const u = await usageOf(k.key);
        assert.equal(u.organization.id, k1.orgId);
        assert.equal(u.records.used, 25);
        assert.equal(u.requests.count, 2);
      }
      // Another organization is untouched.
      const other = await community();
      assert.equal(page(await call(other.key, '/v1/events?limit=20&offset=10'), 'other org').events.length, 20);
    });

    // ---------------------------------------------------------------- records held by requests in flight

    describe('records held by other requests in flight', () => {
      /** Fires `queries` at once; every answer is a 200 (the oracle's page) or a 429 that tells the truth. */
      async function fire(
        key: string,
        queries: readonly { offset: number; qs: string; expect: number }[],
      ): Promise<{ got: Got[]; received: number; oks: number }> {
        const got = await Promise.all(queries.map((q) => call(key, `/v1/events?${q.qs}`)));
        let received = 0;
        let oks = 0;
        got.forEach((g, i) => {
          const q = queries[i]!;
          const what = `#${i} ${q.qs}`;
          if (g.status !== 200) {
            // Only a spent month is quota_exhausted; nothing here waits long enough for quota_held.
            problem(g, 429, 'quota_exhausted', what);
            assert.equal(header(g, 'x-quota-remaining'), '0', what);
            return;
          }
          const body = page(g, what);
          oks += 1;
          received += body.events.length;
          assert.deepEqual(ids(body.events), ids(communityUp.slice(q.offset, q.offset + body.events.length)), `${what}: the oracle's page`);
          assert.ok(body.events.length <= q.expect, what);
          assert.equal(body.truncated, body.events.length < q.expect, `${what}: cut only by the month's end`);
        });
        return { got, received, oks };
      }

      test('ten simultaneous searches at the default limit of 20 on a fresh community key, each matching 2 events, are all served (none is refused for records another one holds)', async () => {
        const { key } = await community();
        const offset = communityUp.length - 2;
        const { got, received, oks } = await fire(
          key,
          range(10).map(() => ({ offset, qs: `offset=${offset}`, expect: 2 })),
        );
        assert.equal(oks, 10, `every request is served: ${got.map((g) => g.status).join(' ')}`);
        assert.equal(received, 20);
        // Each answer's X-Quota-Remaining is what was not charged after its own charge: 23, 21, …, 5.
        const remaining = got.map((g) => intHeader(g, 'x-quota-remaining')).sort((a, b) => a - b);
        assert.deepEqual(
          remaining,
          range(10).map((i) => 5 + 2 * i),
        );
        const u = await usageOf(key);
        assert.deepEqual(u.records, { used: 20, remaining: 5, limit: CAP });
        assert.equal(u.requests.count, 10);
      });

      test('simultaneous searches asking for more than the month holds: exactly 25 records served, the rest quota_exhausted only once the month is spent', async () => {
        const { key } = await community();
        // The last 1, 2, …, 10 events: 55 records asked for in all, each request holding 20 while it runs.
        const { received, oks } = await fire(
          key,
          range(10).map((i) => {
            const offset = communityUp.length - 1 - i;
            return { offset, qs: `offset=${offset}`, expect: i + 1 };
          }),
        );
        assert.equal(received, CAP, 'records over every 200');
        const u = await usageOf(key);
        assert.deepEqual(u.records, { used: CAP, remaining: 0, limit: CAP });
        assert.equal(u.requests.count, oks);
      });

      test('clients that leave while their records are held or while they wait leave no hold behind', async () => {
        const { key } = await community();
        const offset = communityUp.length - 2;
        const leaving = new Set([1, 3, 5, 7, 9]);
        const answers = await Promise.allSettled(
          range(10).map((i) => {
            const ac = new AbortController();
            if (leaving.has(i)) setTimeout(() => ac.abort(), i);
            return call(key, `/v1/events?offset=${offset}`, { signal: ac.signal });
          }),
        );
        let received = 0;
        for (const a of answers) if (a.status === 'fulfilled') received += page(a.value, 'stayed').events.length;
        // What the server was still doing for the clients that left ends within moments.
        await sleep(500);
        const u = await usageOf(key);
        assert.ok(u.records.used >= received && u.records.used <= received + 2 * leaving.size, `used ${u.records.used}, received ${received}`);
        // Everything not charged can be had in one page: no hold outlived its request (one that did
        // would keep this page waiting, then cut it).
        const left = CAP - u.records.used;
        assert.ok(left > 0);
        const all = await call(key, `/v1/events?limit=${left}&offset=100`);
        const body = page(all, 'the rest of the month');
        assert.equal(body.events.length, left);
        assert.equal(body.truncated, false);
        assertCommunityHeaders(all, 0, 'the rest of the month');
        problem(await call(key, '/v1/events?limit=1'), 429, 'quota_exhausted', 'then the month is spent');
      });

      test(
        'records another node holds: a request waits for them, is served once they are freed, and past the wait gets 429 quota_held (not quota_exhausted) with the truth in X-Quota-Remaining',
        { skip: backend.postgres ? false : "one node: every hold is this server's and settles within the query timeout" },
        async () => {
          const { key, orgId, keyId } = await community();
          const db = new pg.Client({ connectionString: ledger.databaseUrl! });
          await db.connect();
          try {
            // A node that died mid-answer: its hold stays until it expires (LEDGER_HOLD_MS).
            const plant = async (amount: number): Promise<string> =>
              (
                await db.query<{ id: string }>(
                  "INSERT INTO quota_holds (org_id, key_id, amount, node, expires_at) VALUES ($1, $2, $3, 'dead-node', now() + interval '1 hour') RETURNING id",
                  [orgId, keyId, amount],
                )
              ).rows[0]!.id;
            const held = await plant(CAP);
            const refused = await call(key, '/v1/events?limit=5');
            problem(refused, 429, 'quota_held', 'every record held past the wait');
            assert.equal(header(refused, 'retry-after'), String(QUOTA_HELD_RETRY_S));
            assertCommunityHeaders(refused, CAP, 'nothing is charged: all 25 remain');
            const p = v.parse(ProblemSchema, refused.json);
            assert.match(p.detail, /25 records left/);

            // The hold goes away while a request waits: it is served whole.
            const waiting = call(key, '/v1/events?limit=5&offset=10');
            await sleep(300);
            await db.query('DELETE FROM quota_holds WHERE id = $1', [held]);
            const served = await waiting;
            assert.deepEqual(ids(page(served, 'after the hold went').events), ids(communityUp.slice(10, 15)));
            assertCommunityHeaders(served, CAP - 5, 'after the hold went');
            const u = await usageOf(key);
            assert.deepEqual(u.records, { used: 5, remaining: CAP - 5, limit: CAP });
            assert.equal(u.requests.count, 1);
          } finally {
            await db.end();
          }
        },
      );
    });

    // ---------------------------------------------------------------- exclusions

    describe('plan exclusions', () => {
      test('community results never hold seasonal or festivals events, and asking for them is 403', async () => {
        // A window of the community list around an upcoming excluded event, so a leak would show.
        const at = partnerUp.findIndex((r, j) => isExcluded(r) && j - partnerUp.slice(0, j).filter(isExcluded).length >= 10);
        assert.ok(at >= 0);
        const offset = at - partnerUp.slice(0, at).filter(isExcluded).length - 10;
        const expected = communityUp.slice(offset, offset + 25);
        const lo = expected[0];
        const hi = expected.at(-1);
        assert.ok(lo && hi);
        const hidden = partnerUp.filter((r) => isExcluded(r) && byStart(r, lo) > 0 && byStart(r, hi) < 0);
        assert.ok(hidden.length > 0, 'excluded events sit inside the window');

        const { key } = await community();
        const body = page(await call(key, `/v1/events?limit=25&offset=${offset}`), 'community window');
        assert.deepEqual(ids(body.events), ids(expected));
        assert.equal(body.total, communityUp.length);
        for (const e of body.events) assert.ok(!isExcluded(e), `${e.id} has ${e.categories.join(',')}`);

        const common = communityUp.flatMap((r) => r.categories).find((c) => !EXCLUDED.includes(c));
        assert.ok(common);
        for (const cat of ['seasonal', 'festivals', `${common},seasonal`, 'festivals,seasonal']) {
          problem(await call(key, `/v1/events?category=${encodeURIComponent(cat)}&limit=1`), 403, 'category_not_in_plan', `category=${cat}`);
        }
      });

      test('partner sees every not-ended event, seasonal and festivals included', async () => {
        const { key } = await ledger.provisionKey({ plan: 'partner' });
        const all = page(await call(key, '/v1/events?limit=100'), 'partner unfiltered');
        assert.equal(all.total, partnerUp.length);
        assert.deepEqual(ids(all.events), ids(partnerUp.slice(0, 100)));
        let received = all.events.length;
        for (const cat of ['seasonal', 'festivals']) {
          const expected = partnerUp.filter((r) => r.categories.includes(cat));
          assert.ok(expected.length > 0, `the sample has upcoming ${cat} events`);
          const body = page(await call(key, `/v1/events?category=${cat}&limit=50`), `partner ${cat}`);
          assert.equal(body.total, expected.length, cat);
          assert.deepEqual(ids(body.events), ids(expected.slice(0, 50)), cat);
          received += body.events.length;
        }
        // Partner has no cap: far more than a community month, never truncated, all of it counted.
        const u = await usageOf(key);
        assert.ok(received > CAP);
        assert.equal(u.records.used, received);
        assert.equal(u.records.remaining, null);
        assert.equal(u.records.limit, null);
        assert.equal(all.truncated, false);
      });
    });

    // ---------------------------------------------------------------- usage body

    describe('/v1/usage', () => {
      const days = (from: string, to: string): string[] => {
        const out: string[] = [];
        for (let t = Date.parse(`${from}T12:00:00Z`); ; t += 86_400_000) {
          const d = new Date(t).toISOString().slice(0, 10);
          if (d > to) return out;
          out.push(d);
        }
      };

      test('community: organization, plan, period bounds and per-day counts match what was received', async () => {
        const org = `Usage org ${Math.random().toString(36).slice(2)}`;
        const { key, orgId } = await community(org);
        const got1 = page(await call(key, '/v1/events?limit=7&offset=60'), 'one').events.length;
        const got2 = page(await call(key, '/v1/events?limit=4&offset=90'), 'two').events.length;
        assert.equal(got1 + got2, 11);
        const g = await call(key, '/v1/usage');
        assert.equal(g.status, 200);
        const u = v.parse(UsageSchema, g.json);
        assert.deepEqual(u.organization, { id: orgId, name: org });
        assert.equal(u.plan.name, 'community');
        assert.equal(u.plan.monthly_record_limit, CAP);
        assert.deepEqual([...u.plan.excluded_categories].sort(), EXCLUDED);
        assert.equal(u.plan.attribution_required, true);

        assert.equal(Date.parse(u.period.start), MONTH_START_MS, u.period.start);
        assert.ok(u.period.start.endsWith('-07:00'), `period.start in PDT: ${u.period.start}`);
        assert.equal(Date.parse(u.period.resets_at), RESET_MS, u.period.resets_at);
        assert.ok(u.period.resets_at.endsWith('-08:00'), `resets_at in PST: ${u.period.resets_at}`);
        const end = Date.parse(u.period.end);
        assert.ok(end >= RESET_MS - 1000 && end < RESET_MS, `period.end is the last second of November: ${u.period.end}`);
        assert.ok(u.period.end.endsWith('-08:00'), u.period.end);

        assert.deepEqual(u.records, { used: 11, remaining: 14, limit: CAP });
        assert.equal(u.requests.count, 2);
        assert.deepEqual(
          u.by_day.map((d) => d.date),
          days('2026-11-01', TODAY),
        );
        for (const d of u.by_day)
          assert.deepEqual({ records: d.records, requests: d.requests }, d.date === TODAY ? { records: 11, requests: 2 } : { records: 0, requests: 0 }, d.date);
        assert.equal(header(g, 'x-quota-remaining'), '14');
      });

      test('partner: no limit, no exclusions, no attribution requirement', async () => {
        const { key } = await ledger.provisionKey({ plan: 'partner' });
        const n = page(await call(key, '/v1/events?limit=40'), 'partner').events.length;
        assert.equal(n, 40);
        const u = await usageOf(key);
        assert.equal(u.plan.name, 'partner');
        assert.equal(u.plan.monthly_record_limit, null);
        assert.deepEqual(u.plan.excluded_categories, []);
        assert.equal(u.plan.attribution_required, false);
        assert.deepEqual(u.records, { used: 40, remaining: null, limit: null });
        assert.deepEqual(todayOf(u), { records: 40, requests: 1 });
      });
    });

    // ---------------------------------------------------------------- per-key request rate

    test('a per-key request rate: the 4th quick request on a 3-a-minute plan is 429, another key is unaffected', async () => {
      const slow: Plan = { name: 'slow', monthlyRecordLimit: null, excludedCategories: [], attributionRequired: false, requestsPerMinute: 3 };
      const org = `Slow org ${Math.random().toString(36).slice(2)}`;
      const first = await ledger.provisionKey({ plan: slow, org });
      const second = await ledger.provisionKey({ plan: slow, org });
      for (let i = 0; i < 3; i++) page(await call(first.key, `/v1/events?limit=2&offset=${i}`), `request ${i + 1}`);
      const fourth = await call(first.key, '/v1/events?limit=2&offset=3');
      problem(fourth, 429, 'rate_limited', 'fourth');
      assert.ok(intHeader(fourth, 'retry-after') >= 1);
      assert.equal(header(fourth, 'x-quota-limit'), 'unlimited', 'a refusal after auth still carries the quota headers');
      const other = await call(second.key, '/v1/events?limit=2');
      assert.equal(page(other, 'another key of the plan').events.length, 2);
      const u = await usageOf(second.key);
      assert.equal(u.plan.name, 'slow');
      assert.equal(u.records.used, 8, 'the refused request charged nothing');
      assert.equal(u.requests.count, 4);
    });

    // ---------------------------------------------------------------- month rollover (last: restarts the server)

    test('month rollover: a restart in December finds the quota afresh; November stays used up', async () => {
      const { key } = await community();
      const used = page(await call(key, '/v1/events?limit=25&offset=500'), 'exhaust');
      assert.equal(used.events.length, 25);
      problem(await call(key, '/v1/events?limit=1'), 429, 'quota_exhausted', 'november');
      assert.equal(srv.config.ledgerDir, ledger.dir);
      assert.equal(srv.config.database?.url ?? null, ledger.databaseUrl, 'the server meters on the backend of the suite');

      await srv.stop();
      const decNow = '2026-12-01T00:00:05-08:00';
      srv = await startTestServer(fx.dataDir, { ...ledger.env, FAMILY_EVENTS_NOW: decNow });
      const janReset = Date.parse('2027-01-01T00:00:00-08:00');
      const before = await usageOf(key);
      assert.deepEqual(before.records, { used: 0, remaining: 25, limit: CAP });
      assert.deepEqual(before.by_day, [{ date: '2026-12-01', records: 0, requests: 0 }]);
      assert.equal(Date.parse(before.period.start), Date.parse('2026-12-01T00:00:00-08:00'));
      assert.equal(Date.parse(before.period.resets_at), janReset);

      const dec = await call(key, '/v1/events?limit=25&offset=500');
      assert.equal(page(dec, 'december').events.length, 25);
      assert.equal(header(dec, 'x-quota-remaining'), '0');
      assert.equal(intHeader(dec, 'x-quota-reset'), janReset / 1000);
      const over = await call(key, '/v1/events?limit=1');
      problem(over, 429, 'quota_exhausted', 'december, again');
      const toJan = (janReset - Date.parse(decNow)) / 1000;
      assert.ok(Math.abs(intHeader(over, 'retry-after') - toJan) <= 1, `Retry-After ${over.headers.get('retry-after')}, want ${toJan}`);
      assert.equal(header(over, 'ratelimit-policy'), `"community";q=${CAP};w=${31 * 86_400}`);
      const decUsage = await usageOf(key);
      assert.deepEqual(decUsage.by_day, [{ date: '2026-12-01', records: 25, requests: 1 }]);

      await srv.stop();
      const lateNov = '2026-11-30T23:59:00-08:00';
      srv = await startTestServer(fx.dataDir, { ...ledger.env, FAMILY_EVENTS_NOW: lateNov });
      const stillOut = await call(key, '/v1/events?limit=1');
      problem(stillOut, 429, 'quota_exhausted', 'back in November');
      assert.ok(Math.abs(intHeader(stillOut, 'retry-after') - 60) <= 1, `Retry-After ${stillOut.headers.get('retry-after')}`);
      assert.equal(intHeader(stillOut, 'x-quota-reset'), RESET_S);
      const nov = await usageOf(key);
      assert.deepEqual(nov.records, { used: 25, remaining: 0, limit: CAP });
      assert.equal(nov.requests.count, 1);
      assert.equal(nov.by_day.length, 30);
      assert.equal(nov.by_day[0]?.date, '2026-11-01');
      assert.equal(nov.by_day.at(-1)?.date, '2026-11-30');
      for (const d of nov.by_day)
        assert.deepEqual({ records: d.records, requests: d.requests }, d.date === TODAY ? { records: 25, requests: 1 } : { records: 0, requests: 0 }, d.date);
    });
  });
}
