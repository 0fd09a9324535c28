// CSV, RSS 2.0 and JSON Feed over real HTTP: every format answers a query with the same events and
// paging as /v1/events; each body is parsed back by an independent parser and checked against the
// JSON record; formula neutralization (on a small snapshot of our own), canceled events, plan rules.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { extractFromJson, extractFromXml } from '@extractus/feed-extractor';
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import * as v from 'valibot';
import { checkIcs, checkRss, hasXmllint, strictXml, xmllint } from './readers.ts';
import { EventListSchema, JsonFeedSchema, ProblemSchema, UsageSchema } from '../../server/schemas.ts';
import { buildSnapshot, type BuildResult } from '../../snapshot/build/build.ts';
import {
  get,
  NOW,
  PUBLIC,
  WEB,
  provisionKey,
  readRows,
  recordLines,
  sampleFixture,
  startTestServer,
  type Fixture,
  type Got,
  type OracleRow,
  type TestServer,
} from './helpers.ts';
import { byStart, byString, conformanceQueries, haversineKm, isExcluded, matchesQ, QUERY_NAMES, type Query, type QueryName } from './conformance.ts';

type EventList = v.InferOutput<typeof EventListSchema>;
type EventRecord = EventList['events'][number];
type JsonFeed = v.InferOutput<typeof JsonFeedSchema>;

const FORMULA_REGISTRY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/formats/registry.json');

/** The documented CSV columns, in order (written out here, not imported from the server). */
const CSV_HEADER = [
  'id',
  'title',
  'description',
  'summary',
  'start_datetime',
  'end_datetime',
  'venue_name',
  'venue_address',
  'venue_city',
  'venue_lat',
  'venue_lng',
  'venue_geo_precision',
  'organizer',
  'organizer_url',
  'categories',
  'tags',
  'image_url',
  'is_free',
  'price_min',
  'price_max',
  'price_note',
  'ticket_url',
  'source',
  'source_url',
  'destination',
  'age_min_months',
  'age_max_months',
  'age_min_years',
  'age_max_years',
  'is_canceled',
  'all_day',
  'created_at',
  'updated_at',
  'event_url',
  'distance_km',
];
const col = (name: string): number => {
  const i = CSV_HEADER.indexOf(name);
  assert.ok(i >= 0, name);
  return i;
};

const FORMATS = ['/v1/events', '/v1/events.csv', '/v1/feed.rss', '/v1/feed.json', '/v1/feed.ics'] as const;
type FormatPath = (typeof FORMATS)[number];
const CONTENT_TYPES: Readonly<Record<FormatPath, string>> = {
  '/v1/events': 'application/json; charset=utf-8',
  '/v1/events.csv': 'text/csv; charset=utf-8',
  '/v1/feed.rss': 'application/rss+xml; charset=utf-8',
  '/v1/feed.json': 'application/feed+json; charset=utf-8',
  '/v1/feed.ics': 'text/calendar; charset=utf-8',
};

// ---------------------------------------------------------------- the CSV flattening (own code, from the documented rules)

const FORMULA_START = ['=', '+', '-', '@', '\t', '\r'];
const textCell = (s: string | null): string => (s === null ? '' : FORMULA_START.includes(s.charAt(0)) ? `'${s}` : s);
const numCell = (n: number | null | undefined): string => (n === null || n === undefined ? '' : String(n));

function flatten(r: EventRecord): Record<string, string> {
  return {
    id: textCell(r.id),
    title: textCell(r.title),
    description: textCell(r.description),
    summary: textCell(r.summary),
    start_datetime: textCell(r.start_datetime),
    end_datetime: textCell(r.end_datetime),
    venue_name: textCell(r.venue.name),
    venue_address: textCell(r.venue.address),
    venue_city: textCell(r.venue.city),
    venue_lat: numCell(r.venue.lat),
    venue_lng: numCell(r.venue.lng),
    venue_geo_precision: textCell(r.venue.geo_precision),
    organizer: textCell(r.organizer),
    organizer_url: textCell(r.organizer_url),
    categories: textCell(r.categories.join(';')),
    tags: textCell(r.tags.join(';')),
    image_url: textCell(r.image_url),
    is_free: r.is_free ? 'true' : 'false',
    price_min: numCell(r.price?.min),
    price_max: numCell(r.price?.max),
    price_note: textCell(r.price?.note ?? null),
    ticket_url: textCell(r.ticket_url),
    source: textCell(r.source),
    source_url: '',
    destination: textCell(r.destination),
    age_min_months: numCell(r.age_range?.min_months),
    age_max_months: numCell(r.age_range?.max_months),
    age_min_years: numCell(r.age_range_years?.min_years),
    age_max_years: numCell(r.age_range_years?.max_years),
    is_canceled: r.is_canceled ? 'true' : 'false',
    all_day: r.all_day ? 'true' : 'false',
    created_at: textCell(r.created_at),
    updated_at: textCell(r.updated_at),
    event_url: textCell(r.event_url),
    distance_km: numCell(r.distance_km),
  };
}

const asRecord = (row: readonly string[]): Record<string, string> => Object.fromEntries(CSV_HEADER.map((h, i) => [h, row[i] ?? '<missing>']));

/** Line ends outside quoted fields: how many are CRLF, and how many are anything else (bare LF or CR). */
function lineEnds(body: string): { crlf: number; other: number } {
  let quoted = false;
  let crlf = 0;
  let other = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '\r') {
      if (body[i + 1] === '\n') {
        crlf++;
        i++;
      } else other++;
    } else if (c === '\n') other++;
  }
  return { crlf, other };
}

// ---------------------------------------------------------------- RSS, parsed back

const RssItemSchema = v.object({
  title: v.optional(v.string()),
  description: v.optional(v.string()),
  link: v.string(),
  guid: v.object({ '#text': v.string(), '@_isPermaLink': v.string() }),
  pubDate: v.string(),
  category: v.optional(v.array(v.string()), []),
});
const RssDocSchema = v.object({
  rss: v.object({
    '@_version': v.string(),
    '@_xmlns:atom': v.string(),
    channel: v.object({
      title: v.pipe(v.string(), v.minLength(1)),
      link: v.pipe(v.string(), v.minLength(1)),
      description: v.pipe(v.string(), v.minLength(1)),
      lastBuildDate: v.string(),
      language: v.string(),
      copyright: v.string(),
      'atom:link': v.array(v.object({ '@_href': v.string(), '@_rel': v.string() })),
      item: v.optional(v.array(RssItemSchema), []),
    }),
  }),
});
type RssDoc = v.InferOutput<typeof RssDocSchema>;
type RssItem = v.InferOutput<typeof RssItemSchema>;

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  isArray: (name) => name === 'item' || name === 'category' || name === 'atom:link',
});

