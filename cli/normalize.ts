// family-events normalize FILE...: an upstream file's records exactly as the API would serve them,
// as JSON Lines — for trying a new feed before adding it to the registry. Records are the only
// thing on stdout, so they pipe; the report (a summary, and with --explain every item's fate)
// goes to stderr.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { plainText } from '../snapshot/normalize/text.ts';
import type { Gazetteer } from '../snapshot/gazetteer.ts';
import { CSV_FIELDS, csvColumnsMissing } from '../snapshot/parse/csv.ts';
import { itemCount } from '../snapshot/parse/types.ts';
import { FORMATS, loadRegistry, parseRegistry, type FeedFormat, type Registry, type Source } from '../snapshot/registry.ts';
import type { DropReason } from '../snapshot/types.ts';
import { CliError, cliConfig, jsonOption } from './common.ts';
import type { EventRow } from '../core/record.ts';

interface Flags {
  format?: FeedFormat;
  source?: string;
  organizer?: string;
  site?: string;
  venue?: string;
  destination: string;
  freeByDefault?: boolean;
  csvColumns?: Record<string, string>;
  explain?: boolean;
  json?: boolean;
}

/** "title=name,start=date": our field → the file's header. */
export function parseCsvColumns(value: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const eq = pair.indexOf('=');
    const field = pair.slice(0, eq).trim();
    const header = pair.slice(eq + 1).trim();
    if (eq < 0 || header === '') throw new InvalidArgumentError(`"${pair.trim()}" is not FIELD=HEADER.`);
    if (!CSV_FIELDS.includes(field)) throw new InvalidArgumentError(`"${field}" is not a field; the fields are ${CSV_FIELDS.join(', ')}.`);
    map[field] = header;
  }
  return map;
}

/**
 * What became of one upstream item. `merged` items are another record (`into`) again: the same
 * uid, start and place in one feed (`same: 'uid'`, or an older SEQUENCE of it), or the same title,
 * start and place (`same: 'event'`).
 */
export interface ItemReport {
  file: string;
  /** 1-based among the file's items (CSV: data rows); for iCalendar and JSON-LD, among the events read. */
  position: number;
  uid: string | null;
  title: string | null;
  outcome: 'kept' | 'merged' | DropReason;
  id?: string;
  into?: string | null;
  same?: 'uid' | 'event';
}

function itemLine(r: ItemReport): string {
  const why = r.same === 'uid' ? 'same uid, start and place' : 'same title, start and place';
  const what = r.outcome === 'kept' ? `kept ${r.id}` : r.outcome === 'merged' ? `merged into ${r.into ?? 'another record'} (${why})` : `dropped: ${r.outcome}`;
  return `${r.file} #${r.position}${r.uid ? ` uid=${r.uid}` : ''} ${JSON.stringify(r.title ?? '')}: ${what}`;
}

/** Options naming places that do not exist are refused, with the way to list those that do. */
function checkPlaces(flags: Flags, g: Gazetteer, destinationGiven: boolean): void {
  if (flags.venue !== undefined && !g.venueByKey.has(flags.venue)) {
    throw new CliError(`--venue: no venue "${flags.venue}" in the gazetteer; \`family-events gazetteer --venues\` lists the venue keys`);
  }
  if (destinationGiven && !destinationsOf(g).includes(flags.destination)) {
    throw new CliError(`--destination: no destination "${flags.destination}"; \`family-events gazetteer --destinations\` lists them`);
  }
}

