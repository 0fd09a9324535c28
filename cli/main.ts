// family-events: the operator's command line. Every subcommand has --help; data goes to stdout
// (JSON with --json), reports and progress to stderr/terminal.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { ConfigError, REPO_ROOT } from '../core/config.ts';
import { CliError, cliConfig } from './common.ts';
import { registerSnapshotCommands } from './snapshot.ts';
import { registerGazetteerCommand, registerNormalizeCommand } from './normalize.ts';
import { registerSampleCommands } from './sample.ts';
import { registerAccountCommands } from './accounts.ts';
import { registerLedgerCommands } from './ledger.ts';

const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

const program = new Command('family-events')
  .description('Family events API: snapshots of Bay Area family events, and the tools around them.')
  .version(pkg.version)
  .showHelpAfterError('(run with --help for usage)')
  .configureOutput({ outputError: (s, write) => write(s) });

registerSnapshotCommands(program);
registerNormalizeCommand(program);
registerGazetteerCommand(program);
registerSampleCommands(program);
registerAccountCommands(program);
registerLedgerCommands(program);

program
  .command('serve')
  .description('Serve the API on HOST:PORT (builds the bundled sample snapshot first if there is none). SIGTERM drains and exits 0.')
  .action(async () => {
    const cfg = cliConfig();
    const { ensureSnapshot } = await import('../server/start/snapshot.ts');
    const { runBuild, WINDOW_DAYS, LOOKBACK_DAYS } = await import('./snapshot.ts');
    await ensureSnapshot(cfg, async () => (await runBuild(cfg, { windowDays: WINDOW_DAYS, lookbackDays: LOOKBACK_DAYS }, true)).manifest);
    const { startServer } = await import('../server/start/main.ts');
    const server = await startServer(cfg);
    const shutdown = (signal: string): void => {
      server.logger.info({ signal }, 'shutting down');
      // Not awaited: a signal handler has nobody to return to. A stop() that fails is an unhandled
      // rejection, which ends the process with code 1 and the error on stderr: right for a shutdown
      // that could not finish.
      void server.stop().then(() => process.exit(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`family-events: configuration: ${err.message}\n`);
    process.exitCode = 2;
  } else if (err instanceof CliError) {
    process.stderr.write(`family-events: ${err.message}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`family-events: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
