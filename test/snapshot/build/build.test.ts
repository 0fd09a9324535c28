// buildSnapshot end to end: a registry and feeds in a temp dir (local files and a loopback HTTP
// server), a temp DATA_DIR, and the published Parquet read back with DuckDB.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildSnapshot, BuildError } from '../../../snapshot/build/build.ts';
import type { BuildResult } from '../../../snapshot/build/build.ts';
import { currentSnapshotId, SNAPSHOT_SCHEMA_VERSION, snapshotsDir, switchCurrent } from '../../../snapshot/store.ts';
import type { Manifest } from '../../../snapshot/store.ts';
import type { SourceReport } from '../../../snapshot/types.ts';
import { eventId } from '../../../core/ids.ts';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/build');
const NOW = new Date('2026-11-21T17:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FETCH = { timeoutMs: 300, retries: 1, backoffMs: 10 } as const;

interface Row {
  id: string;
  title: string;
  description: string | null;
  start_datetime: string;
  start_ms: number;
  end_ms: number;
  venue_key: string;
  image_url: string | null;
  source_id: string;
}

const ORGANIZERS: Record<string, { name: string; url: string; destination: string; default_venue?: string; free?: boolean }> = {
  sfpl: { name: 'San Francisco Public Library', url: 'https://sfpl.org', destination: 'san-francisco', default_venue: 'sfpl-main', free: true },
  opl: { name: 'Oakland Public Library', url: 'https://oaklandlibrary.org', destination: 'east-bay', default_venue: 'opl-main', free: true },
  parks: { name: 'East Bay Regional Park District', url: 'https://www.ebparks.org', destination: 'east-bay' },
  kids: { name: 'Bay Area Kids Calendar', url: 'https://kidscalendar.example.org', destination: 'san-francisco' },
};

/** One registry entry in sources/registry.json's shape. */
function source(
  id: string,
  url: string,
  format: 'ical' | 'rss' | 'csv',
  org: keyof typeof ORGANIZERS,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const o = ORGANIZERS[org]!;
  return {
    id,
    url,
    format,
    organizer: { name: o.name, url: o.url },
    ...(o.default_venue ? { default_venue: o.default_venue } : {}),
    destination: o.destination,
    attribution: o.name,
    free_by_default: o.free ?? false,
    ...extra,
  };
}

let tmp: string;
let server: http.Server;
let base: string;
/** Request headers per path, in order. */
const seen = new Map<string, http.IncomingHttpHeaders[]>();
const hits = (p: string): number => seen.get(p)?.length ?? 0;

const CAL_ETAG = '"cal-v1"';
const HUGE_BYTES = 5 * 1024 * 1024;

async function fixture(name: string): Promise<Buffer> {
  return fs.readFile(path.join(FIXTURES, name));
}

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fe-'));
  const html = await fixture('not-a-calendar.html');
  const malformed = await fixture('malformed.rss');
  const cal = await fixture('library.ics');
  server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://localhost').pathname;
    seen.set(p, [...(seen.get(p) ?? []), req.headers]);
    res.on('error', () => {});
    switch (p) {
      case '/events.html':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(html);
        return;
      case '/broken.rss':
        res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' });
        res.end(malformed);
        return;
      case '/hang':
        return; // never answers; closeAllConnections() in after() drops it
      case '/huge.csv': {
        // 5 MB, chunked (no content-length), 64 KB per event-loop turn so the server (which shares
        // this process with the client) never blocks it; stops when the client hangs up.
        res.writeHead(200, { 'content-type': 'text/csv' });
        const chunk = Buffer.from('Storytime,2026-11-28T10:00:00-08:00,"Mission Branch Library, 300 Bartlett St, San Francisco, CA 94110"\n'.repeat(640));
        let sent = 0;
        let stopped = false;
        res.on('close', () => (stopped = true));
        const pump = (): void => {
          if (stopped) return;
          if (sent >= HUGE_BYTES) {
            res.end();
            return;
          }
          sent += chunk.length;
          if (res.write(chunk)) setImmediate(pump);
          else res.once('drain', pump);
        };
        res.write('title,start,location\n');
        pump();
        return;
      }
      case '/error':
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('Internal Server Error');
        return;
      case '/cal.ics':
        if (req.headers['if-none-match'] === CAL_ETAG) {
          res.writeHead(304, { etag: CAL_ETAG });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8', etag: CAL_ETAG, 'last-modified': 'Sat, 14 Nov 2026 08:00:00 GMT' });
        res.end(cal);
        return;
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('Not Found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A fresh work dir: feeds/ (every fixture, for relative urls) and data/ (DATA_DIR). */
async function workDir(name: string): Promise<{ feeds: string; dataDir: string }> {
  const dir = await fs.mkdtemp(path.join(tmp, `${name}-`));
  const feeds = path.join(dir, 'feeds');
  await fs.cp(FIXTURES, feeds, { recursive: true });
  return { feeds, dataDir: path.join(dir, 'data') };
}

async function writeRegistry(feeds: string, name: string, sources: Record<string, unknown>[]): Promise<string> {
  const file = path.join(feeds, name);
  await fs.writeFile(file, `${JSON.stringify({ sources }, null, 2)}\n`);
  return file;
}

function build(dataDir: string, registryFile: string, now: Date = NOW): Promise<BuildResult> {
  return buildSnapshot({ dataDir, registryFile, now, fetch: FETCH });
}

async function readRows(result: BuildResult): Promise<Row[]> {
  const file = path.join(result.dir, 'events.parquet');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const reader = await c.runAndReadAll(
      `SELECT id, title, description, start_datetime, start_ms, end_ms, venue_key, image_url, source_id FROM read_parquet('${file.replaceAll("'", "''")}')`,
    );
    return reader.getRowObjectsJson().map((r) => ({
      id: String(r['id']),
      title: String(r['title']),
      description: r['description'] === null ? null : String(r['description']),
      start_datetime: String(r['start_datetime']),
      start_ms: Number(r['start_ms']),
      end_ms: Number(r['end_ms']),
      venue_key: String(r['venue_key']),
      image_url: r['image_url'] === null ? null : String(r['image_url']),
      source_id: String(r['source_id']),
    }));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** A source's report, which accounts for every item it read (the build test of each source checks it). */
function report(m: Manifest, id: string): SourceReport {
  const r = m.sources.find((s) => s.id === id);
  assert.ok(r, `manifest reports source ${id}`);
  if (r.status !== 'failed') {
    const dropped = Object.values(r.dropped).reduce((a, b) => a + (b ?? 0), 0);
    assert.equal(
      r.parsed,
      r.kept + dropped + r.merged_duplicates + r.merged_into_other_sources,
      `${id}: parsed = kept + dropped + merged (${JSON.stringify(r)})`,
    );
  }
  return r;
}

async function buildingDirs(dataDir: string): Promise<string[]> {
  return (await fs.readdir(snapshotsDir(dataDir))).filter((n) => n.startsWith('.building-'));
}

describe('buildSnapshot', () => {
  test('per-source isolation: bad sources are reported failed and skipped; the good one is published', { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('isolation');
    const registry = await writeRegistry(feeds, 'registry.json', [
      source('sfpl-test', 'library.ics', 'ical', 'sfpl'),
      source('html-not-ical', `${base}/events.html`, 'ical', 'sfpl'),
      source('malformed-rss', `${base}/broken.rss`, 'rss', 'opl'),
      source('hangs', `${base}/hang`, 'ical', 'opl'),
      source('too-big', `${base}/huge.csv`, 'csv', 'parks', { max_bytes: 1024 }),
      source('server-error', `${base}/error`, 'rss', 'kids'),
    ]);
    const result = await build(dataDir, registry);
    const m = result.manifest;

    const expectedErrors: Record<string, RegExp> = {
      'html-not-ical': /not an iCalendar/i,
      'malformed-rss': /syntax|well-formed/i,
      hangs: /timed out/,
      'too-big': /1024-byte limit/,
      'server-error': /HTTP 500/,
    };
    for (const [id, re] of Object.entries(expectedErrors)) {
      const r = report(m, id);
      assert.equal(r.status, 'failed', `${id} is failed`);
      assert.ok(r.error && r.error.length > 0, `${id} has an error message`);
      assert.match(r.error, re, `${id}: ${r.error}`);
      assert.equal(r.kept, 0, `${id} contributes nothing`);
    }
    assert.equal(hits('/error'), 2, 'a 500 is retried once (retries: 1)');

    const good = report(m, 'sfpl-test');
    assert.equal(good.status, 'ok');
    assert.equal(good.error, null);
    assert.ok(good.kept > 0, 'the good source kept events');
    assert.equal(m.counts.events, good.kept);
    assert.equal(m.counts.sources, 6);
    assert.equal(m.counts.sources_failed, 5);

    const rows = await readRows(result);
    assert.equal(rows.length, m.counts.events, 'the Parquet holds exactly the counted events');
    assert.deepEqual([...new Set(rows.map((r) => r.source_id))], ['sfpl-test']);
    assert.equal(await currentSnapshotId(dataDir), m.id);
    assert.deepEqual(await buildingDirs(dataDir), []);
  });

  test('a build where every source fails throws BuildError and leaves current and the snapshots dir as they were', { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('all-fail');
    const goodRegistry = await writeRegistry(feeds, 'good.json', [source('sfpl-test', 'library.ics', 'ical', 'sfpl')]);
    const good = await build(dataDir, goodRegistry);
    const before = await currentSnapshotId(dataDir);
    assert.equal(before, good.manifest.id);
    const entriesBefore = (await fs.readdir(snapshotsDir(dataDir))).sort();

    const badRegistry = await writeRegistry(feeds, 'bad.json', [
      source('html-not-ical', `${base}/events.html`, 'ical', 'sfpl'),
      source('gone', `${base}/gone.ics`, 'ical', 'opl'),
      source('no-file', 'does-not-exist.ics', 'ical', 'sfpl'),
    ]);
    await assert.rejects(build(dataDir, badRegistry, new Date(NOW.getTime() + HOUR)), (err: unknown) => {
      assert.ok(err instanceof BuildError, `expected BuildError, got ${String(err)}`);
      assert.match(err.message, /3 of 3 sources failed/);
      return true;
    });
    assert.equal(hits('/gone.ics'), 1, 'a 404 is not retried');

    assert.equal(await currentSnapshotId(dataDir), before);
    assert.deepEqual(await buildingDirs(dataDir), []);
    assert.deepEqual((await fs.readdir(snapshotsDir(dataDir))).sort(), entriesBefore);
  });

  test('atomic switch: current moves to the new build, the old one is kept, and readers never see a gap', { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('switch');
    const regA = await writeRegistry(feeds, 'a.json', [source('sfpl-test', 'library.ics', 'ical', 'sfpl')]);
    const regB = await writeRegistry(feeds, 'b.json', [source('sfpl-test', 'library.ics', 'ical', 'sfpl'), source('opl-test', 'oakland.rss', 'rss', 'opl')]);
    const first = await build(dataDir, regA);
    const second = await build(dataDir, regB, new Date(NOW.getTime() + HOUR));
    const id1 = first.manifest.id;
    const id2 = second.manifest.id;
    assert.notEqual(id1, id2);
    assert.ok(second.manifest.counts.events > first.manifest.counts.events, 'the second build has different content');

    const root = snapshotsDir(dataDir);
    const current = path.join(root, 'current');
    assert.equal(await currentSnapshotId(dataDir), id2);
    assert.equal(path.basename(await fs.readlink(current)), id2);
    assert.ok((await fs.stat(path.join(root, id1))).isDirectory(), 'the previous snapshot is retained');
    assert.ok((await fs.stat(path.join(root, id1, 'events.parquet'))).isFile());
    const viaLink = JSON.parse(await fs.readFile(path.join(current, 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(viaLink.id, path.basename(await fs.readlink(current)));
    assert.equal(viaLink.id, id2);

    // 200 switches against a concurrent reader going through the link.
    const SWITCHES = 200;
    let done = false;
    const failures: string[] = [];
    let reads = 0;
    let matchedTarget = 0;
    const writer = async (): Promise<void> => {
      try {
        for (let i = 0; i < SWITCHES; i++) await switchCurrent(dataDir, i % 2 === 0 ? id1 : id2);
      } finally {
        done = true;
      }
    };
    const reader = async (): Promise<void> => {
      while (!done) {
        try {
          const target = path.basename(await fs.readlink(current));
          const text = await fs.readFile(path.join(current, 'manifest.json'), 'utf8');
          const m = JSON.parse(text) as Manifest;
          reads++;
          if (m.id !== id1 && m.id !== id2) failures.push(`unexpected id ${m.id}`);
          if (m.files.events !== 'events.parquet' || !Array.isArray(m.sources) || m.sources.length === 0) failures.push(`incomplete manifest ${m.id}`);
          if (m.id === target) matchedTarget++;
        } catch (err) {
          failures.push(`${(err as NodeJS.ErrnoException).code ?? ''} ${(err as Error).message}`);
        }
      }
    };
    await Promise.all([writer(), reader()]);
    assert.deepEqual(failures, []);
    assert.ok(reads > 0, 'the reader ran during the switches');
    assert.ok(matchedTarget > 0, 'reads resolve through the link target');
    // 200 switches starting at id1 end on id2.
    assert.equal(await currentSnapshotId(dataDir), id2);
    assert.deepEqual(
      (await fs.readdir(root)).filter((n) => n.startsWith('.current-')),
      [],
      'no temp links left',
    );
  });

  test('event ids are stable across rebuilds one day apart', { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('ids');
    const registry = await writeRegistry(feeds, 'registry.json', [
      source('sfpl-test', 'library.ics', 'ical', 'sfpl'),
      source('opl-test', 'oakland.rss', 'rss', 'opl'),
      source('parks-test', 'parks.csv', 'csv', 'parks'),
    ]);
    const b1 = await build(dataDir, registry, NOW);
    const b2 = await build(dataDir, registry, new Date(NOW.getTime() + DAY));
    for (const b of [b1, b2]) for (const id of ['sfpl-test', 'opl-test', 'parks-test']) assert.equal(report(b.manifest, id).status, 'ok');
    const rows1 = await readRows(b1);
    const rows2 = await readRows(b2);
    const by1 = new Map(rows1.map((r) => [r.id, r]));
    const by2 = new Map(rows2.map((r) => [r.id, r]));
    assert.equal(by1.size, rows1.length, 'ids are unique in snapshot 1');
    assert.equal(by2.size, rows2.length, 'ids are unique in snapshot 2');

    const overlap = [...by1.keys()].filter((id) => by2.has(id));
    assert.ok(overlap.length > 0, 'the two snapshots share events');
    for (const id of overlap) {
      const a = by1.get(id)!;
      const b = by2.get(id)!;
      assert.equal(b.title, a.title, `title of ${id}`);
      assert.equal(b.start_datetime, a.start_datetime, `start of ${id}`);
    }

    // Every event that lies inside the other build's window must be there under the same id.
    const inWindow = (r: Row, m: Manifest): boolean => r.end_ms >= Date.parse(m.window.start) && r.start_ms <= Date.parse(m.window.end);
    for (const r of rows1) if (inWindow(r, b2.manifest)) assert.ok(by2.has(r.id), `${r.title} @ ${r.start_datetime} keeps its id in snapshot 2`);
    for (const r of rows2) if (inWindow(r, b1.manifest)) assert.ok(by1.has(r.id), `${r.title} @ ${r.start_datetime} had this id in snapshot 1`);
    // The windows really differ: something left at the start and something entered at the end.
    assert.ok(
      rows1.some((r) => !by2.has(r.id)),
      'an event fell out of the shifted window',
    );
    assert.ok(
      rows2.some((r) => !by1.has(r.id)),
      'an event entered the shifted window',
    );
  });

  test('threads change nothing: a build on a pool of source threads publishes the same snapshot as inline', { timeout: 60_000 }, async () => {
    const { feeds, dataDir } = await workDir('threads');
    const registry = await writeRegistry(feeds, 'registry.json', [
      source('sfpl-test', 'library.ics', 'ical', 'sfpl'),
      source('opl-test', 'oakland.rss', 'rss', 'opl'),
      source('parks-test', 'parks.csv', 'csv', 'parks'),
      source('merge-a', 'merge-library.ics', 'ical', 'sfpl'),
      source('merge-b', 'merge-aggregator.rss', 'rss', 'kids'),
    ]);
    const inline = await buildSnapshot({ dataDir: path.join(dataDir, 'inline'), registryFile: registry, now: NOW, fetch: FETCH, threads: 1 });
    const pooled = await buildSnapshot({ dataDir: path.join(dataDir, 'pooled'), registryFile: registry, now: NOW, fetch: FETCH, threads: 2 });
    // The id ends in a hash of the Parquet bytes: same id, same file.
    assert.equal(pooled.manifest.id, inline.manifest.id);
    assert.deepEqual(
      pooled.manifest.sources.map((s) => ({ ...s, ms: 0 })),
      inline.manifest.sources.map((s) => ({ ...s, ms: 0 })),
    );
    assert.ok(inline.manifest.counts.events > 0);
  });

  test(
    'a feed that lists one uid twice publishes it once and counts the copy as merged; nothing but the snapshot is published',
    { timeout: 30_000 },
    async () => {
      const { feeds, dataDir } = await workDir('dup-uid');
      const row = (title: string) => `twice-1,${title},2026-11-25 10:30,"Mission Branch Library, 300 Bartlett St, San Francisco, CA 94110"`;
      await fs.writeFile(path.join(feeds, 'dup.csv'), ['id,title,start,location', row('Toddler Time'), row('Toddler Time (listed again)'), ''].join('\n'));
      const registry = await writeRegistry(feeds, 'registry.json', [source('dup-test', 'dup.csv', 'csv', 'sfpl')]);
      const b = await build(dataDir, registry);
      const rows = await readRows(b);
      assert.deepEqual(
        rows.map((r) => r.title),
        ['Toddler Time'],
      );
      assert.deepEqual(report(b.manifest, 'dup-test').dropped, {});
      assert.equal(report(b.manifest, 'dup-test').merged_duplicates, 1);
      assert.equal(report(b.manifest, 'dup-test').kept, 1);
      assert.deepEqual((await fs.readdir(b.dir)).sort(), [
        'events.parquet',
        'manifest.json',
        'records.csv',
        'records.csv.idx',
        'records.idx',
        'records.jsonl',
        'search.duckdb',
      ]);
    },
  );

  test('one UID for a program at several branches and times: every occurrence is published, and the report adds up', { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('shared-uid');
    const ev = (start: string, location: string, extra: string[] = []) => [
      'BEGIN:VEVENT',
      'UID:storytime-88@county.test',
      `DTSTART;TZID=America/Los_Angeles:${start}`,
      'DURATION:PT45M',
      'SUMMARY:Baby Storytime',
      `LOCATION:${location}`,
      ...extra,
      'END:VEVENT',
    ];
    const mission = 'Mission Branch Library\\, 300 Bartlett St\\, San Francisco\\, CA 94110';
    const excelsior = 'Excelsior Branch Library\\, 4400 Mission St\\, San Francisco\\, CA 94112';
    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//Test//County//EN',
      ...ev('20261124T103000', mission),
      ...ev('20261124T103000', excelsior),
      ...ev('20261201T103000', mission),
      // The same occurrence again, and a revision of another.
      ...ev('20261124T103000', mission),
      ...ev('20261201T103000', mission, ['SEQUENCE:2', 'DESCRIPTION:Now in the community room.']),
      // A series that ended before the window.
      ...ev('20250106T103000', mission, ['RRULE:FREQ=WEEKLY;COUNT=2']).map((l) => l.replace('storytime-88', 'winter')),
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    await fs.writeFile(path.join(feeds, 'county.ics'), ics);
    const registry = await writeRegistry(feeds, 'registry.json', [source('county-test', 'county.ics', 'ical', 'sfpl')]);
    const b = await build(dataDir, registry);
    const rows = (await readRows(b)).filter((r) => r.title === 'Baby Storytime');
    assert.equal(rows.length, 3);
    assert.equal(new Set(rows.map((r) => r.id)).size, 3);
    assert.ok(
      rows.some((r) => /community room/.test(r.description ?? '')),
      'the later SEQUENCE stands',
    );
    const r = report(b.manifest, 'county-test');
    assert.deepEqual([r.parsed, r.kept, r.dropped, r.merged_duplicates], [6, 3, { outside_window: 1 }, 2]);
  });

  test('rebuilding the same events over a snapshot of an older layout republishes it in this layout', { timeout: 30_000 }, async () => {
    // Same build time and same Parquet give the same id: the published directory is only reused
    // when it is of this layout, or an upgrade would keep the old files and no server could serve them.
    const { feeds, dataDir } = await workDir('relayout');
    const registry = await writeRegistry(feeds, 'registry.json', [source('sfpl-test', 'library.ics', 'ical', 'sfpl')]);
    const first = await build(dataDir, registry);
    const manifestFile = path.join(first.dir, 'manifest.json');
    await fs.writeFile(manifestFile, JSON.stringify({ ...first.manifest, schema_version: 2 }));
    await fs.rm(path.join(first.dir, 'search.duckdb'));
    const again = await build(dataDir, registry);
    assert.equal(again.manifest.id, first.manifest.id);
    assert.equal((JSON.parse(await fs.readFile(manifestFile, 'utf8')) as { schema_version: number }).schema_version, SNAPSHOT_SCHEMA_VERSION);
    assert.ok((await fs.readdir(again.dir)).includes('search.duckdb'));
  });

  test('a place the gazetteer does not know gets one spelling: the one most of its events use', { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('adhoc');
    const at = (name: string) => `"${name}, 666 Bellevue Ave, Oakland, CA 94610"`;
    const rows = [
      `a1,Garden Walk,2026-11-24 10:00,${at('Lakeside Garden Center')}`,
      `a2,Seed Swap,2026-11-25 10:00,${at('Lakeside Garden Center')}`,
      `a3,Bonsai Hour,2026-11-26 10:00,${at('Lakeside Park Garden Ctr')}`,
    ];
    await fs.writeFile(path.join(feeds, 'adhoc.csv'), ['id,title,start,location', ...rows, ''].join('\n'));
    const registry = await writeRegistry(feeds, 'registry.json', [source('adhoc-test', 'adhoc.csv', 'csv', 'parks')]);
    const b = await build(dataDir, registry);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const places = (
      await c.runAndReadAll(`SELECT DISTINCT venue_key, venue_name, venue_address FROM read_parquet('${path.join(b.dir, 'events.parquet')}')`)
    ).getRowObjectsJson();
    assert.equal(places.length, 1, JSON.stringify(places));
    assert.match(String(places[0]!['venue_key']), /^adhoc:/);
    assert.deepEqual([places[0]!['venue_name'], places[0]!['venue_address']], ['Lakeside Garden Center', '666 Bellevue Ave, Oakland, CA 94610']);
    assert.equal(b.manifest.counts.events, 3);
    assert.equal(b.manifest.counts.venues, 1);
  });

  test("the same event from two sources is merged into the higher-ranked source's record", { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('merge');
    const registry = await writeRegistry(feeds, 'registry.json', [
      source('sfpl-test', 'merge-library.ics', 'ical', 'sfpl', { free_by_default: false }),
      source('kids-calendar', 'merge-aggregator.rss', 'rss', 'kids'),
    ]);
    const result = await build(dataDir, registry);
    const m = result.manifest;
    const rows = await readRows(result);

    const craftStart = '2026-12-12T14:00:00-08:00';
    const craft = rows.filter((r) => r.start_datetime === craftStart && r.venue_key === 'sfpl-main');
    assert.equal(craft.length, 1, 'one row for the craft afternoon');
    const row = craft[0]!;
    assert.equal(row.id, eventId('sfpl-test', 'family-craft-main-20261212@sfpl.test'));
    assert.equal(row.source_id, 'sfpl-test');
    assert.equal(row.title, 'Family Craft Afternoon');
    assert.match(row.description ?? '', /^Make winter ornaments/, 'the first source keeps its own description');
    assert.equal(row.image_url, 'https://images.example.org/family-craft-ornaments.jpg', 'the image the first source lacked comes from the second');
    assert.ok(!rows.some((r) => r.id === eventId('kids-calendar', 'bakc-98765')), "the second source's copy is gone");
    assert.ok(
      rows.some((r) => r.id === eventId('kids-calendar', 'bakc-98766')),
      "the second source's other event stays",
    );

    const kids = report(m, 'kids-calendar');
    assert.equal(kids.merged_into_other_sources, 1);
    assert.equal(kids.kept, kids.parsed - 1);
    assert.equal(report(m, 'sfpl-test').merged_into_other_sources, 0);
    assert.equal(m.counts.merged_across_sources, 1);
    assert.equal(m.counts.events, rows.length);
    assert.equal(m.counts.events, report(m, 'sfpl-test').kept + kids.kept);
  });

  test('conditional GET across builds: a 304 source is not_modified and its events are still published', { timeout: 30_000 }, async () => {
    const { feeds, dataDir } = await workDir('conditional');
    const registry = await writeRegistry(feeds, 'registry.json', [source('cal-http', `${base}/cal.ics`, 'ical', 'sfpl')]);
    const hitsBefore = hits('/cal.ics');
    const b1 = await build(dataDir, registry, NOW);
    const b2 = await build(dataDir, registry, new Date(NOW.getTime() + HOUR));

    const reqs = (seen.get('/cal.ics') ?? []).slice(hitsBefore);
    assert.equal(reqs.length, 2);
    assert.equal(reqs[0]!['if-none-match'], undefined);
    assert.equal(reqs[1]!['if-none-match'], CAL_ETAG);

    const r1 = report(b1.manifest, 'cal-http');
    const r2 = report(b2.manifest, 'cal-http');
    assert.equal(r1.status, 'ok');
    assert.ok(r1.kept > 0);
    assert.equal(r2.status, 'not_modified');
    assert.equal(r2.error, null);
    assert.equal(r2.kept, r1.kept);
    assert.notEqual(b2.manifest.id, b1.manifest.id);
    assert.equal(await currentSnapshotId(dataDir), b2.manifest.id);

    const ids1 = (await readRows(b1)).map((r) => r.id).sort();
    const ids2 = (await readRows(b2)).map((r) => r.id).sort();
    assert.ok(ids2.length > 0);
    assert.deepEqual(ids2, ids1, 'the cached copy publishes the same events');
  });
});
