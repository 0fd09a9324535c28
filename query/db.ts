// One snapshot as a query worker holds it: the snapshot's search database (search.duckdb, built
// with it: snapshot/search-db.ts) opened read-only on one DuckDB thread, a prepared search
// per combination of filters, and the record store.
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBInstance,
  INTEGER,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { sqlFile, sqlSections } from '../core/sql.ts';
import { RECORDS_CSV, RECORDS_CSV_INDEX, RECORDS_FILE, RECORDS_INDEX, RecordStore } from '../snapshot/records.ts';
import { CATEGORY_SLUGS } from '../core/taxonomy.ts';
import { GoneIndex } from '../snapshot/gone.ts';
import { SEARCH_DB } from '../snapshot/search-db.ts';
import { queryForms, type QueryWord } from '../core/stem.ts';
import { BroadIndex } from './broad.ts';
import { mergePage, Tombstones, type ChangeEntry, type ChangesCursor, type ChangesPage } from './changes.ts';
import type { SearchQuery, SnapshotRef } from './protocol.ts';

/** The largest epoch ms DuckDB's BIGINT and JS agree on; "no upper bound". */
const FOREVER_MS = Number.MAX_SAFE_INTEGER;
const KM_PER_DEGREE_LAT = 111.32;
/** The contract's sphere (sql/search_macros.sql): the IUGG mean radius. */
const EARTH_RADIUS_KM = 6371.0088;

/**
 * sql/search_filters.sql split at its "-- fragment: NAME" headers. The fragments are the only SQL
 * a search is assembled from; request values never reach the text, only the parameters.
 */
const FRAGMENTS = sqlSections('search_filters', 'fragment');
const SUGGEST = sqlSections('search_suggest', 'query');
const fragment = (name: string): string => {
  const f = FRAGMENTS.get(name);
  if (f === undefined) throw new Error(`sql/search_filters.sql has no fragment ${name}`);
  return f;
};

/** Which filters a search uses, and how many values the repeated ones have: one statement each. */
export interface Shape {
  readonly geo: boolean;
  readonly cities: number;
  readonly ages: boolean;
  readonly categories: boolean;
  readonly excluded: boolean;
  readonly isFree: boolean;
  /** Per word of q, how many prefixes it is matched by (core/stem.ts queryForms). */
  readonly words: readonly number[];
  /** Words matched through the word table (no place filter) rather than each event's text. */
  readonly wordTable: boolean;
  readonly byDistance: boolean;
  /** A keyset page (SearchQuery.after): rows after $after_start, $after_id. */
  readonly after?: boolean;
}

const repeat = (name: string, n: number, joiner: string): string =>
  Array.from({ length: n }, (_, i) => fragment(name).replaceAll('{{i}}', String(i + 1))).join(joiner);

/** Word i's filter: its fragment around one form per prefix ($word_i_j), with {{i}} and {{j}} filled. */
function wordFilter(wordTable: boolean, i: number, forms: number): string {
  const form = fragment(wordTable ? 'word_indexed_form' : 'word_form');
  const each = Array.from({ length: forms }, (_, j) => form.replaceAll('{{j}}', String(j + 1)));
  return fragment(wordTable ? 'word_indexed' : 'word')
    .replace('{{forms}}', each.join(wordTable ? '\n  UNION ALL\n  ' : ' OR '))
    .replaceAll('{{i}}', String(i + 1));
}

/** The filter lines of a shape (sql/search_filters.sql's fragments, each starting AND). */
function filterLines(shape: Shape): string {
  const filters = [
    shape.geo ? fragment('geo') : '',
    shape.cities ? `AND (${repeat('city', shape.cities, ' OR ')})\n  ${fragment('city_band')}` : '',
    shape.ages ? fragment('ages') : '',
    shape.categories ? fragment('categories') : '',
    shape.excluded ? fragment('excluded') : '',
    shape.isFree ? fragment('is_free') : '',
    shape.words.map((forms, i) => wordFilter(shape.wordTable, i, forms)).join('\n'),
  ].filter((f) => f !== '');
  return filters.join('\n  ');
}

