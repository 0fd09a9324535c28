// The website's accounts, through the real metering thread (server/meter.ts Meter → worker →
// accounts.sqlite in a temp ledger), with the command line's connection (AccountsDb) beside it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { loadConfig, type Config } from '../../core/config.ts';
import { createLogger } from '../../server/log.ts';
import { Meter, type MeterFailure } from '../../server/meter.ts';
import { keyHash } from '../../core/keys.ts';
import { dayAt } from '../../ledger/period.ts';
import { INVITE_TOKEN_MAX_MS } from '../../ledger/rules.ts';
import { AccountsDb } from '../../ledger/sqlite/store.ts';

let dir: string;
let config: Config;
let cli: AccountsDb;
let meter: Meter;
/** A read-only look at accounts.sqlite: what the store really keeps. */
const peek = <T>(sql: string, ...params: unknown[]): T | undefined => {
  const db = new Database(path.join(dir, 'accounts.sqlite'), { readonly: true });
  try {
    return db.prepare(sql).get(...params) as T | undefined;
  } finally {
    db.close();
  }
};
const { logger } = createLogger('silent');
const MIN = 60_000;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-accounts-'));
  config = loadConfig({ DATA_DIR: dir, LEDGER_DIR: dir });
  cli = AccountsDb.open(dir);
  meter = await Meter.start(config, logger);
});

