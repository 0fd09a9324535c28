// The sign-in code (issue 28 item 15) over real HTTP against the real server: the mail carries a
// code beside its link; the link opened in another browser (the phone) says so and shows that code
// instead of dead-ending; the code typed on the "Check your mail" page of the browser that asked
// (the laptop) signs it in, and nowhere else; wrong codes count down and the code dies; expired and
// used codes say so; neither code nor link reaches the log. Mail is read back by mailparser,
// pages by htmlparser2.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { DomUtils, parseDocument } from 'htmlparser2';
import { simpleParser } from 'mailparser';
import { cookieNames } from '../../../server/web/session.ts';
import { sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../helpers.ts';
import { FormBrowser, hiddenFields, postForms, type Answer } from './form-browser.ts';
import { Outbox } from './outbox.ts';

const NAMES = cookieNames(WEB);

class Browser extends FormBrowser {
  constructor(base: string) {
    super(base, WEB);
  }
}

let fx: Fixture;
let srv: TestServer;
let outbox: Outbox;

before(async () => {
  fx = await sampleFixture();
  outbox = new Outbox(fx.dataDir);
  srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
});
after(async () => {
  await srv.stop();
  await fx.cleanup();
});

type Element = ReturnType<typeof DomUtils.findAll>[number];
const find = (page: string, match: (e: Element) => boolean): Element[] => DomUtils.findAll(match, parseDocument(page).children);
/** The code form's error message ('' when it shows none). */
const fieldError = (page: string): string =>
  find(page, (e) => e.attribs.id === 'code-error')
    .map((e) => DomUtils.textContent(e).replace(/^Error: /, ''))
    .join('');
/** The code the other-browser page shows. */
const shownCode = (page: string): string | undefined => {
  const el = find(page, (e) => e.name === 'code' && e.parent !== null && 'attribs' in e.parent && e.parent.attribs.class === 'sign-in-code')[0];
  return el === undefined ? undefined : DomUtils.textContent(el).trim();
};

interface SignInMail {
  readonly link: string;
  readonly code: string;
  readonly text: string;
}

/** Asks for a sign-in in `b` (which is left on the "Check your mail" page) and returns its mail's link path and code. */
async function ask(b: Browser, email: string): Promise<SignInMail & { sent: Answer }> {
  const seen = await outbox.names();
  const form = await b.get('/account/sign-in');
  const posted = await b.post('/account/sign-in', { ...hiddenFields(form.text, '/account/sign-in'), email });
  assert.equal(posted.status, 303);
  assert.equal(posted.headers.get('location'), '/account/sign-in/sent');
  const sent = await b.get('/account/sign-in/sent');
  assert.equal(sent.status, 200);
  const mail = await outbox.next(seen, 3000, (m) => m.to === email);
  const text = (await simpleParser(mail.raw)).text ?? '';
  const code = text
    .split('\n')
    .map((line) => line.trim())
    .find((line) => /^[A-Z0-9]{4}-[A-Z0-9]{4}$/.test(line));
  assert.ok(code, `the mail carries a code beside its link:\n${text}`);
  const link = new URL(mail.link);
  return { link: link.pathname + link.search, code, text, sent };
}

/** Types `code` on the sent page `page` of `b`. */
const typeCode = (b: Browser, page: string, code: string): Promise<Answer> =>
  b.post('/account/sign-in/code', { ...hiddenFields(page, '/account/sign-in/code'), code });

const signedIn = async (b: Browser, email: string): Promise<boolean> => {
  const dash = await b.get('/account');
  const main = find(dash.text, (e) => e.name === 'main')[0];
  return dash.status === 200 && main !== undefined && DomUtils.textContent(main).replace(/\s+/g, ' ').includes(`Signed in as ${email}`);
};

describe('the sign-in code', () => {
  test('mail has link and code; the phone opening the link is told what to do and shown the code; the laptop types it and is signed in', async () => {
    const laptop = new Browser(srv.base);
    const phone = new Browser(srv.base);
    const email = 'two.devices@example.org';
    const { link, code, text, sent } = await ask(laptop, email);
    assert.match(text, /type this code/i);
    // The sent page has the code form, bound (CSRF) to this browser's pre-session.
    assert.ok(postForms(sent.text).some((f) => f.action === '/account/sign-in/code' && f.fields.csrf));

    const opened = await phone.get(link);
    assert.equal(opened.status, 400);
    assert.equal(opened.headers.get('cache-control'), 'no-store');
    assert.match(opened.text, /opened in a different browser than the one that asked/);
    assert.equal(shownCode(opened.text), code);
    assert.ok(find(opened.text, (e) => e.name === 'a' && e.attribs.href === '/account/sign-in').length > 0, 'offers a new sign-in here');
    // Nothing on it signs the phone in.
    assert.equal(postForms(opened.text).length, 0);
    assert.equal(phone.jar.get(NAMES.session), undefined);

    // Typed as people type: lower case, no dash, spaces around.
    const done = await typeCode(laptop, sent.text, ` ${code.toLowerCase().replace('-', '')} `);
    assert.equal(done.status, 303, done.text);
    assert.equal(done.headers.get('location'), '/account');
    assert.ok(await signedIn(laptop, email));

    // The code spent its link: the phone's page now says it does not work, and shows no code.
    const later = await phone.get(link);
    assert.equal(later.status, 400);
    assert.match(later.text, /does not work/);
    assert.equal(shownCode(later.text), undefined);
  });

  test('the code signs in only the browser that asked: typed in another browser it finds no sign-in, and the laptop can still use it', async () => {
    const laptop = new Browser(srv.base);
    const phone = new Browser(srv.base);
    const email = 'binding@example.org';
    const { code, sent } = await ask(laptop, email);
    const phoneSent = await phone.get('/account/sign-in/sent');
    const there = await typeCode(phone, phoneSent.text, code);
    assert.equal(there.status, 400);
    assert.match(fieldError(there.text), /No sign-in is waiting for a code in this browser/);
    assert.equal(phone.jar.get(NAMES.session), undefined);
    // The laptop's form replayed by the phone (the laptop's CSRF token, the phone's cookie): refused.
    assert.equal((await typeCode(phone, sent.text, code)).status, 403);
    // Without any pre-session cookie: refused.
    const bare = new Browser(srv.base);
    assert.equal((await bare.post('/account/sign-in/code', { ...hiddenFields(sent.text, '/account/sign-in/code'), code })).status, 403);
    assert.equal((await typeCode(laptop, sent.text, code)).status, 303);
    assert.ok(await signedIn(laptop, email));
  });

  test('wrong codes count down, the fifth kills the code, and then even the right code is refused', async () => {
    const laptop = new Browser(srv.base);
    const { code, sent } = await ask(laptop, 'fumbles@example.org');
    const wrong = code.startsWith('2') ? '3' + code.slice(1) : '2' + code.slice(1);
    for (const left of [4, 3, 2, 1]) {
      const r = await typeCode(laptop, sent.text, wrong);
      assert.equal(r.status, 400);
      assert.match(fieldError(r.text), new RegExp(`That code is not right.*: ${left} tr(y|ies) left\\.`));
      // The form comes back with what was typed, marked invalid.
      const input = find(r.text, (e) => e.name === 'input' && e.attribs.id === 'code')[0];
      assert.equal(input?.attribs['aria-invalid'], 'true');
      assert.equal(input?.attribs.value, wrong);
    }
    const last = await typeCode(laptop, sent.text, wrong);
    assert.equal(last.status, 400);
    assert.match(fieldError(last.text), /that was the last try: the code no longer works/);
    const right = await typeCode(laptop, sent.text, code);
    assert.equal(right.status, 400);
    assert.match(fieldError(right.text), /Too many wrong codes/);
    assert.equal(laptop.jar.get(NAMES.session), undefined);
  });

  test('a used code and an expired code say so; malformed and empty codes say what a code looks like', async () => {
    const laptop = new Browser(srv.base);
    const email = 'used@example.org';
    const { link, code, sent } = await ask(laptop, email);
    // Spent by its link in the same browser first.
    const confirm = await laptop.get(link);
    assert.equal((await laptop.post('/account/confirm', hiddenFields(confirm.text, '/account/confirm'))).status, 303);
    // Signed in, the pre-session was replaced: the old form is refused; a new sign-in page's is not.
    const again = await laptop.get('/account/sign-in/sent');
    const used = await typeCode(laptop, again.text, code);
    assert.equal(used.status, 400);
    assert.match(fieldError(used.text), /No sign-in is waiting|already used/);
    assert.equal((await typeCode(laptop, sent.text, code)).status, 403);

    const late = new Browser(srv.base);
    const expiring = await ask(late, 'late@example.org');
    const db = new Database(path.join(srv.config.ledgerDir, 'accounts.sqlite'));
    try {
      db.prepare(`UPDATE login_tokens SET expires_at = '2000-01-01T00:00:00.000Z' WHERE email = ?`).run('late@example.org');
    } finally {
      db.close();
    }
    const expired = await typeCode(late, expiring.sent.text, expiring.code);
    assert.equal(expired.status, 400);
    assert.match(fieldError(expired.text), /That code has expired \(codes last 15 minutes\)/);

    const odd = await typeCode(late, expiring.sent.text, 'K7QM-3XP');
    assert.equal(odd.status, 400);
    assert.match(fieldError(odd.text), /A code is 8 letters and digits/);
    const empty = await typeCode(late, expiring.sent.text, '');
    assert.equal(empty.status, 400);
    assert.match(fieldError(empty.text), /Enter the code from the sign-in mail/);
  });

  test('a code from the mail typed after its link was used in the browser that asked is refused as used', async () => {
    const laptop = new Browser(srv.base);
    const first = await ask(laptop, 'twice@example.org');
    // A second sign-in in the same browser, then the first's link used from this browser: the
    // first code is now used, the second still waits.
    const second = await ask(laptop, 'twice.too@example.org');
    void second;
    const db = new Database(path.join(srv.config.ledgerDir, 'accounts.sqlite'));
    try {
      db.prepare(`UPDATE login_tokens SET used_at = '2026-01-01T00:00:00.000Z' WHERE email = ?`).run('twice@example.org');
    } finally {
      db.close();
    }
    const used = await typeCode(laptop, second.sent.text, first.code);
    assert.equal(used.status, 400);
    assert.match(fieldError(used.text), /That code was already used/);
  });

  test('neither codes nor links reach the log', async () => {
    const laptop = new Browser(srv.base);
    const { link, code, sent } = await ask(laptop, 'quiet@example.org');
    await typeCode(laptop, sent.text, 'ZZZZ-ZZZZ');
    assert.equal((await typeCode(laptop, sent.text, code)).status, 303);
    const logged = JSON.stringify(srv.logs);
    const token = new URLSearchParams(link.split('?')[1]).get('token') ?? '';
    assert.ok(token.length >= 22);
    for (const secret of [token, code, code.replace('-', '')]) assert.ok(!logged.includes(secret), `${secret} is not in the log`);
    assert.ok(srv.logs.some((l) => l.msg === 'signed in by e-mail code'));
  });
});
