// The broad searches' postings in search.duckdb (sql/search_db_broad.sql, read by query/broad.ts):
// written after the events and words tables, from them, in the same connection.
import { BIGINT, INTEGER, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { queryForms } from '../core/stem.ts';
import { sqlFile, sqlSections } from '../core/sql.ts';

export interface BroadOptions {
  /** The fewest events a prefix or city must match to get postings; below it the full search is cheap enough. */
  readonly minEvents: number;
  /** The most word-table rows the chosen prefixes' terms may hold, as a multiple of the events: the broadest prefixes first, until it is spent. */
  readonly budgetPerEvent: number;
}

/**
 * At 1M events the full search costs ~0.6 µs per match: 20,000 matches is ~12 ms, which a search
 * may spend. A budget of 40 word-table rows per event holds, on the synthetic 1M set, the 240
 * broadest prefixes (down to ~43k events each, 25M postings) for ~25 s more build.
 */
export const BROAD_DEFAULTS: BroadOptions = { minEvents: 20_000, budgetPerEvent: 40 };

const PAIRS = sqlSections('search_db_broad_pairs', 'query');

export async function writeBroadTables(conn: DuckDBConnection, opts: BroadOptions = BROAD_DEFAULTS): Promise<void> {
  const events = Number((await conn.runAndReadAll('SELECT count(*) FROM events')).getRows()[0]?.[0] ?? 0);
  // The file is several statements, which one prepared statement cannot hold: its two values go
  // in as variables.
  for (const [name, value] of [
    ['broad_min_events', opts.minEvents],
    ['broad_budget', Math.round(opts.budgetPerEvent * events)],
  ] as const) {
    const st = await conn.prepare(`SET VARIABLE ${name} = $value`);
    st.bind({ value: BigInt(value) }, { value: BIGINT });
    await st.run();
    st.destroySync();
  }
  await conn.run(sqlFile('search_db_broad'));
  await writePairs(conn);
}

/**
 * A typed word whose stem is not a prefix of it ("library": "library" and "librari") is matched by
 * two prefixes, whose events are the union of two keys'. Where one key's events hold the other's
 * (an event that says "library" has the term "librari" too), checked event by event here, the word
 * is answered by the larger key: broad_keys gets a 'pair' row "p1 p2" for it.
 */
async function writePairs(conn: DuckDBConnection): Promise<void> {
  const keys = new Map<string, number>();
  for (const [key, id] of (await conn.runAndReadAll("SELECT key, key_id FROM broad_keys WHERE kind = 'word'")).getRows()) keys.set(String(key), Number(id));
  const pairs = new Map<string, [number, number]>();
  for (const [word] of (await conn.runAndReadAll('SELECT word FROM vocabulary')).getRows()) {
    const w = String(word);
    for (let l = 3; l <= w.length; l++) {
      const prefixes = queryForms([w.slice(0, l)])[0]?.prefixes ?? [];
      if (prefixes.length !== 2) continue;
      const a = keys.get(prefixes[0] as string);
      const b = keys.get(prefixes[1] as string);
      if (a !== undefined && b !== undefined) pairs.set(prefixes.join(' '), [a, b]);
    }
  }
  const outside = await conn.prepare(PAIRS.get('outside') as string);
  const insert = await conn.prepare(PAIRS.get('insert') as string);
  const verdicts = new Map<string, number | null>();
  // Whether key `a`'s events are all in key `b`'s (key 0 holds every event).
  const within = async (a: number, b: number): Promise<boolean> => {
    if (b === 0 || a === b) return true;
    outside.bind({ a, b }, { a: INTEGER, b: INTEGER });
    return Number((await outside.runAndReadAll()).getRows()[0]?.[0]) === 0;
  };
  try {
    for (const [key, [a, b]] of pairs) {
      const id = `${a} ${b}`;
      let union = verdicts.get(id);
      if (union === undefined) {
        union = (await within(a, b)) ? b : (await within(b, a)) ? a : null;
        verdicts.set(id, union);
      }
      if (union === null) continue;
      insert.bind({ key, key_id: union }, { key: VARCHAR, key_id: INTEGER });
      await insert.run();
    }
  } finally {
    outside.destroySync();
    insert.destroySync();
  }
}
