// The accounts store on both backends, one suite: the behaviours test/ledger/accounts.test.ts
// checks through the metering thread, run here on the stores themselves — AccountsDb/UsageDb on a
// temporary LEDGER_DIR, and PgAccounts/PgUsage on a fresh PostgreSQL database — with the same
// assertions, so the two answer alike. Then what only the shared ledger must do: several pools
// (nodes) spending one link, signing up one address, creating one organization at once; every
// change announced; every statement of sql/postgres/ledger_queries.sql valid against the schema.
// The PostgreSQL parts skip with a reason on a machine without a server.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { REPO_ROOT } from '../../../core/config.ts';
import { keyHash } from '../../../core/keys.ts';
import { dayAt, periodAt } from '../../../ledger/period.ts';
import { openPool, pgQuery } from '../../../ledger/postgres/db.ts';
import { migrate } from '../../../ledger/postgres/migrate.ts';
import { CHANGES_CHANNEL } from '../../../ledger/postgres/cluster.ts';
import { PgAccounts, PgUsage } from '../../../ledger/postgres/store.ts';
import { INVITE_TOKEN_MAX_MS } from '../../../ledger/rules.ts';
import { AccountsDb, UsageDb } from '../../../ledger/sqlite/store.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../../pg.ts';

const missing = await postgresMissing();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;

/** What both backends offer: PgAccounts' public methods, and PgUsage's. */
type Accounts = Pick<PgAccounts, keyof PgAccounts>;
type Usage = Pick<PgUsage, keyof PgUsage>;

