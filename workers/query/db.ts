// One snapshot as a query worker holds it: a single-threaded in-memory DuckDB with the snapshot's
// filter columns (sql/search_load.sql), the search statement prepared once, and the record store.
import path from 'node:path';
import {
  BIGINT, BOOLEAN, DOUBLE, DuckDBInstance, INTEGER, LIST, VARCHAR, listValue,
  type DuckDBConnection, type DuckDBPreparedStatement, type DuckDBType, type DuckDBValue,
} from '@duckdb/node-api';
import { pathLiteral, sqlFile } from '../snapshot/sql.ts';
import { RECORDS_FILE, RECORDS_INDEX, RecordStore } from '../snapshot/records.ts';
import type { SearchQuery, SnapshotRef } from '../protocol.ts';

/** The largest epoch ms DuckDB's BIGINT and JS agree on; "no upper bound". */
const FOREVER_MS = Number.MAX_SAFE_INTEGER;
const KM_PER_DEGREE_LAT = 111.32;

const PARAM_TYPES: Record<string, DuckDBType> = {
  from_ms: BIGINT, to_ms: BIGINT,
  lat: DOUBLE, lng: DOUBLE, lat_lo: DOUBLE, lat_hi: DOUBLE, lng_lo: DOUBLE, lng_hi: DOUBLE, radius_km: DOUBLE,
  cities: LIST(VARCHAR), age_lo: INTEGER, age_hi: INTEGER, categories: LIST(VARCHAR), excluded: LIST(VARCHAR),
  is_free: BOOLEAN, words: LIST(VARCHAR), by_distance: BOOLEAN, limit: INTEGER, offset: INTEGER,
};

export interface PageRow {
  readonly rid: number;
  readonly id: string;
  readonly distanceKm: number | null;
}

export interface SearchPage {
  readonly total: number;
  /** min(end_ms) over all matches, or null when nothing matched. */
  readonly firstEndMs: number | null;
  readonly rows: readonly PageRow[];
}

/**
 * A box that holds the whole circle: latitude ± r/111.32 km, longitude widened by 1/cos(latitude)
 * at the box's edge nearest a pole. Near a pole or across the antimeridian the longitude bound is
 * dropped (the whole range), and the exact great-circle test decides alone.
 */
export function boundingBox(lat: number, lng: number, radiusKm: number): { latLo: number; latHi: number; lngLo: number; lngHi: number } {
  // 1% margin: the box is only a prefilter, it must never cut a point the circle holds.
  const dLat = (radiusKm / KM_PER_DEGREE_LAT) * 1.01;
  const latLo = Math.max(-90, lat - dLat);
  const latHi = Math.min(90, lat + dLat);
  const edge = Math.max(Math.abs(latLo), Math.abs(latHi));
  if (edge >= 89) return { latLo, latHi, lngLo: -180, lngHi: 180 };
  const dLng = (radiusKm / (KM_PER_DEGREE_LAT * Math.cos((edge * Math.PI) / 180))) * 1.01;
  if (lng - dLng < -180 || lng + dLng > 180) return { latLo, latHi, lngLo: -180, lngHi: 180 };
  return { latLo, latHi, lngLo: lng - dLng, lngHi: lng + dLng };
}

function list(values: readonly string[] | null): DuckDBValue {
  return values === null ? null : listValue([...values]);
}

export class SnapshotDb {
  private constructor(
    readonly ref: SnapshotRef,
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    private readonly search: DuckDBPreparedStatement,
    readonly records: RecordStore,
  ) {}

  static async open(ref: SnapshotRef): Promise<SnapshotDb> {
    // One DuckDB thread: the pool's workers are the parallelism, one query each.
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const conn = await instance.connect();
    try {
      await conn.run(sqlFile('search_macros'));
      await conn.run(sqlFile('search_load').replaceAll('{{parquet}}', pathLiteral(path.join(ref.dir, 'events.parquet'))));
      const search = await conn.prepare(sqlFile('search'));
      const records = new RecordStore(path.join(ref.dir, RECORDS_FILE), path.join(ref.dir, RECORDS_INDEX));
      return new SnapshotDb(ref, instance, conn, search, records);
    } catch (err) {
      conn.closeSync();
      instance.closeSync();
      throw err;
    }
  }

  /** Stops the statement running on this connection (it rejects with an interrupt error). */
  interrupt(): void {
    this.conn.interrupt();
  }

  async page(q: SearchQuery, excluded: readonly string[], nowMs: number): Promise<SearchPage> {
    const box = q.geo ? boundingBox(q.geo.lat, q.geo.lng, q.geo.radiusKm) : { latLo: -90, latHi: 90, lngLo: -180, lngHi: 180 };
    const range = q.range === 'upcoming' ? { fromMs: nowMs, toMs: FOREVER_MS } : q.range;
    this.search.bind(
      {
        from_ms: BigInt(Math.trunc(range.fromMs)),
        to_ms: BigInt(Math.trunc(range.toMs)),
        lat: q.geo?.lat ?? null,
        lng: q.geo?.lng ?? null,
        lat_lo: box.latLo,
        lat_hi: box.latHi,
        lng_lo: box.lngLo,
        lng_hi: box.lngHi,
        radius_km: q.geo?.radiusKm ?? null,
        cities: list(q.cities),
        age_lo: q.ages?.loMonths ?? null,
        age_hi: q.ages?.hiMonths ?? null,
        categories: list(q.categories),
        excluded: listValue([...excluded]),
        is_free: q.isFree,
        words: list(q.words),
        by_distance: q.sort === 'distance',
        limit: q.limit,
        offset: q.offset,
      },
      PARAM_TYPES,
    );
    const rows = (await this.search.runAndReadAll()).getRows();
    const first = rows[0];
    const total = first ? Number(first[0]) : 0;
    const firstEnd = first?.[1];
    return {
      total,
      firstEndMs: typeof firstEnd === 'number' ? firstEnd : null,
      // A search with no page rows (offset past the end) still returns the stats row, with rid NULL.
      rows: rows
        .filter((r) => r[2] !== null)
        .map((r) => ({ rid: Number(r[2]), id: String(r[3]), distanceKm: typeof r[4] === 'number' ? r[4] : null })),
    };
  }

  close(): void {
    this.records.close();
    this.search.destroySync();
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
