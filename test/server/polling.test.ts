// Polling over real HTTP on /v1/events, /v1/events.csv, /v1/feed.rss, /v1/feed.json (and the demo):
// strong ETags and Last-Modified, If-None-Match → 304 (free of charge, like HEAD), content-coding,
// the response cache, and validators moving on a snapshot swap.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { request } from 'undici';
import * as v from 'valibot';
import { EventListSchema, JsonFeedSchema, UsageSchema } from '../../server/schemas.ts';
import type { Manifest } from '../../snapshot/store.ts';
import {
  buildInChild,
  get,
  NOW,
  parseProm,
  type Sample,
  provisionKey,
  readRows,
  sampleFixture,
  startTestServer,
  type Fixture,
  type OracleRow,
  type TestServer,
  TWO_THREADS,
} from './helpers.ts';
import type { Plan } from '../../ledger/accounts.ts';

const NOW_MS = NOW.getTime();
const DAY_MS = 24 * 60 * 60 * 1000;
const EXCLUDED = new Set(['seasonal', 'festivals']);
/** Bodies over this many bytes are compressed when the client accepts it; others never are. */
const MIN_COMPRESSED = 1024;
/** A capped plan with room for every charge this file makes, so that a charge is seen as a count, never as a refusal. */
const CAPPED: Plan = {
  name: 'poll-cap',
  monthlyRecordLimit: 1000,
  excludedCategories: ['festivals', 'seasonal'],
  attributionRequired: true,
  requestsPerMinute: 100_000,
};
// The demo's per-address bucket would otherwise refuse this file's demo calls after 30.
const SERVER_ENV = { DEMO_RATE_PER_MINUTE: '100000', ...TWO_THREADS };

// ---------------------------------------------------------------- oracles (from the Parquet rows)

