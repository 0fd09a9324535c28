// Events an earlier snapshot served and this one does not. Their event_url links live on in
// newsletters and apps, so the website answers them 410 Gone ("<title> on <date> is no longer
// listed") instead of a bare 404. Each build derives its list from the snapshot it replaces: that
// snapshot's events missing now (removed_at = this build), plus that snapshot's own list minus the
// ids that came back; entries that started more than GONE_KEEP_DAYS ago are dropped, so the list
// stays bounded, unless they were removed less than GONE_TOMBSTONE_DAYS ago: the change feed
// (/v1/changes) serves every removal that recent as a deletion. The list is a convenience: a previous snapshot that cannot be read only empties
// it (the manifest says why), it never fails a build.
//
// On disk: gone.jsonl, one GoneEvent per line sorted by id (byte order, as DuckDB sorts; DuckDB
// writes it), and gone.idx, the lines' byte offsets in records.idx's format, so a lookup is a
// binary search of a few preads through RecordStore. Nothing is written when the list is empty: a
// missing file is an empty list.
import { existsSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { RecordStore, writeLineIndex } from './records.ts';
import { pathLiteral, sqlFile, sqlSections } from '../core/sql.ts';

/**
 * An event an earlier snapshot served and this one does not (withdrawn upstream, or past the
 * window): enough to say what it was and to point at similar events. Kept in the snapshot's
 * gone.jsonl.
 */
export interface GoneEvent {
  readonly id: string;
  readonly title: string;
  readonly start_datetime: string;
  readonly venue_city: string;
  readonly categories: readonly string[];
  /** The build time (ISO) of the first snapshot without it. */
  readonly removed_at: string;
}

export const GONE_FILE = 'gone.jsonl';
export const GONE_INDEX = 'gone.idx';
/** An event that started longer ago than this is dropped from the list: nobody follows such a link any more. */
export const GONE_KEEP_DAYS = 400;
/** Every removal is kept at least this long, whenever its event started: the change feed's deletions. */
export const GONE_TOMBSTONE_DAYS = 30;

const DAY_MS = 86_400_000;
const READ_BYTES = 1 << 20;
const NL = 0x0a;

export interface GoneInputs {
  /** The directory of the snapshot this build replaces (`current` before the switch); null on a first build. */
  readonly previousDir: string | null;
  /** This build's events.parquet: the ids that are not gone. */
  readonly parquet: string;
  /** Where gone.jsonl and gone.idx are written: this build's directory. */
  readonly dir: string;
  /** This build's built_at (ISO): the removed_at of newly gone events and the clock of the GONE_KEEP_DAYS bound. */
  readonly builtAt: string;
}

export interface GoneOutcome {
  /** Entries written (0: no file). */
  readonly count: number;
  /** Why the previous snapshot's events or list could not be used (the list is then empty); null when fine. */
  readonly error: string | null;
  /** The latest removed_at among the entries this build pruned (ISO), or null when it pruned none. */
  readonly prunedUntil: string | null;
}

const GONE_SQL = sqlSections('snapshot_gone', 'query');
const goneQuery = (name: string): string => {
  const q = GONE_SQL.get(name);
  if (q === undefined) throw new Error(`sql/snapshot_gone.sql has no query ${name}`);
  return q;
};

/**
 * Writes gone.idx for the gone.jsonl in dir (sorted by id, one entry a line), syncing both, and
 * returns the number of entries; an empty list is removed instead, since no file means none.
 */
export async function indexGoneFile(dir: string): Promise<number> {
  const file = path.join(dir, GONE_FILE);
  const offsets = [0];
  const fh = await open(file, 'r+');
  try {
    const buf = Buffer.allocUnsafe(READ_BYTES);
    for (let at = 0; ;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      // A newline inside a JSON string is escaped, so every raw one ends an entry.
      for (let i = chunk.indexOf(NL); i !== -1; i = chunk.indexOf(NL, i + 1)) offsets.push(at + i + 1);
      at += bytesRead;
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  if (offsets.length === 1) {
    await rm(file, { force: true });
    return 0;
  }
  await writeLineIndex(path.join(dir, GONE_INDEX), offsets);
  return offsets.length - 1;
}

async function loadPreviousList(conn: DuckDBConnection, previousDir: string): Promise<void> {
  await conn.run(sqlFile('snapshot_gone_schema'));
  const file = path.join(previousDir, GONE_FILE);
  if (!existsSync(file)) return;
  const cols = (await conn.runAndReadAll('SELECT column_name, column_type FROM (DESCRIBE previous_gone)')).getRowObjects();
  const struct = `{${cols.map((c) => `${pathLiteral(String(c['column_name']))}: ${pathLiteral(String(c['column_type']))}`).join(', ')}}`;
  await conn.run(sqlFile('snapshot_gone_load').replaceAll('{{file}}', pathLiteral(file)).replaceAll('{{columns}}', struct));
}

/** Derives and writes this build's gone list. Never throws: a failure leaves no file and is reported. */
export async function writeGone(inputs: GoneInputs): Promise<GoneOutcome> {
  const { previousDir, dir, builtAt } = inputs;
  if (previousDir === null) return { count: 0, error: null, prunedUntil: null };
  let db: DuckDBInstance | null = null;
  let conn: DuckDBConnection | null = null;
  try {
    db = await DuckDBInstance.create(':memory:', { threads: '2' });
    conn = await db.connect();
    await loadPreviousList(conn, previousDir);
    // DuckDB writes the lines itself: streaming rows through JavaScript cost twice the CPU (2 s for 100k entries).
    const list = goneQuery('list')
      .replaceAll('{{current}}', pathLiteral(inputs.parquet))
      .replaceAll('{{previous}}', pathLiteral(path.join(previousDir, 'events.parquet')));
    const at = Date.parse(builtAt);
    await conn.run(list, {
      removed_at: builtAt,
      cutoff_ms: BigInt(at - GONE_KEEP_DAYS * DAY_MS),
      tombstone_ms: BigInt(at - GONE_TOMBSTONE_DAYS * DAY_MS),
    });
    await conn.run(goneQuery('write').replaceAll('{{target}}', pathLiteral(path.join(dir, GONE_FILE))));
    const pruned = (await conn.runAndReadAll(goneQuery('pruned'))).getRows()[0]?.[0];
    return { count: await indexGoneFile(dir), error: null, prunedUntil: typeof pruned === 'string' ? pruned : null };
  } catch (err) {
    await Promise.all([GONE_FILE, GONE_INDEX].map((f) => rm(path.join(dir, f), { force: true })));
    return { count: 0, error: `previous snapshot ${path.basename(previousDir)}: ${(err as Error).message}`, prunedUntil: null };
  } finally {
    conn?.closeSync();
    db?.closeSync();
  }
}

/**
 * Read side, for a query worker's 404 path: a binary search over the sorted lines, about
 * log2(n) preads of one short line each. Holds one descriptor and the offsets (8 bytes an entry).
 */
export class GoneIndex {
  private store: RecordStore | null;
  private constructor(store: RecordStore | null) {
    this.store = store;
  }

  /** The snapshot's list; empty when it has none (no file) or it cannot be opened. */
  static open(snapshotDir: string): GoneIndex {
    const idx = path.join(snapshotDir, GONE_INDEX);
    if (!existsSync(idx)) return new GoneIndex(null);
    try {
      return new GoneIndex(new RecordStore(path.join(snapshotDir, GONE_FILE), idx));
    } catch {
      // A 404 must stay a 404: a list that cannot be read only loses the "gone" detail.
      return new GoneIndex(null);
    }
  }

  get size(): number {
    return this.store?.count ?? 0;
  }

  lookup(id: string): GoneEvent | null {
    const store = this.store;
    if (store === null) return null;
    // Compared as UTF-8 bytes: the order of DuckDB's ORDER BY on VARCHAR, which sorted the file.
    const key = Buffer.from(id);
    try {
      let lo = 0;
      let hi = store.count;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const entry = JSON.parse(store.read(mid).toString('utf8')) as GoneEvent;
        const c = Buffer.compare(Buffer.from(entry.id), key);
        if (c === 0) return entry;
        if (c < 0) lo = mid + 1;
        else hi = mid;
      }
      return null;
    } catch {
      // A damaged file: stop reading it rather than turn every later 404 into an error.
      this.close();
      return null;
    }
  }

  close(): void {
    this.store?.close();
    this.store = null;
  }
}
