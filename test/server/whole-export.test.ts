// /v1/export.csv (server/routes/export.ts, query/export.ts): the whole snapshot as one CSV body,
// over real HTTP on the bundled sample. Its rows are exactly the rows paging /v1/events.csv over
// every date gives (byte for byte, as a set: the export is in stored order), a strict parser reads
// it, and HEAD, 304, gzip, metering, the quota cut and the plan's exclusions behave as on a CSV page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { request } from 'undici';
import * as v from 'valibot';
import type { Plan } from '../../ledger/accounts.ts';
import { ProblemSchema, UsageSchema } from '../../server/schemas.ts';
import {
  get,
  provisionKey,
  raw as rawRequest,
  rawHeader,
  sampleFixture,
  startTestServer,
  WEB,
  type Fixture,
  type Raw,
  type RawOptions,
  type TestServer,
} from './helpers.ts';

const EXCLUDED = new Set(['seasonal', 'festivals']);

let fx: Fixture;
let ts: TestServer;
/** The default key's rows: every event outside its plan's exclusions, ended ones too. */
let visibleIds: string[];

before(async () => {
  fx = await sampleFixture();
  visibleIds = fx.rows.filter((r) => !r.categories.some((c) => EXCLUDED.has(c))).map((r) => r.id);
  assert.ok(visibleIds.length < fx.rows.length, 'the exclusions must remove some events');
  ts = await startTestServer(fx.dataDir);
});

after(async () => {
  await ts?.stop();
  await fx?.cleanup();
});

const raw = (pathAndQuery: string, opts?: RawOptions): Promise<Raw> => rawRequest(ts, pathAndQuery, opts);
const header = rawHeader;

/** A body as a strict RFC 4180 parser reads it: its header row, and each data row's own text. */
function csv(bytes: Buffer): { header: string[]; rows: string[]; records: string[][] } {
  assert.notEqual(bytes[0], 0xef, 'no BOM');
  const text = bytes.toString('utf8');
  assert.ok(text.endsWith('\r\n'), 'the last row ends with CRLF');
  const parsed = parse(text, { record_delimiter: '\r\n', raw: true, relax_column_count: false }) as unknown as { record: string[]; raw: string }[];
  const [head, ...rest] = parsed;
  assert.ok(head);
  return { header: head.record, rows: rest.map((r) => r.raw), records: rest.map((r) => r.record) };
}

