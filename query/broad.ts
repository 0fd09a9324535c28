// Broad searches from their postings (sql/search_db_broad.sql, sql/search_broad.sql): a search whose
// only text or place filter is one q prefix or one city that matches many events. The full search
// (sql/search.sql) counts every match for its total, ~500k rows for a prefix such as "synth" at 1M
// events; here the total is the key's precomputed counts for the cells the filters keep, less the
// events that have ended by the query's time, and the page is the first matching postings in
// order. The answer is exactly the full search's; anything else (a place, two words, a word of
// several prefixes, a page too deep, no match) is left to it.
import { BIGINT, INTEGER, type DuckDBConnection, type DuckDBPreparedStatement, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { sqlSections } from '../core/sql.ts';
import type { SearchQuery } from './protocol.ts';
import type { Shape } from './db.ts';

const QUERIES = sqlSections('search_broad', 'query');
const FRAGMENTS = sqlSections('search_filters', 'fragment');
/** What the full search binds for "no end bound" (query/db.ts FOREVER_MS). */
const FOREVER_MS = BigInt(Number.MAX_SAFE_INTEGER);
const DAY_MS = 86_400_000n;
const floorDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));
/** Rows a page may read from the postings (offset + limit): deeper pages are the full search's. */
export const MAX_BROAD_ROWS = 1000;

/** The filters the postings carry, and the full search's parameters each one needs. */
const CHEAP: readonly { readonly on: (s: Shape) => boolean; readonly fragment: string; readonly params: readonly string[] }[] = [
  { on: (s) => s.ages, fragment: 'ages', params: ['age_lo', 'age_hi'] },
  { on: (s) => s.categories, fragment: 'categories', params: ['category_bits'] },
  { on: (s) => s.excluded, fragment: 'excluded', params: ['excluded_bits'] },
  { on: (s) => s.isFree, fragment: 'is_free', params: ['is_free'] },
];

/** sql/search_broad.sql's query `name` with the named sql/search_filters.sql fragments in its filter slots. */
export function broadSql(name: 'page' | 'stats_open' | 'stats_bounded', filters: readonly string[]): string {
  return (QUERIES.get(name) as string).replaceAll('{{filters}}', filters.map((f) => FRAGMENTS.get(f) as string).join('\n  '));
}

/** Every filter combination the postings answer, as fragment names (for tests that prepare them all). */
export const BROAD_FILTERS: readonly string[] = CHEAP.map((c) => c.fragment);

export interface BroadAnswer {
  readonly total: number;
  readonly firstEndMs: number | null;
  readonly rids: readonly number[];
  /** Each page row's start_ms, beside its rid (a next cursor's key). */
  readonly starts: readonly number[];
}

/** The key a search is answered by, or null when the full search must answer it. */
function keyOf(q: SearchQuery, shape: Shape): { kind: 'word' | 'city' | 'pair'; key: string } | null {
  // A keyset page starts at a key, not a row count: the postings are read from their head only.
  if (shape.geo || shape.byDistance || q.after || q.offset + q.limit > MAX_BROAD_ROWS) return null;
  const words = q.words ?? [];
  const cities = q.cities ?? [];
  if (cities.length === 1 && words.length === 0) return { kind: 'city', key: cities[0] as string };
  if (cities.length === 0 && words.length === 1 && words[0]?.prefixes.length === 1) return { kind: 'word', key: words[0].prefixes[0] as string };
  // Two prefixes ("library", "librari"): a key when one's events hold the other's (broad_keys 'pair').
  if (cities.length === 0 && words.length === 1 && words[0]?.prefixes.length === 2) return { kind: 'pair', key: words[0].prefixes.join(' ') };
  return null;
}

export class BroadIndex {
  private readonly statements = new Map<string, Promise<DuckDBPreparedStatement>>();
  private readonly conn: DuckDBConnection;
  /** "word PREFIX", "pair PREFIX PREFIX" or "city KEY" → key_id. */
  private readonly keys: ReadonlyMap<string, number>;
  private constructor(conn: DuckDBConnection, keys: ReadonlyMap<string, number>) {
    this.conn = conn;
    this.keys = keys;
  }

