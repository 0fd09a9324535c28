// Random form POSTs and link GETs at the website's account routes, over real HTTP: from a signed-in
// browser (a real session and CSRF token, so the checks past CSRF run too) or a stranger, with any
// fields, cookies, Origin and content type. Whatever arrives: never a 5xx but 503 (with
// Retry-After), always an HTML page with the site's security headers or a redirect, and the
// session the browser holds keeps working. Time-budgeted, like the other fuzzing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { FormBrowser, hiddenFields } from '../server/web/form-browser.ts';
import { Outbox } from '../server/web/outbox.ts';
import { sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../server/helpers.ts';

const BUDGET_MS = 6_000;
const POSTS = [
  '/account/sign-in',
  '/account/confirm',
  '/account/invite',
  '/account/keys',
  '/account/keys/roll',
  '/account/keys/revoke',
  '/account/members/invite',
  '/account/members/remove',
  '/account/invitations/cancel',
  '/account/org/rename',
  '/account/sign-out',
  '/account/oidc/start',
];
const GETS = ['/account', '/account/sign-in', '/account/confirm', '/account/invite', '/account/sign-in/sent'];

let fx: Fixture;
let srv: TestServer;
let owner: FormBrowser;
let dashboard: string;

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
  owner = new FormBrowser(srv.base, WEB);
  const page = await owner.get('/account/sign-in');
  assert.equal((await owner.post('/account/sign-in', { ...hiddenFields(page.text, '/account/sign-in'), email: 'fuzz-owner@example.org' })).status, 303);
  // The sign-in mail (2 s at most), read by mailparser.
  const link = (await new Outbox(fx.dataDir).next([], 2000, (m) => m.link.includes('/account/confirm?token='))).link;
  const url = new URL(link);
  const confirm = await owner.get(url.pathname + url.search);
  assert.equal((await owner.post('/account/confirm', hiddenFields(confirm.text, '/account/confirm'))).status, 303);
  dashboard = (await owner.get('/account')).text;
  assert.equal((await owner.post('/account/keys', hiddenFields(dashboard, '/account/keys'))).status, 200);
  dashboard = (await owner.get('/account')).text;
});

after(async () => {
  await srv?.stop();
  await fx?.cleanup();
});

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '0', '-1', '3600', '604800', '1e9', 'NaN', '%00', 'org_', 'key_', 'a@b.c', 'x'.repeat(300)),
);
const fieldName = fc.constantFrom('csrf', 'email', 'token', 'key_id', 'grace', 'org', 'extra', 'csrf[]', '');

test('any form at any account route, signed in or not: no 5xx but 503, HTML with the security headers or a redirect', async () => {
  const ourFields = (): Record<string, string> => ({ ...hiddenFields(dashboard, '/account/keys') });
  const started = Date.now();
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        path: fc.constantFrom(...POSTS, ...GETS.map((g) => `GET ${g}`)),
        signedIn: fc.boolean(),
        keepCsrf: fc.boolean(),
        fields: fc.dictionary(fieldName, text, { maxKeys: 6 }),
        origin: fc.constantFrom<string | null | undefined>(undefined, null, 'https://evil.example', 'null', WEB),
        query: fc.option(text, { nil: undefined }),
      }),
      async (c) => {
        runs++;
        const b = c.signedIn ? owner : new FormBrowser(srv.base, WEB);
        let answer;
        if (c.path.startsWith('GET ')) {
          answer = await b.get(`${c.path.slice(4)}${c.query === undefined ? '' : `?token=${encodeURIComponent(c.query)}&org=${encodeURIComponent(c.query)}`}`);
        } else {
          const fields = { ...(c.keepCsrf && c.signedIn ? ourFields() : {}), ...c.fields };
          // Never sign the fuzzing owner out: the rest of the run needs the session.
          if (c.signedIn && c.path === '/account/sign-out' && c.keepCsrf) delete fields.csrf;
          answer = await b.request(c.path, { form: fields, ...(c.origin === undefined ? {} : { origin: c.origin }) });
        }
        const what = `${c.path} ${JSON.stringify(c.fields).slice(0, 200)} → ${answer.status}`;
        assert.ok(answer.status < 500 || (answer.status === 503 && Number(answer.headers.get('retry-after')) > 0), what);
        if (answer.status !== 303 && answer.status !== 304) {
          assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, what);
          assert.match(answer.headers.get('content-security-policy') ?? '', /default-src 'none'/, what);
          assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', what);
        }
      },
    ),
    { interruptAfterTimeLimit: BUDGET_MS, numRuns: 100_000 },
  );
  assert.ok(runs > 20, `the property ran (${runs} cases in ${Date.now() - started} ms)`);
  const still = await owner.get('/account');
  assert.equal(still.status, 200, 'the owner is still signed in');
  assert.equal(srv.logs.filter((l) => Number(l.level) >= 50).length, 0, 'no error was logged');
});