/** Every row /v1/events.csv gives over all dates, paged by cursor. */
async function pagedRows(key: string): Promise<{ header: string[]; rows: string[] }> {
  const rows: string[] = [];
  let columns: string[];
  let cursor: string | null = null;
  do {
    const r = await raw(`/v1/events.csv?start_date=2000-01-01&limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { key });
    assert.equal(r.status, 200, r.bytes.toString().slice(0, 300));
    const page = csv(r.bytes);
    columns = page.header;
    rows.push(...page.rows);
    cursor = header(r, 'x-next-cursor');
  } while (cursor !== null);
  return { header: columns, rows };
}

function ownKey(plan: Partial<Plan> & { monthlyRecordLimit: number | null }): string {
  return provisionKey(ts.config.ledgerDir, {
    plan: {
      name: `whole-${Math.random().toString(36).slice(2)}`,
      excludedCategories: [...EXCLUDED],
      attributionRequired: true,
      requestsPerMinute: 100_000,
      ...plan,
    },
  }).key;
}

async function usedBy(key: string): Promise<number> {
  const g = await get(ts.base, '/v1/usage', { headers: { authorization: `Bearer ${key}` } });
  return v.parse(UsageSchema, g.json).records.used;
}

describe('/v1/export.csv', () => {
  test('every event the plan includes, once: a strict parser reads it, and its rows are the paged search’s, byte for byte', async () => {
    const r = await raw('/v1/export.csv');
    assert.equal(r.status, 200, r.bytes.toString().slice(0, 300));
    assert.equal(header(r, 'content-type'), 'text/csv; charset=utf-8');
    assert.equal(header(r, 'transfer-encoding'), 'chunked', 'streamed');
    assert.equal(header(r, 'x-total-count'), String(visibleIds.length));
    assert.equal(header(r, 'link'), `<${WEB}>; rel="attribution"`);
    assert.match(header(r, 'etag') ?? '', /^"[\w-]{22}"$/);
    assert.equal(header(r, 'x-quota-truncated'), null);
    const body = csv(r.bytes);
    const ids = body.records.map((rec) => rec[0]);
    assert.equal(new Set(ids).size, ids.length, 'no event twice');
    assert.deepEqual([...ids].sort(), [...visibleIds].sort(), 'exactly the events the plan includes');
    const paged = await pagedRows(ts.key);
    assert.deepEqual(body.header, paged.header, 'the same header as /v1/events.csv');
    assert.equal(body.rows.length, paged.rows.length);
    assert.deepEqual([...body.rows].sort(), [...paged.rows].sort(), 'each row the bytes the search gives it');
    // The same body again, and on the website's /api twin: same bytes, same ETag.
    const again = await raw('/v1/export.csv');
    assert.ok(again.bytes.equals(r.bytes));
    assert.equal(header(again, 'etag'), header(r, 'etag'));
    const twin = await raw('/api/v1/export.csv');
    assert.equal(twin.status, 200);
    assert.ok(twin.bytes.equals(r.bytes));
    assert.equal(header(twin, 'etag'), header(r, 'etag'));
  });

  test('a plan without exclusions gets every event of the snapshot', async () => {
    const key = ownKey({ monthlyRecordLimit: null, excludedCategories: [] });
    const r = await raw('/v1/export.csv', { key });
    assert.equal(r.status, 200);
    const ids = csv(r.bytes).records.map((rec) => rec[0]);
    assert.equal(ids.length, fx.rows.length);
    assert.deepEqual(ids.sort(), fx.rows.map((row) => row.id).sort());
  });

  test('HEAD and a 304 charge nothing; a GET charges every row; gzip decodes to the same bytes', async () => {
    const key = ownKey({ monthlyRecordLimit: null });
    const head = await raw('/v1/export.csv', { key, method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.bytes.length, 0);
    assert.equal(header(head, 'x-total-count'), String(visibleIds.length));
    const etag = header(head, 'etag') ?? '';
    assert.equal(await usedBy(key), 0, 'HEAD is free');
    const unchanged = await raw('/v1/export.csv', { key, headers: { 'if-none-match': etag } });
    assert.equal(unchanged.status, 304);
    assert.equal(unchanged.bytes.length, 0);
    assert.equal(header(unchanged, 'etag'), etag);
    assert.equal(header(unchanged, 'x-quota-remaining'), 'unlimited');
    assert.equal(await usedBy(key), 0, 'a 304 is free');
    const body = await raw('/v1/export.csv', { key });
    assert.equal(header(body, 'etag'), etag, 'HEAD gives the GET headers');
    assert.equal(await usedBy(key), visibleIds.length, 'every row delivered is charged');
    const gz = await raw('/v1/export.csv', { key, headers: { 'accept-encoding': 'gzip' } });
    assert.equal(header(gz, 'content-encoding'), 'gzip');
    assert.equal(header(gz, 'etag'), `${etag.slice(0, -1)}-gzip"`);
    assert.ok(gunzipSync(gz.bytes).equals(body.bytes));
    assert.equal((await raw('/v1/export.csv', { key, headers: { 'if-none-match': header(gz, 'etag') ?? '', 'accept-encoding': 'gzip' } })).status, 304);
  });

  test('the quota cut: a capped key gets the first rows it has left, says so, then 429', async () => {
    const key = ownKey({ monthlyRecordLimit: 25 });
    const full = csv((await raw('/v1/export.csv')).bytes);
    const r = await raw('/v1/export.csv', { key });
    assert.equal(r.status, 200);
    assert.equal(header(r, 'x-quota-truncated'), 'true');
    assert.equal(header(r, 'x-total-count'), String(visibleIds.length), 'the total is the whole export’s');
    assert.equal(header(r, 'x-quota-remaining'), '0');
    const cut = csv(r.bytes);
    assert.deepEqual(cut.header, full.header);
    assert.deepEqual(cut.rows, full.rows.slice(0, 25), 'the first 25 rows of the export');
    assert.notEqual(header(r, 'etag'), header(await raw('/v1/export.csv'), 'etag'), 'a cut body has its own ETag');
    assert.equal(await usedBy(key), 25);
    const none = await raw('/v1/export.csv', { key });
    assert.equal(none.status, 429);
    assert.equal(v.parse(ProblemSchema, JSON.parse(none.bytes.toString())).code, 'quota_exhausted');
  });

  test('it takes no parameters', async () => {
    for (const q of ['limit=10', 'cursor=1.0.00000000000000000000', 'city=Oakland']) {
      const r = await raw(`/v1/export.csv?${q}`);
      assert.equal(r.status, 400);
      assert.equal(v.parse(ProblemSchema, JSON.parse(r.bytes.toString())).code, 'unknown_parameter');
    }
  });

  test('a client that leaves mid-body stops the export, and the server carries on', async () => {
    const key = ownKey({ monthlyRecordLimit: null });
    const ac = new AbortController();
    const res = await request(`${ts.base}/v1/export.csv`, { headers: { authorization: `Bearer ${key}` }, signal: ac.signal });
    assert.equal(res.statusCode, 200);
    for await (const chunk of res.body) {
      assert.ok((chunk as Buffer).length > 0);
      ac.abort();
      break;
    }
    await res.body.dump().catch(() => undefined);
    const r = await raw('/v1/export.csv');
    assert.equal(r.status, 200);
    assert.equal(csv(r.bytes).rows.length, visibleIds.length);
  });
});
