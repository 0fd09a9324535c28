// The streamed CSV export path over real HTTP, on a 25,000-event synthetic snapshot: 10,000-row pages,
// paging to the end, quota cuts, clients that leave mid-body, slow readers (backpressure), HEAD, and
// gzip of a multi-megabyte stream. Oracles read the snapshot's Parquet directly.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readlink, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import * as v from 'valibot';
import { EventListSchema, ProblemSchema, UsageSchema } from '../../server/schemas.ts';
import {
  buildInChild,
  get,
  NOW,
  provisionKey,
  PUBLIC,
  raw as rawRequest,
  rawHeader,
  readRows,
  startTestServer,
  WEB,
  type OracleRow,
  type Raw,
  type RawOptions,
  type TestServer,
} from './helpers.ts';
import type { Plan } from '../../ledger/accounts.ts';

const NOW_MS = NOW.getTime();
const SYNTHETIC_EVENTS = 25_000;
const PAGE = 10_000;
const EXCLUDED = new Set(['seasonal', 'festivals']);
/** The CSV columns in the order the brief fixes (restated here, not imported from the server). */
const COLUMNS = [
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

type Usage = v.InferOutput<typeof UsageSchema>;

// ---------------------------------------------------------------- fixture

let dataDir: string;
let ts: TestServer;
/** Visible (Community exclusions) events not ended at the pinned now, in start-then-id order. */
let expected: OracleRow[];
let allRows: OracleRow[];
/** The identity body of the first 10,000-row page, once test 1 fetched it (other tests compare bytes to it). */
let firstPage: { bytes: Buffer; etag: string } | null = null;

/** `family-events snapshot build` as an operator runs it: in a process of its own, so its CPU-bound stretches stall nothing here. */

const byStartThenId = (a: OracleRow, b: OracleRow): number => a.start_ms - b.start_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'fe-export-'));
  const manifest = await buildInChild(dataDir, NOW, ['--synthetic', String(SYNTHETIC_EVENTS)]);
  allRows = await readRows(path.join(dataDir, 'snapshots', manifest.id, 'events.parquet'));
  expected = allRows.filter((r) => !r.categories.some((c) => EXCLUDED.has(c)) && r.end_ms >= NOW_MS).sort(byStartThenId);
  // Paging and cuts below only mean something when the answer spans more than one full page and
  // the exclusions and the clock both remove rows.
  assert.ok(allRows.length >= SYNTHETIC_EVENTS * 0.9, `the synthetic snapshot has ${allRows.length} events`);
  assert.ok(expected.length > PAGE, `only ${expected.length} visible upcoming events`);
  assert.ok(expected.length < allRows.length, 'the exclusions and the clock must remove some events');
  ts = await startTestServer(dataDir);
});

after(async () => {
  await ts?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------- small tools

const raw = (pathAndQuery: string, opts?: RawOptions): Promise<Raw> => rawRequest(ts, pathAndQuery, opts);
const header = rawHeader;

function must(r: Raw, name: string): string {
  const h = header(r, name);
  assert.ok(h !== null, `missing ${name} (status ${r.status})`);
  return h;
}

/** The Link header's targets by rel. */
function links(linkHeader: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (linkHeader === null) return out;
  for (const part of linkHeader.split(', <')) {
    const close = part.indexOf('>');
    const target = part.slice(part.startsWith('<') ? 1 : 0, close);
    const rel = /rel="([^"]*)"/.exec(part.slice(close))?.[1];
    if (rel !== undefined) out.set(rel, target);
  }
  return out;
}

/** Parses an export with csv-parse (strict RFC 4180), checks the header row, returns the data rows. */
function csvRows(body: Buffer): string[][] {
  assert.notEqual(body[0], 0xef, 'the body starts with a BOM');
  const text = body.toString('utf8');
  assert.ok(text.endsWith('\r\n'), 'the last record ends with CRLF');
  const records = parse(text, { relax_column_count: false, record_delimiter: '\r\n' });
  assert.deepEqual(records[0], COLUMNS);
  return records.slice(1);
}

