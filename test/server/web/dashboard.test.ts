// The dashboard over HTTP (issue 28, item 12): a new account's first task, a key, comes first and
// its empty month says so instead of a table of zeros; the owner renames the organization, sees
// and cancels its pending invitations and removes members (never the last owner), each by a form
// checked for its origin and CSRF token as the key forms are; a member can do none of it; a
// removed member's access ends; an invalid invitation address comes back at its field, where the
// page lands (the form's fragment), as typed.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { DomUtils, parseDocument } from 'htmlparser2';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { cookieNames } from '../../../server/web/session.ts';
import { sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../helpers.ts';
import { FormBrowser, hiddenFields, postForms } from './form-browser.ts';

type Element = ReturnType<typeof DomUtils.findAll>[number];
const NAMES = cookieNames(WEB);
const DAY = 24 * 3_600_000;

let fx: Fixture;
let srv: TestServer;

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
});
after(async () => {
  await srv.stop();
  await fx.cleanup();
});

/** `fn` on the accounts store beside the server, as the command line opens it. */
function withStore<T>(fn: (store: AccountsDb) => T): T {
  const store = AccountsDb.open(srv.config.ledgerDir);
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** A browser signed in as `userId`. */
function browserOf(userId: string): FormBrowser {
  const token = withStore((store) => {
    const session = store.createSession(userId, 3_600_000);
    assert.ok(session.ok);
    return session.token;
  });
  const b = new FormBrowser(srv.base, WEB);
  b.jar.set(NAMES.session, token);
  return b;
}

/** A new account's owner, signed in, with their organization. */
function owner(email: string): { b: FormBrowser; userId: string; orgId: string; orgName: string } {
  const { userId, org } = withStore((store) => {
    const user = store.signInByEmail(email).user;
    const first = store.organizationsOf(user.id)[0];
    assert.ok(first);
    return { userId: user.id, org: first };
  });
  return { b: browserOf(userId), userId, orgId: org.id, orgName: org.name };
}

/** A member of the organization by invitation, signed in. */
function member(orgId: string, email: string): { b: FormBrowser; userId: string } {
  const userId = withStore((store) => {
    const joined = store.joinByInvite(email, orgId);
    assert.ok('user' in joined);
    return joined.user.id;
  });
  return { b: browserOf(userId), userId };
}

const doc = (page: string) => parseDocument(page).children;
const byId = (page: string, id: string): Element | null => DomUtils.findOne((e) => e.attribs.id === id, doc(page));
const textOf = (e: Element): string => DomUtils.textContent(e).replace(/\s+/g, ' ').trim();
const orgNameOf = (orgId: string): string | undefined => withStore((store) => store.orgById(orgId)?.name);
const membersOf = (orgId: string): string[] => withStore((store) => store.members(orgId).map((m) => m.user_id));

/** Where, in document order, the first element matching `test` starts (-1: none). */
function positionOf(page: string, test: (e: Element) => boolean): number {
  const found = DomUtils.findOne(test, parseDocument(page, { withStartIndices: true }).children);
  return found === null ? -1 : (found.startIndex ?? -1);
}

describe('the order of a new account’s dashboard', () => {
  test('no keys: "Create a key" comes before the usage, which says "No usage yet" (and links to it) instead of a table of zeros', async () => {
    const { b } = owner('first-day@example.org');
    const dash = await b.get('/account');
    assert.equal(dash.status, 200);
    const create = positionOf(dash.text, (e) => e.name === 'form' && e.attribs.action === '/account/keys');
    const usage = positionOf(dash.text, (e) => e.attribs.id === 'usage');
    assert.ok(create > 0 && usage > 0, 'both are on the page');
    assert.ok(create < usage, `the key form (at ${create}) comes before the usage (at ${usage})`);
    const usageSection = byId(dash.text, 'usage');
    assert.ok(usageSection);
    assert.equal(DomUtils.findAll((e) => e.name === 'table', [usageSection]).length, 0, 'no table of days');
    assert.equal(DomUtils.findAll((e) => e.name === 'tr', [usageSection]).length, 0, 'no rows of zeros');
    assert.match(textOf(usageSection), /No usage yet/);
    assert.ok(
      DomUtils.findOne((e) => e.name === 'a' && e.attribs.href === '#keys' && textOf(e) === 'Create a key', [usageSection]),
      'the empty state leads to the key form',
    );
  });

  test('with a key: the usage comes first, the keys right after, both in the page’s own links', async () => {
    const { b, orgId, userId } = owner('has-a-key@example.org');
    withStore((store) => assert.ok(store.createKeyFor(orgId, userId).ok));
    const dash = (await b.get('/account')).text;
    const usage = positionOf(dash, (e) => e.attribs.id === 'usage');
    const keys = positionOf(dash, (e) => e.attribs.id === 'keys');
    assert.ok(usage > 0 && keys > usage, 'usage, then keys');
    const nav = DomUtils.findOne((e) => e.name === 'nav' && e.attribs['aria-label'] === 'On this page', doc(dash));
    assert.ok(nav);
    assert.deepEqual(
      DomUtils.findAll((e) => e.name === 'a', [nav]).map((a) => a.attribs.href),
      ['#usage', '#keys', '#members', '#organization'],
    );
  });
});

describe('renaming the organization', () => {
  test('the owner renames it: 303 to the organization’s section, the new name everywhere', async () => {
    const o = owner('rename-owner@example.org');
    const fields = hiddenFields((await o.b.get('/account')).text, '/account/org/rename#organization');
    const r = await o.b.post('/account/org/rename', { ...fields, name: '  Tide Pool Labs  ' });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), `/account?org=${o.orgId}&notice=renamed#organization`);
    assert.equal(orgNameOf(o.orgId), 'Tide Pool Labs');
    const dash = (await o.b.get(`/account?org=${o.orgId}&notice=renamed`)).text;
    const section = byId(dash, 'organization');
    assert.ok(section);
    assert.match(textOf(section), /The organization is renamed/);
    assert.equal(byId(dash, 'org-name')?.attribs.value, 'Tide Pool Labs');
  });

  test('a member may not: no form, and a POST is refused (403), the name unchanged', async () => {
    const o = owner('rename-owner2@example.org');
    const m = member(o.orgId, 'rename-member@example.org');
    const dash = (await m.b.get('/account')).text;
    assert.equal(postForms(dash).filter((f) => f.action.startsWith('/account/org/rename')).length, 0);
    assert.match(textOf(byId(dash, 'organization')!), /Only its owner can rename it/);
    const csrf = hiddenFields(dash, '/account/sign-out').csrf ?? '';
    const r = await m.b.post('/account/org/rename', { csrf, org: o.orgId, name: 'Taken over' });
    assert.equal(r.status, 403);
    assert.equal(orgNameOf(o.orgId), o.orgName);
  });

  test('invalid names come back at the field, as typed, with what to change (400); a name another organization has is 409', async () => {
    const o = owner('rename-invalid@example.org');
    const other = owner('rename-other@example.org');
    const fields = hiddenFields((await o.b.get('/account')).text, '/account/org/rename#organization');
    const cases: [string, number, RegExp][] = [
      ['   ', 400, /Enter a name for the organization/],
      ['x'.repeat(101), 400, /at most 100 characters/],
      ['Tab\there', 400, /control characters/],
      ['Right\u202Eto left', 400, /control characters/],
      [other.orgName.toUpperCase(), 409, /Another organization has this name/],
    ];
    for (const [name, status, says] of cases) {
      const r = await o.b.post('/account/org/rename', { ...fields, name });
      assert.equal(r.status, status, JSON.stringify(name));
      assert.equal(r.headers.get('cache-control'), 'no-store');
      const input = byId(r.text, 'org-name');
      assert.ok(input);
      assert.equal(input.attribs.value, name, 'the typed value is kept');
      assert.equal(input.attribs['aria-invalid'], 'true');
      const error = byId(r.text, 'org-name-error');
      assert.ok(error, 'the error is at the field');
      assert.match(textOf(error), says);
      assert.ok((input.attribs['aria-describedby'] ?? '').split(' ').includes('org-name-error'));
      // The form the error is in posts to its own fragment, so the page lands on it.
      assert.ok(postForms(r.text).some((f) => f.action === '/account/org/rename#organization'));
    }
    assert.equal(orgNameOf(o.orgId), o.orgName, 'nothing renamed');
  });

  test('CSRF: no token, another session’s token, or another origin is refused (403)', async () => {
    const o = owner('rename-csrf@example.org');
    const other = owner('rename-csrf-other@example.org');
    const fields = hiddenFields((await o.b.get('/account')).text, '/account/org/rename#organization');
    const theirs = hiddenFields((await other.b.get('/account')).text, '/account/org/rename#organization');
    assert.equal((await o.b.post('/account/org/rename', { org: o.orgId, name: 'No token' })).status, 403);
    assert.equal((await o.b.post('/account/org/rename', { ...fields, csrf: theirs.csrf ?? '', name: 'Their token' })).status, 403);
    assert.equal((await o.b.post('/account/org/rename', { ...fields, name: 'Elsewhere' }, 'https://evil.example')).status, 403);
    assert.equal((await o.b.post('/account/org/rename', { ...fields, name: 'No origin' }, null)).status, 403);
    // Another organization named in a form of this session: not this user's.
    assert.equal((await o.b.post('/account/org/rename', { ...fields, org: other.orgId, name: 'Not mine' })).status, 403);
    assert.equal(orgNameOf(o.orgId), o.orgName);
    assert.equal(orgNameOf(other.orgId), other.orgName);
  });
});

