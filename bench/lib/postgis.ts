// PostgreSQL 15 + PostGIS as a peer, the usual way to build this API: the snapshot's
// events.parquet loaded into an indexed table (one schema per dataset), the searches of
// bench/postgis/*.sql run by pgbench, the CSV export by COPY ... TO STDOUT, and the answers
// compared with ours. bench/run.ts drives it; bench/lib/pg.ts starts and installs the cluster.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { chown, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { BenchError, log, NOW_MS, percentile, REPO_ROOT, runOk } from './common.ts';
import { EXCLUDED_CATEGORIES, sqlString, type Dataset, type DatasetFacts } from './dataset.ts';
import type { CheckedUrl } from './load.ts';
import { MIX_COLUMNS, repeatedValues, type MixRow } from '../mix.ts';
import { repeatedPath } from '../scenarios.ts';
import { asPostgres, DATABASE, ensureCluster, ensureDatabase, ensurePostgis, pgOptions, psql, type PgRun } from './pg.ts';

/** The WEB_BASE_URL our server uses by default: event_url is built from it in both systems. */
export const WEB = 'https://familyevents.example';
/** Bump when the table, index or function definitions change, so a table loaded by an older setup is reloaded. */
const SETUP_VERSION = 2;
const SQL_DIR = path.join(REPO_ROOT, 'bench', 'postgis');
export const PG_SCENARIOS = ['repeated', 'distinct'] as const;
export type PgScenario = (typeof PG_SCENARIOS)[number];

/** Per-database settings a PostGIS deployment serving short OLTP searches would use; recorded in the results. */
export const DB_SETTINGS: Readonly<Record<string, string>> = {
  // JIT compiles plans whose cost estimate is high, which a 1M-row window query reaches; for
  // millisecond queries it costs more than it saves, and is the usual first thing turned off.
  jit: 'off',
  // The data sits in the page cache (24 GiB of RAM): random reads cost about what sequential ones do.
  random_page_cost: '1.1',
  effective_cache_size: '8GB',
  work_mem: '32MB',
};

/**
 * Session settings (PGOPTIONS) of every PostGIS peer. Custom plans: search.sql writes unused
 * filters as "flag = 0 OR ...", which only a plan made for the values folds away so each search
 * keeps its index. A generic plan (what "auto" switches to after 5 runs of a prepared statement)
 * keeps every OR and, for the city search, picks a BitmapAnd over end_ms ~10x slower at 1M rows.
 * The Fastify peer sets the same (bench/peers/fastify-pg.ts).
 */
export const SESSION_SETTINGS: Readonly<Record<string, string>> = { plan_cache_mode: 'force_custom_plan' };

const duckType: Record<string, string> = {
  VARCHAR: 'text',
  BIGINT: 'bigint',
  INTEGER: 'integer',
  DOUBLE: 'double precision',
  BOOLEAN: 'boolean',
  'VARCHAR[]': 'text[]',
};

/** Quoted PostgreSQL array literal of a DuckDB list, for CSV: {"a","b \"c\""}. */
const pgArray = (col: string): string =>
  `'{' || array_to_string(list_transform("${col}", e -> '"' || replace(replace(e, '\\', '\\\\'), '"', '\\"') || '"'), ',') || '}'`;

export interface LoadReport {
  readonly reused: boolean;
  readonly rows: number;
  readonly steps_s: Record<string, number>;
  readonly table_mib: number;
  readonly indexes: readonly string[];
}