const idsOf = (rows: readonly string[][]): string[] => rows.map((r) => r[0] ?? '');
const expectedIds = (offset: number, limit: number): string[] => expected.slice(offset, offset + limit).map((r) => r.id);

function assertStreamed(r: Raw): void {
  assert.equal(header(r, 'transfer-encoding'), 'chunked', 'a big export streams chunked');
  assert.equal(header(r, 'content-length'), null, 'a streamed export has no Content-Length');
}

async function usageOf(key: string): Promise<Usage> {
  const g = await get(ts.base, '/v1/usage', { headers: { authorization: `Bearer ${key}` } });
  assert.equal(g.status, 200, `/v1/usage: ${g.status} ${g.text.slice(0, 300)}`);
  return v.parse(UsageSchema, g.json);
}

/** A key of its own (own organization, so usage starts at zero) on a plan with Community's exclusions and the given cap. */
function cappedKey(cap: number): string {
  const plan: Plan = {
    name: `export-cap-${cap}-${Math.random().toString(36).slice(2)}`,
    monthlyRecordLimit: cap,
    excludedCategories: ['festivals', 'seasonal'],
    attributionRequired: true,
    requestsPerMinute: 100_000,
  };
  return provisionKey(ts.config.ledgerDir, { plan }).key;
}

interface CsvMetrics {
  readonly completed: number;
  readonly cancelled: number;
  readonly failed: number;
  readonly rows: number;
  readonly bytes: number;
}

/** The streamed-CSV counters from the admin listener's Prometheus text (series not yet created read 0). */
async function csvMetrics(): Promise<CsvMetrics> {
  const res = await fetch(`${ts.adminBase}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  const value = (series: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  };
  const m = {
    completed: value('csv_streams_total{outcome="completed"}'),
    cancelled: value('csv_streams_total{outcome="cancelled"}'),
    failed: value('csv_streams_total{outcome="failed"}'),
    rows: value('csv_stream_rows_total'),
    bytes: value('csv_stream_bytes_total'),
  };
  assert.ok(text.includes('csv_stream_rows_total'), 'the metrics lack csv_stream_rows_total');
  return m;
}

/**
 * The counters once no stream is still finishing: a stream's outcome is counted when its worker
 * task resolves, which can come just after the client read the last byte.
 */
async function settledMetrics(): Promise<CsvMetrics> {
  let last = await csvMetrics();
  for (let i = 0; i < 100; i++) {
    await delay(60);
    const now = await csvMetrics();
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  assert.fail('the CSV stream counters never settled');
}

/** Polls until `pred` holds of the counters (bounded by a count of polls, not a duration). */
async function metricsUntil(pred: (m: CsvMetrics) => boolean, what: string): Promise<CsvMetrics> {
  for (let i = 0; i < 400; i++) {
    const m = await csvMetrics();
    if (pred(m)) return m;
    await delay(25);
  }
  assert.fail(`the CSV stream counters never showed ${what}`);
}

/**
 * Sends a raw GET for a 10,000-row export, stops reading once the head (and at least `bodyBytes`
 * more) has arrived, and destroys the socket: a client that leaves mid-body.
 */
async function abandonExport(key: string, bodyBytes: number): Promise<{ status: string; received: number }> {
  const socket = net.connect({ host: '127.0.0.1', port: ts.server.port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(`GET /v1/events.csv?limit=${PAGE} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  const chunks: Buffer[] = [];
  let received = 0;
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      received += c.length;
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      if (headEnd >= 0 && received - headEnd - 4 >= bodyBytes) {
        socket.pause();
        resolve();
      }
    });
    socket.once('error', reject);
    socket.once('end', () => reject(new Error(`the server ended the response after ${received} bytes`)));
  });
  socket.destroy();
  const status = Buffer.concat(chunks).toString('latin1').split('\r\n', 1)[0] ?? '';
  return { status, received };
}

// ---------------------------------------------------------------- tests