describe('pending invitations', () => {
  test('listed with address, when, by whom and expiry; a member sees them but cannot cancel; the owner cancels one and its link stops working', async () => {
    const o = owner('inviter@example.org');
    const m = member(o.orgId, 'invites-member@example.org');
    const now = Date.now();
    const tokens = withStore((store) =>
      ['guest-one@example.org', 'guest-two@example.org'].map((email, i) => {
        const issued = store.issueLoginToken(email, 'invite', o.orgId, '', 7 * DAY, now - (2 - i) * 60_000, null, o.userId);
        assert.ok(issued.ok);
        return issued.token;
      }),
    );
    const dash = (await o.b.get('/account')).text;
    const table = DomUtils.findOne((e) => e.name === 'table' && (e.attribs.class ?? '').split(' ').includes('invites'), doc(dash));
    assert.ok(table, 'the pending invitations table');
    const rows = DomUtils.findAll((e) => e.name === 'tr', [table]).slice(1);
    assert.deepEqual(
      rows.map((r) => DomUtils.findAll((e) => e.name === 'td' && e.attribs['data-label'] !== undefined, [r]).map(textOf)),
      [
        ['guest-two@example.org', expect(now - 60_000), 'inviter@example.org', expect(now - 60_000 + 7 * DAY)],
        ['guest-one@example.org', expect(now - 120_000), 'inviter@example.org', expect(now - 120_000 + 7 * DAY)],
      ],
    );
    assert.match(textOf(byId(dash, 'invites-h')!), /Pending invitations/);

    const memberDash = (await m.b.get('/account')).text;
    assert.match(memberDash, /guest-one@example\.org/, 'a member sees them too');
    assert.equal(postForms(memberDash).filter((f) => f.action.startsWith('/account/invitations/cancel')).length, 0, 'without a cancel form');
    const cancel = hiddenFields(dash, '/account/invitations/cancel#members', 1);
    const memberCsrf = hiddenFields(memberDash, '/account/sign-out').csrf ?? '';
    assert.equal((await m.b.post('/account/invitations/cancel', { ...cancel, csrf: memberCsrf })).status, 403, 'a member may not cancel');
    assert.equal((await o.b.post('/account/invitations/cancel', { org: o.orgId, invite: cancel.invite ?? '' })).status, 403, 'no CSRF token');

    const r = await o.b.post('/account/invitations/cancel', cancel);
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), `/account?org=${o.orgId}&notice=invite_cancelled#members`);
    const after = (await o.b.get('/account')).text;
    assert.ok(!after.includes('guest-one@example.org'), 'no longer listed');
    assert.ok(after.includes('guest-two@example.org'));
    withStore((store) => {
      assert.deepEqual(store.spendLoginToken(tokens[0]!, 'invite', '', Date.now()), { ok: false, reason: 'expired' }, 'its link no longer works');
      assert.ok(store.peekLoginToken(tokens[1]!, 'invite', '', Date.now()).ok, 'the other one still does');
    });
  });
});

