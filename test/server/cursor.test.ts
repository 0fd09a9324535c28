// Keyset paging by `cursor` on /v1/events and /v1/events.csv (and their /api twins), over real HTTP on
// a real snapshot: cursor pages reach every event once, in the order offset pages give; a cursor
// keeps its place when the snapshot is rebuilt under it; bad cursors and cursors with offset or
// sort=distance are 400s that say what to change; ETag/304, HEAD and the quota cut work as for any
// search. Oracles read the snapshot's Parquet.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import * as v from 'valibot';
import { decodeCursor } from '../../core/cursor.ts';
import type { Plan } from '../../ledger/accounts.ts';
import { EventListSchema, ProblemSchema, UsageSchema } from '../../server/schemas.ts';
import { buildInChild, get, NOW, provisionKey, readRows, startTestServer, type Got, type OracleRow, type TestServer, TWO_THREADS } from './helpers.ts';

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
const EXCLUDED = new Set(['seasonal', 'festivals']);
/** Every event, ended or not: the range an export pages through. */
const ALL = 'start_date=2000-01-01';

let dataDir: string;
let ts: TestServer;
/** The visible events (the default key's exclusions), in (start, id) order. */
let visible: OracleRow[];

const byStartThenId = (a: OracleRow, b: OracleRow): number => a.start_ms - b.start_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const visibleOf = (rows: readonly OracleRow[]): OracleRow[] => rows.filter((r) => !r.categories.some((c) => EXCLUDED.has(c))).sort(byStartThenId);

before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'fe-cursor-'));
  const manifest = await buildInChild(dataDir, NOW);
  visible = visibleOf(await readRows(path.join(dataDir, 'snapshots', manifest.id, 'events.parquet')));
  assert.ok(visible.length > 1000, `${visible.length} visible events`);
  ts = await startTestServer(dataDir, { SNAPSHOT_POLL_MS: '50', ...TWO_THREADS });
});

