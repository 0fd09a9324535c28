// family-events ledger migrate|copy: the shared PostgreSQL ledger at DATABASE_URL — its schema, and
// moving a single node's embedded ledger (LEDGER_DIR) into it before starting several nodes.
import type { Command } from 'commander';
import type { DatabaseSettings } from '../core/config.ts';
import { CliError, cliConfig, jsonOption } from './common.ts';

function print(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

function database(command: string): DatabaseSettings {
  const db = cliConfig().database;
  if (db === null) {
    throw new CliError(
      `DATABASE_URL is not set: \`family-events ${command}\` works on the PostgreSQL ledger it names; set it, e.g. DATABASE_URL=postgresql://family_events@db.internal/family_events.`,
    );
  }
  return db;
}

const SUPPORTED = '--from sqlite --to postgres';

export function registerLedgerCommands(program: Command): void {
  const ledger = program
    .command('ledger')
    .description("The shared PostgreSQL ledger (DATABASE_URL) that several API nodes use: apply its schema, copy a single node's embedded ledger into it.");

  ledger
    .command('migrate')
    .description(
      'Apply the schema migrations (sql/postgres/NNNN_*.sql) the database at DATABASE_URL lacks. Safe to run at any time, and while nodes run: each migration applies once.',
    )
    .addOption(jsonOption())
    .action(async (o: { json?: boolean }) => {
      const settings = database('ledger migrate');
      const { migrateLedger } = await import('./ledger-admin.ts');
      const { migrationLabel, migrations } = await import('../ledger/postgres/migrate.ts');
      const applied = await migrateLedger(settings);
      const all = migrations();
      const named = applied.map((v) => ({ version: v, name: all.find((m) => m.version === v)?.name ?? '' }));
      const version = Math.max(0, ...all.map((m) => m.version));
      print(
        o.json,
        { applied: named, version },
        named.length > 0
          ? [...named.map((m) => `applied ${migrationLabel(m)}`), `the ledger schema is at version ${version}`].join('\n')
          : `the ledger schema is current (version ${version}); nothing to apply`,
      );
    });

  ledger
    .command('copy')
    .description(
      'Copy the embedded ledger (LEDGER_DIR/accounts.sqlite and usage.sqlite) into the empty PostgreSQL ledger at DATABASE_URL, in one transaction, and verify it. Stop the server first; the files are only read.',
    )
    .requiredOption('--from <backend>', 'where the ledger is now: sqlite')
    .requiredOption('--to <backend>', 'where it goes: postgres')
    .addOption(jsonOption())
    .action(async (o: { from: string; to: string; json?: boolean }) => {
      if (o.from !== 'sqlite' || o.to !== 'postgres') {
        throw new CliError(
          `cannot copy --from ${o.from} --to ${o.to}: the one supported copy is ${SUPPORTED} (the embedded ledger in LEDGER_DIR into the PostgreSQL ledger at DATABASE_URL).`,
        );
      }
      const settings = database(`ledger copy ${SUPPORTED}`);
      const dir = cliConfig().ledgerDir;
      const { copySqliteToPostgres, describeRows } = await import('./ledger-copy.ts');
      const { migrationLabel, migrations } = await import('../ledger/postgres/migrate.ts');
      const done = await copySqliteToPostgres(dir, settings);
      const migrated = done.migrated.map((v) => migrationLabel({ version: v, name: migrations().find((m) => m.version === v)?.name ?? '' }));
      const r = done.rows;
      print(
        o.json,
        { from: 'sqlite', to: 'postgres', ledger_dir: dir, migrated, rows: r, usage: done.usage, verified: true },
        [
          ...(migrated.length > 0 ? [`applied ${migrated.join(', ')} to DATABASE_URL first`] : []),
          `copied ${dir} into the PostgreSQL ledger at DATABASE_URL, in one transaction:`,
          `  ${describeRows(r, true)}`,
          `  usage: ${done.usage.records} records and ${done.usage.requests} requests of ${done.usage.organizations} organization${done.usage.organizations === 1 ? '' : 's'}`,
          "verified: every table's row count and each organization's usage totals match the files.",
          'Start the nodes with DATABASE_URL set; the files in LEDGER_DIR are left as they were.',
        ].join('\n'),
      );
    });
}
