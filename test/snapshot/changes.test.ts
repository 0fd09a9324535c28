// The change clock of snapshot builds (the change feed's ground, server/routes/changes.ts): each
// build's stamp is later than the one before even when the clock says otherwise, a record keeps
// its change times while its served content is the same, and removals stay listed at least
// GONE_TOMBSTONE_DAYS whenever their events started, with the list's complete-since time moving
// only past what was pruned. Real builds of a CSV source in a temp DATA_DIR, and writeGone over
// Parquet files DuckDB writes here; the oracle is each snapshot's own Parquet.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildSnapshot, changeStamp, completeSince, type BuildResult } from '../../snapshot/build/build.ts';
import { GONE_FILE, GONE_KEEP_DAYS, GONE_TOMBSTONE_DAYS, writeGone, type GoneEvent } from '../../snapshot/gone.ts';
import type { Manifest } from '../../snapshot/store.ts';
import { csvSource, MISSION } from './csv-source.ts';

const NOW = new Date('2026-11-21T17:00:00Z');
const DAY = 86_400_000;

let tmp: string;
before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fe-changes-'));
});
after(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const manifest = (over: Partial<Manifest>): Manifest => ({ built_at: '2026-11-21T17:00:00.000Z', ...over }) as Manifest;

describe('the change clock', () => {
  test('a stamp is the build time, moved past the previous stamp when the clock is not ahead of it', () => {
    const at = NOW.getTime();
    assert.equal(changeStamp(at, null), at);
    assert.equal(changeStamp(at + 5, manifest({ changes: { stamp: new Date(at).toISOString(), complete_since: null } })), at + 5);
    assert.equal(changeStamp(at, manifest({ changes: { stamp: new Date(at).toISOString(), complete_since: null } })), at + 1, 'same ms');
    assert.equal(changeStamp(at - DAY, manifest({ changes: { stamp: new Date(at).toISOString(), complete_since: null } })), at + 1, 'clock set back');
    // A snapshot built before the change clock: its build time is its stamp.
    assert.equal(changeStamp(at, manifest({ built_at: new Date(at).toISOString() })), at + 1);
  });

  test('complete-since moves only past what was pruned; a previous snapshot without the clock counts from its build', () => {
    assert.equal(completeSince(null, null), null, 'a first build: complete from the start');
    const prior = manifest({ changes: { stamp: '2026-11-20T00:00:00.000Z', complete_since: null } });
    assert.equal(completeSince(prior, null), null);
    assert.equal(completeSince(prior, '2026-10-01T00:00:00.000Z'), '2026-10-01T00:00:00.000Z');
    const pruned = manifest({ changes: { stamp: '2026-11-20T00:00:00.000Z', complete_since: '2026-10-05T00:00:00.000Z' } });
    assert.equal(completeSince(pruned, '2026-10-01T00:00:00.000Z'), '2026-10-05T00:00:00.000Z', 'never moves back');
    assert.equal(completeSince(manifest({ built_at: '2026-11-19T00:00:00.000Z' }), null), '2026-11-19T00:00:00.000Z');
  });
});

describe('change times across real builds', () => {
  interface Row {
    uid: string;
    title: string;
  }
  let dataDir: string;
  let feed: string;
  let registryFile: string;
  before(async () => {
    dataDir = path.join(tmp, 'data');
    ({ registryFile, feed } = await csvSource(tmp, 'clock-test'));
  });

  async function build(rows: readonly Row[], now: Date): Promise<BuildResult> {
    const lines = rows.map((r, i) => `${r.uid},${r.title},2026-11-${23 + (i % 5)}T10:30:00-08:00,${MISSION},storytime`);
    await fs.writeFile(feed, ['id,title,start,location,categories', ...lines, ''].join('\n'));
    return buildSnapshot({ dataDir, registryFile, now, windowDays: 60, lookbackDays: 14, threads: 1 });
  }

  async function times(b: BuildResult): Promise<Map<string, { title: string; created: number; updated: number }>> {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const file = path.join(b.dir, 'events.parquet').replaceAll("'", "''");
      const rows = (
        await c.runAndReadAll(`SELECT id, title, created_ms::DOUBLE AS c, updated_ms::DOUBLE AS u FROM read_parquet('${file}')`)
      ).getRowObjectsJson();
      return new Map(
        rows.map((r) => [String(r['title']).replace(/ \(.*/, ''), { title: String(r['title']), created: Number(r['c']), updated: Number(r['u']) }]),
      );
    } finally {
      c.closeSync();
      db.closeSync();
    }
  }

  test('builds at the same instant still stamp later; unchanged records keep their times, changed ones take the new stamp', { timeout: 60_000 }, async () => {
    const rows: Row[] = ['Alpha', 'Bravo', 'Charlie', 'Delta'].map((t, i) => ({ uid: `u${i}`, title: t }));
    const b1 = await build(rows, NOW);
    const t1 = await times(b1);
    const s1 = Date.parse(b1.manifest.changes.stamp);
    assert.equal(s1, NOW.getTime());
    for (const t of t1.values()) assert.deepEqual([t.created, t.updated], [s1, s1]);

    (rows[1] as Row).title = 'Bravo (moved indoors)';
    rows.push({ uid: 'u9', title: 'Echo' });
    const b2 = await build(rows, NOW);
    const s2 = Date.parse(b2.manifest.changes.stamp);
    assert.ok(s2 > s1, `the second stamp (${b2.manifest.changes.stamp}) follows the first though the clock stood still`);
    const t2 = await times(b2);
    assert.deepEqual(t2.get('Alpha'), t1.get('Alpha'), 'unchanged: same times');
    assert.deepEqual(t2.get('Bravo'), { title: 'Bravo (moved indoors)', created: s1, updated: s2 }, 'changed: created kept, updated now');
    assert.deepEqual(t2.get('Echo'), { title: 'Echo', created: s2, updated: s2 }, 'new');

    const b3 = await build(
      rows.filter((r) => r.uid !== 'u2'),
      NOW,
    );
    const gone = (await fs.readFile(path.join(b3.dir, GONE_FILE), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as GoneEvent);
    assert.deepEqual(
      gone.map((g) => [g.title, g.removed_at]),
      [['Charlie', b3.manifest.changes.stamp]],
      'removed at the stamp of the build that lost it',
    );
    assert.equal(b3.manifest.changes.complete_since, null, 'nothing was ever pruned');
  });
});

describe('removals are kept for the change feed', () => {
  /** A snapshot-like directory with an events.parquet of these ids, and optionally a gone list. */
  async function snapshotDir(name: string, ids: readonly { id: string; start: string }[], gone: readonly GoneEvent[] = []): Promise<string> {
    const dir = path.join(tmp, name);
    await fs.mkdir(dir, { recursive: true });
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const values = ids.map((e) => `('${e.id}', 'Title ${e.id}', '${e.start}', 'San Francisco', ['storytime'])`).join(', ');
      const sql = ids.length
        ? `SELECT * FROM (VALUES ${values}) t(id, title, start_datetime, venue_city, categories)`
        : `SELECT ''::VARCHAR AS id, ''::VARCHAR AS title, ''::VARCHAR AS start_datetime, ''::VARCHAR AS venue_city, []::VARCHAR[] AS categories WHERE false`;
      await c.run(`COPY (${sql}) TO '${path.join(dir, 'events.parquet')}' (FORMAT parquet)`);
    } finally {
      c.closeSync();
      db.closeSync();
    }
    if (gone.length) await fs.writeFile(path.join(dir, GONE_FILE), gone.map((g) => `${JSON.stringify(g)}\n`).join(''));
    return dir;
  }

  test(`an event that started long ago stays listed ${GONE_TOMBSTONE_DAYS} days after its removal, then goes; complete-since says when`, async () => {
    const builtAt = '2026-11-21T17:00:00.000Z';
    const longAgo = new Date(NOW.getTime() - (GONE_KEEP_DAYS + 100) * DAY).toISOString();
    const entry = (id: string, removedDaysAgo: number): GoneEvent => ({
      id,
      title: `Title ${id}`,
      start_datetime: longAgo,
      venue_city: 'San Francisco',
      categories: ['storytime'],
      removed_at: new Date(NOW.getTime() - removedDaysAgo * DAY).toISOString(),
    });
    const previous = await snapshotDir(
      'prev',
      [{ id: 'exhibit', start: longAgo }],
      [entry('recent', GONE_TOMBSTONE_DAYS - 1), entry('old', GONE_TOMBSTONE_DAYS + 1)],
    );
    const current = await snapshotDir('cur', []);
    const out = await writeGone({ previousDir: previous, parquet: path.join(current, 'events.parquet'), dir: current, builtAt });
    assert.equal(out.error, null);
    const kept = (await fs.readFile(path.join(current, GONE_FILE), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as GoneEvent).id);
    assert.deepEqual(kept, ['exhibit', 'recent'], `removed now, or within ${GONE_TOMBSTONE_DAYS} days: kept though they started ${GONE_KEEP_DAYS}+ days ago`);
    assert.equal(out.prunedUntil, entry('old', GONE_TOMBSTONE_DAYS + 1).removed_at, 'the latest removal pruned');
  });
});
