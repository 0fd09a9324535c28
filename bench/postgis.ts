// The same searches on PostgreSQL 15 + PostGIS, the usual way to build this API: loads the
// snapshot's events.parquet into an indexed table, runs bench/postgis/*.sql with pgbench, reports
// tps, p50 and p99, and compares with the latest bench/results/search-*.json of the same dataset.
// Usage: node --import tsx bench/postgis.ts [--dataset sample|synthetic-1m] [--duration 10] [--clients 2]
//        [--data-dir-1m DIR] [--warmup 1] [--reload] [--seed N] [--keep]
// Writes bench/results/postgis-<timestamp>.json.
import { createReadStream } from 'node:fs';
import { chown, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { BenchError, describeMachine, exitOnError, fmt, log, machineInfo, NOW_MS, percentile, REPO_ROOT, RESULTS_DIR, runOk, SCRATCH_DIR, stamp, table, wholeArg, writeResult } from './lib/common.ts';
import { DATASETS, datasetFacts, DEFAULT_DIR_1M, EXCLUDED_CATEGORIES, prepareDataset, sqlString, type Dataset, type DatasetFacts, type DatasetName } from './lib/dataset.ts';
import { asPostgres, DATABASE, ensureCluster, ensureDatabase, ensurePostgis, pgOptions, psql, type PgRun } from './lib/pg.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'sample' },
    duration: { type: 'string', default: '10' },
    clients: { type: 'string', default: '2' },
    'data-dir-1m': { type: 'string', default: DEFAULT_DIR_1M },
    warmup: { type: 'string', default: '1' },
    reload: { type: 'boolean', default: false },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

if (!DATASETS.includes(opts.dataset as DatasetName)) throw new BenchError(`--dataset must be sample or synthetic-1m (got ${opts.dataset})`);
const datasetName = opts.dataset as DatasetName;
const durationS = wholeArg('duration', opts.duration, 1);
const clients = wholeArg('clients', opts.clients, 1);
const warmupS = wholeArg('warmup', opts.warmup, 0);
const seed = opts.seed === undefined ? Date.now() % 1_000_000_007 : wholeArg('seed', opts.seed, 0);
/** The WEB_BASE_URL our server uses by default: event_url is built from it in both systems. */
const WEB = 'https://familyevents.example';
/** Bump when the table or index definitions change, so a loaded table of an older setup is reloaded. */
const SETUP_VERSION = 1;
const SCRIPTS = { repeated: path.join(REPO_ROOT, 'bench', 'postgis', 'repeated.sql'), distinct: path.join(REPO_ROOT, 'bench', 'postgis', 'distinct.sql') };
type ScenarioName = keyof typeof SCRIPTS;

/** Per-database settings a PostGIS deployment serving short OLTP searches would use; recorded in the results. */
const DB_SETTINGS: Readonly<Record<string, string>> = {
  // JIT compiles plans whose cost estimate is high, which a 1M-row window query reaches; for
  // millisecond queries it costs more than it saves, and is the usual first thing turned off.
  jit: 'off',
  // The data sits in the page cache (24 GiB of RAM): random reads cost about what sequential ones do.
  random_page_cost: '1.1',
  effective_cache_size: '8GB',
  work_mem: '32MB',
};

/**
 * Session settings per scenario (PGOPTIONS), each the better one for that search, so PostGIS is
 * compared at its best. Prepared statements switch to a generic plan after 5 runs: for the city
 * search its guess (end_ms >= $n matching a third of the table) picks a BitmapAnd over the end_ms
 * index, ~10x slower at 1M rows than the plan for the actual values; for the geo search the
 * generic plan is as good and saves ~10% of planning.
 */
const SESSION_SETTINGS: Readonly<Record<ScenarioName, Readonly<Record<string, string>>>> = {
  repeated: { plan_cache_mode: 'force_custom_plan' },
  distinct: { plan_cache_mode: 'auto' },
};

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

interface LoadReport {
  readonly reused: boolean;
  readonly rows: number;
  readonly steps_s: Record<string, number>;
  readonly table_mib: number;
  readonly indexes: readonly string[];
}

async function loadTable(ds: Dataset, pg: PgRun & { schema: string }, trgm: boolean, workDir: string): Promise<LoadReport> {
  const tag = `snapshot ${ds.manifest.id}; setup ${SETUP_VERSION}; q index ${trgm ? 'trgm' : 'tsvector'}`;
  const existing = await psql(
    `SELECT coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${pg.schema}' AND c.relname = 'events'`,
    pg,
  );
  const sizes = async (): Promise<{ rows: number; mib: number; indexes: string[] }> => {
    const [rows, bytes] = (await psql(`SELECT count(*), pg_total_relation_size('events') FROM events`, pg)).split('|').map(Number);
    const indexes = (await psql(`SELECT indexdef FROM pg_indexes WHERE schemaname = '${pg.schema}' AND tablename = 'events' ORDER BY indexname`, pg)).split('\n');
    return { rows: rows ?? 0, mib: +((bytes ?? 0) / 2 ** 20).toFixed(1), indexes };
  };
  if (existing === tag && !opts.reload) {
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
      const select = cols.map((col) => (col.column_type.endsWith('[]') ? `${pgArray(col.column_name)} AS "${col.column_name}"` : `"${col.column_name}"`)).join(', ');
      await c.run(`COPY (SELECT ${select} FROM ${src}) TO ${sqlString(csv)} (FORMAT csv, HEADER false)`);
      return cols;
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });
  const ddl = columns
    .map((col) => `  ${col.column_name} ${duckType[col.column_type]}${col.column_name === 'id' ? ' COLLATE "C"' : ''}`)
    .join(',\n');
  await timed('create table', () =>
    psql(
      `CREATE SCHEMA IF NOT EXISTS ${pg.schema};
       DROP TABLE IF EXISTS ${pg.schema}.events;
       CREATE TABLE ${pg.schema}.events (
${ddl},
         geog geography(Point, 4326) GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(venue_lng, venue_lat), 4326)::geography) STORED
       )`,
      pg,
    ),
  );
  // Through psql's stdin: the server process (user postgres) need not be able to read our files.
  await timed('COPY into PostgreSQL', () => psql(`COPY events (${columns.map((c) => c.column_name).join(', ')}) FROM STDIN WITH (FORMAT csv)`, pg, DATABASE, createReadStream(csv)));
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

/** pgbench -D variables both scripts draw from: the same facts the wrk scenarios use. */
function scriptVars(f: DatasetFacts): Record<string, string | number> {
  return {
    lat_lo_u: Math.floor(f.bbox.latLo * 1e6),
    lat_hi_u: Math.ceil(f.bbox.latHi * 1e6),
    lng_lo_u: Math.floor(f.bbox.lngLo * 1e6),
    lng_hi_u: Math.ceil(f.bbox.lngHi * 1e6),
    ncats: f.categories.length,
    cats: f.categories.join(','),
    excluded: EXCLUDED_CATEGORIES.join(','),
    now_ms: NOW_MS,
    web: WEB,
    city_key: f.cityKey,
  };
}

interface PgbenchResult {
  readonly tps: number;
  readonly transactions: number;
  readonly failed: number;
  readonly latency_avg_ms: number | null;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly command: string;
}

async function pgbench(script: string, vars: Record<string, string | number>, seconds: number, pg: PgRun, logDir: string | null, extra: string[] = []): Promise<PgbenchResult> {
  const args = [
    '-n', // no vacuum of pgbench's own tables: we have none
    '-M', 'prepared', // as our server: statements prepared once per connection
    '-f', script,
    '-c', String(clients),
    '-j', String(clients),
    '--random-seed', String(seed),
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
    command,
  };
}

/** A pgbench script as plain SQL with the given values: for psql, to compare answers with our server's. */
function renderScript(text: string, vars: Record<string, string | number>): string {
  return text
    .split('\n')
    .filter((l) => !l.startsWith('\\set') && !l.startsWith('--'))
    .join('\n')
    .replace(/(?<!:):([a-z_]\w*)/g, (whole, name: string) => {
      const v = vars[name];
      return v === undefined ? whole : typeof v === 'number' ? String(v) : sqlString(v);
    });
}

interface SearchSample {
  readonly path: string;
  readonly status: number;
  readonly total: number | null;
  readonly ids?: readonly string[];
}

interface SearchFile {
  readonly file: string;
  readonly connections: number;
  readonly settings: string;
  readonly snapshot: string;
  readonly rps: Partial<Record<ScenarioName, number>>;
  readonly samples: readonly SearchSample[];
}

/** The newest search benchmark of this dataset, if any. */
async function latestSearch(dataset: DatasetName): Promise<SearchFile | null> {
  const files = (await readdir(RESULTS_DIR).catch(() => [] as string[])).filter((f) => /^search-.*\.json$/.test(f)).sort().reverse();
  for (const file of files) {
    const data = JSON.parse(await readFile(path.join(RESULTS_DIR, file), 'utf8')) as {
      settings?: { connections?: number; duration_s?: number; log_level?: string; pool_threads?: number };
      datasets?: { dataset: string; snapshot: string; scenarios: { name: string; rps: number; sample_urls?: SearchSample[] }[]; repeated_sample?: SearchSample }[];
    };
    const d = data.datasets?.find((x) => x.dataset === dataset);
    if (!d) continue;
    const rps: Partial<Record<ScenarioName, number>> = {};
    for (const s of d.scenarios) if (s.name === 'repeated' || s.name === 'distinct') rps[s.name] = s.rps;
    const samples = [...(d.repeated_sample ? [d.repeated_sample] : []), ...(d.scenarios.find((s) => s.name === 'distinct')?.sample_urls ?? [])];
    const st = data.settings;
    const settings = `wrk -c${st?.connections} -d${st?.duration_s}s, LOG_LEVEL=${st?.log_level}, POOL_THREADS=${st?.pool_threads}`;
    return { file, connections: st?.connections ?? 0, settings, snapshot: d.snapshot, rps, samples };
  }
  return null;
}

/** Asks PostgreSQL the searches our server answered in the search benchmark, and compares pages and totals. */
async function parity(search: SearchFile, facts: DatasetFacts, pg: PgRun): Promise<{ checked: number; matched: number; mismatches: string[] }> {
  const base = scriptVars(facts);
  const texts = { repeated: await readFile(SCRIPTS.repeated, 'utf8'), distinct: await readFile(SCRIPTS.distinct, 'utf8') };
  const mismatches: string[] = [];
  let checked = 0;
  for (const s of search.samples.filter((x) => x.ids)) {
    const u = new URL(s.path, 'http://x');
    const p = (k: string): number => Number(u.searchParams.get(k));
    const isGeo = u.searchParams.has('lat');
    const sql = isGeo
      ? renderScript(texts.distinct, {
          ...base,
          lat: Math.round(p('lat') * 1e6),
          lng: Math.round(p('lng') * 1e6),
          radius: p('radius_km'),
          age_min: p('age_min'),
          age_max: p('age_max'),
          cat: facts.categories.indexOf(u.searchParams.get('category') ?? '') + 1,
          off: p('offset'),
        })
      : renderScript(texts.repeated, base);
    const got = JSON.parse(await psql(sql, pg)) as { events: { id: string }[]; total: number | null };
    const ids = got.events.map((e) => e.id);
    checked++;
    // count(*) OVER () has no row to ride on when the offset is past the end: no total then.
    const totalOk = got.total === s.total || (got.total === null && ids.length === 0);
    if (!totalOk || JSON.stringify(ids) !== JSON.stringify(s.ids)) mismatches.push(`${s.path}: ours total ${s.total} ids ${s.ids?.length}, PostGIS total ${got.total} ids ${ids.length}`);
  }
  return { checked, matched: checked - mismatches.length, mismatches };
}

const machine = machineInfo();
log(describeMachine(machine));
const runDir = path.join(SCRATCH_DIR, `bench-pg-${stamp()}`);
await mkdir(runDir, { recursive: true });
// pgbench writes its per-transaction logs as the postgres user: a directory it owns, outside the repo.
const logRoot = await mkdtemp(path.join(os.tmpdir(), 'fe-pgbench-'));
const pgUid = Number((await runOk('id', ['-u', 'postgres'])).stdout.trim());
await chown(logRoot, pgUid, pgUid);
try {
  const ds = await prepareDataset(datasetName, runDir, opts['data-dir-1m']);
  const facts = await datasetFacts(ds.parquet);
  log(`${datasetName}: snapshot ${ds.manifest.id}, ${facts.events} events (${facts.upcoming} upcoming, outside excluded categories)`);

  const { trgm } = await ensurePostgis();
  const cluster = await ensureCluster();
  const pg: PgRun & { schema: string } = { port: cluster.port, schema: datasetName.replace(/\W/g, '_') };
  await ensureDatabase(pg, trgm);
  // RESET first so a setting dropped from DB_SETTINGS does not linger from an earlier run.
  await psql(`ALTER DATABASE ${DATABASE} RESET ALL`, pg);
  for (const [k, v] of Object.entries(DB_SETTINGS)) await psql(`ALTER DATABASE ${DATABASE} SET ${k} = ${sqlString(v)}`, pg);
  const load = await loadTable(ds, pg, trgm, runDir);
  const settings = Object.fromEntries(
    (await psql(`SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'jit', 'random_page_cost', 'effective_cache_size', 'max_parallel_workers_per_gather', 'plan_cache_mode') ORDER BY name`, pg))
      .split('\n')
      .map((l) => l.split('|')),
  ) as Record<string, string>;
  const version = await psql(`SELECT version() || ' / PostGIS ' || postgis_lib_version()`, pg);

  const vars = scriptVars(facts);
  const results: Partial<Record<ScenarioName, PgbenchResult>> = {};
  for (const name of ['repeated', 'distinct'] as const) {
    const scenarioPg = { ...pg, settings: SESSION_SETTINGS[name] };
    // 20 transactions first: a script error surfaces here, not as an empty benchmark.
    await pgbench(SCRIPTS[name], vars, 0, scenarioPg, null, ['-t', '20']);
    if (warmupS > 0) await pgbench(SCRIPTS[name], vars, warmupS, scenarioPg, null);
    const logDir = path.join(logRoot, name);
    await mkdir(logDir);
    await chown(logDir, pgUid, pgUid);
    log(`${name}: pgbench ${durationS} s, ${clients} clients`);
    results[name] = await pgbench(SCRIPTS[name], vars, durationS, scenarioPg, logDir);
  }

  const search = await latestSearch(datasetName);
  const sameData = search?.snapshot === ds.manifest.id;
  const check = search && sameData ? await parity(search, facts, pg) : null;
  const ratio = (n: ScenarioName): number | null => {
    const ours = search?.rps[n];
    const theirs = results[n]?.tps;
    return ours && theirs && sameData ? +(ours / theirs).toFixed(2) : null;
  };
  const comparison = search
    ? {
        search_file: search.file,
        same_snapshot: sameData,
        ours_connections: search.connections,
        pgbench_clients: clients,
        distinct_ratio: ratio('distinct'),
        distinct_target_met: ratio('distinct') === null ? null : (ratio('distinct') ?? 0) >= 2,
        repeated_ratio: ratio('repeated'),
        parity: check,
      }
    : null;

  console.log(`\n${describeMachine(machine)}\n${version}`);
  console.log(`settings: ${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  console.log(`per scenario: ${Object.entries(SESSION_SETTINGS).map(([n, o]) => `${n} ${pgOptions({ port: 0, settings: o })}`).join('; ')}`);
  console.log(
    `${datasetName}: snapshot ${ds.manifest.id}, ${load.rows} rows, ${load.table_mib} MiB with indexes; ${load.reused ? 'table reused' : `loaded in ${Object.values(load.steps_s).reduce((a, b) => a + b, 0).toFixed(1)} s`}`,
  );
  console.log(
    table(
      ['scenario', 'tps', 'p50 ms', 'p99 ms', 'avg ms', 'failed', 'ours req/s', 'ours / PostGIS'],
      (['repeated', 'distinct'] as const).map((n) => {
        const r = results[n];
        return [n, fmt(r?.tps, 0), fmt(r?.p50_ms, 2), fmt(r?.p99_ms, 2), fmt(r?.latency_avg_ms, 2), String(r?.failed ?? '-'), fmt(search?.rps[n] ?? null, 0), fmt(ratio(n), 2)];
      }),
    ),
  );
  if (!search) console.log(`no bench/results/search-*.json for ${datasetName} yet: run bench/search.ts --dataset ${datasetName} for the comparison`);
  else if (!sameData) console.log(`the latest search result (${search.file}) was measured on snapshot ${search.snapshot}, not ${ds.manifest.id}: no ratio`);
  else {
    console.log(`compared with ${search.file} (${search.settings}; pgbench -c${clients} -T${durationS}); distinct target ours >= 2x PostGIS: ${comparison?.distinct_target_met ? 'met' : 'NOT met'}`);
    if (check) console.log(`same answers: ${check.matched}/${check.checked} searches return the same page and total${check.mismatches.length ? `\n  ${check.mismatches.slice(0, 5).join('\n  ')}` : ''}`);
  }
  const failed = Object.values(results).reduce((n, r) => n + (r?.failed ?? 0), 0);
  const out = await writeResult('postgis', {
    kind: 'postgis',
    at: new Date().toISOString(),
    machine,
    postgres: { version, settings, db_settings: DB_SETTINGS, session_settings: SESSION_SETTINGS, port: cluster.port, started_by_bench: cluster.startedByUs },
    dataset: { name: datasetName, data_dir: path.relative(REPO_ROOT, ds.dataDir), snapshot: ds.manifest.id, facts, setup_s: ds.setupS },
    load,
    run: { duration_s: durationS, clients, warmup_s: warmupS, seed, query_mode: 'prepared' },
    scenarios: results,
    comparison,
  });
  console.log(`written ${path.relative(REPO_ROOT, out)}`);
  if (failed) {
    console.log(`FLAGGED: ${failed} failed transactions`);
    process.exitCode = 1;
  }
} finally {
  await rm(logRoot, { recursive: true, force: true });
  if (!opts.keep) await rm(runDir, { recursive: true, force: true });
  else log(`kept ${path.relative(REPO_ROOT, runDir)}`);
}
