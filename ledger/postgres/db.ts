// The shared ledger's connection to PostgreSQL (DATABASE_URL): a bounded pool whose every statement
// times out, the schema migrations (sql/postgres/NNNN_*.sql) applied once under an advisory lock,
// and the statements of sql/postgres/*_queries.sql, written with the same $name parameters as the
// embedded ledger's file and turned into PostgreSQL's $1, $2… here.
import pg from 'pg';
import type { DatabaseSettings } from '../../core/config.ts';
import { sqlFile, sqlFileNames, sqlSections } from '../../core/sql.ts';

/** The channel every change that other nodes must see is announced on (payload: its kind). */
export const CHANGES_CHANNEL = 'family_events_ledger';
export type ChangeKind = 'accounts' | 'snapshot';

// Instants come back as the ISO 8601 strings the embedded ledger stores, days as YYYY-MM-DD, and
// counts as numbers (a month's records fit a double exactly): one row shape for both backends.
const TIMESTAMPTZ = 1184;
const DATE = 1082;
const INT8 = 20;
const NUMERIC = 1700;
const types = {
  getTypeParser(oid: number, format?: string): (value: string) => unknown {
    if (oid === TIMESTAMPTZ) return (s) => new Date(s).toISOString();
    if (oid === DATE) return (s) => s;
    if (oid === INT8 || oid === NUMERIC) return (s) => Number(s);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export function connectionOptions(s: DatabaseSettings, application: string): pg.PoolConfig {
  return {
    connectionString: s.url,
    application_name: application,
    statement_timeout: s.statementTimeoutMs,
    // A client that cannot reach the server gives up rather than queue requests behind it.
    connectionTimeoutMillis: Math.min(5000, s.statementTimeoutMs),
    query_timeout: s.statementTimeoutMs + 1000,
    keepAlive: true,
    types,
  };
}

export function openPool(s: DatabaseSettings, application: string): pg.Pool {
  const pool = new pg.Pool({ ...connectionOptions(s, application), max: s.poolMax, idleTimeoutMillis: 30_000 });
  // An idle client whose server went away errors here; the pool drops it and makes a new one.
  pool.on('error', () => undefined);
  // A checked-out client's connection can die too (a restart ends every session): its query in
  // flight rejects, and the 'error' event must not end the process as an unhandled one.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** A single client outside the pool (the listener for changes). */
export function openClient(s: DatabaseSettings, application: string): pg.Client {
  const client = new pg.Client(connectionOptions(s, application));
  // As for pooled clients: the command in flight rejects; the event must not be unhandled.
  client.on('error', () => undefined);
  return client;
}

/** sql/postgres/*_queries.sql split at their "-- query: NAME" headers, with $name → $n. */
interface Compiled {
  readonly text: string;
  readonly names: readonly string[];
}
let queries: ReadonlyMap<string, Compiled> | null = null;

function compile(sql: string): Compiled {
  const names: string[] = [];
  const text = sql.replace(/\$([a-z_]+)/g, (_, name: string) => {
    let i = names.indexOf(name);
    if (i < 0) i = names.push(name) - 1;
    return `$${i + 1}`;
  });
  return { text, names };
}

function pgQueries(): ReadonlyMap<string, Compiled> {
  if (queries) return queries;
  const out = new Map<string, Compiled>();
  for (const file of sqlFileNames('postgres').filter((f) => f.endsWith('_queries'))) {
    for (const [name, text] of sqlSections(`postgres/${file}`, 'query')) {
      if (out.has(name)) throw new Error(`sql/postgres: query ${name} is defined twice`);
      out.set(name, compile(text));
    }
  }
  return (queries = out);
}

export const pgQueryNames = (): string[] => [...pgQueries().keys()];

/** The named statement of sql/postgres/*_queries.sql with its parameters in order. */
export function pgQuery(name: string, params: Readonly<Record<string, unknown>> = {}): pg.QueryConfig {
  const q = pgQueries().get(name);
  if (q === undefined) throw new Error(`sql/postgres/ledger_queries.sql has no query ${name}`);
  const values = q.names.map((n) => {
    if (!(n in params)) throw new Error(`query ${name} needs parameter $${n}`);
    return params[n];
  });
  // A named statement is parsed once per connection and reused.
  return { name: `fe_${name}`, text: q.text, values };
}

export type Queryable = Pick<pg.Pool | pg.PoolClient | pg.Client, 'query'>;

export async function rows<T>(db: Queryable, name: string, params: Readonly<Record<string, unknown>> = {}): Promise<T[]> {
  return (await db.query(pgQuery(name, params))).rows as T[];
}

export async function one<T>(db: Queryable, name: string, params: Readonly<Record<string, unknown>> = {}): Promise<T | undefined> {
  return (await db.query(pgQuery(name, params))).rows[0] as T | undefined;
}

/**
 * Runs `fn` in one transaction on one pooled client; rolls back on any error. `begin` may ask for
 * more than READ COMMITTED (reads that must agree: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY').
 */
export async function transaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Announces a change to every node, inside the caller's transaction (delivered at its commit). */
export async function announce(db: Queryable, kind: ChangeKind): Promise<void> {
  await db.query({ name: 'fe_announce', text: 'SELECT pg_notify($1, $2)', values: [CHANGES_CHANNEL, kind] });
}

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

// Another fixed number: "a node is building the first snapshot of an empty shared volume".
const FIRST_BUILD_LOCK = 0x66616d6c7931n;

/**
 * Runs `build` while holding the cluster's first-build lock, so that nodes started together on an
 * empty shared volume build one snapshot between them: the others wait, then find it (`build`
 * checks again), however long that build takes. Session-level: a builder that dies releases it.
 * Null when PostgreSQL cannot be reached: the caller builds without it (a node alone finds nothing
 * to race).
 */
export async function withFirstBuildLock<T>(s: DatabaseSettings, build: () => Promise<T>): Promise<{ readonly value: T } | null> {
  // The wait lasts as long as the other node's build, which the statement timeout (and the
  // client's query timeout beside it) is not sized for: a day instead.
  const client = openClient({ ...s, statementTimeoutMs: 24 * 3_600_000 }, 'family-events first snapshot');
  try {
    await client.connect();
    await client.query({ text: 'SELECT pg_advisory_lock($1)', values: [FIRST_BUILD_LOCK.toString()] });
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
  try {
    return { value: await build() };
  } finally {
    // Ending the session releases the lock.
    await client.end().catch(() => undefined);
  }
}

/**
 * Makes `snapshotId` the one every node serves: recorded in the shared ledger and announced, after
 * the builder has published it to the shared snapshot directory. `onlyIfNone`: unless the ledger
 * names one already (the first snapshot of a new cluster).
 */
export async function recordSnapshot(s: DatabaseSettings, snapshotId: string, o: { onlyIfNone?: boolean } = {}): Promise<void> {
  await migrate(s);
  const client = openClient(s, 'family-events snapshot');
  await client.connect();
  try {
    await client.query('BEGIN');
    const set = await client.query(pgQuery(o.onlyIfNone ? 'current_snapshot_first' : 'current_snapshot_set', { snapshot_id: snapshotId }));
    if (!o.onlyIfNone || set.rowCount === 1) await announce(client, 'snapshot');
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => undefined);
  }
}
