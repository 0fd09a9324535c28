// PostgreSQL 15 + PostGIS for the comparison benchmark: the cluster started if down, PostGIS
// installed from Debian if missing, and psql/pgbench run as the postgres OS user (peer auth over
// the local socket, so no password or role setup is needed).
import { existsSync } from 'node:fs';
import { BenchError, log, run, runOk, sleep, type RunResult } from './common.ts';

export const PG_VERSION = '15';
export const PG_CLUSTER = 'main';
export const DATABASE = 'fe_bench';
const EXTENSION_DIR = `/usr/share/postgresql/${PG_VERSION}/extension`;
const POSTGIS_PACKAGE = `postgresql-${PG_VERSION}-postgis-3`;

export interface Cluster {
  readonly port: number;
  readonly startedByUs: boolean;
}

/** pg_lsclusters' line for 15/main: version, name, port, status, owner, data dir, log file. */
async function clusterLine(): Promise<string[]> {
  const r = await runOk('pg_lsclusters', ['--no-header']);
  const line = r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[0] === PG_VERSION && f[1] === PG_CLUSTER);
  if (!line) throw new BenchError(`no PostgreSQL cluster ${PG_VERSION}/${PG_CLUSTER} (pg_lsclusters):\n${r.stdout}`);
  return line;
}

export async function ensureCluster(): Promise<Cluster> {
  let line = await clusterLine();
  const port = Number(line[2]);
  let startedByUs = false;
  if (line[3] !== 'online') {
    log(`starting PostgreSQL cluster ${PG_VERSION}/${PG_CLUSTER} (it was ${line[3]})`);
    await runOk('pg_ctlcluster', [PG_VERSION, PG_CLUSTER, 'start']);
    startedByUs = true;
    line = await clusterLine();
  }
  for (let i = 0; i < 50; i++) {
    if ((await run('pg_isready', ['-q', '-p', String(port)])).code === 0) return { port, startedByUs };
    await sleep(200);
  }
  throw new BenchError(`PostgreSQL ${PG_VERSION}/${PG_CLUSTER} on port ${port} is not accepting connections (status ${line[3]})`);
}

/** PostGIS comes from Debian's package; pg_trgm ships with PostgreSQL's contrib. */
export async function ensurePostgis(): Promise<{ trgm: boolean }> {
  if (!existsSync(`${EXTENSION_DIR}/postgis.control`)) {
    log(`PostGIS is not installed: apt-get install -y ${POSTGIS_PACKAGE}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    let r: RunResult = await run('apt-get', ['install', '-y', '-q', POSTGIS_PACKAGE], { env });
    if (r.code !== 0) {
      // A fresh machine's package lists may be missing or stale.
      log('install failed; running apt-get update and trying once more');
      await run('apt-get', ['update', '-q'], { env });
      r = await run('apt-get', ['install', '-y', '-q', POSTGIS_PACKAGE], { env });
    }
    if (r.code !== 0 || !existsSync(`${EXTENSION_DIR}/postgis.control`)) {
      const tail = `${r.stderr}\n${r.stdout}`.trim().split('\n').slice(-10).join('\n');
      throw new BenchError(
        `could not install PostGIS (apt-get install -y ${POSTGIS_PACKAGE} exited ${r.code}). Install it by hand (as root: apt-get update && apt-get install -y ${POSTGIS_PACKAGE}) and rerun.\n${tail}`,
      );
    }
  }
  return { trgm: existsSync(`${EXTENSION_DIR}/pg_trgm.control`) };
}

export interface PgRun {
  readonly port: number;
  /** The schema holding this dataset's events table (PGOPTIONS search_path), so datasets stay loaded side by side. */
  readonly schema?: string;
  /** Session settings (PGOPTIONS -c name=value). */
  readonly settings?: Readonly<Record<string, string>>;
}

export function pgOptions(o: PgRun): string {
  const all = { ...(o.schema ? { search_path: `${o.schema},public` } : {}), ...o.settings };
  return Object.entries(all)
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(' ');
}

function pgEnv(o: PgRun): NodeJS.ProcessEnv {
  const options = pgOptions(o);
  return { ...process.env, PGPORT: String(o.port), ...(options ? { PGOPTIONS: options } : {}) };
}

/** Runs a program as the postgres OS user, from /tmp (its home may not be readable from our cwd). */
export function asPostgres(file: string, args: readonly string[], o: PgRun, input?: NodeJS.ReadableStream, countStdout = false): Promise<RunResult> {
  return run('runuser', ['-u', 'postgres', '--', file, ...args], { cwd: '/tmp', env: pgEnv(o), countStdout, ...(input ? { input } : {}) });
}

/** One SQL command through psql (-c: one implicit transaction, so VACUUM needs its own call); tuples only. */
export async function psql(sql: string, o: PgRun, db = DATABASE, input?: NodeJS.ReadableStream): Promise<string> {
  const r = await asPostgres('psql', ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql], o, input);
  if (r.code !== 0) throw new BenchError(`psql failed on:\n${sql.slice(0, 500)}\n${r.stderr.trim()}`);
  return r.stdout.trim();
}

export async function ensureDatabase(o: PgRun, trgm: boolean): Promise<void> {
  const exists = await psql(`SELECT 1 FROM pg_database WHERE datname = '${DATABASE}'`, o, 'postgres');
  if (exists !== '1') {
    log(`creating database ${DATABASE}`);
    await psql(`CREATE DATABASE ${DATABASE}`, o, 'postgres');
  }
  await psql('CREATE EXTENSION IF NOT EXISTS postgis', o);
  if (trgm) await psql('CREATE EXTENSION IF NOT EXISTS pg_trgm', o);
}
