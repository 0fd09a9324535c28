// Gone events across builds: a CSV feed rewritten between buildSnapshot runs in a temp DATA_DIR;
// what each event was is read back from the earlier snapshot's Parquet with DuckDB (the oracle),
// and the new snapshot's list through GoneIndex, as a query worker reads it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { buildSnapshot, type BuildResult } from '../../snapshot/build/build.ts';
import { GONE_FILE, GONE_INDEX, GONE_KEEP_DAYS, GoneIndex, indexGoneFile, type GoneEvent } from '../../snapshot/gone.ts';
import { currentSnapshotId } from '../../snapshot/store.ts';
import { eventId } from '../../core/ids.ts';
import { csvSource, FARM, MISSION } from './csv-source.ts';

const NOW = new Date('2026-11-21T17:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SOURCE = 'gone-test';

interface FeedRow {
  readonly uid: string;
  readonly title: string;
  /** ISO with offset. */
  readonly start: string;
  readonly location: string;
  readonly categories: string;
}

const STAY: FeedRow = { uid: 'stay', title: 'Toddler Storytime', start: '2026-11-23T10:30:00-08:00', location: MISSION, categories: 'storytime' };
const LEAVING: FeedRow = { uid: 'leaving', title: 'Feed the Goats', start: '2026-11-24T10:00:00-08:00', location: FARM, categories: 'animals;outdoors' };
const ADDED: FeedRow = { uid: 'added', title: 'Winter Crafts', start: '2026-11-25T14:00:00-08:00', location: MISSION, categories: 'arts' };
const idOf = (r: FeedRow): string => eventId(SOURCE, r.uid);

let tmp: string;
before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fe-gone-'));
});
after(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A work dir with one CSV source; `build` rewrites the feed to `rows` and builds at `now`. */
async function workDir(name: string): Promise<{ dataDir: string; build: (rows: readonly FeedRow[], now: Date, dataDir?: string) => Promise<BuildResult> }> {
  const dir = await fs.mkdtemp(path.join(tmp, `${name}-`));
  const { registryFile, feed } = await csvSource(dir, SOURCE);
  const dataDir = path.join(dir, 'data');
  return {
    dataDir,
    build: async (rows, now, into = dataDir) => {
      const lines = rows.map((r) => `${r.uid},${r.title},${r.start},${r.location},${r.categories}`);
      await fs.writeFile(feed, ['id,title,start,location,categories', ...lines, ''].join('\n'));
      return buildSnapshot({ dataDir: into, registryFile, now, windowDays: 60, lookbackDays: 14, threads: 1 });
    },
  };
}

/** A copy of a DATA_DIR (with its `current` link as it is), to branch the sequence of builds. */
async function branch(dataDir: string, name: string): Promise<string> {
  const copy = path.join(path.dirname(dataDir), name);
  await fs.cp(dataDir, copy, { recursive: true, verbatimSymlinks: true });
  return copy;
}

/** The oracle: what a snapshot's Parquet says of its events, by id. */
async function served(b: BuildResult): Promise<Map<string, Omit<GoneEvent, 'removed_at'>>> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const file = path.join(b.dir, 'events.parquet').replaceAll("'", "''");
    const rows = (await c.runAndReadAll(`SELECT id, title, start_datetime, venue_city, categories FROM read_parquet('${file}')`)).getRowObjectsJson();
    return new Map(
      rows.map((r) => [
        String(r['id']),
        {
          id: String(r['id']),
          title: String(r['title']),
          start_datetime: String(r['start_datetime']),
          venue_city: String(r['venue_city']),
          categories: (r['categories'] as string[]).map(String),
        },
      ]),
    );
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

function withIndex<T>(b: BuildResult, fn: (g: GoneIndex) => T): T {
  const g = GoneIndex.open(b.dir);
  try {
    return fn(g);
  } finally {
    g.close();
  }
}

async function goneLines(b: BuildResult): Promise<GoneEvent[]> {
  const text = await fs.readFile(path.join(b.dir, GONE_FILE), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as GoneEvent);
}

/** A list as the build leaves it: JSON lines (sorted by the caller), then indexed. */
async function writeList(dir: string, entries: readonly GoneEvent[]): Promise<number> {
  await fs.writeFile(path.join(dir, GONE_FILE), entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return indexGoneFile(dir);
}

const sameFields = (e: GoneEvent | null): Omit<GoneEvent, 'removed_at'> | null =>
  e && { id: e.id, title: e.title, start_datetime: e.start_datetime, venue_city: e.venue_city, categories: e.categories };

describe('gone events across builds', () => {
  test('removed, carried, back again, and kept apart from current ids', { timeout: 60_000 }, async () => {
    const w = await workDir('sequence');
    const b1 = await w.build([STAY, LEAVING], NOW);
    assert.equal(b1.manifest.counts.gone, 0);
    assert.deepEqual(b1.manifest.gone_from, { snapshot: null, error: null });
    assert.equal(
      withIndex(b1, (g) => g.size),
      0,
    );

    const t2 = new Date(NOW.getTime() + HOUR);
    const b2 = await w.build([STAY, ADDED], t2);
    assert.deepEqual(b2.manifest.gone_from, { snapshot: b1.manifest.id, error: null });
    const before = await served(b1);
    const now2 = await served(b2);
    const was = before.get(idOf(LEAVING));
    assert.ok(was, 'the first snapshot served the event that leaves');
    assert.ok(was.categories.length >= 2, `the fixture has categories to carry: ${was.categories.join(',')}`);
    assert.equal(was.venue_city, 'Berkeley');

    // Exactly the first snapshot's ids that the second lacks.
    const expected = [...before.keys()].filter((id) => !now2.has(id)).sort();
    assert.deepEqual(expected, [idOf(LEAVING)]);
    const lines = await goneLines(b2);
    assert.deepEqual(
      lines.map((e) => e.id),
      expected,
    );
    assert.equal(b2.manifest.counts.gone, 1);
    assert.deepEqual(b2.manifest.files.gone, GONE_FILE);
    assert.deepEqual(Object.keys(lines[0]!), ['id', 'title', 'start_datetime', 'venue_city', 'categories', 'removed_at']);

    withIndex(b2, (g) => {
      const found = g.lookup(idOf(LEAVING));
      assert.deepEqual(sameFields(found), was);
      assert.equal(found?.removed_at, b2.manifest.built_at);
      assert.equal(found?.removed_at, t2.toISOString());
      for (const id of now2.keys()) assert.equal(g.lookup(id), null, `${id} is served, not gone`);
      assert.equal(g.lookup(eventId(SOURCE, 'never-listed')), null);
    });

    // Branch: the event comes back.
    const t3 = new Date(NOW.getTime() + 2 * HOUR);
    const back = await w.build([STAY, ADDED, LEAVING], t3, await branch(w.dataDir, 'back'));
    assert.ok((await served(back)).has(idOf(LEAVING)));
    assert.equal(back.manifest.counts.gone, 0);
    assert.equal(
      withIndex(back, (g) => g.lookup(idOf(LEAVING))),
      null,
      'an id that came back is no longer gone',
    );
    await assert.rejects(fs.stat(path.join(back.dir, GONE_FILE)), 'an empty list writes no file');

    // Branch: it stays away, and so does another one now.
    const still = await w.build([ADDED], t3, await branch(w.dataDir, 'still'));
    withIndex(still, (g) => {
      const carried = g.lookup(idOf(LEAVING));
      assert.deepEqual(sameFields(carried), was);
      assert.equal(carried?.removed_at, b2.manifest.built_at, 'a carried entry keeps the build that first lost it');
      const fresh = g.lookup(idOf(STAY));
      assert.deepEqual(sameFields(fresh), now2.get(idOf(STAY)));
      assert.equal(fresh?.removed_at, t3.toISOString());
      assert.equal(g.lookup(idOf(ADDED)), null);
      assert.equal(g.size, 2);
    });
    const ids = (await goneLines(still)).map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
      'sorted by id',
    );
  });

  test(`entries that started more than ${GONE_KEEP_DAYS} days before the build are dropped`, { timeout: 60_000 }, async () => {
    const w = await workDir('bound');
    const early = { ...LEAVING, uid: 'early', start: '2026-11-24T10:00:00-08:00' };
    // Two hours later: on the far side of the bound at the third build.
    const late = { ...STAY, uid: 'late', start: '2026-11-24T12:00:00-08:00' };
    await w.build([early, late], NOW);
    await w.build([late], new Date(NOW.getTime() + HOUR));
    const t3 = new Date(Date.parse(early.start) + GONE_KEEP_DAYS * DAY + HOUR);
    const next = { ...ADDED, uid: 'next', start: DateTime.fromJSDate(t3).setZone('America/Los_Angeles').plus({ days: 1 }).toISO() ?? '' };
    const b3 = await w.build([next], t3);
    withIndex(b3, (g) => {
      assert.equal(g.lookup(idOf(early)), null, `started ${GONE_KEEP_DAYS} days and an hour before: dropped`);
      const kept = g.lookup(idOf(late));
      assert.equal(kept?.start_datetime, late.start, 'started an hour short of the bound: kept');
      assert.equal(kept?.removed_at, t3.toISOString());
      assert.equal(g.size, 1);
    });
  });

  test('an unreadable previous snapshot empties the list and is reported; the build still publishes', { timeout: 60_000 }, async () => {
    const w = await workDir('unreadable');
    const b1 = await w.build([STAY, LEAVING], NOW);
    await fs.writeFile(path.join(b1.dir, 'events.parquet'), 'not a parquet file');
    const b2 = await w.build([STAY], new Date(NOW.getTime() + HOUR));
    assert.equal(await currentSnapshotId(w.dataDir), b2.manifest.id);
    assert.equal(b2.manifest.counts.gone, 0);
    assert.equal(b2.manifest.gone_from?.snapshot, b1.manifest.id);
    assert.match(b2.manifest.gone_from?.error ?? '', new RegExp(`^previous snapshot ${b1.manifest.id}: `));
    assert.deepEqual(
      (await fs.readdir(b2.dir)).filter((f) => f.startsWith('gone')),
      [],
    );
    assert.equal(
      withIndex(b2, (g) => g.lookup(idOf(LEAVING))),
      null,
    );
  });

  test('a damaged line in the previous list costs that line only', { timeout: 60_000 }, async () => {
    const w = await workDir('damaged');
    const other = { ...LEAVING, uid: 'other', title: 'Puppet Show' };
    await w.build([STAY, LEAVING, other], NOW);
    const b2 = await w.build([STAY], new Date(NOW.getTime() + HOUR));
    assert.equal(b2.manifest.counts.gone, 2);
    // Damage the entry that sorts second; the first stays intact.
    const [first, second] = await goneLines(b2);
    const text = await fs.readFile(path.join(b2.dir, GONE_FILE), 'utf8');
    await fs.writeFile(path.join(b2.dir, GONE_FILE), text.replace(JSON.stringify(second), '{"id": "broken'));
    const b3 = await w.build([STAY], new Date(NOW.getTime() + 2 * HOUR));
    assert.equal(b3.manifest.gone_from?.error, null);
    assert.deepEqual(await goneLines(b3), [first]);
  });
});

describe('GoneIndex', () => {
  test('a snapshot without a gone file: every lookup is null', async () => {
    const dir = await fs.mkdtemp(path.join(tmp, 'empty-'));
    const g = GoneIndex.open(dir);
    assert.equal(g.size, 0);
    assert.equal(g.lookup(eventId(SOURCE, 'x')), null);
    g.close();
    assert.equal(g.lookup(eventId(SOURCE, 'x')), null, 'closed: still null');
  });

  test('a damaged file answers null instead of throwing', async () => {
    const dir = await fs.mkdtemp(path.join(tmp, 'damaged-'));
    const ids = ['a', 'b', 'c'].map((u) => eventId(SOURCE, u)).sort();
    await writeList(
      dir,
      ids.map((id) => ({ id, title: 't', start_datetime: STAY.start, venue_city: 'Oakland', categories: [], removed_at: NOW.toISOString() })),
    );
    const size = (await fs.stat(path.join(dir, GONE_FILE))).size;
    await fs.writeFile(path.join(dir, GONE_FILE), Buffer.alloc(size, 0x7b));
    const g = GoneIndex.open(dir);
    assert.equal(g.lookup(ids[1]!), null);
    g.close();
  });

  test('an empty list leaves no file', async () => {
    const dir = await fs.mkdtemp(path.join(tmp, 'none-'));
    assert.equal(await writeList(dir, []), 0);
    assert.deepEqual(await fs.readdir(dir), []);
  });

  test('property: every written entry is found as written; nothing else is', async () => {
    const root = await fs.mkdtemp(path.join(tmp, 'prop-'));
    let run = 0;
    const entryArb = fc.record({
      title: fc.string({ maxLength: 40 }),
      start_datetime: fc.constant(STAY.start),
      venue_city: fc.string({ maxLength: 12 }),
      categories: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
      removed_at: fc.constant(NOW.toISOString()),
    });
    // Any string as an id (astral characters and escapes included), so the byte order is exercised.
    const idsArb = fc.uniqueArray(
      fc.oneof(
        fc.string({ minLength: 1, maxLength: 12, unit: 'binary' }),
        fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom(...'0123456789abcdef') }),
      ),
      { maxLength: 300 },
    );
    const check = async (ids: string[], bodies: Omit<GoneEvent, 'id'>[], probes: string[]): Promise<void> => {
      // Lone surrogates do not survive UTF-8: such strings are not ids.
      if (ids.some((id) => Buffer.from(id).toString() !== id)) return;
      const dir = path.join(root, String(run++));
      await fs.mkdir(dir);
      const sorted = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      const entries = sorted.map((id, i) => ({ id, ...bodies[i % bodies.length]! }));
      assert.equal(await writeList(dir, entries), entries.length);
      // The index beside the list: the offset of every line and of the end, or no files at all.
      const idxBytes = await fs.stat(path.join(dir, GONE_INDEX)).then(
        (st) => st.size,
        () => 0,
      );
      assert.equal(idxBytes, entries.length === 0 ? 0 : (entries.length + 1) * 8);
      const g = GoneIndex.open(dir);
      try {
        assert.equal(g.size, entries.length);
        for (const e of entries) assert.deepEqual(g.lookup(e.id), e);
        // Neighbours of every id probe the edges of the search.
        const known = new Set(ids);
        const near = [...probes, ...ids.flatMap((id) => [`${id}\u0000`, `${id}0`, id.slice(0, -1)])];
        for (const p of near) if (!known.has(p)) assert.equal(g.lookup(p), null, `absent ${JSON.stringify(p)}`);
      } finally {
        g.close();
        await fs.rm(dir, { recursive: true, force: true });
      }
    };
    // The time limit abandons a run in flight rather than waiting: wait for it before the temp dir goes.
    let inFlight: Promise<void> = Promise.resolve();
    await fc.assert(
      fc.asyncProperty(
        idsArb,
        fc.array(entryArb, { minLength: 1, maxLength: 8 }),
        fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { maxLength: 20 }),
        (ids, bodies, probes) => {
          inFlight = check(ids, bodies, probes);
          return inFlight;
        },
      ),
      { interruptAfterTimeLimit: 3000, markInterruptAsFailure: false, numRuns: 10_000 },
    );
    await inFlight.catch(() => undefined);
  });
});
