// The snapshot's search database, search.duckdb: the filter columns and the word table that query
// workers search (sql/search_db_events.sql, sql/search_db_words.sql), built once from the
// snapshot's Parquet. Every query worker opens the same file read-only, so the process holds the
// snapshot's search data once on disk and in the page cache, compressed, instead of one in-memory
// copy per worker.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, LIST, VARCHAR, listValue } from '@duckdb/node-api';
import { CATEGORY_SLUGS } from '../core/taxonomy.ts';
import { pathLiteral, sqlFile } from '../core/sql.ts';
import { BROAD_DEFAULTS, writeBroadTables, type BroadOptions } from './search-broad.ts';

export const SEARCH_DB = 'search.duckdb';

/**
 * Writes `dir`/search.duckdb from `parquet`; its WAL is checkpointed into the file before it closes.
 * `broad`: the broad searches' postings (snapshot/search-broad.ts), or null for none.
 */
export async function writeSearchDb(parquet: string, dir: string, broad: BroadOptions | null = BROAD_DEFAULTS): Promise<void> {
  const file = path.join(dir, SEARCH_DB);
  await rm(file, { force: true });
  const db = await DuckDBInstance.create(file, { threads: '2' });
  const conn = await db.connect();
  try {
    const fill = (name: string): string => sqlFile(name).replaceAll('{{parquet}}', pathLiteral(parquet));
    const events = await conn.prepare(fill('search_db_events'));
    events.bind({ slugs: listValue([...CATEGORY_SLUGS]) }, { slugs: LIST(VARCHAR) });
    await events.run();
    events.destroySync();
    await conn.run(fill('search_db_words'));
    if (broad !== null) await writeBroadTables(conn, broad);
    await conn.run('CHECKPOINT');
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}