after(async () => {
  await meter?.close();
  cli?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The thread's answer, or the test fails with what it said instead. */
function ok<T>(r: T | MeterFailure): Exclude<T, MeterFailure> {
  const failed = r !== null && typeof r === 'object' && 'code' in r && 'detail' in r;
  assert.ok(!failed, `the thread failed: ${JSON.stringify(r)}`);
  return r as Exclude<T, MeterFailure>;
}

const binding = (v: string): string => createHash('sha256').update(v).digest('hex');
let n = 0;
const freshEmail = (): string => `dev${++n}.${Date.now()}@accounts.example`;

async function newUser(email = freshEmail()) {
  const signed = ok(await meter.accounts.signInByEmail(email));
  const [org] = ok(await meter.accounts.organizationsOf(signed.user.id));
  assert.ok(org);
  return { user: signed.user, org };
}

describe('sign-in links', () => {
  test('a token is spent once, from the browser it was issued to, and carries what it was issued for', async () => {
    const email = freshEmail();
    const b = binding('pre-session cookie A');
    const issued = ok(await meter.accounts.issueLoginToken(email, 'sign_in', null, b, 10 * MIN));
    assert.ok(issued.ok);
    // ≥ 128 bits, base64url: 43 characters of [A-Za-z0-9_-] are 258 bits.
    assert.match(issued.token, /^[\w-]{43}$/);
    assert.deepEqual(ok(await meter.accounts.spendLoginToken(issued.token, 'sign_in', binding('another browser'), Date.now())), {
      ok: false,
      reason: 'binding',
    });
    // The wrong browser did not burn it: the right one still can, once.
    const both = await Promise.all([
      meter.accounts.spendLoginToken(issued.token, 'sign_in', b, Date.now()),
      meter.accounts.spendLoginToken(issued.token, 'sign_in', b, Date.now()),
    ]);
    assert.deepEqual(both.map(ok), [
      { ok: true, email, purpose: 'sign_in', orgId: null },
      { ok: false, reason: 'used' },
    ]);
    // Stored only as its hash.
    const file = new Database(path.join(dir, 'accounts.sqlite'), { readonly: true });
    const rows = file.prepare('SELECT * FROM login_tokens').all();
    file.close();
    assert.ok(!JSON.stringify(rows).includes(issued.token));
    assert.ok(JSON.stringify(rows).includes(keyHash(issued.token)));
  });

  test('a token expires, and is never valid beyond 15 minutes whatever the caller asks', async () => {
    const b = binding('browser');
    const short = ok(await meter.accounts.issueLoginToken(freshEmail(), 'sign_in', null, b, 2 * MIN));
    assert.ok(short.ok);
    assert.deepEqual(ok(await meter.accounts.spendLoginToken(short.token, 'sign_in', b, Date.now() + 2 * MIN + 1)), { ok: false, reason: 'expired' });
    const long = ok(await meter.accounts.issueLoginToken(freshEmail(), 'sign_in', null, b, 24 * 60 * MIN));
    assert.ok(long.ok);
    assert.deepEqual(ok(await meter.accounts.spendLoginToken(long.token, 'sign_in', b, Date.now() + 15 * MIN + 1000)), { ok: false, reason: 'expired' });
    assert.equal(ok(await meter.accounts.spendLoginToken(long.token, 'sign_in', b, Date.now() + 14 * MIN)).ok, true);
  });

  test('a tampered token is unknown (any one character changed)', async () => {
    const b = binding('browser');
    const issued = ok(await meter.accounts.issueLoginToken(freshEmail(), 'sign_in', null, b, 10 * MIN));
    assert.ok(issued.ok);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    await fc.assert(
      fc.asyncProperty(fc.nat(issued.token.length - 1), fc.constantFrom(...alphabet), async (i, c) => {
        fc.pre(issued.token[i] !== c);
        const tampered = issued.token.slice(0, i) + c + issued.token.slice(i + 1);
        assert.deepEqual(ok(await meter.accounts.spendLoginToken(tampered, 'sign_in', b, Date.now())), { ok: false, reason: 'unknown' });
      }),
      { numRuns: 200, interruptAfterTimeLimit: 3000 },
    );
    // And the real one was not disturbed by the attempts.
    assert.equal(ok(await meter.accounts.spendLoginToken(issued.token, 'sign_in', b, Date.now())).ok, true);
  });

  test('issuing answers alike for a known and an unknown address', async () => {
    const { user } = await newUser();
    const known = ok(await meter.accounts.issueLoginToken(user.email!, 'sign_in', null, binding('x'), 10 * MIN));
    const unknown = ok(await meter.accounts.issueLoginToken(freshEmail(), 'sign_in', null, binding('x'), 10 * MIN));
    assert.deepEqual(Object.keys(known).sort(), Object.keys(unknown).sort());
    assert.ok(known.ok && unknown.ok);
  });

  test('through the thread: a link of the other kind is refused and left unspent; a look at an invitation names it and spends nothing', async () => {
    const owner = await newUser();
    const b = binding('pre-session cookie P');
    const inviteeEmail = freshEmail();
    const signIn = ok(await meter.accounts.issueLoginToken(freshEmail(), 'sign_in', null, b, 10 * MIN));
    const invite = ok(await meter.accounts.issueLoginToken(inviteeEmail, 'invite', owner.org.id, '', 10 * MIN, Date.now(), null, owner.user.id));
    assert.ok(signIn.ok && invite.ok);
    assert.deepEqual(ok(await meter.accounts.spendLoginToken(invite.token, 'sign_in', b, Date.now())), { ok: false, reason: 'purpose' });
    assert.deepEqual(ok(await meter.accounts.spendLoginToken(signIn.token, 'invite', b, Date.now())), { ok: false, reason: 'purpose' });
    for (const t of [invite.token, signIn.token])
      assert.equal(peek<{ used_at: string | null }>('SELECT used_at FROM login_tokens WHERE token_hash = ?', keyHash(t))?.used_at, null, 'not spent');
    const seen = ok(await meter.accounts.peekLoginToken(invite.token, 'invite', '', Date.now()));
    assert.deepEqual(seen, { ok: true, email: inviteeEmail, purpose: 'invite', orgId: owner.org.id, orgName: owner.org.name, inviter: owner.user.email });
    assert.equal(ok(await meter.accounts.spendLoginToken(invite.token, 'invite', '', Date.now())).ok, true);
    assert.equal(ok(await meter.accounts.spendLoginToken(signIn.token, 'sign_in', b, Date.now())).ok, true);
    assert.deepEqual(ok(await meter.accounts.userOf(owner.user.id)), owner.user);
  });

  test('an invitation carries its organization, lasts days not minutes, is bound to no browser, and makes its addressee a member', async () => {
    const owner = await newUser();
    const inviteeEmail = freshEmail();
    const t0 = Date.now();
    // The inviter's browser asked for it; the invitee opens it in theirs.
    const invite = ok(await meter.accounts.issueLoginToken(inviteeEmail, 'invite', owner.org.id, binding('inviter browser'), 30 * 24 * 60 * MIN));
    assert.ok(invite.ok);
    const stored = peek<{ created_at: string; expires_at: string }>(
      'SELECT created_at, expires_at FROM login_tokens WHERE token_hash = ?',
      keyHash(invite.token),
    )!;
    assert.equal(Date.parse(stored.expires_at) - Date.parse(stored.created_at), INVITE_TOKEN_MAX_MS, 'capped at the invitation maximum');
    assert.deepEqual(ok(await meter.accounts.spendLoginToken(invite.token, 'invite', binding('invitee browser'), t0 + INVITE_TOKEN_MAX_MS + 1)), {
      ok: false,
      reason: 'expired',
    });
    const spent = ok(await meter.accounts.spendLoginToken(invite.token, 'invite', binding('invitee browser'), t0 + 3 * 24 * 60 * MIN));
    assert.ok(spent.ok);
    assert.equal(spent.purpose, 'invite');
    assert.equal(spent.orgId, owner.org.id);
    assert.deepEqual(ok(await meter.accounts.spendLoginToken(invite.token, 'invite', binding('invitee browser'), Date.now())), { ok: false, reason: 'used' });
    const invitee = ok(await meter.accounts.joinByInvite(spent.email, owner.org.id));
    assert.ok('user' in invitee);
    assert.equal(invitee.created, true);
    // A new account made by an invitation came to join: it has no organization of its own.
    assert.deepEqual(
      ok(await meter.accounts.organizationsOf(invitee.user.id)).map((o) => [o.id, o.role]),
      [[owner.org.id, 'member']],
    );
    const members = ok(await meter.accounts.members(owner.org.id));
    assert.deepEqual(
      members.map((m) => [m.user_id, m.role]),
      [
        [owner.user.id, 'owner'],
        [invitee.user.id, 'member'],
      ],
    );
    const made = ok(await meter.accounts.createKeyFor(owner.org.id, invitee.user.id));
    assert.ok(made.ok);
    assert.deepEqual(
      ok(await meter.accounts.keysOf(owner.org.id)).map((k) => k.id),
      [made.keyId],
    );
    assert.deepEqual(ok(await meter.accounts.issueLoginToken('x@y.example', 'invite', 'org_nosuchorg', binding('b'), MIN)), {
      ok: false,
      reason: 'unknown_org',
    });
    assert.deepEqual(ok(await meter.accounts.joinByInvite('x@y.example', 'org_nosuchorg')), { ok: false, reason: 'unknown_org' });

    // An existing account joins as it is: its own organization stays, the new one is added.
    const other = await newUser();
    const joined = ok(await meter.accounts.joinByInvite(other.user.email!.toUpperCase(), owner.org.id));
    assert.ok('user' in joined);
    assert.deepEqual([joined.user.id, joined.created], [other.user.id, false]);
    assert.deepEqual(
      ok(await meter.accounts.organizationsOf(other.user.id)).map((o) => [o.id, o.role]),
      [
        [other.org.id, 'owner'],
        [owner.org.id, 'member'],
      ],
    );
  });

  test('spent and expired links and ended sessions are purged a day after they stop working, and nothing live is', async () => {
    const store = AccountsDb.open(dir);
    try {
      const { user } = await newUser();
      const now = Date.now();
      const DAY = 24 * 60 * MIN;
      const b = binding('purge browser');
      const live = store.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now);
      const oldExpired = store.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now - 2 * DAY);
      const oldSpent = store.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now - 2 * DAY);
      assert.ok(live.ok && oldExpired.ok && oldSpent.ok);
      assert.ok(store.spendLoginToken(oldSpent.token, 'sign_in', b, now - 2 * DAY + MIN).ok);
      const recentExpired = store.issueLoginToken(user.email!, 'sign_in', null, b, 10 * MIN, now - 30 * MIN);
      assert.ok(recentExpired.ok);
      const liveSession = store.createSession(user.id, DAY, now);
      const oldSession = store.createSession(user.id, DAY, now - 3 * DAY);
      const endedLongAgo = store.createSession(user.id, 30 * DAY, now - 3 * DAY);
      const endedNow = store.createSession(user.id, 30 * DAY, now);
      assert.ok(liveSession.ok && oldSession.ok && endedLongAgo.ok && endedNow.ok);
      store.endSession(endedLongAgo.token, now - 2 * DAY);
      store.endSession(endedNow.token, now);

      const purged = store.purgeExpired(now);
      assert.ok(purged.loginTokens >= 2 && purged.sessions >= 2, JSON.stringify(purged));
      const tokenLeft = (t: string): boolean => peek('SELECT 1 FROM login_tokens WHERE token_hash = ?', keyHash(t)) !== undefined;
      const sessionLeft = (t: string): boolean => peek('SELECT 1 FROM sessions WHERE token_hash = ?', keyHash(t)) !== undefined;
      assert.deepEqual(
        [tokenLeft(live.token), tokenLeft(recentExpired.token), tokenLeft(oldExpired.token), tokenLeft(oldSpent.token)],
        [true, true, false, false],
      );
      assert.deepEqual(
        [sessionLeft(liveSession.token), sessionLeft(endedNow.token), sessionLeft(oldSession.token), sessionLeft(endedLongAgo.token)],
        [true, true, false, false],
      );
      // A link that just expired still reads as expired, not unknown, to whoever tries it.
      assert.deepEqual(store.spendLoginToken(recentExpired.token, 'sign_in', b, now), { ok: false, reason: 'expired' });
      assert.ok(store.touchSession(liveSession.token, now, DAY));
    } finally {
      store.close();
    }
  });

  test("an organization's usage is read whatever its keys' states, the body /v1/usage answers", async () => {
    const owner = await newUser();
    const before = ok(await meter.accounts.orgUsage(owner.org.id, Date.now()));
    assert.ok('records' in before);
    assert.deepEqual([before.records.used, before.records.limit, before.organization.id], [0, 25, owner.org.id]);
    const made = ok(await meter.accounts.createKeyFor(owner.org.id, owner.user.id));
    assert.ok(made.ok);
    const at = Date.now();
    const grant = await meter.reserve(made.keyId, 7, true, at);
    assert.ok(grant.ok);
    ok(await meter.accounts.revokeKey(owner.org.id, made.keyId));
    const afterRevoke = ok(await meter.accounts.orgUsage(owner.org.id, at));
    assert.ok('records' in afterRevoke);
    assert.equal(afterRevoke.records.used, 7);
    assert.equal(afterRevoke.by_day.find((d) => d.date === dayAt(at))?.records, 7);
    assert.deepEqual(ok(await meter.accounts.orgUsage('org_nosuchorg', at)), { ok: false, reason: 'unknown_org' });
  });
});

