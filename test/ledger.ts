// The two ledger backends for suites that run once on each: the embedded SQLite ledger in a
// LEDGER_DIR of the test's own, and the shared PostgreSQL ledger in a database of the test's own
// (skipped with the reason where no PostgreSQL server answers). A TestLedger is what such a suite
// needs of either: the environment a server gets, keys and plans made as the command line makes
// them, and the usage rows read straight from the durable store, not through a server.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { openPool } from '../ledger/postgres/db.ts';
import { migrate } from '../ledger/postgres/migrate.ts';
import type { DatabaseSettings } from '../core/config.ts';
import { PgAccounts } from '../ledger/postgres/store.ts';
import { AccountsDb } from '../ledger/sqlite/store.ts';
import { postgresMissing, testDatabase, type TestDatabase } from './pg.ts';
import type { Plan } from '../ledger/accounts.ts';

export interface LedgerBackend {
  /** For suite titles: "on the embedded ledger", "on PostgreSQL". */
  readonly name: string;
  readonly postgres: boolean;
  /** The skip reason (no PostgreSQL server here), or false. */
  readonly skip: string | false;
}

/** Both backends, the embedded one first; PostgreSQL's carries the skip reason where no server answers. */
export async function ledgerBackends(): Promise<readonly LedgerBackend[]> {
  const missing = await postgresMissing();
  return [
    { name: 'the embedded ledger', postgres: false, skip: false },
    { name: 'PostgreSQL', postgres: true, skip: missing ?? false },
  ];
}

export interface ProvisionOptions {
  readonly org?: string;
  readonly plan?: string | Plan;
  readonly email?: string;
}

export interface Provisioned {
  readonly key: string;
  readonly orgId: string;
  readonly keyId: string;
}

export interface UsageTotals {
  readonly records: number;
  readonly requests: number;
}

export interface TestLedger {
  readonly backend: LedgerBackend;
  /** LEDGER_DIR: the embedded ledger itself, or (on PostgreSQL) an empty directory a server may still be given. */
  readonly dir: string;
  /** The test's own database on PostgreSQL, else null. */
  readonly databaseUrl: string | null;
  /** What a server on this ledger gets in its environment: LEDGER_DIR, and DATABASE_URL on PostgreSQL. */
  readonly env: Readonly<Record<string, string>>;
  setPlan(plan: Plan): Promise<void>;
  createKey(orgName: string, email: string, plan: string): Promise<Provisioned>;
  /** A key as `family-events keys create` makes one; the plan is added first when one is given. */
  provisionKey(opts?: ProvisionOptions): Promise<Provisioned>;
  /** Every key: its id and organization. */
  keys(): Promise<{ readonly id: string; readonly org_id: string }[]>;
  /** usage_days summed per organization over [firstDay, lastDay] (YYYY-MM-DD; every day when omitted), from the store itself. */
  usageByOrg(firstDay?: string, lastDay?: string): Promise<Map<string, UsageTotals>>;
  /** Closes what the ledger opened and removes the directory and the database. */
  drop(): Promise<void>;
}

const settings = (url: string): DatabaseSettings => ({ url, poolMax: 2, statementTimeoutMs: 10_000 });

const randomOrg = (): string => `Test org ${Math.random().toString(36).slice(2)}`;

async function provisionWith(ledger: Pick<TestLedger, 'setPlan' | 'createKey'>, opts: ProvisionOptions): Promise<Provisioned> {
  let planName = 'community';
  if (typeof opts.plan === 'string') planName = opts.plan;
  else if (opts.plan) {
    await ledger.setPlan(opts.plan);
    planName = opts.plan.name;
  }
  return ledger.createKey(opts.org ?? randomOrg(), opts.email ?? 'dev@test.example', planName);
}

const FIRST_DAY = '0001-01-01';
const LAST_DAY = '9999-12-31';

