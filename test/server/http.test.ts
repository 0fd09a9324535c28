// The uWS adapter as a pooled client sees it: Node's own HTTP client (llhttp, a strict parser we did
// not write) on one keep-alive connection, as Python requests or any connection pool uses it. A HEAD
// that left the connection waiting for a body, or sent one, breaks the request after it.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { checkIfFeed } from './readers.ts';
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
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), reused: req.reusedSocket, socket: req.socket! }));
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

        assert.ok(all.every((a) => a.socket === get1.socket), 'the five answers came on more than one connection');
        assert.deepEqual(all.map((a) => a.reused), [false, true, true, true, true]);
        assert.ok(get1.status > 0 && get1.status !== 500, `GET answered ${get1.status}`);
        assert.equal(get2.status, get1.status);
        for (const head of [head1, head2]) {
          assert.equal(head.status, get2.status, 'HEAD answered another status than GET');
          assert.equal(head.body.length, 0, 'HEAD sent a body');
          assert.deepEqual(comparable(head.headers), comparable(get2.headers), 'HEAD headers differ from the GET');
        }
        if (get2.headers['content-length'] !== undefined) assert.equal(Number(head1.headers['content-length']), get2.body.length, 'HEAD announced another length');
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