const destinationsOf = (g: Gazetteer): string[] => [...new Set(g.cities.map((c) => c.destination))].sort();

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
    .addOption(new Option('--format <format>', "the files' format (default: guessed from content)").choices(FORMATS))
    .option('--source <id>', 'registry entry that describes the feed (default: the entry whose id is the file name)')
    .option('--organizer <name>', 'organizer name, for a feed not in the registry')
    .option('--site <url>', "organizer's website, for a feed not in the registry")
    .option('--venue <key>', 'gazetteer venue used when an event names no place (`family-events gazetteer --venues` lists them)')
    .option('--destination <slug>', 'destination slug for a feed not in the registry (`family-events gazetteer --destinations` lists them)', 'san-francisco')
    .option('--free-by-default', 'treat events as free unless they say otherwise')
    .option(
      '--csv-columns <map>',
      `for CSV files (every one given), which header holds which field, as FIELD=HEADER pairs separated by commas (over the registry's map and the usual header names), e.g. title=name,start=date,time=time_string,lat=latitude,lng=longitude,location=place_name. Fields: ${CSV_FIELDS.join(', ')}. A "date" column with a "time" column ("6pm-9pm", "9:30-16:30") makes timed events; a time that does not read leaves an all-day event`,
      parseCsvColumns,
    )
    .option('--explain', 'report on stderr what became of every item: kept (with its record id), merged into another record, or the reason it was dropped')
    .option(
      '--json',
      'write the stderr report as JSON Lines: one object per item with --explain ({file, position, uid, title, outcome, id?, into?, same?}), then the summary ({items, records, dropped, merged_duplicates}); items = records + dropped + merged_duplicates',
    )
    .action(async (files: string[], flags: Flags, command: Command) => {
      const cfg = cliConfig();
      const { bundledGazetteer } = await import('../snapshot/gazetteer.ts');
      const g = bundledGazetteer();
      checkPlaces(flags, g, command.getOptionValueSource('destination') === 'cli');
      const [{ toRecord }, { buildWindow }, { mergeRows, sameEventKey }, { normalizeAll, sourceContext }, { decode }, { parseFeed, sniffFormat }] =
        await Promise.all([
          import('../core/record.ts'),
          import('../snapshot/build/build.ts'),
          import('../snapshot/normalize/merge.ts'),
          import('../snapshot/normalize/event.ts'),
          import('../snapshot/build/fetch.ts'),
          import('../snapshot/parse/index.ts'),
        ]);
      const window = buildWindow(cfg.now());
      const rows: EventRow[] = [];
      const dropped: Partial<Record<DropReason, number>> = {};
      const registry = await loadRegistry(cfg.sourcesFile);
      const items: ItemReport[] = [];
      // Kept rows and their reports: a merge decides afterwards which of them stay records.
      const keptReports = new Map<EventRow, ItemReport>();
      // Items merged within their feed, and the row they were merged into (itself maybe merged on).
      const sameUid: [ItemReport, EventRow][] = [];
      let upstreamItems = 0;
      let mergedInFeeds = 0;
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
        const csvColumns = flags.csvColumns ? { ...source.csv_columns, ...flags.csvColumns } : source.csv_columns;
        if (flags.csvColumns && format === 'csv') {
          const { header, missing } = csvColumnsMissing(text, flags.csvColumns);
          if (missing.length) {
            throw new CliError(
              `${file}: --csv-columns names ${missing.map(([f, h]) => `"${h}" (for ${f})`).join(', ')}, which the file does not have; its columns are: ${header.join(', ')}`,
            );
          }
        }
        let parsed;
        try {
          parsed = await parseFeed(format, text, { window, csvColumns, baseUrl: source.organizer.url });
        } catch (err) {
          throw new CliError(`${file}: ${(err as Error).message}`);
        }
        upstreamItems += itemCount(parsed);
        if (parsed.noStart) dropped.no_start = (dropped.no_start ?? 0) + parsed.noStart;
        if (parsed.outsideWindow) dropped.outside_window = (dropped.outside_window ?? 0) + parsed.outsideWindow;
        mergedInFeeds += parsed.merged ?? 0;
        // Events are the items the parser did not skip, in order (RSS and CSV read one event per item).
        const skipped = parsed.noStartItems ?? [];
        for (const s of skipped) items.push({ file, position: s.position + 1, uid: s.uid, title: plainText(s.title), outcome: 'no_start' });
        const positions: number[] = [];
        const skippedAt = new Set(skipped.map((s) => s.position));
        for (let p = 0; positions.length < parsed.events.length; p++) if (!skippedAt.has(p)) positions.push(p + 1);
        const onItem = (i: number, outcome: EventRow | DropReason, mergedInto: boolean): void => {
          const raw = parsed.events[i]!;
          const report: ItemReport = {
            file,
            position: positions[i]!,
            uid: raw.uid,
            title: typeof outcome === 'string' || mergedInto ? plainText(raw.title) : outcome.title,
            outcome: typeof outcome === 'string' ? outcome : 'kept',
          };
          if (typeof outcome === 'string') items.push(report);
          else if (mergedInto) sameUid.push([{ ...report, outcome: 'merged', same: 'uid' }, outcome]);
          else keptReports.set(outcome, { ...report, id: outcome.id });
        };
        const normalized = normalizeAll(parsed.events, sourceContext(registry, source, g, window), flags.explain ? onItem : undefined);
        // What this format does not list item by item: counted, and said so.
        const unlisted: [DropReason | 'merged', number, string][] = [
          ['no_start', parsed.noStart - skipped.length, 'items without a readable start'],
          ['outside_window', parsed.outsideWindow ?? 0, 'recurring series with no occurrence in the window'],
          ['merged', parsed.merged ?? 0, 'overrides (RECURRENCE-ID) merged into the occurrence they revise, or into a later revision (higher SEQUENCE)'],
        ];
        for (const [outcome, n, what] of unlisted) {
          if (!flags.explain || n <= 0) continue;
          process.stderr.write(
            flags.json ? `${JSON.stringify({ file, outcome, items: n })}\n` : `${file}: ${n} ${what} (this format does not list them one by one)\n`,
          );
        }
        mergedInFeeds += normalized.merged;
        for (const [k, n] of Object.entries(normalized.dropped)) dropped[k as DropReason] = (dropped[k as DropReason] ?? 0) + n;
        if (normalized.itemError) process.stderr.write(`${file}: an item could not be normalized: ${normalized.itemError}\n`);
        rows.push(...normalized.rows);
      }
      const merged = mergeRows(rows);
      // Not in a snapshot yet: the records are stamped as a build at this moment would stamp them,
      // with one reading of the clock (two could straddle a millisecond: created after updated).
      const at = Date.now();
      const stamp = { created_ms: at, updated_ms: at };
      const out: string[] = merged.rows.map((r) => JSON.stringify(toRecord({ ...r, ...stamp }, cfg.webBaseUrl)));
      if (out.length) process.stdout.write(`${out.join('\n')}\n`);
      // Every row that is not a record was merged into one: counting rows, not mergedAway (which
      // counts only rows whose id differs from the record's), also counts the same event given in
      // two files of one command line, where both rows get the same id.
      const mergedDuplicates = mergedInFeeds + rows.length - merged.rows.length;
      if (flags.explain) {
        const served = new Set(merged.rows.map((r) => r.id));
        const byEvent = new Map(merged.rows.map((r) => [sameEventKey(r), r.id]));
        const claimed = new Set<string>();
        for (const [row, report] of keptReports) {
          // The first listing of a served id is the record; a later one with that id was merged into it.
          if (served.has(row.id) && !claimed.has(row.id)) {
            claimed.add(row.id);
            items.push(report);
          } else items.push({ ...report, outcome: 'merged', into: byEvent.get(sameEventKey(row)) ?? (served.has(row.id) ? row.id : null), same: 'event' });
        }
        for (const [report, row] of sameUid) items.push({ ...report, into: byEvent.get(sameEventKey(row)) ?? row.id });
        items.sort((a, b) => (a.file === b.file ? a.position - b.position : files.indexOf(a.file) - files.indexOf(b.file)));
        for (const item of items) process.stderr.write(`${flags.json ? JSON.stringify(item) : itemLine(item)}\n`);
      }
      if (flags.json) {
        process.stderr.write(`${JSON.stringify({ items: upstreamItems, records: merged.rows.length, dropped, merged_duplicates: mergedDuplicates })}\n`);
        return;
      }
      const drops = Object.entries(dropped).map(([k, n]) => `${k} ${n}`);
      process.stderr.write(
        `${upstreamItems} items → ${merged.rows.length} records${drops.length ? `; dropped: ${drops.join(', ')}` : ''}; merged duplicates: ${mergedDuplicates}\n`,
      );
    });
}

