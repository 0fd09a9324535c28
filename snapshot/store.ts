// The snapshot directory: DATA_DIR/snapshots/<id>/{events.parquet, manifest.json}, and `current`,
// a symlink switched atomically by rename(2). Readers resolve `current` once per query batch, so a
// switch never mixes two snapshots; old snapshots are kept a while for readers still on them.
import { open, readdir, readFile, readlink, rename, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { SourceReport } from './types.ts';

/**
 * 2: records.jsonl + records.idx beside the Parquet; 3: and search.duckdb, the search database the
 * query workers open read-only (the server refuses other versions; `npm start` rebuilds them);
 * 4: venue_geo_precision, a column of the Parquet and a field of each record's venue; 5: search_text
 * carries the compounds and stems q matches (core/stem.ts), and search.duckdb a vocabulary table;
 * 6: all_day, a column of the Parquet and a field of each record (and a CSV column).
 */
export const SNAPSHOT_SCHEMA_VERSION = 7;
export const KEEP_SNAPSHOTS = 5;

export interface Manifest {
  readonly id: string;
  readonly schema_version: number;
  readonly built_at: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly counts: {
    readonly events: number;
    readonly venues: number;
    readonly sources: number;
    readonly sources_failed: number;
    readonly merged_across_sources: number;
    readonly dropped: Readonly<Record<string, number>>;
    /** Entries of gone.jsonl (snapshot/gone.ts); absent in snapshots built before it existed. */
    readonly gone?: number;
  };
  readonly categories: Readonly<Record<string, number>>;
  /** City names present, sorted: what /v1/cities publishes and the city filter accepts. */
  readonly cities: readonly string[];
  readonly destinations: readonly string[];
  readonly files: {
    readonly events: string;
    readonly events_bytes: number;
    readonly records: string;
    readonly records_index: string;
    /** Absent in snapshots built before CSV rows were stored: their exports format records instead. */
    readonly records_csv?: string;
    readonly records_csv_index?: string;
    /** The search database (snapshot/search-db.ts). */
    readonly search: string;
    /** Present only when the snapshot has gone events (a missing file is an empty list). */
    readonly gone?: string;
    readonly gone_index?: string;
  };
  /** Where the gone list came from: the snapshot this one replaced, and why it could not be used. Absent before gone.jsonl. */
  readonly gone_from?: { readonly snapshot: string | null; readonly error: string | null };
  /**
   * The change feed's clock (issue 30): `stamp` is this build's change time (ISO, UTC, ms), the
   * updated_at of every record this build added or changed and the removed_at of every event it
   * removed, later than every stamp before it. `complete_since` is the earliest time from which
   * gone.jsonl holds every removal (null: since the first build); a change-feed cursor older than
   * it may have missed a deletion.
   */
  readonly changes: { readonly stamp: string; readonly complete_since: string | null };
  readonly build_ms: number;
  readonly sources: readonly SourceReport[];
}

export const snapshotsDir = (dataDir: string): string => path.join(dataDir, 'snapshots');
const currentLink = (dataDir: string): string => path.join(snapshotsDir(dataDir), 'current');

/** The id `current` points at, or null before the first build. */
export async function currentSnapshotId(dataDir: string): Promise<string | null> {
  try {
    return path.basename(await readlink(currentLink(dataDir)));
  } catch {
    return null;
  }
}

export async function readManifest(dataDir: string, id: string): Promise<Manifest> {
  return JSON.parse(await readFile(path.join(snapshotsDir(dataDir), id, 'manifest.json'), 'utf8')) as Manifest;
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Points `current` at a published snapshot: a new symlink renamed over the old one (atomic). */
export async function switchCurrent(dataDir: string, id: string): Promise<void> {
  const dir = snapshotsDir(dataDir);
  const tmp = path.join(dir, `.current-${process.pid}-${Date.now()}`);
  await symlink(id, tmp);
  await rename(tmp, currentLink(dataDir));
  await fsyncDir(dir);
}

/** A build directory this old belongs to a build that died; a live build never takes this long to write. */
const STALE_BUILD_MS = 6 * 60 * 60 * 1000;

/** Removes all but the newest KEEP_SNAPSHOTS published snapshots (never `current`), and abandoned build dirs. */
export async function pruneSnapshots(dataDir: string, keep = KEEP_SNAPSHOTS): Promise<string[]> {
  const dir = snapshotsDir(dataDir);
  const current = await currentSnapshotId(dataDir);
  const entries = await readdir(dir, { withFileTypes: true });
  const published = entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort()
    .reverse();
  const doomed = published.slice(keep).filter((n) => n !== current);
  // Another process may be building right now: only directories left long ago are abandoned.
  const stale: string[] = [];
  for (const e of entries.filter((x) => x.name.startsWith('.building-') && !x.name.includes(`-${process.pid}-`))) {
    const st = await stat(path.join(dir, e.name)).catch(() => null);
    if (st && Date.now() - st.mtimeMs > STALE_BUILD_MS) stale.push(e.name);
  }
  for (const name of [...doomed, ...stale]) await rm(path.join(dir, name), { recursive: true, force: true });
  return doomed;
}
