// The data a benchmark runs on: a fresh bundled-sample snapshot, or a synthetic one of 50k, 1M or
// 10M events (reused across runs, rebuilt only when missing or of an older layout), and the facts
// about it that every load and peer draws its queries from, so ours and PostGIS ask the same questions.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { CATEGORY_SLUGS } from '../../core/taxonomy.ts';
import { currentSnapshotId, readManifest, SNAPSHOT_SCHEMA_VERSION, type Manifest } from '../../snapshot/store.ts';
import { BenchError, log, NOW_ISO, NOW_MS, REPO_ROOT, runOk, SCRATCH_DIR } from './common.ts';

/** The bundled sample, and synthetic sets by size: the scale section runs the same mix on each. */
export const SYNTHETIC_SIZES = { 'synthetic-50k': 50_000, 'synthetic-1m': 1_000_000, 'synthetic-10m': 10_000_000 } as const;
export const DATASETS = ['sample', ...(Object.keys(SYNTHETIC_SIZES) as (keyof typeof SYNTHETIC_SIZES)[])] as const;
export type DatasetName = (typeof DATASETS)[number];

export function datasetName(s: string): DatasetName {
  const found = DATASETS.find((d) => d === s);
  if (!found) throw new BenchError(`unknown dataset ${s} (one of ${DATASETS.join(', ')})`);
  return found;
}

/** Where a synthetic set is kept between runs (gitignored): .tmp/bench-50k, .tmp/bench-1m, .tmp/bench-10m. */
export const datasetDir = (name: Exclude<DatasetName, 'sample'>): string => path.join(SCRATCH_DIR, `bench-${name.slice('synthetic-'.length)}`);

/** The bench key's plan excludes what Community excludes (see bench/lib/server.ts), without its cap. */
export const EXCLUDED_CATEGORIES: readonly string[] = ['festivals', 'seasonal'];

export interface Dataset {
  readonly name: DatasetName;
  readonly dataDir: string;
  readonly manifest: Manifest;
  readonly parquet: string;
  /** Seconds spent building it in this run (0 when reused). */
  readonly setupS: number;
}

const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');

async function currentManifest(dataDir: string): Promise<Manifest | null> {
  const id = await currentSnapshotId(dataDir);
  return id ? readManifest(dataDir, id).catch(() => null) : null;
}

async function build(dataDir: string, extra: string[]): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await runOk(process.execPath, [BIN, 'snapshot', 'build', '--json', ...extra], {
    env: { ...process.env, DATA_DIR: dataDir, FAMILY_EVENTS_NOW: NOW_ISO, LOG_LEVEL: 'warn' },
  });
}

/**
 * sample: always a fresh DATA_DIR under runDir, so every run measures the current pipeline's output.
 * synthetic-*: `dir` (default datasetDir(name)) if it holds a current-layout snapshot of about that
 * many events; otherwise it is built there (1M: about 2 minutes and 3 GB of RAM) and kept.
 */
export async function prepareDataset(name: DatasetName, runDir: string, dir?: string): Promise<Dataset> {
  const t = performance.now();
  let dataDir: string;
  if (name === 'sample') {
    dataDir = path.join(runDir, 'data-sample');
    log(`building the bundled sample snapshot into ${path.relative(REPO_ROOT, dataDir)} (about 5 s)`);
    await build(dataDir, []);
  } else {
    const size = SYNTHETIC_SIZES[name];
    dataDir = path.resolve(dir ?? datasetDir(name));
    const m = await currentManifest(dataDir);
    // Synthetic events are unique by construction, so anything far from the size is another data set.
    const usable = m?.schema_version === SNAPSHOT_SCHEMA_VERSION && Math.abs(m.counts.events - size) < size * 0.05;
    if (!usable) {
      const why = !m
        ? 'has no snapshot'
        : m.schema_version !== SNAPSHOT_SCHEMA_VERSION
          ? `has layout ${m.schema_version}, the server serves ${SNAPSHOT_SCHEMA_VERSION}`
          : `holds ${m.counts.events} events`;
      log(
        `${path.relative(REPO_ROOT, dataDir)} ${why}: building the ${size}-event synthetic snapshot there (about ${Math.max(1, Math.round(size / 8_000))} s; kept for later runs)`,
      );
      await build(dataDir, ['--synthetic', String(size)]);
    }
  }
  const manifest = await currentManifest(dataDir);
  if (!manifest) throw new BenchError(`no snapshot under ${dataDir} after building`);
  return {
    name,
    dataDir,
    manifest,
    parquet: path.join(dataDir, 'snapshots', manifest.id, 'events.parquet'),
    setupS: +((performance.now() - t) / 1000).toFixed(1),
  };
}

export interface BoundingBox {
  readonly latLo: number;
  readonly latHi: number;
  readonly lngLo: number;
  readonly lngHi: number;
}