describe('CSV export of 10,000-row pages', () => {
  test('a 10,000-row page streams chunked, parses, and agrees with the JSON pages and the oracle', async () => {
    const r = await raw(`/v1/events.csv?limit=${PAGE}`);
    assert.equal(r.status, 200, r.bytes.toString('utf8', 0, 300));
    assert.equal(must(r, 'content-type'), 'text/csv; charset=utf-8');
    assertStreamed(r);
    assert.equal(header(r, 'content-encoding'), null, 'no Accept-Encoding: identity');
    const rows = csvRows(r.bytes);
    assert.equal(rows.length, Math.min(PAGE, expected.length));
    for (const row of rows) assert.equal(row.length, COLUMNS.length);
    assert.deepEqual(idsOf(rows), expectedIds(0, PAGE));
    assert.equal(must(r, 'x-total-count'), String(expected.length));
    const link = links(header(r, 'link'));
    assert.equal(link.get('attribution'), WEB);
    const next = link.get('next');
    assert.ok(next !== undefined, `more rows remain but Link is ${header(r, 'link')}`);
    const nextUrl = new URL(next);
    assert.equal(`${nextUrl.origin}${nextUrl.pathname}`, `${PUBLIC}/v1/events.csv`);
    assert.equal(nextUrl.searchParams.get('offset'), String(PAGE));
    assert.equal(nextUrl.searchParams.get('limit'), String(PAGE));

    // The JSON route pages the same order: the CSV's rows at these positions are its pages.
    for (const offset of [0, 5000, 9900]) {
      const g = await get(ts.base, `/v1/events?limit=100&offset=${offset}`);
      assert.equal(g.status, 200, g.text.slice(0, 300));
      const page = v.parse(EventListSchema, g.json);
      assert.equal(page.total, expected.length);
      assert.deepEqual(
        page.events.map((e) => e.id),
        idsOf(rows.slice(offset, offset + 100)),
        `JSON page at offset ${offset}`,
      );
    }
    firstPage = { bytes: r.bytes, etag: must(r, 'etag') };
  });

  test('following Link rel="next" from limit=10000 visits every visible upcoming event once, in order', async () => {
    const seen: string[] = [];
    let next: string | null = `/v1/events.csv?limit=${PAGE}`;
    let pages = 0;
    while (next !== null) {
      assert.ok(pages < 10, 'the Link chain does not end');
      const r = await raw(next);
      pages++;
      assert.equal(r.status, 200, `${next}: ${r.bytes.toString('utf8', 0, 300)}`);
      assert.equal(must(r, 'x-total-count'), String(expected.length));
      const rows = csvRows(r.bytes);
      assert.ok(rows.length > 0 && rows.length <= PAGE, `${next} has ${rows.length} rows`);
      seen.push(...idsOf(rows));
      const target = links(header(r, 'link')).get('next');
      if (target === undefined) next = null;
      else {
        assert.ok(target.startsWith(`${PUBLIC}/`), target);
        next = target.slice(PUBLIC.length);
      }
    }
    assert.equal(pages, Math.ceil(expected.length / PAGE));
    assert.equal(new Set(seen).size, seen.length, 'an id came twice');
    assert.deepEqual(
      seen,
      expected.map((r) => r.id),
    );
  });
});

describe('quota on exports', () => {
  test('a capped key gets a cut export, then 429 quota_exhausted', async () => {
    const CAP = 1500;
    const key = cappedKey(CAP);
    const r = await raw(`/v1/events.csv?limit=${PAGE}`, { key });
    assert.equal(r.status, 200, r.bytes.toString('utf8', 0, 300));
    assert.equal(header(r, 'x-quota-truncated'), 'true');
    const rows = csvRows(r.bytes);
    assert.equal(rows.length, CAP);
    assert.deepEqual(idsOf(rows), expectedIds(0, CAP));
    const next = links(header(r, 'link')).get('next');
    assert.ok(next !== undefined, `a cut export has a next page; Link is ${header(r, 'link')}`);
    assert.equal(new URL(next).searchParams.get('offset'), String(CAP));
    assert.equal(must(r, 'x-quota-remaining'), '0');

    const u = await usageOf(key);
    assert.equal(u.records.used, CAP);
    assert.equal(u.records.remaining, 0);
    assert.equal(u.records.limit, CAP);

    const again = await raw(`/v1/events.csv?limit=${PAGE}`, { key });
    assert.equal(again.status, 429, again.bytes.toString('utf8', 0, 300));
    assert.match(must(again, 'content-type'), /^application\/problem\+json/);
    const p = v.parse(ProblemSchema, JSON.parse(again.bytes.toString('utf8')));
    assert.equal(p.code, 'quota_exhausted');
    assert.match(must(again, 'retry-after'), /^\d+$/);
    assert.ok(!again.bytes.includes('bsc_evt_'), 'a 429 carries no event rows');
    assert.equal((await usageOf(key)).records.used, CAP, 'the refused export charged something');
  });
});

