// One snapshot build: registry → fetch → parse → normalize → merge → Parquet → atomic switch.
// Each source is isolated: whatever it does (times out, sends 50 MB, is not the format it claims,
// throws inside a parser) is reported in the manifest and skipped. The build as a whole fails
// only when nothing is left to publish, and then `current` keeps pointing at the last good snapshot.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import { DateTime } from 'luxon';
import type { FetchTuning } from './fetch.ts';
import type { ParseWindow } from '../parse/types.ts';
import type { Source } from '../registry.ts';
import { renderSampleFeeds, SAMPLE_SCHEME } from '../sample/feeds.ts';
import { currentSnapshotId, pruneSnapshots, readManifest, SNAPSHOT_SCHEMA_VERSION, snapshotsDir, switchCurrent, type Manifest } from '../store.ts';
import { loadInputs, processSource, type SourceOutcome, type SourceTask } from './source.ts';
import { writeSnapshot } from './write.ts';
import { SEARCH_DB, writeSearchDb } from '../search-db.ts';
import { RECORDS_CSV, RECORDS_CSV_INDEX, RECORDS_FILE, RECORDS_INDEX } from '../records.ts';
import { GONE_FILE, GONE_INDEX, writeGone } from '../gone.ts';
import { LA } from '../../core/zone.ts';
import { threadEntry } from '../../core/thread-entry.ts';

export const DEFAULT_WINDOW_DAYS = 90;
export const DEFAULT_LOOKBACK_DAYS = 14;

export type BuildProgress = { phase: 'sources'; done: number; total: number; source: string } | { phase: 'write'; done: number; total: number };

export interface BuildOptions {
  readonly dataDir: string;
  readonly registryFile: string;
  readonly now: Date;
  readonly windowDays?: number;
  readonly lookbackDays?: number;
  /** Sources fetched at once. */
  readonly concurrency?: number;
  /** Threads that fetch, parse and normalize sources (default: one per core when the local input is large; 1 = inline). */
  readonly threads?: number;
  /** Test hooks for the fetcher (short timeouts and backoff). */
  readonly fetch?: FetchTuning;
  readonly onProgress?: (p: BuildProgress) => void;
}

export class BuildError extends Error {}

export interface BuildResult {
  readonly manifest: Manifest;
  readonly dir: string;
}

export function buildWindow(now: Date, windowDays = DEFAULT_WINDOW_DAYS, lookbackDays = DEFAULT_LOOKBACK_DAYS): ParseWindow {
  const t = DateTime.fromJSDate(now, { zone: LA });
  return { start: t.minus({ days: lookbackDays }).startOf('day'), end: t.plus({ days: windowDays }).endOf('day') };
}

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

// A thread costs ~1 s to start (TypeScript loader, parsers) and rows cost a copy back, so threads
// pay only for large inputs: measured on 2 cores, the bundled sample (~5 MB) builds 1.5 s slower
// with them, a 200k-event synthetic set (~100 MB) 13% faster (sources phase 24.4 → 18.6 s).
const MIN_BYTES_FOR_THREADS = 16 * 1024 * 1024;

/** A pool of source threads, or null to work inline. */
function sourcePool(threads: number | undefined, sources: number, localBytes: number): Piscina | null {
  const n = Math.min(threads ?? os.availableParallelism(), sources);
  // An explicit thread count is obeyed; the default decides by size.
  if (n < 2 || (threads === undefined && localBytes < MIN_BYTES_FOR_THREADS)) return null;
  return new Piscina({
    filename: threadEntry('./source-worker', import.meta.url).href,
    minThreads: n,
    maxThreads: n,
  });
}

/** Where a registry url points: sample:// → the rendered sample file; a relative path → beside the registry. */
function locate(src: Source, registryDir: string, sampleFiles: ReadonlyMap<string, string>): string {
  if (src.url.startsWith(SAMPLE_SCHEME)) {
    const f = sampleFiles.get(src.id);
    if (!f) throw new Error(`no sample feed rendered for ${src.id}`);
    return f;
  }
  return /^https?:\/\//i.test(src.url) ? src.url : path.resolve(registryDir, src.url);
}