/** A day as the dashboard writes it ("Saturday, November 21, 2026"), in Pacific time. */
function expect(ms: number): string {
  const d = new Date(ms);
  const f = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' });
  return f.format(d);
}

describe('removing a member', () => {
  test('the owner removes a member after a confirmation naming them: their access to the organization ends at once', async () => {
    const o = owner('remover@example.org');
    const m = member(o.orgId, 'removed@example.org');
    assert.equal((await m.b.get('/account')).status, 200);
    const dash = (await o.b.get('/account')).text;
    const dialog = byId(dash, `remove-${m.userId}`);
    assert.ok(dialog, 'a confirmation dialog');
    assert.equal(dialog.attribs.popover, '', 'a popover: no script needed');
    assert.equal(dialog.attribs.role, 'dialog');
    assert.equal(textOf(byId(dash, `remove-${m.userId}-h`)!), `Remove removed@example.org from ${o.orgName}?`);
    const opener = DomUtils.findOne((e) => e.name === 'button' && e.attribs.popovertarget === `remove-${m.userId}` && e.attribs.type === 'button', doc(dash));
    assert.ok(opener, 'the Remove button only opens the dialog');
    const fields = hiddenFields(dash, '/account/members/remove#members');
    assert.equal(fields.member, m.userId);

    assert.equal((await o.b.post('/account/members/remove', { org: o.orgId, member: m.userId })).status, 403, 'no CSRF token');
    assert.equal((await o.b.post('/account/members/remove', fields, 'https://evil.example')).status, 403, 'another origin');
    assert.deepEqual(membersOf(o.orgId), [o.userId, m.userId]);

    const r = await o.b.post('/account/members/remove', fields);
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), `/account?org=${o.orgId}&notice=removed#members`);
    assert.deepEqual(membersOf(o.orgId), [o.userId]);
    // In no organization now: signed out, and the dashboard sends them to sign in.
    const gone = await m.b.get(`/account?org=${o.orgId}`);
    assert.equal(gone.status, 303);
    assert.equal(gone.headers.get('location'), '/account/sign-in');
    assert.match(textOf(byId((await o.b.get(`/account?org=${o.orgId}&notice=removed`)).text, 'members')!), /The member is removed/);
  });

  test('removed from their last organization and signed in again: a page saying so, and Sign out still works', async () => {
    const o = owner('remover3@example.org');
    const m = member(o.orgId, 'comes-back@example.org');
    withStore((store) => assert.ok(store.removeMember(o.orgId, o.userId, m.userId, Date.now()).ok));
    const again = browserOf(m.userId);
    const page = await again.get('/account');
    assert.equal(page.status, 200, 'not the old 503');
    assert.match(page.text, /not a member of any organization/);
    assert.equal(postForms(page.text).filter((f) => f.action !== '/account/sign-out').length, 0, 'no form about an organization');
    const out = await again.post('/account/sign-out', hiddenFields(page.text, '/account/sign-out'));
    assert.equal(out.status, 303);
    assert.equal(out.headers.get('location'), '/');
    assert.equal((await again.get('/account')).status, 303, 'signed out');
  });

  test('a member who has an organization of their own keeps their session but no longer sees this one, nor can post to it', async () => {
    const o = owner('remover2@example.org');
    const m2 = owner('has-own@example.org');
    withStore((store) => assert.ok('user' in store.joinByInvite('has-own@example.org', o.orgId)));
    const before = (await m2.b.get(`/account?org=${o.orgId}`)).text;
    assert.equal(hiddenFields(before, '/account/keys').org, o.orgId, 'they see it before');
    const fields = hiddenFields((await o.b.get('/account')).text, '/account/members/remove#members');
    assert.equal(fields.member, m2.userId);
    assert.equal((await o.b.post('/account/members/remove', fields)).status, 303);
    const after = await m2.b.get(`/account?org=${o.orgId}`);
    assert.equal(after.status, 200, 'still signed in');
    assert.equal(hiddenFields(after.text, '/account/keys').org, m2.orgId, 'shown their own organization instead');
    const r = await m2.b.post('/account/keys', { ...hiddenFields(before, '/account/keys') });
    assert.equal(r.status, 403, 'a form of the organization they left is refused');
  });

  test('never the last owner: no Remove on their row, and a POST is refused (409); a member removes nobody (403)', async () => {
    const o = owner('last-owner@example.org');
    const m = member(o.orgId, 'not-an-owner@example.org');
    const dash = (await o.b.get('/account')).text;
    assert.equal(byId(dash, `remove-${o.userId}`), null, 'no way to remove the last owner');
    const fields = hiddenFields(dash, '/account/members/remove#members');
    const self = await o.b.post('/account/members/remove', { ...fields, member: o.userId });
    assert.equal(self.status, 409);
    assert.match(self.text, /last owner/);
    const memberDash = (await m.b.get('/account')).text;
    assert.equal(postForms(memberDash).filter((f) => f.action.startsWith('/account/members/remove')).length, 0, 'a member has no Remove');
    const csrf = hiddenFields(memberDash, '/account/sign-out').csrf ?? '';
    assert.equal((await m.b.post('/account/members/remove', { csrf, org: o.orgId, member: o.userId })).status, 403);
    assert.deepEqual(membersOf(o.orgId), [o.userId, m.userId]);
  });

  test('with two owners, one may leave; the other is then the last', async () => {
    const o = owner('co-owner-a@example.org');
    const m = member(o.orgId, 'co-owner-b@example.org');
    // No route makes an owner yet: the second one is made in the file itself.
    const db = new Database(path.join(srv.config.ledgerDir, 'accounts.sqlite'));
    db.prepare("UPDATE memberships SET role = 'owner' WHERE org_id = ? AND user_id = ?").run(o.orgId, m.userId);
    db.close();
    const dash = (await o.b.get('/account')).text;
    assert.ok(byId(dash, `remove-${o.userId}`), 'Leave is offered while another owner stays');
    assert.match(textOf(byId(dash, `remove-${o.userId}-h`)!), /^Leave /);
    const leave = postForms(dash).find((f) => f.action === '/account/members/remove#members' && f.fields.member === o.userId);
    assert.ok(leave);
    const r = await o.b.post('/account/members/remove', leave.fields);
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/account');
    assert.deepEqual(membersOf(o.orgId), [m.userId]);
    const left = await o.b.get('/account');
    assert.equal(left.status, 303, 'in no organization: signed out');
    const bDash = (await m.b.get('/account')).text;
    assert.equal(byId(bDash, `remove-${m.userId}`), null, 'the one left is the last owner');
  });
});