function rss(g: Got): RssDoc {
  // Strict well-formedness first (saxes): fast-xml-parser below only reads the structure.
  strictXml(g.text);
  return v.parse(RssDocSchema, xml.parse(g.text));
}

const atomLinks = (doc: RssDoc, rel: string): string[] => doc.rss.channel['atom:link'].filter((l) => l['@_rel'] === rel).map((l) => l['@_href']);

// ---------------------------------------------------------------- HTTP side

let fx: Fixture;
let srv: TestServer;
/** The snapshot of our own feed whose texts start with formula characters, and its server. */
let formulaDir: string;
let formulaBuild: BuildResult;
let formulaSrv: TestServer;
/** Not-ended events under Community's exclusions, in start order. */
let communityUp: OracleRow[];
const rowById = new Map<string, OracleRow>();
const queries = new Map<QueryName, Query>();

const Q = (name: QueryName): Query => {
  const q = queries.get(name);
  assert.ok(q, name);
  return q;
};

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir);
  formulaDir = await mkdtemp(path.join(os.tmpdir(), 'fe-formats-'));
  formulaBuild = await buildSnapshot({ dataDir: formulaDir, registryFile: FORMULA_REGISTRY, now: NOW });
  formulaSrv = await startTestServer(formulaDir);

  for (const r of fx.rows) rowById.set(r.id, r);
  const conformance = conformanceQueries(fx.rows, NOW);
  communityUp = conformance.communityUp;
  for (const [name, q] of conformance.queries) queries.set(name, q);
});

after(async () => {
  await formulaSrv?.stop();
  await srv?.stop();
  if (formulaDir) await rm(formulaDir, { recursive: true, force: true });
  await fx?.cleanup();
});

/** GETs are repeated by several tests; the bodies of one server do not change, so each is fetched once. */
const memo = new Map<string, Promise<Got>>();
function fetchOnce(s: TestServer, pathAndQuery: string): Promise<Got> {
  const k = `${s.base}${pathAndQuery}`;
  let p = memo.get(k);
  if (!p) {
    p = get(s.base, pathAndQuery);
    memo.set(k, p);
  }
  return p;
}

function ok(g: Got, type: string, what: string): void {
  assert.equal(g.status, 200, `${what}: ${g.status} ${g.text.slice(0, 300)}`);
  assert.equal(g.headers.get('content-type'), type, what);
}

function problem(g: Got, status: number, code: string, what: string, param?: string): void {
  assert.equal(g.status, status, `${what}: ${g.status} ${g.text.slice(0, 300)}`);
  assert.match(g.headers.get('content-type') ?? '', /^application\/problem\+json/, what);
  const p = v.parse(ProblemSchema, g.json);
  assert.equal(p.code, code, what);
  assert.equal(p.status, status, what);
  if (param !== undefined)
    assert.ok(
      p.errors?.some((e) => e.param === param),
      `${what}: errors name ${param}: ${JSON.stringify(p.errors)}`,
    );
}

/** The Link header's targets by rel. */
function linkRels(g: Got): Map<string, string> {
  const out = new Map<string, string>();
  const h = g.headers.get('link');
  if (h === null) return out;
  // Targets are URLs whose own commas are percent-encoded: a comma before "<" separates links.
  for (const part of h.split(/,(?=\s*<)/)) {
    const m = /^<([^>]*)>; ?rel="([^"]*)"$/.exec(part.trim());
    assert.ok(m, `Link part: ${part}`);
    out.set(m[2] ?? '', m[1] ?? '');
  }
  return out;
}

const totalHeader = (g: Got): number => {
  const h = g.headers.get('x-total-count');
  assert.ok(h !== null && /^\d+$/.test(h), `X-Total-Count: ${h}`);
  return Number(h);
};

const sortedPairs = (pairs: Iterable<readonly [string, string]>): [string, string][] =>
  [...pairs].map(([k, val]): [string, string] => [k, val]).sort((a, b) => byString(a[0], b[0]) || byString(a[1], b[1]));

/**
 * A link to page `offset` of query `q` on `base + path`: same origin and path, the query's
 * parameters (api_key too when the query has one) with offset moved on. `ordered`: parameters must come sorted by name.
 */
function assertPageLink(href: string, base: string, route: string, q: Query, offset: number, what: string, ordered = false): void {
  const u = new URL(href);
  assert.equal(`${u.origin}${u.pathname}`, `${base}${route}`, `${what}: ${href}`);
  const want = sortedPairs([...q.params.filter(([k]) => k !== 'offset'), ...(offset > 0 ? [['offset', String(offset)] as const] : [])]);
  const got = [...u.searchParams];
  assert.deepEqual(sortedPairs(got), want, `${what}: parameters of ${href}`);
  if (ordered) assert.deepEqual(got, want, `${what}: parameters sorted by name in ${href}`);
}

const offsetOf = (href: string): number => Number(new URL(href).searchParams.get('offset'));

/** What every format says about a page: its event ids and its paging. */
interface Page {
  readonly ids: string[];
  readonly total: number;
  readonly next: number | null;
}

async function json(s: TestServer, pathAndQuery: string): Promise<EventList> {
  const g = await fetchOnce(s, pathAndQuery);
  ok(g, CONTENT_TYPES['/v1/events'], pathAndQuery);
  return v.parse(EventListSchema, g.json);
}

async function csv(s: TestServer, pathAndQuery: string): Promise<{ g: Got; rows: string[][] }> {
  const g = await fetchOnce(s, pathAndQuery);
  ok(g, CONTENT_TYPES['/v1/events.csv'], pathAndQuery);
  const all = parseCsv(g.text, { bom: false });
  assert.deepEqual(all[0], CSV_HEADER, `${pathAndQuery}: the header row`);
  return { g, rows: all.slice(1) };
}