/**
 * This build's change time: the build time, moved past the previous snapshot's stamp when the
 * clock says otherwise (two builds in one millisecond, a clock set back), since a change feed's
 * order relies on every new change sorting after every old one.
 */
export function changeStamp(builtAtMs: number, previous: Manifest | null): number {
  const prior = previous === null ? NaN : Date.parse((previous.changes as Manifest['changes'] | undefined)?.stamp ?? previous.built_at);
  return Number.isFinite(prior) ? Math.max(builtAtMs, prior + 1) : builtAtMs;
}

/**
 * From when the gone list holds every removal: the latest removal ever pruned from it (null:
 * none, complete since the first build). A previous snapshot without a change clock (built before
 * it existed) pruned by other rules, so history is complete only from its build.
 */
export function completeSince(previous: Manifest | null, prunedUntil: string | null): string | null {
  const prior =
    previous === null ? null : ((previous.changes as Manifest['changes'] | undefined)?.complete_since ?? (previous.changes ? null : previous.built_at));
  const times = [prior, prunedUntil]
    .filter((t): t is string => t !== null)
    .map((t) => Date.parse(t))
    .filter(Number.isFinite);
  return times.length === 0 ? null : new Date(Math.max(...times)).toISOString();
}

export async function buildSnapshot(opts: BuildOptions): Promise<BuildResult> {
  const t0 = performance.now();
  const inputs = await loadInputs(opts.registryFile);
  const registry = inputs.registry;
  const g = inputs.gazetteer;
  const window = buildWindow(opts.now, opts.windowDays, opts.lookbackDays);
  const sampleFiles = registry.sources.some((s) => s.url.startsWith(SAMPLE_SCHEME))
    ? await renderSampleFeeds({ dataDir: opts.dataDir, sources: registry.sources, now: opts.now, window, gazetteer: g })
    : new Map<string, string>();
  const registryDir = path.dirname(opts.registryFile);
  const cacheDir = path.join(opts.dataDir, 'cache', 'sources');

  const root = snapshotsDir(opts.dataDir);
  await mkdir(root, { recursive: true });
  // Everything of this build lives here until it is published by one rename; a failure removes it.
  const tmp = path.join(root, `.building-${process.pid}-${Date.now()}`);
  const stage = path.join(tmp, 'stage');
  await mkdir(stage, { recursive: true });
  try {
    const tasks: SourceTask[] = registry.sources.map((src, rank) => ({
      registryFile: opts.registryFile,
      sourceId: src.id,
      location: locate(src, registryDir, sampleFiles),
      windowStartMs: window.start.toMillis(),
      windowEndMs: window.end.toMillis(),
      cacheDir,
      stageFile: path.join(stage, `${String(rank).padStart(5, '0')}.ndjson`),
      fetch: opts.fetch,
    }));
    // Remote sizes are unknown until fetched; local files (sample, synthetic, mirrored feeds) tell.
    const sizes = await Promise.all(
      tasks.map((t) =>
        /^https?:/i.test(t.location)
          ? Promise.resolve(0)
          : stat(t.location).then(
              (st) => st.size,
              () => 0,
            ),
      ),
    );
    const pool = sourcePool(
      opts.threads,
      tasks.length,
      sizes.reduce((a, b) => a + b, 0),
    );
    let done = 0;
    let outcomes: SourceOutcome[];
    try {
      outcomes = await mapLimit(tasks, opts.concurrency ?? 6, async (task) => {
        const outcome: SourceOutcome = pool ? ((await pool.run(task)) as SourceOutcome) : await processSource(task, { registry, gazetteer: g });
        opts.onProgress?.({ phase: 'sources', done: ++done, total: tasks.length, source: task.sourceId });
        return outcome;
      });
    } finally {
      await pool?.destroy();
    }

    const reports = outcomes.map((o) => o.report);
    const failNothingToPublish = (): never => {
      const failed = reports.filter((r) => r.status === 'failed').map((r) => `${r.id}: ${r.error}`);
      throw new BuildError(
        `no events to publish (${failed.length} of ${reports.length} sources failed${failed.length ? `; ${failed.slice(0, 3).join('; ')}` : ''}); the current snapshot is unchanged`,
      );
    };
    const staged = tasks.filter((_, i) => outcomes[i]!.staged > 0).map((t) => t.stageFile);
    if (staged.length === 0) failNothingToPublish();

    const builtAt = DateTime.fromJSDate(opts.now).toUTC();
    const builtAtIso = builtAt.toISO() ?? '';
    // The snapshot this one replaces: what it served and no longer does is gone as of this build,
    // and what it served unchanged keeps its change times.
    const previous = await currentSnapshotId(opts.dataDir);
    const previousManifest = previous === null ? null : await readManifest(opts.dataDir, previous).catch(() => null);
    const stampMs = changeStamp(builtAt.toMillis(), previousManifest);
    const parquet = path.join(tmp, 'events.parquet');
    const assembled = await writeSnapshot(
      staged,
      tmp,
      parquet,
      { previousParquet: previous === null ? null : path.join(root, previous, 'events.parquet'), stampMs },
      (n, total) => opts.onProgress?.({ phase: 'write', done: n, total }),
    );
    await rm(stage, { recursive: true, force: true });
    if (assembled.events === 0) failNothingToPublish();
    await writeSearchDb(parquet, tmp);
    for (const rep of reports) {
      rep.merged_into_other_sources = assembled.mergedAway.get(rep.id) ?? 0;
      rep.kept = assembled.keptBySource.get(rep.id) ?? 0;
    }

    const stampIso = new Date(stampMs).toISOString();
    const gone = await writeGone({ previousDir: previous === null ? null : path.join(root, previous), parquet, dir: tmp, builtAt: stampIso });
    const id = `${builtAt.toFormat("yyyyLLdd'T'HHmmss'Z'")}-${(await sha256File(parquet)).slice(0, 10)}`;
    const dropped: Record<string, number> = {};
    for (const rep of reports) for (const [k, n] of Object.entries(rep.dropped)) dropped[k] = (dropped[k] ?? 0) + n;
    const manifest: Manifest = {
      id,
      schema_version: SNAPSHOT_SCHEMA_VERSION,
      built_at: builtAtIso,
      window: { start: window.start.toISO() ?? '', end: window.end.toISO() ?? '' },
      counts: {
        events: assembled.events,
        venues: assembled.venues,
        sources: reports.length,
        sources_failed: reports.filter((r) => r.status === 'failed').length,
        merged_across_sources: [...assembled.mergedAway.values()].reduce((a, b) => a + b, 0),
        dropped,
        gone: gone.count,
      },
      categories: assembled.categories,
      cities: assembled.cities,
      destinations: assembled.destinations,
      files: {
        events: 'events.parquet',
        events_bytes: (await stat(parquet)).size,
        records: RECORDS_FILE,
        records_index: RECORDS_INDEX,
        records_csv: RECORDS_CSV,
        records_csv_index: RECORDS_CSV_INDEX,
        search: SEARCH_DB,
        ...(gone.count > 0 ? { gone: GONE_FILE, gone_index: GONE_INDEX } : {}),
      },
      gone_from: { snapshot: previous, error: gone.error },
      changes: {
        stamp: stampIso,
        // A list that could not be derived lost every removal before this build.
        complete_since: gone.error !== null ? stampIso : completeSince(previousManifest, gone.prunedUntil),
      },
      build_ms: Math.round(performance.now() - t0),
      sources: reports,
    };
    await writeFile(path.join(tmp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const dir = path.join(root, id);
    // Same id = same second and same bytes: the published copy already is this snapshot, unless it
    // was written in another layout (same Parquet, other files beside it), which no server serves.
    const published = await readManifest(opts.dataDir, id).catch(() => null);
    if (published?.schema_version === SNAPSHOT_SCHEMA_VERSION) await rm(tmp, { recursive: true, force: true });
    else {
      await rm(dir, { recursive: true, force: true });
      await rename(tmp, dir);
    }
    await switchCurrent(opts.dataDir, id);
    await pruneSnapshots(opts.dataDir);
    return { manifest, dir };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}