describe('accounts', () => {
  test('the first sign-in makes the account and an organization on Community it owns; the next finds it (any case)', async () => {
    const email = freshEmail();
    const first = ok(await meter.accounts.signInByEmail(email));
    assert.equal(first.created, true);
    assert.match(first.user.id, /^usr_/);
    const orgs = ok(await meter.accounts.organizationsOf(first.user.id));
    assert.equal(orgs.length, 1);
    assert.deepEqual({ id: orgs[0]!.id, plan: orgs[0]!.plan, role: orgs[0]!.role }, { id: first.orgId, plan: 'community', role: 'owner' });
    const again = ok(await meter.accounts.signInByEmail(email.toUpperCase()));
    assert.deepEqual({ id: again.user.id, created: again.created }, { id: first.user.id, created: false });
    assert.equal(ok(await meter.accounts.organizationsOf(first.user.id)).length, 1);
  });

  test('an organization name already taken (by the command line) gets a distinct one', async () => {
    const email = freshEmail();
    cli.createKey(email, 'ops@cli.example', 'partner');
    const signed = ok(await meter.accounts.signInByEmail(email));
    const [org] = ok(await meter.accounts.organizationsOf(signed.user.id));
    assert.notEqual(org!.name.toLowerCase(), email.toLowerCase());
    assert.equal(org!.plan, 'community');
  });

  test('an identity with an unverified e-mail is never linked to the account of that e-mail, nor given it', async () => {
    const { user } = await newUser();
    const issuer = 'https://idp.example';
    const stranger = ok(await meter.accounts.signInByIdentity(issuer, 'sub-unverified', user.email, false));
    assert.notEqual(stranger.user.id, user.id);
    assert.equal(stranger.created, true);
    assert.equal(stranger.user.email, null);
    // Its own organization, on Community; not the e-mail account's.
    const orgs = ok(await meter.accounts.organizationsOf(stranger.user.id));
    assert.deepEqual(
      orgs.map((o) => [o.plan, o.role]),
      [['community', 'owner']],
    );
    // The same (issuer, subject) comes back to the same account, whatever it now claims.
    const back = ok(await meter.accounts.signInByIdentity(issuer, 'sub-unverified', freshEmail(), false));
    assert.equal(back.user.id, stranger.user.id);
    // The e-mail's sign-in still reaches its own account.
    assert.equal(ok(await meter.accounts.signInByEmail(user.email!)).user.id, user.id);
    // A verified e-mail links (see AccountsDb.signInByIdentity for why that is safe here).
    const verified = ok(await meter.accounts.signInByIdentity(issuer, 'sub-verified', user.email, true));
    assert.deepEqual({ id: verified.user.id, created: verified.created }, { id: user.id, created: false });
    // Keyed by issuer too: the same subject at another issuer is someone else.
    const other = ok(await meter.accounts.signInByIdentity('https://other.example', 'sub-verified', null, false));
    assert.notEqual(other.user.id, user.id);
  });
});

