// The dashboard's key forms over HTTP (issue 28, item 10): a form that makes a key (create, roll)
// makes one key however often it is sent (a reload of "Your new API key", Back and resubmit, a
// double click), and the repeat says the key was made and shown once; revoke asks first, in a
// dialog naming the key, and only that dialog's form revokes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomUtils, parseDocument } from 'htmlparser2';
import { keyHint } from '../../../core/keys.ts';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { cookieNames } from '../../../server/web/session.ts';
import { sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../helpers.ts';
import { FormBrowser, hiddenFields, postForms } from './form-browser.ts';

type Element = ReturnType<typeof DomUtils.findAll>[number];
const NAMES = cookieNames(WEB);

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

/** A signed-in browser of a new account, made beside the server as the command line would. */
function signedIn(email: string): { b: FormBrowser; orgId: string } {
  const store = AccountsDb.open(srv.config.ledgerDir);
  try {
    const user = store.signInByEmail(email).user;
    const session = store.createSession(user.id, 3_600_000);
    assert.ok(session.ok);
    const org = store.organizationsOf(user.id)[0];
    assert.ok(org);
    const b = new FormBrowser(srv.base, WEB);
    b.jar.set(NAMES.session, session.token);
    return { b, orgId: org.id };
  } finally {
    store.close();
  }
}

/** The organization's keys as the ledger has them. */
function ledgerKeys(orgId: string): { id: string; hint: string; revoked_at: string | null; revoke_at: string | null }[] {
  const store = AccountsDb.open(srv.config.ledgerDir);
  try {
    return store.keysOf(orgId);
  } finally {
    store.close();
  }
}

const shownKey = (page: string): string | undefined => {
  const pre = DomUtils.findOne((e) => e.name === 'pre' && e.attribs['data-copy'] === 'API key', parseDocument(page).children);
  return pre === null ? undefined : DomUtils.textContent(pre).trim();
};

describe('a form that makes a key is sent once', () => {
  test('create: the same form twice makes one key; the second answer says it was made and shown once, and shows no key', async () => {
    const { b, orgId } = signedIn('twice@example.org');
    const dash = await b.get('/account');
    const fields = hiddenFields(dash.text, '/account/keys');
    assert.ok(fields.once, 'the create form carries a one-time token');

    const first = await b.post('/account/keys', fields);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    const key = shownKey(first.text);
    assert.ok(key, 'the first answer shows the key');

    const again = await b.post('/account/keys', fields);
    assert.equal(again.status, 409);
    assert.equal(again.headers.get('cache-control'), 'no-store');
    assert.equal(shownKey(again.text), undefined, 'no key on the repeat');
    assert.ok(!again.text.includes(key), 'not the key anywhere on the repeat');
    assert.match(again.text, /already created/);
    assert.match(again.text, /shown once/);
    assert.match(again.text, /cannot be shown again/);
    assert.ok(again.text.includes(keyHint(key)), 'it names the key by its hint');
    assert.match(again.text, new RegExp(`href="/account\\?org=${orgId}"`), 'a way back to the dashboard');

    assert.equal(ledgerKeys(orgId).length, 1, 'one key in the ledger');
    // A fresh form (the dashboard again) makes the next key.
    const next = await b.post('/account/keys', hiddenFields((await b.get('/account')).text, '/account/keys'));
    assert.equal(next.status, 200);
    assert.equal(ledgerKeys(orgId).length, 2);
  });

  test('create: the same form sent twice at once makes one key', async () => {
    const { b, orgId } = signedIn('double-click@example.org');
    const fields = hiddenFields((await b.get('/account')).text, '/account/keys');
    const answers = await Promise.all([b.post('/account/keys', fields), b.post('/account/keys', fields)]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409]);
    assert.equal(ledgerKeys(orgId).length, 1);
  });

  test('create: a form without its token, or with one not ours, makes nothing', async () => {
    const { b, orgId } = signedIn('no-token@example.org');
    const fields = hiddenFields((await b.get('/account')).text, '/account/keys');
    const without = Object.fromEntries(Object.entries(fields).filter(([name]) => name !== 'once'));
    assert.equal((await b.post('/account/keys', without)).status, 400);
    assert.equal((await b.post('/account/keys', { ...fields, once: 'x' })).status, 400);
    // Issued before this server started: it cannot tell whether it was sent already.
    assert.equal((await b.post('/account/keys', { ...fields, once: `1.${'A'.repeat(22)}` })).status, 409);
    assert.equal(ledgerKeys(orgId).length, 0);
  });

  test('roll: the same form twice rolls once; the second answer says so', async () => {
    const { b, orgId } = signedIn('roll-twice@example.org');
    assert.equal((await b.post('/account/keys', hiddenFields((await b.get('/account')).text, '/account/keys'))).status, 200);
    const roll = { ...hiddenFields((await b.get('/account')).text, '/account/keys/roll'), grace: '3600' };
    const first = await b.post('/account/keys/roll', roll);
    assert.equal(first.status, 200);
    const key = shownKey(first.text);
    assert.ok(key);
    const again = await b.post('/account/keys/roll', roll);
    assert.equal(again.status, 409);
    assert.equal(again.headers.get('cache-control'), 'no-store');
    assert.equal(shownKey(again.text), undefined);
    assert.match(again.text, /already rolled/);
    assert.ok(again.text.includes(keyHint(key)));
    assert.equal(ledgerKeys(orgId).length, 2, 'the old key and one new one');
  });
});

