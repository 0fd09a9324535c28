// The ledger's limits on what an account can make the service send or spend (issue 26), on both
// backends with the same assertions: invitations per sender and per organization per hour and per
// day, pending invitations per organization, live keys per organization (website and operator),
// and the mail limit counted per mailbox (plus-tags, Gmail's dots and case folded). On PostgreSQL,
// several pools (nodes) asking at once get exactly the limit between them. The PostgreSQL parts
// skip with a reason on a machine without a server.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { openPool } from '../../ledger/postgres/db.ts';
import { migrate } from '../../ledger/postgres/migrate.ts';
import { PgAccounts } from '../../ledger/postgres/store.ts';
import {
  INVITE_TOKEN_MAX_MS,
  INVITES_PER_ORG,
  INVITES_PER_SENDER,
  LIVE_KEYS_PER_ORG,
  LiveKeysLimitError,
  PENDING_INVITES_PER_ORG,
} from '../../ledger/rules.ts';
import { AccountsDb } from '../../ledger/sqlite/store.ts';
import { postgresMissing, testDatabase } from '../pg.ts';
import type { AccountRefusal } from '../../ledger/accounts.ts';

const missing = await postgresMissing();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const MAIL = { max: 3, windowMs: 10 * MIN };

type Accounts = Pick<PgAccounts, keyof PgAccounts>;

interface Backend {
  readonly accounts: Accounts;
  /** Another node's connection to the same ledger (a second pool; the same file for SQLite). */
  readonly other: Accounts;
  /** The stored e-mail of every link. */
  storedEmails(): Promise<string[]>;
  close(): Promise<void>;
}

const settings = (url: string) => ({ url, poolMax: 8, statementTimeoutMs: 10_000 });

/** AccountsDb's methods, answering through promises. */
function promised(db: AccountsDb): Accounts {
  const wrapped: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(PgAccounts.prototype)) {
    const fn = (db as unknown as Record<string, unknown>)[name];
    if (name !== 'constructor' && typeof fn === 'function') wrapped[name] = async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown).apply(db, args);
  }
  return wrapped as unknown as Accounts;
}

