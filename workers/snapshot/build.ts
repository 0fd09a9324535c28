// One snapshot build: registry → fetch → parse → normalize → merge → Parquet → atomic switch.
// Each source is isolated: whatever it does (times out, sends 50 MB, is not the format it claims,
// throws inside a parser) is reported in the manifest and skipped. The build as a whole fails
// only when nothing is left to publish, and then `current` keeps pointing at the last good snapshot.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DateTime } from 'luxon';
import { bundledGazetteer, extendedGazetteer, type Gazetteer } from './gazetteer.ts';
import { fetchSource, type FetchOptions } from './fetch.ts';
import { mergeRows } from './normalize/merge.ts';
import { normalizeEvent, sourceContext } from './normalize/event.ts';
import { LA } from './normalize/times.ts';
import { parseFeed } from './parse/index.ts';
import type { ParseWindow } from './parse/types.ts';
import { loadRegistry, type Source } from './registry.ts';
import { renderSampleFeeds, SAMPLE_SCHEME } from './sample/feeds.ts';
import { pruneSnapshots, SNAPSHOT_SCHEMA_VERSION, snapshotsDir, switchCurrent, type Manifest } from './store.ts';
import type { DropReason, EventRow, SourceReport } from './types.ts';
import { writeParquet } from './write.ts';

export const DEFAULT_WINDOW_DAYS = 90;
export const DEFAULT_LOOKBACK_DAYS = 14;

export type BuildProgress =
  | { phase: 'sources'; done: number; total: number; source: string }
  | { phase: 'write'; done: number; total: number };

