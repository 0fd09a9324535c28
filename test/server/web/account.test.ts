// The e-mail sign-in flow and the dashboard over real HTTP against the real server: a browser is a
// tiny cookie jar around fetch, the mail is read back from DATA_DIR/outbox by mailparser, and the
// pages are read by parse5 (not by regular expressions over our own markup).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DomUtils, parseDocument } from 'htmlparser2';
import { confirmPage, invitePage, switchAccountPage } from '../../../server/web/pages/account.ts';
import { cookieNames } from '../../../server/web/session.ts';
import { keyHint } from '../../../core/keys.ts';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { freePort } from '../../ports.ts';
import { sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../helpers.ts';
import { FormBrowser, hiddenFields, postForms, type Answer } from './form-browser.ts';
import { startIdp, type Idp } from './idp.ts';
import { Outbox, type Mail } from './outbox.ts';

type Element = ReturnType<typeof DomUtils.findAll>[number];

const NAMES = cookieNames(WEB);

/** Every element of a page (or under an element), in document order. */
const elements = (page: string | Element): Element[] => DomUtils.findAll(() => true, typeof page === 'string' ? parseDocument(page).children : page.children);
const attr = (el: Element, name: string): string | undefined => el.attribs[name];
const textOf = (el: Element): string => DomUtils.textContent(el);

const forms = postForms;
const form = hiddenFields;

/** This file's browsers: on the website's origin (WEB), each with a client address of its own. */
class Browser extends FormBrowser {
  constructor(base: string, forwardedFor?: string) {
    super(base, WEB, forwardedFor);
  }
}

let fx: Fixture;
let srv: TestServer;
let outbox: Outbox;
/** The mails so far, oldest first. */
const mailFiles = (): Promise<string[]> => outbox.names();

/** The first mail after the files `seen` (2 s at most), which must be to `to`. */
async function nextMail(seen: readonly string[], to: string): Promise<Mail> {
  const mail = await outbox.next(seen, 2000);
  assert.equal(mail.to, to);
  return mail;
}
/** Its link, which the mail must hold. */
const nextLink = async (seen: readonly string[], to: string): Promise<string> => (await nextMail(seen, to)).link;

/** Asks for a link in `b` and returns the link's path and query, as the mail gives it. */
async function requestLink(b: Browser, email: string): Promise<string> {
  const seen = await mailFiles();
  const page = await b.get('/account/sign-in');
  assert.equal(page.status, 200);
  const sent = await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email });
  assert.equal(sent.status, 303);
  assert.equal(sent.headers.get('location'), '/account/sign-in/sent');
  const link = new URL(await nextLink(seen, email));
  assert.equal(link.origin, WEB);
  assert.equal(link.pathname, '/account/confirm');
  return link.pathname + link.search;
}

async function signIn(b: Browser, email: string): Promise<Answer> {
  const confirmPage = await b.get(await requestLink(b, email));
  const done = await b.post('/account/confirm', form(confirmPage.text, '/account/confirm'));
  assert.equal(done.status, 303, done.text);
  assert.equal(done.headers.get('location'), '/account');
  const dash = await b.get('/account');
  assert.equal(dash.status, 200);
  return dash;
}

const apiEvents = (key: string, base = srv.base): Promise<Response> => fetch(`${base}/v1/events?limit=3`, { headers: { authorization: `Bearer ${key}` } });

/** The key a new-key page shows once. */
function shownKey(page: string): string {
  const el = elements(page).find((e) => e.name === 'pre' && attr(e, 'data-copy') === 'API key');
  assert.ok(el, 'the key in a copyable block');
  return textOf(el).trim();
}