async function openSqlite(): Promise<Backend> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-limits-'));
  const one = AccountsDb.open(dir);
  const two = AccountsDb.open(dir);
  return {
    accounts: promised(one),
    other: promised(two),
    storedEmails: async () => {
      const file = new Database(path.join(dir, 'accounts.sqlite'), { readonly: true });
      try {
        return (file.prepare('SELECT email FROM login_tokens').all() as { email: string }[]).map((r) => r.email);
      } finally {
        file.close();
      }
    },
    close: async () => {
      one.close();
      two.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Backend> {
  const database = await testDatabase('limits');
  await migrate(settings(database.url));
  const pools: pg.Pool[] = [openPool(settings(database.url), 'limits test a'), openPool(settings(database.url), 'limits test b')];
  return {
    accounts: new PgAccounts(pools[0]!),
    other: new PgAccounts(pools[1]!),
    storedEmails: async () => ((await pools[0]!.query('SELECT email FROM login_tokens')).rows as { email: string }[]).map((r) => r.email),
    close: async () => {
      for (const p of pools) await p.end();
      await database.drop();
    },
  };
}

const binding = (v: string): string => createHash('sha256').update(v).digest('hex');
let n = 0;
const freshEmail = (): string => `dev${++n}.${Date.now()}@limits.example`;

const BACKENDS = [
  { name: 'sqlite', skip: false as const, open: openSqlite },
  { name: 'postgres', skip: missing ?? (false as const), open: openPostgres },
];

for (const backend of BACKENDS) {
  describe(`the ledger's sending limits on ${backend.name}`, { skip: backend.skip }, () => {
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

    /** An invitation to a fresh address at `atMs`, from `sender` (null: the organization's count only). */
    const invite = (orgId: string, sender: string | null, atMs: number, ttlMs = INVITE_TOKEN_MAX_MS, accounts: Accounts = a) =>
      accounts.issueLoginToken(freshEmail(), 'invite', orgId, '', ttlMs, atMs, MAIL, sender);

    /** `count` invitations, one millisecond apart from `fromMs`, each of which must be made. */
    async function inviteMany(orgId: string, sender: string | null, count: number, fromMs: number): Promise<string[]> {
      const tokens: string[] = [];
      for (let i = 0; i < count; i++) {
        const r = await invite(orgId, sender, fromMs + i);
        assert.ok(r.ok, `invitation ${i + 1} of ${count}: ${JSON.stringify(r)}`);
        tokens.push(r.token);
      }
      return tokens;
    }

    const [senderHour, senderDay] = INVITES_PER_SENDER as [{ max: number; windowMs: number }, { max: number; windowMs: number }];
    const [orgHour, orgDay] = INVITES_PER_ORG as [{ max: number; windowMs: number }, { max: number; windowMs: number }];

    describe('invitations', () => {
      test('per sender and hour: the one past the limit is refused with when the oldest leaves the window; an hour later it goes', async () => {
        const { user, org } = await newUser();
        const t0 = Date.now();
        await inviteMany(org.id, user.id, senderHour.max, t0);
        const refused = await invite(org.id, user.id, t0 + 10 * MIN);
        assert.deepEqual(refused, { ok: false, reason: 'invite_limited', per: 'sender', max: senderHour.max, windowMs: HOUR, retryAfterMs: HOUR - 10 * MIN });
        assert.ok((await invite(org.id, user.id, t0 + HOUR)).ok, 'the first has left the window');
      });

      test('per sender and day: spread over hours, the limit of the day still holds', async () => {
        const { user, org } = await newUser();
        const t0 = Date.now() - 12 * HOUR;
        // Within every hour under the hour's limit (and the organization's).
        const perBatch = Math.min(senderHour.max, orgHour.max);
        let sent = 0;
        for (let h = 0; sent < senderDay.max; h += 2) {
          const count = Math.min(perBatch, senderDay.max - sent);
          await inviteMany(org.id, user.id, count, t0 + h * HOUR);
          sent += count;
        }
        const now = t0 + 11 * HOUR;
        const refused = (await invite(org.id, user.id, now)) as AccountRefusal;
        assert.deepEqual(
          { reason: refused.reason, per: refused.per, max: refused.max, windowMs: refused.windowMs },
          { reason: 'invite_limited', per: 'sender', max: senderDay.max, windowMs: DAY },
        );
        assert.equal(refused.retryAfterMs, t0 + DAY - now);
      });

      test('per organization: its senders together are held to its hour and day', async () => {
        const { user, org } = await newUser();
        const others = [
          user.id,
          (await newUser()).user.id,
          (await newUser()).user.id,
          (await newUser()).user.id,
          (await newUser()).user.id,
          (await newUser()).user.id,
        ];
        const t0 = Date.now() - 20 * HOUR;
        // The hour: senders in turn, each under its own limit.
        for (let i = 0; i < orgHour.max; i++) assert.ok((await invite(org.id, others[i % others.length]!, t0 + i)).ok);
        const hourFull = (await invite(org.id, others[others.length - 1]!, t0 + MIN)) as AccountRefusal;
        assert.deepEqual(
          { reason: hourFull.reason, per: hourFull.per, max: hourFull.max, retryAfterMs: hourFull.retryAfterMs },
          { reason: 'invite_limited', per: 'organization', max: orgHour.max, retryAfterMs: HOUR - MIN },
        );
        // The day: more hours, until the organization's day is full.
        let sent = orgHour.max;
        for (let h = 2; sent < orgDay.max; h += 2) {
          const count = Math.min(orgHour.max, orgDay.max - sent);
          for (let i = 0; i < count; i++) assert.ok((await invite(org.id, others[(sent + i) % others.length]!, t0 + h * HOUR + i)).ok);
          sent += count;
        }
        const dayFull = (await invite(org.id, (await newUser()).user.id, t0 + 19 * HOUR)) as AccountRefusal;
        assert.deepEqual({ reason: dayFull.reason, per: dayFull.per, max: dayFull.max }, { reason: 'invite_limited', per: 'organization', max: orgDay.max });
        assert.equal(dayFull.retryAfterMs, t0 + DAY - (t0 + 19 * HOUR));
        // Another organization is not held by this one's count.
        const fresh = await newUser();
        assert.ok((await invite(fresh.org.id, fresh.user.id, t0 + 19 * HOUR)).ok);
      });

      test('pending: an organization with its limit of unspent, unexpired invitations waits for one to be accepted or to expire', async () => {
        const { org } = await newUser();
        const t0 = Date.now() - 6 * DAY;
        // Spread over days (under the hour's and the day's limits), all still unexpired at t0 + 6 days.
        const tokens: string[] = [];
        for (let d = 0; tokens.length < PENDING_INVITES_PER_ORG; d++) {
          for (let h = 0; h < 2 && tokens.length < PENDING_INVITES_PER_ORG; h++)
            tokens.push(...(await inviteMany(org.id, null, Math.min(orgHour.max, PENDING_INVITES_PER_ORG - tokens.length), t0 + d * DAY + h * 2 * HOUR)));
        }
        const now = t0 + 6 * DAY;
        assert.deepEqual(await invite(org.id, null, now), { ok: false, reason: 'too_many_pending', max: PENDING_INVITES_PER_ORG });
        // One accepted: room for one more.
        const spent = await a.spendLoginToken(tokens[tokens.length - 1]!, 'invite', binding('invitee'), now);
        assert.ok(spent.ok, JSON.stringify(spent));
        assert.ok((await invite(org.id, null, now + 1)).ok);
        assert.deepEqual(await invite(org.id, null, now + 2), { ok: false, reason: 'too_many_pending', max: PENDING_INVITES_PER_ORG });
        // The first day's invitations expire 7 days after they were sent: room again.
        assert.ok((await invite(org.id, null, t0 + INVITE_TOKEN_MAX_MS + 1)).ok);
      });

      test('exact across nodes: a burst from one sender on two connections makes exactly the limit of its hour', async () => {
        const { user, org } = await newUser();
        const now = Date.now();
        const burst = await Promise.all(
          Array.from({ length: senderHour.max + 8 }, (_, i) => invite(org.id, user.id, now, INVITE_TOKEN_MAX_MS, i % 2 ? be.other : a)),
        );
        assert.equal(burst.filter((r) => r.ok).length, senderHour.max);
        assert.ok(burst.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'invite_limited' && r.per === 'sender'));
      });
    });

    describe('mail per mailbox', () => {
      test('plus-tags, case and (at Gmail) dots are one mailbox for the limit; the link still goes to the address as given', async () => {
        const t0 = Date.now();
        const tag = `${++n}x${Date.now()}`;
        const spellings = [`amy.${tag}+1@example.org`, `AMY.${tag}+2@Example.ORG`, `amy.${tag}@example.org`];
        for (const s of spellings) assert.ok((await a.issueLoginToken(s, 'sign_in', null, binding('b'), 10 * MIN, t0, MAIL)).ok, s);
        assert.deepEqual(await a.issueLoginToken(`amy.${tag}+3@example.org`, 'sign_in', null, binding('b'), 10 * MIN, t0, MAIL), {
          ok: false,
          reason: 'limited',
        });
        // Elsewhere than Gmail a dot is another person.
        assert.ok((await a.issueLoginToken(`amy${tag}@example.org`, 'sign_in', null, binding('b'), 10 * MIN, t0, MAIL)).ok);
        const stored = await be.storedEmails();
        for (const s of spellings) assert.ok(stored.includes(s), `stored as given: ${s}`);

        const gmail = [`bo.b.${tag}@gmail.com`, `bob${tag}+news@googlemail.com`, `B.O.B${tag}@GMAIL.COM`];
        for (const s of gmail) assert.ok((await a.issueLoginToken(s, 'sign_in', null, binding('b'), 10 * MIN, t0, MAIL)).ok, s);
        assert.deepEqual(await a.issueLoginToken(`bob.${tag}+x@gmail.com`, 'sign_in', null, binding('b'), 10 * MIN, t0, MAIL), {
          ok: false,
          reason: 'limited',
        });
        // An invitation to a folded spelling counts as well.
        const { user, org } = await newUser();
        assert.deepEqual(await a.issueLoginToken(`b.o.b.${tag}+team@gmail.com`, 'invite', org.id, '', HOUR, t0, MAIL, user.id), {
          ok: false,
          reason: 'limited',
        });
      });

      test('exact across nodes: a burst of spellings of one mailbox on two connections gets exactly the limit', async () => {
        const tag = `${++n}y${Date.now()}`;
        const t0 = Date.now();
        const burst = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? be.other : a).issueLoginToken(`zed${tag}+${i}@example.org`, 'sign_in', null, binding('b'), 10 * MIN, t0, MAIL),
          ),
        );
        assert.equal(burst.filter((r) => r.ok).length, MAIL.max);
      });
    });

    describe('live keys per organization', () => {
      test('website: at the limit a new key is refused; a revoke makes room; a rolled key counts until its grace ends, a roll without grace does not add one', async () => {
        const { user, org } = await newUser();
        const keys: string[] = [];
        for (let i = 0; i < LIVE_KEYS_PER_ORG; i++) {
          const k = await a.createKeyFor(org.id, user.id);
          assert.ok(k.ok);
          keys.push(k.keyId);
        }
        assert.deepEqual(await a.createKeyFor(org.id, user.id), { ok: false, reason: 'too_many_keys', max: LIVE_KEYS_PER_ORG, live: LIVE_KEYS_PER_ORG });
        // A roll with grace would make one more live key for the grace period: refused, nothing changed.
        assert.deepEqual(await a.rollKey(org.id, user.id, keys[0]!, HOUR), {
          ok: false,
          reason: 'too_many_keys',
          max: LIVE_KEYS_PER_ORG,
          live: LIVE_KEYS_PER_ORG,
        });
        assert.equal((await a.keysOf(org.id)).find((k) => k.id === keys[0])?.revoke_at, null);
        // Without grace the old key stops as the new one starts.
        const swapped = await a.rollKey(org.id, user.id, keys[0]!, 0);
        assert.ok(swapped.ok, JSON.stringify(swapped));
        assert.equal((await a.createKeyFor(org.id, user.id)).ok, false);
        assert.deepEqual(await a.revokeKey(org.id, keys[1]!), { ok: true, revoked: true });
        // Room for one: a roll with grace takes it (its old key still counts), and then there is none.
        const rolled = await a.rollKey(org.id, user.id, keys[2]!, HOUR);
        assert.ok(rolled.ok, JSON.stringify(rolled));
        assert.deepEqual(await a.createKeyFor(org.id, user.id), { ok: false, reason: 'too_many_keys', max: LIVE_KEYS_PER_ORG, live: LIVE_KEYS_PER_ORG });
        // Still a member's question first: another account is not told about the organization's keys.
        const stranger = await newUser();
        assert.deepEqual(await a.createKeyFor(org.id, stranger.user.id), { ok: false, reason: 'not_member' });
        // The view agrees: exactly the limit of keys the API accepts.
        assert.equal((await a.view()).keys.filter((k) => k.orgId === org.id && !k.revoked).length, LIVE_KEYS_PER_ORG);
      });

      test('exact across nodes: a burst of key creations on two connections makes exactly the limit', async () => {
        const { user, org } = await newUser();
        const burst = await Promise.all(Array.from({ length: LIVE_KEYS_PER_ORG + 6 }, (_, i) => (i % 2 ? be.other : a).createKeyFor(org.id, user.id)));
        assert.equal(burst.filter((r) => r.ok).length, LIVE_KEYS_PER_ORG);
        assert.equal((await a.view()).keys.filter((k) => k.orgId === org.id && !k.revoked).length, LIVE_KEYS_PER_ORG);
      });

      test('operator: createKey with the limit throws and writes nothing at it; without (the override) it creates', async () => {
        const name = `Limits Operator ${++n} ${Date.now()}`;
        for (let i = 0; i < LIVE_KEYS_PER_ORG; i++) await a.createKey(name, 'ops@cli.example', 'partner', LIVE_KEYS_PER_ORG);
        const before = (await a.keys()).length;
        await assert.rejects(
          a.createKey(name, 'ops@cli.example', 'partner', LIVE_KEYS_PER_ORG),
          (err: unknown) => err instanceof LiveKeysLimitError && err.live === LIVE_KEYS_PER_ORG && err.max === LIVE_KEYS_PER_ORG && err.orgName === name,
        );
        assert.equal((await a.keys()).length, before, 'nothing written');
        const over = await a.createKey(name, 'ops@cli.example', 'partner', null);
        assert.equal(over.created, false);
        assert.equal((await a.keys()).length, before + 1);
      });
    });
  });
}