describe('sessions', () => {
  test('idle and absolute expiry, sign-out, sign-out everywhere', async () => {
    const { user } = await newUser();
    const s = ok(await meter.accounts.createSession(user.id, 60 * MIN));
    assert.ok(s.ok);
    const t0 = Date.now();
    assert.deepEqual(ok(await meter.accounts.touchSession(s.token, t0, 10 * MIN)), { userId: user.id, sessionId: s.sessionId });
    assert.equal(ok(await meter.accounts.touchSession(s.token, t0 + 10 * MIN + 1000, 10 * MIN)), null, 'idle too long');
    // Activity moves the idle clock: seen at +9 min, alive at +18 min, past the absolute hour never.
    assert.ok(ok(await meter.accounts.touchSession(s.token, t0 + 9 * MIN, 10 * MIN)));
    assert.ok(ok(await meter.accounts.touchSession(s.token, t0 + 18 * MIN, 10 * MIN)));
    assert.equal(ok(await meter.accounts.touchSession(s.token, t0 + 61 * MIN, 10_000 * MIN)), null, 'absolutely expired');
    assert.equal(ok(await meter.accounts.touchSession(s.token.slice(0, -1) + (s.token.endsWith('A') ? 'B' : 'A'), t0, MIN)), null, 'tampered');

    const a = ok(await meter.accounts.createSession(user.id, 60 * MIN));
    const b = ok(await meter.accounts.createSession(user.id, 60 * MIN));
    assert.ok(a.ok && b.ok);
    assert.notEqual(a.token, b.token);
    assert.deepEqual(ok(await meter.accounts.endSession(a.token, Date.now())), { ended: true });
    assert.equal(ok(await meter.accounts.touchSession(a.token, Date.now(), MIN)), null, 'signed out');
    assert.ok(ok(await meter.accounts.touchSession(b.token, Date.now(), MIN)), 'the other session lives on');
    const c = ok(await meter.accounts.createSession(user.id, 60 * MIN));
    assert.ok(c.ok);
    // b, c, and s (expired only in the simulated future above) were still open.
    assert.deepEqual(ok(await meter.accounts.endAllSessions(user.id, Date.now())), { ended: 3 });
    for (const t of [s.token, b.token, c.token]) assert.equal(ok(await meter.accounts.touchSession(t, Date.now(), MIN)), null, 'signed out everywhere');
    assert.deepEqual(ok(await meter.accounts.createSession('usr_nobody', MIN)), { ok: false, reason: 'unknown_user' });
  });
});

