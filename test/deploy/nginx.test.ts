// The shipped nginx site (deploy/nginx/family-events.conf) in front of the real server: real nginx
// on a loopback port, started from a generated nginx.conf that includes the shipped file with only
// the upstream address, the listen port and the log directory substituted. Through it, every format
// answers the conformance queries as the server does directly; HTTP/1.0 and keep-alive clients are
// answered; the server's compression passes untouched; a 10,000-row export streams whole without
// being spooled to disk; and what uWS 20.30 would drop without a word (unknown methods, control
// characters, many headers) gets a status and a problem+json body, as do nginx's own errors.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import { request } from 'undici';
import * as v from 'valibot';
import { ERRORS, statusesOf, type ErrorCode } from '../../server/errors.ts';
import { EventListSchema, JsonFeedSchema, ProblemSchema } from '../../server/schemas.ts';
import { freePort } from '../ports.ts';
import { findNginx, nginxSkip, requireNginx, SITE_TEXT, startNginx, type Nginx } from './nginx.ts';
import { conformanceQueries, oraclePage, QUERY_NAMES, type Query } from '../server/conformance.ts';
import { buildInChild, NOW, provisionKey, sampleFixture, startTestServer, type Fixture, type TestServer } from '../server/helpers.ts';

const NGINX = findNginx();
/** The WEB_BASE_URL the shipped site writes into its problem types; the servers here are started with it. */
const WEB = /default "(https?:\/\/[^"]+)\/docs\/errors";/.exec(SITE_TEXT)?.[1] ?? '';
/** How long any one answer may take before the test calls it dropped (uWS drops without a word). */
const ANSWER_MS = 5000;
const EXPORT_ROWS = 10_000;
const DEMO_RATE = 3;

// ---------------------------------------------------------------- clients

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly bytes: Buffer;
}