/** Polls the API until the key is refused; fails unless that happens within the second the product promises. */
async function refusedWithinASecond(key: string, base = srv.base): Promise<void> {
  const t0 = performance.now();
  let status = 200;
  while (performance.now() - t0 < 1000) {
    status = (await apiEvents(key, base)).status;
    if (status === 401) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(status, 401, 'the key is refused within a second');
}

/** The key hints a dashboard lists, in order. */
const listedHints = (page: string): string[] =>
  elements(page)
    .filter((e) => e.name === 'td' && e.children.some((c) => 'name' in c && c.name === 'code'))
    .map((e) => textOf(e));

const usedOn = (page: string): number => {
  const used = elements(page).find((e) => attr(e, 'data-usage') === 'used');
  assert.ok(used, 'the dashboard shows the records used');
  return Number(textOf(used).replace(/,/g, ''));
};

/** A new account's browser with one key: the dashboard after, and the key. */
async function ownerWithKey(email: string): Promise<{ b: Browser; key: string; dash: string }> {
  const b = new Browser(srv.base);
  const dash = await signIn(b, email);
  const made = await b.post('/account/keys', form(dash.text, '/account/keys'));
  assert.equal(made.status, 200);
  return { b, key: shownKey(made.text), dash: (await b.get('/account')).text };
}

before(async () => {
  fx = await sampleFixture();
  outbox = new Outbox(fx.dataDir);
  srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
});
after(async () => {
  await srv.stop();
  await fx.cleanup();
});

describe('sign-in by e-mail and the dashboard', () => {
  test('sign up → confirm (GET does not spend) → dashboard → key shown once → API use counted → revoke → 401 within a second', async () => {
    const b = new Browser(srv.base);
    const linkPath = await requestLink(b, 'ada@example.org');
    // A mail scanner's GET, twice: neither spends the token.
    const first = await b.get(linkPath);
    const again = await b.get(linkPath);
    assert.equal(first.status, 200);
    assert.equal(again.status, 200);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    const confirmFields = form(again.text, '/account/confirm');
    const done = await b.post('/account/confirm', confirmFields);
    assert.equal(done.status, 303);
    const session = b.jar.get(NAMES.session);
    assert.ok(session && session.length >= 22, 'a session cookie');
    const setSession = done.headers.getSetCookie().find((c) => c.startsWith(`${NAMES.session}=`)) ?? '';
    assert.equal(NAMES.session, '__Host-fe_session');
    for (const a of [/;\s*HttpOnly/i, /;\s*Secure/i, /;\s*SameSite=Lax/i, /;\s*Path=\//i]) assert.match(setSession, a);

    // The same token a second time: spent. Its page says so, and so does a POST of it.
    const spentPage = await b.get(linkPath);
    assert.equal(spentPage.status, 400);
    assert.match(spentPage.text, /does not work/);
    const replay = await b.post('/account/confirm', { ...confirmFields, csrf: form((await b.get('/account/sign-in')).text, '/account/sign-in').csrf ?? '' });
    assert.equal(replay.status, 400);
    assert.match(replay.text, /does not work/);

    const dash = await b.get('/account');
    assert.equal(dash.status, 200);
    assert.equal(dash.headers.get('cache-control'), 'no-store');
    assert.match(dash.text, /ada@example\.org/);
    assert.match(dash.text, /no keys yet/);

    const created = await b.post('/account/keys', form(dash.text, '/account/keys'));
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const keyEl = elements(created.text).find((e) => e.name === 'pre' && attr(e, 'data-copy') === 'API key');
    assert.ok(keyEl, 'the key in a copyable block');
    const key = textOf(keyEl).trim();
    assert.ok(key.length >= 20);

    const ok = await apiEvents(key);
    assert.equal(ok.status, 200);
    const served = ((await ok.json()) as { events: unknown[] }).events.length;
    assert.ok(served > 0);

    const after1 = await b.get('/account');
    assert.ok(!after1.text.includes(key), 'the dashboard never shows the whole key');
    const used = elements(after1.text).find((e) => attr(e, 'data-usage') === 'used');
    assert.ok(used);
    assert.equal(Number(textOf(used).replace(/,/g, '')), served);
    const revokeFields = form(after1.text, '/account/keys/revoke');
    assert.ok(revokeFields.key_id);
    // Only the hint is listed.
    const hints = elements(after1.text).filter((e) => e.name === 'td' && e.children.some((c) => 'name' in c && c.name === 'code'));
    assert.equal(hints.length, 1);
    assert.equal(textOf(hints[0] as Element), keyHint(key));

    const revoked = await b.post('/account/keys/revoke', revokeFields);
    assert.equal(revoked.status, 303);
    assert.match(revoked.headers.get('location') ?? '', /^\/account\?org=org_[0-9A-Za-z]+&notice=revoked$/);
    const t0 = performance.now();
    let status = 200;
    while (performance.now() - t0 < 1000) {
      status = (await apiEvents(key)).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(status, 401, 'the revoked key is refused within a second');
    assert.match((await b.get('/account')).text, /Revoked/);

    // The key appears nowhere but on its creation page: not in the mail, not in the logs.
    for (const f of await mailFiles()) assert.ok(!(await readFile(path.join(outbox.dir, f), 'utf8')).includes(key));
    assert.ok(!JSON.stringify(srv.logs).includes(key));
    // Nor the sign-in token.
    const token = new URLSearchParams(linkPath.split('?')[1]).get('token') ?? '';
    assert.ok(token.length >= 22 && !JSON.stringify(srv.logs).includes(token));
  });

  test('a token opened in another browser (another pre cookie) or tampered with is refused, and stays usable by its own browser', async () => {
    const mine = new Browser(srv.base);
    const linkPath = await requestLink(mine, 'grace@example.org');
    const other = new Browser(srv.base);
    // Its page says at once that the link is not this browser's (and what to do instead: the
    // code, test/server/web/sign-in-code.test.ts), and offers no form that signs in here.
    const otherPage = await other.get(linkPath);
    assert.equal(otherPage.status, 400);
    assert.match(otherPage.text, /opened in a different browser than the one that asked/);
    assert.equal(forms(otherPage.text).length, 0);
    // The token posted by hand, with this browser's own CSRF token, is refused too.
    const otherCsrf = form((await other.get('/account/sign-in')).text, '/account/sign-in').csrf ?? '';
    const fromOther = await other.post('/account/confirm', { csrf: otherCsrf, token: new URLSearchParams(linkPath.split('?')[1]).get('token') ?? '' });
    assert.equal(fromOther.status, 400);
    assert.equal(other.jar.get(NAMES.session), undefined);

    const page = await mine.get(linkPath);
    const fields = form(page.text, '/account/confirm');
    const token = fields.token ?? '';
    const tampered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    assert.equal((await mine.post('/account/confirm', { ...fields, token: tampered })).status, 400);
    assert.equal((await mine.post('/account/confirm', fields)).status, 303);
  });

  test('POSTs without the CSRF token, with another browser’s token, or from a foreign Origin get 403', async () => {
    const b = new Browser(srv.base);
    const page = await b.get('/account/sign-in');
    const fields = form(page.text, '/account/sign-in');
    const seen = (await mailFiles()).length;
    const noCsrf = await b.post('/account/sign-in', { email: 'x@example.org' });
    assert.equal(noCsrf.status, 403);
    const foreign = await b.post('/account/sign-in', { ...fields, email: 'x@example.org' }, 'https://evil.example');
    assert.equal(foreign.status, 403);
    const noOrigin = await b.post('/account/sign-in', { ...fields, email: 'x@example.org' }, null);
    assert.equal(noOrigin.status, 403);
    const stranger = new Browser(srv.base);
    await stranger.get('/account/sign-in');
    assert.equal((await stranger.post('/account/sign-in', { ...fields, email: 'x@example.org' })).status, 403);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await mailFiles()).length, seen, 'no mail was sent');

    const dash = await signIn(b, 'csrf@example.org');
    const keyForm = form(dash.text, '/account/keys');
    assert.equal((await b.post('/account/keys', {})).status, 403);
    assert.equal((await b.post('/account/keys', keyForm, 'https://evil.example')).status, 403);
    // The pre-session token does not work once signed in: the session binds the forms.
    assert.equal((await b.post('/account/keys', { csrf: fields.csrf ?? '' })).status, 403);
    assert.equal((await b.post('/account/sign-out', {})).status, 403);
    assert.equal((await b.get('/account')).status, 200, 'still signed in');
  });

  test('a planted session cookie is not the session after sign-in; signed-out sessions no longer work', async () => {
    const b = new Browser(srv.base);
    b.jar.set(NAMES.session, 'planted-by-an-attacker');
    const prePre = (await b.get('/account/sign-in'), b.jar.get(NAMES.pre));
    const dash = await signIn(b, 'fix@example.org');
    const session = b.jar.get(NAMES.session);
    assert.notEqual(session, 'planted-by-an-attacker');
    assert.notEqual(b.jar.get(NAMES.pre), prePre, 'a new pre-session id after sign-in');

    // A second browser of the same person, to test "everywhere".
    const b2 = new Browser(srv.base);
    await signIn(b2, 'fix@example.org');

    const out = await b.post('/account/sign-out', form(dash.text, '/account/sign-out'));
    assert.equal(out.status, 303);
    assert.equal(out.headers.get('location'), '/');
    assert.equal(b.jar.get(NAMES.session), undefined);
    // The old cookie, presented again, is dead server-side.
    const replay = new Browser(srv.base);
    replay.jar.set(NAMES.session, session ?? '');
    const r = await replay.get('/account');
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/account/sign-in');

    const stolen = b2.jar.get(NAMES.session) ?? '';
    const dash2 = await b2.get('/account');
    assert.equal((await b2.post('/account/sign-out-everywhere', form(dash2.text, '/account/sign-out-everywhere'))).status, 303);
    const thief = new Browser(srv.base);
    thief.jar.set(NAMES.session, stolen);
    assert.equal((await thief.get('/account')).status, 303);
  });
});

describe('keys on the dashboard: roll and revoke', () => {
  test('a roll shows the new key once; the old one works through its grace (or stops within a second with none)', async () => {
    const { b, key: k1, dash } = await ownerWithKey('roller@example.org');
    const roll = forms(dash).find((f) => f.action === '/account/keys/roll');
    assert.ok(roll, 'an active key has a roll form');
    const rolled = await b.post('/account/keys/roll', { ...roll.fields, grace: '3600' });
    assert.equal(rolled.status, 200, rolled.text);
    assert.equal(rolled.headers.get('cache-control'), 'no-store');
    const k2 = shownKey(rolled.text);
    assert.notEqual(k2, k1);
    assert.match(rolled.text, new RegExp(`replaces <code>${keyHint(k1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</code>, which keeps working until`));
    assert.equal((await apiEvents(k1)).status, 200, 'the old key works during its grace');
    assert.equal((await apiEvents(k2)).status, 200);
    const listed = await b.get('/account');
    assert.deepEqual(listedHints(listed.text), [keyHint(k2), keyHint(k1)]);
    assert.match(listed.text, /Rolled: works until <time datetime="[^"]+">/);
    assert.ok(!listed.text.includes(k2) && !listed.text.includes(k1), 'no whole key on the dashboard');
    // A key already rolling is not offered another roll; only the new one is.
    const rollable = forms(listed.text)
      .filter((f) => f.action === '/account/keys/roll')
      .map((f) => f.fields.key_id);
    assert.equal(rollable.length, 1);
    assert.notEqual(rollable[0], roll.fields.key_id);

    // No grace: the old key is refused within a second.
    const roll2 = forms(listed.text).find((f) => f.action === '/account/keys/roll');
    assert.ok(roll2);
    const now = await b.post('/account/keys/roll', { ...roll2.fields, grace: '0' });
    assert.equal(now.status, 200);
    const k3 = shownKey(now.text);
    assert.match(now.text, /which the API refuses from now on/);
    await refusedWithinASecond(k2);
    assert.equal((await apiEvents(k3)).status, 200);
    assert.equal((await apiEvents(k1)).status, 200, 'the first roll’s grace is untouched');
  });

  test('a roll with a grace the form does not offer is a 400; another organization’s key cannot be rolled, revoked or named', async () => {
    const owner = await ownerWithKey('keeper@example.org');
    const other = await ownerWithKey('intruder@example.org');
    const roll = forms(owner.dash).find((f) => f.action === '/account/keys/roll');
    assert.ok(roll);
    const bad = await owner.b.post('/account/keys/roll', { ...roll.fields, grace: '99999999' });
    assert.equal(bad.status, 400);
    assert.ok(!bad.text.includes('bsc_live_'), 'no key made');

    const theirs = forms(other.dash).find((f) => f.action === '/account/keys/roll');
    assert.ok(theirs);
    const ownCsrf = roll.fields.csrf ?? '';
    // Their key id under my organization: unknown there, so nothing happens.
    const r1 = await owner.b.post('/account/keys/roll', { ...roll.fields, key_id: theirs.fields.key_id ?? '', grace: '0' });
    assert.equal(r1.status, 303);
    const r2 = await owner.b.post('/account/keys/revoke', { csrf: ownCsrf, org: roll.fields.org ?? '', key_id: theirs.fields.key_id ?? '' });
    assert.equal(r2.status, 303);
    assert.doesNotMatch(r2.headers.get('location') ?? '', /notice=revoked/);
    // Naming their organization: not mine to act for.
    const r3 = await owner.b.post('/account/keys/revoke', { csrf: ownCsrf, org: theirs.fields.org ?? '', key_id: theirs.fields.key_id ?? '' });
    assert.equal(r3.status, 403);
    assert.equal(
      (await owner.b.get(`/account?org=${encodeURIComponent(theirs.fields.org ?? '')}`)).text.includes(keyHint(other.key)),
      false,
      'their dashboard is not mine to see',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await apiEvents(other.key)).status, 200, 'their key still works');
  });
});

describe('members and invitations', () => {
  test('the owner invites by e-mail; the invitee accepts in their own browser and sees the same keys and usage', async () => {
    const owner = await ownerWithKey('founder@example.org');
    const served = ((await (await apiEvents(owner.key)).json()) as { events: unknown[] }).events.length;
    const inviteFields = form(owner.dash, '/account/members/invite#invite');

    const bad = await owner.b.post('/account/members/invite', { ...inviteFields, email: 'nobody' });
    assert.equal(bad.status, 400);
    const err = elements(bad.text).find((e) => attr(e, 'id') === 'invite-email-error');
    assert.ok(err && /e-mail address/i.test(textOf(err)));
    const self = await owner.b.post('/account/members/invite', { ...inviteFields, email: 'FOUNDER@example.org' });
    assert.equal(self.status, 400);
    assert.match(self.text, /already a member/);

    const seen = await mailFiles();
    const sent = await owner.b.post('/account/members/invite', { ...inviteFields, email: 'colleague@example.org' });
    assert.equal(sent.status, 303);
    assert.match(sent.headers.get('location') ?? '', /notice=invited/);
    const invitation = await nextMail(seen, 'colleague@example.org');
    const link = new URL(invitation.link);
    assert.equal(link.pathname, '/account/invite');
    const mail = invitation.raw;
    assert.match(mail, /founder@example\.org invited you/);
    assert.ok(!mail.includes(owner.key), 'no key in the mail');

    // Opened in another browser than the owner's, twice (a mail scanner first): GET spends nothing.
    const invitee = new Browser(srv.base);
    assert.equal((await invitee.get(link.pathname + link.search)).status, 200);
    const page = await invitee.get(link.pathname + link.search);
    const accept = await invitee.post('/account/invite', form(page.text, '/account/invite'));
    assert.equal(accept.status, 303, accept.text);
    assert.match(accept.headers.get('location') ?? '', /^\/account\?org=org_[0-9A-Za-z]+&notice=joined$/);
    const theirs = await invitee.get(accept.headers.get('location') ?? '');
    assert.equal(theirs.status, 200);
    assert.match(theirs.text, /You joined the organization/);
    assert.match(theirs.text, /colleague@example\.org/);
    assert.deepEqual(listedHints(theirs.text), [keyHint(owner.key)]);
    assert.equal(usedOn(theirs.text), served);
    assert.equal(usedOn((await owner.b.get('/account')).text), served);
    // A member, not the owner: no invitation form, and a forged one is refused.
    assert.equal(
      forms(theirs.text).some((f) => f.action === '/account/members/invite#invite'),
      false,
    );
    assert.equal((await invitee.post('/account/members/invite', { ...form(theirs.text, '/account/keys'), email: 'x@example.org' })).status, 403);

    // The invitee's key is the organization's: the owner sees it, and its use counts for both.
    const made = await invitee.post('/account/keys', form(theirs.text, '/account/keys'));
    const k2 = shownKey(made.text);
    assert.deepEqual(listedHints((await owner.b.get('/account')).text), [keyHint(k2), keyHint(owner.key)]);
    const more = ((await (await apiEvents(k2)).json()) as { events: unknown[] }).events.length;
    assert.equal(usedOn((await owner.b.get('/account')).text), served + more);

    // Spent: a second acceptance does nothing.
    const again = await invitee.get(link.pathname + link.search);
    assert.equal(again.status, 400);
    assert.match(again.text, /does not work/);
    const replay = await new Browser(srv.base).request('/account/invite', { form: { token: link.searchParams.get('token') ?? '' } });
    assert.notEqual(replay.status, 303);
    const token = link.searchParams.get('token') ?? '';
    assert.ok(token.length >= 43 && !JSON.stringify(srv.logs).includes(token), 'the invitation token is not logged');
  });

  test('an existing account that accepts keeps its own organization and switches between the two', async () => {
    const owner = await ownerWithKey('team-lead@example.org');
    const existing = new Browser(srv.base);
    const ownDash = await signIn(existing, 'has-own-org@example.org');
    const seen = await mailFiles();
    assert.equal(
      (await owner.b.post('/account/members/invite', { ...form(owner.dash, '/account/members/invite#invite'), email: 'has-own-org@example.org' })).status,
      303,
    );
    const link = new URL(await nextLink(seen, 'has-own-org@example.org'));
    const page = await existing.get(link.pathname + link.search);
    const accept = await existing.post('/account/invite', form(page.text, '/account/invite'));
    assert.equal(accept.status, 303);
    const joinedOrg = new URLSearchParams((accept.headers.get('location') ?? '').split('?')[1]).get('org') ?? '';
    const dash = await existing.get('/account');
    const options = elements(dash.text).filter((e) => e.name === 'option' && e.parent && 'attribs' in e.parent && e.parent.attribs.name === 'org');
    assert.equal(options.length, 2, 'an organization switcher with both');
    assert.deepEqual(listedHints((await existing.get(`/account?org=${joinedOrg}`)).text), [keyHint(owner.key)]);
    assert.deepEqual(listedHints(ownDash.text), []);
    // A form of the joined organization acts there: a key made in it is the team's.
    const inTeam = await existing.get(`/account?org=${joinedOrg}`);
    assert.equal(form(inTeam.text, '/account/keys').org, joinedOrg);
  });
});

describe('typed links and invitations in a signed-in browser (issue 26)', () => {
  /** The organization's name as the dashboard shows it. */
  const orgNameOn = (dash: string): string => {
    const p = elements(dash).find((e) => e.name === 'p' && textOf(e).startsWith('Signed in'));
    assert.ok(p, 'the dashboard says who is signed in');
    const strong = elements(p).filter((e) => e.name === 'strong');
    return textOf(strong[1]!);
  };
  /** The owner invites `email`; the link's path and query. */
  async function invitation(owner: { b: Browser; dash: string }, email: string): Promise<string> {
    const seen = await mailFiles();
    assert.equal((await owner.b.post('/account/members/invite', { ...form(owner.dash, '/account/members/invite#invite'), email })).status, 303);
    const link = new URL(await nextLink(seen, email));
    return link.pathname + link.search;
  }
  const tokenOf = (linkPath: string): string => new URLSearchParams(linkPath.split('?')[1]).get('token') ?? '';
  const invitationLine = (page: string): string => {
    const p = elements(page).find((e) => e.name === 'p' && attr(e, 'class') === 'invitation');
    assert.ok(p, 'the page says who invited whom to what');
    return textOf(p).replace(/\s+/g, ' ');
  };

  test('a link is spent only by its own page: an invitation posted to the sign-in confirmation, or a sign-in link to the invitation, is refused and still works where it belongs', async () => {
    const owner = await ownerWithKey('typed-owner@example.org');
    const invitePath = await invitation(owner, 'typed-invitee@example.org');
    const b = new Browser(srv.base);
    const invitePage = await b.get(invitePath);
    assert.equal(invitePage.status, 200);
    const inviteFields = form(invitePage.text, '/account/invite');
    // Opened at, or posted to, the sign-in confirmation (same browser, valid CSRF token): not for this page.
    const openedThere = await b.get(`/account/confirm?token=${encodeURIComponent(tokenOf(invitePath))}`);
    assert.equal(openedThere.status, 400);
    assert.match(openedThere.text, /not for this page/);
    const postedThere = await b.post('/account/confirm', inviteFields);
    assert.equal(postedThere.status, 400);
    assert.match(postedThere.text, /not for this page/);
    assert.equal(b.jar.get(NAMES.session), undefined);
    // Still good at its own page.
    const accepted = await b.post('/account/invite', inviteFields);
    assert.equal(accepted.status, 303, accepted.text);
    assert.match(accepted.headers.get('location') ?? '', /notice=joined/);

    const c = new Browser(srv.base);
    const signInPath = await requestLink(c, 'typed-signin@example.org');
    const fields = form((await c.get(signInPath)).text, '/account/confirm');
    assert.equal((await c.get(`/account/invite?token=${encodeURIComponent(fields.token ?? '')}`)).status, 400);
    const wrong = await c.post('/account/invite', fields);
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /not for this page/);
    assert.equal(c.jar.get(NAMES.session), undefined);
    assert.equal((await c.post('/account/confirm', fields)).status, 303);
  });

  test('the invitation page names the inviter, the invited address and the organization, and spends nothing', async () => {
    const owner = await ownerWithKey('naming-owner@example.org');
    const orgName = orgNameOn(owner.dash);
    const path = await invitation(owner, 'named-invitee@example.org');
    const scanner = new Browser(srv.base);
    const b = new Browser(srv.base);
    for (const viewer of [scanner, b, b]) {
      const page = await viewer.get(path);
      assert.equal(page.status, 200);
      const line = invitationLine(page.text);
      assert.ok(line.startsWith(`naming-owner@example.org invited named-invitee@example.org to join ${orgName} on `), line);
    }
    const accepted = await b.post('/account/invite', form((await b.get(path)).text, '/account/invite'));
    assert.equal(accepted.status, 303);
    // Spent now: its page says so at once.
    const after = await scanner.get(path);
    assert.equal(after.status, 400);
    assert.match(after.text, /does not work/);
    // The sign-in confirmation names the address it signs in as.
    const c = new Browser(srv.base);
    const confirm = await c.get(await requestLink(c, 'named-signin@example.org'));
    const asWhom = elements(confirm.text).find((e) => e.name === 'p' && attr(e, 'class') === 'signing-in-as');
    assert.ok(asWhom, 'the confirmation says whom it signs in as');
    assert.match(textOf(asWhom), / as named-signin@example\.org\?/);
  });

  test('the names these pages show are users’ choices and are escaped: no markup of theirs becomes an element', () => {
    const site = { webBaseUrl: WEB, apiBaseUrl: `${WEB}/api`, name: 'Family Events' };
    const hostile = {
      inviter: '<img src=x onerror=alert(1)>@example.org',
      email: '"><script>alert(2)</script>@example.org',
      orgName: 'Claim your prize at <a href="https://evil.example">evil</a> & co',
    };
    const input = { token: 't"><b>', csrf: 'c', ...hostile };
    const pages = [
      invitePage(site, input),
      switchAccountPage(site, { ...input, confirm: 'k', signedInAs: '<i>a</i>@example.org' }),
      confirmPage(site, { token: 't', csrf: 'c', email: hostile.email }),
    ];
    for (const page of pages) {
      const main = elements(page).find((e) => e.name === 'main');
      assert.ok(main);
      assert.deepEqual(
        elements(main).filter((e) => ['img', 'script', 'i', 'b'].includes(e.name) || (e.name === 'a' && attr(e, 'href') === 'https://evil.example')),
        [],
      );
    }
    assert.ok(
      textOf(elements(pages[0]!).find((e) => attr(e, 'class') === 'invitation')!).includes(
        `${hostile.inviter} invited ${hostile.email} to join ${hostile.orgName}`,
      ),
    );
    assert.ok(textOf(elements(pages[1]!).find((e) => e.name === 'main')!).includes('You are signed in as <i>a</i>@example.org.'));
  });

  test('accepting in a browser signed in as someone else asks first, naming both; nothing changes until its "continue"', async () => {
    const owner = await ownerWithKey('switch-owner@example.org');
    const orgName = orgNameOn(owner.dash);
    const path = await invitation(owner, 'switch-b@example.org');
    const a = new Browser(srv.base);
    await signIn(a, 'switch-a@example.org');
    const sessionA = a.jar.get(NAMES.session);
    const first = await a.post('/account/invite', form((await a.get(path)).text, '/account/invite'));
    assert.equal(first.status, 200, first.text);
    const question = elements(first.text).find((e) => e.name === 'main');
    assert.ok(question);
    const says = textOf(question).replace(/\s+/g, ' ');
    assert.match(says, /You are signed in as switch-a@example\.org\./);
    assert.ok(says.includes(`This invitation is for switch-b@example.org to join ${orgName}`), says);
    assert.ok(says.includes('Continue as switch-b@example.org (signs you out of switch-a@example.org)'), says);
    const cancel = elements(first.text).find((e) => e.name === 'a' && textOf(e) === 'Cancel');
    assert.equal(cancel && attr(cancel, 'href'), '/account');
    // Still A, and the invitation is unspent (another browser can still open it).
    assert.equal(a.jar.get(NAMES.session), sessionA);
    assert.match((await a.get('/account')).text, /switch-a@example\.org/);
    assert.equal((await new Browser(srv.base).get(path)).status, 200);
    // The question's "continue" is its own token: a forged or missing one asks again.
    const continueFields = form(first.text, '/account/invite');
    assert.ok(continueFields.confirm);
    const forged = await a.post('/account/invite', { ...continueFields, confirm: 'yes' });
    assert.equal(forged.status, 200);
    assert.match(forged.text, /Switch accounts\?/);
    assert.equal(a.jar.get(NAMES.session), sessionA);
    // The explicit continue: B now, and A's session is over (not only its cookie).
    const switched = await a.post('/account/invite', continueFields);
    assert.equal(switched.status, 303, switched.text);
    assert.match(switched.headers.get('location') ?? '', /notice=joined/);
    assert.notEqual(a.jar.get(NAMES.session), sessionA);
    assert.match((await a.get('/account')).text, /switch-b@example\.org/);
    const oldA = new Browser(srv.base);
    oldA.jar.set(NAMES.session, sessionA ?? '');
    assert.equal((await oldA.get('/account')).status, 303);
    const logged = JSON.stringify(srv.logs);
    for (const secret of [sessionA ?? '', a.jar.get(NAMES.session) ?? '', continueFields.confirm ?? '', tokenOf(path)])
      assert.ok(secret.length >= 43 && !logged.includes(secret), 'no session id, token or confirmation in the log');
    // Spent: its page says so.
    const spent = await a.get(path);
    assert.equal(spent.status, 400);
    assert.match(spent.text, /does not work/);
  });
});