async function feed(s: TestServer, pathAndQuery: string): Promise<{ g: Got; doc: JsonFeed }> {
  const g = await fetchOnce(s, pathAndQuery);
  ok(g, CONTENT_TYPES['/v1/feed.json'], pathAndQuery);
  return { g, doc: v.parse(JsonFeedSchema, g.json) };
}

async function rssOf(s: TestServer, pathAndQuery: string): Promise<{ g: Got; doc: RssDoc }> {
  const g = await fetchOnce(s, pathAndQuery);
  ok(g, CONTENT_TYPES['/v1/feed.rss'], pathAndQuery);
  return { g, doc: rss(g) };
}

/** A page in any format, its paging from the headers checked against what the body says. */
async function pageOf(prefix: '' | '/api', route: FormatPath, q: Query): Promise<Page> {
  const pq = `${prefix}${route}?${q.qs}`;
  const base = prefix === '/api' ? `${WEB}/api` : PUBLIC;
  let ids: string[];
  let bodyNext: number | null | undefined;
  let g: Got;
  switch (route) {
    case '/v1/events': {
      g = await fetchOnce(srv, pq);
      const body = await json(srv, pq);
      ids = body.events.map((e) => e.id);
      bodyNext = body.next_offset;
      assert.equal(totalHeader(g), body.total, `${pq}: X-Total-Count = total`);
      break;
    }
    case '/v1/events.csv': {
      const c = await csv(srv, pq);
      g = c.g;
      ids = c.rows.map((r) => r[0] ?? '');
      assert.equal(linkRels(g).get('attribution'), WEB, `${pq}: Link rel="attribution"`);
      break;
    }
    case '/v1/feed.rss': {
      const r = await rssOf(srv, pq);
      g = r.g;
      ids = r.doc.rss.channel.item.map((it) => it.guid['#text']);
      const next = atomLinks(r.doc, 'next');
      assert.ok(next.length <= 1, `${pq}: one atom:link rel=next at most`);
      bodyNext = next[0] === undefined ? null : offsetOf(next[0]);
      if (next[0] !== undefined) assertPageLink(next[0], base, route, q, offsetOf(next[0]), `${pq} atom:link rel=next`);
      break;
    }
    case '/v1/feed.ics': {
      // ical.js reads it (helpers.get → readers.checkIcs); paging is in the headers alone.
      g = await fetchOnce(srv, pq);
      ok(g, CONTENT_TYPES['/v1/feed.ics'], pq);
      ids = checkIcs(g.text, pq).map((e) => String(e.getFirstPropertyValue('uid')));
      break;
    }
    case '/v1/feed.json': {
      const f = await feed(srv, pq);
      g = f.g;
      ids = f.doc.items.map((it) => it.id);
      bodyNext = f.doc.next_url === undefined ? null : offsetOf(f.doc.next_url);
      assert.equal(f.doc._family_events.next_offset, bodyNext, `${pq}: next_url agrees with _family_events.next_offset`);
      assert.equal(f.doc._family_events.total, totalHeader(g), `${pq}: X-Total-Count = _family_events.total`);
      if (f.doc.next_url !== undefined) assertPageLink(f.doc.next_url, base, route, q, offsetOf(f.doc.next_url), `${pq} next_url`);
      break;
    }
  }
  const linkNext = linkRels(g).get('next');
  const next = linkNext === undefined ? null : offsetOf(linkNext);
  if (linkNext !== undefined) assertPageLink(linkNext, base, route, q, next ?? -1, `${pq} Link rel=next`);
  if (bodyNext !== undefined) assert.equal(next, bodyNext, `${pq}: the Link header and the body agree on the next page`);
  return { ids, total: totalHeader(g), next };
}

// ---------------------------------------------------------------- 1. the shared conformance case

describe('every format answers a query with the same events and paging', () => {
  QUERY_NAMES.forEach((name, i) => {
    test(name, async () => {
      const q = Q(name);
      const body = await json(srv, `/v1/events?${q.qs}`);
      const ids = body.events.map((e) => e.id);
      assert.ok(ids.length > 0, `${name}: a non-empty page`);
      // Every query here has an oracle; plain and city are the required minimum, the rest add to it.
      const want = q.expected.slice(q.offset, q.offset + q.limit).map((r) => r.id);
      assert.deepEqual(ids, want, `${name}: the page is the oracle's`);
      assert.equal(body.total, q.expected.length, `${name}: total`);
      assert.equal(body.next_offset, q.offset + q.limit < q.expected.length ? q.offset + q.limit : null, `${name}: next_offset`);

      const api = FORMATS[i % FORMATS.length] ?? '/v1/events';
      const pages: [string, Page][] = [];
      for (const route of FORMATS) pages.push([route, await pageOf('', route, q)]);
      pages.push([`/api${api}`, await pageOf('/api', api, q)]);
      for (const [route, p] of pages) {
        assert.deepEqual(p.ids, ids, `${name} ${route}: same ids in the same order as /v1/events`);
        assert.equal(p.total, body.total, `${name} ${route}: X-Total-Count = JSON total`);
        assert.equal(p.next, body.next_offset, `${name} ${route}: Link rel=next iff (and at) JSON next_offset`);
      }
    });
  });

  test('the queries cover both a last page and pages with a next one', () => {
    const lastPages = QUERY_NAMES.filter((n) => Q(n).offset + Q(n).limit >= Q(n).expected.length);
    assert.ok(lastPages.length >= 1 && lastPages.length < QUERY_NAMES.length, lastPages.join(', '));
  });
});

// ---------------------------------------------------------------- 2. CSV