/** The search statement of a shape, or with `count`, its total-only twin (sql/search_count.sql). */
export function searchSql(shape: Shape, count = false): string {
  return sqlFile(count ? 'search_count' : 'search')
    .replaceAll('{{place}}', fragment(shape.geo ? 'place' : 'place_none'))
    .replaceAll('{{hav}}', fragment(shape.byDistance ? 'haversine' : 'hav_none'))
    .replaceAll('{{filters}}', filterLines(shape))
    .replaceAll('{{haversine}}', fragment('haversine'))
    .replaceAll('{{order}}', fragment(shape.byDistance ? 'order_distance' : 'order_start'))
    .replaceAll('{{remaining}}', fragment(shape.after ? 'remaining_after' : 'remaining_none'))
    .replaceAll('{{qualify}}', shape.after ? fragment('qualify_after') : '')
    .replaceAll('{{after}}', fragment('after'));
}

/** The change feed's statement of a shape (sql/changes.sql): the same filters, as one boolean per row. */
export function changesSql(shape: Shape): string {
  return sqlFile('changes').replaceAll('{{filters}}', filterLines(shape)).replaceAll('{{haversine}}', fragment('haversine'));
}

const radians = (deg: number): number => (deg * Math.PI) / 180;

/**
 * Great-circle distance in km, as sql/search_macros.sql's great_circle_km computes it (the same
 * haversine, the same sphere): the page's distances, from the coordinates its rows carry.
 */