describe('login CSRF over plain http (issue 26): a planted pre-session cookie', () => {
  const HTTP_WEB = 'http://web.example';
  const HTTP_NAMES = cookieNames(HTTP_WEB);
  let plain: TestServer;
  before(async () => {
    plain = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true', WEB_BASE_URL: HTTP_WEB });
  });
  after(() => plain.stop());
  /** A browser of the http website, at `address` as the trusted proxy reports it. */
  const at = (address: string): FormBrowser => new FormBrowser(plain.base, HTTP_WEB, address);

  test('from another client address cannot make the victim finish the attacker’s sign-in link', async () => {
    const attacker = at('203.0.113.66');
    const page = await attacker.get('/account/sign-in');
    const planted = attacker.jar.get(HTTP_NAMES.pre);
    assert.ok(planted, 'the attacker’s own pre-session id');
    const seen = await mailFiles();
    assert.equal((await attacker.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email: 'attacker@example.org' })).status, 303);
    const link = new URL(await nextLink(seen, 'attacker@example.org'));
    assert.equal(link.origin, HTTP_WEB);
    const linkPath = link.pathname + link.search;

    // The victim's browser, elsewhere, with the attacker's id planted in it, opens the link.
    const victim = at('198.51.100.7');
    victim.jar.set(HTTP_NAMES.pre, planted);
    const opened = await victim.get(linkPath);
    assert.equal(opened.status, 400);
    assert.equal(forms(opened.text).length, 0);
    assert.notEqual(victim.jar.get(HTTP_NAMES.pre), planted, 'the planted id is replaced');
    // Nor does the attacker's own confirmation form, posted from the victim's browser with the id planted again.
    const attackerPage = await attacker.get(linkPath);
    assert.equal(attackerPage.status, 200);
    const fields = form(attackerPage.text, '/account/confirm');
    victim.jar.set(HTTP_NAMES.pre, planted);
    const posted = await victim.post('/account/confirm', fields);
    assert.equal(posted.status, 403);
    assert.equal(victim.jar.get(HTTP_NAMES.session), undefined);
    // The link still works for the browser that asked for it, where it asked.
    assert.equal((await attacker.post('/account/confirm', fields)).status, 303);
    assert.ok(attacker.jar.get(HTTP_NAMES.session));
    // Neither the link's token, nor a pre-session id, nor the session is in the server's log.
    const logged = JSON.stringify(plain.logs);
    for (const secret of [link.searchParams.get('token') ?? '', planted, victim.jar.get(HTTP_NAMES.pre) ?? '', attacker.jar.get(HTTP_NAMES.session) ?? '']) {
      assert.ok(secret.length >= 43 && !logged.includes(secret));
    }
  });

  test('an id the server did not sign, or altered, is no pre-session; a browser at its own address signs in as always', async () => {
    const b = at('198.51.100.8');
    b.jar.set(HTTP_NAMES.pre, 'planted-by-an-attacker');
    const page = await b.get('/account/sign-in');
    const given = b.jar.get(HTTP_NAMES.pre) ?? '';
    assert.notEqual(given, 'planted-by-an-attacker');
    assert.match(given, /^[\w-]{43}\.\d+\.[\w-]{43}$/);
    const altered = given.slice(0, 5) + (given[5] === 'A' ? 'B' : 'A') + given.slice(6);
    const fields = form(page.text, '/account/sign-in');
    b.jar.set(HTTP_NAMES.pre, altered);
    assert.equal((await b.post('/account/sign-in', { ...fields, email: 'plain@example.org' })).status, 403);
    b.jar.set(HTTP_NAMES.pre, given);
    const seen = await mailFiles();
    assert.equal((await b.post('/account/sign-in', { ...fields, email: 'plain@example.org' })).status, 303);
    const link = new URL(await nextLink(seen, 'plain@example.org'));
    const confirm = await b.get(link.pathname + link.search);
    assert.equal(confirm.status, 200);
    const done = await b.post('/account/confirm', form(confirm.text, '/account/confirm'));
    assert.equal(done.status, 303);
    // The new pre-session id after sign-in is signed for this address too.
    assert.match(b.jar.get(HTTP_NAMES.pre) ?? '', /^[\w-]{43}\.\d+\.[\w-]{43}$/);
    assert.equal((await b.get('/account')).status, 200);
  });
});

