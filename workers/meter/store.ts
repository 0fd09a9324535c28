// The two ledger files in the ledger directory (LEDGER_DIR, by default DATA_DIR/ledger), in SQLite (better-sqlite3): transactional, one file
// each, readable by the command line while the server runs (WAL), and durable per commit
// (synchronous=FULL fsyncs the WAL). accounts.sqlite holds plans, organizations and keys and is
// written by the command line; usage.sqlite is written by the server's metering thread alone.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqlFile } from '../snapshot/sql.ts';
import type { KeyInfo, Plan, UsageBody } from '../protocol.ts';
import { keyHash, keyHint, newId, newKey } from './keys.ts';
import { daysBetween, isoLocal, periodAt, dayAt } from './period.ts';

/** sql/ledger_queries.sql split at its "-- query: NAME" headers. */
function ledgerQueries(): ReadonlyMap<string, string> {
  const parts = sqlFile('ledger_queries').split(/^-- query: ([a-z_]+)$/m);
  const out = new Map<string, string>();
  for (let i = 1; i + 1 < parts.length; i += 2) out.set(parts[i]!, parts[i + 1]!.trim());
  return out;
}
const QUERIES = ledgerQueries();
export const ledgerQueryNames = (): string[] => [...QUERIES.keys()];

export function ledgerQuery(name: string): string {
  const q = QUERIES.get(name);
  if (q === undefined) throw new Error(`sql/ledger_queries.sql has no query ${name}`);
  return q;
}

const nowIso = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

function open(file: string, readonly: boolean): Database.Database {
  const db = new Database(file, readonly ? { readonly: true, fileMustExist: true } : {});
  // Another process may hold the write lock for a moment (the CLI creating a key): wait for it.
  db.pragma('busy_timeout = 5000');
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    // In WAL mode FULL syncs the log at every commit: a committed charge survives a crash.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
  }
  return db;
}

interface PlanRow {
  name: string;
  monthly_record_limit: number | null;
  excluded_categories: string;
  attribution_required: number;
  requests_per_minute: number;
}

const toPlan = (r: PlanRow): Plan => ({
  name: r.name,
  monthlyRecordLimit: r.monthly_record_limit,
  excludedCategories: (JSON.parse(r.excluded_categories) as string[]).slice().sort(),
  attributionRequired: r.attribution_required === 1,
  requestsPerMinute: r.requests_per_minute,
});

export interface OrgRow {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly created_at: string;
}

export interface KeyRow {
  readonly id: string;
  readonly org_id: string;
  readonly org_name: string;
  readonly key_hash: string;
  readonly hint: string;
  readonly email: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/** Everything the server needs to authenticate and meter, read in one go. */
export interface AccountsView {
  readonly plans: ReadonlyMap<string, Plan>;
  readonly orgs: ReadonlyMap<string, OrgRow>;
  readonly keys: readonly KeyInfo[];
}

export class AccountsDb {
  private constructor(private readonly db: Database.Database) {}

  /** Opens (creating the file, the schema and the shipped plans if needed). */
  static open(dir: string): AccountsDb {
    mkdirSync(dir, { recursive: true });
    const db = open(path.join(dir, 'accounts.sqlite'), false);
    db.exec(sqlFile('ledger_accounts'));
    return new AccountsDb(db);
  }

  /** Changes whenever another connection commits to the file (SQLite's data_version). */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  plans(): Plan[] {
    return (this.db.prepare(ledgerQuery('plans')).all() as PlanRow[]).map(toPlan);
  }

  setPlan(p: Plan): void {
    this.db.prepare(ledgerQuery('plan_upsert')).run({
      name: p.name,
      monthly_record_limit: p.monthlyRecordLimit,
      excluded_categories: JSON.stringify([...p.excludedCategories].sort()),
      attribution_required: p.attributionRequired ? 1 : 0,
      requests_per_minute: p.requestsPerMinute,
      now: nowIso(),
    });
  }