interface Backend {
  readonly accounts: Accounts;
  readonly usage: Usage;
  /** A charge, as the metering thread writes it (the test's stand-in for it). */
  charge(orgId: string, keyId: string, day: string, records: number, requests: number): Promise<void>;
  /** Every row of a table, as stored. */
  stored(table: 'login_tokens' | 'sessions'): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const settings = (url: string) => ({ url, poolMax: 4, statementTimeoutMs: 5000 });

async function openSqlite(): Promise<Backend> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-store-'));
  const db = AccountsDb.open(dir);
  const usage = UsageDb.openWriter(dir);
  // AccountsDb's methods, answering through promises; keysOf with the usage ledger's last use, as the thread calls it.
  const wrapped: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(PgAccounts.prototype)) {
    const fn = (db as unknown as Record<string, unknown>)[name];
    if (name !== 'constructor' && typeof fn === 'function') wrapped[name] = async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown).apply(db, args);
  }
  wrapped['keysOf'] = async (orgId: string) => db.keysOf(orgId, usage.lastUsedByKey(orgId));
  const asyncUsage: Usage = {
    periodTotals: async (...a) => usage.periodTotals(...a),
    report: async (...a) => usage.report(...a),
    byKey: async (...a) => usage.byKey(...a),
    lastUsedByKey: async (...a) => usage.lastUsedByKey(...a),
  };
  return {
    accounts: wrapped as unknown as Accounts,
    usage: asyncUsage,
    charge: async (...a) => usage.charge(...a),
    stored: async (table) => {
      const file = new Database(path.join(dir, 'accounts.sqlite'), { readonly: true });
      try {
        return file.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
      } finally {
        file.close();
      }
    },
    close: async () => {
      usage.close();
      db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Backend> {
  const database = await testDatabase('store');
  await migrate(settings(database.url));
  const pool = openPool(settings(database.url), 'pg-store test');
  return {
    accounts: new PgAccounts(pool),
    usage: new PgUsage(pool),
    charge: async (org_id, key_id, day, records, requests) => {
      await pool.query({
        text: `INSERT INTO usage_days (org_id, key_id, day, records, requests) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (org_id, day, key_id) DO UPDATE SET records = usage_days.records + excluded.records, requests = usage_days.requests + excluded.requests`,
        values: [org_id, key_id, day, records, requests],
      });
    },
    stored: async (table) => (await pool.query(`SELECT * FROM ${table}`)).rows as Record<string, unknown>[],
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
}

const binding = (v: string): string => createHash('sha256').update(v).digest('hex');
let n = 0;
const freshEmail = (): string => `dev${++n}.${Date.now()}@store.example`;

const BACKENDS = [
  { name: 'sqlite', skip: false as const, open: openSqlite },
  { name: 'postgres', skip: missing ?? (false as const), open: openPostgres },
];

for (const backend of BACKENDS) {
  describe(`the accounts store on ${backend.name}`, { skip: backend.skip }, () => {
    let be: Backend;
    let a: Accounts;
    before(async () => {
      be = await backend.open();
      a = be.accounts;
    });
    after(async () => {
      await be?.close();
    });

    async function newUser(email = freshEmail()) {
      const signed = await a.signInByEmail(email);
      const [org] = await a.organizationsOf(signed.user.id);
      assert.ok(org);
      return { user: signed.user, org };
    }

    describe('sign-in links', () => {
      test('an address gets at most its limit of links in a window, sign-in and invitation alike, whatever its case', async () => {
        const limit = { max: 3, windowMs: 10 * MIN };
        const owner = await newUser();
        const email = freshEmail();
        const t0 = Date.now();
        const at = (i: number, ms: number) =>
          a.issueLoginToken(i % 2 ? email.toUpperCase() : email, 'sign_in', null, binding(`b${i}`), 10 * MIN, t0 + ms, limit);
        for (let i = 0; i < 2; i++) assert.ok((await at(i, i * MIN)).ok, `link ${i + 1}`);
        assert.ok((await a.issueLoginToken(email, 'invite', owner.org.id, '', 10 * MIN, t0 + 2 * MIN, limit)).ok, 'an invitation counts as the third');
        assert.deepEqual(await at(3, 3 * MIN), { ok: false, reason: 'limited' });
        assert.deepEqual(await a.issueLoginToken(email, 'invite', owner.org.id, '', 10 * MIN, t0 + 4 * MIN, limit), { ok: false, reason: 'limited' });
        assert.ok((await a.issueLoginToken(freshEmail(), 'sign_in', null, binding('x'), 10 * MIN, t0 + 4 * MIN, limit)).ok, 'another address is not limited');
        // The first link (t0) leaves the window windowMs later; the next one then fills it again.
        assert.ok((await at(5, 10 * MIN + 1)).ok, 'a link leaves the window after windowMs');
        assert.deepEqual(await at(6, 10 * MIN + 2), { ok: false, reason: 'limited' });
        // Links issued without a limit (none is asked) count toward it all the same.
        const other = freshEmail();
        for (let i = 0; i < 4; i++)
          assert.ok((await a.issueLoginToken(other, 'sign_in', null, binding('x'), 10 * MIN, t0 + 4 * MIN)).ok, 'without a limit, the store issues');
        assert.deepEqual(await a.issueLoginToken(other, 'sign_in', null, binding('x'), 10 * MIN, t0 + 5 * MIN, limit), { ok: false, reason: 'limited' });
      });

      test('a token is spent once, from the browser it was issued to, and carries what it was issued for', async () => {
        const email = freshEmail();
        const b = binding('pre-session cookie A');
        const issued = await a.issueLoginToken(email, 'sign_in', null, b, 10 * MIN);
        assert.ok(issued.ok);
        assert.match(issued.token, /^[\w-]{43}$/);
        assert.deepEqual(await a.spendLoginToken(issued.token, 'sign_in', binding('another browser'), Date.now()), { ok: false, reason: 'binding' });
        const both = await Promise.all([a.spendLoginToken(issued.token, 'sign_in', b, Date.now()), a.spendLoginToken(issued.token, 'sign_in', b, Date.now())]);
        assert.deepEqual(
          both.sort((x, y) => Number(y.ok) - Number(x.ok)),
          [
            { ok: true, email, purpose: 'sign_in', orgId: null },
            { ok: false, reason: 'used' },
          ],
        );
        const stored = JSON.stringify(await be.stored('login_tokens'));
        assert.ok(!stored.includes(issued.token));
        assert.ok(stored.includes(keyHash(issued.token)));
      });

      test('a token expires, and is never valid beyond 15 minutes whatever the caller asks', async () => {
        const b = binding('browser');
        const short = await a.issueLoginToken(freshEmail(), 'sign_in', null, b, 2 * MIN);
        assert.ok(short.ok);
        assert.deepEqual(await a.spendLoginToken(short.token, 'sign_in', b, Date.now() + 2 * MIN + 1), { ok: false, reason: 'expired' });
        const long = await a.issueLoginToken(freshEmail(), 'sign_in', null, b, 24 * 60 * MIN);
        assert.ok(long.ok);
        assert.deepEqual(await a.spendLoginToken(long.token, 'sign_in', b, Date.now() + 15 * MIN + 1000), { ok: false, reason: 'expired' });
        assert.equal((await a.spendLoginToken(long.token, 'sign_in', b, Date.now() + 14 * MIN)).ok, true);
        assert.deepEqual(await a.issueLoginToken(freshEmail(), 'sign_in', null, b, 0), { ok: false, reason: 'invalid' });
        assert.deepEqual(await a.issueLoginToken(freshEmail(), 'sign_in', 'org_x', b, MIN), { ok: false, reason: 'invalid' });
      });

      test('a tampered token is unknown (any one character changed)', async () => {
        const b = binding('browser');
        const issued = await a.issueLoginToken(freshEmail(), 'sign_in', null, b, 10 * MIN);
        assert.ok(issued.ok);
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        await fc.assert(
          fc.asyncProperty(fc.nat(issued.token.length - 1), fc.constantFrom(...alphabet), async (i, c) => {
            fc.pre(issued.token[i] !== c);
            const tampered = issued.token.slice(0, i) + c + issued.token.slice(i + 1);
            assert.deepEqual(await a.spendLoginToken(tampered, 'sign_in', b, Date.now()), { ok: false, reason: 'unknown' });
          }),
          { numRuns: 100, interruptAfterTimeLimit: 3000 },
        );
        assert.equal((await a.spendLoginToken(issued.token, 'sign_in', b, Date.now())).ok, true);
      });

      test('issuing answers alike for a known and an unknown address', async () => {
        const { user } = await newUser();
        const known = await a.issueLoginToken(user.email!, 'sign_in', null, binding('x'), 10 * MIN);
        const unknown = await a.issueLoginToken(freshEmail(), 'sign_in', null, binding('x'), 10 * MIN);
        assert.deepEqual(Object.keys(known).sort(), Object.keys(unknown).sort());
        assert.ok(known.ok && unknown.ok);
      });

      test('a link is spent only by the route it was made for: the other kind is refused, left unspent, and still works at its own', async () => {
        const owner = await newUser();
        const b = binding('pre-session cookie T');
        const signInEmail = freshEmail();
        const inviteeEmail = freshEmail();
        const signIn = await a.issueLoginToken(signInEmail, 'sign_in', null, b, 10 * MIN);
        const invite = await a.issueLoginToken(inviteeEmail, 'invite', owner.org.id, '', 10 * MIN, Date.now(), null, owner.user.id);
        assert.ok(signIn.ok && invite.ok);
        const used = async (token: string) => (await be.stored('login_tokens')).find((r) => r['token_hash'] === keyHash(token))!['used_at'];
        // Each posted to the other's page, from the very browser it is bound to: refused, nothing spent.
        assert.deepEqual(await a.spendLoginToken(invite.token, 'sign_in', b, Date.now()), { ok: false, reason: 'purpose' });
        assert.deepEqual(await a.spendLoginToken(signIn.token, 'invite', b, Date.now()), { ok: false, reason: 'purpose' });
        assert.deepEqual(await a.peekLoginToken(invite.token, 'sign_in', b, Date.now()), { ok: false, reason: 'purpose' });
        assert.equal(await used(invite.token), null);
        assert.equal(await used(signIn.token), null);
        // A look names whom and what, twice over, and spends nothing; a sign-in link only to its own browser.
        for (let i = 0; i < 2; i++) {
          assert.deepEqual(await a.peekLoginToken(invite.token, 'invite', binding(`anyone ${i}`), Date.now()), {
            ok: true,
            email: inviteeEmail,
            purpose: 'invite',
            orgId: owner.org.id,
            orgName: owner.org.name,
            inviter: owner.user.email,
          });
        }
        assert.deepEqual(await a.peekLoginToken(signIn.token, 'sign_in', b, Date.now()), {
          ok: true,
          email: signInEmail,
          purpose: 'sign_in',
          orgId: null,
          orgName: null,
          inviter: null,
        });
        assert.deepEqual(await a.peekLoginToken(signIn.token, 'sign_in', binding('another browser'), Date.now()), { ok: false, reason: 'binding' });
        assert.deepEqual(await a.peekLoginToken(signIn.token, 'sign_in', b, Date.now() + 10 * MIN), { ok: false, reason: 'expired' });
        assert.deepEqual(await a.peekLoginToken('no-such-token', 'invite', b, Date.now()), { ok: false, reason: 'unknown' });
        assert.equal(await used(invite.token), null);
        // Each at its own route: spent, once.
        assert.deepEqual(await a.spendLoginToken(invite.token, 'invite', binding('invitee browser'), Date.now()), {
          ok: true,
          email: inviteeEmail,
          purpose: 'invite',
          orgId: owner.org.id,
        });
        assert.deepEqual(await a.spendLoginToken(signIn.token, 'sign_in', b, Date.now()), { ok: true, email: signInEmail, purpose: 'sign_in', orgId: null });
        for (const [token, purpose] of [
          [invite.token, 'invite'],
          [signIn.token, 'sign_in'],
        ] as const) {
          assert.deepEqual(await a.peekLoginToken(token, purpose, b, Date.now()), { ok: false, reason: 'used' });
          assert.deepEqual(await a.spendLoginToken(token, purpose, b, Date.now()), { ok: false, reason: 'used' });
        }
        assert.deepEqual(await a.userOf(owner.user.id), owner.user);
        assert.equal(await a.userOf('usr_nobody'), null);
      });

      test('an invitation carries its organization, lasts days, is bound to no browser, and makes its addressee a member', async () => {
        const owner = await newUser();
        const inviteeEmail = freshEmail();
        const t0 = Date.now();
        const invite = await a.issueLoginToken(inviteeEmail, 'invite', owner.org.id, binding('inviter browser'), 30 * DAY);
        assert.ok(invite.ok);
        const row = (await be.stored('login_tokens')).find((r) => r['token_hash'] === keyHash(invite.token))!;
        assert.equal(Date.parse(String(row['expires_at'])) - Date.parse(String(row['created_at'])), INVITE_TOKEN_MAX_MS, 'capped at the invitation maximum');
        assert.deepEqual(await a.spendLoginToken(invite.token, 'invite', binding('invitee browser'), t0 + INVITE_TOKEN_MAX_MS + 1), {
          ok: false,
          reason: 'expired',
        });
        const spent = await a.spendLoginToken(invite.token, 'invite', binding('invitee browser'), t0 + 3 * DAY);
        assert.ok(spent.ok);
        assert.deepEqual([spent.purpose, spent.orgId], ['invite', owner.org.id]);
        assert.deepEqual(await a.spendLoginToken(invite.token, 'invite', binding('invitee browser'), Date.now()), { ok: false, reason: 'used' });
        const invitee = await a.joinByInvite(spent.email, owner.org.id);
        assert.ok('user' in invitee);
        assert.equal(invitee.created, true);
        assert.deepEqual(
          (await a.organizationsOf(invitee.user.id)).map((o) => [o.id, o.role]),
          [[owner.org.id, 'member']],
        );
        assert.deepEqual(
          (await a.members(owner.org.id)).map((m) => [m.user_id, m.role]),
          [
            [owner.user.id, 'owner'],
            [invitee.user.id, 'member'],
          ],
        );
        const made = await a.createKeyFor(owner.org.id, invitee.user.id);
        assert.ok(made.ok);
        assert.deepEqual(
          (await a.keysOf(owner.org.id)).map((k) => k.id),
          [made.keyId],
        );
        assert.deepEqual(await a.issueLoginToken('x@y.example', 'invite', 'org_nosuchorg', binding('b'), MIN), { ok: false, reason: 'unknown_org' });
        assert.deepEqual(await a.joinByInvite('x@y.example', 'org_nosuchorg'), { ok: false, reason: 'unknown_org' });

        const other = await newUser();
        const joined = await a.joinByInvite(other.user.email!.toUpperCase(), owner.org.id);
        assert.ok('user' in joined);
        assert.deepEqual([joined.user.id, joined.created], [other.user.id, false]);
        // (Sorted: both memberships may be made within one millisecond, which orders them by id.)
        assert.deepEqual((await a.organizationsOf(other.user.id)).map((o) => [o.role, o.id]).sort(), [
          ['member', owner.org.id],
          ['owner', other.org.id],
        ]);
        // Accepting again changes nothing; unknown users and organizations are refused.
        assert.deepEqual(await a.acceptInvite(other.user.id, owner.org.id), { ok: true, joined: false });
        assert.deepEqual(await a.acceptInvite('usr_nobody', owner.org.id), { ok: false, reason: 'unknown_user' });
        assert.deepEqual(await a.acceptInvite(other.user.id, 'org_nosuchorg'), { ok: false, reason: 'unknown_org' });
      });

      test('spent and expired links and ended sessions are purged a day after they stop working, and nothing live is', async () => {
        const { user } = await newUser();
        const now = Date.now();
        const b = binding('purge browser');
        const live = await a.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now);
        const oldExpired = await a.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now - 2 * DAY);
        const oldSpent = await a.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now - 2 * DAY);
        assert.ok(live.ok && oldExpired.ok && oldSpent.ok);
        assert.ok((await a.spendLoginToken(oldSpent.token, 'sign_in', b, now - 2 * DAY + MIN)).ok);
        const recentExpired = await a.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now - 30 * MIN);
        assert.ok(recentExpired.ok);
        const liveSession = await a.createSession(user.id, DAY, now);
        const oldSession = await a.createSession(user.id, DAY, now - 3 * DAY);
        const endedLongAgo = await a.createSession(user.id, 30 * DAY, now - 3 * DAY);
        const endedNow = await a.createSession(user.id, 30 * DAY, now);
        assert.ok(liveSession.ok && oldSession.ok && endedLongAgo.ok && endedNow.ok);
        await a.endSession(endedLongAgo.token, now - 2 * DAY);
        await a.endSession(endedNow.token, now);

        const purged = await a.purgeExpired(now);
        assert.ok(purged.loginTokens >= 2 && purged.sessions >= 2, JSON.stringify(purged));
        const tokens = new Set((await be.stored('login_tokens')).map((r) => r['token_hash']));
        const sessions = new Set((await be.stored('sessions')).map((r) => r['token_hash']));
        assert.deepEqual(
          [live, recentExpired, oldExpired, oldSpent].map((t) => tokens.has(keyHash(t.token))),
          [true, true, false, false],
        );
        assert.deepEqual(
          [liveSession, endedNow, oldSession, endedLongAgo].map((s) => sessions.has(keyHash(s.token))),
          [true, true, false, false],
        );
        assert.deepEqual(await a.spendLoginToken(recentExpired.token, 'sign_in', b, now), { ok: false, reason: 'expired' });
        assert.ok(await a.touchSession(liveSession.token, now, DAY));
      });
    });

    describe('accounts', () => {
      test('the first sign-in makes the account and an organization on Community it owns; the next finds it (any case)', async () => {
        const email = freshEmail();
        const first = await a.signInByEmail(email);
        assert.equal(first.created, true);
        assert.match(first.user.id, /^usr_/);
        assert.match(first.user.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        const orgs = await a.organizationsOf(first.user.id);
        assert.deepEqual(
          orgs.map((o) => ({ id: o.id, name: o.name, plan: o.plan, role: o.role })),
          [{ id: first.orgId, name: email, plan: 'community', role: 'owner' }],
        );
        const again = await a.signInByEmail(`  ${email.toUpperCase()} `);
        assert.deepEqual(again, { user: first.user, created: false, orgId: null });
        assert.equal((await a.organizationsOf(first.user.id)).length, 1);
        const org = await a.orgById(first.orgId!);
        assert.deepEqual(await a.orgByName(email.toUpperCase()), org);
      });

      test('an organization name already taken (by the command line) gets a distinct one', async () => {
        const email = freshEmail();
        await a.createKey(email, 'ops@cli.example', 'partner');
        const signed = await a.signInByEmail(email);
        const [org] = await a.organizationsOf(signed.user.id);
        assert.equal(org!.name, `${email} (2)`);
        assert.equal(org!.plan, 'community');
      });

      test('an identity with an unverified e-mail is never linked to the account of that e-mail, nor given it', async () => {
        const { user } = await newUser();
        const issuer = 'https://idp.example';
        const tag = n;
        const stranger = await a.signInByIdentity(issuer, `sub-unverified-${tag}`, user.email, false);
        assert.notEqual(stranger.user.id, user.id);
        assert.equal(stranger.created, true);
        assert.equal(stranger.user.email, null);
        assert.deepEqual(
          (await a.organizationsOf(stranger.user.id)).map((o) => [o.name, o.plan, o.role]),
          [[`Organization ${stranger.user.id}`, 'community', 'owner']],
        );
        const back = await a.signInByIdentity(issuer, `sub-unverified-${tag}`, freshEmail(), false);
        assert.deepEqual({ id: back.user.id, created: back.created }, { id: stranger.user.id, created: false });
        assert.equal((await a.signInByEmail(user.email!)).user.id, user.id);
        const verified = await a.signInByIdentity(issuer, `sub-verified-${tag}`, user.email, true);
        assert.deepEqual({ id: verified.user.id, created: verified.created }, { id: user.id, created: false });
        const other = await a.signInByIdentity('https://other.example', `sub-verified-${tag}`, null, false);
        assert.notEqual(other.user.id, user.id);
        // A verified e-mail nobody has yet becomes the new account's.
        const fresh = freshEmail();
        const made = await a.signInByIdentity(issuer, `sub-fresh-${tag}`, fresh, true);
        assert.deepEqual([made.created, made.user.email], [true, fresh]);
        assert.equal((await a.signInByEmail(fresh)).user.id, made.user.id);
      });
    });

    describe('sessions', () => {
      test('idle and absolute expiry, sign-out, sign-out everywhere', async () => {
        const { user } = await newUser();
        const s = await a.createSession(user.id, 60 * MIN);
        assert.ok(s.ok);
        const t0 = Date.now();
        assert.deepEqual(await a.touchSession(s.token, t0, 10 * MIN), { userId: user.id, sessionId: s.sessionId });
        assert.equal(await a.touchSession(s.token, t0 + 10 * MIN + 1000, 10 * MIN), null, 'idle too long');
        assert.ok(await a.touchSession(s.token, t0 + 9 * MIN, 10 * MIN));
        assert.ok(await a.touchSession(s.token, t0 + 18 * MIN, 10 * MIN));
        assert.equal(await a.touchSession(s.token, t0 + 61 * MIN, 10_000 * MIN), null, 'absolutely expired');
        assert.equal(await a.touchSession(s.token.slice(0, -1) + (s.token.endsWith('A') ? 'B' : 'A'), t0, MIN), null, 'tampered');

        const x = await a.createSession(user.id, 60 * MIN);
        const y = await a.createSession(user.id, 60 * MIN);
        assert.ok(x.ok && y.ok);
        assert.notEqual(x.token, y.token);
        assert.deepEqual(await a.endSession(x.token, Date.now()), { ended: true });
        assert.deepEqual(await a.endSession(x.token, Date.now()), { ended: false });
        assert.equal(await a.touchSession(x.token, Date.now(), MIN), null, 'signed out');
        assert.ok(await a.touchSession(y.token, Date.now(), MIN), 'the other session lives on');
        const z = await a.createSession(user.id, 60 * MIN);
        assert.ok(z.ok);
        assert.deepEqual(await a.endAllSessions(user.id, Date.now()), { ended: 3 });
        for (const t of [s.token, y.token, z.token]) assert.equal(await a.touchSession(t, Date.now(), MIN), null, 'signed out everywhere');
        assert.deepEqual(await a.createSession('usr_nobody', MIN), { ok: false, reason: 'unknown_user' });
        assert.deepEqual(await a.createSession(user.id, 0), { ok: false, reason: 'invalid' });
        const stored = JSON.stringify(await be.stored('sessions'));
        assert.ok(![s, x, y, z].some((t) => stored.includes(t.token)), 'sessions are stored as hashes');
      });
    });

    describe('keys', () => {
      test('from the website: created by a member, in the view at once, listed newest first with its last use; revoked once; other organizations cannot touch it', async () => {
        const { user, org } = await newUser();
        const first = await a.createKeyFor(org.id, user.id);
        const made = await a.createKeyFor(org.id, user.id);
        assert.ok(first.ok && made.ok);
        const hash = keyHash(made.key);
        const inView = (await a.view()).keys.find((k) => k.hash === hash);
        assert.deepEqual(inView && { keyId: inView.keyId, orgId: inView.orgId, orgName: inView.orgName, plan: inView.plan.name, revoked: inView.revoked }, {
          keyId: made.keyId,
          orgId: org.id,
          orgName: org.name,
          plan: 'community',
          revoked: false,
        });

        const today = dayAt(Date.now());
        await be.charge(org.id, made.keyId, today, 3, 1);
        const keys = await a.keysOf(org.id);
        // Made within the same second: the later one is still listed first.
        assert.deepEqual(
          keys.map((k) => [k.id, k.created_by, k.revoked_at, k.revoke_at, k.last_used]),
          [
            [made.keyId, user.id, null, null, today],
            [first.keyId, user.id, null, null, null],
          ],
        );
        assert.match(keys[0]!.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        assert.deepEqual(Object.keys(keys[0]!).sort(), ['created_at', 'created_by', 'hint', 'id', 'last_used', 'revoke_at', 'revoked_at']);
        assert.ok(!JSON.stringify(keys).includes(made.key) && !JSON.stringify(keys).includes(hash), 'never the key nor its hash');

        const other = await newUser();
        assert.deepEqual(await a.revokeKey(other.org.id, made.keyId), { ok: false, reason: 'unknown_key' });
        assert.deepEqual(await a.createKeyFor(org.id, other.user.id), { ok: false, reason: 'not_member' });
        assert.deepEqual(await a.revokeKey(org.id, made.keyId), { ok: true, revoked: true });
        assert.equal((await a.view()).keys.find((k) => k.hash === hash)?.revoked, true);
        assert.deepEqual(await a.revokeKey(org.id, made.keyId), { ok: true, revoked: false });
        assert.match((await a.keysOf(org.id))[0]!.revoked_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      });

      test('roll: a new key at once; the old one is revoked from its revoke_at, which a second roll never moves later', async () => {
        const { user, org } = await newUser();
        const old = await a.createKeyFor(org.id, user.id);
        assert.ok(old.ok);
        const t0 = Date.now();
        const rolled = await a.rollKey(org.id, user.id, old.keyId, 5 * MIN, t0);
        assert.ok(rolled.ok);
        assert.equal(rolled.revokeAt, new Date(t0 + 5 * MIN).toISOString());
        const during = await a.view(t0 + MIN);
        assert.equal(during.keys.find((k) => k.keyId === old.keyId)?.revoked, false);
        assert.equal(during.keys.find((k) => k.keyId === rolled.keyId)?.revoked, false);
        assert.ok(during.nextRevokeAtMs <= t0 + 5 * MIN);
        assert.equal((await a.keysOf(org.id)).find((k) => k.id === old.keyId)?.revoke_at, rolled.revokeAt);
        const again = await a.rollKey(org.id, user.id, old.keyId, 60 * MIN, t0 + MIN);
        assert.ok(again.ok);
        assert.equal(again.revokeAt, rolled.revokeAt, 'never lengthened');
        const afterwards = await a.view(t0 + 5 * MIN);
        assert.equal(afterwards.keys.find((k) => k.keyId === old.keyId)?.revoked, true);
        assert.deepEqual(await a.rollKey(org.id, user.id, old.keyId, 0, t0 + 5 * MIN), { ok: false, reason: 'not_active' });
        assert.deepEqual(await a.rollKey(org.id, user.id, rolled.keyId, -1), { ok: false, reason: 'invalid' });
        assert.deepEqual(await a.rollKey(org.id, user.id, 'key_nosuchkey', MIN), { ok: false, reason: 'unknown_key' });
      });

      test("the operator's: createKey makes or reuses the organization (any case), keys lists them oldest first, revoke by id or by key", async () => {
        const name = `Operator Org ${n++}`;
        const one = await a.createKey(name, 'ops@cli.example', 'partner');
        assert.equal(one.created, true);
        assert.deepEqual({ name: one.org.name, plan: one.org.plan }, { name, plan: 'partner' });
        assert.match(one.org.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        assert.deepEqual(await a.orgById(one.org.id), one.org);
        const two = await a.createKey(name.toUpperCase(), 'ops2@cli.example', 'community');
        assert.deepEqual([two.created, two.org], [false, one.org]);
        const listed = (await a.keys()).filter((k) => k.org_id === one.org.id);
        assert.deepEqual(
          listed.map((k) => [k.org_name, k.email, k.key_hash, k.revoked_at, k.created_by]).sort(),
          [
            [name, 'ops2@cli.example', keyHash(two.key), null, null],
            [name, 'ops@cli.example', keyHash(one.key), null, null],
          ].sort(),
        );
        assert.ok(listed.every((k) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(k.created_at)));

        assert.deepEqual(await a.revoke(one.keyId), { found: true, revoked: true, id: one.keyId });
        assert.deepEqual(await a.revoke(one.keyId), { found: true, revoked: false, id: one.keyId });
        assert.deepEqual(await a.revoke(two.key), { found: true, revoked: true, id: two.keyId });
        assert.deepEqual(await a.revoke('key_nosuchkey'), { found: false, revoked: false, id: 'key_nosuchkey' });
        assert.deepEqual(await a.revoke('bsc_live_nosuchkey'), { found: false, revoked: false, id: null });
        assert.ok((await a.keys()).filter((k) => k.org_id === one.org.id).every((k) => k.revoked_at !== null));
      });

      test('plans are rows: set adds or changes one, organizations move between them, the view follows', async () => {
        await a.setPlan({
          name: 'kids',
          monthlyRecordLimit: 100,
          excludedCategories: ['seasonal', 'festivals'],
          attributionRequired: true,
          requestsPerMinute: 5,
        });
        await a.setPlan({
          name: 'kids',
          monthlyRecordLimit: 120,
          excludedCategories: ['seasonal', 'festivals'],
          attributionRequired: false,
          requestsPerMinute: 7,
        });
        const plans = await a.plans();
        assert.deepEqual(
          plans.map((p) => p.name),
          ['community', 'kids', 'partner'],
        );
        assert.deepEqual(
          plans.find((p) => p.name === 'kids'),
          { name: 'kids', monthlyRecordLimit: 120, excludedCategories: ['festivals', 'seasonal'], attributionRequired: false, requestsPerMinute: 7 },
        );
        assert.deepEqual(
          plans.find((p) => p.name === 'partner'),
          { name: 'partner', monthlyRecordLimit: null, excludedCategories: [], attributionRequired: false, requestsPerMinute: 6000 },
        );
        const made = await a.createKey(`Kids Org ${n++}`, 'k@kids.example', 'community');
        await a.setOrgPlan(made.org.id, 'kids');
        assert.equal((await a.orgById(made.org.id))?.plan, 'kids');
        const view = await a.view();
        assert.equal(view.orgs.get(made.org.id)?.plan, 'kids');
        assert.equal(view.plans.get('kids')?.monthlyRecordLimit, 120);
        assert.equal((await a.organizations()).filter((o) => o.id === made.org.id).length, 1);
      });
    });

    describe('usage', () => {
      test("period totals, per key, last use and the /v1/usage body count this month's days only", async () => {
        const atMs = Date.parse('2026-11-21T09:00:00-08:00');
        const made = await a.createKey(`Usage Org ${n++}`, 'u@usage.example', 'community');
        const other = await a.createKey(made.org.name, 'u2@usage.example', 'community');
        await be.charge(made.org.id, made.keyId, '2026-10-31', 9, 9);
        await be.charge(made.org.id, made.keyId, '2026-11-01', 3, 1);
        await be.charge(made.org.id, made.keyId, '2026-11-21', 4, 2);
        await be.charge(made.org.id, other.keyId, '2026-11-21', 5, 1);
        await be.charge(made.org.id, other.keyId, '2026-11-22', 0, 0);
        assert.deepEqual(await be.usage.periodTotals(made.org.id, atMs), { records: 12, requests: 4 });
        assert.deepEqual(await be.usage.periodTotals('org_nosuchorg', atMs), { records: 0, requests: 0 });
        const byKey = await be.usage.byKey(atMs);
        assert.deepEqual(
          [byKey.get(made.keyId), byKey.get(other.keyId)],
          [
            { records: 7, requests: 3 },
            { records: 5, requests: 1 },
          ],
        );
        assert.deepEqual(
          await be.usage.lastUsedByKey(made.org.id),
          new Map([
            [made.keyId, '2026-11-21'],
            [other.keyId, '2026-11-21'],
          ]),
        );
        const plan = (await a.plans()).find((p) => p.name === 'community')!;
        const body = await be.usage.report(made.org, plan, atMs);
        assert.deepEqual(body.organization, { id: made.org.id, name: made.org.name });
        assert.deepEqual(body.plan, {
          name: 'community',
          monthly_record_limit: 25,
          excluded_categories: ['festivals', 'seasonal'],
          attribution_required: true,
        });
        assert.deepEqual(body.period, { start: '2026-11-01T00:00:00-07:00', end: '2026-11-30T23:59:59-08:00', resets_at: '2026-12-01T00:00:00-08:00' });
        assert.deepEqual(body.records, { used: 12, remaining: 13, limit: 25 });
        assert.deepEqual(body.requests, { count: 4 });
        assert.equal(body.by_day.length, 21);
        assert.deepEqual(body.by_day[0], { date: '2026-11-01', records: 3, requests: 1 });
        assert.deepEqual(body.by_day.at(-1), { date: '2026-11-21', records: 9, requests: 3 });
        assert.equal(periodAt(atMs).firstDay, '2026-11-01');
      });
    });
  });
}

describe('the shared ledger with several nodes', { skip: missing ?? false }, () => {
  let database: TestDatabase;
  let pools: pg.Pool[];
  let nodes: PgAccounts[];
  before(async () => {
    database = await testDatabase('store_nodes');
    await migrate(settings(database.url));
    pools = [openPool(settings(database.url), 'node a'), openPool(settings(database.url), 'node b')];
    nodes = pools.map((p) => new PgAccounts(p));
  });
  after(async () => {
    await Promise.all((pools ?? []).map((p) => p.end()));
    await database?.drop();
  });

  /** `count` calls of `fn`, alternating between the two nodes, all at once. */
  const together = <T>(count: number, fn: (node: PgAccounts, i: number) => Promise<T>): Promise<T[]> =>
    Promise.all(Array.from({ length: count }, (_, i) => fn(nodes[i % 2]!, i)));

  test('a link spent on two nodes at once is spent exactly once', async () => {
    for (let round = 0; round < 5; round++) {
      const b = binding(`browser ${round}`);
      const issued = await nodes[0]!.issueLoginToken(`race${round}@nodes.example`, 'sign_in', null, b, 10 * MIN);
      assert.ok(issued.ok);
      const results = await together(16, (node) => node.spendLoginToken(issued.token, 'sign_in', b, Date.now()));
      assert.equal(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
      assert.ok(results.every((r) => r.ok || r.reason === 'used'));
    }
  });

  test('links asked for one address on two nodes at once: exactly its limit issued', async () => {
    for (let round = 0; round < 3; round++) {
      const email = `limit${round}@nodes.example`;
      const results = await together(16, (node, i) =>
        node.issueLoginToken(i % 2 ? email.toUpperCase() : email, 'sign_in', null, binding(`b${i}`), 10 * MIN, Date.now(), { max: 3, windowMs: 10 * MIN }),
      );
      assert.equal(results.filter((r) => r.ok).length, 3, JSON.stringify(results));
      assert.ok(results.every((r) => r.ok || r.reason === 'limited'));
    }
  });

  test('one address signing up on two nodes at once makes one account with one organization', async () => {
    for (let round = 0; round < 3; round++) {
      const email = `same${round}@nodes.example`;
      const results = await together(12, (node, i) => node.signInByEmail(i % 3 === 0 ? email.toUpperCase() : email));
      assert.equal(new Set(results.map((r) => r.user.id)).size, 1);
      assert.equal(results.filter((r) => r.created).length, 1);
      assert.equal((await nodes[1]!.organizationsOf(results[0]!.user.id)).length, 1);
    }
    // The same identity, likewise.
    const results = await together(8, (node) => node.signInByIdentity('https://idp.example', 'race-subject', null, false));
    assert.equal(new Set(results.map((r) => r.user.id)).size, 1);
    assert.equal(results.filter((r) => r.created).length, 1);
    const counts = (
      await pools[0]!.query<{ users: number; orgs: number }>(
        "SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM organizations WHERE name LIKE 'Organization usr_%')::int AS orgs",
      )
    ).rows[0]!;
    assert.deepEqual(counts, { users: 4, orgs: 1 });
  });

  test('one new organization created by operators on two nodes at once is one organization, whatever the case', async () => {
    const results = await together(10, (node, i) => node.createKey(i % 2 ? 'Race Media' : 'RACE media', `op${i}@race.example`, 'partner'));
    assert.equal(new Set(results.map((r) => r.org.id)).size, 1);
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal((await nodes[0]!.keys()).filter((k) => k.org_id === results[0]!.org.id).length, 10);
    // And a sign-up racing for that name gets another.
    const signed = await nodes[1]!.signInByEmail('race media');
    assert.equal((await nodes[0]!.organizationsOf(signed.user.id))[0]?.name, 'race media (2)');
  });

  test('two nodes rolling one key at once: one revoke_at, the earlier', async () => {
    const { user, orgId } = await nodes[0]!.signInByEmail('roller@nodes.example');
    const old = await nodes[0]!.createKeyFor(orgId!, user.id);
    assert.ok(old.ok);
    const t0 = Date.now();
    const rolls = await together(6, (node, i) => node.rollKey(orgId!, user.id, old.keyId, (i + 1) * MIN, t0));
    assert.ok(rolls.every((r) => r.ok));
    const revokeAt = (await nodes[1]!.keysOf(orgId!)).find((k) => k.id === old.keyId)?.revoke_at;
    assert.equal(revokeAt, new Date(t0 + MIN).toISOString());
  });

  test('every change to plans, organizations or keys is announced to every node, at its commit', async () => {
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (m) => heard.push(`${m.channel}:${m.payload}`));
    await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
    try {
      const node = nodes[0]!;
      const expectAnnounced = async (what: string, fn: () => Promise<unknown>, count = 1) => {
        heard.length = 0;
        await fn();
        const start = Date.now();
        while (heard.length < count && Date.now() - start < 1000) await sleep(10);
        // And nothing more than that.
        await sleep(100);
        assert.deepEqual(
          heard,
          Array.from({ length: count }, () => `${CHANGES_CHANNEL}:accounts`),
          what,
        );
      };
      let made = { org: { id: '' }, keyId: '' };
      await expectAnnounced('createKey of a new organization', async () => {
        made = await node.createKey('Announced Org', 'a@announced.example', 'community');
      });
      await expectAnnounced('setPlan', () =>
        node.setPlan({ name: 'announced', monthlyRecordLimit: 5, excludedCategories: [], attributionRequired: true, requestsPerMinute: 5 }),
      );
      await expectAnnounced('setOrgPlan', () => node.setOrgPlan(made.org.id, 'announced'));
      await expectAnnounced('createKey', () => node.createKey('Announced Org', 'b@announced.example', 'community'));
      await expectAnnounced('revoke', () => node.revoke(made.keyId));
      let { user, orgId } = { user: { id: '' }, orgId: null as string | null };
      await expectAnnounced('a sign-up', async () => {
        ({ user, orgId } = await node.signInByEmail('announced@nodes.example'));
      });
      await expectAnnounced('a sign-up by identity', () => node.signInByIdentity('https://idp.example', 'announced', null, false));
      let key = '';
      await expectAnnounced('createKeyFor', async () => {
        const k = await node.createKeyFor(orgId!, user.id);
        assert.ok(k.ok);
        key = k.keyId;
      });
      await expectAnnounced('rollKey', () => node.rollKey(orgId!, user.id, key, MIN));
      await expectAnnounced('revokeKey', () => node.revokeKey(orgId!, key));
      // Nothing is announced for what other nodes need not hear of.
      await expectAnnounced('a returning sign-in', () => node.signInByEmail('announced@nodes.example'), 0);
      await expectAnnounced('a refused revocation', () => node.revokeKey(orgId!, 'key_nosuchkey'), 0);
    } finally {
      await listener.end();
    }
  });

  test('every statement of sql/postgres/ledger_queries.sql and copy_queries.sql prepares against the migrated schema', async () => {
    const names: string[] = [];
    for (const file of ['ledger_queries.sql', 'copy_queries.sql']) {
      const text = await readFile(path.join(REPO_ROOT, 'sql', 'postgres', file), 'utf8');
      names.push(...[...text.matchAll(/^-- query: ([a-z_]+)$/gm)].map((m) => m[1]!));
    }
    assert.ok(names.length >= 50, `found ${names.length}`);
    const client = await pools[0]!.connect();
    try {
      for (const name of names) {
        const q = pgQuery(name, new Proxy({}, { has: () => true, get: () => null }));
        // PREPARE takes queries only; the copy's LOCK runs in test/cli/ledger.test.ts.
        if (/^LOCK TABLE/m.test(q.text)) continue;
        await assert.doesNotReject(client.query(`PREPARE check_${name} AS ${q.text}`), name);
      }
    } finally {
      client.release();
    }
  });
});