const upcoming = (rows: readonly OracleRow[]): OracleRow[] =>
  rows
    .filter((r) => !r.categories.some((c) => EXCLUDED.has(c)) && r.end_ms >= NOW_MS)
    .sort((a, b) => a.start_ms - b.start_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** The manifest as the build wrote it, read from its file rather than from the server. */
async function manifestOf(dataDir: string, id: string): Promise<Manifest> {
  return JSON.parse(await readFile(path.join(dataDir, 'snapshots', id, 'manifest.json'), 'utf8')) as Manifest;
}

// ---------------------------------------------------------------- the formats, one table

interface FormatCase {
  readonly name: string;
  readonly path: string;
  /** The media type of its 200s. */
  readonly type: string;
  /** Metered route with a key (quota headers, Cache-Control); false for the keyless demo. */
  readonly live: boolean;
  /** The event ids of a body, in order, read back with an independent parser. */
  ids(body: Buffer): string[];
}

const xml = new XMLParser({ isArray: (name) => name === 'item' || name === 'category' });

const JSON_CASE: FormatCase = {
  name: 'JSON',
  path: '/v1/events',
  type: 'application/json',
  live: true,
  ids: (b) => v.parse(EventListSchema, JSON.parse(b.toString('utf8'))).events.map((e) => e.id),
};

const FORMATS: readonly FormatCase[] = [
  JSON_CASE,
  {
    name: 'CSV',
    path: '/v1/events.csv',
    type: 'text/csv',
    live: true,
    ids: (b) => {
      const rows = parseCsv(b, { relax_column_count: false });
      assert.equal(rows[0]?.[0], 'id', 'the CSV header row');
      return rows.slice(1).map((r) => r[0] ?? '');
    },
  },
  {
    name: 'RSS',
    path: '/v1/feed.rss',
    type: 'application/rss+xml',
    live: true,
    ids: (b) => {
      const text = b.toString('utf8');
      assert.equal(XMLValidator.validate(text), true, 'RSS is well-formed XML');
      const doc = xml.parse(text) as { rss?: { channel?: { item?: { guid?: unknown }[] } } };
      assert.ok(doc.rss?.channel, 'an RSS channel');
      return (doc.rss.channel.item ?? []).map((i) => String(i.guid));
    },
  },
  {
    name: 'JSON Feed',
    path: '/v1/feed.json',
    type: 'application/feed+json',
    live: true,
    ids: (b) => v.parse(JsonFeedSchema, JSON.parse(b.toString('utf8'))).items.map((i) => i.id),
  },
];

const DEMO: FormatCase = { ...JSON_CASE, name: 'demo JSON', path: '/v1/demo/events', live: false };
/** Every polled route: the four live formats and the demo. */
const POLLED: readonly FormatCase[] = [...FORMATS, DEMO];

// ---------------------------------------------------------------- raw HTTP (undici: no automatic Accept-Encoding, no decoding)

interface Raw {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

interface RawInit {
  readonly method?: 'GET' | 'HEAD';
  readonly headers?: Readonly<Record<string, string>>;
  /** The key for a live route; the server's default (uncapped) key when left out. */
  readonly key?: string;
}

async function raw(srv: TestServer, pathAndQuery: string, init: RawInit = {}): Promise<Raw> {
  const headers: Record<string, string> = { ...init.headers };
  if (!pathAndQuery.startsWith('/v1/demo/')) headers.authorization = `Bearer ${init.key ?? srv.key}`;
  const res = await request(`${srv.base}${pathAndQuery}`, { method: init.method ?? 'GET', headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}

/** A header that must be there, once. */
function header(r: Raw, name: string): string {
  const h = r.headers[name];
  assert.ok(typeof h === 'string', `${name} missing or repeated (status ${r.status}): ${JSON.stringify(h)}`);
  return h;
}

function ok(r: Raw, what: string): Raw {
  assert.equal(r.status, 200, `${what}: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
  return r;
}

function decode(r: Raw): Buffer {
  const enc = r.headers['content-encoding'];
  if (enc === undefined) return r.body;
  if (enc === 'gzip') return gunzipSync(r.body);
  if (enc === 'br') return brotliDecompressSync(r.body);
  assert.fail(`unexpected Content-Encoding ${JSON.stringify(enc)}`);
}

/** The opaque part of a strong, quoted, identity ETag (checked to be one). */
function opaqueOf(etag: string): string {
  assert.match(etag, /^"[^"\s\\]{22}"$/, `ETag ${etag} is not a strong quoted 22-character tag`);
  return etag.slice(1, -1);
}

function varyHasAcceptEncoding(r: Raw): boolean {
  return header(r, 'vary')
    .split(',')
    .some((t) => t.trim().toLowerCase() === 'accept-encoding');
}

/** What a 304 must be: no body, no representation metadata, the validators and (live) the quota. */
function assertNotModified(r: Raw, f: FormatCase, etag: string, lastModified: string, what: string): void {
  assert.equal(r.status, 304, `${what}: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
  assert.equal(r.body.length, 0, `${what}: a 304 has no body`);
  assert.equal(header(r, 'etag'), etag, `${what}: ETag`);
  assert.equal(header(r, 'last-modified'), lastModified, `${what}: Last-Modified`);
  assert.ok(varyHasAcceptEncoding(r), `${what}: Vary`);
  for (const absent of ['content-type', 'content-length', 'content-encoding']) assert.equal(r.headers[absent], undefined, `${what}: ${absent} on a 304`);
  if (f.live) {
    assert.equal(header(r, 'cache-control'), 'private, max-age=60', `${what}: Cache-Control`);
    for (const q of ['x-quota-limit', 'x-quota-remaining', 'x-quota-reset']) header(r, q);
  }
}

// ---------------------------------------------------------------- metrics and access log

/** Prometheus text → samples; the label values read here (routes, results) hold no escapes or commas. */

async function scrape(srv: TestServer): Promise<Sample[]> {
  const r = await get(srv.adminBase, '/metrics');
  assert.equal(r.status, 200);
  return parseProm(r.text);
}

/** The response-cache counter of a route and result (whatever prefix the server gives the metric). */
function cacheCount(samples: readonly Sample[], route: string, result: 'hit' | 'miss'): number {
  const s = samples.find((x) => x.name.endsWith('response_cache_total') && x.labels.route === route && x.labels.result === result);
  return s?.value ?? 0;
}

const requestLines = (lines: readonly Record<string, unknown>[]): Record<string, unknown>[] => lines.filter((l) => l.msg === 'request');

/** One request and the access-log lines it produced. */
async function logged(srv: TestServer, pathAndQuery: string, init: RawInit = {}): Promise<{ r: Raw; lines: Record<string, unknown>[] }> {
  const from = srv.logs.length;
  const r = await raw(srv, pathAndQuery, init);
  for (let i = 0; i < 200 && requestLines(srv.logs.slice(from)).length === 0; i++) await delay(5);
  await delay(20);
  return { r, lines: requestLines(srv.logs.slice(from)) };
}

// ---------------------------------------------------------------- usage

type Usage = v.InferOutput<typeof UsageSchema>;

async function usageOf(srv: TestServer, key: string): Promise<Usage> {
  const g = await get(srv.base, '/v1/usage', { headers: { authorization: `Bearer ${key}` } });
  assert.equal(g.status, 200, `/v1/usage: ${g.status} ${g.text.slice(0, 300)}`);
  return v.parse(UsageSchema, g.json);
}

const counts = (u: Usage): { records: number; requests: number } => ({ records: u.records.used, requests: u.requests.count });

// ---------------------------------------------------------------- snapshot build in a child process

/** `family-events snapshot build --json [args]` into `dataDir` with the clock at `now`; its manifest. */

// ---------------------------------------------------------------- shared fixture and server

let fixture: Fixture;
let ts: TestServer;
let tsStopped = false;
let live: OracleRow[];
/** Last-Modified the fixture's snapshot must give: its manifest's built_at as an HTTP-date. */
let lastModified: string;
/** A key on the capped plan, on the shared server's ledger. */
let cappedKey: string;

const pageIds = (rows: readonly OracleRow[], offset: number, limit: number): string[] => rows.slice(offset, offset + limit).map((r) => r.id);

before(async () => {
  fixture = await sampleFixture();
  ts = await startTestServer(fixture.dataDir, SERVER_ENV);
  live = upcoming(fixture.rows);
  // Every page below lies well inside the results (the largest reaches offset 2000).
  assert.ok(live.length > 2500 && live.length < fixture.rows.length, `${live.length} upcoming of ${fixture.rows.length}`);
  const manifest = await manifestOf(fixture.dataDir, fixture.build.manifest.id);
  lastModified = new Date(manifest.built_at).toUTCString();
  cappedKey = provisionKey(ts.config.ledgerDir, { plan: CAPPED, org: 'Polling capped' }).key;
});

after(async () => {
  if (!tsStopped) await ts?.stop();
  await fixture?.cleanup();
});

// ---------------------------------------------------------------- validators

describe('validators on a 200', () => {
  for (const f of POLLED) {
    test(`${f.name}: strong quoted ETag, stable for the same query, another for another page; Last-Modified, Cache-Control, Vary`, async () => {
      const q = `${f.path}?limit=5&offset=100`;
      const a = ok(await raw(ts, q), q);
      const b = ok(await raw(ts, q), `${q} again`);
      assert.ok(header(a, 'content-type').startsWith(f.type), header(a, 'content-type'));
      assert.deepEqual(f.ids(a.body), pageIds(live, 100, 5));
      const etag = header(a, 'etag');
      assert.ok(!etag.startsWith('W/'), `weak ETag ${etag}`);
      opaqueOf(etag);
      assert.equal(header(b, 'etag'), etag, 'the same query gives the same ETag');
      assert.ok(a.body.equals(b.body), 'the same query gives the same bytes');
      assert.equal(header(a, 'last-modified'), lastModified);
      assert.ok(varyHasAcceptEncoding(a), `Vary: ${header(a, 'vary')}`);
      if (f.live) assert.equal(header(a, 'cache-control'), 'private, max-age=60');

      const q2 = `${f.path}?limit=5&offset=105`;
      const c = ok(await raw(ts, q2), q2);
      assert.deepEqual(f.ids(c.body), pageIds(live, 105, 5));
      assert.ok(!c.body.equals(a.body), 'another page has another body');
      opaqueOf(header(c, 'etag'));
      assert.notEqual(header(c, 'etag'), etag, 'another body has another ETag');
    });
  }

  test('the four formats of one query have four different ETags (four different bodies)', async () => {
    const got = await Promise.all(FORMATS.map((f) => raw(ts, `${f.path}?limit=5&offset=110`)));
    got.forEach((r, i) => ok(r, FORMATS[i]!.name));
    assert.equal(new Set(got.map((r) => header(r, 'etag'))).size, FORMATS.length);
  });
});

// ---------------------------------------------------------------- If-None-Match and HEAD

describe('If-None-Match → 304, and HEAD', () => {
  for (const f of POLLED) {
    test(`${f.name}: every form naming the current ETag is a 304 without body; other tags get the 200; HEAD`, async () => {
      const q = `${f.path}?limit=5&offset=200`;
      const full = ok(await raw(ts, q), q);
      const etag = header(full, 'etag');
      const tag = opaqueOf(etag);
      const other = header(ok(await raw(ts, `${f.path}?limit=5&offset=205`), 'another page'), 'etag');
      assert.notEqual(other, etag);

      const matching: [string, string][] = [
        ['the exact tag', etag],
        ['in a list', `"not-this-one", ${etag}, ${other}`],
        ['in a list without spaces', `${other},${etag}`],
        ['weak', `W/${etag}`],
        ['its gzip variant', `"${tag}-gzip"`],
        ['its br variant', `"${tag}-br"`],
        ['*', '*'],
      ];
      for (const [what, inm] of matching) {
        assertNotModified(await raw(ts, q, { headers: { 'if-none-match': inm } }), f, etag, lastModified, `If-None-Match ${what} (${inm})`);
      }
      // The 304 names the representation a 200 would have carried: the encoding negotiated now.
      assertNotModified(
        await raw(ts, q, { headers: { 'if-none-match': etag, 'accept-encoding': 'br' } }),
        f,
        `"${tag}-br"`,
        lastModified,
        '304 under Accept-Encoding: br',
      );
      assertNotModified(
        await raw(ts, q, { headers: { 'if-none-match': `"${tag}-br"`, 'accept-encoding': 'gzip' } }),
        f,
        `"${tag}-gzip"`,
        lastModified,
        '304 under Accept-Encoding: gzip',
      );

      for (const inm of [other, `"${tag}x"`, `W/${other}`, '"nothing"']) {
        const r = ok(await raw(ts, q, { headers: { 'if-none-match': inm } }), `If-None-Match ${inm}`);
        assert.equal(header(r, 'etag'), etag);
        assert.ok(r.body.equals(full.body), `If-None-Match ${inm}: the full body`);
      }

      assertNotModified(await raw(ts, q, { method: 'HEAD', headers: { 'if-none-match': etag } }), f, etag, lastModified, 'HEAD with If-None-Match');
      const head = ok(await raw(ts, q, { method: 'HEAD' }), 'HEAD');
      assert.equal(head.body.length, 0, 'HEAD has no body');
      for (const name of ['etag', 'last-modified', 'content-type', 'vary', 'cache-control'])
        assert.equal(header(head, name), header(full, name), `HEAD ${name}`);
      const len = head.headers['content-length'];
      if (len !== undefined) assert.equal(len, String(full.body.length), 'HEAD Content-Length is the GET body length');
    });
  }
});

// ---------------------------------------------------------------- no charge for 304 and HEAD

describe('304 and HEAD charge nothing', () => {
  test('with a capped key, a 200 moves usage by its records and one request; 304s and HEADs on every format move nothing', async () => {
    const u0 = counts(await usageOf(ts, cappedKey));
    // /v1/usage itself counts nothing: any move below comes from the searches.
    assert.deepEqual(counts(await usageOf(ts, cappedKey)), u0);
    let expected = u0;
    for (const f of FORMATS) {
      const q = `${f.path}?limit=7&offset=300`;
      const full = ok(await raw(ts, q, { key: cappedKey }), `${f.name} ${q}`);
      assert.deepEqual(f.ids(full.body), pageIds(live, 300, 7));
      expected = { records: expected.records + 7, requests: expected.requests + 1 };
      const u1 = await usageOf(ts, cappedKey);
      assert.deepEqual(counts(u1), expected, `${f.name}: a 200 of 7 records`);
      assert.equal(header(full, 'x-quota-remaining'), String(u1.records.remaining));

      const etag = header(full, 'etag');
      const tag = opaqueOf(etag);
      const forms = [etag, `W/${etag}`, `"${tag}-gzip"`, `"x", ${etag}`, '*'];
      for (const inm of forms) {
        const r = await raw(ts, q, { key: cappedKey, headers: { 'if-none-match': inm } });
        assertNotModified(r, f, etag, lastModified, `${f.name} If-None-Match ${inm}`);
        assert.equal(header(r, 'x-quota-remaining'), String(u1.records.remaining), `${f.name}: a 304 reports the quota left`);
      }
      const heads = [
        await raw(ts, q, { key: cappedKey, method: 'HEAD' }),
        await raw(ts, q, { key: cappedKey, method: 'HEAD', headers: { 'accept-encoding': 'gzip' } }),
        await raw(ts, q, { key: cappedKey, method: 'HEAD', headers: { 'if-none-match': etag } }),
      ];
      assert.deepEqual(
        heads.map((h) => h.status),
        [200, 200, 304],
        `${f.name}: HEAD statuses`,
      );
      assert.deepEqual(counts(await usageOf(ts, cappedKey)), expected, `${f.name}: after 5 304s and 3 HEADs`);
    }
    // A HEAD of a page never asked for charges nothing either (its answer is not in the cache).
    for (const f of FORMATS) ok(await raw(ts, `${f.path}?limit=9&offset=333`, { key: cappedKey, method: 'HEAD' }), `${f.name} HEAD of a new page`);
    assert.deepEqual(counts(await usageOf(ts, cappedKey)), expected, 'after HEADs of uncached pages');
  });

  test('another server on the same DATA_DIR gives the same ETags; its 304 on a cache miss charges nothing', async () => {
    const srv2 = await startTestServer(fixture.dataDir, SERVER_ENV);
    try {
      const key2 = provisionKey(srv2.config.ledgerDir, { plan: CAPPED, org: 'Polling second server' }).key;
      let expected = counts(await usageOf(srv2, key2));
      assert.deepEqual(expected, { records: 0, requests: 0 }, 'a new key has used nothing');
      for (const f of FORMATS) {
        const q = `${f.path}?limit=6&offset=400`;
        const first = ok(await raw(ts, q, { key: cappedKey }), `${f.name} on the first server`);
        const etag = header(first, 'etag');

        // Never asked on srv2: the 304 comes from a fresh computation, not from a cached answer.
        const m0 = await scrape(srv2);
        assertNotModified(await raw(srv2, q, { key: key2, headers: { 'if-none-match': etag } }), f, etag, lastModified, `${f.name}: 304 on the second server`);
        const m1 = await scrape(srv2);
        assert.equal(cacheCount(m1, f.path, 'miss') - cacheCount(m0, f.path, 'miss'), 1, `${f.name}: the 304 was a cache miss`);
        assert.equal(cacheCount(m1, f.path, 'hit') - cacheCount(m0, f.path, 'hit'), 0, `${f.name}: the 304 was not a hit`);
        assert.deepEqual(counts(await usageOf(srv2, key2)), expected, `${f.name}: the 304 charged nothing`);

        const second = ok(await raw(srv2, q, { key: key2 }), `${f.name} on the second server`);
        assert.equal(header(second, 'etag'), etag, `${f.name}: same snapshot, query and plan → same ETag on another server`);
        assert.ok(second.body.equals(first.body), `${f.name}: and the same bytes`);
        expected = { records: expected.records + 6, requests: expected.requests + 1 };
        assert.deepEqual(counts(await usageOf(srv2, key2)), expected, `${f.name}: the 200 charged its 6 records`);
      }
    } finally {
      await srv2.stop();
    }
  });
});

// ---------------------------------------------------------------- compression

describe('content-coding', () => {
  const NEGOTIATION: readonly (readonly [acceptEncoding: string | null, expected: 'gzip' | 'br' | null])[] = [
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['identity', null],
    [null, null],
    ['gzip;q=0', null],
    ['deflate', null],
  ];

  for (const f of POLLED) {
    test(`${f.name}: Accept-Encoding negotiation; decoded bytes equal the identity body; ETag carries the coding`, async () => {
      const q = `${f.path}?limit=5&offset=500`;
      const identity = ok(await raw(ts, q), q);
      assert.equal(identity.headers['content-encoding'], undefined, 'no Accept-Encoding, no coding');
      assert.ok(identity.body.length > MIN_COMPRESSED, `the body (${identity.body.length} bytes) must be over 1 KiB for this test`);
      assert.deepEqual(f.ids(identity.body), pageIds(live, 500, 5));
      const etag = header(identity, 'etag');
      const tag = opaqueOf(etag);
      for (const [ae, want] of NEGOTIATION) {
        const what = `Accept-Encoding ${ae ?? '(none)'}`;
        const r = ok(await raw(ts, q, ae === null ? {} : { headers: { 'accept-encoding': ae } }), what);
        assert.equal(r.headers['content-encoding'], want ?? undefined, what);
        assert.ok(decode(r).equals(identity.body), `${what}: decoded bytes equal the identity body`);
        assert.equal(header(r, 'etag'), want === null ? etag : `"${tag}-${want}"`, `${what}: ETag`);
        assert.ok(varyHasAcceptEncoding(r), `${what}: Vary`);
        assert.ok(header(r, 'content-type').startsWith(f.type), `${what}: Content-Type`);
        if (want !== null) assert.ok(r.body.length < identity.body.length, `${what}: the coded body is smaller`);
      }
    });

    test(`${f.name}: a body of at most 1 KiB is never compressed`, async () => {
      const q = `${f.path}?offset=100000`;
      const identity = ok(await raw(ts, q), q);
      assert.deepEqual(f.ids(identity.body), [], 'past the end: no events');
      assert.ok(identity.body.length <= MIN_COMPRESSED, `the body (${identity.body.length} bytes) must be at most 1 KiB for this test`);
      const etag = header(identity, 'etag');
      opaqueOf(etag);
      for (const ae of ['gzip, br', 'gzip', 'br']) {
        const r = ok(await raw(ts, q, { headers: { 'accept-encoding': ae } }), `${q} with ${ae}`);
        assert.equal(r.headers['content-encoding'], undefined, `${ae}: a small body goes uncompressed`);
        assert.ok(r.body.equals(identity.body), `${ae}: the same bytes`);
        assert.equal(header(r, 'etag'), etag, `${ae}: the identity ETag`);
      }
    });
  }

  test('a large streamed CSV export (2000 rows) compresses to exactly the identity CSV', async () => {
    const q = '/v1/events.csv?limit=2000';
    const identity = ok(await raw(ts, q), q);
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.equal(identity.headers['content-length'], undefined, 'streamed: no Content-Length');
    assert.deepEqual(FORMATS[1]!.ids(identity.body), pageIds(live, 0, 2000));
    const tag = opaqueOf(header(identity, 'etag'));
    for (const enc of ['gzip', 'br'] as const) {
      const r = ok(await raw(ts, q, { headers: { 'accept-encoding': enc } }), `${q} with ${enc}`);
      assert.equal(r.headers['content-encoding'], enc);
      assert.equal(header(r, 'etag'), `"${tag}-${enc}"`);
      const body = decode(r);
      assert.equal(body.length, identity.body.length, `${enc}: decoded length`);
      assert.ok(body.equals(identity.body), `${enc}: decoded bytes equal the identity CSV`);
    }
  });
});

// ---------------------------------------------------------------- response cache

describe('response cache', () => {
  POLLED.forEach((f, i) => {
    test(`${f.name}: the first request of a query is a miss, repeats are hits; a compressed hit is the same bytes each time`, async () => {
      // An offset of its own: /v1/events and the demo share entries for equal JSON queries.
      const offset = 600 + i * 10;
      const q = `${f.path}?limit=5&offset=${offset}`;
      const m0 = await scrape(ts);
      const first = await logged(ts, q);
      ok(first.r, q);
      assert.deepEqual(f.ids(first.r.body), pageIds(live, offset, 5));
      assert.deepEqual(
        first.lines.map((l) => [l.route, l.cache]),
        [[f.path, 'miss']],
      );
      const m1 = await scrape(ts);
      assert.deepEqual(
        [cacheCount(m1, f.path, 'miss') - cacheCount(m0, f.path, 'miss'), cacheCount(m1, f.path, 'hit') - cacheCount(m0, f.path, 'hit')],
        [1, 0],
        'first: a miss',
      );

      const second = await logged(ts, q);
      ok(second.r, `${q} again`);
      assert.ok(second.r.body.equals(first.r.body));
      assert.deepEqual(
        second.lines.map((l) => [l.route, l.cache]),
        [[f.path, 'hit']],
      );

      const br1 = ok(await raw(ts, q, { headers: { 'accept-encoding': 'br' } }), `${q} br`);
      const br2 = ok(await raw(ts, q, { headers: { 'accept-encoding': 'br' } }), `${q} br again`);
      const gz = ok(await raw(ts, q, { headers: { 'accept-encoding': 'gzip' } }), `${q} gzip`);
      const m2 = await scrape(ts);
      assert.deepEqual(
        [cacheCount(m2, f.path, 'miss') - cacheCount(m1, f.path, 'miss'), cacheCount(m2, f.path, 'hit') - cacheCount(m1, f.path, 'hit')],
        [0, 4],
        'repeats: hits',
      );
      assert.equal(br1.headers['content-encoding'], 'br');
      assert.ok(br2.body.equals(br1.body), 'a compressed hit is the same bytes each time');
      assert.ok(decode(br1).equals(first.r.body));
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.ok(decode(gz).equals(first.r.body));
    });
  });
});

// ---------------------------------------------------------------- snapshot swap

// Last: it stops the shared server, because pools of one process share the snapshot broadcast
// channel and another server's workers would answer for the swapping one (see operations.test.ts).
describe('snapshot swap', () => {
  test('after a swap every format answers from the new snapshot: new Last-Modified, ETag and body; the old ETag gets a 200', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-poll-swap-'));
    await cp(fixture.dataDir, dir, { recursive: true, verbatimSymlinks: true });
    await ts.stop();
    tsStopped = true;
    const srv = await startTestServer(dir, { ...SERVER_ENV, SNAPSHOT_POLL_MS: '50' });
    try {
      const oldId = fixture.build.manifest.id;
      const q = (f: FormatCase): string => `${f.path}?limit=5&offset=3`;
      const prior = new Map<string, Raw>();
      for (const f of POLLED) {
        const r = ok(await raw(srv, q(f)), `${f.name} before the swap`);
        assert.deepEqual(f.ids(r.body), pageIds(live, 3, 5));
        assert.equal(header(r, 'last-modified'), lastModified);
        // Known to match before the swap, so the 200 after it is the swap's doing.
        assert.equal((await raw(srv, q(f), { headers: { 'if-none-match': header(r, 'etag') } })).status, 304, `${f.name}: 304 before the swap`);
        prior.set(f.path, r);
      }

      // Another set built two days later (other content, another build time), in its own process
      // so that its synchronous stretches do not stall this process's server.
      const built = await buildInChild(dir, new Date(NOW_MS + 2 * DAY_MS), ['--synthetic', '3000']);
      assert.notEqual(built.id, oldId);
      let switched = false;
      for (let i = 0; i < 600 && !switched; i++) {
        switched = (await get(srv.base, '/readyz')).json?.snapshot === built.id;
        if (!switched) await delay(50);
      }
      assert.ok(switched, `/readyz never reported ${built.id}`);

      const newManifest = await manifestOf(dir, built.id);
      const newLastModified = new Date(newManifest.built_at).toUTCString();
      assert.notEqual(newLastModified, lastModified, 'the two builds must differ in build time');
      const newLive = upcoming(await readRows(path.join(dir, 'snapshots', built.id, 'events.parquet')));
      const want = pageIds(newLive, 3, 5);
      assert.notDeepEqual(want, pageIds(live, 3, 5), 'the two snapshots must differ on the page asked');

      for (const f of POLLED) {
        const old = prior.get(f.path)!;
        const oldTag = header(old, 'etag');
        const now = ok(await raw(srv, q(f)), `${f.name} after the swap`);
        assert.deepEqual(f.ids(now.body), want, `${f.name}: the new snapshot's page`);
        assert.equal(header(now, 'last-modified'), newLastModified, `${f.name}: Last-Modified`);
        assert.notEqual(header(now, 'etag'), oldTag, `${f.name}: ETag`);
        opaqueOf(header(now, 'etag'));
        assert.ok(!now.body.equals(old.body), `${f.name}: body`);

        for (const inm of [oldTag, `W/${oldTag}`, `"${oldTag.slice(1, -1)}-gzip"`]) {
          const r = ok(await raw(srv, q(f), { headers: { 'if-none-match': inm } }), `${f.name}: If-None-Match old ${inm}`);
          assert.equal(header(r, 'etag'), header(now, 'etag'));
          assert.ok(r.body.equals(now.body), `${f.name}: the old ETag gets the new body`);
        }
        assertNotModified(
          await raw(srv, q(f), { headers: { 'if-none-match': header(now, 'etag') } }),
          f,
          header(now, 'etag'),
          newLastModified,
          `${f.name}: the new ETag`,
        );
      }
    } finally {
      await srv.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
