// family-events normalize FILE...: an upstream file's records exactly as the API would serve them,
// as JSON Lines — for trying a new feed before adding it to the registry.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { FORMATS, loadRegistry, parseRegistry, type FeedFormat, type Registry, type Source } from '../workers/snapshot/registry.ts';
import type { DropReason, EventRow } from '../workers/snapshot/types.ts';
import { CliError, cliConfig } from './common.ts';

interface Flags {
  format?: FeedFormat;
  source?: string;
  organizer?: string;
  site?: string;
  venue?: string;
  destination: string;
  freeByDefault?: boolean;
}

function sourceFor(file: string, flags: Flags, registry: Registry, registryFile: string): Source {
  const byId = flags.source ?? path.basename(file).replace(/\.[^.]+$/, '');
  const known = registry.sources.find((s) => s.id === byId);
  if (flags.source && !known) throw new CliError(`no source "${flags.source}" in ${registryFile}`);
  if (known && !flags.organizer) return known;
  if (!flags.organizer || !flags.site) {
    throw new CliError(`${file}: say whose feed this is: --source ID (a registry entry) or --organizer NAME --site URL`);
  }
  return parseRegistry(
    {
      sources: [
        {
          id: 'local',
          url: file,
          format: flags.format ?? 'csv',
          organizer: { name: flags.organizer, url: flags.site },
          ...(flags.venue ? { default_venue: flags.venue } : {}),
          destination: flags.destination,
          attribution: flags.organizer,
          free_by_default: flags.freeByDefault ?? false,
        },
      ],
    },
    '(command line)',
  ).sources[0]!;
}

export function registerNormalizeCommand(program: Command): void {
  program
    .command('normalize')
    .description('Print the normalized records of upstream feed files as JSON Lines, exactly as the API would serve them.')
    .argument('<file...>', 'iCalendar, RSS/Atom, HTML with JSON-LD, or CSV files')
    .addOption(new Option('--format <format>', 'the files\' format (default: guessed from content)').choices(FORMATS))
    .option('--source <id>', 'registry entry that describes the feed (default: the entry whose id is the file name)')
    .option('--organizer <name>', 'organizer name, for a feed not in the registry')
    .option('--site <url>', "organizer's website, for a feed not in the registry")
    .option('--venue <key>', 'gazetteer venue used when an event names no place')
    .option('--destination <slug>', 'destination slug for a feed not in the registry', 'san-francisco')
    .option('--free-by-default', 'treat events as free unless they say otherwise')
    .action(async (files: string[], flags: Flags) => {
      const cfg = cliConfig();
      const [{ toRecord }, { buildWindow }, { bundledGazetteer }, { mergeRows }, { normalizeAll, sourceContext }, { decode }, { parseFeed, sniffFormat }] = await Promise.all([
        import('../workers/record.ts'),
        import('../workers/snapshot/build.ts'),
        import('../workers/snapshot/gazetteer.ts'),
        import('../workers/snapshot/normalize/merge.ts'),
        import('../workers/snapshot/normalize/event.ts'),
        import('../workers/snapshot/fetch.ts'),
        import('../workers/snapshot/parse/index.ts'),
      ]);
      const g = bundledGazetteer();
      const window = buildWindow(cfg.now());
      const rows: EventRow[] = [];
      const dropped: Partial<Record<DropReason, number>> = {};
      const registry = await loadRegistry(cfg.sourcesFile);
      for (const file of files) {
        let buf: Buffer;
        try {
          buf = await readFile(file);
        } catch (err) {
          throw new CliError(`${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
        }
        const text = decode(buf, null);
        const format = flags.format ?? sniffFormat(text, file);
        const source = { ...sourceFor(file, flags, registry, cfg.sourcesFile), format };
        let parsed;
        try {
          parsed = await parseFeed(format, text, { window, csvColumns: source.csv_columns, baseUrl: source.organizer.url });
        } catch (err) {
          throw new CliError(`${file}: ${(err as Error).message}`);
        }
        if (parsed.noStart) dropped.no_start = (dropped.no_start ?? 0) + parsed.noStart;
        const normalized = normalizeAll(parsed.events, sourceContext(registry, source, g, window));
        for (const [k, n] of Object.entries(normalized.dropped)) dropped[k as DropReason] = (dropped[k as DropReason] ?? 0) + n;
        if (normalized.itemError) process.stderr.write(`${file}: an item could not be normalized: ${normalized.itemError}\n`);
        rows.push(...normalized.rows);
      }
      const merged = mergeRows(rows);
      const out: string[] = merged.rows.map((r) => JSON.stringify(toRecord(r, cfg.webBaseUrl)));
      if (out.length) process.stdout.write(`${out.join('\n')}\n`);
      const drops = Object.entries(dropped).map(([k, n]) => `${k} ${n}`);
      process.stderr.write(`${merged.rows.length} records${drops.length ? `; dropped: ${drops.join(', ')}` : ''}\n`);
    });
}