describe('an invalid invitation address', () => {
  test('comes back in the invitation form, which posts to its own fragment, with the error at the field and the address as typed', async () => {
    const o = owner('invite-typo@example.org');
    const dash = (await o.b.get('/account')).text;
    const form = DomUtils.findOne((e) => e.name === 'form' && (e.attribs.action ?? '').startsWith('/account/members/invite'), doc(dash));
    assert.ok(form);
    assert.equal(form.attribs.action, '/account/members/invite#invite', 'the answer lands on the form');
    assert.equal(form.attribs.id, 'invite');
    const r = await o.b.post('/account/members/invite', { ...hiddenFields(dash, '/account/members/invite#invite'), email: 'grace@@example' });
    assert.equal(r.status, 400);
    const again = byId(r.text, 'invite');
    assert.ok(again, 'the form is there to land on');
    const error = DomUtils.findOne((e) => e.attribs.id === 'invite-email-error', [again]);
    assert.ok(error, 'the error is inside the form the page lands on');
    assert.match(textOf(error), /Enter an e-mail address like name@example\.com/);
    const input = DomUtils.findOne((e) => e.attribs.id === 'invite-email', [again]);
    assert.equal(input?.attribs.value, 'grace@@example');
    assert.equal(input?.attribs['aria-invalid'], 'true');
  });
});