describe('CSV', () => {
  test('raw bytes: no BOM, CRLF line ends only, attachment disposition', async () => {
    for (const name of QUERY_NAMES) {
      const res = await fetch(`${srv.base}/v1/events.csv?${Q(name).qs}`, { headers: { authorization: `Bearer ${srv.key}`, 'accept-encoding': 'identity' } });
      assert.equal(res.status, 200, name);
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="events.csv"', name);
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.notDeepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], `${name}: no UTF-8 BOM`);
      const body = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
      assert.ok(body.startsWith(`${CSV_HEADER.join(',')}\r\n`), `${name}: starts with the header row and CRLF`);
      assert.ok(body.endsWith('\r\n'), `${name}: the last record ends with CRLF`);
      const ends = lineEnds(body);
      assert.equal(ends.other, 0, `${name}: no bare LF or CR outside quoted fields`);
      const records = parseCsv(body, { bom: false }).length;
      assert.equal(ends.crlf, records, `${name}: one CRLF per record`);
    }
  });

  test('each row is the JSON record flattened by the documented rules; distance_km only on geo searches', async () => {
    for (const name of QUERY_NAMES) {
      const q = Q(name);
      const body = await json(srv, `/v1/events?${q.qs}`);
      const { rows } = await csv(srv, `/v1/events.csv?${q.qs}`);
      assert.equal(rows.length, body.events.length, name);
      rows.forEach((row, i) => {
        const r = body.events[i];
        assert.ok(r);
        assert.equal(row.length, CSV_HEADER.length, `${name} row ${i}: column count`);
        assert.deepEqual(asRecord(row), flatten(r), `${name} row ${i} (${r.id})`);
        const dist = row[col('distance_km')] ?? '';
        if (q.geo) {
          assert.notEqual(dist, '', `${name} ${r.id}: distance_km on a geo search`);
          const oracleRow = rowById.get(r.id);
          const lat = Number(q.params.find(([k]) => k === 'lat')?.[1]);
          const lng = Number(q.params.find(([k]) => k === 'lng')?.[1]);
          assert.ok(oracleRow);
          assert.ok(
            Math.abs(Number(dist) - haversineKm(lat, lng, oracleRow.venue_lat, oracleRow.venue_lng)) <= 0.0005 + 1e-9,
            `${name} ${r.id}: distance ${dist}`,
          );
        } else assert.equal(dist, '', `${name} ${r.id}: no distance_km without lat/lng`);
      });
    }
  });

  test('a query matching nothing gives exactly the header row', async () => {
    const word = 'zqxjvw';
    assert.equal(communityUp.filter((r) => matchesQ(r, word)).length, 0, 'the oracle finds nothing for it');
    const g = await get(srv.base, `/v1/events.csv?q=${word}`);
    ok(g, CONTENT_TYPES['/v1/events.csv'], 'zero matches');
    assert.equal(g.text, `${CSV_HEADER.join(',')}\r\n`);
    assert.equal(totalHeader(g), 0);
    assert.equal(linkRels(g).get('attribution'), WEB);
    assert.equal(linkRels(g).has('next'), false);
  });

  test('limit=10000 returns every match of the sample; limit=10001 is refused', async () => {
    const all = await get(srv.base, '/v1/events.csv?limit=10000');
    ok(all, CONTENT_TYPES['/v1/events.csv'], 'limit=10000');
    const rows = parseCsv(all.text, { bom: false }).slice(1);
    const total = (await json(srv, '/v1/events?limit=1')).total;
    assert.ok(total > 100 && total < 10_000, `${total} matches`);
    assert.equal(rows.length, total, 'every match, as counted by the JSON total');
    assert.equal(totalHeader(all), total);
    assert.deepEqual(
      rows.map((r) => r[0]),
      communityUp.map((r) => r.id),
      'in the oracle order',
    );
    assert.equal(linkRels(all).has('next'), false, 'nothing after the last page');

    problem(await get(srv.base, '/v1/events.csv?limit=10001'), 400, 'invalid_parameter', 'csv limit=10001', 'limit');
  });

  test('feeds and JSON accept limit=100 and refuse limit=101', async () => {
    const { doc } = await rssOf(srv, '/v1/feed.rss?limit=100');
    assert.equal(doc.rss.channel.item.length, 100);
    for (const route of ['/v1/feed.rss', '/v1/feed.json', '/v1/events', '/api/v1/feed.json'])
      problem(await get(srv.base, `${route}?limit=101`), 400, 'invalid_parameter', `${route} limit=101`, 'limit');
  });
});

// ---------------------------------------------------------------- 3. formula neutralization and numbers

describe('CSV cells a spreadsheet would run', () => {
  test('negative longitudes stay plain negative numbers', async () => {
    const q = Q('plain');
    const body = await json(srv, `/v1/events?${q.qs}`);
    const { rows } = await csv(srv, `/v1/events.csv?${q.qs}`);
    let negative = 0;
    rows.forEach((row, i) => {
      const r = body.events[i];
      assert.ok(r);
      for (const [name, want] of [
        ['venue_lng', r.venue.lng],
        ['venue_lat', r.venue.lat],
      ] as const) {
        const cell = row[col(name)] ?? '';
        assert.ok(!cell.startsWith("'"), `${r.id} ${name} ${cell}: no apostrophe on a number`);
        assert.match(cell, /^-?\d+(?:\.\d+)?$/, `${r.id} ${name}`);
        assert.equal(Number(cell), want, `${r.id} ${name}`);
      }
      if (r.venue.lng < 0) negative++;
    });
    assert.ok(negative > 0, 'the page has venues west of Greenwich');
  });

  test('the sample has no text starting with a formula character (hence the snapshot of our own)', async () => {
    const starts = (await recordLines(fx.build))
      .map((l) => v.parse(v.looseObject({ title: v.string(), description: v.nullable(v.string()), organizer: v.nullable(v.string()) }), JSON.parse(l)))
      .flatMap((r) => [r.title, r.description, r.organizer])
      .filter((s): s is string => s !== null && FORMULA_START.includes(s.charAt(0)));
    assert.deepEqual(starts, []);
  });

  test('title, description, summary and organizer starting with = + - @ get a leading apostrophe, nothing else changes', async () => {
    const body = await json(formulaSrv, '/v1/events?limit=100');
    const expected = (await readRows(path.join(formulaBuild.dir, 'events.parquet'))).filter((r) => r.end_ms >= NOW.getTime()).sort(byStart);
    assert.equal(expected.length, 5, 'every event of formula-events.csv is in the snapshot');
    assert.deepEqual(
      body.events.map((e) => e.id),
      expected.map((r) => r.id),
    );
    const { rows } = await csv(formulaSrv, '/v1/events.csv?limit=100');
    assert.equal(rows.length, body.events.length);

    const neutralized = new Set<string>();
    rows.forEach((row, i) => {
      const r = body.events[i];
      assert.ok(r);
      const cells = asRecord(row);
      assert.deepEqual(cells, flatten(r), r.id);
      for (const field of ['title', 'description', 'summary', 'organizer'] as const) {
        const val: string | null = r[field];
        if (val === null) continue;
        const cell = cells[field];
        if (FORMULA_START.includes(val.charAt(0))) {
          assert.equal(cell, `'${val}`, `${r.id} ${field}`);
          neutralized.add(val.charAt(0));
        } else assert.equal(cell, val, `${r.id} ${field}`);
      }
      assert.equal(Number(cells.venue_lng), r.venue.lng);
      assert.ok(r.venue.lng < 0 && cells.venue_lng?.startsWith('-'), 'a negative number cell is left as is');
    });
    assert.deepEqual([...neutralized].sort(), ['+', '-', '=', '@'], 'every formula start the fixture carries was met');
    const hyperlink = body.events.find((e) => e.title.startsWith('=HYPERLINK('));
    assert.ok(hyperlink, 'the =HYPERLINK title survived the pipeline');
    assert.equal(rows[body.events.indexOf(hyperlink)]?.[col('title')], `'${hyperlink.title}`);
  });

  test('feeds carry the same texts unchanged (neutralization is for CSV only)', async () => {
    const body = await json(formulaSrv, '/v1/events?limit=100');
    const { doc } = await rssOf(formulaSrv, '/v1/feed.rss?limit=100');
    const { doc: jf } = await feed(formulaSrv, '/v1/feed.json?limit=100');
    const title = (r: EventRecord): string => (r.is_canceled ? `Canceled: ${r.title}` : r.title);
    assert.deepEqual(
      doc.rss.channel.item.map((it) => it.title),
      body.events.map(title),
    );
    assert.deepEqual(
      jf.items.map((it) => it._family_events),
      body.events,
    );
  });
});

