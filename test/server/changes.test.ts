// The change feed (/v1/changes) end to end: a CSV source rewritten between real snapshot builds
// (events added, changed, canceled, moved, removed), a real server switching to each, and an
// aggregator's client (./sync-client.ts, a child process) keeping a copy through the feed alone.
// The oracle is each snapshot's own records.jsonl: after every sync the client's copy must be
// exactly the records the snapshot serves, and each increment must deliver exactly the records
// that differ (no repeat, no skip), including when the client is killed and resumed across a switch.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { buildSnapshot, type BuildResult } from '../../snapshot/build/build.ts';
import { REPO_ROOT } from '../../core/config.ts';
import { CHANGES_CSV_COLUMNS } from '../../query/changes.ts';
import { csvSource, FARM, MISSION } from '../snapshot/csv-source.ts';
import { get, NOW, provisionKey, startTestServer, UNMETERED, WEB, type TestServer, TWO_THREADS } from './helpers.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SOURCE = 'sync-test';
const CATEGORIES = ['storytime', 'arts', 'music', 'animals;outdoors'];

interface Row {
  uid: string;
  title: string;
  start: string;
  location: string;
  categories: string;
  description: string;
  status: string;
}

const pad = (n: number): string => String(n).padStart(2, '0');

function row(i: number): Row {
  const day = new Date(NOW.getTime() + (i % 40) * DAY + (i % 5) * HOUR);
  // Wall-clock text in the source's zone: the feed's own form.
  const local = new Date(day.getTime() - 8 * HOUR);
  const start = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:00:00-08:00`;
  return {
    uid: `e${i}`,
    title: `Program ${i}`,
    start,
    location: i % 2 === 0 ? MISSION : FARM,
    categories: CATEGORIES[i % CATEGORIES.length] as string,
    description: `Program number ${i} for families.`,
    status: '',
  };
}

const csvLine = (r: Row): string => [r.uid, r.title, r.start, r.location, r.categories, `"${r.description}"`, r.status].join(',');

let tmp: string;
let dataDir: string;
let registryFile: string;
let feed: string;
let rows: Row[];
let builds = 0;
let s: TestServer;
let current: BuildResult;

/** Rewrites the feed to `rows` and builds a snapshot an hour after the last, then waits for the server to serve it. */
async function build(): Promise<BuildResult> {
  await fs.writeFile(feed, ['id,title,start,location,categories,description,status', ...rows.map(csvLine), ''].join('\n'));
  const b = await buildSnapshot({ dataDir, registryFile, now: new Date(NOW.getTime() + builds++ * HOUR), windowDays: 60, lookbackDays: 14, threads: 1 });
  current = b;
  if (s) await served(b.manifest.id);
  return b;
}

async function served(id: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (s.server.snapshots.current?.ref.id === id) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the server never switched to ${id}`);
}

type Rec = Record<string, unknown> & { id: string; categories: string[]; venue: { city: string } };

/** The oracle: the snapshot's records as the feed serves them (event_url added), minus what the plan excludes. */
async function oracle(b: BuildResult, keep: (r: Rec) => boolean = () => true): Promise<Map<string, Rec>> {
  const lines = (await fs.readFile(path.join(b.dir, 'records.jsonl'), 'utf8')).split('\n').filter((l) => l !== '');
  const out = new Map<string, Rec>();
  for (const l of lines) {
    const r = JSON.parse(l) as Rec;
    if (r.categories.some((c) => UNMETERED.excludedCategories.includes(c)) || !keep(r)) continue;
    out.set(r.id, { ...r, event_url: `${WEB}/events/${r.id}` });
  }
  return out;
}

interface ClientRun {
  readonly pages: number;
  readonly entries: number;
  readonly killed: boolean;
}

/** Runs the sync client to its end, or kills it (SIGKILL) once it has printed `killAfter` pages. */
async function client(state: string, opts: { query?: string; limit?: number; pauseMs?: number; killAfter?: number } = {}): Promise<ClientRun> {
  const args = ['--import', './test/tsx.js', 'test/server/sync-client.ts', '--base', s.base, '--key', s.key, '--state', state];
  args.push('--limit', String(opts.limit ?? 17), '--pause-ms', String(opts.pauseMs ?? 0));
  if (opts.query) args.push('--query', opts.query);
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let pages = 0;
  let entries = 0;
  let killed = false;
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    const lines = out.split('\n');
    out = lines.pop() ?? '';
    for (const l of lines) {
      pages++;
      entries += Number(l.split(' ')[2]);
      if (opts.killAfter !== undefined && pages >= opts.killAfter && !killed) {
        killed = true;
        child.kill('SIGKILL');
      }
    }
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, sig) => resolve([c, sig])));
  if (!killed) assert.equal(code, 0, `the sync client failed (${signal ?? code}): ${err}`);
  return { pages, entries, killed };
}