  /** The snapshot's broad keys, or null for a search database built without postings. */
  static async open(conn: DuckDBConnection): Promise<BroadIndex | null> {
    const has = await conn.runAndReadAll(
      "SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('broad_keys', 'broad_postings', 'broad_cells') AND database_name = current_database()",
    );
    if (Number(has.getRows()[0]?.[0]) !== 3) return null;
    const keys = new Map<string, number>();
    for (const [kind, key, id] of (await conn.runAndReadAll('SELECT kind, key, key_id FROM broad_keys')).getRows())
      keys.set(`${String(kind)} ${String(key)}`, Number(id));
    return new BroadIndex(conn, keys);
  }

  get size(): number {
    return this.keys.size;
  }

  /**
   * The search's total, earliest end and page, from the full search's own parameter values
   * (query/db.ts bindSearch); null when the full search must answer (no broad key).
   */
  async answer(
    q: SearchQuery,
    shape: Shape,
    values: Readonly<Record<string, DuckDBValue>>,
    types: Readonly<Record<string, DuckDBType>>,
  ): Promise<BroadAnswer | null> {
    const k = keyOf(q, shape);
    const key = k && this.keys.get(`${k.kind} ${k.key}`);
    if (key === undefined || key === null) return null;
    const cheap = CHEAP.filter((c) => c.on(shape));
    const v: Record<string, DuckDBValue> = { key, from_ms: values.from_ms as DuckDBValue, to_ms: values.to_ms as DuckDBValue };
    const t: Record<string, DuckDBType> = { key: INTEGER, from_ms: BIGINT, to_ms: BIGINT };
    for (const c of cheap)
      for (const p of c.params) {
        v[p] = values[p] as DuckDBValue;
        t[p] = types[p] as DuckDBType;
      }
    const filters = cheap.map((c) => c.fragment);

    const page = await this.statement('page', filters);
    page.bind({ ...v, rows: q.offset + q.limit }, { ...t, rows: INTEGER });
    const rows = (await page.runAndReadAll()).getRows();
    // No match at all. The full search would then look for a suggestion, but every word of a
    // broad key starts some term, so it has none to make.
    if (rows.length === 0) return { total: 0, firstEndMs: null, rids: [], starts: [] };
    let until = rows[0]?.[2] as bigint;
    for (const r of rows) if ((r[2] as bigint) < until) until = r[2] as bigint;

    const open = v.to_ms === FOREVER_MS;
    const stats = await this.statement(open ? 'stats_open' : 'stats_bounded', filters);
    if (open) stats.bind({ ...v, until_ms: until }, { ...t, until_ms: BIGINT });
    else {
      // The UTC day of the end bound, as broad_cells.start_day counts it (integer division rounds down).
      const toDay = floorDiv(v.to_ms as bigint, DAY_MS);
      stats.bind({ ...v, until_ms: until, to_day: toDay, to_day_ms: toDay * DAY_MS }, { ...t, until_ms: BIGINT, to_day: BIGINT, to_day_ms: BIGINT });
    }
    const s = (await stats.runAndReadAll()).getRows()[0] as DuckDBValue[];
    return {
      total: Number(s[0]),
      firstEndMs: typeof s[1] === 'number' ? s[1] : null,
      rids: rows.slice(q.offset).map((r) => Number(r[0])),
      starts: rows.slice(q.offset).map((r) => Number(r[3])),
    };
  }

  private statement(name: 'page' | 'stats_open' | 'stats_bounded', filters: readonly string[]): Promise<DuckDBPreparedStatement> {
    const id = `${name} ${filters.join(' ')}`;
    let st = this.statements.get(id);
    if (st === undefined) {
      st = this.conn.prepare(broadSql(name, filters));
      st.catch(() => this.statements.delete(id));
      this.statements.set(id, st);
    }
    return st;
  }

  close(): void {
    for (const st of this.statements.values())
      void st.then(
        (d) => d.destroySync(),
        () => undefined,
      );
  }
}
