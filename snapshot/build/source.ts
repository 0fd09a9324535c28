// One source's part of a build: fetch → parse → normalize, isolated so that whatever the source
// does ends up as a report, never as a failed build. Runs inline or in a pool thread
// (source-worker.ts); its task and outcome are plain data so they cross threads as they are.
import path from 'node:path';
import { DateTime } from 'luxon';
import { bundledGazetteer, extendedGazetteer, type Gazetteer } from '../gazetteer.ts';
import { fetchSource, type FetchTuning } from './fetch.ts';
import { normalizeAll, sourceContext } from '../normalize/event.ts';
import { parseFeed } from '../parse/index.ts';
import { itemCount } from '../parse/types.ts';
import { loadRegistry, type Registry } from '../registry.ts';
import { sameEventKey } from '../normalize/merge.ts';
import { writeStaged, type StagedRow } from '../stage.ts';
import type { DropReason, SourceReport } from '../types.ts';
import { LA } from '../../core/zone.ts';

export interface SourceTask {
  readonly registryFile: string;
  readonly sourceId: string;
  /** The resolved address: an http(s) URL or an absolute file path. */
  readonly location: string;
  readonly windowStartMs: number;
  readonly windowEndMs: number;
  readonly cacheDir: string;
  /** Where this source's rows are staged (NDJSON) for the snapshot. */
  readonly stageFile: string;
  readonly fetch?: FetchTuning | undefined;
}

export interface SourceOutcome {
  readonly report: SourceReport;
  /** Rows written to the stage file (0: nothing staged, the file may not exist). */
  readonly staged: number;
}

export interface BuildInputs {
  readonly registry: Registry;
  readonly gazetteer: Gazetteer;
}

/** A registry and the places its sources resolve against: the bundled gazetteer, extended by the registry's own. */
export async function loadInputs(registryFile: string): Promise<BuildInputs> {
  const registry = await loadRegistry(registryFile);
  const gazetteer = registry.gazetteer ? extendedGazetteer(path.resolve(path.dirname(registryFile), registry.gazetteer)) : bundledGazetteer();
  return { registry, gazetteer };
}

export async function processSource(task: SourceTask, inputs: BuildInputs): Promise<SourceOutcome> {
  const started = performance.now();
  const src = inputs.registry.sources.find((s) => s.id === task.sourceId);
  if (!src) throw new Error(`no source ${task.sourceId} in ${task.registryFile}`);
  const report: SourceReport = {
    id: src.id,
    format: src.format,
    status: 'ok',
    error: null,
    item_error: null,
    bytes: 0,
    parsed: 0,
    kept: 0,
    dropped: {},
    merged_duplicates: 0,
    merged_into_other_sources: 0,
    ms: 0,
  };
  const rows: StagedRow[] = [];
  const drop = (r: DropReason, n = 1): void => void (report.dropped[r] = (report.dropped[r] ?? 0) + n);
  const window = { start: DateTime.fromMillis(task.windowStartMs, { zone: LA }), end: DateTime.fromMillis(task.windowEndMs, { zone: LA }) };
  try {
    const fetched = await fetchSource(task.location, {
      cacheDir: task.cacheDir,
      sourceId: src.id,
      timeoutMs: task.fetch?.timeoutMs ?? src.timeout_ms,
      maxBytes: src.max_bytes,
      retries: task.fetch?.retries,
      backoffMs: task.fetch?.backoffMs,
    });
    report.bytes = fetched.bytes;
    if (fetched.notModified) report.status = 'not_modified';
    const parsed = await parseFeed(src.format, fetched.text, {
      window,
      csvColumns: src.csv_columns,
      baseUrl: /^https?:/.test(task.location) ? task.location : src.organizer.url,
    });
    report.parsed = itemCount(parsed);
    if (parsed.noStart) drop('no_start', parsed.noStart);
    if (parsed.outsideWindow) drop('outside_window', parsed.outsideWindow);
    const normalized = normalizeAll(parsed.events, sourceContext(inputs.registry, src, inputs.gazetteer, window));
    for (const [reason, n] of Object.entries(normalized.dropped)) drop(reason as DropReason, n);
    report.merged_duplicates = (parsed.merged ?? 0) + normalized.merged;
    report.item_error = normalized.itemError;
    for (const r of normalized.rows) rows.push(Object.assign(r, { merge_key: sameEventKey(r) }));
  } catch (err) {
    report.status = 'failed';
    report.error = (err as Error).message.slice(0, 500);
    rows.length = 0;
  }
  const staged = rows.length ? await writeStaged(rows, task.stageFile) : 0;
  report.ms = Math.round(performance.now() - started);
  return { report, staged };
}