async function copyOf(state: string): Promise<Map<string, Rec>> {
  const st = JSON.parse(await fs.readFile(state, 'utf8')) as { records: Record<string, Rec> };
  return new Map(Object.entries(st.records));
}

/** The ids a client must be sent to go from one copy to the other: records that differ, and those gone. */
function difference(before: ReadonlyMap<string, Rec>, now: ReadonlyMap<string, Rec>): number {
  let n = 0;
  for (const [id, r] of now) if (!before.has(id) || JSON.stringify(before.get(id)) !== JSON.stringify(r)) n++;
  for (const id of before.keys()) if (!now.has(id)) n++;
  return n;
}

function assertSameCopy(copy: ReadonlyMap<string, Rec>, expected: ReadonlyMap<string, Rec>, what: string): void {
  assert.deepEqual([...copy.keys()].sort(), [...expected.keys()].sort(), `${what}: the ids`);
  for (const [id, r] of expected) assert.deepEqual(copy.get(id), r, `${what}: ${id}`);
}

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fe-changes-'));
  dataDir = path.join(tmp, 'data');
  ({ registryFile, feed } = await csvSource(tmp, SOURCE));
  rows = Array.from({ length: 160 }, (_, i) => row(i));
  await build();
  s = await startTestServer(dataDir, { SNAPSHOT_POLL_MS: '50', ...TWO_THREADS });
});