/** Polls the main thread's mirror (what the API authenticates against) until `done`, or fails. */
async function until(what: string, done: () => boolean, withinMs: number): Promise<number> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > withinMs) assert.fail(`${what} not within ${withinMs} ms`);
    await sleep(20);
  }
  return Date.now();
}

describe('keys from the website', () => {
  test('a created key authenticates at once; a revoked one is refused at once; another organization cannot touch it', async () => {
    const { user, org } = await newUser();
    const made = ok(await meter.accounts.createKeyFor(org.id, user.id));
    assert.ok(made.ok);
    const hash = keyHash(made.key);
    // Known to the main thread before the creator hears of it: no lookup needed.
    assert.equal(meter.key(hash)?.revoked, false);
    assert.deepEqual(ok(await meter.lookup(hash)), { ...meter.key(hash) });
    assert.equal(ok(await meter.reserve(made.keyId, 1, true, Date.now())).granted, 1);

    const keys = ok(await meter.accounts.keysOf(org.id));
    assert.deepEqual(
      keys.map((k) => [k.id, k.created_by, k.revoked_at, k.revoke_at, k.last_used]),
      [[made.keyId, user.id, null, null, dayAt(Date.now())]],
    );
    assert.ok(!JSON.stringify(keys).includes(made.key) && !JSON.stringify(keys).includes(hash), 'never the key nor its hash');

    const other = await newUser();
    assert.deepEqual(ok(await meter.accounts.revokeKey(other.org.id, made.keyId)), { ok: false, reason: 'unknown_key' });
    assert.deepEqual(ok(await meter.accounts.createKeyFor(org.id, other.user.id)), { ok: false, reason: 'not_member' });
    assert.equal(meter.key(hash)?.revoked, false);

    assert.deepEqual(ok(await meter.accounts.revokeKey(org.id, made.keyId)), { ok: true, revoked: true });
    assert.equal(meter.key(hash)?.revoked, true, 'refused by the main thread as soon as the revocation is answered');
    const refused = await meter.reserve(made.keyId, 1, true, Date.now());
    assert.equal(refused.ok, false);
    assert.deepEqual(ok(await meter.accounts.revokeKey(org.id, made.keyId)), { ok: true, revoked: false });
  });

  test('roll: a new key at once; the old one works until its revoke_at, then stops within a second', async () => {
    const { user, org } = await newUser();
    const old = ok(await meter.accounts.createKeyFor(org.id, user.id));
    assert.ok(old.ok);
    const graceMs = 1500;
    const rolled = ok(await meter.accounts.rollKey(org.id, user.id, old.keyId, graceMs));
    assert.ok(rolled.ok);
    const revokeAtMs = Date.parse(rolled.revokeAt);
    assert.equal(meter.key(keyHash(rolled.key))?.revoked, false);
    assert.equal(meter.key(keyHash(old.key))?.revoked, false, 'the old key still works during the grace');
    assert.equal(ok(await meter.reserve(old.keyId, 1, true, Date.now())).granted, 1);
    const summary = ok(await meter.accounts.keysOf(org.id)).find((k) => k.id === old.keyId);
    assert.equal(summary?.revoke_at, rolled.revokeAt);
    // Rolling again never lengthens its life.
    const again = ok(await meter.accounts.rollKey(org.id, user.id, old.keyId, 60 * MIN));
    assert.ok(again.ok);
    assert.equal(again.revokeAt, rolled.revokeAt);

    const stoppedAt = await until('the old key refused', () => meter.key(keyHash(old.key))?.revoked === true, graceMs + 2500);
    assert.ok(stoppedAt >= revokeAtMs, `refused ${revokeAtMs - stoppedAt} ms before its revoke_at`);
    assert.ok(stoppedAt <= revokeAtMs + 1000 + 100, `refused ${stoppedAt - revokeAtMs} ms after its revoke_at`);
    assert.equal((await meter.reserve(old.keyId, 1, true, Date.now())).ok, false, 'the thread refuses it too');
    assert.equal(meter.key(keyHash(rolled.key))?.revoked, false, 'the new key lives on');
    assert.deepEqual(ok(await meter.accounts.rollKey(org.id, user.id, old.keyId, 0)), { ok: false, reason: 'not_active' });
    assert.deepEqual(ok(await meter.accounts.rollKey(org.id, user.id, rolled.keyId, -1)), { ok: false, reason: 'invalid' });
  });

  test('the command line keeps working beside the thread, and the thread waits out its write lock', async () => {
    const made = cli.createKey(`CLI org ${Date.now()}`, 'ops@cli.example', 'partner');
    const hash = keyHash(made.key);
    await until('a command-line key reaching the main thread', () => meter.key(hash)?.revoked === false, 1500);
    cli.revoke(made.keyId);
    await until('a command-line revocation reaching the main thread', () => meter.key(hash)?.revoked === true, 1500);

    // Another process holds accounts.sqlite's write lock for a moment: the thread's write waits for it.
    const { user, org } = await newUser();
    const holder = new Database(path.join(dir, 'accounts.sqlite'));
    holder.exec('BEGIN IMMEDIATE');
    const pending = meter.accounts.createKeyFor(org.id, user.id);
    await sleep(300);
    holder.exec('COMMIT');
    holder.close();
    const key = ok(await pending);
    assert.ok(key.ok);
    assert.equal(meter.key(keyHash(key.key))?.revoked, false);
    // And the command line sees what the website made.
    assert.equal(cli.keys().find((k) => k.id === key.keyId)?.created_by, user.id);
  });
});

