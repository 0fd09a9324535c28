// The shipped nginx site (deploy/nginx/family-events.conf) and the website's account forms, over TLS
// as the site's commented TLS lines describe it (a test certificate made by openssl), and over plain
// http: a small Node upstream records exactly what nginx forwards. POST reaches the server on the
// account form routes only (POSTS in server/web/account/index.ts), with its body and the headers a form is
// checked by; the account pages get their Cookie and nothing else does; a POST anywhere else is 405
// with Allow; a body over the server's MAX_BODY_BYTES is 413 with an HTML page; control characters in
// a forwarded website header are 400; the server down is a 503 page on the website; every answer over
// TLS carries HSTS, none over plain http.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { REPO_ROOT } from '../../core/config.ts';
import { MAX_BODY_BYTES } from '../../server/http.ts';
import { freePort } from '../ports.ts';
import { findNginx, nginxSkip, requireNginx, startNginx, testCertificate, type Nginx, type TestCertificate } from './nginx.ts';

const NGINX = findNginx();
const ANSWER_MS = 5000;

/** The form routes as the server defines them: the keys of POSTS in server/web/account/index.ts. */
function serverFormRoutes(): string[] {
  const source = readFileSync(path.join(REPO_ROOT, 'server', 'web', 'account', 'index.ts'), 'utf8');
  const block = /const POSTS\b[^{]*\{([\s\S]*?)\n {2}\};/.exec(source)?.[1];
  assert.ok(block, 'server/web/account/index.ts defines POSTS');
  return [...block.matchAll(/'(\/account\/[^']*)'\s*:/g)].map((m) => m[1] ?? '');
}
const FORM_ROUTES = serverFormRoutes();
/** Those that are pages too (GETS in server/web/account/index.ts): their Allow names GET and HEAD. */
const FORM_PAGES = new Set(['/account/sign-in', '/account/confirm', '/account/invite']);
/** The account pages that take no POST. */
const ACCOUNT_PAGES = ['/account', '/account/sign-in/sent', '/account/oidc/callback?code=c&state=s', '/account/no-such-page'];
const FORM_HEADERS = ['content-length', 'content-type', 'cookie', 'host', 'origin', 'sec-fetch-site', 'x-forwarded-for'];
const PAGE_HEADERS = ['cookie', 'host', 'x-forwarded-for'];
const SET_COOKIE = '__Host-fe_session=s3ss10n; Path=/; HttpOnly; Secure; SameSite=Lax';

/** What the upstream was sent. */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Everything a browser (and a forger) sends with a form: nginx must pick the ones the server reads. */
const BROWSER_HEADERS = {
  cookie: '__Host-fe_session=abc; __Host-fe_pre=def',
  origin: 'https://web.example',
  'sec-fetch-site': 'same-origin',
  'content-type': 'application/x-www-form-urlencoded',
  authorization: 'Bearer bsc_live_not_for_forms',
  accept: 'text/html',
  'accept-encoding': 'gzip, br',
  'if-none-match': '"x"',
  'user-agent': 'test',
  referer: 'https://web.example/account',
  'x-forwarded-for': '198.51.100.7',
  'x-other': 'not read by the server',
};

describe("nginx in front of the website's account forms (deploy/nginx/family-events.conf)", { skip: nginxSkip(NGINX) }, () => {
  let upstream: http.Server;
  let cert: TestCertificate;
  let front: Nginx;
  let plainFront: Nginx;
  /** In front of a port nothing listens on: the server is down. */
  let deadFront: Nginx;
  let dispatcher: Agent;
  const seen: Seen[] = [];

  before(async () => {
    upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': SET_COOKIE });
        res.end('upstream');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as net.AddressInfo).port;
    cert = await testCertificate();
    dispatcher = new Agent({ connect: { ca: cert.pem } });
    front = await startNginx(requireNginx(NGINX), port, { tls: cert });
    plainFront = await startNginx(requireNginx(NGINX), port);
    deadFront = await startNginx(requireNginx(NGINX), await freePort(), { tls: cert });
  });

  after(async () => {
    await front?.stop();
    await plainFront?.stop();
    await deadFront?.stop();
    await dispatcher?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
    await cert?.cleanup();
  });

  async function send(
    pathAndQuery: string,
    init: { method?: string; body?: string | Buffer; headers?: Record<string, string>; base?: string } = {},
  ): Promise<{ status: number; headers: Record<string, string>; text: string; upstream: Seen | undefined }> {
    const before = seen.length;
    const res = await request(`${init.base ?? front.base}${pathAndQuery}`, {
      method: (init.method ?? 'GET') as 'GET',
      dispatcher,
      headers: init.headers ?? BROWSER_HEADERS,
      headersTimeout: ANSWER_MS,
      bodyTimeout: ANSWER_MS,
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    const text = await res.body.text();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
    assert.ok(seen.length <= before + 1, 'one request upstream at most');
    return { status: res.statusCode, headers, text, upstream: seen[before] };
  }

  /** nginx's own HTML page: the website's security headers, no-store, HSTS, and a heading. */
  function assertHtmlError(r: { status: number; headers: Record<string, string>; text: string }, status: number, what: string): void {
    assert.equal(r.status, status, `${what}: ${r.text.slice(0, 200)}`);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8', `${what}: an HTML page`);
    assert.match(r.headers['content-security-policy'] ?? '', /(?:^|;\s*)default-src 'none'(?:;|$)/, `${what}: CSP`);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
    assert.equal(r.headers['cache-control'], 'no-store', `${what}: no-store`);
    assert.equal(r.headers['strict-transport-security'], 'max-age=63072000', `${what}: HSTS`);
    assert.match(r.text, /^<!doctype html><html lang="en">.*<h1>[^<]+<\/h1>/s, `${what}: a page with a heading`);
  }

  test("the site lists exactly the server's form routes", () => {
    assert.ok(FORM_ROUTES.length >= 10, `POSTS read from server/web/account/index.ts: ${FORM_ROUTES.join(', ')}`);
    const site = readFileSync(path.join(REPO_ROOT, 'deploy', 'nginx', 'family-events.conf'), 'utf8');
    const listed = /^ {4}location ~ \^\/account\/\(\?:([^)]*)\)\$ \{$/m
      .exec(site)?.[1]
      ?.split('|')
      .map((p) => `/account/${p}`);
    assert.deepEqual(listed?.sort(), [...FORM_ROUTES].sort(), 'the form location of the site names the routes of POSTS');
  });

  test('a POST to each form route reaches the server with its body and only the headers a form is checked by; Set-Cookie comes back', async () => {
    for (const route of FORM_ROUTES) {
      const body = `csrf=${'t'.repeat(43)}&email=ada%40example.org&route=${encodeURIComponent(route)}`;
      const r = await send(route, { method: 'POST', body });
      assert.equal(r.status, 200, `${route}: ${r.text.slice(0, 200)}`);
      assert.equal(r.headers['set-cookie'], SET_COOKIE, `${route}: the server's cookie passes back`);
      assert.equal(r.headers['strict-transport-security'], 'max-age=63072000', `${route}: HSTS over TLS`);
      const up = r.upstream;
      assert.ok(up, `${route}: forwarded`);
      assert.equal(up.method, 'POST');
      assert.equal(up.url, route);
      assert.equal(up.body.toString('utf8'), body, `${route}: the body, whole`);
      assert.deepEqual(Object.keys(up.headers).sort(), FORM_HEADERS, `${route}: the headers forwarded`);
      assert.equal(up.headers['content-length'], String(Buffer.byteLength(body)));
      for (const h of ['cookie', 'origin', 'sec-fetch-site', 'content-type'] as const)
        assert.equal(up.headers[h], BROWSER_HEADERS[h], `${route}: ${h} as sent`);
      assert.equal(up.headers['x-forwarded-for'], '127.0.0.1', `${route}: the address nginx saw, not the forged one`);
    }
  });

  test('a chunked form body reaches the server with a Content-Length', async () => {
    const body = Buffer.from('email=grace%40example.org');
    const r = await send('/account/sign-in', {
      method: 'POST',
      // An async iterable: undici sends it chunked.
      body: (async function* () {
        yield body.subarray(0, 5);
        yield body.subarray(5);
      })() as unknown as Buffer,
    });
    assert.equal(r.status, 200, r.text.slice(0, 200));
    assert.equal(r.upstream?.body.toString('utf8'), body.toString('utf8'));
    assert.equal(r.upstream?.headers['content-length'], String(body.length));
    assert.equal(r.upstream?.headers['transfer-encoding'], undefined);
  });

  test('the account pages get their Cookie and nothing of a form; Set-Cookie comes back', async () => {
    for (const p of [...ACCOUNT_PAGES, '/account/sign-in', '/account/confirm?token=t', '/account/invite?token=t']) {
      const r = await send(p);
      assert.equal(r.status, 200, `${p}: ${r.text.slice(0, 200)}`);
      assert.equal(r.headers['set-cookie'], SET_COOKIE, `${p}: the server's cookie passes back`);
      const up = r.upstream;
      assert.ok(up, `${p}: forwarded`);
      assert.equal(up.url, p);
      assert.equal(up.headers.cookie, BROWSER_HEADERS.cookie, `${p}: the session cookie`);
      const want = FORM_PAGES.has(p.split('?')[0] ?? '') ? FORM_HEADERS.filter((h) => h !== 'content-length') : PAGE_HEADERS;
      assert.deepEqual(Object.keys(up.headers).sort(), want, `${p}: the headers forwarded`);
    }
    // A page's body is never forwarded (nor announced).
    const withBody = await send('/account', { method: 'GET', body: 'x=1' });
    assert.equal(withBody.status, 200);
    assert.equal(withBody.upstream?.body.length, 0);
    assert.equal(withBody.upstream?.headers['content-length'], undefined);
  });

  test('every other route: no Cookie, no Origin, no body forwarded', async () => {
    for (const p of ['/', '/events', '/events?category=festivals', '/docs', '/v1/events?limit=1', '/api/v1/events', '/accounts', '/events/account']) {
      const r = await send(p, { method: 'GET', body: 'x=1' });
      assert.equal(r.status, 200, `${p}: ${r.text.slice(0, 200)}`);
      const up = r.upstream;
      assert.ok(up, `${p}: forwarded`);
      assert.deepEqual(
        Object.keys(up.headers).sort(),
        ['accept', 'accept-encoding', 'authorization', 'host', 'if-none-match', 'x-forwarded-for'],
        `${p}: the API's headers only`,
      );
      assert.equal(up.body.length, 0, `${p}: no body`);
    }
  });

  test('a POST anywhere but a form route is 405 with Allow, never forwarded: problem+json on the API, an HTML page on the website', async () => {
    for (const p of ['/v1/events', '/api/v1/events', '/healthz']) {
      const r = await send(p, { method: 'POST', body: 'x=1' });
      assert.equal(r.status, 405, p);
      assert.equal(r.headers.allow, 'GET, HEAD', p);
      assert.equal(r.headers['content-type'], 'application/problem+json', p);
      assert.equal((JSON.parse(r.text) as { code: string }).code, 'method_not_allowed', p);
      assert.equal(r.upstream, undefined, `${p}: not forwarded`);
    }
    for (const p of ['/', '/events', '/docs', ...ACCOUNT_PAGES, '/account/keys/other', '/account/sign-in/x']) {
      const r = await send(p, { method: 'POST', body: 'x=1' });
      assertHtmlError(r, 405, `POST ${p}`);
      assert.equal(r.headers.allow, 'GET, HEAD', p);
      assert.equal(r.upstream, undefined, `${p}: not forwarded`);
    }
    // Other methods on a form route: the route's own Allow, as the server gives it.
    for (const route of FORM_ROUTES) {
      for (const method of ['PUT', 'DELETE', 'PATCH']) {
        const r = await send(route, { method, body: 'x=1' });
        assertHtmlError(r, 405, `${method} ${route}`);
        assert.equal(r.headers.allow, FORM_PAGES.has(route) ? 'GET, HEAD, POST' : 'POST', `${method} ${route}`);
        assert.equal(r.upstream, undefined, `${method} ${route}: not forwarded`);
      }
    }
  });

  test(`a form body over the server's ${MAX_BODY_BYTES} bytes is 413 with an HTML page; ${MAX_BODY_BYTES} bytes pass`, async () => {
    const at = await send('/account/members/invite', { method: 'POST', body: 'e'.repeat(MAX_BODY_BYTES) });
    assert.equal(at.status, 200, at.text.slice(0, 200));
    assert.equal(at.upstream?.body.length, MAX_BODY_BYTES);
    const over = await send('/account/members/invite', { method: 'POST', body: 'e'.repeat(MAX_BODY_BYTES + 1) });
    assertHtmlError(over, 413, 'one byte over');
    assert.match(over.text, /16 KiB/, 'the page names the bound');
    assert.equal(over.upstream, undefined, 'not forwarded');
    const chunked = await send('/account/sign-in', {
      method: 'POST',
      body: (async function* () {
        for (let i = 0; i < 5; i++) yield Buffer.alloc(8192, 'c');
      })() as unknown as Buffer,
    });
    assertHtmlError(chunked, 413, 'a chunked body over the bound');
    assert.equal(chunked.upstream, undefined, 'not forwarded');
  });

  test('a control character in a forwarded website header is 400 with an HTML page; in a header that is not forwarded, served', async () => {
    const raw = (req: string): Promise<string> =>
      new Promise((resolve, reject) => {
        // Written, not ended: a client that closes its side is one that left, and nginx drops its request.
        const s = tls.connect({ host: '127.0.0.1', port: front.port, ca: cert.pem }, () => s.write(Buffer.from(req, 'latin1')));
        let out = '';
        s.on('data', (c: Buffer) => (out += c.toString('latin1')));
        s.on('end', () => resolve(out));
        s.on('error', reject);
        s.setTimeout(ANSWER_MS, () => reject(new Error(`no answer within ${ANSWER_MS} ms to ${JSON.stringify(req.slice(0, 80))}`)));
      });
    const status = (answer: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
    const post = (extra: string, p = '/account/sign-in'): string =>
      `POST ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Content-Length: 3\r\nConnection: close\r\n\r\nx=1`;
    for (const [p, name, value] of [
      ['/account/sign-in', 'Cookie', 'fe_pre=a\x01b'],
      ['/account/sign-in', 'Origin', 'https://web.example\x1f'],
      ['/account/keys', 'Sec-Fetch-Site', 'same-origin\x0b'],
      ['/account/keys', 'Content-Type', 'application/x-www-form-urlencoded\x0c'],
    ] as const) {
      const a = await raw(post(`${name}: ${value}\r\n`, p));
      assert.equal(status(a), 400, `${name} on ${p}: ${a.slice(0, 300)}`);
      assert.match(a, /\r\ncontent-type: text\/html; charset=utf-8\r\n/i, `${name}: an HTML page`);
      assert.match(a, /control character/, `${name}: says why`);
    }
    const page = await raw(`GET /account HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: fe_session=a\x02\r\nConnection: close\r\n\r\n`);
    assert.equal(status(page), 400, `Cookie on an account page: ${page.slice(0, 300)}`);
    // Not forwarded there, so not checked there: a cookie on an API route, an Origin on a page.
    for (const req of [
      `GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: a=\x01\r\nConnection: close\r\n\r\n`,
      `GET /account HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: x\x01\r\nConnection: close\r\n\r\n`,
      post('X-Other: a\x01b\r\nCookie: fe_pre=a\tb\r\n'),
    ]) {
      const a = await raw(req);
      assert.equal(status(a), 200, `${JSON.stringify(req.slice(0, 60))}: ${a.slice(0, 300)}`);
    }
  });

  test('the server down: a 503 page with Retry-After on the website and its forms, problem+json on the API', async () => {
    for (const [p, method] of [
      ['/events', 'GET'],
      ['/account', 'GET'],
      ['/account/sign-in', 'POST'],
    ] as const) {
      const r = await send(p, { method, base: deadFront.base, ...(method === 'POST' ? { body: 'x=1' } : {}) });
      assertHtmlError(r, 503, `${method} ${p}, server down`);
      assert.match(r.headers['retry-after'] ?? '', /^[1-9]\d*$/, `${method} ${p}: Retry-After`);
    }
    const api = await send('/v1/events', { base: deadFront.base });
    assert.equal(api.status, 503);
    assert.equal(api.headers['content-type'], 'application/problem+json');
    assert.equal((JSON.parse(api.text) as { code: string }).code, 'unavailable');
  });

  test("over TLS every answer carries HSTS, nginx's own errors included; over plain http none does", async () => {
    const answers = [
      await send('/events'),
      await send('/account/sign-in', { method: 'POST', body: 'x=1' }),
      await send('/v1/events', { method: 'POST', body: 'x=1' }),
      await send('/events', { method: 'POST', body: 'x=1' }),
    ];
    for (const a of answers) assert.equal(a.headers['strict-transport-security'], 'max-age=63072000', `${a.status}: HSTS`);
    for (const [p, method] of [
      ['/events', 'GET'],
      ['/account/sign-in', 'POST'],
      ['/v1/events', 'POST'],
      ['/events', 'POST'],
    ] as const) {
      const a = await send(p, { method, base: plainFront.base, ...(method === 'POST' ? { body: 'x=1' } : {}) });
      assert.equal(a.headers['strict-transport-security'], undefined, `${method} ${p} over http (${a.status}): no HSTS`);
    }
  });
});