export function greatCircleKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const h = Math.sin(radians(lat2 - lat1) / 2) ** 2 + Math.cos(radians(lat1)) * Math.cos(radians(lat2)) * Math.sin(radians(lng2 - lng1) / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The haversine term at which the great-circle distance is `radiusKm` (sql/search_filters.sql geo). */
export function haversineAt(radiusKm: number): number {
  const half = radiusKm / (2 * EARTH_RADIUS_KM);
  return half >= Math.PI / 2 ? 1 : Math.sin(half) ** 2;
}

/** Bit i for CATEGORY_SLUGS[i], as sql/search_db_events.sql computes category_bits. */
export function categoryBits(slugs: readonly string[]): bigint {
  let bits = 0n;
  for (const s of slugs) {
    const i = CATEGORY_SLUGS.indexOf(s as (typeof CATEGORY_SLUGS)[number]);
    if (i >= 0) bits |= 1n << BigInt(i);
  }
  return bits;
}

export interface PageRow {
  readonly rid: number;
  readonly id: string;
  readonly distanceKm: number | null;
  /** Its start_ms, when the full search returned it (the key of a next cursor). */
  readonly startMs?: number;
}

export interface SearchPage {
  readonly total: number;
  /** min(end_ms) over all matches, or null when nothing matched. */
  readonly firstEndMs: number | null;
  readonly rows: readonly PageRow[];
  /** When q found nothing: q with each word no event matches replaced by the snapshot's nearest word, if that finds events; else null. */
  readonly suggestion: string | null;
  /** A keyset page: matches after its cursor's key (more than its rows: there is a next page). */
  readonly remaining?: number;
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

/**
 * The least string above every string that starts with `prefix`, in DuckDB's order (UTF-8 bytes,
 * which is code point order): the prefix with its last code point incremented. A q word's events
 * are the word table's rows in [word, successor(word)).
 */
export function successor(prefix: string): string {
  const points = [...prefix];
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    let next = last + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return points.join('') + String.fromCodePoint(next);
  }
  // A prefix of nothing but U+10FFFF, which folding never yields: bounded by one more of it.
  return `${prefix}\u{10FFFF}`;
}

/**
 * A statement's rows: run() materializes the result in one trip to DuckDB's thread, and its chunks
 * are then read synchronously (runAndReadAll fetches each chunk with another trip).
 */
async function rowsOf(st: DuckDBPreparedStatement): Promise<DuckDBValue[][]> {
  const result = await st.run();
  if (result.chunkCount === 1) return result.getChunk(0).getRows();
  const rows: DuckDBValue[][] = [];
  for (let i = 0; i < result.chunkCount; i++) for (const row of result.getChunk(i).getRows()) rows.push(row);
  return rows;
}

/** Statements kept per connection: every combination a client actually uses, least recent dropped. */
const MAX_STATEMENTS = 256;

/** A search's statement shape and its parameter values, named as sql/search_filters.sql names them. */
interface BoundSearch {
  readonly query: SearchQuery;
  readonly excluded: readonly string[];
  readonly nowMs: number;
  readonly shape: Shape;
  readonly values: Record<string, DuckDBValue>;
  readonly types: Record<string, DuckDBType>;
}

/** Each city's latitude band by city_key (sql/search_city_bands.sql). */
export type CityBands = ReadonlyMap<string, { readonly latLo: number; readonly latHi: number }>;

function bindSearch(q: SearchQuery, excluded: readonly string[], nowMs: number, bands: CityBands): BoundSearch {
  const excludedBits = categoryBits(excluded);
  const shape: Shape = {
    geo: q.geo !== null,
    cities: q.cities?.length ?? 0,
    ages: q.ages !== null,
    categories: q.categories !== null,
    excluded: excludedBits !== 0n,
    isFree: q.isFree !== null,
    words: q.words?.map((w) => w.prefixes.length) ?? [],
    wordTable: q.geo === null && q.cities === null,
    byDistance: q.sort === 'distance' && q.geo !== null,
    ...(q.after ? { after: true } : {}),
  };
  const range =
    q.range === 'upcoming' ? { fromMs: nowMs, toMs: FOREVER_MS } : q.range.fromNow ? { fromMs: Math.max(q.range.fromMs, nowMs), toMs: q.range.toMs } : q.range;
  const values: Record<string, DuckDBValue> = { from_ms: BigInt(Math.trunc(range.fromMs)), to_ms: BigInt(Math.trunc(range.toMs)) };
  const types: Record<string, DuckDBType> = { from_ms: BIGINT, to_ms: BIGINT };
  const set = (name: string, value: DuckDBValue, type: DuckDBType): void => {
    values[name] = value;
    types[name] = type;
  };
  if (q.geo) {
    const box = boundingBox(q.geo.lat, q.geo.lng, q.geo.radiusKm);
    set('lat', q.geo.lat, DOUBLE);
    set('lng', q.geo.lng, DOUBLE);
    set('cos_lat', Math.cos(radians(q.geo.lat)), DOUBLE);
    set('hav_max', haversineAt(q.geo.radiusKm), DOUBLE);
    set('lat_lo', box.latLo, DOUBLE);
    set('lat_hi', box.latHi, DOUBLE);
    set('lng_lo', box.lngLo, DOUBLE);
    set('lng_hi', box.lngHi, DOUBLE);
  }
  if (q.cities) {
    q.cities.forEach((c, i) => set(`city_${i + 1}`, c, VARCHAR));
    // A city no event is in adds nothing; with none found the band is empty, as is the answer.
    let latLo = Infinity;
    let latHi = -Infinity;
    for (const c of q.cities) {
      const band = bands.get(c);
      if (band === undefined) continue;
      latLo = Math.min(latLo, band.latLo);
      latHi = Math.max(latHi, band.latHi);
    }
    set('city_lat_lo', latLo === Infinity ? 1 : latLo, DOUBLE);
    set('city_lat_hi', latHi === -Infinity ? 0 : latHi, DOUBLE);
  }
  if (q.ages) {
    set('age_lo', q.ages.loMonths, INTEGER);
    set('age_hi', q.ages.hiMonths, INTEGER);
  }
  if (q.categories) set('category_bits', categoryBits(q.categories), BIGINT);
  if (shape.excluded) set('excluded_bits', excludedBits, BIGINT);
  if (q.isFree !== null) set('is_free', q.isFree, BOOLEAN);
  if (q.after) {
    set('after_start', BigInt(q.after.startMs), BIGINT);
    set('after_id', q.after.id, VARCHAR);
  }
  q.words?.forEach((w, i) =>
    w.prefixes.forEach((p, j) => {
      const name = `word_${i + 1}_${j + 1}`;
      if (shape.wordTable) {
        set(name, p, VARCHAR);
        set(`${name}_next`, successor(p), VARCHAR);
      } else set(name, ` ${p}`, VARCHAR);
    }),
  );
  return { query: q, excluded, nowMs, shape, values, types };
}

/** A search's values for its total-only twin (sql/search_count.sql), which counts every match, so never binds a cursor's key. */
function countValues(b: BoundSearch): [Record<string, DuckDBValue>, Record<string, DuckDBType>] {
  if (!b.shape.after) return [b.values, b.types];
  const values = { ...b.values };
  const types = { ...b.types };
  for (const name of ['after_start', 'after_id']) {
    delete values[name];
    delete types[name];
  }
  return [values, types];
}

/** A parameter of branch k of a batch: its own name, made apart from the other branches'. */
const branchParam = (name: string, k: number): string => `${name}_b${k}`;

/**
 * The statement of a batch: branch k is searchSql(shapes[k]) with every parameter renamed
 * branchParam(name, k), its rows led by k. Only our own fragments are renamed: no request value is
 * in the text.
 */
export function batchSql(shapes: readonly Shape[]): string {
  return shapes
    .map(
      (shape, k) => `SELECT ${k} AS branch, * FROM (\n${searchSql(shape).replace(/\$([a-z][a-z0-9_]*)/g, (_, name: string) => `$${branchParam(name, k)}`)}\n)`,
    )
    .join('\nUNION ALL\n');
}

/** A search's row as sql/search.sql returns it. */
const ROW = { total: 0, firstEnd: 1, rid: 2, lat: 3, lng: 4, hav: 5, ord: 6, startMs: 7, remaining: 8 } as const;

/** A branch's rows in its statement's order: by distance (hav) first when it sorts by distance, then by ord. */
function inBranchOrder(rows: DuckDBValue[][], byDistance: boolean): DuckDBValue[][] {
  const ord = (r: DuckDBValue[]): number => Number(r[ROW.ord]);
  const hav = (r: DuckDBValue[]): number => r[ROW.hav] as number;
  return rows.sort((a, b) => (byDistance && hav(a) !== hav(b) ? hav(a) - hav(b) : ord(a) - ord(b)));
}

export class SnapshotDb {
  private readonly statements = new Map<string, Promise<DuckDBPreparedStatement>>();
  private readonly excludedByBits = new Map<bigint, Promise<Uint8Array>>();
  private lookup: Promise<DuckDBPreparedStatement> | null = null;
  private suggestions: { known: Promise<DuckDBPreparedStatement>; closest: Promise<DuckDBPreparedStatement> } | null = null;
  private goneIndex: GoneIndex | null = null;
  /** The removals in change-feed order, read on the first change-feed page. */
  private tombstones: Tombstones | null = null;
  /** Postings of the broad prefixes and cities (query/broad.ts); null for a database built without them. */
  private broad: BroadIndex | null = null;

  readonly ref: SnapshotRef;
  private readonly instance: DuckDBInstance;
  private readonly conn: DuckDBConnection;
  private readonly bands: CityBands;
  readonly records: RecordStore;
  /** The records' own CSV cells, rendered at build time; null for a snapshot built before they were stored. */
  readonly csvRecords: RecordStore | null;
  private constructor(
    ref: SnapshotRef,
    instance: DuckDBInstance,
    conn: DuckDBConnection,
    bands: CityBands,
    records: RecordStore,
    csvRecords: RecordStore | null,
  ) {
    this.ref = ref;
    this.instance = instance;
    this.conn = conn;
    this.bands = bands;
    this.records = records;
    this.csvRecords = csvRecords;
  }

  static async open(ref: SnapshotRef): Promise<SnapshotDb> {
    // One DuckDB thread: the pool's workers are the parallelism, one query each. Read-only, so
    // every worker of the process opens the same file (and a query can never write to it).
    const instance = await DuckDBInstance.create(path.join(ref.dir, SEARCH_DB), { access_mode: 'READ_ONLY', threads: '1' });
    const conn = await instance.connect();
    try {
      await conn.run(sqlFile('search_macros'));
      const bands = new Map<string, { latLo: number; latHi: number }>();
      for (const [city, latLo, latHi] of (await conn.runAndReadAll(sqlFile('search_city_bands'))).getRows())
        bands.set(city as string, { latLo: latLo as number, latHi: latHi as number });
      const records = new RecordStore(path.join(ref.dir, RECORDS_FILE), path.join(ref.dir, RECORDS_INDEX));
      const csvIndex = path.join(ref.dir, RECORDS_CSV_INDEX);
      const csvRecords = existsSync(csvIndex) ? new RecordStore(path.join(ref.dir, RECORDS_CSV), csvIndex) : null;
      const db = new SnapshotDb(ref, instance, conn, bands, records, csvRecords);
      db.broad = await BroadIndex.open(conn);
      return db;
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

  private statement(shape: Shape, kind: 'page' | 'count' | 'changes'): Promise<DuckDBPreparedStatement> {
    const key = `${kind} ${JSON.stringify(shape)}`;
    let st = this.statements.get(key);
    if (st === undefined) {
      st = this.conn.prepare(kind === 'changes' ? changesSql(shape) : searchSql(shape, kind === 'count'));
      st.catch(() => this.statements.delete(key));
    } else {
      this.statements.delete(key);
    }
    this.statements.set(key, st);
    if (this.statements.size > MAX_STATEMENTS) {
      const [oldest, doomed] = this.statements.entries().next().value as [string, Promise<DuckDBPreparedStatement>];
      this.statements.delete(oldest);
      void doomed.then(
        (d) => d.destroySync(),
        () => undefined,
      );
    }
    return st;
  }

  /**
   * A page of the change feed (query/changes.ts): the records after the cursor that match the
   * search's filters, or changed since its horizon and do not (as deletions), merged with the
   * snapshot's removals; cut after `cut` records when the quota says so.
   */
  async changes(q: SearchQuery, excluded: readonly string[], cursor: ChangesCursor, cut: number | null): Promise<ChangesPage> {
    const b = bindSearch(q, excluded, 0, this.bands);
    const statement = await this.statement(b.shape, 'changes');
    statement.bind(
      {
        ...b.values,
        after_ms: BigInt(cursor.afterMs),
        after_id: cursor.afterId,
        horizon_ms: BigInt(cursor.horizonMs),
        limit: q.limit,
      },
      { ...b.types, after_ms: BIGINT, after_id: VARCHAR, horizon_ms: BIGINT, limit: INTEGER },
    );
    const rows = await rowsOf(statement);
    const live: ChangeEntry[] = rows.map((r) => ({ ms: r[3] as number, id: r[2] as string, rid: r[4] === true ? Number(r[1]) : null }));
    const liveTotal = rows[0] === undefined ? 0 : Number(rows[0][0]);
    this.tombstones ??= Tombstones.read(this.ref.dir);
    return mergePage(cursor, live, liveTotal, this.tombstones.after(cursor, q.limit), q.limit, cut);
  }

  /** The events earlier snapshots served and this one does not, opened on the first miss by id. */
  get gone(): GoneIndex {
    return (this.goneIndex ??= GoneIndex.open(this.ref.dir));
  }

  /** One event's row number by id, and whether it falls in the excluded categories; null when absent. */
  async byId(id: string, excluded: readonly string[]): Promise<{ readonly rid: number; readonly excluded: boolean } | null> {
    this.lookup ??= this.conn.prepare(sqlFile('event_by_id'));
    const st = await this.lookup;
    st.bind({ id, excluded_bits: categoryBits(excluded) }, { id: VARCHAR, excluded_bits: BIGINT });
    const row = (await rowsOf(st))[0];
    return row === undefined ? null : { rid: Number(row[0]), excluded: row[1] === true };
  }

  async page(q: SearchQuery, excluded: readonly string[], nowMs: number): Promise<SearchPage> {
    const b = bindSearch(q, excluded, nowMs, this.bands);
    return (await this.broadPage(b)) ?? this.fullPage(b);
  }

  /**
   * Several searches in one statement: each one's sql/search.sql as a branch of a UNION ALL, its
   * parameters renamed apart, its rows tagged with its position. DuckDB binds and plans every
   * execution again, which is most of a search's cost on a snapshot of this size, so one statement
   * for K searches costs much less than K. Each page is exactly what page() returns for it alone:
   * the branch is the same text, and its rows are put back in the branch's own order (ord, or
   * distance then ord) because a UNION ALL does not promise to keep it.
   */
  async pages(searches: readonly { readonly query: SearchQuery; readonly excluded: readonly string[]; readonly nowMs: number }[]): Promise<SearchPage[]> {
    const bound = searches.map((s) => bindSearch(s.query, s.excluded, s.nowMs, this.bands));
    // The broad ones each from their postings, one after another; the rest batched as below.
    const broad: (SearchPage | null)[] = [];
    for (const b of bound) broad.push(await this.broadPage(b));
    const rest = bound.filter((_, i) => broad[i] === null);
    const restPages = rest.length === 0 ? [] : rest.length === 1 ? [await this.fullPage(rest[0] as BoundSearch)] : await this.batchPages(rest);
    let k = 0;
    return broad.map((p) => p ?? (restPages[k++] as SearchPage));
  }

  /** A broad search's page from its postings (query/broad.ts), or null when the full search must answer. */
  private async broadPage(b: BoundSearch): Promise<SearchPage | null> {
    const a = await this.broad?.answer(b.query, b.shape, b.values, b.types);
    if (!a) return null;
    return {
      total: a.total,
      firstEndMs: a.firstEndMs,
      suggestion: null,
      rows: a.rids.map((rid, i) => ({ rid, id: this.records.idOf(rid), distanceKm: null, startMs: a.starts[i] as number })),
    };
  }

  /** A search's page from its own statement (sql/search.sql). */
  private async fullPage(b: BoundSearch): Promise<SearchPage> {
    const statement = await this.statement(b.shape, 'page');
    statement.bind({ ...b.values, limit: b.query.limit, offset: b.query.offset }, { ...b.types, limit: INTEGER, offset: INTEGER });
    return this.finish(b, await rowsOf(statement));
  }

  /** Two or more bound searches in one statement (pages()). */
  private async batchPages(bound: readonly BoundSearch[]): Promise<SearchPage[]> {
    const values: Record<string, DuckDBValue> = {};
    const types: Record<string, DuckDBType> = {};
    bound.forEach((b, k) => {
      const tag = (name: string): string => branchParam(name, k);
      for (const [name, value] of Object.entries(b.values)) {
        values[tag(name)] = value;
        types[tag(name)] = b.types[name] as DuckDBType;
      }
      values[tag('limit')] = b.query.limit;
      types[tag('limit')] = INTEGER;
      values[tag('offset')] = b.query.offset;
      types[tag('offset')] = INTEGER;
    });
    // Not kept: combinations of shapes rarely recur, and preparing is only parsing (every
    // execution is bound and planned again anyway).
    const statement = await this.conn.prepare(batchSql(bound.map((b) => b.shape)));
    try {
      statement.bind(values, types);
      const byBranch: DuckDBValue[][][] = bound.map(() => []);
      for (const row of await rowsOf(statement)) byBranch[Number(row[0])]?.push(row.slice(1));
      // One at a time: a page past the last match is counted, and a missed word suggested, by a
      // statement kept per shape, which two branches of one shape would otherwise bind over each
      // other (each then read the other's total: three past-the-end circles on 1M events gave
      // 0, 0 and 6741 alone, 6741 three times batched).
      const out: SearchPage[] = [];
      for (const [k, b] of bound.entries()) out.push(await this.finish(b, inBranchOrder(byBranch[k] as DuckDBValue[][], b.shape.byDistance)));
      return out;
    } finally {
      statement.destroySync();
    }
  }

  /** A search's page from its rows (sql/search.sql's columns: ROW), counting apart when the page is past the last match. */
  private async finish(b: BoundSearch, rows: readonly DuckDBValue[][]): Promise<SearchPage> {
    let stats = rows[0];
    if (stats === undefined && (b.query.offset > 0 || b.query.after)) {
      // Past the last match: no row carries the total, so count without the page parameters.
      const counting = await this.statement(b.shape, 'count');
      counting.bind(...countValues(b));
      stats = (await rowsOf(counting))[0];
    }
    const firstEnd = stats?.[ROW.firstEnd];
    const total = stats ? Number(stats[ROW.total]) : 0;
    const remaining = rows[0]?.[ROW.remaining];
    const geo = b.query.geo;
    return {
      total,
      suggestion: total === 0 && b.query.words !== null ? await this.suggest(b) : null,
      firstEndMs: typeof firstEnd === 'number' ? firstEnd : null,
      ...(b.query.after ? { remaining: remaining === undefined || remaining === null ? 0 : Number(remaining) } : {}),
      rows: rows.map((r) => {
        const rid = Number(r[ROW.rid]);
        const distanceKm = geo === null ? null : greatCircleKm(geo.lat, geo.lng, r[ROW.lat] as number, r[ROW.lng] as number);
        return { rid, id: this.records.idOf(rid), distanceKm, startMs: Number(r[ROW.startMs]) };
      }),
    };
  }

  /**
   * "Did you mean": each word of q that matches no term of any event, replaced by the vocabulary's
   * nearest word (within one edit for words of up to four letters, two beyond); offered only when
   * some word was replaced and the search with the replacements finds events (same filters).
   */
  private async suggest(b: BoundSearch): Promise<string | null> {
    const words = b.query.words as readonly QueryWord[];
    const st = (this.suggestions ??= {
      known: this.conn.prepare(SUGGEST.get('known') as string),
      closest: this.conn.prepare(SUGGEST.get('closest') as string),
    });
    const known = await st.known;
    const closest = await st.closest;
    let replaced = false;
    const out: string[] = [];
    for (const w of words) {
      let found = false;
      for (const p of w.prefixes) {
        known.bind({ word: p, word_next: successor(p) }, { word: VARCHAR, word_next: VARCHAR });
        if ((await rowsOf(known))[0]?.[0] === true) {
          found = true;
          break;
        }
      }
      if (found) {
        out.push(w.word);
        continue;
      }
      closest.bind({ word: w.word, len: [...w.word].length, max: w.word.length <= 4 ? 1 : 2 }, { word: VARCHAR, len: INTEGER, max: INTEGER });
      const near = (await rowsOf(closest))[0]?.[0];
      if (typeof near !== 'string') return null;
      out.push(near);
      replaced = true;
    }
    if (!replaced) return null;
    const retry = bindSearch({ ...b.query, words: queryForms(out) }, b.excluded, b.nowMs, this.bands);
    const counting = await this.statement(retry.shape, 'count');
    counting.bind(...countValues(retry));
    const n = (await rowsOf(counting))[0]?.[0];
    return n !== undefined && Number(n) > 0 ? out.join(' ') : null;
  }

  /**
   * The row numbers (rids) of the events in any of `excluded`, as a flag per row: what a plan's
   * whole-snapshot export leaves out (sql/export_excluded.sql). Kept per set of categories, as
   * the snapshot never changes: an export starts streaming without a scan (a few plans, a byte a row each).
   */
  excludedRows(excluded: readonly string[]): Promise<Uint8Array> {
    const bits = categoryBits(excluded);
    let flags = this.excludedByBits.get(bits);
    if (flags === undefined) {
      flags = this.scanExcluded(bits);
      this.excludedByBits.set(bits, flags);
      // A failed scan is not kept: the next export asks again.
      flags.catch(() => this.excludedByBits.delete(bits));
    }
    return flags;
  }

  private async scanExcluded(bits: bigint): Promise<Uint8Array> {
    const flags = new Uint8Array(this.records.count);
    if (bits === 0n) return flags;
    const st = await this.conn.prepare(sqlFile('export_excluded'));
    try {
      st.bind({ excluded_bits: bits }, { excluded_bits: BIGINT });
      for (const [rid] of await rowsOf(st)) flags[Number(rid)] = 1;
    } finally {
      st.destroySync();
    }
    return flags;
  }

  close(): void {
    this.broad?.close();
    this.records.close();
    this.csvRecords?.close();
    this.goneIndex?.close();
    for (const st of this.statements.values())
      void st.then(
        (d) => d.destroySync(),
        () => undefined,
      );
    for (const st of [this.lookup, this.suggestions?.known, this.suggestions?.closest])
      void st?.then(
        (d) => d.destroySync(),
        () => undefined,
      );
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
