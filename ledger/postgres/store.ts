// The accounts and the usage reports of the shared PostgreSQL ledger: what AccountsDb and UsageDb
// (store.ts) do on the embedded files, with the same arguments and answers, for several API nodes
// writing at once. Where the embedded ledger relies on SQLite's one writer at a time, this relies on
// row locks (a link spent once), on unique indexes with a retry of the whole transaction (two nodes
// signing up one address make one account), and announces every change other nodes must see
// (plans, organizations, keys) inside the transaction that makes it.
import type pg from 'pg';
import { keyHash, keyHint, newId, newKey, newToken } from '../../core/keys.ts';
import { CODE_MAX_ATTEMPTS, decideCode, type LoginCodeRow } from '../codes.ts';
import { mailboxOf } from '../mailbox.ts';
import { orgName } from '../org-name.ts';
import { periodAt } from '../period.ts';
import { one, pgQuery, rows, transaction, type Queryable } from './db.ts';
import { announce } from './cluster.ts';
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
  type AccountsView,
  type KeyRow,
  type OrgRow,
  type OrgAdminRefusal,
  type PendingInvite,
} from '../accounts.ts';

/** The account calls as a store that answers later: AccountCalls with every result a promise. */
export type AsyncCalls<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never };

/** api_keys and organizations keep the embedded ledger's second-precision instants (see ledger_queries.sql). */
const nowIso = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const msIso = (ms: number): string => new Date(ms).toISOString();

const refuse = (reason: AccountRefusal['reason']): AccountRefusal => ({ ok: false, reason });

interface PlanRow {
  name: string;
  monthly_record_limit: number | null;
  // jsonb arrives parsed.
  excluded_categories: string[];
  attribution_required: boolean;
  requests_per_minute: number;
}

const toPlan = (r: PlanRow): Plan => ({
  name: r.name,
  monthlyRecordLimit: r.monthly_record_limit,
  excludedCategories: r.excluded_categories.slice().sort(),
  attributionRequired: r.attribution_required,
  requestsPerMinute: r.requests_per_minute,
});

/** Rows a statement changed. */
async function run(db: Queryable, name: string, params: Readonly<Record<string, unknown>>): Promise<number> {
  return (await db.query(pgQuery(name, params))).rowCount ?? 0;
}

// A transaction that lost a race to another node: a unique index refused what the other committed
// first (23505), or PostgreSQL chose it as a deadlock's or serialization's victim. Run again, it
// reads what the other committed and answers from that.
const RACES = new Set(['23505', '40001', '40P01']);
const ATTEMPTS = 5;

/** Runs `fn` in one transaction, again from the start (at most ATTEMPTS times) when it lost a race. */
async function write<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction(pool, fn);
    } catch (err) {
      if (attempt >= ATTEMPTS || !RACES.has((err as { code?: string }).code ?? '')) throw err;
    }
  }
}

