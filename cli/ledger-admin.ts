// The operator's view of the ledger, whichever backend holds it: the command line's accounts
// commands run once over this, on the embedded files in LEDGER_DIR (AccountsDb, UsageDb) or on the
// shared PostgreSQL ledger at DATABASE_URL (PgAccounts, PgUsage), and print the same either way.
import type { DatabaseSettings } from '../core/config.ts';
import type { Totals } from '../ledger/rules.ts';
import type { UsageDb } from '../ledger/sqlite/store.ts';
import { type Plan, type UsageBody, type KeyRow, type OrgRow } from '../ledger/accounts.ts';

export interface LedgerAdmin {
  plans(): Promise<Plan[]>;
  setPlan(p: Plan): Promise<void>;
  orgById(id: string): Promise<OrgRow | undefined>;
  orgByName(name: string): Promise<OrgRow | undefined>;
  setOrgPlan(id: string, plan: string): Promise<void>;
  /**
   * The organization (created on `plan` if new) and a new key for it; the key is returned once.
   * With `maxLiveKeys`, an organization that already has that many live keys gets none
   * (LiveKeysLimitError, rules.ts); null: the operator overrides the limit.
   */
  createKey(orgName: string, email: string, plan: string, maxLiveKeys?: number | null): Promise<{ org: OrgRow; created: boolean; keyId: string; key: string }>;
  /** Every key, oldest first, never the key itself. */
  keys(): Promise<KeyRow[]>;
  revoke(idOrKey: string): Promise<{ found: boolean; revoked: boolean; id: string | null }>;
  /** Each key's usage in the period holding `atMs`. */
  usageByKey(atMs: number): Promise<Map<string, Totals>>;
  /** The /v1/usage body for an organization at an instant. */
  usageReport(org: OrgRow, plan: Plan, atMs: number): Promise<UsageBody>;
  /** Closes files or connections: the process may then exit. */
  close(): Promise<void>;
}

/** Where the ledger is: the config's ledgerDir and database. */
export interface LedgerLocation {
  readonly ledgerDir: string;
  readonly database: DatabaseSettings | null;
}

/**
 * Brings the PostgreSQL ledger's schema up to date, and says clearly when it cannot be reached (the
 * driver's own message names no variable). Returns the versions applied.
 */
export async function migrateLedger(database: DatabaseSettings): Promise<number[]> {
  const { migrate } = await import('../ledger/postgres/migrate.ts');
  try {
    return await migrate(database, 'family-events cli');
  } catch (err) {
    const message = (err as Error).message;
    // A migration that ran and failed already says which; anything else is reaching the server.
    if (message.startsWith('migration ')) throw err;
    throw new Error(
      `cannot reach the PostgreSQL ledger at DATABASE_URL (${message}); check that PostgreSQL is running and that DATABASE_URL names its server, database and user.`,
      { cause: err },
    );
  }
}

/** The ledger the configuration names: PostgreSQL (migrated first) when DATABASE_URL is set, else LEDGER_DIR's files. */
export async function openLedgerAdmin(where: LedgerLocation): Promise<LedgerAdmin> {
  return where.database ? openPostgres(where.database) : openSqlite(where.ledgerDir);
}

async function openSqlite(dir: string): Promise<LedgerAdmin> {
  const { AccountsDb, UsageDb } = await import('../ledger/sqlite/store.ts');
  const accounts = AccountsDb.open(dir);
  // Opened when first asked for: most commands never read usage.
  let usage: UsageDb | null = null;
  const reader = () => (usage ??= UsageDb.openReader(dir));
  return {
    plans: async () => accounts.plans(),
    setPlan: async (p) => accounts.setPlan(p),
    orgById: async (id) => accounts.orgById(id),
    orgByName: async (name) => accounts.orgByName(name),
    setOrgPlan: async (id, plan) => accounts.setOrgPlan(id, plan),
    createKey: async (orgName, email, plan, maxLiveKeys) => accounts.createKey(orgName, email, plan, maxLiveKeys),
    keys: async () => accounts.keys(),
    revoke: async (idOrKey) => accounts.revoke(idOrKey),
    usageByKey: async (atMs) => reader().byKey(atMs),
    usageReport: async (org, plan, atMs) => reader().report(org, plan, atMs),
    close: async () => {
      usage?.close();
      accounts.close();
    },
  };
}

async function openPostgres(database: DatabaseSettings): Promise<LedgerAdmin> {
  await migrateLedger(database);
  const { openPool } = await import('../ledger/postgres/db.ts');
  const { PgAccounts, PgUsage } = await import('../ledger/postgres/store.ts');
  // One command's statements run one after another: two connections are plenty.
  const pool = openPool({ ...database, poolMax: Math.min(2, database.poolMax) }, 'family-events cli');
  const accounts = new PgAccounts(pool);
  const usage = new PgUsage(pool);
  return {
    plans: () => accounts.plans(),
    setPlan: (p) => accounts.setPlan(p),
    orgById: (id) => accounts.orgById(id),
    orgByName: (name) => accounts.orgByName(name),
    setOrgPlan: (id, plan) => accounts.setOrgPlan(id, plan),
    createKey: (orgName, email, plan, maxLiveKeys) => accounts.createKey(orgName, email, plan, maxLiveKeys),
    keys: () => accounts.keys(),
    revoke: (idOrKey) => accounts.revoke(idOrKey),
    usageByKey: (atMs) => usage.byKey(atMs),
    usageReport: (org, plan, atMs) => usage.report(org, plan, atMs),
    close: () => pool.end(),
  };
}