describe('clients that leave or read slowly', () => {
  test('a client that disconnects mid-export stops the worker, and the server carries on', async (t) => {
    const key = cappedKey(1_000_000);
    for (const [round, bodyBytes] of [
      [1, 0],
      [2, 256 * 1024],
    ] as const) {
      const used0 = (await usageOf(key)).records.used;
      const before = await settledMetrics();
      const { status, received } = await abandonExport(key, bodyBytes);
      assert.match(status, /^HTTP\/1\.1 200 /, `round ${round}`);
      await metricsUntil((x) => x.cancelled >= before.cancelled + 1, `a cancelled stream (round ${round})`);
      // Whatever else was in flight must also have ended before the deltas are read.
      const settled = await settledMetrics();
      assert.equal(settled.cancelled, before.cancelled + 1, `round ${round}: cancelled streams`);
      assert.equal(settled.completed, before.completed, `round ${round}: the abandoned export completed`);
      assert.equal(settled.failed, before.failed, `round ${round}: failed streams`);
      const rows = settled.rows - before.rows;
      assert.ok(rows < PAGE, `round ${round}: the worker streamed ${rows} rows for a client that left after ${received} bytes`);

      // The contract counts records delivered; the server may charge the page it committed to before
      // the first byte, or nothing. Either is accepted; which one is reported.
      const charged = (await usageOf(key)).records.used - used0;
      assert.ok(charged === 0 || charged === PAGE, `round ${round}: the abandoned export charged ${charged} records`);
      t.diagnostic(`round ${round}: client read ${received} bytes; worker streamed ${rows} rows; charged ${charged} records`);
    }
    const g = await get(ts.base, '/v1/events?limit=5');
    assert.equal(g.status, 200, g.text.slice(0, 300));
    assert.deepEqual(
      v.parse(EventListSchema, g.json).events.map((e) => e.id),
      expectedIds(0, 5),
    );
    const csv = await raw('/v1/events.csv?limit=50&offset=20');
    assert.equal(csv.status, 200);
    assert.deepEqual(idsOf(csvRows(csv.bytes)), expectedIds(20, 50));
  });

  test('a reader that pauses after 64 KiB still gets the whole export', async () => {
    const before = await settledMetrics();
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: ts.server.port, path: `/v1/events.csv?limit=${PAGE}`, agent: false, headers: { authorization: `Bearer ${ts.key}` } },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
          const chunks: Buffer[] = [];
          let size = 0;
          let paused = false;
          res.on('data', (c: Buffer) => {
            chunks.push(c);
            size += c.length;
            if (!paused && size >= 64 * 1024) {
              paused = true;
              res.pause();
              setTimeout(() => res.resume(), 1000);
            }
          });
          res.on('end', () => resolve(Buffer.concat(chunks)));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    const rows = csvRows(body);
    assert.equal(rows.length, PAGE);
    assert.deepEqual(idsOf(rows), expectedIds(0, PAGE));
    if (firstPage) assert.ok(body.equals(firstPage.bytes), 'the slowly read body differs from the one read at full speed');
    const after = await metricsUntil((m) => m.completed >= before.completed + 1, 'the slow export completed');
    assert.equal(after.completed, before.completed + 1);
    assert.equal(after.failed, before.failed, 'the slow export failed');
    assert.equal(after.rows - before.rows, PAGE);
    assert.equal(after.bytes - before.bytes, body.length);
  });
});