async function loadTable(ds: Dataset, pg: PgRun & { schema: string }, trgm: boolean, workDir: string, reload: boolean): Promise<LoadReport> {
  const tag = `snapshot ${ds.manifest.id}; setup ${SETUP_VERSION}; q index ${trgm ? 'trgm' : 'tsvector'}`;
  const existing = await psql(
    `SELECT coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${pg.schema}' AND c.relname = 'events'`,
    pg,
  );
  const sizes = async (): Promise<{ rows: number; mib: number; indexes: string[] }> => {
    const [rows, bytes] = (await psql(`SELECT count(*), pg_total_relation_size('events') FROM events`, pg)).split('|').map(Number);
    const indexes = (await psql(`SELECT indexdef FROM pg_indexes WHERE schemaname = '${pg.schema}' AND tablename = 'events' ORDER BY indexname`, pg)).split(
      '\n',
    );
    return { rows: rows ?? 0, mib: +((bytes ?? 0) / 2 ** 20).toFixed(1), indexes };
  };
  if (existing === tag && !reload) {
    const s = await sizes();
    log(`reusing ${pg.schema}.events (${s.rows} rows, ${tag}); --reload to load it again`);
    return { reused: true, rows: s.rows, steps_s: {}, table_mib: s.mib, indexes: s.indexes };
  }

  const steps: Record<string, number> = {};
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    log(`${name}…`);
    const out = await f();
    steps[name] = +((performance.now() - t) / 1000).toFixed(2);
    return out;
  };

  // Columns as the snapshot has them (sql/snapshot_schema.sql), read from the file itself so a
  // schema change cannot silently load the wrong columns.
  const csv = path.join(workDir, 'events.csv');
  const columns = await timed('export Parquet to CSV (DuckDB)', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const src = `read_parquet(${sqlString(ds.parquet)})`;
      const cols = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`)).getRowObjectsJson() as { column_name: string; column_type: string }[];
      const unknown = cols.filter((col) => !duckType[col.column_type]);
      if (unknown.length) throw new BenchError(`no PostgreSQL type for ${unknown.map((u) => `${u.column_name} ${u.column_type}`).join(', ')}`);
      const select = cols
        .map((col) => (col.column_type.endsWith('[]') ? `${pgArray(col.column_name)} AS "${col.column_name}"` : `"${col.column_name}"`))
        .join(', ');
      await c.run(`COPY (SELECT ${select} FROM ${src}) TO ${sqlString(csv)} (FORMAT csv, HEADER false)`);
      return cols;
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });
  const ddl = columns.map((col) => `  ${col.column_name} ${duckType[col.column_type]}${col.column_name === 'id' ? ' COLLATE "C"' : ''}`).join(',\n');
  await timed('create table', () =>
    psql(
      `CREATE SCHEMA IF NOT EXISTS ${pg.schema};
       DROP TABLE IF EXISTS ${pg.schema}.events CASCADE;
       CREATE TABLE ${pg.schema}.events (
${ddl},
         geog geography(Point, 4326) GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(venue_lng, venue_lat), 4326)::geography) STORED
       )`,
      pg,
    ),
  );
  // Through psql's stdin: the server process (user postgres) need not be able to read our files.
  await timed('COPY into PostgreSQL', () =>
    psql(`COPY events (${columns.map((c) => c.column_name).join(', ')}) FROM STDIN WITH (FORMAT csv)`, pg, DATABASE, createReadStream(csv)),
  );
  await rm(csv, { force: true });
  const indexes: [string, string][] = [
    ['primary key (id)', 'ALTER TABLE events ADD PRIMARY KEY (id)'],
    ['GiST (geog)', 'CREATE INDEX events_geog ON events USING gist (geog)'],
    ['btree (start_ms)', 'CREATE INDEX events_start ON events (start_ms)'],
    ['btree (end_ms)', 'CREATE INDEX events_end ON events (end_ms)'],
    ['btree (city_key)', 'CREATE INDEX events_city ON events (city_key)'],
    ['GIN (categories)', 'CREATE INDEX events_categories ON events USING gin (categories)'],
    trgm
      ? ['GIN trigram (search_text)', 'CREATE INDEX events_q ON events USING gin (search_text gin_trgm_ops)']
      : ["GIN to_tsvector('simple', search_text)", "CREATE INDEX events_q ON events USING gin (to_tsvector('simple', search_text))"],
  ];
  for (const [name, sql] of indexes) await timed(`index ${name}`, () => psql(`SET maintenance_work_mem = '1GB'; ${sql}`, pg));
  await timed('VACUUM ANALYZE', () => psql('VACUUM ANALYZE events', pg));
  await psql(`COMMENT ON TABLE events IS ${sqlString(tag)}`, pg);
  const s = await sizes();
  return { reused: false, rows: s.rows, steps_s: steps, table_mib: s.mib, indexes: s.indexes };
}

/** Variables every search shares (-D for pgbench, literals for psql). */
const commonVars = (): Record<string, string | number> => ({ excluded: EXCLUDED_CATEGORIES.join(','), web: WEB });

/** search.sql without its comments (pgbench reads a script's lines as commands). */
async function searchSql(): Promise<string> {
  return (await readFile(path.join(SQL_DIR, 'search.sql'), 'utf8'))
    .split('\n')
    .filter((l) => !l.startsWith('--'))
    .join('\n')
    .trim();
}

/**
 * The pgbench script of a scenario, written where the postgres user can read it. distinct: each
 * transaction draws a row of bench_mix (the same list wrk draws our requests from) and reads its
 * values with \gset, one primary-key lookup before the search; repeated: -D values.
 */
async function pgbenchScript(p: Postgis, name: PgScenario, mixSize: number, sql: string): Promise<{ file: string; vars: Record<string, string | number> }> {
  const file = path.join(p.logRoot, `${name}.sql`);
  const cols = MIX_COLUMNS.filter((c) => c !== 'i' && c !== 'kind').join(', ');
  // pgbench -D cannot define an empty string, which search.sql uses for "no filter": the fixed
  // search's values are written into its script as literals instead (one plan, as -M prepared gives).
  const text =
    name === 'distinct'
      ? `\\set i random(1, ${mixSize})\nSELECT ${cols} FROM bench_mix WHERE i = :i \\gset\n${sql}`
      : renderSearch(sql, { ...commonVars(), ...repeatedValues(p.facts) });
  await writeFile(file, `${text}\n`);
  return { file, vars: name === 'distinct' ? commonVars() : {} };
}

export interface PgbenchResult {
  readonly tps: number;
  readonly transactions: number;
  readonly failed: number;
  readonly latency_avg_ms: number | null;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly max_ms: number | null;
  readonly command: string;
}

export interface PgbenchRun {
  readonly clients: number;
  readonly seed: number;
}

async function pgbench(
  script: string,
  vars: Record<string, string | number>,
  seconds: number,
  pg: PgRun,
  r0: PgbenchRun,
  logDir: string | null,
  extra: string[] = [],
): Promise<PgbenchResult> {
  const { clients, seed } = r0;
  const args = [
    '-n', // no vacuum of pgbench's own tables: we have none
    '-M',
    'prepared', // as our server: statements prepared once per connection
    '-f',
    script,
    '-c',
    String(clients),
    // pgbench's threads: never more than the cores, which PostgreSQL's backends need too.
    '-j',
    String(Math.min(clients, os.cpus().length)),
    '--random-seed',
    String(seed),
    ...(seconds > 0 ? ['-T', String(seconds)] : []),
    ...(logDir ? ['-l', '--log-prefix', path.join(logDir, 'tx')] : []),
    ...extra,
    ...Object.entries(vars).flatMap(([k, v]) => ['-D', `${k}=${v}`]),
    DATABASE,
  ];
  const command = `PGOPTIONS='${pgOptions(pg)}' pgbench ${args.map((a) => (/[\s,']/.test(a) ? `'${a}'` : a)).join(' ')}`;
  const r = await asPostgres('pgbench', args, pg);
  const out = `${r.stdout}\n${r.stderr}`;
  if (r.code !== 0) throw new BenchError(`pgbench failed (exit ${r.code}):\n${command}\n${out.trim().split('\n').slice(-15).join('\n')}`);
  const num = (re: RegExp): number | null => {
    const m = re.exec(out);
    return m ? Number(m[1]) : null;
  };
  const tps = num(/^tps = ([\d.]+)/m);
  const transactions = num(/^number of transactions actually processed: (\d+)/m);
  if (tps === null || transactions === null) throw new BenchError(`cannot read pgbench's report:\n${out}`);
  // Per-transaction log lines: client, transaction no, latency in µs, script, epoch s, µs[, ...].
  let latencies: number[] = [];
  if (logDir) {
    for (const f of (await readdir(logDir)).filter((n) => n.startsWith('tx.'))) {
      for (const line of (await readFile(path.join(logDir, f), 'utf8')).split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (line && Number.isFinite(us)) latencies.push(us / 1000);
      }
    }
    latencies = latencies.sort((a, b) => a - b);
  }
  return {
    tps,
    transactions,
    failed: num(/^number of failed transactions: (\d+)/m) ?? 0,
    latency_avg_ms: num(/^latency average = ([\d.]+) ms/m),
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    max_ms: latencies.length ? (latencies[latencies.length - 1] ?? null) : null,
    command,
  };
}

/** search.sql with literal values, for psql: the answer PostGIS gives to one search. */
function renderSearch(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\(:([a-z_]+)\)/g, (_match, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new BenchError(`search.sql uses :${name}, which the bench does not set`);
    return `(${typeof v === 'number' ? String(v) : sqlString(v)})`;
  });
}

/** Asks PostgreSQL the searches our server answered in the search benchmark, and compares pages and totals. */
/** Asks PostgreSQL the searches our server answered (mix paths and the fixed search), and compares pages and totals. */
export async function parity(
  samples: readonly CheckedUrl[],
  mix: readonly MixRow[],
  p: Postgis,
): Promise<{ checked: number; matched: number; mismatches: string[] }> {
  const text = await searchSql();
  const byPath = new Map(mix.map((r) => [r.path, r]));
  const mismatches: string[] = [];
  let checked = 0;
  for (const s of samples.filter((x) => x.status === 200)) {
    const row = byPath.get(s.path);
    const values = row ?? (s.path === repeatedPath(p.facts) ? repeatedValues(p.facts) : null);
    if (!values) continue;
    const got = JSON.parse(await psql(renderSearch(text, { ...commonVars(), ...values }), p.pg)) as { events: { id: string }[]; total: number | null };
    const ids = got.events.map((e) => e.id);
    checked++;
    if (got.total !== s.total || JSON.stringify(ids) !== JSON.stringify(s.ids))
      mismatches.push(`${s.path}: ours total ${s.total} ids ${s.ids.length}, PostGIS total ${got.total} ids ${ids.length}`);
  }
  return { checked, matched: checked - mismatches.length, mismatches };
}

export interface Postgis {
  readonly pg: PgRun & { schema: string };
  readonly version: string;
  readonly settings: Record<string, string>;
  readonly startedByBench: boolean;
  readonly load: LoadReport;
  readonly facts: DatasetFacts;
  /** pgbench writes its per-transaction logs as the postgres user: a directory it owns, outside the repo. */
  readonly logRoot: string;
  readonly pgUid: number;
  close(): Promise<void>;
}

/** Installs and starts what is missing, loads (or reuses) the dataset's table and defines event_json. */
export async function preparePostgis(ds: Dataset, facts: DatasetFacts, workDir: string, reload: boolean): Promise<Postgis> {
  const { trgm } = await ensurePostgis();
  const cluster = await ensureCluster();
  const pg: PgRun & { schema: string } = { port: cluster.port, schema: ds.name.replace(/\W/g, '_') };
  await ensureDatabase(pg, trgm);
  // RESET first so a setting dropped from DB_SETTINGS does not linger from an earlier run.
  await psql(`ALTER DATABASE ${DATABASE} RESET ALL`, pg);
  for (const [k, v] of Object.entries(DB_SETTINGS)) await psql(`ALTER DATABASE ${DATABASE} SET ${k} = ${sqlString(v)}`, pg);
  const load = await loadTable(ds, pg, trgm, workDir, reload);
  await psql(await readFile(path.join(SQL_DIR, 'functions.sql'), 'utf8'), pg);
  const settings = Object.fromEntries(
    (
      await psql(
        `SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'jit', 'random_page_cost', 'effective_cache_size', 'max_parallel_workers_per_gather', 'plan_cache_mode') ORDER BY name`,
        pg,
      )
    )
      .split('\n')
      .map((l) => l.split('|')),
  ) as Record<string, string>;
  const version = await psql(`SELECT version() || ' / PostGIS ' || postgis_lib_version()`, pg);
  const logRoot = await mkdtemp(path.join(os.tmpdir(), 'fe-pgbench-'));
  const pgUid = Number((await runOk('id', ['-u', 'postgres'])).stdout.trim());
  await chown(logRoot, pgUid, pgUid);
  return {
    pg,
    version,
    settings,
    startedByBench: cluster.startedByUs,
    load,
    facts,
    logRoot,
    pgUid,
    close: () => rm(logRoot, { recursive: true, force: true }),
  };
}

/** The mix as a table (bench_mix, next to events), rewritten every run: its rows depend on the run's seed. */
export async function loadMix(p: Postgis, mix: readonly MixRow[]): Promise<void> {
  const csv = mix
    .map((r) =>
      MIX_COLUMNS.map((c) => {
        const v = r[c];
        return typeof v === 'string' ? `"${v.replaceAll('"', '""')}"` : String(v);
      }).join(','),
    )
    .join('\n');
  await psql(
    `DROP TABLE IF EXISTS bench_mix;
     CREATE TABLE bench_mix (i int PRIMARY KEY, kind text, has_geo int, lat float8, lng float8, radius float8, city_key text, word text,
       has_ages int, age_lo int, age_hi int, cat text, from_ms bigint, to_ms bigint, off int)`,
    p.pg,
  );
  await psql(`COPY bench_mix (${MIX_COLUMNS.join(', ')}) FROM STDIN WITH (FORMAT csv)`, p.pg, DATABASE, Readable.from([csv]));
  await psql('ANALYZE bench_mix', p.pg);
}

/** One scenario under load: 20 transactions first (a script error surfaces here, not as an empty run), a warm-up, then the measured run. */
export async function runPgbench(
  p: Postgis,
  name: PgScenario,
  mixSize: number,
  run: PgbenchRun & { durationS: number; warmupS: number },
): Promise<PgbenchResult> {
  const scenarioPg = { ...p.pg, settings: SESSION_SETTINGS };
  const { file, vars } = await pgbenchScript(p, name, mixSize, await searchSql());
  await pgbench(file, vars, 0, scenarioPg, run, null, ['-t', '20']);
  if (run.warmupS > 0) await pgbench(file, vars, run.warmupS, scenarioPg, run, null);
  const logDir = await mkdtemp(path.join(p.logRoot, `${name}-`));
  await chown(logDir, p.pgUid, p.pgUid);
  log(`PostGIS ${name}: pgbench ${run.durationS} s, ${run.clients} clients`);
  return pgbench(file, vars, run.durationS, scenarioPg, run, logDir);
}

export interface CopyResult {
  readonly rows: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly rows_per_s: number;
  readonly command: string;
}

/**
 * The CSV export as PostgreSQL does it: COPY (the same search: not ended, outside the excluded
 * categories, in start order) TO STDOUT in CSV, through psql to a pipe we count and drop, as an
 * exporter's client would stream it to a file. At most `maxRows` rows, so 10M events stay bounded.
 */
export async function copyExport(p: Postgis, maxRows: number): Promise<CopyResult> {
  const visible = `end_ms >= ${NOW_MS} AND NOT categories && ARRAY[${EXCLUDED_CATEGORIES.map(sqlString).join(', ')}]`;
  return copyTimed(p, visible, `ORDER BY start_ms, id LIMIT ${maxRows}`, `SELECT count(*) FROM (SELECT 1 FROM events WHERE ${visible} LIMIT ${maxRows}) x`);
}

/**
 * The whole-snapshot export as PostgreSQL does it (/v1/export.csv's peer): every event outside the
 * excluded categories, ended ones too, COPY ... TO STDOUT in CSV in the table's order (as ours is in
 * the snapshot's), through psql to a pipe we count and drop.
 */
export async function copyWhole(p: Postgis): Promise<CopyResult> {
  const visible = `NOT categories && ARRAY[${EXCLUDED_CATEGORIES.map(sqlString).join(', ')}]`;
  return copyTimed(p, visible, '', `SELECT count(*) FROM events WHERE ${visible}`);
}

async function copyTimed(p: Postgis, where: string, tail: string, countSql: string): Promise<CopyResult> {
  const cols = await psql(
    `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = '${p.pg.schema}' AND table_name = 'events' AND column_name NOT IN ('geog', 'search_text', 'city_key')`,
    p.pg,
  );
  const sql = `COPY (SELECT ${cols} FROM events WHERE ${where}${tail ? ` ${tail}` : ''}) TO STDOUT WITH (FORMAT csv, HEADER)`;
  const args = ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', DATABASE, '-c', sql];
  const command = `PGOPTIONS='${pgOptions(p.pg)}' psql ${args.slice(0, -1).join(' ')} "${sql}"`;
  const t = performance.now();
  const r = await asPostgres('psql', args, p.pg, undefined, true);
  const seconds = (performance.now() - t) / 1000;
  if (r.code !== 0) throw new BenchError(`COPY failed: ${r.stderr.trim()}`);
  // Quoted cells may hold newlines, so lines are not rows: ask PostgreSQL how many it selected.
  const rows = Number(await psql(countSql, p.pg));
  return { rows, bytes: r.stdoutBytes, seconds: +seconds.toFixed(2), rows_per_s: Math.round(rows / seconds), command };
}