/** `family-events gazetteer`: the names `normalize --venue` and `--destination` accept. */
export function registerGazetteerCommand(program: Command): void {
  program
    .command('gazetteer')
    .description(
      "List the bundled gazetteer's venue keys (key, name, city; tab-separated) and destination slugs: what `normalize --venue` and `--destination` accept.",
    )
    .option('--venues', 'only the venues')
    .option('--destinations', 'only the destinations')
    .addOption(jsonOption())
    .action(async (flags: { venues?: boolean; destinations?: boolean; json?: boolean }) => {
      const { bundledGazetteer } = await import('../snapshot/gazetteer.ts');
      const g = bundledGazetteer();
      const both = !flags.venues && !flags.destinations;
      const venues =
        both || flags.venues
          ? [...g.venueByKey.values()].map((v) => ({ key: v.key, name: v.name, city: v.city })).sort((a, b) => (a.key < b.key ? -1 : 1))
          : null;
      const destinations = both || flags.destinations ? destinationsOf(g) : null;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ ...(venues ? { venues } : {}), ...(destinations ? { destinations } : {}) })}\n`);
        return;
      }
      const lines = [
        ...(venues ? [...(both ? ['# venues'] : []), ...venues.map((v) => `${v.key}\t${v.name}\t${v.city}`)] : []),
        ...(destinations ? [...(both ? ['# destinations'] : []), ...destinations] : []),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
