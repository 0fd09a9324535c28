// Staged rows → one snapshot Parquet file, assembled by DuckDB in a file-backed database (so a
// build larger than memory spills to disk): load every staging file, merge the rows that several
// sources published, settle one spelling per ad-hoc place, stamp each record's change times against
// the snapshot this one replaces, count, write sorted Parquet, and render the served records beside
// it in the same row order (records.ts).
// Column types are sql/snapshot_schema.sql's (read back with DESCRIBE, so written once).
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { searchText } from '../normalize/event.ts';
import { chooseVenueForm, mergeGroup, venueFormOf } from '../normalize/merge.ts';
import { writeStaged, type StagedRow } from '../stage.ts';
import { writeRecordFiles } from '../records.ts';
import { pathLiteral, sqlFile, sqlSections } from '../../core/sql.ts';
import type { GeoPrecision } from '../../core/record.ts';

export interface Assembled {
  readonly events: number;
  readonly venues: number;
  readonly cities: string[];
  readonly destinations: string[];
  readonly categories: Record<string, number>;
  /** Rows each source has in the snapshot. */
  readonly keptBySource: ReadonlyMap<string, number>;
  /** Rows folded into a better-ranked source's record, by the source that lost them. */
  readonly mergedAway: ReadonlyMap<string, number>;
}

async function load(conn: DuckDBConnection, files: readonly string[]): Promise<void> {
  if (files.length === 0) return;
  const cols = (await conn.runAndReadAll('SELECT column_name, column_type FROM (DESCRIBE events)')).getRowObjects();
  const struct = `{${cols.map((c) => `${pathLiteral(String(c['column_name']))}: ${pathLiteral(String(c['column_type']))}`).join(', ')}}`;
  const list = `[${files.map(pathLiteral).join(', ')}]`;
  await conn.run(`INSERT INTO events SELECT * FROM read_json(${list}, format = 'newline_delimited', columns = ${struct}, maximum_object_size = 16777216)`);
}

async function mergeCopies(conn: DuckDBConnection, scratch: string): Promise<Map<string, number>> {
  const mergedAway = new Map<string, number>();
  const rows = (await conn.runAndReadAll(sqlFile('snapshot_merge_groups'))).getRowObjectsJson() as unknown as StagedRow[];
  if (rows.length === 0) return mergedAway;
  const groups = new Map<string, StagedRow[]>();
  for (const r of rows) groups.set(r.merge_key, [...(groups.get(r.merge_key) ?? []), r]);
  const merged: StagedRow[] = [];
  for (const [key, group] of groups) {
    const m = mergeGroup(group);
    for (const r of group) if (r.id !== m.id) mergedAway.set(r.source_id, (mergedAway.get(r.source_id) ?? 0) + 1);
    merged.push({ ...m, merge_key: key });
  }
  await conn.run(sqlFile('snapshot_merge_delete'));
  const file = `${scratch}/merged.ndjson`; // removed with the scratch database in writeSnapshot
  await writeStaged(merged, file);
  await load(conn, [file]);
  return mergedAway;
}

async function settleAdhocVenues(conn: DuckDBConnection): Promise<void> {
  const forms = (await conn.runAndReadAll(sqlFile('snapshot_adhoc_venues'))).getRowObjectsJson() as unknown as {
    venue_key: string;
    venue_name: string;
    venue_address: string;
    venue_lat: number;
    venue_lng: number;
    venue_geo_precision: GeoPrecision;
    n: number;
  }[];
  const votes = new Map<string, Map<string, number>>();
  for (const f of forms) {
    const m = votes.get(f.venue_key) ?? new Map<string, number>();
    m.set(JSON.stringify(venueFormOf(f)), f.n);
    votes.set(f.venue_key, m);
  }
  const update = await conn.prepare(sqlFile('snapshot_adhoc_update'));
  const rowsOf = await conn.prepare(sqlFile('snapshot_venue_rows'));
  const setSearch = await conn.prepare(sqlFile('snapshot_search_update'));
  for (const [key, v] of votes) {
    if (v.size < 2) continue;
    const [name, address, lat, lng, precision] = chooseVenueForm(v);
    update.bind([key, name, address, lat, lng, precision]);
    await update.run();
    rowsOf.bind([key]);
    const rows = (await rowsOf.runAndReadAll()).getRowObjectsJson() as unknown as (Parameters<typeof searchText>[0] & { id: string })[];
    for (const r of rows) {
      setSearch.bind([r.id, searchText(r)]);
      await setSearch.run();
    }
  }
}

