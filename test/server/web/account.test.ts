// The e-mail sign-in flow and the dashboard over real HTTP against the real server: a browser is a
// tiny cookie jar around fetch, the mail is read back from DATA_DIR/outbox by mailparser, and the
// pages are read by parse5 (not by regular expressions over our own markup).
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { parse as parseCookie } from 'cookie';
import { DomUtils, parseDocument } from 'htmlparser2';
import { cookieNames } from '../../../server/web/session.ts';
import { keyHint } from '../../../workers/meter/keys.ts';
import { sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../helpers.ts';

type Element = ReturnType<typeof DomUtils.findAll>[number];

const NAMES = cookieNames(WEB);

/** Every element of a page (or under an element), in document order. */
const elements = (page: string | Element): Element[] => DomUtils.findAll(() => true, typeof page === 'string' ? parseDocument(page).children : page.children);
const attr = (el: Element, name: string): string | undefined => el.attribs[name];
const textOf = (el: Element): string => DomUtils.textContent(el);

/** Every form of a page: its action and its hidden fields. */
function forms(page: string): { action: string; fields: Record<string, string> }[] {
  return elements(page)
    .filter((e) => e.name === 'form' && attr(e, 'method') === 'post')
    .map((f) => {
      const fields: Record<string, string> = {};
      for (const i of elements(f)) if (i.name === 'input' && attr(i, 'type') === 'hidden') fields[attr(i, 'name') ?? ''] = attr(i, 'value') ?? '';
      return { action: attr(f, 'action') ?? '', fields };
    });
}
const form = (page: string, action: string, nth = 0): Record<string, string> => {
  const f = forms(page).filter((x) => x.action === action)[nth];
  assert.ok(f, `no form posting to ${action}`);
  return f.fields;
};

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** A browser: cookies kept by name (the server's are host-only, Path=/), Origin sent on POSTs. */
class Browser {
  readonly jar = new Map<string, string>();
  constructor(
    private readonly base: string,
    /** The client address a trusted proxy reports (servers started with TRUST_PROXY). */
    private readonly forwardedFor?: string,
  ) {}

  async request(p: string, init: { method?: string; form?: Record<string, string>; origin?: string | null } = {}): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.forwardedFor) headers['x-forwarded-for'] = this.forwardedFor;
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
      if (init.origin !== null) headers.origin = init.origin ?? WEB;
    }
    const res = await fetch(this.base + p, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, redirect: 'manual', ...(body === undefined ? {} : { body }) });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const parsed = parseCookie(pair ?? '');
      const [name, value] = Object.entries(parsed)[0] ?? [];
      if (name === undefined) continue;
      if (value === '' || /max-age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value ?? '');
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  get = (p: string): Promise<Answer> => this.request(p);
  post = (p: string, fields: Record<string, string>, origin?: string | null): Promise<Answer> => this.request(p, { form: fields, ...(origin === undefined ? {} : { origin }) });
}

let fx: Fixture;
let srv: TestServer;
const outbox = (): string => path.join(fx.dataDir, 'outbox');

async function mailFiles(): Promise<string[]> {
  try {
    return (await readdir(outbox())).filter((f) => f.endsWith('.eml')).sort();
  } catch {
    return [];
  }
}

/** Waits for the mail after `seen` files, and returns its sign-in link (mailparser reads it). */
async function nextLink(seen: number, to: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const files = await mailFiles();
    if (files.length > seen) {
      const mail = await simpleParser(await readFile(path.join(outbox(), files[seen] ?? '')));
      assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.value[0]?.address : null, to);
      const link = /https:\/\/\S+/.exec(mail.text ?? '')?.[0];
      assert.ok(link, 'the mail holds a link');
      return link;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no mail arrived');
}

/** Asks for a link in `b` and returns the link's path and query, as the mail gives it. */
async function requestLink(b: Browser, email: string): Promise<string> {
  const seen = (await mailFiles()).length;
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

const apiEvents = (key: string): Promise<Response> => fetch(`${srv.base}/v1/events?limit=3`, { headers: { authorization: `Bearer ${key}` } });

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir);
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

    // The same token a second time: spent.
    const replay = await b.post('/account/confirm', { ...confirmFields, csrf: form((await b.get(linkPath)).text, '/account/confirm').csrf ?? '' });
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
    assert.equal(revoked.headers.get('location'), '/account');
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
    for (const f of await mailFiles()) assert.ok(!(await readFile(path.join(outbox(), f), 'utf8')).includes(key));
    assert.ok(!JSON.stringify(srv.logs).includes(key));
    // Nor the sign-in token.
    const token = new URLSearchParams(linkPath.split('?')[1]).get('token') ?? '';
    assert.ok(token.length >= 22 && !JSON.stringify(srv.logs).includes(token));
  });

  test('a token opened in another browser (another pre cookie) or tampered with is refused, and stays usable by its own browser', async () => {
    const mine = new Browser(srv.base);
    const linkPath = await requestLink(mine, 'grace@example.org');
    const other = new Browser(srv.base);
    const otherPage = await other.get(linkPath);
    const fromOther = await other.post('/account/confirm', form(otherPage.text, '/account/confirm'));
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
