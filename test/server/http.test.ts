// The uWS adapter as a pooled client sees it: Node's own HTTP client (llhttp, a strict parser we did
// not write) on one keep-alive connection, as Python requests or any connection pool uses it. A HEAD
// that left the connection waiting for a body, or sent one, breaks the request after it.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { checkIfFeed } from './readers.ts';
import { listen, MAX_BODY_BYTES, type HttpServer } from '../../server/http.ts';
import { sampleFixture, startTestServer, type Fixture, type TestServer } from './helpers.ts';

let fx: Fixture;
let srv: TestServer;

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir);
});

after(async () => {
  await srv?.stop();
  await fx?.cleanup();
});

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly reused: boolean;
  readonly socket: object;
}

function ask(agent: http.Agent, method: 'GET' | 'HEAD', pathAndQuery: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${srv.base}${pathAndQuery}`, { agent, method, headers: { authorization: `Bearer ${srv.key}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), reused: req.reusedSocket, socket: req.socket! }),
      );
      res.on('error', reject);
    });
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${pathAndQuery}: no answer in 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** The headers a HEAD must repeat from its GET: all of them but the date. */
const comparable = (h: http.IncomingHttpHeaders): Record<string, unknown> => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'date'));

const PATHS = [
  '/healthz',
  '/v1/openapi.json',
  '/v1/events?city=Berkeley&limit=5',
  '/api/v1/feed.rss?city=Oakland&age_min=3',
  '/v1/feed.json?category=storytime',
  // Streamed from the worker on a miss (chunked, no length), from the cache once it has been read.
  '/v1/events.csv?city=Oakland&limit=40',
  '/v1/nothing-here',
  '/v1/events?limit=0',
];

describe('one keep-alive connection: GET, HEAD, GET, conditional GET, HEAD', () => {
  for (const p of PATHS) {
    test(p, async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const get1 = await ask(agent, 'GET', p);
        const head1 = await ask(agent, 'HEAD', p);
        const get2 = await ask(agent, 'GET', p);
        const etag = get2.headers.etag;
        const cond = await ask(agent, 'GET', p, etag ? { 'if-none-match': etag } : {});
        const head2 = await ask(agent, 'HEAD', p);
        const all = [get1, head1, get2, cond, head2];
        for (const g of [get1, get2]) await checkIfFeed(g.status, g.headers['content-type'] ?? '', g.body.toString('utf8'), `GET ${p}`);

        assert.ok(
          all.every((a) => a.socket === get1.socket),
          'the five answers came on more than one connection',
        );
        assert.deepEqual(
          all.map((a) => a.reused),
          [false, true, true, true, true],
        );
        assert.ok(get1.status > 0 && get1.status !== 500, `GET answered ${get1.status}`);
        assert.equal(get2.status, get1.status);
        for (const head of [head1, head2]) {
          assert.equal(head.status, get2.status, 'HEAD answered another status than GET');
          assert.equal(head.body.length, 0, 'HEAD sent a body');
          assert.deepEqual(comparable(head.headers), comparable(get2.headers), 'HEAD headers differ from the GET');
        }
        if (get2.headers['content-length'] !== undefined)
          assert.equal(Number(head1.headers['content-length']), get2.body.length, 'HEAD announced another length');
        if (etag) {
          assert.equal(cond.status, 304, 'If-None-Match with the current ETag');
          assert.equal(cond.body.length, 0);
        } else {
          assert.equal(cond.status, get2.status);
          assert.deepEqual(cond.body, get2.body);
        }
      } finally {
        agent.destroy();
      }
    });
  }
});

describe('request bodies (the website forms)', () => {
  let echo: HttpServer;
  before(async () => {
    // The adapter alone, with a handler that says what body it was given.
    echo = await listen({
      host: '127.0.0.1',
      port: 0,
      trustProxy: false,
      handler: (req) => ({
        status: 200,
        headers: [['Content-Type', 'application/json']],
        body: JSON.stringify({
          method: req.method,
          body: req.body === null ? null : Buffer.from(req.body).toString('base64'),
          tooLarge: req.bodyTooLarge,
          cookie: req.headers.cookie ?? null,
          origin: req.headers.origin ?? null,
        }),
      }),
    });
  });
  after(() => echo?.stopListening());

  const post = (
    agent: http.Agent,
    body: Buffer | null,
    headers: http.OutgoingHttpHeaders = {},
  ): Promise<{ status: number; json: { method: string; body: string | null; tooLarge: boolean; cookie: string | null; origin: string | null } }> =>
    new Promise((resolve, reject) => {
      const r = http.request({ host: '127.0.0.1', port: echo.port, method: body === null ? 'GET' : 'POST', path: '/form', agent, headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(parts).toString('utf8')) }));
      });
      r.on('error', reject);
      if (body !== null) {
        // In several writes, so the adapter sees it in chunks.
        for (let i = 0; i < body.length; i += 1000) r.write(body.subarray(i, i + 1000));
      }
      r.end();
    });

  test('a body arrives whole (in chunks, chunked or with a length), at most MAX_BODY_BYTES; on one keep-alive connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const form = Buffer.from(Array.from({ length: 400 }, (_, i) => `field${i}=${'x'.repeat(20)}`).join('&'));
      assert.ok(form.length > 8000 && form.length < MAX_BODY_BYTES);
      const chunked = await post(agent, form, { 'content-type': 'application/x-www-form-urlencoded', cookie: 'sid=abc', origin: 'https://web.example' });
      assert.equal(chunked.status, 200);
      assert.equal(Buffer.from(chunked.json.body ?? '', 'base64').toString(), form.toString());
      assert.equal(chunked.json.cookie, 'sid=abc');
      assert.equal(chunked.json.origin, 'https://web.example');
      const sized = await post(agent, form, { 'content-length': form.length });
      assert.equal(Buffer.from(sized.json.body ?? '', 'base64').toString(), form.toString());
      const big = await post(agent, Buffer.alloc(MAX_BODY_BYTES + 1, 'a'), { 'content-length': MAX_BODY_BYTES + 1 });
      assert.equal(big.json.body, null);
      assert.equal(big.json.tooLarge, true);
      const none = await post(agent, null);
      assert.equal(none.json.method, 'GET');
      assert.equal(none.json.body, null);
      assert.equal(none.json.tooLarge, false);
    } finally {
      agent.destroy();
    }
  });

  test('the real server still refuses other methods than GET and HEAD, body or not', async () => {
    for (const p of ['/v1/events', '/events']) {
      const r = await fetch(`${srv.base}${p}`, { method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(r.status, 405, p);
      assert.equal(r.headers.get('allow'), 'GET, HEAD');
      await r.text();
    }
  });
});
