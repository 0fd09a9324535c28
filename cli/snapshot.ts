// family-events snapshot build|status
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { DateTime } from 'luxon';
import type { Config } from '../core/config.ts';
import type { BuildResult } from '../snapshot/build/build.ts';
import type { Manifest } from '../snapshot/store.ts';
import { CliError, cliConfig, jsonOption, positiveInt } from './common.ts';
import { progress } from './progress.ts';

// The builder's defaults, restated so that --help does not load the builder (a test checks they agree).
export const WINDOW_DAYS = 90;
export const LOOKBACK_DAYS = 14;

interface BuildFlags {
  sources?: string;
  synthetic?: number;
  seed: number;
  windowDays: number;
  lookbackDays: number;
  json?: boolean;
}

function table(m: Manifest): string {
  const head = ['source', 'format', 'status', 'parsed', 'kept', 'dropped', 'merged', 'KiB', 'ms'];
  const rows = m.sources.map((s) => [
    s.id,
    s.format,
    s.status,
    String(s.parsed),
    String(s.kept),
    String(Object.values(s.dropped).reduce((a, b) => a + (b ?? 0), 0)),
    // Copies within the feed and copies of another record: parsed = kept + dropped + merged. Older manifests lack the first.
    String((s.merged_duplicates ?? 0) + s.merged_into_other_sources),
    (s.bytes / 1024).toFixed(0),
    String(s.ms),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const failures = m.sources.filter((s) => s.error).map((s) => `  ${s.id}: ${s.error}`);
  const dropped =
    Object.entries(m.counts.dropped)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  return [
    line(head),
    ...rows.map(line),
    '',
    `snapshot ${m.id}: ${m.counts.events} events, ${m.counts.venues} venues, ${m.cities.length} cities from ${m.counts.sources - m.counts.sources_failed}/${m.counts.sources} sources`,
    `merged across sources: ${m.counts.merged_across_sources}; dropped: ${dropped}`,
    `parquet ${(m.files.events_bytes / 1024 / 1024).toFixed(2)} MiB; built in ${(m.build_ms / 1000).toFixed(1)} s (${Math.round(m.counts.events / (m.build_ms / 1000))} events/s)`,
    ...(failures.length ? ['failed sources:', ...failures] : []),
  ].join('\n');
}

/** Writes (once per N and seed) the synthetic feeds under DATA_DIR/synthetic and returns their registry. */
async function syntheticRegistry(cfg: Config, events: number, seed: number, windowDays: number, bar: ReturnType<typeof progress>): Promise<string> {
  const dir = path.join(cfg.dataDir, 'synthetic', `${events}-${seed}-${DateTime.fromJSDate(cfg.now()).toISODate()}`);
  const registry = path.join(dir, 'registry.json');
  if (
    await stat(registry).then(
      () => true,
      () => false,
    )
  )
    return registry;
  const { writeSynthetic, syntheticStart } = await import('../snapshot/sample/synthetic.ts');
  return writeSynthetic({ events, seed, outDir: dir, start: syntheticStart(cfg.now()), days: windowDays }, (done, total) =>
    bar.update(done, total, 'generating'),
  );
}

export async function runBuild(cfg: Config, flags: Omit<BuildFlags, 'json' | 'seed'> & { seed?: number }, showProgress: boolean): Promise<BuildResult> {
  const { BuildError, buildSnapshot } = await import('../snapshot/build/build.ts');
  const { RegistryError } = await import('../snapshot/registry.ts');
  const bar = progress(showProgress);
  try {
    const registryFile = flags.synthetic
      ? await syntheticRegistry(cfg, flags.synthetic, flags.seed ?? 1, flags.windowDays, bar)
      : (flags.sources ?? cfg.sourcesFile);
    return await buildSnapshot({
      dataDir: cfg.dataDir,
      registryFile,
      now: cfg.now(),
      windowDays: flags.windowDays,
      lookbackDays: flags.lookbackDays,
      onProgress: (p) => bar.update(p.done, p.total, p.phase === 'sources' ? 'sources' : 'writing'),
    });
  } catch (err) {
    if (err instanceof BuildError || err instanceof RegistryError) throw new CliError(`snapshot build failed: ${err.message}`);
    throw err;
  } finally {
    bar.stop();
  }
}

/** Records `id` as the snapshot every node serves, with what to do when the ledger cannot be reached. */
async function recordInLedger(cfg: Config, id: string): Promise<void> {
  if (!cfg.database) return;
  const { recordSnapshot } = await import('../ledger/postgres/cluster.ts');
  try {
    await recordSnapshot(cfg.database, id);
  } catch (err) {
    throw new CliError(
      `snapshot ${id} is in ${path.join(cfg.dataDir, 'snapshots')}, but the shared ledger (DATABASE_URL) could not record it (${(err as Error).message}); the nodes keep serving the previous one. Once PostgreSQL answers: family-events snapshot publish ${id}`,
    );
  }
}

export function registerSnapshotCommands(program: Command): void {
  const snapshot = program.command('snapshot').description('Build and inspect event snapshots under DATA_DIR/snapshots.');

  snapshot
    .command('build')
    .description(
      'Fetch every source in the registry, normalize, and publish a new snapshot (atomically switches `current`; with DATABASE_URL, also records it in the shared ledger, and every node switches to it).',
    )
    .option('--sources <file>', 'source registry to build from (default: SOURCES_FILE, else the bundled sample registry)')
    .option(
      '--synthetic <n>',
      'build a deterministic synthetic set of N events over many destinations instead (benchmarks; up to 10,000,000)',
      positiveInt('--synthetic', 10_000_000),
    )
    .option('--seed <n>', 'seed of the synthetic set', positiveInt('--seed'), 1)
    .option('--window-days <n>', 'days after now to keep events for', positiveInt('--window-days', 730), WINDOW_DAYS)
    .option('--lookback-days <n>', 'days before now to keep events for', positiveInt('--lookback-days', 365), LOOKBACK_DAYS)
    .addOption(jsonOption())
    .action(async (flags: BuildFlags) => {
      const cfg = cliConfig();
      const { manifest } = await runBuild(cfg, flags, !flags.json);
      if (cfg.database) await recordInLedger(cfg, manifest.id);
      process.stdout.write(flags.json ? `${JSON.stringify(manifest)}\n` : `${table(manifest)}\n`);
    });

  snapshot
    .command('publish')
    .description(
      'Make a snapshot under DATA_DIR/snapshots the one every node serves (DATABASE_URL): the current one by default, or an earlier one to roll back to.',
    )
    .argument('[id]', 'snapshot id (a directory under DATA_DIR/snapshots)')
    .addOption(jsonOption())
    .action(async (wanted: string | undefined, flags: { json?: boolean }) => {
      const cfg = cliConfig();
      if (!cfg.database)
        throw new CliError('publish records the snapshot in the shared ledger: set DATABASE_URL (one node without it serves DATA_DIR/snapshots/current).');
      const { currentSnapshotId, readManifest, SNAPSHOT_SCHEMA_VERSION } = await import('../snapshot/store.ts');
      const id = wanted ?? (await currentSnapshotId(cfg.dataDir));
      if (!id) throw new CliError(`no snapshot under ${cfg.dataDir}; run \`family-events snapshot build\``);
      const m = await readManifest(cfg.dataDir, id).catch(() => null);
      if (!m) throw new CliError(`no snapshot ${id} under ${path.join(cfg.dataDir, 'snapshots')}; the nodes could not load it.`);
      if (m.schema_version !== SNAPSHOT_SCHEMA_VERSION)
        throw new CliError(`snapshot ${id} has layout ${m.schema_version}; this version serves ${SNAPSHOT_SCHEMA_VERSION}. Build a new one.`);
      await recordInLedger(cfg, id);
      process.stdout.write(flags.json ? `${JSON.stringify({ snapshot: id })}\n` : `every node now switches to snapshot ${id}\n`);
    });

  snapshot
    .command('status')
    .description('Show the current snapshot: id, build time, counts and per-source report.')
    .addOption(jsonOption())
    .action(async (flags: { json?: boolean }) => {
      const cfg = cliConfig();
      const { currentSnapshotId, readManifest } = await import('../snapshot/store.ts');
      const id = await currentSnapshotId(cfg.dataDir);
      if (!id) throw new CliError(`no snapshot under ${cfg.dataDir}; run \`family-events snapshot build\``);
      const m = await readManifest(cfg.dataDir, id);
      process.stdout.write(flags.json ? `${JSON.stringify(m)}\n` : `built ${m.built_at}, window ${m.window.start} … ${m.window.end}\n${table(m)}\n`);
    });
}