// ---------------------------------------------------------------- 4. RSS

/** RFC 822 date-time as RSS 2.0 uses it ("Sat, 21 Nov 2026 18:00:00 GMT"). */
const RFC822 = /^(?:[A-Z][a-z]{2}, )?\d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}(?::\d{2})? (?:[+-]\d{4}|[A-Z]{1,3})$/;
const HTML_TAG = /<\/?[a-z][^>]*>/i;
const ENTITY = /&(?:[a-z]+|#\d+|#x[\da-f]+);/i;

function assertRssItem(it: RssItem, r: EventRecord, what: string): void {
  assert.ok(it.title !== undefined || it.description !== undefined, `${what}: title or description`);
  assert.equal(it.title, r.is_canceled ? `Canceled: ${r.title}` : r.title, `${what}: title`);
  assert.equal(it.guid['#text'], r.id, `${what}: guid`);
  assert.equal(it.guid['@_isPermaLink'], 'false', `${what}: guid isPermaLink`);
  assert.equal(it.link, r.event_url, `${what}: link`);
  assert.match(it.pubDate, RFC822, `${what}: pubDate`);
  assert.equal(Date.parse(it.pubDate), Date.parse(r.start_datetime), `${what}: pubDate is the start`);
  const text = it.description ?? '';
  assert.ok(!HTML_TAG.test(text), `${what}: description without tags: ${text}`);
  assert.ok(!ENTITY.test(text), `${what}: description without entities: ${text}`);
  assert.ok((text.split('\n')[0] ?? '').includes(`${r.venue.name}, ${r.venue.city}`), `${what}: first line says where: ${text}`);
  if (r.description !== null) assert.ok(text.includes(r.description), `${what}: the description follows`);
  assert.deepEqual(it.category, [...(r.is_canceled ? ['canceled'] : []), ...r.categories, ...r.tags], `${what}: categories then tags`);
}

/** An independent parser reads a feed back: the same ids, links, titles and start dates as the JSON search, and the website as its link. */
async function readBack(route: '/v1/feed.rss' | '/v1/feed.json', extract: typeof extractFromXml | typeof extractFromJson): Promise<void> {
  for (const name of QUERY_NAMES) {
    const q = Q(name);
    const body = await json(srv, `/v1/events?${q.qs}`);
    const g = await fetchOnce(srv, `${route}?${q.qs}`);
    const parsed = extract(g.text, { descriptionMaxLen: 0 });
    assert.equal(new URL(parsed.link ?? '').href, new URL(WEB).href, name);
    const entries = parsed.entries ?? [];
    assert.deepEqual(
      entries.map((e) => e.id),
      body.events.map((e) => e.id),
      `${name}: ids`,
    );
    assert.deepEqual(
      entries.map((e) => e.link),
      body.events.map((e) => new URL(e.event_url).href),
      `${name}: links`,
    );
    assert.deepEqual(
      entries.map((e) => e.title),
      body.events.map((e) => (e.is_canceled ? `Canceled: ${e.title}` : e.title)),
      `${name}: titles`,
    );
    assert.deepEqual(
      entries.map((e) => Date.parse(e.published ?? '')),
      body.events.map((e) => Date.parse(e.start_datetime)),
      `${name}: dates`,
    );
  }
}

describe('RSS 2.0', () => {
  test('channel: version, required elements, attribution link, build date, self and next links', async () => {
    for (const name of QUERY_NAMES) {
      const q = Q(name);
      const body = await json(srv, `/v1/events?${q.qs}`);
      const { doc } = await rssOf(srv, `/v1/feed.rss?${q.qs}`);
      const ch = doc.rss.channel;
      assert.equal(doc.rss['@_version'], '2.0', name);
      assert.equal(doc.rss['@_xmlns:atom'], 'http://www.w3.org/2005/Atom', name);
      assert.equal(new URL(ch.link).href, new URL(WEB).href, `${name}: channel link is the website (attribution)`);
      assert.equal(Date.parse(ch.lastBuildDate), Math.floor(Date.parse(fx.build.manifest.built_at) / 1000) * 1000, `${name}: lastBuildDate`);
      assert.ok(ch.language.length > 0 && ch.copyright.length > 0, name);
      const self = atomLinks(doc, 'self');
      assert.equal(self.length, 1, `${name}: one rel=self`);
      assertPageLink(self[0] ?? '', PUBLIC, '/v1/feed.rss', q, q.offset, `${name} rel=self`);
      const next = atomLinks(doc, 'next');
      if (body.next_offset === null) assert.deepEqual(next, [], `${name}: no rel=next on the last page`);
      else {
        assert.equal(next.length, 1, `${name}: rel=next`);
        assertPageLink(next[0] ?? '', PUBLIC, '/v1/feed.rss', q, body.next_offset, `${name} rel=next`);
      }
    }
  });

  test('items: title, guid, link, pubDate, plain description, categories then tags', async () => {
    for (const name of QUERY_NAMES) {
      const q = Q(name);
      const body = await json(srv, `/v1/events?${q.qs}`);
      const { doc } = await rssOf(srv, `/v1/feed.rss?${q.qs}`);
      assert.equal(doc.rss.channel.item.length, body.events.length, name);
      doc.rss.channel.item.forEach((it, i) => {
        const r = body.events[i];
        assert.ok(r);
        assertRssItem(it, r, `${name} item ${i}`);
      });
    }
  });

  test('links keep the api_key the request put in its URL (a reader given only the URL follows them), and only that; /api feeds link to the website host', async () => {
    for (const name of ['paged', 'q word'] as const) {
      const q = Q(name);
      const withKey = { ...q, params: [...q.params, ['api_key', srv.key] as const] };
      const g = await get(srv.base, `/v1/feed.rss?${q.qs}&api_key=${srv.key}`);
      ok(g, CONTENT_TYPES['/v1/feed.rss'], `${name} with api_key`);
      const doc = rss(g);
      assertPageLink(atomLinks(doc, 'self')[0] ?? '', PUBLIC, '/v1/feed.rss', withKey, q.offset, `${name} self`, true);
      const next = atomLinks(doc, 'next')[0];
      if (next !== undefined) {
        assertPageLink(next, PUBLIC, '/v1/feed.rss', withKey, offsetOf(next), `${name} next`, true);
        assert.ok((g.headers.get('link') ?? '').includes(`<${next}>; rel="next"`), `${name}: the Link header names the same next page`);
        assert.equal(
          (await get(srv.base, `${new URL(next).pathname}${new URL(next).search}`, { headers: { authorization: '' } })).status,
          200,
          `${name}: next works alone`,
        );
      }
      assert.ok(!g.text.replace(/api_key=[^&"<\s]+/g, '').includes(srv.key), `${name}: the key appears nowhere else in the body`);
      // A request that sent its key in a header gets links without one.
      const header = await get(srv.base, `/v1/feed.rss?${q.qs}`);
      assert.ok(!header.text.includes(srv.key) && !(header.headers.get('link') ?? '').includes(srv.key), `${name}: no key of the header in links`);
    }
    const q = Q('paged');
    const { doc } = await rssOf(srv, `/api/v1/feed.rss?${q.qs}`);
    assertPageLink(atomLinks(doc, 'self')[0] ?? '', `${WEB}/api`, '/v1/feed.rss', q, q.offset, '/api self');
  });

  test('the self links of both feeds list the request parameters sorted by name, offset included', async () => {
    // One canonical URL per page whatever order the client wrote; "paged" is asked in disorder.
    for (const name of QUERY_NAMES) {
      const q = Q(name);
      const { doc } = await rssOf(srv, `/v1/feed.rss?${q.qs}`);
      assertPageLink(atomLinks(doc, 'self')[0] ?? '', PUBLIC, '/v1/feed.rss', q, q.offset, `${name} rel=self`, true);
      const { doc: jf } = await feed(srv, `/v1/feed.json?${q.qs}`);
      assertPageLink(jf.feed_url, PUBLIC, '/v1/feed.json', q, q.offset, `${name} feed_url`, true);
    }
  });

  test('@extractus/feed-extractor reads back the ids, links, titles and dates', () => readBack('/v1/feed.rss', extractFromXml));

  test('rss-parser, a common feed reader, reads every item: guid is the id, link is event_url, the title, categories then tags', async () => {
    for (const name of QUERY_NAMES) {
      const q = Q(name);
      const body = await json(srv, `/v1/events?${q.qs}`);
      const g = await fetchOnce(srv, `/v1/feed.rss?${q.qs}`);
      const { items } = await checkRss(g.text, name);
      assert.deepEqual(
        items.map((it) => [it.guid, it.link, it.title, it.categories]),
        body.events.map((r) => [
          r.id,
          r.event_url,
          r.is_canceled ? `Canceled: ${r.title}` : r.title,
          [...new Set([...(r.is_canceled ? ['canceled'] : []), ...r.categories, ...r.tags])],
        ]),
        name,
      );
    }
  });

  // CI installs libxml2-utils, so there a missing xmllint fails rather than skips.
  test(
    'xmllint --noout accepts every RSS body of the conformance cases, /api twin included',
    { skip: !hasXmllint && !process.env.CI ? 'xmllint is not installed (apt-get install -y libxml2-utils)' : false },
    async () => {
      for (const name of QUERY_NAMES) {
        for (const prefix of ['', '/api']) {
          const g = await fetchOnce(srv, `${prefix}/v1/feed.rss?${Q(name).qs}`);
          const verdict = xmllint(g.text);
          assert.ok(verdict, 'xmllint is not installed');
          assert.ok(verdict.ok, `${prefix}${name}: ${verdict.stderr}`);
        }
      }
    },
  );
});

// ---------------------------------------------------------------- 5. JSON Feed

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

describe('JSON Feed 1.1', () => {
  test('the document: required members, attribution, self and next links, page figures equal the envelope', async () => {
    for (const name of QUERY_NAMES) {
      const q = Q(name);
      const body = await json(srv, `/v1/events?${q.qs}`);
      const { doc } = await feed(srv, `/v1/feed.json?${q.qs}`);
      assert.equal(doc.version, 'https://jsonfeed.org/version/1.1', name);
      assert.ok(doc.title.length > 0, name);
      assert.equal(new URL(doc.home_page_url).href, new URL(WEB).href, `${name}: home_page_url is the website (attribution)`);
      assertPageLink(doc.feed_url, PUBLIC, '/v1/feed.json', q, q.offset, `${name} feed_url`);
      if (body.next_offset === null) assert.equal(doc.next_url, undefined, `${name}: no next_url on the last page`);
      else assertPageLink(doc.next_url ?? '', PUBLIC, '/v1/feed.json', q, body.next_offset, `${name} next_url`);
      const { about, ...figures } = doc._family_events;
      assert.ok(about.length > 0);
      assert.deepEqual(
        figures,
        { total: body.total, limit: body.limit, offset: body.offset, next_offset: body.next_offset, truncated: body.truncated, attribution: body.attribution },
        name,
      );
    }
  });

  test('items: id, content_text, RFC 3339 date_published, tags, and the full record under _family_events', async () => {
    for (const name of QUERY_NAMES) {
      const q = Q(name);
      const body = await json(srv, `/v1/events?${q.qs}`);
      const { doc } = await feed(srv, `/v1/feed.json?${q.qs}`);
      assert.equal(doc.items.length, body.events.length, name);
      doc.items.forEach((it, i) => {
        const r = body.events[i];
        assert.ok(r);
        const what = `${name} item ${i} (${r.id})`;
        assert.equal(typeof it.id, 'string');
        assert.equal(it.id, r.id, what);
        assert.equal(it.url, r.event_url, what);
        assert.equal(it.title, r.is_canceled ? `Canceled: ${r.title}` : r.title, what);
        assert.ok(it.content_text.length > 0, `${what}: content_text`);
        assert.ok(!HTML_TAG.test(it.content_text), `${what}: plain content_text`);
        if (r.description !== null) assert.ok(it.content_text.includes(r.description), `${what}: content_text has the description`);
        assert.match(it.date_published, RFC3339, what);
        assert.equal(it.date_published, r.start_datetime, `${what}: date_published is the start`);
        for (const t of [...r.categories, ...r.tags]) assert.ok(it.tags.includes(t), `${what}: tag ${t}`);
        assert.equal(it.tags.includes('canceled'), r.is_canceled, `${what}: canceled tag`);
        if (r.summary !== null) assert.equal(it.summary, r.summary, what);
        if (r.image_url !== null) assert.equal(it.image, r.image_url, what);
        assert.deepEqual(it._family_events, r, `${what}: _family_events is the envelope's record`);
        if (q.geo) assert.equal(typeof it._family_events.distance_km, 'number', `${what}: distance_km on a geo search`);
      });
    }
  });

  test('@extractus/feed-extractor reads back the ids, links, titles and dates', () => readBack('/v1/feed.json', extractFromJson));
});

// ---------------------------------------------------------------- 6. canceled events

describe('canceled events', () => {
  const CanceledShape = v.looseObject({
    id: v.string(),
    title: v.string(),
    start_datetime: v.string(),
    is_canceled: v.boolean(),
    categories: v.array(v.string()),
    venue: v.looseObject({ city: v.string() }),
  });

  async function assertCanceledEverywhere(s: TestServer, qs: string, id: string): Promise<void> {
    const body = await json(s, `/v1/events?${qs}`);
    const i = body.events.findIndex((e) => e.id === id);
    assert.ok(i >= 0, `${id} is on the page of ${qs}`);
    const r = body.events[i];
    assert.ok(r && r.is_canceled, `${id} is canceled in JSON`);

    const { doc } = await rssOf(s, `/v1/feed.rss?${qs}`);
    const it = doc.rss.channel.item[i];
    assert.ok(it);
    assert.equal(it.guid['#text'], id);
    assert.equal(it.title, `Canceled: ${r.title}`);
    assert.equal(it.category[0], 'canceled', 'the canceled category comes first');

    const { doc: jf } = await feed(s, `/v1/feed.json?${qs}`);
    assert.equal(jf.items[i]?.id, id);
    assert.ok(jf.items[i]?.tags.includes('canceled'), 'JSON Feed tags include canceled');

    const { rows } = await csv(s, `/v1/events.csv?${qs}`);
    assert.equal(rows[i]?.[0], id);
    assert.equal(rows[i]?.[col('is_canceled')], 'true');
    assert.equal(rows[i]?.[col('title')], textCell(r.title), 'the CSV title is the record title');

    const others = body.events.filter((e) => !e.is_canceled).map((e) => e.id);
    for (const other of others) {
      const j = body.events.findIndex((e) => e.id === other);
      assert.ok(!(doc.rss.channel.item[j]?.category ?? []).includes('canceled'), `${other} is not canceled`);
      assert.equal(rows[j]?.[col('is_canceled')], 'false');
    }
  }

  test('an upcoming canceled event of the sample, found by a query, is marked canceled in every format', async () => {
    const candidates = (await recordLines(fx.build))
      .map((l) => v.parse(CanceledShape, JSON.parse(l)))
      .filter((r) => r.is_canceled && !isExcluded(r.categories) && (rowById.get(r.id)?.end_ms ?? 0) >= NOW.getTime());
    const r = candidates[0];
    assert.ok(r, 'the sample has an upcoming canceled event under Community rules');
    const day = r.start_datetime.slice(0, 10);
    const qs = `city=${encodeURIComponent(r.venue.city)}&start_date=${day}&end_date=${day}&limit=100`;
    await assertCanceledEverywhere(srv, qs, r.id);
  });

  test('the canceled event of the formula snapshot, likewise', async () => {
    const body = await json(formulaSrv, '/v1/events?limit=100');
    const canceled = body.events.filter((e) => e.is_canceled);
    assert.equal(canceled.length, 1, 'formula-events.csv has one canceled row');
    await assertCanceledEverywhere(formulaSrv, 'limit=100', canceled[0]?.id ?? '');
  });
});

// ---------------------------------------------------------------- 6b. all-day events

describe('all-day events', () => {
  // The sample's all-day programs are festivals and seasonal events, outside the Community plan: a partner key reads them.
  test('an all-day event of the sample: the flag in JSON and CSV, DATE values in iCalendar, "All day" in the feeds; its timed neighbours as they were', async () => {
    const { key } = provisionKey(srv.config.ledgerDir, { plan: 'partner' });
    const as = async (pathAndQuery: string, type: string): Promise<Got> => {
      const g = await get(srv.base, pathAndQuery, { headers: { authorization: `Bearer ${key}` } });
      ok(g, type, pathAndQuery);
      return g;
    };
    const candidates = (await recordLines(fx.build))
      .map((l) =>
        v.parse(
          v.looseObject({
            id: v.string(),
            all_day: v.boolean(),
            start_datetime: v.string(),
            end_datetime: v.nullable(v.string()),
            venue: v.looseObject({ city: v.string() }),
          }),
          JSON.parse(l),
        ),
      )
      .filter((r) => r.all_day && (rowById.get(r.id)?.end_ms ?? 0) >= NOW.getTime());
    // One spanning days if the sample has one upcoming, else one day.
    const r = candidates.find((c) => (c.end_datetime ?? '').slice(0, 10) > c.start_datetime.slice(0, 10)) ?? candidates[0];
    assert.ok(r, 'the sample has an upcoming all-day event');
    const day = r.start_datetime.slice(0, 10);
    const qs = `city=${encodeURIComponent(r.venue.city)}&start_date=${day}&end_date=${day}&limit=100`;
    const body = v.parse(EventListSchema, (await as(`/v1/events?${qs}`, CONTENT_TYPES['/v1/events'])).json);
    const i = body.events.findIndex((e) => e.id === r.id);
    assert.ok(i >= 0, `${r.id} is on the page of ${qs}`);
    assert.ok(
      body.events.some((e) => !e.all_day),
      'the page has timed events too',
    );
    // JSON keeps the contract's datetimes: Pacific midnight of the first day, 23:59:59 of the last.
    const rec = body.events[i]!;
    assert.equal(rec.all_day, true);
    assert.match(rec.start_datetime, /^\d{4}-\d{2}-\d{2}T00:00:00-0[78]:00$/);
    assert.match(rec.end_datetime ?? '', /^\d{4}-\d{2}-\d{2}T23:59:59-0[78]:00$/);

    const table: string[][] = parseCsv((await as(`/v1/events.csv?${qs}`, CONTENT_TYPES['/v1/events.csv'])).text, { bom: false });
    const rows = table.slice(1);
    assert.deepEqual(
      rows.map((row) => [row[0], row[col('all_day')]]),
      body.events.map((e) => [e.id, String(e.all_day)]),
      'the CSV all_day column is the record flag',
    );

    // ical.js reads the calendar: the all-day event is its Pacific days, DTEND the day after the last.
    const ics = await as(`/v1/feed.ics?${qs}`, CONTENT_TYPES['/v1/feed.ics']);
    const vevents = new Map(checkIcs(ics.text, 'ics').map((e) => [String(e.getFirstPropertyValue('uid')), e]));
    for (const e of body.events) {
      const ve = vevents.get(e.id);
      assert.ok(ve, e.id);
      const start = ve.getFirstProperty('dtstart')!;
      assert.equal(start.type, e.all_day ? 'date' : 'date-time', `${e.id}: DTSTART type`);
      if (!e.all_day) continue;
      const lastDay = (e.end_datetime ?? e.start_datetime).slice(0, 10);
      const after = new Date(Date.parse(`${lastDay}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      assert.equal(String(start.getFirstValue()), e.start_datetime.slice(0, 10), `${e.id}: DTSTART;VALUE=DATE is the first day`);
      assert.equal(String(ve.getFirstPropertyValue('dtend')), after, `${e.id}: DTEND;VALUE=DATE is the day after the last`);
    }

    const doc = rss(await as(`/v1/feed.rss?${qs}`, CONTENT_TYPES['/v1/feed.rss']));
    const jf = v.parse(JsonFeedSchema, (await as(`/v1/feed.json?${qs}`, CONTENT_TYPES['/v1/feed.json'])).json);
    for (const [j, e] of body.events.entries()) {
      for (const [what, text] of [
        ['RSS', doc.rss.channel.item[j]?.description ?? ''],
        ['JSON Feed', jf.items[j]?.content_text ?? ''],
      ] as const) {
        const head = text.split(' · ')[0] ?? '';
        if (e.all_day) assert.match(head, /, All day$/, `${what} ${e.id}: "${head}"`);
        else assert.match(head, /\d{1,2}:\d{2} [AP]M/, `${what} ${e.id}: "${head}" gives the time`);
      }
    }
  });
});

// ---------------------------------------------------------------- 7. the Community plan in every format

describe('the Community plan in every format', () => {
  const as = (key: string, pathAndQuery: string): Promise<Got> => get(srv.base, pathAndQuery, { headers: { authorization: `Bearer ${key}` } });
  async function usage(key: string): Promise<v.InferOutput<typeof UsageSchema>> {
    const g = await as(key, '/v1/usage');
    assert.equal(g.status, 200, g.text);
    return v.parse(UsageSchema, g.json);
  }

  test('excluded categories are 403 category_not_in_plan on every format, and cost nothing', async () => {
    const { key } = provisionKey(srv.config.ledgerDir, { plan: 'community' });
    for (const route of [...FORMATS, '/api/v1/events.csv']) {
      problem(await as(key, `${route}?category=festivals`), 403, 'category_not_in_plan', `${route} festivals`);
    }
    problem(await as(key, '/v1/feed.rss?category=seasonal'), 403, 'category_not_in_plan', 'rss seasonal');
    assert.equal((await usage(key)).records.used, 0);
  });

  test('a CSV export larger than the quota is cut to it and says so; then 429', async () => {
    const { key } = provisionKey(srv.config.ledgerDir, { plan: 'community' });
    const g = await as(key, '/v1/events.csv?limit=30');
    ok(g, CONTENT_TYPES['/v1/events.csv'], 'capped export');
    const rows = parseCsv(g.text, { bom: false }).slice(1);
    assert.equal(rows.length, 25);
    assert.deepEqual(
      rows.map((r) => r[0]),
      communityUp.slice(0, 25).map((r) => r.id),
      'the first 25 of the oracle',
    );
    assert.equal(g.headers.get('x-quota-truncated'), 'true');
    assert.equal(g.headers.get('x-quota-remaining'), '0');
    assert.equal(totalHeader(g), communityUp.length);
    const u = await usage(key);
    assert.equal(u.records.used, 25);
    assert.equal(u.records.remaining, 0);

    const again = await as(key, '/v1/events.csv?limit=30');
    problem(again, 429, 'quota_exhausted', 'after the cap');
    assert.match(again.headers.get('retry-after') ?? '', /^[1-9]\d*$/, 'Retry-After in seconds');
    assert.equal((await usage(key)).records.used, 25, 'the refusal cost nothing');
  });

  test('a feed page larger than the quota is cut to it and says so', async () => {
    const { key } = provisionKey(srv.config.ledgerDir, { plan: 'community' });
    const g = await as(key, '/v1/feed.rss?limit=30');
    ok(g, CONTENT_TYPES['/v1/feed.rss'], 'capped feed');
    assert.deepEqual(
      rss(g).rss.channel.item.map((it) => it.guid['#text']),
      communityUp.slice(0, 25).map((r) => r.id),
    );
    assert.equal(g.headers.get('x-quota-truncated'), 'true');
    assert.equal((await usage(key)).records.used, 25);
  });
});