after(async () => {
  await s?.stop();
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('an aggregator syncing through /v1/changes', { concurrency: false }, () => {
  test('a full sync ends with exactly the snapshot; every record carries its change times', { timeout: 120_000 }, async () => {
    const state = path.join(tmp, 'all.json');
    const run = await client(state);
    const expected = await oracle(current);
    assert.ok(expected.size > 100, `the set is not trivial (${expected.size})`);
    assertSameCopy(await copyOf(state), expected, 'first sync');
    assert.equal(run.entries, expected.size, 'a first sync is the records alone: nothing to delete');
    for (const r of expected.values()) {
      assert.equal(r.created_at, r.updated_at, 'first build: created when last changed');
      assert.match(String(r.updated_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-0[78]:00$/);
    }
  });

  test('three builds that add, change, cancel, move and remove events: each increment sends exactly what differs', { timeout: 180_000 }, async () => {
    const state = path.join(tmp, 'all.json');
    let before = await oracle(current);
    const steps: (() => void)[] = [
      () => {
        rows.push(...Array.from({ length: 20 }, (_, i) => row(200 + i)));
        for (const r of rows.slice(0, 15)) r.title += ' (new time)';
        for (const r of rows.slice(20, 30)) r.status = 'Cancelled';
        for (const r of rows.slice(50, 60)) r.location = r.location === MISSION ? FARM : MISSION;
        rows = rows.filter((r) => !['e30', 'e31', 'e32', 'e33', 'e34', 'e35'].includes(r.uid));
      },
      () => {
        for (const r of rows.slice(60, 70)) r.description = `${r.description} Bring a snack.`;
        rows = rows.filter((r) => !['e0', 'e1', 'e2'].includes(r.uid));
        rows.push(row(30), row(31));
      },
      () => {
        for (const r of rows.slice(70, 75)) r.status = 'Cancelled';
        rows = rows.filter((r) => !r.uid.startsWith('e20'));
      },
    ];
    for (const [k, step] of steps.entries()) {
      step();
      const b = await build();
      const expected = await oracle(b);
      const run = await client(state);
      assertSameCopy(await copyOf(state), expected, `after build ${k + 1}`);
      assert.equal(run.entries, difference(before, expected), `build ${k + 1}: every change once, nothing else`);
      const stamp = b.manifest.changes.stamp;
      for (const r of expected.values()) {
        const old = before.get(r.id);
        if (old && JSON.stringify({ ...old, updated_at: '' }) === JSON.stringify({ ...r, updated_at: '' })) assert.equal(r.updated_at, old.updated_at, r.id);
        else assert.equal(Date.parse(String(r.updated_at)), Date.parse(stamp), `${r.id} changed in build ${k + 1}`);
        if (old) assert.equal(r.created_at, old.created_at, `${r.id} keeps its created_at`);
      }
      before = expected;
    }
  });

  test('killed mid-sync, a switch while it is down, resumed from its cursor: still exact', { timeout: 180_000 }, async () => {
    const state = path.join(tmp, 'killed.json');
    await client(state);
    for (const r of rows.slice(80, 100)) r.title += ' (moved)';
    rows.push(...Array.from({ length: 10 }, (_, i) => row(300 + i)));
    await build();
    const partial = await client(state, { limit: 3, pauseMs: 200, killAfter: 2 });
    assert.ok(partial.killed, 'the client was killed mid-sync');
    const held = await copyOf(state);
    for (const r of rows.slice(100, 110)) r.status = 'Cancelled';
    rows = rows.filter((r) => !['e120', 'e121', 'e122'].includes(r.uid));
    const b = await build();
    await client(state, { limit: 7 });
    assertSameCopy(await copyOf(state), await oracle(b), 'resumed after a kill and a switch');
    assert.notDeepEqual([...held.keys()].sort(), [...(await oracle(b)).keys()].sort(), 'the kill did leave it behind');
  });

  test('a filtered feed: records that move out of the filter come as deletions', { timeout: 180_000 }, async () => {
    const state = path.join(tmp, 'berkeley.json');
    const berkeley = (r: Rec): boolean => r.venue.city === 'Berkeley';
    await client(state, { query: 'city=Berkeley' });
    assertSameCopy(await copyOf(state), await oracle(current, berkeley), 'Berkeley, first sync');
    for (const r of rows.slice(130, 140)) r.location = r.location === MISSION ? FARM : MISSION;
    for (const r of rows.slice(140, 150)) r.title += ' (again)';
    const b = await build();
    await client(state, { query: 'city=Berkeley' });
    assertSameCopy(await copyOf(state), await oracle(b, berkeley), 'Berkeley, after events moved in and out');
  });
});

describe('/v1/changes as a client meets it', { concurrency: false }, () => {
  /** Every page from the first, and the response of the page after the last: where a poller waits. */
  async function drain(q: string, headers: Record<string, string> = {}): Promise<{ entries: Rec[]; last: Awaited<ReturnType<typeof get>> }> {
    const follow = (got: Awaited<ReturnType<typeof get>>) => {
      const next = new URL(got.json.next as string);
      return get(s.base, `${next.pathname}${next.search}`, { headers });
    };
    let got = await get(s.base, `/v1/changes?${q}`, { headers });
    const entries: Rec[] = [];
    for (;;) {
      assert.equal(got.status, 200, got.text);
      entries.push(...(got.json.changes as Rec[]));
      const link = got.headers.get('link') ?? '';
      assert.ok(link.includes(`<${got.json.next as string}>; rel="next"`), `Link names the body's next: ${link}`);
      if (!got.json.has_more) return { entries, last: await follow(got) };
      got = await follow(got);
    }
  }

  test('an idle poller gets 304 on the last page, charged nothing; records are charged, deletions free', { timeout: 60_000 }, async () => {
    const partner = provisionKey(s.config.ledgerDir, { plan: 'partner' });
    const auth = { authorization: `Bearer ${partner.key}` };
    const usage = async (): Promise<number> => (await get(s.base, '/v1/usage', { headers: auth })).json.records.used as number;
    const { entries, last } = await drain('limit=50&since=2026-11-20', auth);
    const records = entries.filter((e) => e.deleted !== true).length;
    assert.ok(entries.length > records, 'the feed since then holds deletions too');
    assert.equal(await usage(), records, 'charged for records, not deletions');
    const etag = last.headers.get('etag');
    assert.ok(etag);
    assert.equal(last.json.changes.length, 0, 'past the last change: an empty page');
    const next = new URL(last.json.next as string);
    const again = await get(s.base, `${next.pathname}${next.search}`, { headers: { ...auth, 'if-none-match': etag } });
    assert.equal(again.status, 304);
    // A rebuild that changes nothing leaves the last page as it was.
    await build();
    const still = await get(s.base, `${next.pathname}${next.search}`, { headers: { ...auth, 'if-none-match': etag } });
    assert.equal(still.status, 304, 'nothing changed: still 304');
    assert.equal(await usage(), records, 'polls cost nothing');
  });

  test('the CSV twin lists the same entries, deletions with their time', { timeout: 60_000 }, async () => {
    const q = 'limit=200&since=2026-11-20';
    const json = await get(s.base, `/v1/changes?${q}`);
    const csv = await get(s.base, `/v1/changes.csv?${q}`);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    const table = parse<Record<string, string>>(csv.text, { columns: true, bom: true });
    assert.deepEqual(Object.keys(table[0] ?? {}), CHANGES_CSV_COLUMNS);
    const entries = json.json.changes as Rec[];
    assert.equal(table.length, entries.length);
    table.forEach((r, i) => {
      const e = entries[i] as Rec;
      assert.equal(r.id, e.id);
      assert.equal(r.deleted, e.deleted === true ? 'true' : 'false');
      assert.equal(r.updated_at, e.updated_at);
      if (e.deleted !== true) assert.equal(r.title, e.title);
    });
    assert.equal(csv.headers.get('x-total-count'), json.headers.get('x-total-count'));
  });

  test('next links keep the key the client put in the URL, in one parameter order everywhere', { timeout: 60_000 }, async () => {
    const got = await get(s.base, `/v1/changes?limit=2&api_key=${s.key}&city=Berkeley`, { headers: { authorization: '' } });
    assert.equal(got.status, 200, got.text);
    const next = new URL(got.json.next as string);
    assert.equal(next.searchParams.get('api_key'), s.key, 'the key stays in next');
    assert.deepEqual([...next.searchParams.keys()], ['api_key', 'city', 'cursor', 'limit'], 'sorted by name');
    const followed = await get(s.base, `${next.pathname}${next.search}`, { headers: { authorization: '' } });
    assert.equal(followed.status, 200, 'a reader that has only the URL follows it');
    // The RSS feed: the Link header and the channel's atom:link name the same next page.
    const rss = await get(s.base, `/v1/feed.rss?limit=2&api_key=${s.key}&start_date=2026-11-01&city=Berkeley`, { headers: { authorization: '' } });
    assert.equal(rss.status, 200, rss.text);
    const nextPart = (rss.headers.get('link') ?? '').split(', ').find((p) => p.endsWith('; rel="next"'));
    const link = nextPart?.slice(1, nextPart.indexOf('>'));
    const atom = /<atom:link[^>]*rel="next"[^>]*href="([^"]+)"|<atom:link[^>]*href="([^"]+)"[^>]*rel="next"/.exec(rss.text);
    const atomHref = (atom?.[1] ?? atom?.[2] ?? '').replaceAll('&amp;', '&');
    assert.ok(link, 'a Link header');
    assert.equal(link, atomHref, 'the header and the feed link the same URL');
    assert.equal(new URL(link).searchParams.get('api_key'), s.key);
  });

  test('bad positions are 400s that say what to change', { timeout: 60_000 }, async () => {
    const first = await get(s.base, '/v1/changes?limit=1&city=Berkeley');
    const cursor = first.json.next_cursor as string;
    const cases: [string, string][] = [
      ['cursor=c1.AAAA', 'cursor'],
      ['cursor=nonsense', 'cursor'],
      [`cursor=${cursor}`, 'cursor'],
      [`cursor=${cursor}&city=Berkeley&since=2026-11-01`, 'cursor'],
      ['week=current', 'week'],
      ['limit=1001', 'limit'],
      ['since=yesterday', 'since'],
    ];
    for (const [q, param] of cases) {
      const got = await get(s.base, `/v1/changes?${q}`);
      assert.equal(got.status, 400, `${q}: ${got.text}`);
      assert.equal(got.json.code, 'invalid_parameter', q);
      assert.equal(got.json.errors?.[0]?.param, param, q);
    }
    const offset = await get(s.base, '/v1/changes?offset=10');
    assert.equal(offset.status, 400);
    assert.equal(offset.json.code, 'unknown_parameter');
  });

  test('a cursor older than the kept deletions is 410 cursor_expired', { timeout: 120_000 }, async () => {
    // A data directory whose snapshot says its removals are complete only from a day ago.
    const aged = path.join(tmp, 'aged');
    await fs.cp(dataDir, aged, { recursive: true, verbatimSymlinks: true });
    const manifestFile = path.join(aged, 'snapshots', current.manifest.id, 'manifest.json');
    const manifest = JSON.parse(await fs.readFile(manifestFile, 'utf8')) as { changes: { stamp: string; complete_since: string | null } };
    manifest.changes.complete_since = new Date(Date.parse(manifest.changes.stamp) - DAY).toISOString();
    await fs.writeFile(manifestFile, JSON.stringify(manifest));
    const other = await startTestServer(aged);
    try {
      const old = await get(other.base, '/v1/changes?since=2026-11-01');
      assert.equal(old.status, 410, old.text);
      assert.equal(old.json.code, 'cursor_expired');
      assert.match(old.json.detail, /without cursor/);
      const fresh = await get(other.base, '/v1/changes?limit=5');
      assert.equal(fresh.status, 200, 'a sync from the start is always possible');
    } finally {
      await other.stop();
    }
  });
});