test('an accounts.sqlite made before the website upgrades in place, its keys still working', async () => {
  const old = await mkdtemp(path.join(os.tmpdir(), 'fe-accounts-old-'));
  try {
    // api_keys as the file had it before created_by and revoke_at.
    const db = new Database(path.join(old, 'accounts.sqlite'));
    db.exec(`CREATE TABLE plans (name TEXT PRIMARY KEY, monthly_record_limit INTEGER, excluded_categories TEXT NOT NULL DEFAULT '[]',
               attribution_required INTEGER NOT NULL, requests_per_minute INTEGER NOT NULL, created_at TEXT NOT NULL) STRICT;
             CREATE TABLE organizations (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, plan TEXT NOT NULL REFERENCES plans (name), created_at TEXT NOT NULL) STRICT;
             CREATE TABLE api_keys (id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES organizations (id), key_hash TEXT NOT NULL UNIQUE,
               hint TEXT NOT NULL, email TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT) STRICT;
             INSERT INTO plans VALUES ('community', 25, '[]', 1, 60, '2026-01-01T00:00:00Z');
             INSERT INTO organizations VALUES ('org_old', 'Old org', 'community', '2026-01-01T00:00:00Z');
             INSERT INTO api_keys VALUES ('key_old', 'org_old', '${keyHash('bsc_live_old')}', 'bsc_live_…_old', 'a@b.example', '2026-01-01T00:00:00Z', NULL);`);
    db.close();
    const upgraded = AccountsDb.open(old);
    try {
      const [key] = upgraded.view().keys;
      assert.deepEqual({ id: key?.keyId, revoked: key?.revoked }, { id: 'key_old', revoked: false });
      assert.deepEqual(
        upgraded.keysOf('org_old').map((k) => [k.created_by, k.revoke_at]),
        [[null, null]],
      );
      const signed = upgraded.signInByEmail('new@upgraded.example');
      assert.equal(signed.created, true);
      // A second open (the command line beside the server) finds nothing left to do.
      AccountsDb.open(old).close();
    } finally {
      upgraded.close();
    }
  } finally {
    await rm(old, { recursive: true, force: true });
  }
});