after(async () => {
  await ts?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The Link header's rel="next" target, as a path and query on this server. */
function nextLink(g: Got): string | null {
  const part = (g.headers.get('link') ?? '').split(', ').find((p) => p.endsWith('; rel="next"'));
  if (part === undefined) return null;
  const url = new URL(part.slice(1, part.indexOf('>')));
  return `${url.pathname}${url.search}`;
}

function okJson(g: Got, what: string): v.InferOutput<typeof EventListSchema> {
  assert.equal(g.status, 200, `${what}: ${g.status} ${g.text.slice(0, 300)}`);
  return v.parse(EventListSchema, g.json);
}

/** Every JSON page by offset from the first, following next_offset. */
async function byOffset(query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const body = okJson(await get(ts.base, `/v1/events?${query}&limit=${limit}&offset=${offset}`), `offset ${offset}`);
    ids.push(...body.events.map((e) => e.id));
    offset = body.next_offset;
  }
  return ids;
}

/** Every JSON page by cursor: the first page, then its next_cursor on, checking each page's paging figures. */
async function byCursor(prefix: '' | '/api', query: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const first = okJson(await get(ts.base, `${prefix}/v1/events?${query}&limit=${limit}`), 'first page');
  const ids = first.events.map((e) => e.id);
  let cursor = first.next_cursor;
  let pages = 1;
  while (cursor !== null) {
    const path = `${prefix}/v1/events?${query}&limit=${limit}&cursor=${cursor}`;
    const g = await get(ts.base, path);
    const body = okJson(g, path);
    pages++;
    assert.equal(body.next_offset, null, 'a cursor page has no next offset');
    assert.equal(body.total, first.total, 'the total is the search’s, on every page');
    const last = body.events.at(-1);
    if (body.next_cursor !== null) {
      assert.equal(body.events.length, limit, 'only a full page has a next one');
      assert.equal(decodeCursor(body.next_cursor)?.id, last?.id, 'the next cursor follows the last row');
      assert.equal(g.headers.get('x-next-cursor'), body.next_cursor);
      const next = nextLink(g);
      assert.ok(next?.startsWith(`${prefix}/v1/events?`), `rel="next" keeps the route: ${next}`);
      const params = new URL(`http://x${next}`).searchParams;
      assert.equal(params.get('cursor'), body.next_cursor, 'rel="next" carries the cursor');
      assert.equal(params.get('offset'), null);
    } else {
      assert.equal(nextLink(g), null, 'the last page links nowhere');
      assert.equal(g.headers.get('x-next-cursor'), null);
    }
    ids.push(...body.events.map((e) => e.id));
    cursor = body.next_cursor;
    assert.ok(pages < 10_000, 'paging ends');
  }
  return { ids, pages };
}

function problem(g: Got, status: number, code: string, param: string | null): string {
  assert.equal(g.status, status, g.text.slice(0, 300));
  assert.equal(g.headers.get('content-type'), 'application/problem+json');
  const p = v.parse(ProblemSchema, g.json);
  assert.equal(p.code, code);
  if (param !== null)
    assert.ok(
      (p.errors ?? []).some((e) => e.param === param),
      `errors[] names ${param}: ${g.text}`,
    );
  return p.detail;
}

describe('paging by cursor', () => {
  test('JSON: cursor pages reach every event once, in the order offset pages give them (and on the /api twin)', async () => {
    const want = visible.map((r) => r.id);
    const offsets = await byOffset(ALL, 100);
    assert.deepEqual(offsets, want, 'offset paging agrees with the oracle');
    for (const prefix of ['', '/api'] as const) {
      const { ids, pages } = await byCursor(prefix, ALL, 100);
      assert.equal(new Set(ids).size, ids.length, 'no event twice');
      assert.deepEqual(ids, want, `${prefix || 'API host'}: every event once, in start order`);
      assert.equal(pages, Math.ceil(want.length / 100));
    }
  });

  test('JSON: with filters, cursor pages and offset pages agree', async () => {
    const city = visible[Math.floor(visible.length / 2)]?.venue_city ?? '';
    for (const query of [`${ALL}&is_free=true`, `city=${encodeURIComponent(city)}&${ALL}`, 'age_min=3&age_max=5', `${ALL}&category=arts-crafts,music`]) {
      // Pages of 23 (a prime, so pages rarely end where a run of equal starts does): each query
      // still takes several pages, at a quarter of the requests pages of 7 took.
      const offsets = await byOffset(query, 23);
      const { ids } = await byCursor('', query, 23);
      assert.ok(offsets.length > 2 * 23, `${query}: ${offsets.length} events, too few to page`);
      assert.deepEqual(ids, offsets, query);
    }
  });

  test('CSV: following rel="next" by cursor from the first page’s X-Next-Cursor gives the offset pages’ rows, byte for byte', async () => {
    // Each row's own text, as a strict parser delimits it (the header row dropped).
    const rowsOf = (text: string): string[] => {
      assert.ok(text.endsWith('\r\n'), 'the body ends with CRLF');
      const records = parse(text, { record_delimiter: '\r\n', raw: true }) as unknown as { record: string[]; raw: string }[];
      return records.slice(1).map((r) => r.raw);
    };
    const offsetRows: string[] = [];
    for (let next: string | null = `/v1/events.csv?${ALL}&limit=500`; next !== null;) {
      const g = await get(ts.base, next);
      assert.equal(g.status, 200);
      offsetRows.push(...rowsOf(g.text));
      next = nextLink(g);
      if (next) assert.ok(new URL(`http://x${next}`).searchParams.has('offset'), 'a request by offset goes on by offset');
    }
    const first = await get(ts.base, `/v1/events.csv?${ALL}&limit=500`);
    const cursorRows = rowsOf(first.text);
    let next: string | null = `/v1/events.csv?${ALL}&limit=500&cursor=${first.headers.get('x-next-cursor') ?? ''}`;
    while (next !== null) {
      const g = await get(ts.base, next);
      assert.equal(g.status, 200, g.text.slice(0, 300));
      cursorRows.push(...rowsOf(g.text));
      next = nextLink(g);
      if (next) assert.ok(new URL(`http://x${next}`).searchParams.has('cursor'), 'a request by cursor goes on by cursor');
    }
    assert.equal(cursorRows.length, visible.length);
    assert.deepEqual(cursorRows, offsetRows);
  });

  test('a cursor page has a strong ETag: the same page again is 304 and HEAD has no body', async () => {
    const first = okJson(await get(ts.base, `/v1/events?${ALL}&limit=50`), 'first');
    for (const path of [`/v1/events?${ALL}&limit=50&cursor=${first.next_cursor}`, `/v1/events.csv?${ALL}&limit=50&cursor=${first.next_cursor}`]) {
      const a = await get(ts.base, path);
      const b = await get(ts.base, path);
      const etag = a.headers.get('etag');
      assert.ok(etag?.startsWith('"'), path);
      assert.equal(b.headers.get('etag'), etag, 'the same page, the same ETag');
      assert.equal(b.text, a.text);
      const again = await get(ts.base, path, { headers: { 'if-none-match': etag ?? '' } });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
      const head = await get(ts.base, path, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.equal(head.headers.get('etag'), etag);
    }
    // Another cursor, another page, another ETag.
    const second = okJson(await get(ts.base, `/v1/events?${ALL}&limit=50&cursor=${first.next_cursor}`), 'second');
    const third = await get(ts.base, `/v1/events?${ALL}&limit=50&cursor=${second.next_cursor}`);
    assert.notEqual(third.headers.get('etag'), (await get(ts.base, `/v1/events?${ALL}&limit=50&cursor=${first.next_cursor}`)).headers.get('etag'));
  });

  test('the quota cut: a capped key gets the rows it has left, and the next cursor starts right after them', async () => {
    const plan: Plan = {
      name: `cursor-cap-${Math.random().toString(36).slice(2)}`,
      monthlyRecordLimit: 30,
      excludedCategories: ['festivals', 'seasonal'],
      attributionRequired: true,
      requestsPerMinute: 100_000,
    };
    const { key } = provisionKey(ts.config.ledgerDir, { plan });
    const auth = { headers: { authorization: `Bearer ${key}` } };
    const first = okJson(await get(ts.base, `/v1/events?${ALL}&limit=20`, auth), 'first');
    assert.equal(first.truncated, false);
    const cut = await get(ts.base, `/v1/events?${ALL}&limit=20&cursor=${first.next_cursor}`, auth);
    const body = okJson(cut, 'cut');
    assert.equal(body.truncated, true);
    assert.equal(cut.headers.get('x-quota-truncated'), 'true');
    assert.deepEqual(
      body.events.map((e) => e.id),
      visible.slice(20, 30).map((r) => r.id),
    );
    // The rest, on a key with records left: from the 31st on.
    const rest = okJson(await get(ts.base, `/v1/events?${ALL}&limit=20&cursor=${body.next_cursor}`), 'rest');
    assert.deepEqual(
      rest.events.map((e) => e.id),
      visible.slice(30, 50).map((r) => r.id),
    );
    const usage = v.parse(UsageSchema, (await get(ts.base, '/v1/usage', auth)).json);
    assert.equal(usage.records.used, 30);
    problem(await get(ts.base, `/v1/events?${ALL}&limit=20&cursor=${body.next_cursor}`, auth), 429, 'quota_exhausted', null);
  });

  test('bad cursors, and cursors with offset or sort=distance, are 400s that say what to change', async () => {
    const good = okJson(await get(ts.base, `/v1/events?${ALL}&limit=5`), 'first').next_cursor ?? '';
    for (const prefix of ['', '/api']) {
      for (const route of ['/v1/events', '/v1/events.csv']) {
        for (const bad of ['', 'abc', `${good}0`, good.toUpperCase(), good.replace(/^1\./, '2.'), encodeURIComponent(`${good} `), 'MS4wLmJzY19ldnQ']) {
          const detail = problem(await get(ts.base, `${prefix}${route}?cursor=${bad}`), 400, 'invalid_parameter', 'cursor');
          assert.match(detail, /next_cursor/, 'the detail says where a cursor comes from');
        }
        assert.match(problem(await get(ts.base, `${prefix}${route}?cursor=${good}&offset=0`), 400, 'invalid_parameter', 'cursor'), /drop offset/);
        assert.match(
          problem(await get(ts.base, `${prefix}${route}?cursor=${good}&lat=37.77&lng=-122.42&sort=distance`), 400, 'invalid_parameter', 'cursor'),
          /sort=distance/,
        );
        // A cursor with sort=start and a centre is fine: that is start order.
        assert.equal((await get(ts.base, `${prefix}${route}?cursor=${good}&lat=37.77&lng=-122.42&radius_km=500&sort=start`)).status, 200);
      }
      for (const route of ['/v1/feed.rss', '/v1/feed.json', '/v1/feed.ics', '/v1/demo/events'])
        problem(await get(ts.base, `${prefix}${route}?cursor=${good}`), 400, 'unknown_parameter', null);
    }
  });
});

// Last: it rebuilds the snapshot under the shared server.
describe('a cursor across a snapshot rebuild', () => {
  test('the next page is what now follows the cursor’s event: nothing skipped or repeated, though rows moved', async () => {
    const limit = 100;
    const first = okJson(await get(ts.base, `/v1/events?${ALL}&limit=${limit}`), 'first');
    const second = okJson(await get(ts.base, `/v1/events?${ALL}&limit=${limit}&cursor=${first.next_cursor}`), 'second');
    const before = [...first.events, ...second.events].map((e) => e.id);
    const key = decodeCursor(second.next_cursor ?? '');
    assert.ok(key);

    // The same sources but the first few: their events leave, those before the cursor's key among
    // them, so every later event's rank (ord, offset) moves while its start and id stay.
    const registry = JSON.parse(await readFile(path.join(REPO_ROOT, 'sources', 'registry.json'), 'utf8')) as { sources: unknown[] };
    const fewer = path.join(dataDir, 'fewer-sources.json');
    await writeFile(fewer, JSON.stringify({ sources: registry.sources.slice(4) }));
    const built = await buildInChild(dataDir, NOW, ['--sources', fewer]);
    let switched = false;
    for (let i = 0; i < 600 && !switched; i++) {
      switched = (await get(ts.base, '/readyz')).json?.snapshot === built.id;
      if (!switched) await delay(50);
    }
    assert.ok(switched, `/readyz never reported ${built.id}`);
    const now = visibleOf(await readRows(path.join(dataDir, 'snapshots', built.id, 'events.parquet')));
    const follows = (r: OracleRow): boolean => r.start_ms > key.startMs || (r.start_ms === key.startMs && r.id > key.id);
    const wantAfter = now.filter(follows).map((r) => r.id);
    const movedBy = now.filter((r) => !follows(r)).length - before.length;
    assert.notEqual(movedBy, 0, 'the rebuild must move the rows after the cursor, or offset paging would do as well');

    const ids: string[] = [];
    for (let cursor: string | null = second.next_cursor; cursor !== null;) {
      const body = okJson(await get(ts.base, `/v1/events?${ALL}&limit=${limit}&cursor=${cursor}`), `after the rebuild, cursor ${cursor}`);
      assert.equal(body.total, now.length, 'the new snapshot answers');
      ids.push(...body.events.map((e) => e.id));
      cursor = body.next_cursor;
    }
    assert.deepEqual(ids, wantAfter, 'the pages after the rebuild are exactly the new events after the cursor, in order');
    // RPDE's rule: an event that kept its start is delivered exactly once across the rebuild; one
    // seen again is one whose start moved after the cursor (it changed, and is delivered as changed).
    const oldStart = new Map(visible.map((r) => [r.id, r.start_ms]));
    const seen = [...before, ...ids];
    const kept = now.filter((r) => oldStart.get(r.id) === r.start_ms);
    assert.ok(kept.length > now.length / 2, `${kept.length} of ${now.length} events kept their start`);
    for (const r of kept) assert.equal(seen.filter((x) => x === r.id).length, 1, `${r.id} (kept its start) once`);
    const nowStart = new Map(now.map((r) => [r.id, r.start_ms]));
    for (const id of ids) if (before.includes(id)) assert.notEqual(nowStart.get(id), oldStart.get(id), `${id} is seen again only because it moved`);
  });
});