/** A request through undici: bytes exactly as they came off the wire (no decompression), no Accept-Encoding unless given. */
async function ask(base: string, pathAndQuery: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<Answer> {
  const res = await request(`${base}${pathAndQuery}`, { method, headers, headersTimeout: ANSWER_MS, bodyTimeout: ANSWER_MS });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

const header = (a: Answer, name: string): string | undefined => {
  const h = a.headers[name];
  return Array.isArray(h) ? h.join(', ') : h;
};

/** One HTTP/1.x response as it came off a raw socket. */
interface RawResponse {
  readonly version: string;
  readonly status: number;
  /** Lower-case names; a repeated field's values joined with ", ". */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/**
 * A client connection on a raw socket, for what fetch cannot say (HTTP/1.0, unknown methods,
 * control characters, a reader that stops): requests are written byte for byte, answers are parsed
 * one at a time. An answer that does not come within ANSWER_MS fails the test.
 */
class RawConnection {
  private buf: Buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | null = null;

  readonly socket: net.Socket;
  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (c: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, c]) : c;
      this.wake?.();
    });
    for (const e of ['end', 'close', 'error']) {
      socket.on(e, () => {
        this.ended = true;
        this.wake?.();
      });
    }
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => resolve(new RawConnection(s)));
      s.once('error', reject);
    });
  }

  /** Written as latin1: every byte of the string as given, control characters included. */
  send(req: string): void {
    this.socket.write(Buffer.from(req, 'latin1'));
  }

  get closed(): boolean {
    return this.ended;
  }

  get buffered(): number {
    return this.buf.length;
  }

  /** Waits until `ready()` holds or the peer has closed the connection. */
  async until(ready: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + ANSWER_MS;
    while (!ready() && !this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`no ${what} within ${ANSWER_MS} ms (${this.buf.length} bytes received: ${this.buf.toString('latin1', 0, 120)})`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** The next response; `method` says whether it can have a body. */
  async read(method = 'GET'): Promise<RawResponse> {
    await this.until(() => this.buf.includes('\r\n\r\n'), 'response head');
    const end = this.buf.indexOf('\r\n\r\n');
    assert.ok(end >= 0, `the connection closed without an answer (${this.buf.length} bytes: ${this.buf.toString('latin1', 0, 120)})`);
    const [statusLine = '', ...lines] = this.take(end + 4)
      .toString('latin1', 0, end)
      .split('\r\n');
    const m = /^(HTTP\/1\.[01]) (\d{3})(?: .*)?$/.exec(statusLine);
    assert.ok(m, `status line: ${statusLine}`);
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
    }
    const status = Number(m[2]);
    let body = Buffer.alloc(0);
    if (method === 'HEAD' || status === 304 || status === 204) {
      // no body, whatever Content-Length says
    } else if (headers.get('transfer-encoding') === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        await this.until(() => this.buf.includes('\r\n'), 'chunk size');
        const eol = this.buf.indexOf('\r\n');
        assert.ok(eol >= 0, 'the connection closed inside a chunked body');
        const size = parseInt(this.take(eol + 2).toString('latin1', 0, eol), 16);
        await this.until(() => this.buf.length >= size + 2, 'chunk');
        assert.ok(this.buf.length >= size + 2, 'the connection closed inside a chunk');
        parts.push(Buffer.from(this.take(size)));
        this.take(2);
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else if (headers.has('content-length')) {
      const n = Number(headers.get('content-length'));
      await this.until(() => this.buf.length >= n, 'body');
      assert.ok(this.buf.length >= n, `the connection closed after ${this.buf.length} of ${n} body bytes`);
      body = Buffer.from(this.take(n));
    } else {
      // Neither length nor chunks: the body runs to the end of the connection (how HTTP/1.0 gets a stream).
      await this.until(() => false, 'end of a body delimited by the connection');
      body = Buffer.from(this.take(this.buf.length));
    }
    return { version: m[1] ?? '', status, headers, body };
  }

  /** Resolves once the peer has closed the connection (and fails if it does not). */
  async end(): Promise<void> {
    await this.until(() => false, 'close of the connection');
    assert.equal(this.buf.length, 0, `bytes after the last answer: ${this.buf.toString('latin1', 0, 120)}`);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** One request on a connection of its own. */
async function exchange(port: number, req: string, method = 'GET'): Promise<RawResponse> {
  const c = await RawConnection.open(port);
  try {
    c.send(req);
    return await c.read(method);
  } finally {
    c.destroy();
  }
}

/** An RFC 9457 problem of the server's table: status, type, title and code agree with server/errors.ts. */
function assertProblem(
  status: number,
  headers: (name: string) => string | undefined,
  body: Buffer,
  code: ErrorCode,
  expectStatus: number,
  what: string,
): v.InferOutput<typeof ProblemSchema> {
  assert.equal(status, expectStatus, `${what}: ${status} ${body.toString('utf8', 0, 300)}`);
  assert.equal(headers('content-type'), 'application/problem+json', `${what}: Content-Type`);
  assert.equal(headers('cache-control'), 'no-store', `${what}: Cache-Control`);
  const p = v.parse(ProblemSchema, JSON.parse(body.toString('utf8')));
  assert.equal(p.code, code, what);
  assert.equal(p.status, expectStatus, `${what}: the body's status`);
  assert.ok(statusesOf(code).includes(expectStatus), `${what}: ${code} is never ${expectStatus} in server/errors.ts`);
  assert.equal(p.title, ERRORS[code].title, `${what}: the title of ${code} in server/errors.ts`);
  assert.equal(p.type, `${WEB}/docs/errors#${code}`, `${what}: type`);
  assert.ok(p.detail.length > 10, `${what}: a detail`);
  return p;
}

const rawProblem = (r: RawResponse, code: ErrorCode, status: number, what: string): v.InferOutput<typeof ProblemSchema> =>
  assertProblem(r.status, (n) => r.headers.get(n), r.body, code, status, what);

// ---------------------------------------------------------------- reading pages back

const xml = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => name === 'item' });
const RssIdsSchema = v.object({
  rss: v.object({ channel: v.object({ item: v.optional(v.array(v.object({ guid: v.object({ '#text': v.string() }) })), []) }) }),
});

/** The event ids of a page in any format, read back with a parser of that format. */
function idsOf(route: string, body: Buffer): string[] {
  const text = body.toString('utf8');
  if (route.endsWith('/v1/events')) return v.parse(EventListSchema, JSON.parse(text)).events.map((e) => e.id);
  if (route.endsWith('/v1/events.csv'))
    return parseCsv(text, { bom: false })
      .slice(1)
      .map((r) => r[0] ?? '');
  if (route.endsWith('/v1/feed.rss')) return v.parse(RssIdsSchema, xml.parse(text)).rss.channel.item.map((it) => it.guid['#text']);
  return v.parse(JsonFeedSchema, JSON.parse(text)).items.map((it) => it.id);
}

/** The offset of the Link header's rel="next", or null without one. */
function nextOffset(a: Answer): number | null {
  // Targets are URLs whose own commas are percent-encoded: a comma before "<" separates links.
  for (const part of (header(a, 'link') ?? '').split(/,(?=\s*<)/)) {
    const m = /^<([^>]*)>; ?rel="next"$/.exec(part.trim());
    if (m) return Number(new URL(m[1] ?? '').searchParams.get('offset'));
  }
  return null;
}

// ---------------------------------------------------------------- the suite

describe('nginx in front of the server (deploy/nginx/family-events.conf)', { skip: nginxSkip(NGINX) }, () => {
  let fx: Fixture;
  let bigDir: string;
  /** The sample snapshot (the conformance queries) and a 12,000-event synthetic one (the 10,000-row export, the demo's rate limit). */
  let srv: TestServer;
  let big: TestServer;
  let front: Nginx;
  let bigFront: Nginx;
  /** In front of a port nothing listens on: the server is down. */
  let deadFront: Nginx;
  let partnerKey: string;
  const queries = new Map<string, Query>();

  const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

  before(async () => {
    assert.ok(WEB, 'deploy/nginx/family-events.conf has no $family_events_errors default ("…/docs/errors")');
    const bin = requireNginx(NGINX);
    bigDir = await mkdtemp(path.join(os.tmpdir(), 'fe-nginx-big-'));
    // Both snapshots at once: the synthetic one builds in a process of its own.
    const [sample] = await Promise.all([sampleFixture(), buildInChild(bigDir, NOW, ['--synthetic', '12000'])]);
    fx = sample;
    for (const [name, q] of conformanceQueries(fx.rows, NOW).queries) queries.set(name, q);
    srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true', WEB_BASE_URL: WEB });
    big = await startTestServer(bigDir, { TRUST_PROXY: 'true', WEB_BASE_URL: WEB, DEMO_RATE_PER_MINUTE: String(DEMO_RATE) });
    // The partner plan excludes nothing: the synthetic snapshot then has more than 10,000 upcoming events.
    partnerKey = provisionKey(big.config.ledgerDir, { plan: 'partner', org: 'Export through nginx' }).key;
    // One at a time, so that `after` stops every one that started, whichever failed.
    front = await startNginx(bin, srv.server.port);
    // Its site logs warnings: the export test looks for nginx's 'buffered to a temporary file'.
    bigFront = await startNginx(bin, big.server.port, { siteErrorLogLevel: 'warn' });
    deadFront = await startNginx(bin, await freePort());
  });

  after(async () => {
    await Promise.all([front?.stop(), bigFront?.stop(), deadFront?.stop()]);
    await srv?.stop();
    await big?.stop();
    await fx?.cleanup();
    if (bigDir) await rm(bigDir, { recursive: true, force: true });
  });

  describe('the conformance queries answer the same through nginx', () => {
    const FORMATS = ['/v1/events', '/v1/events.csv', '/v1/feed.rss', '/v1/feed.json'] as const;
    /** Everything a client may act on; Date, Server and Connection are the proxy's own. */
    const SAME_HEADERS = [
      'content-type',
      'etag',
      'last-modified',
      'cache-control',
      'vary',
      'link',
      'x-total-count',
      'content-disposition',
      'x-quota-limit',
      'x-quota-remaining',
    ];

    QUERY_NAMES.forEach((name, i) => {
      test(name, async () => {
        const q = queries.get(name);
        assert.ok(q, name);
        const want = oraclePage(q);
        assert.ok(want.ids.length > 0, `${name}: the oracle's page is not empty`);
        // Every format, and one of them under the website host's /api twin.
        const routes: string[] = [...FORMATS, `/api${FORMATS[i % FORMATS.length] ?? ''}`];
        for (const route of routes) {
          const pq: string = `${route}?${q.qs}`;
          const direct = await ask(srv.base, pq, auth(srv.key));
          const proxied = await ask(front.base, pq, auth(srv.key));
          assert.equal(direct.status, 200, `${pq} directly: ${direct.bytes.toString('utf8', 0, 300)}`);
          assert.equal(proxied.status, 200, `${pq} through nginx: ${proxied.bytes.toString('utf8', 0, 300)}`);
          assert.deepEqual(idsOf(route, proxied.bytes), want.ids, `${name} ${route}: the oracle's ids, in its order`);
          assert.equal(Number(header(proxied, 'x-total-count')), want.total, `${name} ${route}: X-Total-Count is the oracle's total`);
          assert.equal(nextOffset(proxied), want.next, `${name} ${route}: Link rel="next" at the oracle's next page`);
          // Links in bodies point to PUBLIC_BASE_URL (config), so the bodies are the same bytes.
          assert.ok(proxied.bytes.equals(direct.bytes), `${name} ${route}: the body differs from the direct answer`);
          for (const h of SAME_HEADERS) assert.equal(header(proxied, h), header(direct, h), `${name} ${route}: ${h}`);
          assert.equal(header(proxied, 'uwebsockets'), undefined, `${name} ${route}: the server's software is not named`);
        }
      });
    });
  });

  describe('clients', () => {
    const PQ = '/v1/events?limit=5';

    test('HTTP/1.0 without keep-alive: a GET, a HEAD, a 304 and a streamed CSV, each answered whole, then closed', async () => {
      const direct = await ask(srv.base, PQ, auth(srv.key));
      const etag = header(direct, 'etag') ?? '';
      // Asked through nginx first: a CSV the server has answered once comes from its cache whole, with a length.
      const csv = '/v1/events.csv?limit=300&offset=2';
      const none = Buffer.alloc(0);
      const cases = [
        { req: `GET ${PQ} HTTP/1.0\r\nAuthorization: Bearer ${srv.key}\r\n\r\n`, method: 'GET', status: 200, body: direct.bytes, etag },
        { req: `HEAD ${PQ} HTTP/1.0\r\nAuthorization: Bearer ${srv.key}\r\n\r\n`, method: 'HEAD', status: 200, body: none, etag },
        { req: `GET ${PQ} HTTP/1.0\r\nAuthorization: Bearer ${srv.key}\r\nIf-None-Match: ${etag}\r\n\r\n`, method: 'GET', status: 304, body: none, etag },
        { req: `GET ${csv} HTTP/1.0\r\nAuthorization: Bearer ${srv.key}\r\n\r\n`, method: 'GET', status: 200, body: null, etag: null },
      ];
      for (const c of cases) {
        const what = c.req.split('\r\n')[0] ?? '';
        const conn = await RawConnection.open(front.port);
        conn.send(c.req);
        const r = await conn.read(c.method);
        assert.equal(r.status, c.status, `${what}: ${r.body.toString('utf8', 0, 200)}`);
        if (c.body === null) {
          assert.equal(r.headers.get('content-length'), undefined, `${what}: streamed, so delimited by the end of the connection`);
          const csvDirect = await ask(srv.base, csv, auth(srv.key));
          assert.ok(r.body.equals(csvDirect.bytes), `${what}: the body is the direct answer's`);
          assert.equal(r.headers.get('etag'), header(csvDirect, 'etag'), `${what}: ETag`);
        } else {
          assert.ok(r.body.equals(c.body), `${what}: the body is the direct answer's`);
          assert.equal(r.headers.get('etag'), c.etag, `${what}: ETag`);
        }
        assert.equal(r.headers.get('transfer-encoding'), undefined, `${what}: no chunked coding to an HTTP/1.0 client`);
        if (c.method === 'HEAD') assert.equal(r.headers.get('content-length'), String(direct.bytes.length), `${what}: the GET's Content-Length`);
        await conn.end();
      }
    });

    test('HTTP/1.0 with Connection: keep-alive: GET, HEAD, 304 on one connection, then a streamed CSV that ends it', async () => {
      const direct = await ask(srv.base, PQ, auth(srv.key));
      const etag = header(direct, 'etag') ?? '';
      const csvPath = '/v1/events.csv?limit=300&offset=1';
      const ka = `Authorization: Bearer ${srv.key}\r\nConnection: keep-alive\r\n`;
      const conn = await RawConnection.open(front.port);
      try {
        conn.send(`GET ${PQ} HTTP/1.0\r\n${ka}\r\n`);
        const get = await conn.read();
        assert.equal(get.status, 200);
        assert.equal(get.headers.get('connection'), 'keep-alive');
        assert.ok(get.body.equals(direct.bytes), 'GET: the direct body');

        conn.send(`HEAD ${PQ} HTTP/1.0\r\n${ka}\r\n`);
        const head = await conn.read('HEAD');
        assert.equal(head.status, 200);
        assert.equal(head.headers.get('content-length'), String(direct.bytes.length));
        assert.equal(head.headers.get('etag'), etag);
        assert.equal(head.headers.get('connection'), 'keep-alive');

        conn.send(`GET ${PQ} HTTP/1.0\r\n${ka}If-None-Match: ${etag}\r\n\r\n`);
        const notModified = await conn.read();
        assert.equal(notModified.status, 304);
        assert.equal(notModified.headers.get('etag'), etag);
        assert.equal(notModified.headers.get('connection'), 'keep-alive');
        assert.equal(conn.closed, false, 'still open after three answers');

        // A stream has no length: an HTTP/1.0 client gets it delimited by the end of the connection.
        // Not asked before: the server streams it (a cached CSV would come whole, with a length).
        conn.send(`GET ${csvPath} HTTP/1.0\r\n${ka}\r\n`);
        const csv = await conn.read();
        assert.equal(csv.status, 200);
        assert.equal(csv.headers.get('content-length'), undefined);
        assert.ok(csv.body.equals((await ask(srv.base, csvPath, auth(srv.key))).bytes), 'the CSV body is the direct answer, whole');
        assert.equal(parseCsv(csv.body.toString('utf8'), { bom: false }).length, 301);
        await conn.end();
      } finally {
        conn.destroy();
      }
    });

    test('HTTP/1.1 keep-alive: GET, HEAD, GET, conditional GET (304), HEAD on one connection give five answers', async () => {
      const direct = await ask(srv.base, PQ, auth(srv.key));
      const etag = header(direct, 'etag') ?? '';
      assert.match(etag, /^"[^"]+"$/, 'a strong ETag');
      const conn = await RawConnection.open(front.port);
      try {
        const steps = [
          { method: 'GET', extra: '', status: 200 },
          { method: 'HEAD', extra: '', status: 200 },
          { method: 'GET', extra: '', status: 200 },
          { method: 'GET', extra: `If-None-Match: ${etag}\r\n`, status: 304 },
          { method: 'HEAD', extra: '', status: 200 },
        ];
        const answers: RawResponse[] = [];
        let kept = new Set<number>();
        for (const s of steps) {
          conn.send(`${s.method} ${PQ} HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${srv.key}\r\n${s.extra}\r\n`);
          const r = await conn.read(s.method);
          assert.equal(r.status, s.status, `answer ${answers.length + 1} (${s.method})`);
          assert.equal(r.headers.get('etag'), etag, `answer ${answers.length + 1}: ETag`);
          assert.notEqual(r.headers.get('connection'), 'close', `answer ${answers.length + 1}: the connection is kept`);
          if (s.method === 'GET' && s.status === 200) assert.ok(r.body.equals(direct.bytes), `answer ${answers.length + 1}: the direct body`);
          if (s.method === 'HEAD') assert.equal(r.headers.get('content-length'), String(direct.bytes.length), `answer ${answers.length + 1}: the GET's length`);
          answers.push(r);
          if (answers.length === 1) {
            kept = new Set((await front.upstream()).map((u) => u.localPort));
            assert.ok(kept.size > 0, 'nginx keeps its connection to the server open after an answer');
          }
        }
        assert.equal(answers.length, 5);
        assert.equal(conn.closed, false, 'the connection is still open');
        // Upstream too, the HEADs and the 304 left the connection usable: no new one was opened.
        const now = (await front.upstream()).map((u) => u.localPort);
        assert.ok(now.length > 0, 'an upstream connection is kept');
        for (const p of now) assert.ok(kept.has(p), `nginx opened a new upstream connection (local port ${p}; kept ${[...kept].join(', ')})`);
      } finally {
        conn.destroy();
      }
    });
  });

  describe("compression is the server's", () => {
    test('br and gzip bodies pass unchanged: Content-Encoding, the strong per-coding ETag, Vary, the bytes', async () => {
      const pq = '/v1/events?limit=20';
      const identity = await ask(srv.base, pq, { ...auth(srv.key), 'accept-encoding': 'identity' });
      for (const [coding, inflate] of [
        ['br', brotliDecompressSync],
        ['gzip', gunzipSync],
      ] as const) {
        const direct = await ask(srv.base, pq, { ...auth(srv.key), 'accept-encoding': coding });
        const proxied = await ask(front.base, pq, { ...auth(srv.key), 'accept-encoding': coding });
        assert.equal(proxied.status, 200, coding);
        assert.equal(header(direct, 'content-encoding'), coding, `${coding}: the server compresses this body`);
        assert.equal(header(proxied, 'content-encoding'), coding, coding);
        assert.match(header(proxied, 'etag') ?? '', new RegExp(`^"[^"]+-${coding}"$`), `${coding}: strong ETag of the coding`);
        assert.equal(header(proxied, 'etag'), header(direct, 'etag'), `${coding}: ETag`);
        assert.equal(header(proxied, 'vary'), 'Accept-Encoding', `${coding}: one Vary`);
        assert.ok(proxied.bytes.equals(direct.bytes), `${coding}: the compressed bytes are the server's`);
        assert.ok(inflate(proxied.bytes).equals(identity.bytes), `${coding}: they inflate to the identity body`);
      }
    });

    test('a body the server leaves uncompressed stays so, with its strong ETag (nginx gzip is off)', async () => {
      // Under 1 KiB: the server does not compress it. The test's http block turns gzip on for every type.
      const pq = '/v1/events?limit=1&q=zqxjvw';
      const direct = await ask(srv.base, pq, { ...auth(srv.key), 'accept-encoding': 'gzip' });
      const proxied = await ask(front.base, pq, { ...auth(srv.key), 'accept-encoding': 'gzip' });
      assert.equal(proxied.status, 200);
      assert.ok(direct.bytes.length < 1024, `${direct.bytes.length} bytes`);
      assert.equal(header(direct, 'content-encoding'), undefined);
      assert.equal(header(proxied, 'content-encoding'), undefined, 'nginx compressed it');
      assert.equal(header(proxied, 'etag'), header(direct, 'etag'));
      assert.ok(proxied.bytes.equals(direct.bytes));
    });
  });

  describe('a 10,000-row CSV export', () => {
    const pq = `/v1/events.csv?limit=${EXPORT_ROWS}`;

    test('streams through whole and parses, byte for byte the direct export', async () => {
      const direct = await ask(big.base, pq, auth(partnerKey));
      const proxied = await ask(bigFront.base, pq, auth(partnerKey));
      assert.equal(proxied.status, 200, proxied.bytes.toString('utf8', 0, 300));
      assert.equal(header(proxied, 'transfer-encoding'), 'chunked', 'streamed, not measured first');
      const rows = parseCsv(proxied.bytes.toString('utf8'), { bom: false });
      assert.equal(rows[0]?.[0], 'id', 'the header row');
      assert.equal(rows.length, EXPORT_ROWS + 1, 'every row arrived');
      assert.equal(new Set(rows.slice(1).map((r) => r[0])).size, EXPORT_ROWS, 'distinct events');
      assert.ok(proxied.bytes.equals(direct.bytes), `through nginx ${proxied.bytes.length} bytes, directly ${direct.bytes.length}: they differ`);
    });

    test('a reader that stops holds the export back at the server; nothing is spooled to disk', async () => {
      const direct = await ask(big.base, pq, auth(partnerKey));
      assert.ok(direct.bytes.length > 4 * 1024 * 1024, `the export is ${direct.bytes.length} bytes: more than any buffer on the way`);
      const conn = await RawConnection.open(bigFront.port);
      try {
        conn.send(`GET ${pq} HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${partnerKey}\r\n\r\n`);
        await conn.until(() => conn.buffered >= 64 * 1024, 'the first 64 KiB');
        conn.socket.pause();
        // nginx fills its memory buffers, stops reading, and the server's bytes wait in nginx's
        // receive queue: seen from the kernel, a non-empty queue that stops changing. Spooling to a
        // temporary file (what nginx does by default) would drain it and log a warning.
        let last = -1;
        let still = 0;
        for (let poll = 0; still < 5; poll++) {
          assert.ok(poll < 500, 'the upstream connection never stalled');
          const waiting = Math.max(0, ...(await bigFront.upstream()).map((u) => u.unread));
          still = waiting > 0 && waiting === last ? still + 1 : 0;
          last = waiting;
          assert.doesNotMatch(await bigFront.errorLog(), /buffered to a temporary file/, 'nginx spooled the export to disk');
          await delay(20);
        }
        assert.ok(conn.buffered < direct.bytes.length / 2, `the stopped reader holds ${conn.buffered} bytes`);
        conn.socket.resume();
        const r = await conn.read();
        assert.equal(r.status, 200);
        assert.ok(r.body.equals(direct.bytes), 'the body, read after the pause, is the direct export');
        assert.doesNotMatch(await bigFront.errorLog(), /buffered to a temporary file/, 'nginx spooled the export to disk');
      } finally {
        conn.destroy();
      }
    });
  });

  describe('what uWS would drop gets a status', () => {
    const get = (extra: string, pq = '/v1/events?limit=1'): string =>
      `GET ${pq} HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${srv.key}\r\n${extra}Connection: close\r\n\r\n`;

    test('60 request headers are served', async () => {
      const extra = Array.from({ length: 57 }, (_, i) => `X-Extra-${i}: value ${i}\r\n`).join('');
      const r = await exchange(front.port, get(extra));
      assert.equal(r.status, 200, r.body.toString('utf8', 0, 300));
      assert.equal(v.parse(EventListSchema, JSON.parse(r.body.toString('utf8'))).events.length, 1);
    });

    test('a control character in a forwarded header value is 400 invalid_parameter; elsewhere, or a tab, is served', async () => {
      for (const [name, value] of [
        ['Authorization', `Bearer ${srv.key}\x01`],
        ['If-None-Match', '"abc\x01"'],
        ['Accept', 'application/json\x1f'],
        ['Accept-Encoding', 'gzip\x0b'],
      ] as const) {
        const req = `GET /v1/events?limit=1 HTTP/1.1\r\nHost: api.example\r\n${name === 'Authorization' ? '' : `Authorization: Bearer ${srv.key}\r\n`}${name}: ${value}\r\nConnection: close\r\n\r\n`;
        const p = rawProblem(await exchange(front.port, req), 'invalid_parameter', 400, `${name} with a control character`);
        assert.match(p.detail, /control character/, name);
      }
      // A Host nginx refuses itself: its own 400, as problem+json.
      rawProblem(
        await exchange(front.port, `GET /v1/events HTTP/1.1\r\nHost: api\x01example\r\nConnection: close\r\n\r\n`),
        'invalid_parameter',
        400,
        'Host with a control character',
      );
      for (const extra of ['X-Not-Forwarded: a\x01b\r\n', 'Accept: application/json,\t*/*\r\n']) {
        const r = await exchange(front.port, get(extra));
        assert.equal(r.status, 200, `${JSON.stringify(extra)}: ${r.body.toString('utf8', 0, 200)}`);
      }
    });

    test('methods: QUERY, POST and TRACE are 405 with Allow; lower-case get is 400', async () => {
      for (const req of [
        'QUERY /v1/events HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n',
        // An extension nginx's mime types know: the problem is still problem+json.
        'QUERY /v1/events.csv HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n',
        'POST /v1/events HTTP/1.1\r\nHost: api.example\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
        'TRACE /v1/events HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n',
      ]) {
        const r = await exchange(front.port, req);
        rawProblem(r, 'method_not_allowed', 405, req.split(' ')[0] ?? '');
        assert.equal(r.headers.get('allow'), 'GET, HEAD');
      }
      rawProblem(
        await exchange(front.port, 'get /v1/events HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n'),
        'invalid_parameter',
        400,
        'lower-case get',
      );
    });

    test('a GET with a body is served without it, and the upstream connection stays in step; over 1 KiB is 400', async () => {
      const direct = await ask(srv.base, '/v1/events?limit=2', auth(srv.key));
      const conn = await RawConnection.open(front.port);
      try {
        const start = `GET /v1/events?limit=2 HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${srv.key}\r\n`;
        let kept = new Set<number>();
        for (const [what, req] of [
          ['Content-Length body', `${start}Content-Length: 5\r\n\r\nhello`],
          ['chunked body', `${start}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`],
          ['no body', `${start}\r\n`],
        ] as const) {
          conn.send(req);
          const r = await conn.read();
          assert.equal(r.status, 200, `${what}: ${r.body.toString('utf8', 0, 200)}`);
          assert.ok(r.body.equals(direct.bytes), `${what}: the direct answer`);
          if (kept.size === 0) kept = new Set((await front.upstream()).map((u) => u.localPort));
        }
        for (const u of await front.upstream())
          assert.ok(kept.has(u.localPort), 'the server closed the upstream connection: it was sent a body it was not given');
      } finally {
        conn.destroy();
      }
      const big = await exchange(
        front.port,
        `GET /v1/events HTTP/1.1\r\nHost: api.example\r\nContent-Length: 2048\r\nConnection: close\r\n\r\n${'x'.repeat(2048)}`,
      );
      rawProblem(big, 'invalid_parameter', 400, 'a 2 KiB body');
    });

    test('an oversized URL is 414 request_too_large, from the server or from nginx', async () => {
      // Over the server's 8 KiB: the server answers; over nginx's 16 KiB request line: nginx does.
      for (const size of [9 * 1024, 20 * 1024]) {
        const p = rawProblem(await exchange(front.port, get('', `/v1/events?q=${'a'.repeat(size)}`)), 'request_too_large', 414, `a ${size}-byte URL`);
        assert.match(p.detail, /8192/, `${size}: the detail names the limit`);
      }
    });

    test('oversized headers are 431 request_too_large, from the server or from nginx', async () => {
      // Two forwarded headers of 9 KiB: nginx passes them, the server counts 18 KiB over its 16 KiB.
      const p = rawProblem(
        await exchange(front.port, get(`Accept: ${'a'.repeat(9 * 1024)}\r\nIf-None-Match: "${'b'.repeat(9 * 1024)}"\r\n`)),
        'request_too_large',
        431,
        '18 KiB of forwarded headers',
      );
      assert.match(p.detail, /16384/);
      // One header line of 20 KiB is more than nginx holds.
      const n = rawProblem(await exchange(front.port, get(`X-Big: ${'c'.repeat(20 * 1024)}\r\n`)), 'request_too_large', 431, 'a 20 KiB header line');
      assert.match(n.detail, /16384/);
    });

    test('the server down is 503 unavailable with Retry-After, for GET and HEAD', async () => {
      const g = await ask(deadFront.base, '/v1/events?limit=1', auth(srv.key));
      assertProblem(g.status, (n) => header(g, n), g.bytes, 'unavailable', 503, 'GET, upstream down');
      assert.match(header(g, 'retry-after') ?? '', /^[1-9]\d*$/);
      const h = await ask(deadFront.base, '/v1/events?limit=1', auth(srv.key), 'HEAD');
      assert.equal(h.status, 503);
      assert.equal(h.bytes.length, 0);
      assert.match(header(h, 'retry-after') ?? '', /^[1-9]\d*$/);
    });
  });

  describe('the client address', () => {
    test('forged X-Forwarded-For values share the address nginx saw: one demo rate-limit bucket', async () => {
      const demo = '/v1/demo/events?limit=1';
      const statuses: number[] = [];
      for (let i = 1; i <= DEMO_RATE + 1; i++) {
        const a = await ask(bigFront.base, demo, { 'x-forwarded-for': `198.51.100.${i}` });
        statuses.push(a.status);
        if (i > DEMO_RATE) {
          assertProblem(a.status, (n) => header(a, n), a.bytes, 'rate_limited', 429, `call ${i}`);
          assert.match(header(a, 'retry-after') ?? '', /^[1-9]\d*$/);
        }
      }
      assert.deepEqual(statuses, [...Array<number>(DEMO_RATE).fill(200), 429], 'the forged addresses did not earn buckets of their own');
      // Without nginx the same forged header would be believed (TRUST_PROXY): a bucket of its own...
      assert.equal((await ask(big.base, demo, { 'x-forwarded-for': '198.51.100.200' })).status, 200, 'a forged last hop, directly');
      // ...and nginx's own address is the bucket its calls used.
      assert.equal((await ask(big.base, demo, { 'x-forwarded-for': '127.0.0.1' })).status, 429, "nginx's address, directly");
    });

    test('the access log has each request, but not the query string nor Authorization (which may carry a key)', async () => {
      const lines = async (): Promise<string[]> => (await front.accessLog()).split('\n').filter(Boolean);
      const before = (await lines()).length;
      assert.equal((await ask(front.base, `/v1/events?limit=1&api_key=${srv.key}`)).status, 200);
      assert.equal((await ask(front.base, '/v1/events?limit=2', auth(srv.key))).status, 200);
      // nginx logs once the answer is out: the lines may land just after the client has it.
      let added: string[] = [];
      for (let poll = 0; added.length < 2; poll++) {
        assert.ok(poll < 100, `the two requests were not logged: ${added.join('\n')}`);
        added = (await lines()).slice(before);
        if (added.length < 2) await delay(20);
      }
      assert.equal(added.length, 2, added.join('\n'));
      for (const line of added) {
        assert.match(line, /^127\.0\.0\.1 \[[^\]]+\] "GET \/v1\/events HTTP\/1\.1" 200 \d+ /, line);
        assert.ok(!line.includes(srv.key), `the key is in the access log: ${line}`);
        assert.ok(!line.includes('limit='), `the query string is in the access log: ${line}`);
      }
    });
  });
});
