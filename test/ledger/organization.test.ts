// What an owner does to their organization (issue 28 item 12), on both ledger backends with the
// same assertions: AccountsDb on a temporary LEDGER_DIR and PgAccounts on a fresh PostgreSQL
// database (skipped with the reason where no server answers). Rename (owner only, a valid name no
// other organization has in any case), the pending invitations (listed with their inviter, and
// cancelled: the link stops working but still counts against the sending limits), and removing a
// member (never the last owner; an account left in no organization is signed out everywhere).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openPool } from '../../ledger/postgres/db.ts';
import { migrate } from '../../ledger/postgres/migrate.ts';
import { PgAccounts } from '../../ledger/postgres/store.ts';
import { AccountsDb } from '../../ledger/sqlite/store.ts';
import { postgresMissing, testDatabase } from '../pg.ts';

const missing = await postgresMissing();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;

/** PgAccounts' public methods: AccountsDb's are wrapped to answer through promises. */
type Accounts = Pick<PgAccounts, keyof PgAccounts>;

interface Backend {
  readonly accounts: Accounts;
  close(): Promise<void>;
}

async function openSqlite(): Promise<Backend> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-org-'));
  const db = AccountsDb.open(dir);
  const wrapped: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(PgAccounts.prototype)) {
    const fn = (db as unknown as Record<string, unknown>)[name];
    if (name !== 'constructor' && typeof fn === 'function') wrapped[name] = async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown).apply(db, args);
  }
  return {
    accounts: wrapped as unknown as Accounts,
    close: async () => {
      db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Backend> {
  const database = await testDatabase('org');
  const settings = { url: database.url, poolMax: 4, statementTimeoutMs: 5000 };
  await migrate(settings);
  const pool = openPool(settings, 'org test');
  return {
    accounts: new PgAccounts(pool),
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
}

const binding = (v: string): string => createHash('sha256').update(v).digest('hex');
let n = 0;
const freshEmail = (): string => `dev${++n}.${Date.now()}@org.example`;

const BACKENDS = [
  { name: 'the embedded ledger', skip: false as const, open: openSqlite },
  { name: 'PostgreSQL', skip: missing ?? (false as const), open: openPostgres },
];

for (const backend of BACKENDS) {
  describe(`an owner's organization on ${backend.name}`, { skip: backend.skip }, () => {
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

    /** A member of `orgId` by invitation, as the website makes one. */
    async function memberOf(orgId: string) {
      const joined = await a.joinByInvite(freshEmail(), orgId);
      assert.ok('user' in joined);
      return joined.user;
    }

    describe('rename', () => {
      test('the owner renames: trimmed, NFC, in the view and the listings at once; the same name again changes nothing', async () => {
        const owner = await newUser();
        assert.deepEqual(await a.renameOrg(owner.org.id, owner.user.id, '  Cafe\u0301 Builders  '), { ok: true, name: 'Café Builders', renamed: true });
        assert.equal((await a.orgById(owner.org.id))?.name, 'Café Builders');
        assert.equal((await a.organizationsOf(owner.user.id))[0]?.name, 'Café Builders');
        assert.equal((await a.view()).orgs.get(owner.org.id)?.name, 'Café Builders');
        assert.deepEqual(await a.renameOrg(owner.org.id, owner.user.id, 'Café Builders'), { ok: true, name: 'Café Builders', renamed: false });
        // Its own name in another case is its own, not taken.
        assert.deepEqual(await a.renameOrg(owner.org.id, owner.user.id, 'café builders'), { ok: true, name: 'café builders', renamed: true });
      });

      test('a member, a stranger and an unknown organization are refused; nothing changes', async () => {
        const owner = await newUser();
        const member = await memberOf(owner.org.id);
        const stranger = await newUser();
        assert.deepEqual(await a.renameOrg(owner.org.id, member.id, 'Taken over'), { ok: false, reason: 'not_owner' });
        assert.deepEqual(await a.renameOrg(owner.org.id, stranger.user.id, 'Taken over'), { ok: false, reason: 'not_owner' });
        assert.deepEqual(await a.renameOrg('org_nosuchorg', owner.user.id, 'Anything'), { ok: false, reason: 'unknown_org' });
        assert.equal((await a.orgById(owner.org.id))?.name, owner.org.name);
      });

      test('empty, too long, control characters and direction overrides are invalid; a name another organization has (any case) is taken', async () => {
        const owner = await newUser();
        for (const bad of [
          '',
          '   ',
          'x'.repeat(101),
          'Line\nbreak',
          'Tab\there',
          'Nul\u0000',
          'Bell\u0007',
          'Evil\u202Eoverride',
          'Iso\u2066late',
          'Sep\u2028arator',
        ]) {
          assert.deepEqual(await a.renameOrg(owner.org.id, owner.user.id, bad), { ok: false, reason: 'invalid' }, JSON.stringify(bad));
        }
        assert.equal((await a.renameOrg(owner.org.id, owner.user.id, '🦉'.repeat(100))).ok, true, '100 characters, however many UTF-16 units');
        const other = await newUser();
        assert.ok((await a.renameOrg(other.org.id, other.user.id, 'Owl Works')).ok);
        assert.deepEqual(await a.renameOrg(owner.org.id, owner.user.id, 'OWL WORKS'), { ok: false, reason: 'name_taken' });
        const third = await newUser();
        assert.deepEqual(
          await a.renameOrg(owner.org.id, owner.user.id, third.org.name.toUpperCase()),
          { ok: false, reason: 'name_taken' },
          'a name given at sign-up',
        );
      });
    });

    describe('pending invitations', () => {
      test('listed newest first with address, when, inviter and expiry; spent and expired ones are not; the owner cancels one and its link stops working', async () => {
        const owner = await newUser();
        const t0 = Date.now();
        const first = await a.issueLoginToken('first@guests.example', 'invite', owner.org.id, '', 7 * DAY, t0 - 2 * MIN, null, owner.user.id);
        const second = await a.issueLoginToken('second@guests.example', 'invite', owner.org.id, '', 7 * DAY, t0 - MIN, null, owner.user.id);
        const spent = await a.issueLoginToken('spent@guests.example', 'invite', owner.org.id, '', 7 * DAY, t0 - 3 * MIN, null, owner.user.id);
        const gone = await a.issueLoginToken('gone@guests.example', 'invite', owner.org.id, '', MIN, t0 - 10 * MIN, null, owner.user.id);
        assert.ok(first.ok && second.ok && spent.ok && gone.ok);
        assert.ok((await a.spendLoginToken(spent.token, 'invite', '', t0)).ok);
        // Another organization's, and a sign-in link to the same address: not this list's.
        const other = await newUser();
        assert.ok((await a.issueLoginToken('elsewhere@guests.example', 'invite', other.org.id, '', 7 * DAY, t0, null, other.user.id)).ok);
        assert.ok((await a.issueLoginToken('first@guests.example', 'sign_in', null, binding('b'), 10 * MIN, t0)).ok);

        const listed = await a.pendingInvites(owner.org.id, t0);
        assert.deepEqual(
          listed.map((i) => [i.email, i.invited_by, Date.parse(i.created_at), Date.parse(i.expires_at)]),
          [
            ['second@guests.example', owner.user.email, t0 - MIN, t0 - MIN + 7 * DAY],
            ['first@guests.example', owner.user.email, t0 - 2 * MIN, t0 - 2 * MIN + 7 * DAY],
          ],
        );
        assert.ok(
          listed.every((i) => /^[0-9a-f]{64}$/.test(i.id)),
          'named by the stored hash, never the link',
        );
        assert.ok(!JSON.stringify(listed).includes(first.token), 'the link itself is not in the list');

        const member = await memberOf(owner.org.id);
        const target = listed[1]!.id;
        assert.deepEqual(await a.cancelInvite(owner.org.id, member.id, target, t0), { ok: false, reason: 'not_owner' });
        // Another organization's owner cannot cancel it by naming it under their own organization.
        assert.deepEqual(await a.cancelInvite(other.org.id, other.user.id, target, t0), { ok: true, cancelled: false });
        assert.deepEqual(await a.cancelInvite(owner.org.id, owner.user.id, target, t0), { ok: true, cancelled: true });
        assert.deepEqual(await a.cancelInvite(owner.org.id, owner.user.id, target, t0 + 1), { ok: true, cancelled: false }, 'once');
        assert.deepEqual(
          (await a.pendingInvites(owner.org.id, t0 + 1)).map((i) => i.email),
          ['second@guests.example'],
        );
        assert.deepEqual(await a.spendLoginToken(first.token, 'invite', '', t0 + 2), { ok: false, reason: 'expired' }, 'the cancelled link no longer works');
        assert.ok((await a.spendLoginToken(second.token, 'invite', '', t0 + 2)).ok, 'the other still does');
      });
    });

    describe('removing a member', () => {
      test('the owner removes a member: gone from the members, the organization gone from theirs, signed out when left in none', async () => {
        const owner = await newUser();
        const member = await memberOf(owner.org.id);
        const session = await a.createSession(member.id, DAY);
        assert.ok(session.ok);
        assert.ok(await a.touchSession(session.token, Date.now(), DAY));
        const now = Date.now();
        assert.deepEqual(await a.removeMember(owner.org.id, member.id, owner.user.id, now), { ok: false, reason: 'not_owner' }, 'a member removes nobody');
        assert.deepEqual(await a.removeMember(owner.org.id, owner.user.id, member.id, now), { ok: true, sessionsEnded: 1 });
        assert.deepEqual(
          (await a.members(owner.org.id)).map((m) => m.user_id),
          [owner.user.id],
        );
        assert.deepEqual(await a.organizationsOf(member.id), []);
        assert.equal(await a.touchSession(session.token, now + 1, DAY), null, 'their session ended');
        assert.deepEqual(await a.removeMember(owner.org.id, owner.user.id, member.id, now), { ok: false, reason: 'unknown_member' });
      });

      test('a member who owns another organization keeps it and their session', async () => {
        const owner = await newUser();
        const other = await newUser();
        assert.ok('user' in (await a.joinByInvite(other.user.email!, owner.org.id)));
        const session = await a.createSession(other.user.id, DAY);
        assert.ok(session.ok);
        assert.deepEqual(await a.removeMember(owner.org.id, owner.user.id, other.user.id, Date.now()), { ok: true, sessionsEnded: 0 });
        assert.deepEqual(
          (await a.organizationsOf(other.user.id)).map((o) => o.id),
          [other.org.id],
        );
        assert.ok(await a.touchSession(session.token, Date.now(), DAY));
      });

      test('never the last owner, themselves included; unknown organizations and strangers are refused', async () => {
        const owner = await newUser();
        const member = await memberOf(owner.org.id);
        const stranger = await newUser();
        const now = Date.now();
        assert.deepEqual(await a.removeMember(owner.org.id, owner.user.id, owner.user.id, now), { ok: false, reason: 'last_owner' });
        assert.deepEqual(await a.removeMember(owner.org.id, stranger.user.id, member.id, now), { ok: false, reason: 'not_owner' });
        assert.deepEqual(await a.removeMember('org_nosuchorg', owner.user.id, member.id, now), { ok: false, reason: 'unknown_org' });
        assert.deepEqual(await a.removeMember(owner.org.id, owner.user.id, stranger.user.id, now), { ok: false, reason: 'unknown_member' });
        assert.deepEqual(
          (await a.members(owner.org.id)).map((m) => [m.user_id, m.role]),
          [
            [owner.user.id, 'owner'],
            [member.id, 'member'],
          ],
        );
      });
    });
  });
}
