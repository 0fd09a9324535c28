// A PostgreSQL database of its own for a test: created on the machine's server (TEST_DATABASE_URL,
// DATABASE_URL, or the local socket as postgres), dropped after. Null where no server answers, so
// the tests that need one skip with a reason instead of failing on a machine without PostgreSQL.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const ADMIN_URL = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgresql://postgres@localhost/postgres?host=/var/run/postgresql';

export interface TestDatabase {
  /** The URL of the new, empty database. */
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

let reachable: Promise<string | null> | null = null;

/**
 * Why PostgreSQL tests skip here, or null when a server answers. Under CI (which has one) nothing
 * skips: a missing server fails the tests that need it.
 */
export function postgresMissing(): Promise<string | null> {
  if (process.env.CI) return Promise.resolve(null);
  return (reachable ??= (async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return null;
    } catch (err) {
      return `no PostgreSQL server at TEST_DATABASE_URL, DATABASE_URL or /var/run/postgresql (${(err as Error).message})`;
    } finally {
      await c.end().catch(() => undefined);
    }
  })());
}

export async function testDatabase(label = 'test'): Promise<TestDatabase> {
  const name = `fe_${label.replace(/\W/g, '_').toLowerCase().slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(ADMIN_URL, name),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      try {
        // WITH (FORCE) ends sessions left behind by a killed node.
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

// ---------------------------------------------------------------- a private PostgreSQL server

const PG_BIN = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'].find((d) => existsSync(path.join(d, 'initdb')));

export interface PrivateCluster {
  readonly url: string;
  /** Stops the server (`fast`: sessions are ended, as in a restart). */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** Why a private server cannot be made here, or null. */
export function privateClusterMissing(): string | null {
  return PG_BIN || process.env.CI ? null : 'PostgreSQL server binaries (initdb, pg_ctl) are not installed: apt-get install -y postgresql';
}

/**
 * A PostgreSQL server of the test's own, on a free loopback port, that the test may stop and start
 * (restarting the machine's shared server would disturb the other tests). As root, it runs as the
 * postgres user, since PostgreSQL refuses to run as root.
 */
export async function privateCluster(port: number): Promise<PrivateCluster> {
  if (!PG_BIN) throw new Error(privateClusterMissing()!);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await chown(dir, postgresUid(), postgresGid());
  const run = (bin: string, args: string[]): Promise<void> =>
    new Promise((resolve, reject) => {
      const cmd = asRoot ? 'runuser' : path.join(PG_BIN, bin);
      const argv = asRoot ? ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args] : args;
      execFile(cmd, argv, { cwd: dir }, (err, _out, stderr) => (err ? reject(new Error(`${bin} failed: ${stderr}`)) : resolve()));
    });
  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    start,
    async destroy() {
      await run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function postgresUid(): number {
  return Number(/^postgres:[^:]*:(\d+):/m.exec(readFileSync('/etc/passwd', 'utf8'))?.[1] ?? NaN);
}

function postgresGid(): number {
  return Number(/^postgres:[^:]*:\d+:(\d+):/m.exec(readFileSync('/etc/passwd', 'utf8'))?.[1] ?? NaN);
}