  organizations(): OrgRow[] {
    return this.db.prepare(ledgerQuery('organizations')).all() as OrgRow[];
  }

  orgById(id: string): OrgRow | undefined {
    return this.db.prepare(ledgerQuery('organization_by_id')).get({ id }) as OrgRow | undefined;
  }

  orgByName(name: string): OrgRow | undefined {
    return this.db.prepare(ledgerQuery('organization_by_name')).get({ name }) as OrgRow | undefined;
  }

  setOrgPlan(id: string, plan: string): void {
    this.db.prepare(ledgerQuery('organization_set_plan')).run({ id, plan });
  }

  /**
   * The organization named `orgName` (created on `plan` if new) and a new key for it, in one
   * transaction. Returns the key itself: the only time it exists outside the caller's hands.
   */
  createKey(orgName: string, email: string, plan: string): { org: OrgRow; created: boolean; keyId: string; key: string } {
    // IMMEDIATE: a deferred transaction that reads and then writes cannot wait for another writer
    // (SQLite answers SQLITE_BUSY at once rather than deadlock), so it takes the write lock first,
    // under busy_timeout like any other writer.
    return this.db.transaction(() => {
      let org = this.orgByName(orgName);
      const created = org === undefined;
      if (org === undefined) {
        org = { id: newId('org'), name: orgName, plan, created_at: nowIso() };
        this.db.prepare(ledgerQuery('organization_insert')).run({ id: org.id, name: org.name, plan, now: org.created_at });
      }
      const key = newKey();
      const keyId = newId('key');
      this.db.prepare(ledgerQuery('key_insert')).run({ id: keyId, org_id: org.id, key_hash: keyHash(key), hint: keyHint(key), email, now: nowIso() });
      return { org, created, keyId, key };
    }).immediate();
  }

  keys(): KeyRow[] {
    return this.db.prepare(ledgerQuery('keys')).all() as KeyRow[];
  }

  /** Revokes by key id or by the key itself. False when no such active key exists. */
  revoke(idOrKey: string): { found: boolean; revoked: boolean; id: string | null } {
    const id = idOrKey.startsWith('key_') ? idOrKey : ((this.db.prepare(ledgerQuery('key_by_hash')).get({ key_hash: keyHash(idOrKey) }) as { id: string } | undefined)?.id ?? null);
    if (id === null || !this.keys().some((k) => k.id === id)) return { found: false, revoked: false, id };
    const changed = this.db.prepare(ledgerQuery('key_revoke')).run({ id, now: nowIso() }).changes;
    return { found: true, revoked: changed === 1, id };
  }

  view(): AccountsView {
    const plans = new Map(this.plans().map((p) => [p.name, p]));
    const orgs = new Map(this.organizations().map((o) => [o.id, o]));
    const keys: KeyInfo[] = [];
    for (const k of this.keys()) {
      const org = orgs.get(k.org_id);
      const plan = org && plans.get(org.plan);
      if (!org || !plan) continue;
      keys.push({ keyId: k.id, hash: k.key_hash, orgId: org.id, orgName: org.name, plan, revoked: k.revoked_at !== null });
    }
    return { plans, orgs, keys };
  }

  close(): void {
    this.db.close();
  }
}

export interface Totals {
  readonly records: number;
  readonly requests: number;
}

export class UsageDb {
  private readonly chargeStmt: Database.Statement | null;
  private readonly periodStmt: Database.Statement;
  private readonly byDayStmt: Database.Statement;
  private readonly byKeyStmt: Database.Statement;

  private constructor(
    private readonly db: Database.Database | null,
    readonly writable: boolean,
  ) {
    const dbOrEmpty = db ?? new Database(':memory:');
    if (db === null) dbOrEmpty.exec(sqlFile('ledger_usage'));
    this.chargeStmt = writable ? dbOrEmpty.prepare(ledgerQuery('usage_charge')) : null;
    this.periodStmt = dbOrEmpty.prepare(ledgerQuery('usage_period'));
    this.byDayStmt = dbOrEmpty.prepare(ledgerQuery('usage_by_day'));
    this.byKeyStmt = dbOrEmpty.prepare(ledgerQuery('usage_by_key'));
  }

