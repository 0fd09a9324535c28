// The shared ledger's schema: sql/postgres/NNNN_*.sql, applied once, in order, under an advisory
// lock, however many nodes start together.
import type { DatabaseSettings } from '../../core/config.ts';
import { sqlFile, sqlFileNames } from '../../core/sql.ts';
import { openClient } from './db.ts';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** A migration as its file is named, without .sql: 0001_ledger. */
export const migrationLabel = (m: { readonly version: number; readonly name: string }): string => `${String(m.version).padStart(4, '0')}_${m.name}`;

/** sql/postgres/NNNN_name.sql, in order. */
export function migrations(): Migration[] {
  return sqlFileNames('postgres')
    .flatMap((f) => {
      const m = /^(\d{4})_([a-z0-9_]+)$/.exec(f);
      return m ? [{ version: Number(m[1]), name: m[2]!, sql: sqlFile(`postgres/${f}`) }] : [];
    })
    .sort((a, b) => a.version - b.version);
}

// Any fixed 64-bit number, the same on every node: it names "the schema is being migrated".
const MIGRATION_LOCK = 0x66616d696c79n;

/**
 * Brings the database's schema up to the newest file, each migration in its own transaction with
 * its row in schema_migrations. Several nodes starting at once wait on the advisory lock, and each
 * then finds nothing left to apply. Returns the versions this call applied.
 */
export async function migrate(s: DatabaseSettings, application = 'family-events migrate'): Promise<number[]> {
  const client = openClient(s, application);
  await client.connect();
  try {
    // Session-level and held across the transactions; a dying session releases it.
    await client.query({ text: 'SELECT pg_advisory_lock($1)', values: [MIGRATION_LOCK.toString()] });
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of migrations()) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query({ text: 'INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', values: [m.version, m.name] });
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${m.version}_${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.version);
    }
    await client.query({ text: 'SELECT pg_advisory_unlock($1)', values: [MIGRATION_LOCK.toString()] });
    return applied;
  } finally {
    await client.end().catch(() => undefined);
  }
}