/** A fresh ledger of the backend: an empty LEDGER_DIR, and on PostgreSQL an empty database with the schema applied. */
export async function testLedger(backend: LedgerBackend, label: string): Promise<TestLedger> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `fe-${label.replace(/\W/g, '-')}-ledger-`));
  if (backend.postgres) return postgresLedger(backend, label, dir);
  let accounts: AccountsDb | null = null;
  const open = (): AccountsDb => (accounts ??= AccountsDb.open(dir));
  const ledger: TestLedger = {
    backend,
    dir,
    databaseUrl: null,
    env: { LEDGER_DIR: dir },
    setPlan: async (plan) => open().setPlan(plan),
    createKey: async (orgName, email, plan) => {
      const made = open().createKey(orgName, email, plan);
      return { key: made.key, orgId: made.org.id, keyId: made.keyId };
    },
    provisionKey: (opts = {}) => provisionWith(ledger, opts),
    keys: async () => open().keys(),
    usageByOrg: async (firstDay = FIRST_DAY, lastDay = LAST_DAY) => {
      const db = new Database(path.join(dir, 'usage.sqlite'), { readonly: true, fileMustExist: true });
      try {
        const rows = db
          .prepare('SELECT org_id, sum(records) AS records, sum(requests) AS requests FROM usage_days WHERE day >= ? AND day <= ? GROUP BY org_id')
          .all(firstDay, lastDay) as { org_id: string; records: number; requests: number }[];
        return new Map(rows.map((r) => [r.org_id, { records: r.records, requests: r.requests }]));
      } finally {
        db.close();
      }
    },
    drop: async () => {
      accounts?.close();
      accounts = null;
      await rm(dir, { recursive: true, force: true });
    },
  };
  return ledger;
}

async function postgresLedger(backend: LedgerBackend, label: string, dir: string): Promise<TestLedger> {
  let database: TestDatabase;
  try {
    database = await testDatabase(label);
    // The schema first, so keys can be made before any server (which would migrate too) starts.
    await migrate(settings(database.url), 'family-events test migrate');
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  let pool: pg.Pool | null = null;
  const open = (): pg.Pool => (pool ??= openPool(settings(database.url), 'family-events test'));
  const accounts = (): PgAccounts => new PgAccounts(open());
  const ledger: TestLedger = {
    backend,
    dir,
    databaseUrl: database.url,
    env: { LEDGER_DIR: dir, DATABASE_URL: database.url },
    setPlan: (plan) => accounts().setPlan(plan),
    createKey: async (orgName, email, plan) => {
      const made = await accounts().createKey(orgName, email, plan);
      return { key: made.key, orgId: made.org.id, keyId: made.keyId };
    },
    provisionKey: (opts = {}) => provisionWith(ledger, opts),
    keys: () => accounts().keys(),
    usageByOrg: async (firstDay = FIRST_DAY, lastDay = LAST_DAY) => {
      const { rows } = await open().query<{ org_id: string; records: string; requests: string }>(
        'SELECT org_id, sum(records)::text AS records, sum(requests)::text AS requests FROM usage_days WHERE day BETWEEN $1::date AND $2::date GROUP BY org_id',
        [firstDay, lastDay],
      );
      return new Map(rows.map((r) => [r.org_id, { records: Number(r.records), requests: Number(r.requests) }]));
    },
    drop: async () => {
      const p = pool;
      pool = null;
      await p?.end();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return ledger;
}

/**
 * A key in the ledger a server with this environment would use: DATABASE_URL's database when it is
 * set (its schema applied first), else LEDGER_DIR's accounts store. Opens and closes what it uses.
 */
export async function provisionKeyIn(
  env: { readonly ledgerDir: string; readonly databaseUrl?: string | null },
  opts: ProvisionOptions = {},
): Promise<Provisioned> {
  if (!env.databaseUrl) {
    const accounts = AccountsDb.open(env.ledgerDir);
    try {
      return await provisionWith(
        {
          setPlan: async (plan) => accounts.setPlan(plan),
          createKey: async (orgName, email, plan) => {
            const made = accounts.createKey(orgName, email, plan);
            return { key: made.key, orgId: made.org.id, keyId: made.keyId };
          },
        },
        opts,
      );
    } finally {
      accounts.close();
    }
  }
  const s = settings(env.databaseUrl);
  await migrate(s, 'family-events test migrate');
  const pool = openPool(s, 'family-events test');
  try {
    const accounts = new PgAccounts(pool);
    return await provisionWith(
      {
        setPlan: (plan) => accounts.setPlan(plan),
        createKey: async (orgName, email, plan) => {
          const made = await accounts.createKey(orgName, email, plan);
          return { key: made.key, orgId: made.org.id, keyId: made.keyId };
        },
      },
      opts,
    );
  } finally {
    await pool.end();
  }
}
