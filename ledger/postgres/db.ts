// The shared ledger's connection to PostgreSQL (DATABASE_URL): a bounded pool whose every statement
// times out, and the statements of sql/postgres/*_queries.sql, written with the same $name
// parameters as the embedded ledger's file and turned into PostgreSQL's $1, $2… here. The schema's
// migrations are migrate.ts; what the nodes of a cluster share beyond rows is cluster.ts.
import pg from 'pg';
import type { DatabaseSettings } from '../../core/config.ts';
import { sqlFileNames, sqlSections } from '../../core/sql.ts';

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
