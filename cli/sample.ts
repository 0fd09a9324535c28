// family-events sample write: the bundled sample's upstream feeds as files, for inspection.
import path from 'node:path';
import type { Command } from 'commander';
import { DateTime } from 'luxon';
import { CliError, cliConfig, jsonOption } from './common.ts';

export function registerSampleCommands(program: Command): void {
  const sample = program.command('sample').description('The bundled sample data set (generated Bay Area feeds; not real listings).');
  sample
    .command('write')
    .description('Write the sample upstream feeds (iCal, RSS, HTML+JSON-LD, CSV) for a date into a directory.')
    .requiredOption('--out <dir>', 'directory to write the feed files into')
    .option('--date <yyyy-mm-dd>', 'the build date the feeds are rendered for (default: today, or FAMILY_EVENTS_NOW)')
    .addOption(jsonOption())
    .action(async (flags: { out: string; date?: string; json?: boolean }) => {
      const cfg = cliConfig();
      let now = cfg.now();
      if (flags.date) {
        const d = DateTime.fromISO(flags.date, { zone: 'America/Los_Angeles' });
        if (!d.isValid || !/^\d{4}-\d{2}-\d{2}$/.test(flags.date)) throw new CliError('--date must be a calendar date such as 2026-11-21');
        now = d.set({ hour: 12 }).toJSDate();
      }
      const [{ buildWindow }, { bundledGazetteer }, { loadRegistry }, { renderSampleFeeds }] = await Promise.all([
        import('../snapshot/build/build.ts'),
        import('../snapshot/gazetteer.ts'),
        import('../snapshot/registry.ts'),
        import('../snapshot/sample/feeds.ts'),
      ]);
      const registry = await loadRegistry(cfg.sourcesFile);
      const files = await renderSampleFeeds({
        dataDir: cfg.dataDir,
        sources: registry.sources,
        now,
        window: buildWindow(now),
        gazetteer: bundledGazetteer(),
        outDir: path.resolve(flags.out),
      });
      if (flags.json) process.stdout.write(`${JSON.stringify({ files: Object.fromEntries(files) })}\n`);
      else for (const [id, file] of files) process.stdout.write(`${id}\t${file}\n`);
    });
}
