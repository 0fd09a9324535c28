// Moving a single node's embedded ledger (LEDGER_DIR's accounts.sqlite and usage.sqlite) into the
// shared PostgreSQL ledger: `family-events ledger copy --from sqlite --to postgres`. Everything is
// written in one transaction and verified inside it (row counts, each organization's usage totals)
// before it commits, so a copy either lands whole or leaves the target as it was.
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { DatabaseSettings } from '../core/config.ts';
import { migrateLedger } from './ledger-admin.ts';
import { one, openPool, pgQuery, rows, transaction } from '../ledger/postgres/db.ts';
import { announce } from '../ledger/postgres/cluster.ts';
import type { Totals } from '../ledger/rules.ts';
import { ledgerQuery, takeWriterLock } from '../ledger/sqlite/store.ts';

/** The tables copied, in the order their references need. */
export const COPIED_TABLES = [
  'plans',
  'users',
  'organizations',
  'api_keys',
  'identities',
  'memberships',
  'sessions',
  'login_tokens',
  'login_codes',
  'usage_days',
] as const;
export type CopiedTable = (typeof COPIED_TABLES)[number];

export interface CopySummary {
  /** Migrations the target needed first (versions). */
  readonly migrated: readonly number[];
  /** Rows copied per table (plans: the source's, upserted). */
  readonly rows: Readonly<Record<CopiedTable, number>>;
  /** All usage copied, and over how many organizations. */
  readonly usage: { readonly organizations: number; readonly records: number; readonly requests: number };
}

/** Rows per INSERT: one JSON parameter each, well under any statement timeout. */
const CHUNK = 2000;

/** Columns each table must have in the file: an older file lacks some until a current server or command opens it. */
const NEEDED: Readonly<Record<Exclude<CopiedTable, 'usage_days'>, readonly string[]>> = {
  plans: ['name', 'requests_per_minute'],
  users: ['id'],
  organizations: ['id'],
  api_keys: ['created_by', 'revoke_at'],
  identities: ['issuer'],
  memberships: ['org_id'],
  sessions: ['token_hash'],
  login_tokens: ['token_hash', 'invited_by', 'mailbox'],
  login_codes: ['code_hash', 'attempts'],
};

function openSource(file: string): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  // A command line writing accounts.sqlite for a moment: wait for it.
  db.pragma('busy_timeout = 5000');
  return db;
}

function checkSchema(accounts: Database.Database): void {
  for (const [table, columns] of Object.entries(NEEDED)) {
    const have = new Set((accounts.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name));
    const lacking = columns.filter((c) => !have.has(c));
    if (lacking.length > 0) {
      throw new Error(
        `accounts.sqlite was made by an older version (${have.size === 0 ? `no ${table} table` : `${table} lacks ${lacking.join(', ')}`}); run \`family-events keys list\` once without DATABASE_URL set (it brings the file up to date), then copy again.`,
      );
    }
  }
}

function lockLedger(dir: string): { release(): void } {
  try {
    return takeWriterLock(dir);
  } catch (err) {
    if (((err as Error).cause as { code?: string } | undefined)?.code === 'SQLITE_BUSY') {
      throw new Error(
        `a server is running on ${dir} (it holds writer.lock): stop it first, so that nothing is charged to the files after the copy, then copy again. Nothing was written.`,
        { cause: err },
      );
    }
    throw err;
  }
}

/** What the tables' rows are, one and many. */
export const ROW_NAMES: Readonly<Record<CopiedTable, readonly [string, string]>> = {
  plans: ['plan', 'plans'],
  users: ['user', 'users'],
  organizations: ['organization', 'organizations'],
  api_keys: ['key', 'keys'],
  identities: ['identity', 'identities'],
  memberships: ['membership', 'memberships'],
  sessions: ['session', 'sessions'],
  login_tokens: ['sign-in link', 'sign-in links'],
  login_codes: ['sign-in code', 'sign-in codes'],
  usage_days: ['usage row', 'usage rows'],
};

/** "3 keys, 1 user": the tables' counts in words. */
export const describeRows = (counts: Readonly<Partial<Record<CopiedTable, number>>>, all = false): string =>
  COPIED_TABLES.filter((t) => counts[t] !== undefined && (all || counts[t] > 0))
    .map((t) => `${counts[t]} ${ROW_NAMES[t][counts[t] === 1 ? 0 : 1]}`)
    .join(', ');

/** Per organization, records and requests, as "org:records:requests" lines to compare. */
const totalsText = (t: readonly (Totals & { org_id: string })[]): string => t.map((r) => `${r.org_id}:${r.records}:${r.requests}`).join('\n');

