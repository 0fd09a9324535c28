// The two ledger files in the ledger directory (LEDGER_DIR, by default DATA_DIR/ledger), in SQLite (better-sqlite3): transactional, one file
// each, readable by the command line while the server runs (WAL), and durable per commit
// (synchronous=FULL fsyncs the WAL). accounts.sqlite holds plans, organizations, keys and the
// website's accounts, and is written by the command line and the server's metering thread (each in
// BEGIN IMMEDIATE transactions); usage.sqlite is written by the server's metering thread alone.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqlFile, sqlSections } from '../../core/sql.ts';
import { keyHash, keyHint, newId, newKey, newToken } from '../../core/keys.ts';
import { CODE_MAX_ATTEMPTS, decideCode, type LoginCodeRow } from '../codes.ts';
import { mailboxOf } from '../mailbox.ts';
import { orgName } from '../org-name.ts';
import { periodAt } from '../period.ts';
import {
  INVITE_TOKEN_MAX_MS,
  inviteWindowChecks,
  keyRevoked,
  LIVE_KEYS_PER_ORG,
  LiveKeysLimitError,
  LOGIN_TOKEN_MAX_MS,
  loginTokenAnswer,
  PENDING_INVITES_PER_ORG,
  PURGE_AFTER_MS,
  ROLL_GRACE_MAX_MS,
  SEEN_GRANULARITY_MS,
  SIGN_UP_PLAN,
  usageBody,
  windowRefusal,
  type LoginTokenRow,
  type Totals,
} from '../rules.ts';
import type { AccountCalls } from '../protocol.ts';
import {
  type AccountRefusal,
  type KeyInfo,
  type KeySummary,
  type LoginPurpose,
  type MailLimit,
  type Member,
  type NewKey,
  type OrgOfUser,
  type Plan,
  type SignedIn,
  type PeekedLoginToken,
  type SpentLoginCode,
  type SpentLoginToken,
  type UsageBody,
  type User,
  type OrgRow,
  type KeyRow,
  type AccountsView,
  type OrgAdminRefusal,
  type PendingInvite,
} from '../accounts.ts';

/** sql/ledger_queries.sql's statements, and sql/ledger_org_queries.sql's, by their "-- query: NAME" headers. */
const QUERIES: ReadonlyMap<string, string> = new Map([...sqlSections('ledger_queries', 'query'), ...sqlSections('ledger_org_queries', 'query')]);
export const ledgerQueryNames = (): string[] => [...QUERIES.keys()];

export function ledgerQuery(name: string): string {
  const q = QUERIES.get(name);
  if (q === undefined) throw new Error(`sql/ledger_queries.sql has no query ${name}`);
  return q;
}

/** sql/ledger_code_queries.sql's statements: the sign-in codes (ledger/codes.ts). */
const CODE_QUERIES = sqlSections('ledger_code_queries', 'query');
export const codeQueryNames = (): string[] => [...CODE_QUERIES.keys()];

export function codeQuery(name: string): string {
  const q = CODE_QUERIES.get(name);
  if (q === undefined) throw new Error(`sql/ledger_code_queries.sql has no query ${name}`);
  return q;
}

const nowIso = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
/** The website's tables keep milliseconds (see sql/ledger_accounts.sql). */
const msIso = (ms: number): string => new Date(ms).toISOString();

/** sql/ledger_accounts_upgrade.sql: each "-- adds: TABLE.COLUMN" and the statement adding it. */
function upgrades(): { table: string; column: string; sql: string }[] {
  return [...sqlSections('ledger_accounts_upgrade', 'adds')].map(([at, sql]) => {
    const [table = '', column = ''] = at.split('.');
    return { table, column, sql };
  });
}

const refuse = (reason: AccountRefusal['reason']): AccountRefusal => ({ ok: false, reason });

/**
 * The ledger's files hold key hashes, sessions, the hashes of sign-in tokens and e-mail addresses:
 * owner only (0600), whatever the umask. SQLite creates a database 0644 less the umask, and its
 * -wal and -shm with the database's own mode, so the database is made 0600 before SQLite opens it;
 * files an older version left readable by others are narrowed when a writer opens them.
 */
function ownerOnly(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if ((statSync(f).mode & 0o077) !== 0) chmodSync(f, 0o600);
    } catch (err) {
      // Not there (no WAL yet), or another user's file this process may write but not chmod: the
      // ledger still opens, as it did before.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw err;
    }
  }
}