describe('when the mail server is down', () => {
  test('an invitation says it could not be sent (503, at its field); a sign-in link request still answers as always, and the failure is logged without the link', async () => {
    const down = await startTestServer(fx.dataDir, { SMTP_URL: `smtp://127.0.0.1:${await freePort()}`, TRUST_PROXY: 'true' });
    try {
      const b = new Browser(down.base);
      const page = await b.get('/account/sign-in');
      const sent = await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email: 'nomail@example.org' });
      assert.equal(sent.status, 303, 'the answer does not wait for the mail');
      assert.equal(sent.headers.get('location'), '/account/sign-in/sent');
      for (let i = 0; i < 100 && !down.logs.some((l) => l.msg === 'sign-in mail failed'); i++) await new Promise((r) => setTimeout(r, 50));
      const failed = down.logs.find((l) => l.msg === 'sign-in mail failed');
      assert.ok(failed, 'the failure is logged');
      assert.doesNotMatch(JSON.stringify(down.logs), /token=|account\/confirm/, 'never the link');

      // Beside the server, as the command line would: an account and a session of its own.
      const store = AccountsDb.open(down.config.ledgerDir);
      try {
        const session = store.createSession(store.signInByEmail('owner-nomail@example.org').user.id, 60_000);
        assert.ok(session.ok);
        b.jar.set(NAMES.session, session.token);
      } finally {
        store.close();
      }
      const dash = await b.get('/account');
      assert.equal(dash.status, 200);
      const invite = await b.post('/account/members/invite', { ...form(dash.text, '/account/members/invite#invite'), email: 'colleague@example.org' });
      assert.equal(invite.status, 503);
      assert.ok(Number(invite.headers.get('retry-after')) > 0);
      const err = elements(invite.text).find((e) => attr(e, 'id') === 'invite-email-error');
      assert.ok(err && /could not be sent/.test(textOf(err)));
    } finally {
      await down.stop();
    }
  });
});

