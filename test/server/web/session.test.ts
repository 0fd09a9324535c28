// The account pages' browser-side primitives, each rule on its own: cookie attributes (__Host- and
// Secure on https), CSRF tokens bound to their browser, signed values, the same-origin rule for
// POSTs and form bodies (the secret itself: test/ledger/web-secret.test.ts). A real browser
// holds them to it in the end-to-end tests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Request } from '../../../server/http.ts';
import {
  clearCookie,
  cookieNames,
  Csrf,
  formFields,
  newToken,
  PreSessions,
  readCookies,
  sameOrigin,
  setCookie,
  tokenHash,
} from '../../../server/web/session.ts';

const req = (headers: Record<string, string>, body: string | null = null): Request => ({
  method: 'POST',
  path: '/',
  rawQuery: '',
  targetLength: 1,
  headerBytes: 0,
  headers,
  remoteAddress: '',
  signal: new AbortController().signal,
  aborted: false,
  receivedAt: 0,
  body: body === null ? null : Buffer.from(body),
  bodyTooLarge: false,
});

test('cookies: __Host- prefix, Secure, HttpOnly, SameSite=Lax, Path=/ and no Domain on https; plain names on http', () => {
  const https = cookieNames('https://www.example.org');
  assert.equal(https.session, '__Host-fe_session');
  const c = setCookie(https, https.session, 'abc', 3600);
  for (const part of ['__Host-fe_session=abc', 'Max-Age=3600', 'Path=/', 'HttpOnly', 'Secure', 'SameSite=Lax'])
    assert.ok(c.split('; ').includes(part), `${part} in ${c}`);
  assert.ok(!/domain=/i.test(c));
  const http = cookieNames('http://127.0.0.1:8080');
  assert.equal(http.session, 'fe_session');
  assert.ok(!setCookie(http, http.session, 'abc', null).includes('Secure'));
  assert.ok(!setCookie(http, http.session, 'abc', null).includes('Max-Age'), 'a browser-session cookie when no age is given');
  assert.match(clearCookie(https, https.session), /Max-Age=0/);
  assert.deepEqual({ ...readCookies(req({ cookie: '__Host-fe_session=abc; other=1' })) }, { '__Host-fe_session': 'abc', other: '1' });
});

test('tokens: 256 bits, distinct, base64url; stored as SHA-256 hex', () => {
  const seen = new Set(Array.from({ length: 1000 }, newToken));
  assert.equal(seen.size, 1000);
  for (const t of seen) assert.match(t, /^[\w-]{43}$/);
  assert.match(tokenHash('x'), /^[0-9a-f]{64}$/);
});

test('CSRF tokens are bound to their browser; signed values refuse any change', () => {
  const csrf = new Csrf(() => Buffer.alloc(32, 7));
  const other = new Csrf(() => Buffer.alloc(32, 8));
  fc.assert(
    fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (a, b) => {
      assert.ok(csrf.check(a, csrf.token(a)));
      if (a !== b) assert.ok(!csrf.check(b, csrf.token(a)), 'another binding');
      assert.ok(!other.check(a, csrf.token(a)), 'another secret');
      assert.ok(!csrf.check(a, ''));
      assert.ok(!csrf.check(a, undefined));
      const signed = csrf.sign(a);
      assert.equal(csrf.unsign(signed), a);
      assert.equal(other.unsign(signed), null);
      assert.equal(csrf.unsign(`${signed}x`), null);
      assert.equal(csrf.unsign(signed.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))), null);
    }),
    { numRuns: 500 },
  );
});

test('over http a pre-session id verifies only at the client address it was given to, unaltered, by this secret, and not stale; over https any id is one', () => {
  const csrf = new Csrf(() => Buffer.alloc(32, 7));
  const DAY_S = 24 * 3600;
  const http = new PreSessions(csrf, cookieNames('http://web.example'), DAY_S);
  const t0 = Date.UTC(2026, 10, 26);
  fc.assert(
    fc.property(fc.ipV4(), fc.ipV4(), fc.integer({ min: 0, max: DAY_S - 1 }), (here, there, ageS) => {
      const id = http.issue(here, t0);
      assert.match(id, /^[\w-]{43}\.\d+\.[\w-]{43}$/);
      assert.ok(http.valid(id, here, t0 + ageS * 1000));
      if (here !== there) assert.ok(!http.valid(id, there, t0), 'planted from another address');
      assert.ok(!http.valid(id, here, t0 + DAY_S * 1000), 'stale');
      assert.ok(!new PreSessions(new Csrf(() => Buffer.alloc(32, 8)), cookieNames('http://web.example'), DAY_S).valid(id, here, t0), 'another secret');
      // Its issue time cannot be moved forward to keep it fresh: the MAC covers it.
      const [rand, , mac] = id.split('.');
      assert.ok(!http.valid(`${rand}.${Math.floor(t0 / 1000) + DAY_S}.${mac}`, here, t0 + DAY_S * 1000));
      assert.ok(
        !http.valid(
          id.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
          here,
          t0,
        ),
      );
    }),
    { numRuns: 300 },
  );
  for (const v of [undefined, '', 'planted', newToken()]) assert.ok(!http.valid(v, '127.0.0.1', t0));
  const https = new PreSessions(csrf, cookieNames('https://web.example'), DAY_S);
  assert.match(https.issue('127.0.0.1', t0), /^[\w-]{43}$/);
  assert.ok(https.valid(newToken(), '10.0.0.1', t0), 'the __Host- prefix is what keeps it unplanted on https');
  assert.ok(!https.valid(undefined, '10.0.0.1', t0));
});

test('a POST counts as ours only with our Origin, or without Origin from a same-origin fetch', () => {
  const web = 'https://www.example.org';
  assert.ok(sameOrigin(req({ origin: 'https://www.example.org' }), web));
  assert.ok(!sameOrigin(req({ origin: 'https://evil.example' }), web));
  assert.ok(!sameOrigin(req({ origin: 'http://www.example.org' }), web), 'scheme counts');
  assert.ok(!sameOrigin(req({ origin: 'https://www.example.org:8443' }), web), 'port counts');
  assert.ok(!sameOrigin(req({ origin: 'null' }), web), 'an opaque origin');
  assert.ok(sameOrigin(req({ 'sec-fetch-site': 'same-origin' }), web));
  assert.ok(!sameOrigin(req({ 'sec-fetch-site': 'cross-site' }), web));
  assert.ok(!sameOrigin(req({ 'sec-fetch-site': 'same-site' }), web), 'a sibling subdomain is not us');
  assert.ok(!sameOrigin(req({}), web), 'no evidence at all');
});

test('form bodies: only application/x-www-form-urlencoded', () => {
  assert.equal(formFields(req({ 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' }, 'email=a%40b.example&x=1'))?.get('email'), 'a@b.example');
  assert.equal(formFields(req({ 'content-type': 'application/json' }, '{"email":"a@b"}')), null);
  assert.equal(formFields(req({ 'content-type': 'application/x-www-form-urlencoded' }, null)), null);
});