/** The ledger directory: owner only when this makes it (an operator's existing directory keeps its mode). */
const makeLedgerDir = (dir: string): void => void mkdirSync(dir, { recursive: true, mode: 0o700 });

function open(file: string, readonly: boolean): Database.Database {
  if (!readonly) ownerOnly(file);
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

// orgUsage reads the usage ledger too: the thread answers it from both files.
export class AccountsDb implements Omit<AccountCalls, 'orgUsage'> {
  private readonly db: Database.Database;
  private constructor(db: Database.Database) {
    this.db = db;
  }

  /** Opens (creating the file, the schema and the shipped plans if needed, and upgrading an older file). */
  static open(dir: string): AccountsDb {
    makeLedgerDir(dir);
    const db = open(path.join(dir, 'accounts.sqlite'), false);
    db.exec(sqlFile('ledger_accounts'));
    db.exec(sqlFile('ledger_login_codes'));
    const store = new AccountsDb(db);
    store.upgrade();
    return store;
  }

  /** Adds the columns an older file lacks; checked again under the write lock, as another process may be doing the same. */
  private upgrade(): void {
    const missing = () => upgrades().filter((u) => !(this.db.pragma(`table_info(${u.table})`) as { name: string }[]).some((c) => c.name === u.column));
    if (missing().length === 0) return;
    this.db
      .transaction(() => {
        for (const u of missing()) this.db.exec(u.sql);
      })
      .immediate();
  }

  /** Runs `fn` holding the write lock from the start (see createKey for why IMMEDIATE). */
  private write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  private run(query: string, params: Record<string, unknown>): Database.RunResult {
    return this.db.prepare(ledgerQuery(query)).run(params);
  }

  private get<T>(query: string, params: Record<string, unknown>): T | undefined {
    return this.db.prepare(ledgerQuery(query)).get(params) as T | undefined;
  }

  private all<T>(query: string, params: Record<string, unknown>): T[] {
    return this.db.prepare(ledgerQuery(query)).all(params) as T[];
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
  createKey(orgName: string, email: string, plan: string, maxLiveKeys: number | null = null): { org: OrgRow; created: boolean; keyId: string; key: string } {
    // IMMEDIATE: a deferred transaction that reads and then writes cannot wait for another writer
    // (SQLite answers SQLITE_BUSY at once rather than deadlock), so it takes the write lock first,
    // under busy_timeout like any other writer.
    return this.db
      .transaction(() => {
        let org = this.orgByName(orgName);
        const created = org === undefined;
        if (org !== undefined && maxLiveKeys !== null) {
          // Thrown inside the transaction: nothing was written.
          const live = this.liveKeys(org.id, Date.now());
          if (live >= maxLiveKeys) throw new LiveKeysLimitError(org.name, org.id, live, maxLiveKeys);
        }
        if (org === undefined) {
          org = { id: newId('org'), name: orgName, plan, created_at: nowIso() };
          this.db.prepare(ledgerQuery('organization_insert')).run({ id: org.id, name: org.name, plan, now: org.created_at });
        }
        const key = newKey();
        const keyId = newId('key');
        this.db.prepare(ledgerQuery('key_insert')).run({ id: keyId, org_id: org.id, key_hash: keyHash(key), hint: keyHint(key), email, now: nowIso() });
        return { org, created, keyId, key };
      })
      .immediate();
  }

  keys(): KeyRow[] {
    return this.db.prepare(ledgerQuery('keys')).all() as KeyRow[];
  }

  /** Revokes by key id or by the key itself. False when no such active key exists. */
  revoke(idOrKey: string): { found: boolean; revoked: boolean; id: string | null } {
    const id = idOrKey.startsWith('key_')
      ? idOrKey
      : ((this.db.prepare(ledgerQuery('key_by_hash')).get({ key_hash: keyHash(idOrKey) }) as { id: string } | undefined)?.id ?? null);
    if (id === null || !this.keys().some((k) => k.id === id)) return { found: false, revoked: false, id };
    const changed = this.db.prepare(ledgerQuery('key_revoke')).run({ id, now: nowIso() }).changes;
    return { found: true, revoked: changed === 1, id };
  }

  /** The accounts as of `nowMs`: a key whose scheduled revocation has come is revoked. */
  view(nowMs = Date.now()): AccountsView {
    const plans = new Map(this.plans().map((p) => [p.name, p]));
    const orgs = new Map(this.organizations().map((o) => [o.id, o]));
    const keys: KeyInfo[] = [];
    let nextRevokeAtMs = Infinity;
    for (const k of this.keys()) {
      const org = orgs.get(k.org_id);
      const plan = org && plans.get(org.plan);
      if (!org || !plan) continue;
      const revoked = keyRevoked(k, nowMs);
      if (!revoked && k.revoke_at !== null) nextRevokeAtMs = Math.min(nextRevokeAtMs, Date.parse(k.revoke_at));
      keys.push({ keyId: k.id, hash: k.key_hash, orgId: org.id, orgName: org.name, plan, revoked });
    }
    return { plans, orgs, keys, nextRevokeAtMs };
  }

  // --- The website's accounts -----------------------------------------------------------------

  issueLoginToken(
    email: string,
    purpose: LoginPurpose,
    orgId: string | null,
    bindingHash: string,
    ttlMs: number,
    nowMs = Date.now(),
    limit: MailLimit | null = null,
    sender: string | null = null,
  ): { ok: true; token: string } | AccountRefusal {
    // Nothing here reads the users table: the answer cannot depend on whether the address has an account.
    if ((purpose === 'invite') !== (orgId !== null) || !(ttlMs > 0)) return refuse('invalid');
    if (orgId !== null && this.orgById(orgId) === undefined) return refuse('unknown_org');
    const address = email.trim();
    const mailbox = mailboxOf(address);
    // Counted and inserted in one write transaction: no other link to the mailbox, and no other
    // invitation of the sender or the organization, in between.
    return this.write(() => {
      if (orgId !== null) {
        const refused = this.inviteRefusal(nowMs, sender, orgId);
        if (refused !== null) return refused;
      }
      if (limit !== null && (this.get<{ n: number }>('login_tokens_recent', { mailbox, since: msIso(nowMs - limit.windowMs) })?.n ?? 0) >= limit.max)
        return refuse('limited');
      const token = newToken();
      this.run('login_token_insert', {
        token_hash: keyHash(token),
        email: address,
        purpose,
        org_id: orgId,
        binding_hash: bindingHash,
        now: msIso(nowMs),
        expires_at: msIso(nowMs + Math.min(ttlMs, purpose === 'invite' ? INVITE_TOKEN_MAX_MS : LOGIN_TOKEN_MAX_MS)),
        invited_by: orgId === null ? null : sender,
        mailbox,
      });
      return { ok: true as const, token };
    });
  }

  /**
   * Inside the write that makes an invitation: the refusal when the sender or the organization is at
   * one of its limits (rules.ts), with when one more may be sent; null when it may be made.
   */
  private inviteRefusal(nowMs: number, sender: string | null, orgId: string): AccountRefusal | null {
    for (const c of inviteWindowChecks(sender, orgId, nowMs)) {
      const nth = this.get<{ created_at: string }>(c.query, c.params);
      if (nth !== undefined) return windowRefusal(c, nth.created_at, nowMs);
    }
    const pending = this.get<{ n: number }>('invites_pending_of_org', { org_id: orgId, now: msIso(nowMs) })?.n ?? 0;
    return pending >= PENDING_INVITES_PER_ORG ? { ok: false, reason: 'too_many_pending', max: PENDING_INVITES_PER_ORG } : null;
  }

  spendLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): SpentLoginToken {
    const hash = keyHash(token);
    // One UPDATE decides (sql/ledger_queries.sql): a link of another purpose, another browser's,
    // used or expired is left exactly as it was; the read after a miss only says why.
    return this.write((): SpentLoginToken => {
      const spent = this.get<{ email: string; org_id: string | null }>('login_token_spend', {
        token_hash: hash,
        purpose,
        binding_hash: bindingHash,
        now: msIso(nowMs),
      });
      if (spent !== undefined) return { ok: true, email: spent.email, purpose, orgId: spent.org_id };
      const why = loginTokenAnswer(this.get<LoginTokenRow>('login_token_peek', { token_hash: hash }), purpose, bindingHash, nowMs);
      return why.ok ? { ok: false, reason: 'used' } : why;
    });
  }

  peekLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): PeekedLoginToken {
    return loginTokenAnswer(this.get<LoginTokenRow>('login_token_peek', { token_hash: keyHash(token) }), purpose, bindingHash, nowMs);
  }

  /** Keeps a sign-in link's code (its slow hash): typed in the browser the link is bound to, it spends the link. */
  attachLoginCode(token: string, codeHash: string): { readonly attached: boolean } {
    return this.write(() => ({
      attached: this.db.prepare(codeQuery('login_code_insert')).run({ token_hash: keyHash(token), code_hash: codeHash }).changes === 1,
    }));
  }

  /** A code typed in the browser bound by `bindingHash`: its link spent, or a wrong try counted (ledger/codes.ts). */
  spendLoginCode(bindingHash: string, codeHash: string, nowMs: number): SpentLoginCode {
    return this.write((): SpentLoginCode => {
      const rows = this.db.prepare(codeQuery('login_codes_of_binding')).all({ binding_hash: bindingHash }) as LoginCodeRow[];
      const decided = decideCode(rows, codeHash, nowMs);
      if (decided.do === 'refuse') return decided.answer;
      const now = msIso(nowMs);
      if (decided.do === 'count') {
        this.db.prepare(codeQuery('login_codes_count_wrong')).run({ binding_hash: bindingHash, max: CODE_MAX_ATTEMPTS, now });
        return { ok: false, reason: 'wrong', attemptsLeft: decided.attemptsLeft };
      }
      const spent = this.db.prepare(codeQuery('login_code_spend')).get({ token_hash: decided.tokenHash, now }) as { email: string } | undefined;
      return spent === undefined ? { ok: false, reason: 'used' } : { ok: true, email: spent.email };
    });
  }

  userOf(userId: string): User | null {
    return this.userById(userId) ?? null;
  }

  private userById(id: string): User | undefined {
    return this.get<User>('user_by_id', { id });
  }

  /** A new user without an organization. Inside a write. */
  private insertUser(email: string | null): User {
    const user: User = { id: newId('usr'), email, created_at: msIso(Date.now()) };
    this.run('user_insert', { id: user.id, email, now: user.created_at });
    return user;
  }

  /** A new user, owner of a new organization on the sign-up plan named after them. Inside a write. */
  private newUser(email: string | null): SignedIn {
    const user = this.insertUser(email);
    const now = user.created_at;
    const base = email ?? `Organization ${user.id}`;
    let name = base;
    for (let n = 2; this.orgByName(name) !== undefined; n++) name = `${base} (${n})`;
    const orgId = newId('org');
    this.run('organization_insert', { id: orgId, name, plan: SIGN_UP_PLAN, now: nowIso() });
    this.run('membership_insert', { org_id: orgId, user_id: user.id, role: 'owner', now });
    return { user, created: true, orgId };
  }

  signInByEmail(email: string): SignedIn {
    const address = email.trim();
    return this.write(() => {
      const user = this.get<User>('user_by_email', { email: address });
      return user ? { user, created: false, orgId: null } : this.newUser(address);
    });
  }

  /**
   * Linking: a new (issuer, subject) joins the existing account of its e-mail only when the
   * provider says it verified that e-mail. That is safe here because the provider is the one the
   * operator configured (OIDC_ISSUER), and an account's e-mail is itself proven (a spent link), so
   * both prove control of the same mailbox. An unverified e-mail is never linked and never becomes
   * the account's e-mail either (else a later sign-in link to that address would open an account
   * its owner never made): the new account has no e-mail.
   */
  signInByIdentity(issuer: string, subject: string, email: string | null, emailVerified: boolean): SignedIn {
    const address = email?.trim() || null;
    const verified = emailVerified && address !== null;
    return this.write(() => {
      const claims = { issuer, subject, email: address, email_verified: verified ? 1 : 0 };
      const known = this.get<{ user_id: string }>('identity_get', { issuer, subject });
      if (known) {
        this.run('identity_update_claims', claims);
        return { user: this.userById(known.user_id)!, created: false, orgId: null };
      }
      const existing = verified ? this.get<User>('user_by_email', { email: address }) : undefined;
      const signedIn = existing ? { user: existing, created: false, orgId: null } : this.newUser(verified ? address : null);
      this.run('identity_insert', { ...claims, user_id: signedIn.user.id, now: msIso(Date.now()) });
      return signedIn;
    });
  }

  createSession(userId: string, absoluteTtlMs: number, nowMs = Date.now()): { ok: true; token: string; sessionId: string } | AccountRefusal {
    if (!(absoluteTtlMs > 0)) return refuse('invalid');
    if (this.userById(userId) === undefined) return refuse('unknown_user');
    const token = newToken();
    const sessionId = newId('ses');
    this.run('session_insert', { id: sessionId, token_hash: keyHash(token), user_id: userId, now: msIso(nowMs), expires_at: msIso(nowMs + absoluteTtlMs) });
    return { ok: true, token, sessionId };
  }

  touchSession(token: string, nowMs: number, idleMs: number): { userId: string; sessionId: string } | null {
    type Row = { id: string; user_id: string; last_seen_at: string; expires_at: string; revoked_at: string | null };
    const row = this.get<Row>('session_by_token', { token_hash: keyHash(token) });
    if (row === undefined || row.revoked_at !== null || Date.parse(row.expires_at) <= nowMs) return null;
    const seen = Date.parse(row.last_seen_at);
    if (nowMs - seen > idleMs) return null;
    if (nowMs - seen >= SEEN_GRANULARITY_MS) this.run('session_seen', { id: row.id, now: msIso(nowMs) });
    return { userId: row.user_id, sessionId: row.id };
  }

  endSession(token: string, nowMs = Date.now()): { ended: boolean } {
    return { ended: this.run('session_end', { token_hash: keyHash(token), now: msIso(nowMs) }).changes === 1 };
  }

  endAllSessions(userId: string, nowMs = Date.now()): { ended: number } {
    return { ended: this.run('sessions_end_all', { user_id: userId, now: msIso(nowMs) }).changes };
  }

  organizationsOf(userId: string): OrgOfUser[] {
    return this.all<OrgOfUser>('organizations_of_user', { user_id: userId });
  }

  acceptInvite(userId: string, orgId: string): { ok: true; joined: boolean } | AccountRefusal {
    return this.write(() => {
      if (this.userById(userId) === undefined) return refuse('unknown_user');
      if (this.orgById(orgId) === undefined) return refuse('unknown_org');
      const joined = this.run('membership_insert', { org_id: orgId, user_id: userId, role: 'member', now: msIso(Date.now()) }).changes === 1;
      return { ok: true as const, joined };
    });
  }

  /**
   * The account of an invitation's addressee (who just proved the mailbox by spending it), made a
   * member of the organization. A new account gets no organization of its own: it came to join one.
   */
  joinByInvite(email: string, orgId: string): SignedIn | AccountRefusal {
    const address = email.trim();
    return this.write(() => {
      if (this.orgById(orgId) === undefined) return refuse('unknown_org');
      const known = this.get<User>('user_by_email', { email: address });
      const user = known ?? this.insertUser(address);
      this.run('membership_insert', { org_id: orgId, user_id: user.id, role: 'member', now: msIso(Date.now()) });
      return { user, created: known === undefined, orgId: null };
    });
  }

  /**
   * Deletes what can no longer be used: links expired or spent, and sessions ended or past their
   * absolute expiry, each a day after it stopped working (so an attempt just after still reads as
   * "expired" or "used", not "unknown"). Returns what it deleted.
   */
  purgeExpired(nowMs: number): { readonly loginTokens: number; readonly sessions: number } {
    const cutoff = msIso(nowMs - PURGE_AFTER_MS);
    return this.write(() => ({
      loginTokens: this.run('login_tokens_purge', { cutoff }).changes,
      sessions: this.run('sessions_purge', { cutoff }).changes,
    }));
  }

  members(orgId: string): Member[] {
    return this.all<Member>('members_of_org', { org_id: orgId });
  }

  /** The organization's keys, newest first; `lastUsed` (key id → day) comes from the usage ledger. */
  keysOf(orgId: string, lastUsed: ReadonlyMap<string, string> = new Map()): KeySummary[] {
    return this.all<Omit<KeySummary, 'last_used'>>('keys_of_org', { org_id: orgId }).map((k) => ({ ...k, last_used: lastUsed.get(k.id) ?? null }));
  }

  /** The organization's keys the API accepts at `nowMs` (a rolled one until its grace ends). */
  private liveKeys(orgId: string, nowMs: number): number {
    return this.get<{ n: number }>('keys_live_of_org', { org_id: orgId, now: msIso(nowMs) })?.n ?? 0;
  }

  /**
   * Inside a write: a key for the organization, made by one of its members, unless it has its limit
   * of live keys; `freed`: a live key this same write stops at once (a roll without grace).
   */
  private insertKeyFor(orgId: string, userId: string, nowMs = Date.now(), freed = 0): NewKey | AccountRefusal {
    if (this.get('membership_get', { org_id: orgId, user_id: userId }) === undefined) return refuse('not_member');
    const live = this.liveKeys(orgId, nowMs) - freed;
    if (live >= LIVE_KEYS_PER_ORG) return { ok: false, reason: 'too_many_keys', max: LIVE_KEYS_PER_ORG, live };
    const key = newKey();
    const keyId = newId('key');
    const email = this.userById(userId)?.email ?? '';
    this.run('key_insert_by_user', { id: keyId, org_id: orgId, key_hash: keyHash(key), hint: keyHint(key), email, now: nowIso(), created_by: userId });
    return { ok: true, keyId, key };
  }

  createKeyFor(orgId: string, userId: string): NewKey | AccountRefusal {
    return this.write(() => this.insertKeyFor(orgId, userId));
  }

  /** Revokes a key of this organization (any other organization's key is unknown here). */
  revokeKey(orgId: string, keyId: string): { ok: true; revoked: boolean } | AccountRefusal {
    return this.write(() => {
      if (this.get('key_of_org', { id: keyId, org_id: orgId }) === undefined) return refuse('unknown_key');
      return { ok: true as const, revoked: this.run('key_revoke_in_org', { id: keyId, org_id: orgId, now: nowIso() }).changes === 1 };
    });
  }

  /**
   * A new key, and the old one refused from now + graceMs. Rolling a key already rolling keeps the
   * earlier instant: a roll never lengthens a key's life.
   */
  rollKey(orgId: string, userId: string, keyId: string, graceMs: number, nowMs = Date.now()): (NewKey & { revokeAt: string }) | AccountRefusal {
    if (!(graceMs >= 0 && graceMs <= ROLL_GRACE_MAX_MS)) return refuse('invalid');
    return this.write(() => {
      const old = this.get<{ revoked_at: string | null; revoke_at: string | null }>('key_of_org', { id: keyId, org_id: orgId });
      if (old === undefined) return refuse('unknown_key');
      if (keyRevoked(old, nowMs)) return refuse('not_active');
      const wanted = nowMs + graceMs;
      const revokeAtMs = old.revoke_at === null ? wanted : Math.min(wanted, Date.parse(old.revoke_at));
      // The old key counts as live until its grace ends; rolled without grace, it makes room for the new one.
      const made = this.insertKeyFor(orgId, userId, nowMs, revokeAtMs <= nowMs ? 1 : 0);
      if (!made.ok) return made;
      const revokeAt = msIso(revokeAtMs);
      this.run('key_schedule_revoke', { id: keyId, revoke_at: revokeAt });
      return { ...made, revokeAt };
    });
  }

  // --- What an owner does to the organization (issue 28 item 12) ---------------------------------

  /** Inside a write: null when `userId` owns the organization, else why not. */
  private notOwner(orgId: string, userId: string): OrgAdminRefusal | null {
    if (this.orgById(orgId) === undefined) return { ok: false, reason: 'unknown_org' };
    return this.get<{ role: string }>('membership_get', { org_id: orgId, user_id: userId })?.role === 'owner' ? null : { ok: false, reason: 'not_owner' };
  }

  renameOrg(orgId: string, userId: string, name: string): { ok: true; name: string; renamed: boolean } | OrgAdminRefusal {
    const wanted = orgName(name);
    if (!wanted.ok) return { ok: false, reason: 'invalid' };
    return this.write(() => {
      const refused = this.notOwner(orgId, userId);
      if (refused !== null) return refused;
      const holder = this.orgByName(wanted.name);
      if (holder !== undefined && holder.id !== orgId) return { ok: false as const, reason: 'name_taken' as const };
      const renamed = this.orgById(orgId)?.name !== wanted.name && this.run('org_rename', { id: orgId, name: wanted.name }).changes === 1;
      return { ok: true as const, name: wanted.name, renamed };
    });
  }

  pendingInvites(orgId: string, nowMs: number): PendingInvite[] {
    return this.all<PendingInvite>('org_invites_pending', { org_id: orgId, now: msIso(nowMs) });
  }

  cancelInvite(orgId: string, userId: string, inviteId: string, nowMs: number): { ok: true; cancelled: boolean } | OrgAdminRefusal {
    return this.write(() => {
      const refused = this.notOwner(orgId, userId);
      if (refused !== null) return refused;
      return { ok: true as const, cancelled: this.run('org_invite_cancel', { id: inviteId, org_id: orgId, now: msIso(nowMs) }).changes === 1 };
    });
  }

  removeMember(orgId: string, userId: string, memberId: string, nowMs: number): { ok: true; sessionsEnded: number } | OrgAdminRefusal {
    return this.write(() => {
      const refused = this.notOwner(orgId, userId);
      if (refused !== null) return refused;
      const role = this.get<{ role: string }>('membership_get', { org_id: orgId, user_id: memberId })?.role;
      if (role === undefined) return { ok: false as const, reason: 'unknown_member' as const };
      if (role === 'owner' && (this.get<{ n: number }>('org_owner_count', { org_id: orgId })?.n ?? 0) <= 1)
        return { ok: false as const, reason: 'last_owner' as const };
      this.run('org_membership_delete', { org_id: orgId, user_id: memberId });
      const left = this.get<{ n: number }>('org_memberships_of_user', { user_id: memberId })?.n ?? 0;
      const sessionsEnded = left === 0 ? this.run('sessions_end_all', { user_id: memberId, now: msIso(nowMs) }).changes : 0;
      return { ok: true as const, sessionsEnded };
    });
  }

  close(): void {
    this.db.close();
  }
}

