// X-Content-Type-Options: nosniff on every answer of the server (issue 26 item 9), exactly once:
// every route the served OpenAPI document lists, by GET and HEAD, served (200), revalidated (304)
// and refused (a problem that echoes a parameter name it was sent), its /api twin, the website's
// pages, unknown paths and methods, bodies refused, and the metrics listener. Real server, real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { get, sampleFixture, startTestServer, type Fixture, type TestServer } from './helpers.ts';
import type { Doc } from './openapi-doc.ts';

interface Seen {
  readonly status: number;
  readonly nosniff: string | string[] | undefined;
  readonly etag: string | undefined;
}

async function ask(
  base: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE' = 'GET',
  body?: string,
): Promise<Seen> {
  const res = await request(`${base}${pathAndQuery}`, { method, headers, body: body ?? null });
  await res.body.arrayBuffer();
  const etag = res.headers.etag;
  return { status: res.statusCode, nosniff: res.headers['x-content-type-options'], etag: Array.isArray(etag) ? etag[0] : etag };
}

describe('X-Content-Type-Options: nosniff on every answer', () => {
  let fx: Fixture;
  let srv: TestServer;
  let doc: Doc;

  before(async () => {
    fx = await sampleFixture();
    srv = await startTestServer(fx.dataDir);
    doc = (await get(srv.base, '/v1/openapi.json')).json as Doc;
  });

  after(async () => {
    await srv?.stop();
    await fx?.cleanup();
  });

  /** Fails unless the answer carries exactly one nosniff. */
  const check = (s: Seen, what: string): void => {
    assert.equal(s.nosniff, 'nosniff', `${what} (${s.status}): X-Content-Type-Options is ${JSON.stringify(s.nosniff)}`);
  };

  test('every route of the OpenAPI document: 200, HEAD, 304, a refused parameter, and its /api twin', async () => {
    const auth = { authorization: `Bearer ${srv.key}` };
    const id = fx.rows[0]?.id ?? '';
    const paths = Object.keys(doc.paths);
    assert.ok(paths.length >= 8, `the document lists ${paths.length} paths`);
    let revalidated = 0;
    for (const template of paths) {
      const p = template.replace(/\{\w+\}/g, encodeURIComponent(id));
      for (const prefix of ['', '/api']) {
        const at = `${prefix}${p}`;
        const ok = await ask(srv.base, at, auth);
        check(ok, `GET ${at}`);
        check(await ask(srv.base, at, auth, 'HEAD'), `HEAD ${at}`);
        if (ok.etag !== undefined) {
          const notModified = await ask(srv.base, at, { ...auth, 'if-none-match': ok.etag });
          assert.equal(notModified.status, 304, `GET ${at} with its ETag`);
          check(notModified, `304 ${at}`);
          revalidated++;
        }
        // A problem body that echoes the (decoded) name of an unknown parameter.
        const refused = await ask(srv.base, `${at}?%3Cscript%3Ealert(1)%3C%2Fscript%3E=1`, auth);
        assert.ok(refused.status >= 400 && refused.status < 500, `GET ${at} with an unknown parameter: ${refused.status}`);
        check(refused, `refused ${at}`);
      }
    }
    assert.ok(revalidated > 0, 'a 304 was checked');
    // Without a key, and with a key that does not exist.
    check(await ask(srv.base, '/v1/events'), '401 missing key');
    check(await ask(srv.base, '/v1/events', { authorization: `Bearer bsc_live_${'x'.repeat(40)}` }), '401 invalid key');
  });

  test('exports and feeds, streamed or whole; the website; unknown paths, methods and bodies; the metrics listener', async () => {
    const auth = { authorization: `Bearer ${srv.key}` };
    for (const at of ['/v1/events.csv?limit=5000', '/v1/events.csv?limit=3', '/v1/feed.rss', '/v1/feed.json', '/v1/feed.ics', '/v1/demo/events?limit=1']) {
      check(await ask(srv.base, at, auth), `GET ${at}`);
    }
    for (const at of ['/', '/events', '/docs', '/account/sign-in', '/nope', '/v1/nope', `/events/${fx.rows[0]?.id ?? ''}`]) {
      check(await ask(srv.base, at), `GET ${at}`);
    }
    check(await ask(srv.base, '/v1/events', auth, 'DELETE'), 'DELETE /v1/events');
    check(await ask(srv.base, '/v1/events', { ...auth, 'content-type': 'application/json' }, 'POST', '{}'), 'POST /v1/events');
    check(
      await ask(srv.base, '/account/sign-in', { 'content-type': 'application/x-www-form-urlencoded' }, 'POST', `email=${'a'.repeat(20 * 1024)}`),
      'a form over the body limit',
    );
    check(await ask(srv.adminBase, '/metrics'), 'GET /metrics');
    check(await ask(srv.adminBase, '/other'), 'GET /other on the metrics listener');
  });
});