  /** The writer's connection: the server's metering thread, and nobody else. */
  static openWriter(dir: string): UsageDb {
    mkdirSync(dir, { recursive: true });
    const db = open(path.join(dir, 'usage.sqlite'), false);
    db.exec(sqlFile('ledger_usage'));
    return new UsageDb(db, true);
  }

  /** A reader (the command line). A ledger nobody has written yet reads as empty. */
  static openReader(dir: string): UsageDb {
    const file = path.join(dir, 'usage.sqlite');
    return new UsageDb(existsSync(file) ? open(file, true) : null, false);
  }

  /** Runs `fn` as one transaction: one commit, so one fsync, however many charges it holds. */
  transaction<T>(fn: () => T): T {
    if (!this.db) throw new Error('the usage ledger is not open for writing');
    return this.db.transaction(fn)();
  }

  /** Adds `records` and `requests` to a key's day. */
  charge(orgId: string, keyId: string, day: string, records: number, requests: number): void {
    if (!this.chargeStmt) throw new Error('the usage ledger is open read-only');
    this.chargeStmt.run({ org_id: orgId, key_id: keyId, day, records, requests });
  }

  periodTotals(orgId: string, atMs: number): Totals {
    const p = periodAt(atMs);
    return this.periodStmt.get({ org_id: orgId, first_day: p.firstDay, last_day: p.lastDay }) as Totals;
  }

  byKey(atMs: number): Map<string, Totals> {
    const p = periodAt(atMs);
    const rows = this.byKeyStmt.all({ first_day: p.firstDay, last_day: p.lastDay }) as (Totals & { key_id: string })[];
    return new Map(rows.map((r) => [r.key_id, { records: r.records, requests: r.requests }]));
  }

  /** The /v1/usage body (and `family-events usage`) for an organization at an instant. */
  report(org: OrgRow, plan: Plan, atMs: number): UsageBody {
    const p = periodAt(atMs);
    const totals = this.periodTotals(org.id, atMs);
    const rows = this.byDayStmt.all({ org_id: org.id, first_day: p.firstDay, last_day: p.lastDay }) as (Totals & { day: string })[];
    const byDay = new Map(rows.map((r) => [r.day, r]));
    const limit = plan.monthlyRecordLimit;
    return {
      organization: { id: org.id, name: org.name },
      plan: { name: plan.name, monthly_record_limit: limit, excluded_categories: [...plan.excludedCategories], attribution_required: plan.attributionRequired },
      period: { start: isoLocal(p.startMs), end: isoLocal(p.resetMs - 1000), resets_at: isoLocal(p.resetMs) },
      records: { used: totals.records, remaining: limit === null ? null : Math.max(0, limit - totals.records), limit },
      requests: { count: totals.requests },
      // Every day of the period so far, zeros included, so a chart needs no gap-filling.
      by_day: daysBetween(p.firstDay, dayAt(atMs)).map((date) => ({ date, records: byDay.get(date)?.records ?? 0, requests: byDay.get(date)?.requests ?? 0 })),
    };
  }

  close(): void {
    this.db?.close();
  }
}

/**
 * Proof that this process is the ledger's one writer: an exclusive SQLite lock on
 * ledger/writer.lock, held until the process exits. The operating system drops it when the process
 * dies (kill -9 included), so a crash never leaves a stale lock behind.
 */
export function takeWriterLock(dir: string): { release(): void } {
  mkdirSync(dir, { recursive: true });
  const db = new Database(path.join(dir, 'writer.lock'));
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS writer (pid INTEGER)');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new Error(`another server is already metering usage in ${dir} (its writer.lock is held); a ledger has one writer. Give this server its own LEDGER_DIR, or stop the other.`, { cause: err });
    }
    throw err;
  }
  return {
    release: () => {
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