/** What a record's change times are settled against (sql/snapshot_changes.sql). */
export interface ChangeInputs {
  /** The events.parquet of the snapshot this build replaces, or null on a first build. */
  readonly previousParquet: string | null;
  /** This build's change time (epoch ms): later than every change time the previous snapshot holds. */
  readonly stampMs: number;
}

const CHANGES = sqlSections('snapshot_changes', 'query');
const changesQuery = (name: string): string => {
  const q = CHANGES.get(name);
  if (q === undefined) throw new Error(`sql/snapshot_changes.sql has no query ${name}`);
  return q;
};

/**
 * Fills the changes table: each record's content hash, created_ms and updated_ms. A previous
 * snapshot without change times (built before they existed) or that cannot be read stamps every
 * record as changed now: a client re-reads it once, which is exact, where a guess would not be.
 */
async function settleChangeTimes(conn: DuckDBConnection, inputs: ChangeInputs): Promise<void> {
  await conn.run(changesQuery('content'));
  const stamp = { stamp: BigInt(inputs.stampMs) };
  if (inputs.previousParquet !== null) {
    const literal = pathLiteral(inputs.previousParquet);
    const columns = await conn
      .runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet(${literal}))`)
      .then((r) => new Set(r.getRows().map((row) => String(row[0]))))
      .catch(() => new Set<string>());
    if (['content_hash', 'created_ms', 'updated_ms'].every((c) => columns.has(c))) {
      await conn.run(changesQuery('carried').replaceAll('{{previous}}', literal), stamp);
      return;
    }
  }
  await conn.run(changesQuery('fresh'), stamp);
}

export async function writeSnapshot(
  stageFiles: readonly string[],
  scratch: string,
  target: string,
  changes: ChangeInputs,
  onStep?: (done: number, total: number) => void,
): Promise<Assembled> {
  const dbFile = `${scratch}/assemble.duckdb`;
  const db = await DuckDBInstance.create(dbFile, { threads: '2' });
  const conn = await db.connect();
  try {
    await conn.run(sqlFile('snapshot_schema'));
    await conn.run(sqlFile('snapshot_stage'));
    await load(conn, stageFiles);
    onStep?.(1, 4);
    const mergedAway = await mergeCopies(conn, scratch);
    await settleAdhocVenues(conn);
    onStep?.(2, 4);
    const stats = (await conn.runAndReadAll(sqlFile('snapshot_stats'))).getRowObjectsJson()[0] as unknown as {
      events: number;
      venues: number;
      cities: string[];
      destinations: string[];
      categories: string;
      kept: string;
    };
    onStep?.(3, 4);
    if (stats.events > 0) {
      await settleChangeTimes(conn, changes);
      await conn.run(sqlFile('snapshot_write').replace('{{target}}', pathLiteral(target)));
      const dir = path.dirname(target);
      await writeRecordFiles(conn, target, dir);
    }
    onStep?.(4, 4);
    return {
      events: stats.events,
      venues: stats.venues,
      cities: stats.cities,
      destinations: stats.destinations,
      categories: JSON.parse(stats.categories) as Record<string, number>,
      keptBySource: new Map(Object.entries(JSON.parse(stats.kept) as Record<string, number>)),
      mergedAway,
    };
  } finally {
    conn.closeSync();
    db.closeSync();
    for (const f of [dbFile, `${dbFile}.wal`, `${scratch}/merged.ndjson`]) await rm(f, { force: true });
  }
}