/** Runs `fn` on one snapshot of the database: reads that must agree with each other. */
const snapshot = <T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> =>
  transaction(pool, fn, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');

export class PgAccounts implements AsyncCalls<Omit<AccountCalls, 'orgUsage'>> {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async plans(db: Queryable = this.pool): Promise<Plan[]> {
    return (await rows<PlanRow>(db, 'plans')).map(toPlan);
  }

  async setPlan(p: Plan): Promise<void> {
    await write(this.pool, async (c) => {
      await run(c, 'plan_upsert', {
        name: p.name,
        monthly_record_limit: p.monthlyRecordLimit,
        excluded_categories: JSON.stringify([...p.excludedCategories].sort()),
        attribution_required: p.attributionRequired,
        requests_per_minute: p.requestsPerMinute,
        now: nowIso(),
      });
      await announce(c, 'accounts');
    });
  }

  async organizations(db: Queryable = this.pool): Promise<OrgRow[]> {
    return rows<OrgRow>(db, 'organizations');
  }

  async orgById(id: string, db: Queryable = this.pool): Promise<OrgRow | undefined> {
    return one<OrgRow>(db, 'organization_by_id', { id });
  }

  async orgByName(name: string, db: Queryable = this.pool): Promise<OrgRow | undefined> {
    return one<OrgRow>(db, 'organization_by_name', { name });
  }

  async setOrgPlan(id: string, plan: string): Promise<void> {
    await write(this.pool, async (c) => {
      if ((await run(c, 'organization_set_plan', { id, plan })) > 0) await announce(c, 'accounts');
    });
  }

  /**
   * The organization named `orgName` (created on `plan` if new) and a new key for it, in one
   * transaction. Returns the key itself: the only time it exists outside the caller's hands.
   */
  async createKey(
    orgName: string,
    email: string,
    plan: string,
    maxLiveKeys: number | null = null,
  ): Promise<{ org: OrgRow; created: boolean; keyId: string; key: string }> {
    // Two operators creating the same new organization at once: the second's insert fails on the
    // name's unique index, and its retry finds the first's organization.
    return write(this.pool, async (c) => {
      let org = await this.orgByName(orgName, c);
      const created = org === undefined;
      if (org !== undefined && maxLiveKeys !== null) {
        // Thrown inside the transaction: nothing was written.
        const live = await this.liveKeys(c, org.id, Date.now());
        if (live >= maxLiveKeys) throw new LiveKeysLimitError(org.name, org.id, live, maxLiveKeys);
      }
      if (org === undefined) {
        org = { id: newId('org'), name: orgName, plan, created_at: nowIso() };
        await run(c, 'organization_insert', { id: org.id, name: org.name, plan, now: org.created_at });
      }
      const key = newKey();
      const keyId = newId('key');
      await run(c, 'key_insert', { id: keyId, org_id: org.id, key_hash: keyHash(key), hint: keyHint(key), email, now: nowIso() });
      await announce(c, 'accounts');
      return { org, created, keyId, key };
    });
  }

  async keys(db: Queryable = this.pool): Promise<KeyRow[]> {
    return rows<KeyRow>(db, 'keys');
  }

  /** Revokes by key id or by the key itself. Not found when no such key exists. */
  async revoke(idOrKey: string): Promise<{ found: boolean; revoked: boolean; id: string | null }> {
    return write(this.pool, async (c) => {
      const id = idOrKey.startsWith('key_') ? idOrKey : ((await one<{ id: string }>(c, 'key_by_hash', { key_hash: keyHash(idOrKey) }))?.id ?? null);
      if (id === null || (await one(c, 'key_by_id', { id })) === undefined) return { found: false, revoked: false, id };
      const revoked = (await run(c, 'key_revoke', { id, now: nowIso() })) === 1;
      if (revoked) await announce(c, 'accounts');
      return { found: true, revoked, id };
    });
  }

  /** The accounts as of `nowMs`, read from one snapshot (a key never without its organization). */
  async view(nowMs = Date.now()): Promise<AccountsView> {
    const [planList, orgList, keyList] = await snapshot(
      this.pool,
      async (c) => [await this.plans(c), await this.organizations(c), await this.keys(c)] as const,
    );
    const plans = new Map(planList.map((p) => [p.name, p]));
    const orgs = new Map(orgList.map((o) => [o.id, o]));
    const keys: KeyInfo[] = [];
    let nextRevokeAtMs = Infinity;
    for (const k of keyList) {
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

  async issueLoginToken(
    email: string,
    purpose: LoginPurpose,
    orgId: string | null,
    bindingHash: string,
    ttlMs: number,
    nowMs = Date.now(),
    limit: MailLimit | null = null,
    sender: string | null = null,
  ): Promise<{ ok: true; token: string } | AccountRefusal> {
    // Nothing here reads the users table: the answer cannot depend on whether the address has an account.
    if ((purpose === 'invite') !== (orgId !== null) || !(ttlMs > 0)) return refuse('invalid');
    if (orgId !== null && (await this.orgById(orgId)) === undefined) return refuse('unknown_org');
    const address = email.trim();
    const mailbox = mailboxOf(address);
    return write(this.pool, async (c): Promise<{ ok: true; token: string } | AccountRefusal> => {
      if (orgId !== null) {
        const refused = await this.inviteRefusal(c, nowMs, sender, orgId);
        if (refused !== null) return refused;
      }
      if (limit !== null) {
        // Every node's links to this mailbox wait here for each other until the commit.
        await run(c, 'login_token_address_lock', { mailbox });
        const recent = await one<{ n: number }>(c, 'login_tokens_recent', { mailbox, since: msIso(nowMs - limit.windowMs) });
        if ((recent?.n ?? 0) >= limit.max) return refuse('limited');
      }
      const token = newToken();
      await run(c, 'login_token_insert', {
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
      return { ok: true, token };
    });
  }

  /**
   * As AccountsDb.inviteRefusal. The sender's and the organization's invitations, on every node,
   * wait for each other here until the commit (locks taken in one order: sender, organization, mailbox).
   */
  private async inviteRefusal(c: Queryable, nowMs: number, sender: string | null, orgId: string): Promise<AccountRefusal | null> {
    if (sender !== null) await run(c, 'invite_sender_lock', { user_id: sender });
    await run(c, 'invite_org_lock', { org_id: orgId });
    for (const check of inviteWindowChecks(sender, orgId, nowMs)) {
      const nth = await one<{ created_at: string }>(c, check.query, check.params);
      if (nth !== undefined) return windowRefusal(check, nth.created_at, nowMs);
    }
    const pending = (await one<{ n: number }>(c, 'invites_pending_of_org', { org_id: orgId, now: msIso(nowMs) }))?.n ?? 0;
    return pending >= PENDING_INVITES_PER_ORG ? { ok: false, reason: 'too_many_pending', max: PENDING_INVITES_PER_ORG } : null;
  }

  async spendLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): Promise<SpentLoginToken> {
    const hash = keyHash(token);
    // One UPDATE decides (sql/postgres/ledger_queries.sql): of two spends on any nodes, the second
    // waits on the row lock and finds it used; a link of another purpose, another browser's, used
    // or expired is left exactly as it was. The read after a miss only says why.
    return write(this.pool, async (c): Promise<SpentLoginToken> => {
      const spent = await one<{ email: string; org_id: string | null }>(c, 'login_token_spend', {
        token_hash: hash,
        purpose,
        binding_hash: bindingHash,
        now: msIso(nowMs),
      });
      if (spent !== undefined) return { ok: true, email: spent.email, purpose, orgId: spent.org_id };
      const why = loginTokenAnswer(await one<LoginTokenRow>(c, 'login_token_peek', { token_hash: hash }), purpose, bindingHash, nowMs);
      return why.ok ? { ok: false, reason: 'used' } : why;
    });
  }

  async peekLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): Promise<PeekedLoginToken> {
    return loginTokenAnswer(await one<LoginTokenRow>(this.pool, 'login_token_peek', { token_hash: keyHash(token) }), purpose, bindingHash, nowMs);
  }

  async attachLoginCode(token: string, codeHash: string): Promise<{ readonly attached: boolean }> {
    return { attached: (await run(this.pool, 'login_code_insert', { token_hash: keyHash(token), code_hash: codeHash })) === 1 };
  }

  /** As AccountsDb.spendLoginCode; the browser's codes are locked (FOR UPDATE) until the commit. */
  async spendLoginCode(bindingHash: string, codeHash: string, nowMs: number): Promise<SpentLoginCode> {
    return write(this.pool, async (c): Promise<SpentLoginCode> => {
      const decided = decideCode(await rows<LoginCodeRow>(c, 'login_codes_of_binding', { binding_hash: bindingHash }), codeHash, nowMs);
      if (decided.do === 'refuse') return decided.answer;
      const now = msIso(nowMs);
      if (decided.do === 'count') {
        await run(c, 'login_codes_count_wrong', { binding_hash: bindingHash, max: CODE_MAX_ATTEMPTS, now });
        return { ok: false, reason: 'wrong', attemptsLeft: decided.attemptsLeft };
      }
      const spent = await one<{ email: string }>(c, 'login_code_spend', { token_hash: decided.tokenHash, now });
      return spent === undefined ? { ok: false, reason: 'used' } : { ok: true, email: spent.email };
    });
  }

  async userOf(userId: string): Promise<User | null> {
    return (await this.userById(userId)) ?? null;
  }

  private async userById(id: string, db: Queryable = this.pool): Promise<User | undefined> {
    return one<User>(db, 'user_by_id', { id });
  }

  /** A new user without an organization. Inside a write: a taken e-mail fails it, and its retry finds that user. */
  private async insertUser(c: Queryable, email: string | null): Promise<User> {
    const user: User = { id: newId('usr'), email, created_at: msIso(Date.now()) };
    await run(c, 'user_insert', { id: user.id, email, now: user.created_at });
    return user;
  }

  /** A new user, owner of a new organization on the sign-up plan named after them. Inside a write. */
  private async newUser(c: Queryable, email: string | null): Promise<SignedIn> {
    const user = await this.insertUser(c, email);
    const now = user.created_at;
    const base = email ?? `Organization ${user.id}`;
    let name = base;
    // A name taken between this read and the insert fails the insert; the retry picks the next.
    for (let n = 2; (await this.orgByName(name, c)) !== undefined; n++) name = `${base} (${n})`;
    const orgId = newId('org');
    await run(c, 'organization_insert', { id: orgId, name, plan: SIGN_UP_PLAN, now: nowIso() });
    await run(c, 'membership_insert', { org_id: orgId, user_id: user.id, role: 'owner', now });
    await announce(c, 'accounts');
    return { user, created: true, orgId };
  }

  async signInByEmail(email: string): Promise<SignedIn> {
    const address = email.trim();
    return write(this.pool, async (c) => {
      const user = await one<User>(c, 'user_by_email', { email: address });
      return user ? { user, created: false, orgId: null } : this.newUser(c, address);
    });
  }

  /** Links as AccountsDb.signInByIdentity does (see there for why a verified e-mail may link). */
  async signInByIdentity(issuer: string, subject: string, email: string | null, emailVerified: boolean): Promise<SignedIn> {
    const address = email?.trim() || null;
    const verified = emailVerified && address !== null;
    return write(this.pool, async (c) => {
      const claims = { issuer, subject, email: address, email_verified: verified };
      const known = await one<{ user_id: string }>(c, 'identity_get', { issuer, subject });
      if (known) {
        await run(c, 'identity_update_claims', claims);
        return { user: (await this.userById(known.user_id, c))!, created: false, orgId: null };
      }
      const existing = verified ? await one<User>(c, 'user_by_email', { email: address }) : undefined;
      const signedIn = existing ? { user: existing, created: false, orgId: null } : await this.newUser(c, verified ? address : null);
      // The same identity signing in on two nodes at once: the second insert fails on the primary
      // key, and the retry (its new account rolled back) finds the first's.
      await run(c, 'identity_insert', { ...claims, user_id: signedIn.user.id, now: msIso(Date.now()) });
      return signedIn;
    });
  }

  async createSession(userId: string, absoluteTtlMs: number, nowMs = Date.now()): Promise<{ ok: true; token: string; sessionId: string } | AccountRefusal> {
    if (!(absoluteTtlMs > 0)) return refuse('invalid');
    if ((await this.userById(userId)) === undefined) return refuse('unknown_user');
    const token = newToken();
    const sessionId = newId('ses');
    await run(this.pool, 'session_insert', {
      id: sessionId,
      token_hash: keyHash(token),
      user_id: userId,
      now: msIso(nowMs),
      expires_at: msIso(nowMs + absoluteTtlMs),
    });
    return { ok: true, token, sessionId };
  }

  async touchSession(token: string, nowMs: number, idleMs: number): Promise<{ userId: string; sessionId: string } | null> {
    type Row = { id: string; user_id: string; last_seen_at: string; expires_at: string; revoked_at: string | null };
    const row = await one<Row>(this.pool, 'session_by_token', { token_hash: keyHash(token) });
    if (row === undefined || row.revoked_at !== null || Date.parse(row.expires_at) <= nowMs) return null;
    const seen = Date.parse(row.last_seen_at);
    if (nowMs - seen > idleMs) return null;
    if (nowMs - seen >= SEEN_GRANULARITY_MS) await run(this.pool, 'session_seen', { id: row.id, now: msIso(nowMs) });
    return { userId: row.user_id, sessionId: row.id };
  }

  async endSession(token: string, nowMs = Date.now()): Promise<{ ended: boolean }> {
    return { ended: (await run(this.pool, 'session_end', { token_hash: keyHash(token), now: msIso(nowMs) })) === 1 };
  }

  async endAllSessions(userId: string, nowMs = Date.now()): Promise<{ ended: number }> {
    return { ended: await run(this.pool, 'sessions_end_all', { user_id: userId, now: msIso(nowMs) }) };
  }

  async organizationsOf(userId: string): Promise<OrgOfUser[]> {
    return rows<OrgOfUser>(this.pool, 'organizations_of_user', { user_id: userId });
  }

  async acceptInvite(userId: string, orgId: string): Promise<{ ok: true; joined: boolean } | AccountRefusal> {
    return write(this.pool, async (c) => {
      if ((await this.userById(userId, c)) === undefined) return refuse('unknown_user');
      if ((await this.orgById(orgId, c)) === undefined) return refuse('unknown_org');
      const joined = (await run(c, 'membership_insert', { org_id: orgId, user_id: userId, role: 'member', now: msIso(Date.now()) })) === 1;
      return { ok: true as const, joined };
    });
  }

  /** As AccountsDb.joinByInvite: the addressee's account (new ones get no organization of their own), now a member. */
  async joinByInvite(email: string, orgId: string): Promise<SignedIn | AccountRefusal> {
    const address = email.trim();
    return write(this.pool, async (c) => {
      if ((await this.orgById(orgId, c)) === undefined) return refuse('unknown_org');
      const known = await one<User>(c, 'user_by_email', { email: address });
      const user = known ?? (await this.insertUser(c, address));
      await run(c, 'membership_insert', { org_id: orgId, user_id: user.id, role: 'member', now: msIso(Date.now()) });
      return { user, created: known === undefined, orgId: null };
    });
  }

  /** As AccountsDb.purgeExpired: links and sessions a day after they stopped working. */
  async purgeExpired(nowMs: number): Promise<{ readonly loginTokens: number; readonly sessions: number }> {
    const cutoff = msIso(nowMs - PURGE_AFTER_MS);
    return write(this.pool, async (c) => ({
      loginTokens: await run(c, 'login_tokens_purge', { cutoff }),
      sessions: await run(c, 'sessions_purge', { cutoff }),
    }));
  }

  async members(orgId: string): Promise<Member[]> {
    return rows<Member>(this.pool, 'members_of_org', { org_id: orgId });
  }

  /** The organization's keys, newest first, each with the last day it was used on. */
  async keysOf(orgId: string): Promise<KeySummary[]> {
    return rows<KeySummary>(this.pool, 'keys_of_org', { org_id: orgId });
  }

  /** Inside a write: the organization's keys the API accepts at `nowMs`, counted while no other node adds one. */
  private async liveKeys(c: Queryable, orgId: string, nowMs: number): Promise<number> {
    await run(c, 'keys_org_lock', { org_id: orgId });
    return (await one<{ n: number }>(c, 'keys_live_of_org', { org_id: orgId, now: msIso(nowMs) }))?.n ?? 0;
  }

  /** As AccountsDb.insertKeyFor: a member's new key, unless the organization has its limit of live keys. */
  private async insertKeyFor(c: Queryable, orgId: string, userId: string, nowMs = Date.now(), freed = 0): Promise<NewKey | AccountRefusal> {
    if ((await one(c, 'membership_get', { org_id: orgId, user_id: userId })) === undefined) return refuse('not_member');
    const live = (await this.liveKeys(c, orgId, nowMs)) - freed;
    if (live >= LIVE_KEYS_PER_ORG) return { ok: false, reason: 'too_many_keys', max: LIVE_KEYS_PER_ORG, live };
    const key = newKey();
    const keyId = newId('key');
    const email = (await this.userById(userId, c))?.email ?? '';
    await run(c, 'key_insert_by_user', { id: keyId, org_id: orgId, key_hash: keyHash(key), hint: keyHint(key), email, now: nowIso(), created_by: userId });
    await announce(c, 'accounts');
    return { ok: true, keyId, key };
  }

  async createKeyFor(orgId: string, userId: string): Promise<NewKey | AccountRefusal> {
    return write(this.pool, (c) => this.insertKeyFor(c, orgId, userId));
  }

  /** Revokes a key of this organization (any other organization's key is unknown here). */
  async revokeKey(orgId: string, keyId: string): Promise<{ ok: true; revoked: boolean } | AccountRefusal> {
    return write(this.pool, async (c) => {
      if ((await one(c, 'key_of_org', { id: keyId, org_id: orgId })) === undefined) return refuse('unknown_key');
      const revoked = (await run(c, 'key_revoke_in_org', { id: keyId, org_id: orgId, now: nowIso() })) === 1;
      if (revoked) await announce(c, 'accounts');
      return { ok: true as const, revoked };
    });
  }

  /** As AccountsDb.rollKey: a new key, the old one refused from now + graceMs, never later than already scheduled. */
  async rollKey(orgId: string, userId: string, keyId: string, graceMs: number, nowMs = Date.now()): Promise<(NewKey & { revokeAt: string }) | AccountRefusal> {
    if (!(graceMs >= 0 && graceMs <= ROLL_GRACE_MAX_MS)) return refuse('invalid');
    return write(this.pool, async (c) => {
      // Locked: a concurrent roll of the same key waits, then sees this one's revoke_at.
      const old = await one<{ revoked_at: string | null; revoke_at: string | null }>(c, 'key_of_org', { id: keyId, org_id: orgId });
      if (old === undefined) return refuse('unknown_key');
      if (keyRevoked(old, nowMs)) return refuse('not_active');
      const wanted = nowMs + graceMs;
      const revokeAtMs = old.revoke_at === null ? wanted : Math.min(wanted, Date.parse(old.revoke_at));
      // The old key counts as live until its grace ends; rolled without grace, it makes room for the new one.
      const made = await this.insertKeyFor(c, orgId, userId, nowMs, revokeAtMs <= nowMs ? 1 : 0);
      if (!made.ok) return made;
      const revokeAt = msIso(revokeAtMs);
      await run(c, 'key_schedule_revoke', { id: keyId, revoke_at: revokeAt });
      return { ...made, revokeAt };
    });
  }

  // --- What an owner does to the organization (issue 28 item 12): as AccountsDb's ---------------

  /** Inside a write: null when `userId` owns the organization, else why not. */
  private async notOwner(c: Queryable, orgId: string, userId: string): Promise<OrgAdminRefusal | null> {
    if ((await this.orgById(orgId, c)) === undefined) return { ok: false, reason: 'unknown_org' };
    return (await one<{ role: string }>(c, 'membership_get', { org_id: orgId, user_id: userId }))?.role === 'owner' ? null : { ok: false, reason: 'not_owner' };
  }

  async renameOrg(orgId: string, userId: string, name: string): Promise<{ ok: true; name: string; renamed: boolean } | OrgAdminRefusal> {
    const wanted = orgName(name);
    if (!wanted.ok) return { ok: false, reason: 'invalid' };
    // Two nodes giving one name to two organizations: the second's update fails on the unique
    // index, and its retry finds the name taken.
    return write(this.pool, async (c): Promise<{ ok: true; name: string; renamed: boolean } | OrgAdminRefusal> => {
      const refused = await this.notOwner(c, orgId, userId);
      if (refused !== null) return refused;
      const holder = await this.orgByName(wanted.name, c);
      if (holder !== undefined && holder.id !== orgId) return { ok: false, reason: 'name_taken' };
      const renamed = (await this.orgById(orgId, c))?.name !== wanted.name && (await run(c, 'org_rename', { id: orgId, name: wanted.name })) === 1;
      // Every node's copy of the keys carries the organization's name (/v1/usage says it).
      if (renamed) await announce(c, 'accounts');
      return { ok: true, name: wanted.name, renamed };
    });
  }

  async pendingInvites(orgId: string, nowMs: number): Promise<PendingInvite[]> {
    return rows<PendingInvite>(this.pool, 'org_invites_pending', { org_id: orgId, now: msIso(nowMs) });
  }

  async cancelInvite(orgId: string, userId: string, inviteId: string, nowMs: number): Promise<{ ok: true; cancelled: boolean } | OrgAdminRefusal> {
    return write(this.pool, async (c): Promise<{ ok: true; cancelled: boolean } | OrgAdminRefusal> => {
      const refused = await this.notOwner(c, orgId, userId);
      if (refused !== null) return refused;
      return { ok: true, cancelled: (await run(c, 'org_invite_cancel', { id: inviteId, org_id: orgId, now: msIso(nowMs) })) === 1 };
    });
  }

  async removeMember(orgId: string, userId: string, memberId: string, nowMs: number): Promise<{ ok: true; sessionsEnded: number } | OrgAdminRefusal> {
    return write(this.pool, async (c): Promise<{ ok: true; sessionsEnded: number } | OrgAdminRefusal> => {
      await run(c, 'org_owner_lock', { org_id: orgId });
      const refused = await this.notOwner(c, orgId, userId);
      if (refused !== null) return refused;
      const role = (await one<{ role: string }>(c, 'membership_get', { org_id: orgId, user_id: memberId }))?.role;
      if (role === undefined) return { ok: false, reason: 'unknown_member' };
      if (role === 'owner' && ((await one<{ n: number }>(c, 'org_owner_count', { org_id: orgId }))?.n ?? 0) <= 1) return { ok: false, reason: 'last_owner' };
      await run(c, 'org_membership_delete', { org_id: orgId, user_id: memberId });
      const left = (await one<{ n: number }>(c, 'org_memberships_of_user', { user_id: memberId }))?.n ?? 0;
      const sessionsEnded = left === 0 ? await run(c, 'sessions_end_all', { user_id: memberId, now: msIso(nowMs) }) : 0;
      return { ok: true, sessionsEnded };
    });
  }
}

/** Reading the usage ledger (usage_days). Charging is the metering thread's (pg-thread.ts). */
export class PgUsage {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async periodTotals(orgId: string, atMs: number): Promise<Totals> {
    const p = periodAt(atMs);
    return (await one<Totals>(this.pool, 'usage_period', { org_id: orgId, first_day: p.firstDay, last_day: p.lastDay }))!;
  }

  /** Per key of the organization, the last day it made a request on (YYYY-MM-DD). */
  async lastUsedByKey(orgId: string): Promise<Map<string, string>> {
    const found = await rows<{ key_id: string; day: string }>(this.pool, 'usage_last_day_by_key', { org_id: orgId });
    return new Map(found.map((r) => [r.key_id, r.day]));
  }

  async byKey(atMs: number): Promise<Map<string, Totals>> {
    const p = periodAt(atMs);
    const found = await rows<Totals & { key_id: string }>(this.pool, 'usage_by_key', { first_day: p.firstDay, last_day: p.lastDay });
    return new Map(found.map((r) => [r.key_id, { records: r.records, requests: r.requests }]));
  }

  /** The /v1/usage body (and `family-events usage`). Totals and days come from one statement, so they agree under concurrent charges. */
  async report(org: OrgRow, plan: Plan, atMs: number): Promise<UsageBody> {
    const p = periodAt(atMs);
    const days = await rows<Totals & { day: string }>(this.pool, 'usage_by_day', { org_id: org.id, first_day: p.firstDay, last_day: p.lastDay });
    return usageBody(org, plan, atMs, days);
  }
}