describe('revoke asks first', () => {
  test('the Revoke button submits nothing: it opens a dialog naming the key, whose form alone revokes, with a Cancel', async () => {
    const { b, orgId } = signedIn('revoke-asks@example.org');
    const made = await b.post('/account/keys', hiddenFields((await b.get('/account')).text, '/account/keys'));
    const key = shownKey(made.text);
    assert.ok(key);
    const dash = (await b.get('/account')).text;
    const doc = parseDocument(dash).children;
    const revokeForms = DomUtils.findAll((e) => e.name === 'form' && e.attribs.action === '/account/keys/revoke', doc);
    assert.equal(revokeForms.length, 1);
    const revokeForm = revokeForms[0] as Element;

    // The button a person first sees opens the dialog and is no submit button of any form.
    const opener = DomUtils.findOne((e) => e.name === 'button' && DomUtils.textContent(e).replace(/\s+/g, ' ').trim() === `Revoke key ${keyHint(key)}`, doc);
    assert.ok(opener, 'a Revoke button naming the key');
    assert.equal(opener.attribs.type, 'button', 'it submits nothing');
    const dialogId = opener.attribs.popovertarget ?? '';
    const dialog = DomUtils.findOne((e) => e.attribs.id === dialogId, doc);
    assert.ok(dialog && 'popover' in dialog.attribs, 'it opens a popover');
    assert.equal(dialog.attribs.role, 'dialog');
    assert.ok(DomUtils.textContent(dialog).includes(keyHint(key)), 'the dialog names the key by its hint');
    assert.ok(
      DomUtils.findOne((e) => e === revokeForm, dialog.children),
      'the revoking form is inside the dialog',
    );
    const buttons = DomUtils.findAll((e) => e.name === 'button', revokeForm.children).map((e) => [DomUtils.textContent(e).trim(), e.attribs.type]);
    assert.deepEqual(buttons, [
      ['Revoke', 'submit'],
      ['Cancel', 'button'],
    ]);

    // The key still works until the dialog's form is sent.
    assert.equal(ledgerKeys(orgId)[0]?.revoked_at, null);
    const revoked = await b.post('/account/keys/revoke', hiddenFields(dash, '/account/keys/revoke'));
    assert.equal(revoked.status, 303);
    assert.notEqual(ledgerKeys(orgId)[0]?.revoked_at, null);
    assert.equal(postForms((await b.get('/account')).text).filter((f) => f.action === '/account/keys/revoke').length, 0, 'nothing left to revoke');
  });
});