/**
 * Copies LEDGER_DIR's files into the PostgreSQL ledger (migrated first). Refuses, writing nothing,
 * while a server holds the directory's writer lock, and when the target already holds accounts or
 * usage (a copy is a move, not a merge).
 */
export async function copySqliteToPostgres(dir: string, database: DatabaseSettings): Promise<CopySummary> {
  const accountsFile = path.join(dir, 'accounts.sqlite');
  if (!existsSync(accountsFile)) {
    throw new Error(`there is no embedded ledger to copy: ${accountsFile} does not exist. Set LEDGER_DIR (or DATA_DIR) to the directory the server used.`);
  }
  // Held for the whole copy: no server can start charging these files meanwhile.
  const lock = lockLedger(dir);
  let accounts: Database.Database | null = null;
  let usage: Database.Database | null = null;
  let pool: ReturnType<typeof openPool> | null = null;
  try {
    const migrated = await migrateLedger(database);
    accounts = openSource(accountsFile);
    checkSchema(accounts);
    const usageFile = path.join(dir, 'usage.sqlite');
    usage = existsSync(usageFile) ? openSource(usageFile) : null;
    // One read snapshot of each file (the command line may still add a key to accounts.sqlite).
    accounts.exec('BEGIN');
    usage?.exec('BEGIN');
    const source = { accounts, usage };

    const planNames = (accounts.prepare(ledgerQuery('copy_plans')).all() as { name: string }[]).map((p) => p.name);
    const sourceTotals = (usage?.prepare(ledgerQuery('usage_totals_by_org')).all() ?? []) as (Totals & { org_id: string })[];

    pool = openPool({ ...database, poolMax: 1 }, 'family-events ledger copy');
    const copied = await transaction(pool, async (c) => {
      await c.query(pgQuery('copy_lock'));
      const before = (await one<Record<CopiedTable, number>>(c, 'copy_counts', { plan_names: [] }))!;
      // Plans are no obstacle: the migration seeds the shipped ones, and the copy's win.
      const held: Partial<Record<CopiedTable, number>> = { ...before, plans: 0 };
      if (Object.values(held).some((count) => count > 0)) {
        throw new Error(
          `the PostgreSQL ledger at DATABASE_URL already holds ${describeRows(held)}: copy only into a new, empty ledger (a new database). Nothing was written.`,
        );
      }
      const counts = {} as Record<CopiedTable, number>;
      for (const table of COPIED_TABLES) {
        const db = table === 'usage_days' ? source.usage : source.accounts;
        counts[table] = 0;
        if (db === null) continue;
        let chunk: unknown[] = [];
        const flush = async (): Promise<void> => {
          if (chunk.length === 0) return;
          await c.query(pgQuery(`copy_${table}`, { rows: JSON.stringify(chunk) }));
          counts[table] += chunk.length;
          chunk = [];
        };
        for (const row of db.prepare(ledgerQuery(`copy_${table}`)).iterate()) {
          chunk.push(row);
          if (chunk.length >= CHUNK) await flush();
        }
        await flush();
      }

      // Checked before the commit: a mismatch rolls everything back.
      const after = (await one<Record<CopiedTable, number>>(c, 'copy_counts', { plan_names: planNames }))!;
      const differ = COPIED_TABLES.filter((t) => after[t] !== counts[t]);
      if (differ.length > 0) {
        throw new Error(
          `the copy did not verify: ${differ.map((t) => `${t} has ${after[t]} rows where the files have ${counts[t]}`).join('; ')}. Nothing was written.`,
        );
      }
      const targetTotals = await rows<Totals & { org_id: string }>(c, 'copy_usage_totals');
      if (totalsText(targetTotals) !== totalsText(sourceTotals)) {
        throw new Error("the copy did not verify: the organizations' usage totals differ from the files'. Nothing was written.");
      }
      // Nodes already running on this ledger re-read the accounts at the commit.
      await announce(c, 'accounts');
      return counts;
    });
    return {
      migrated,
      rows: copied,
      usage: {
        organizations: sourceTotals.length,
        records: sourceTotals.reduce((s, t) => s + t.records, 0),
        requests: sourceTotals.reduce((s, t) => s + t.requests, 0),
      },
    };
  } finally {
    if (accounts?.inTransaction) accounts.exec('COMMIT');
    if (usage?.inTransaction) usage.exec('COMMIT');
    accounts?.close();
    usage?.close();
    await pool?.end();
    lock.release();
  }
}