describe('sign-in with an identity provider (OpenID Connect, a real provider on loopback)', () => {
  let idp: Idp;
  let oidcSrv: TestServer;
  const CLIENT = { OIDC_CLIENT_ID: 'family-events-web', OIDC_CLIENT_SECRET: 'a-test-secret-that-is-long-enough-for-hs256' };

  before(async () => {
    idp = await startIdp({
      clientId: CLIENT.OIDC_CLIENT_ID,
      clientSecret: CLIENT.OIDC_CLIENT_SECRET,
      redirectUri: `${WEB}/account/oidc/callback`,
      accounts: {
        verified: { email: 'verified@idp.example', email_verified: true },
        unverified: { email: 'owner-of-mailbox@example.org', email_verified: false },
      },
    });
    oidcSrv = await startTestServer(fx.dataDir, { OIDC_ISSUER: idp.issuer, TRUST_PROXY: 'true', ...CLIENT });
  });
  after(async () => {
    await oidcSrv?.stop();
    await idp?.close();
  });

  /** Through the button to the provider and back: the callback's answer. */
  async function viaProvider(b: Browser, as: { login: string } | { abort: true }): Promise<{ answer: Answer; callback: string }> {
    const page = await b.get('/account/sign-in');
    const start = await b.post('/account/oidc/start', form(page.text, '/account/oidc/start'));
    assert.equal(start.status, 303, start.text);
    const to = new URL(start.headers.get('location') ?? '');
    assert.equal(to.origin, idp.issuer);
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
    const back = await idp.authorize(to.href, as);
    assert.equal(back.origin + back.pathname, `${WEB}/account/oidc/callback`);
    const callback = back.pathname + back.search;
    return { answer: await b.get(callback), callback };
  }

  test('the button appears only when a provider is configured', async () => {
    const withIdp = await new Browser(oidcSrv.base).get('/account/sign-in');
    assert.equal(
      forms(withIdp.text).some((f) => f.action === '/account/oidc/start'),
      true,
    );
    assert.match(withIdp.text, new RegExp(`Sign in with ${new URL(idp.issuer).host}`));
    // The button's redirect leads to the provider, and browsers hold redirects after a form to form-action.
    const formAction = (a: Answer): string | undefined =>
      a.headers
        .get('content-security-policy')
        ?.split('; ')
        .find((d) => d.startsWith('form-action '));
    assert.equal(formAction(withIdp), `form-action 'self' ${new URL(idp.issuer).origin}`);
    assert.equal(withIdp.headers.get('content-security-policy')?.match(/form-action/g)?.length, 1, 'one policy');
    const without = await new Browser(srv.base).get('/account/sign-in');
    assert.equal(formAction(without), "form-action 'self'", 'nowhere else without a provider');
    assert.equal(formAction(await new Browser(oidcSrv.base).get('/events')), "form-action 'self'", 'other pages keep the site policy');
    assert.equal(
      forms(without.text).some((f) => f.action === '/account/oidc/start'),
      false,
    );
    assert.equal((await new Browser(srv.base).post('/account/oidc/start', form(without.text, '/account/sign-in'))).status, 405, 'no such form here');
  });

  test('first sign-in makes the account and its organization; the key it makes works; the callback cannot be replayed', async () => {
    const b = new Browser(oidcSrv.base);
    const { answer, callback } = await viaProvider(b, { login: 'verified' });
    assert.equal(answer.status, 303, answer.text);
    assert.equal(answer.headers.get('location'), '/account');
    assert.ok(b.jar.get(NAMES.session), 'a session');
    assert.equal(b.jar.get(NAMES.oidc), undefined, 'the transaction cookie is cleared');
    const dash = await b.get('/account');
    assert.equal(dash.status, 200);
    assert.match(dash.text, /verified@idp\.example/);
    assert.match(dash.text, /on the <strong>community<\/strong> plan/);
    const made = await b.post('/account/keys', form(dash.text, '/account/keys'));
    assert.equal((await apiEvents(shownKey(made.text), oidcSrv.base)).status, 200);

    // The same callback again, in the same browser (its transaction is gone) or another: refused.
    const replay = await b.get(callback);
    assert.equal(replay.status, 400);
    assert.match(replay.text, /started in another browser or tab/);
    const thief = new Browser(oidcSrv.base);
    await thief.get('/account/sign-in');
    const stolen = await thief.get(callback);
    assert.equal(stolen.status, 400);
    assert.equal(thief.jar.get(NAMES.session), undefined);

    // The next sign-in finds the same account.
    const again = new Browser(oidcSrv.base);
    assert.equal((await viaProvider(again, { login: 'verified' })).answer.status, 303);
    assert.deepEqual(listedHints((await again.get('/account')).text), listedHints((await b.get('/account')).text));
    for (const secret of [CLIENT.OIDC_CLIENT_SECRET, new URLSearchParams(callback.split('?')[1]).get('code') ?? 'no code']) {
      assert.ok(!JSON.stringify(oidcSrv.logs).includes(secret), 'neither the client secret nor the code is logged');
    }
  });

  test('cancelling at the provider signs nobody in; a forged transaction cookie is refused', async () => {
    const b = new Browser(oidcSrv.base);
    const { answer } = await viaProvider(b, { abort: true });
    assert.equal(answer.status, 400);
    assert.match(answer.text, /cancelled/);
    assert.equal(b.jar.get(NAMES.session), undefined);

    const c = new Browser(oidcSrv.base);
    const page = await c.get('/account/sign-in');
    const start = await c.post('/account/oidc/start', form(page.text, '/account/oidc/start'));
    const back = await idp.authorize(start.headers.get('location') ?? '', { login: 'verified' });
    const signed = c.jar.get(NAMES.oidc) ?? '';
    c.jar.set(
      NAMES.oidc,
      signed.replace(/^./, (ch) => (ch === 'e' ? 'f' : 'e')),
    );
    const forged = await c.get(back.pathname + back.search);
    assert.equal(forged.status, 400);
    assert.equal(c.jar.get(NAMES.session), undefined);
  });

  test('an unverified e-mail from the provider never opens the account of that address', async () => {
    const mailbox = new Browser(srv.base);
    await signIn(mailbox, 'owner-of-mailbox@example.org');
    const b = new Browser(oidcSrv.base);
    const { answer } = await viaProvider(b, { login: 'unverified' });
    assert.equal(answer.status, 303);
    const dash = await b.get('/account');
    assert.doesNotMatch(dash.text, /owner-of-mailbox@example\.org/, 'a new account, without that e-mail');
  });

  test('a provider that cannot be reached: 503 with Retry-After, and e-mail sign-in still works', async () => {
    const down = await startTestServer(fx.dataDir, { OIDC_ISSUER: `http://127.0.0.1:${await freePort()}`, TRUST_PROXY: 'true', ...CLIENT });
    try {
      const b = new Browser(down.base);
      const page = await b.get('/account/sign-in');
      const start = await b.post('/account/oidc/start', form(page.text, '/account/oidc/start'));
      assert.equal(start.status, 503);
      assert.ok(Number(start.headers.get('retry-after')) > 0);
      assert.match(start.text, /cannot be reached/);
      const sent = await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email: 'fallback@example.org' });
      assert.equal(sent.status, 303);
    } finally {
      await down.stop();
    }
  });
});

