// The shared PostgreSQL ledger (DATABASE_URL) for the benchmarks that compare it with the embedded
// one: a database of the run's own on the machine's server (created, migrated, dropped after WITH
// (FORCE)), the server's durability settings written beside the figures, and two probes of what
// one ledger transaction is made of (a round trip, a commit).
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import pg from 'pg';
import { migrate } from '../../ledger/postgres/migrate.ts';
import type { DatabaseSettings } from '../../core/config.ts';
import { percentile } from './common.ts';

/** The server the benchmarks create their databases on: BENCH_DATABASE_URL, or the local socket as postgres. */
export const PG_ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@localhost/postgres?host=/var/run/postgresql';

/** The admin URL with its path pointing at another database (its query, e.g. ?host=, kept). */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/** Why the PostgreSQL runs are skipped here, or null when a server answers. */
export async function postgresMissing(): Promise<string | null> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return null;
  } catch (err) {
    return `no PostgreSQL server answers at ${redacted(PG_ADMIN_URL)} (${(err as Error).message}); set BENCH_DATABASE_URL to one`;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
  /** What a node's config makes of DATABASE_URL with the default PG_POOL_MAX and statement timeout. */
  readonly settings: DatabaseSettings;
  drop(): Promise<void>;
}

/** A new, migrated database named fe_bench_<label>_<random>; drop() ends any session left in it. */
export async function freshDatabase(label: string): Promise<BenchDatabase> {
  const name = `fe_bench_${label.replace(/\W/g, '_').toLowerCase().slice(0, 24)}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(PG_ADMIN_URL, name);
  const settings: DatabaseSettings = { url, poolMax: 4, statementTimeoutMs: 5000 };
  const drop = (): Promise<void> => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)));
  try {
    await migrate(settings, 'family-events bench migrate');
  } catch (err) {
    await drop();
    throw err;
  }
  return { name, url, settings, drop };
}

export interface PgServerInfo {
  readonly version: string;
  readonly synchronous_commit: string;
  readonly fsync: string;
  readonly wal_sync_method: string;
  readonly full_page_writes: string;
  readonly commit_delay: string;
  readonly shared_buffers: string;
  readonly max_connections: string;
  readonly data_directory: string | null;
  /** The data directory is on the filesystem of `sameAs` (the embedded ledger's directory): one disk's fsync for both. */
  readonly same_filesystem: boolean | null;
}

/** The server's version and what decides the cost of a commit. data_directory needs a superuser (null otherwise). */
export async function serverInfo(sameAs: string): Promise<PgServerInfo> {
  return admin(async (c) => {
    const show = async (name: string): Promise<string> => (await c.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name] ?? '?';
    const dataDir = await show('data_directory').catch(() => null);
    let same: boolean | null = null;
    try {
      if (dataDir) same = statSync(dataDir).dev === statSync(sameAs).dev;
    } catch {
      same = null;
    }
    return {
      version: (await show('server_version')).split(' ')[0] ?? '?',
      synchronous_commit: await show('synchronous_commit'),
      fsync: await show('fsync'),
      wal_sync_method: await show('wal_sync_method'),
      full_page_writes: await show('full_page_writes'),
      commit_delay: await show('commit_delay'),
      shared_buffers: await show('shared_buffers'),
      max_connections: await show('max_connections'),
      data_directory: dataDir,
      same_filesystem: same,
    };
  });
}

export const describeServer = (s: PgServerInfo): string =>
  `PostgreSQL ${s.version}: synchronous_commit=${s.synchronous_commit}, fsync=${s.fsync} (wal_sync_method=${s.wal_sync_method}), commit_delay=${s.commit_delay}, shared_buffers=${s.shared_buffers}` +
  (s.same_filesystem === null
    ? ''
    : s.same_filesystem
      ? '; its WAL is on the same filesystem (same disk) as the embedded ledger'
      : '; its data directory is on another filesystem than the embedded ledger');

export interface Probe {
  /** One `SELECT 1` on an open connection: the round trip every statement of a ledger transaction pays. */
  readonly round_trip_p50_ms: number | null;
  readonly round_trip_p99_ms: number | null;
  /** One single-row INSERT committed on its own (BEGIN, INSERT, COMMIT in one message): a durable commit's wait. */
  readonly commit_p50_ms: number | null;
  readonly commit_p99_ms: number | null;
  readonly samples: number;
}

/** The two costs a batch's transaction is made of, measured alone on `url`, one caller, `n` times each. */
export async function probe(url: string, n = 300): Promise<Probe> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('CREATE TABLE IF NOT EXISTS bench_probe (id bigint GENERATED ALWAYS AS IDENTITY, at timestamptz NOT NULL DEFAULT now())');
    const time = async (sql: string): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await c.query(sql);
        out.push(performance.now() - t);
      }
      return out.sort((a, b) => a - b);
    };
    const rt = await time('SELECT 1');
    // A simple-protocol multi-statement string is one round trip; its COMMIT waits for the WAL flush.
    const commit = await time('BEGIN; INSERT INTO bench_probe DEFAULT VALUES; COMMIT');
    await c.query('DROP TABLE bench_probe');
    const r = (v: number | null): number | null => (v === null ? null : +v.toFixed(3));
    return {
      round_trip_p50_ms: r(percentile(rt, 50)),
      round_trip_p99_ms: r(percentile(rt, 99)),
      commit_p50_ms: r(percentile(commit, 50)),
      commit_p99_ms: r(percentile(commit, 99)),
      samples: n,
    };
  } finally {
    await c.end().catch(() => undefined);
  }
}