export interface BuildOptions {
  readonly dataDir: string;
  readonly registryFile: string;
  readonly now: Date;
  readonly windowDays?: number;
  readonly lookbackDays?: number;
  /** Sources fetched at once. */
  readonly concurrency?: number;
  readonly gazetteer?: Gazetteer;
  /** Test hooks for the fetcher (short timeouts and backoff). */
  readonly fetch?: Partial<Pick<FetchOptions, 'timeoutMs' | 'retries' | 'backoffMs'>>;
  readonly onProgress?: (p: BuildProgress) => void;
  /** Extra rows from a generator that bypasses upstream files (the synthetic benchmark set). */
  readonly extraRows?: () => AsyncIterable<EventRow[]>;
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

/** Where a registry url points: sample:// → the rendered sample file; a relative path → beside the registry. */
function locate(src: Source, registryDir: string, sampleFiles: ReadonlyMap<string, string>): string {
  if (src.url.startsWith(SAMPLE_SCHEME)) {
    const f = sampleFiles.get(src.id);
    if (!f) throw new Error(`no sample feed rendered for ${src.id}`);
    return f;
  }
  return /^https?:\/\//i.test(src.url) ? src.url : path.resolve(registryDir, src.url);
}

export async function buildSnapshot(opts: BuildOptions): Promise<BuildResult> {
  const t0 = performance.now();
  const registry = await loadRegistry(opts.registryFile);
  const g = opts.gazetteer ?? (registry.gazetteer ? extendedGazetteer(path.resolve(path.dirname(opts.registryFile), registry.gazetteer)) : bundledGazetteer());
  const window = buildWindow(opts.now, opts.windowDays, opts.lookbackDays);
  const sampleFiles = registry.sources.some((s) => s.url.startsWith(SAMPLE_SCHEME))
    ? await renderSampleFeeds({ dataDir: opts.dataDir, sources: registry.sources, now: opts.now, window, gazetteer: g })
    : new Map<string, string>();
  const registryDir = path.dirname(opts.registryFile);
  const cacheDir = path.join(opts.dataDir, 'cache', 'sources');

  let done = 0;
  const perSource = await mapLimit(registry.sources, opts.concurrency ?? 6, async (src) => {
    const started = performance.now();
    const report: SourceReport = { id: src.id, format: src.format, status: 'ok', error: null, item_error: null, bytes: 0, parsed: 0, kept: 0, dropped: {}, merged_into_other_sources: 0, ms: 0 };
    const rows: EventRow[] = [];
    const drop = (r: DropReason, n = 1): void => void (report.dropped[r] = (report.dropped[r] ?? 0) + n);
    try {
      const location = locate(src, registryDir, sampleFiles);
      const fetched = await fetchSource(location, {
        cacheDir,
        sourceId: src.id,
        timeoutMs: opts.fetch?.timeoutMs ?? src.timeout_ms,
        maxBytes: src.max_bytes,
        retries: opts.fetch?.retries,
        backoffMs: opts.fetch?.backoffMs,
      });
      report.bytes = fetched.bytes;
      if (fetched.notModified) report.status = 'not_modified';
      const parsed = await parseFeed(src.format, fetched.text, { window, csvColumns: src.csv_columns, baseUrl: /^https?:/.test(location) ? location : src.organizer.url });
      report.parsed = parsed.events.length + parsed.noStart;
      if (parsed.noStart) drop('no_start', parsed.noStart);
      const ctx = sourceContext(registry, src, g, window);
      for (const raw of parsed.events) {
        let r: EventRow | DropReason;
        try {
          r = normalizeEvent(raw, ctx);
        } catch (err) {
          report.item_error ??= (err as Error).message.slice(0, 300);
          r = 'invalid';
        }
        if (typeof r === 'string') drop(r);
        else rows.push(r);
      }
    } catch (err) {
      report.status = 'failed';
      report.error = (err as Error).message.slice(0, 500);
      rows.length = 0;
    }
    report.ms = Math.round(performance.now() - started);
    opts.onProgress?.({ phase: 'sources', done: ++done, total: registry.sources.length, source: src.id });
    return { report, rows };
  });

  const all = perSource.flatMap((p) => p.rows);
  if (opts.extraRows) for await (const batch of opts.extraRows()) for (const r of batch) all.push(r);
  const merged = mergeRows(all);
  const reports = perSource.map((p) => p.report);
  for (const rep of reports) {
    const dups = merged.duplicateUids.get(rep.id) ?? 0;
    if (dups) rep.dropped.duplicate_uid = dups;
    rep.merged_into_other_sources = merged.mergedAway.get(rep.id) ?? 0;
  }
  for (const p of perSource) p.report.kept = p.rows.length - (p.report.dropped.duplicate_uid ?? 0) - p.report.merged_into_other_sources;

  if (merged.rows.length === 0) {
    const failed = reports.filter((r) => r.status === 'failed').map((r) => `${r.id}: ${r.error}`);
    throw new BuildError(`no events to publish (${failed.length} of ${reports.length} sources failed${failed.length ? `; ${failed.slice(0, 3).join('; ')}` : ''}); the current snapshot is unchanged`);
  }

  const root = snapshotsDir(opts.dataDir);
  await mkdir(root, { recursive: true });
  const tmp = path.join(root, `.building-${process.pid}-${Date.now()}`);
  await mkdir(tmp, { recursive: true });
  try {
    const parquet = path.join(tmp, 'events.parquet');
    await writeParquet(merged.rows, parquet, (n) => opts.onProgress?.({ phase: 'write', done: n, total: merged.rows.length }));
    const builtAt = DateTime.fromJSDate(opts.now).toUTC();
    const id = `${builtAt.toFormat("yyyyLLdd'T'HHmmss'Z'")}-${(await sha256File(parquet)).slice(0, 10)}`;
    const categories: Record<string, number> = {};
    const dropped: Record<string, number> = {};
    for (const r of merged.rows) for (const c of r.categories) categories[c] = (categories[c] ?? 0) + 1;
    for (const rep of reports) for (const [k, n] of Object.entries(rep.dropped)) dropped[k] = (dropped[k] ?? 0) + n;
    const manifest: Manifest = {
      id,
      schema_version: SNAPSHOT_SCHEMA_VERSION,
      built_at: builtAt.toISO() ?? '',
      window: { start: window.start.toISO() ?? '', end: window.end.toISO() ?? '' },
      counts: {
        events: merged.rows.length,
        venues: new Set(merged.rows.map((r) => r.venue_key)).size,
        sources: reports.length,
        sources_failed: reports.filter((r) => r.status === 'failed').length,
        merged_across_sources: [...merged.mergedAway.values()].reduce((a, b) => a + b, 0),
        dropped,
      },
      categories,
      cities: [...new Set(merged.rows.map((r) => r.venue_city))].sort(),
      destinations: [...new Set(merged.rows.map((r) => r.destination))].sort(),
      files: { events: 'events.parquet', events_bytes: (await stat(parquet)).size },
      build_ms: Math.round(performance.now() - t0),
      sources: reports,
    };
    await writeFile(path.join(tmp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const dir = path.join(root, id);
    // Same id = same second and same bytes: the published copy already is this snapshot.
    if (await stat(dir).then(() => true, () => false)) await rm(tmp, { recursive: true, force: true });
    else await rename(tmp, dir);
    await switchCurrent(opts.dataDir, id);
    await pruneSnapshots(opts.dataDir);
    return { manifest, dir };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}