describe('sign-in limits (a server behind a trusted proxy, one client address per test)', () => {
  let limited: TestServer;
  before(async () => {
    limited = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
  });
  after(() => limited.stop());

  test('an invalid address is answered at its field', async () => {
    const b = new Browser(limited.base, '203.0.113.9');
    const page = await b.get('/account/sign-in');
    const bad = await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email: 'not-an-address' });
    assert.equal(bad.status, 400);
    const err = elements(bad.text).find((e) => attr(e, 'id') === 'email-error');
    assert.ok(err && /e-mail address/i.test(textOf(err)));
    const input = elements(bad.text).find((e) => attr(e, 'id') === 'email');
    assert.equal(input && attr(input, 'aria-describedby'), 'email-error');
  });

  test('the per-e-mail limit sends nothing more but answers the same', async () => {
    const b = new Browser(limited.base, '203.0.113.10');
    const email = 'limited@example.org';
    const answers: string[] = [];
    const seen = (await mailFiles()).length;
    for (let i = 0; i < 5; i++) {
      const page = await b.get('/account/sign-in');
      const r = await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email });
      answers.push(`${r.status} ${r.headers.get('location')} ${r.text}`);
    }
    assert.equal(new Set(answers).size, 1);
    // The three mails the limit allows, however long a busy machine takes to write them (each
    // now carries a code, whose slow hash is made first), then a moment for any fourth.
    const got: string[] = (await mailFiles()).slice(0, seen);
    for (let i = 0; i < 3; i++) got.push((await outbox.next(got, 10_000, (m) => m.to === email)).file);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await mailFiles()).length - seen, 3);
  });
  test('more than 10 sign-in requests a minute from one client address get 429; another address is unaffected', async () => {
    const b = new Browser(limited.base, '203.0.113.11');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const page = await b.get('/account/sign-in');
      statuses.push((await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email: `n${i}@example.org` })).status);
    }
    assert.deepEqual(statuses, [...Array<number>(10).fill(303), 429, 429]);
    const c = new Browser(limited.base, '203.0.113.12');
    const page = await c.get('/account/sign-in');
    assert.equal((await c.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email: 'n@example.org' })).status, 303);
  });
});