export class UsageDb {
  private readonly chargeStmt: Database.Statement | null;
  private readonly periodStmt: Database.Statement;
  private readonly byDayStmt: Database.Statement;
  private readonly byKeyStmt: Database.Statement;
  private readonly lastUsedStmt: Database.Statement;

  private readonly db: Database.Database | null;
  readonly writable: boolean;
  private constructor(db: Database.Database | null, writable: boolean) {
    this.db = db;
    this.writable = writable;
    const dbOrEmpty = db ?? new Database(':memory:');
    if (db === null) dbOrEmpty.exec(sqlFile('ledger_usage'));
    this.chargeStmt = writable ? dbOrEmpty.prepare(ledgerQuery('usage_charge')) : null;
    this.periodStmt = dbOrEmpty.prepare(ledgerQuery('usage_period'));
    this.byDayStmt = dbOrEmpty.prepare(ledgerQuery('usage_by_day'));
    this.byKeyStmt = dbOrEmpty.prepare(ledgerQuery('usage_by_key'));
    this.lastUsedStmt = dbOrEmpty.prepare(ledgerQuery('usage_last_day_by_key'));
  }

  /** The writer's connection: the server's metering thread, and nobody else. */
  static openWriter(dir: string): UsageDb {
    makeLedgerDir(dir);
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

  /** Per key of the organization, the last day it made a request on (YYYY-MM-DD). */
  lastUsedByKey(orgId: string): Map<string, string> {
    const rows = this.lastUsedStmt.all({ org_id: orgId }) as { key_id: string; day: string }[];
    return new Map(rows.map((r) => [r.key_id, r.day]));
  }

  byKey(atMs: number): Map<string, Totals> {
    const p = periodAt(atMs);
    const rows = this.byKeyStmt.all({ first_day: p.firstDay, last_day: p.lastDay }) as (Totals & { key_id: string })[];
    return new Map(rows.map((r) => [r.key_id, { records: r.records, requests: r.requests }]));
  }

  /** The /v1/usage body (and `family-events usage`) for an organization at an instant. */
  report(org: OrgRow, plan: Plan, atMs: number): UsageBody {
    const p = periodAt(atMs);
    return usageBody(org, plan, atMs, this.byDayStmt.all({ org_id: org.id, first_day: p.firstDay, last_day: p.lastDay }) as (Totals & { day: string })[]);
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
  makeLedgerDir(dir);
  ownerOnly(path.join(dir, 'writer.lock'));
  const db = new Database(path.join(dir, 'writer.lock'));
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS writer (pid INTEGER)');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new Error(
        `another server is already metering usage in ${dir} (its writer.lock is held); a ledger has one writer. Give this server its own LEDGER_DIR, or stop the other.`,
        { cause: err },
      );
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