describe('HEAD and compression of a big export', () => {
  test('HEAD gives the GET headers, no body, and charges nothing', async () => {
    const key = cappedKey(1_000_000);
    const q = `/v1/events.csv?limit=${PAGE}`;
    const g = await raw(q);
    assert.equal(g.status, 200);
    const u0 = await usageOf(key);
    const h = await raw(q, { key, method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(h.bytes.length, 0, 'HEAD returned a body');
    for (const name of ['etag', 'x-total-count', 'content-type', 'content-disposition', 'last-modified', 'cache-control', 'vary', 'link']) {
      assert.equal(header(h, name), must(g, name), name);
    }
    assert.equal(must(h, 'x-total-count'), String(expected.length));
    if (firstPage) assert.equal(must(h, 'etag'), firstPage.etag);
    const u1 = await usageOf(key);
    assert.equal(u1.records.used, u0.records.used, 'HEAD charged records');
    assert.equal(u1.requests.count, u0.requests.count, 'HEAD counted as a request');

    // The same key's GET does move usage: the check above can tell.
    const paid = await raw(q, { key });
    assert.equal(paid.status, 200);
    assert.equal(must(paid, 'etag'), must(h, 'etag'));
    assert.equal((await usageOf(key)).records.used, u0.records.used + PAGE);
  });

  test('gzip of a 10,000-row export decodes to the identity bytes', async () => {
    const q = `/v1/events.csv?limit=${PAGE}`;
    const identity = firstPage ?? { bytes: (await raw(q)).bytes, etag: '' };
    const z = await raw(q, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(z.status, 200);
    assert.equal(must(z, 'content-encoding'), 'gzip');
    assertStreamed(z);
    assert.ok(z.bytes.length < identity.bytes.length, 'the gzip body is no smaller');
    const decoded = gunzipSync(z.bytes);
    assert.ok(decoded.equals(identity.bytes), `gunzip gives ${decoded.length} bytes, identity has ${identity.bytes.length}`);
    assert.equal(csvRows(decoded).length, PAGE);
    if (identity.etag !== '') assert.equal(must(z, 'etag'), `${identity.etag.slice(0, -1)}-gzip"`);
  });
});

describe('snapshots built before CSV rows were stored', () => {
  let oldDir: string;
  let old: TestServer;

  before(async () => {
    // The same snapshot without records.csv: what a server meets after an upgrade, before the next build.
    oldDir = await mkdtemp(path.join(os.tmpdir(), 'fe-export-old-'));
    await cp(path.join(dataDir, 'snapshots'), path.join(oldDir, 'snapshots'), { recursive: true, verbatimSymlinks: true });
    const snap = path.join(oldDir, 'snapshots', await readlink(path.join(oldDir, 'snapshots', 'current')));
    assert.ok(existsSync(path.join(snap, 'records.csv')), 'the build stores CSV rows (the fast path is what the other tests exercise)');
    await rm(path.join(snap, 'records.csv'));
    await rm(path.join(snap, 'records.csv.idx'));
    old = await startTestServer(oldDir);
  });

  after(async () => {
    await old?.stop();
    if (oldDir) await rm(oldDir, { recursive: true, force: true });
  });

  test('export the same bytes and ETags as with stored rows: pages, offsets, distances, small and empty answers', async () => {
    const venue = expected[0];
    assert.ok(venue, 'no visible event');
    const queries = [
      `/v1/events.csv?limit=${PAGE}`,
      `/v1/events.csv?limit=${PAGE}&offset=${PAGE}`,
      `/v1/events.csv?limit=2000&lat=${venue.venue_lat}&lng=${venue.venue_lng}&radius_km=50&sort=distance`,
      `/v1/events.csv?city=${encodeURIComponent(venue.venue_city)}&limit=7`,
      `/v1/events.csv?q=zzzzqqqq`,
    ];
    for (const q of queries) {
      const [a, b] = [await raw(q), await rawRequest(old, q)];
      const [ab, bb] = [a.bytes, b.bytes];
      assert.equal(a.status, 200, q);
      assert.equal(b.status, 200, q);
      assert.ok(ab.equals(bb), `${q}: ${ab.length} bytes with stored rows, ${bb.length} without`);
      assert.equal(a.headers.etag, b.headers.etag, q);
      assert.ok(csvRows(ab).length > 0 || q.includes('zzzz'), `${q} found nothing`);
    }
  });
});