/** What the scenarios draw their parameters from; all of it computed from the Parquet file, none from the server. */
export interface DatasetFacts {
  readonly events: number;
  /** Events a Community search can return with no filter: not ended at NOW, not in an excluded category. */
  readonly upcoming: number;
  /** Events outside the excluded categories, ended ones too: the rows of the bench key's whole export (/v1/export.csv). */
  readonly exportable: number;
  /** Venues of those events. */
  readonly bbox: BoundingBox;
  /** The city with the most such events: the fixed search of the "repeated" scenario. */
  readonly city: string;
  readonly cityKey: string;
  readonly cityEvents: number;
  /** The busiest city's next upcoming event: the page the website's "event-page" scenario asks for. */
  readonly eventId: string;
  /** Category slugs a Community search may ask for. */
  readonly categories: readonly string[];
  /** The busiest venues (by events): where the mix's circle searches are centred, as people search near events. */
  readonly centres: readonly { readonly lat: number; readonly lng: number }[];
  /** Cities by events, busiest first, display name and folded key: the mix's city searches. */
  readonly cities: readonly { readonly name: string; readonly key: string }[];
  /** Frequent words of the events' text (4+ letters): the mix's q searches. */
  readonly words: readonly string[];
  readonly nowMs: number;
}

export const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`;

export async function datasetFacts(parquet: string): Promise<DatasetFacts> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const eligible = `end_ms >= ${NOW_MS} AND NOT list_has_any(categories, [${EXCLUDED_CATEGORIES.map(sqlString).join(', ')}]::VARCHAR[])`;
    await c.run(`CREATE VIEW ev AS SELECT * FROM read_parquet(${sqlString(parquet)})`);
    const stats = (
      await c.runAndReadAll(
        `SELECT (SELECT count(*) FROM ev)::DOUBLE AS events, count(*)::DOUBLE AS upcoming,
                (SELECT count(*) FROM ev WHERE NOT list_has_any(categories, [${EXCLUDED_CATEGORIES.map(sqlString).join(', ')}]::VARCHAR[]))::DOUBLE AS exportable,
                min(venue_lat) AS lat_lo, max(venue_lat) AS lat_hi, min(venue_lng) AS lng_lo, max(venue_lng) AS lng_hi
         FROM ev WHERE ${eligible}`,
      )
    ).getRowObjectsJson()[0] as
      { events: number; upcoming: number; exportable: number; lat_lo: number; lat_hi: number; lng_lo: number; lng_hi: number } | undefined;
    const top = (
      await c.runAndReadAll(`SELECT venue_city, city_key, count(*)::DOUBLE AS n FROM ev WHERE ${eligible} GROUP BY ALL ORDER BY n DESC, venue_city LIMIT 1`)
    ).getRowObjectsJson()[0] as { venue_city: string; city_key: string; n: number } | undefined;
    if (!stats || !top || !stats.upcoming) throw new BenchError(`${parquet} has no upcoming events at ${NOW_ISO}`);
    const rowsOf = async <T>(sql: string): Promise<T[]> => (await c.runAndReadAll(sql)).getRowObjectsJson() as T[];
    const [event] = await rowsOf<{ id: string }>(`SELECT id FROM ev WHERE ${eligible} AND city_key = ${sqlString(top.city_key)} ORDER BY start_ms, id LIMIT 1`);
    if (!event) throw new BenchError(`${parquet}: no upcoming event in ${top.venue_city}`);
    const centres = await rowsOf<{ lat: number; lng: number }>(
      `SELECT venue_lat AS lat, venue_lng AS lng FROM ev WHERE ${eligible} GROUP BY ALL ORDER BY count(*) DESC, lat, lng LIMIT 200`,
    );
    const cities = await rowsOf<{ name: string; key: string }>(
      `SELECT venue_city AS name, city_key AS key FROM ev WHERE ${eligible} AND venue_city IS NOT NULL GROUP BY ALL ORDER BY count(*) DESC, name LIMIT 100`,
    );
    // A fixed sample keeps 10M events affordable; the repeatable seed keeps the list stable between runs.
    // Only the words as written (before " ~ "): the stems and joins after it are not what people type.
    const words = await rowsOf<{ w: string }>(
      `SELECT w FROM (SELECT unnest(string_split(trim(split_part(search_text, ' ~ ', 1)), ' ')) AS w FROM ev WHERE ${eligible} USING SAMPLE 20000 ROWS (reservoir, 7))
       WHERE length(w) >= 4 AND NOT regexp_matches(w, '^[0-9]+$') GROUP BY w ORDER BY count(*) DESC, w LIMIT 60`,
    );
    return {
      events: stats.events,
      upcoming: stats.upcoming,
      exportable: stats.exportable,
      bbox: { latLo: stats.lat_lo, latHi: stats.lat_hi, lngLo: stats.lng_lo, lngHi: stats.lng_hi },
      city: top.venue_city,
      cityKey: top.city_key,
      cityEvents: top.n,
      eventId: event.id,
      categories: CATEGORY_SLUGS.filter((s) => !EXCLUDED_CATEGORIES.includes(s)),
      centres,
      cities,
      words: words.map((r) => r.w),
      nowMs: NOW_MS,
    };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}
