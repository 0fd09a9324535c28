// What uWS 20.30 mishandles when exposed directly (README › Why not expose the server directly), sent
// byte for byte on raw sockets through the shipped nginx site to the real server, with a recording
// relay between nginx and the server: nginx answers each itself, with a problem+json 400 like the
// site's other error answers, and not one byte of it reaches the server. The absolute-form target
// is the exception RFC 9112 §3.2.2 requires (a server MUST accept it): nginx serves it, and the
// server only ever sees the origin-form request nginx makes of it.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as v from 'valibot';
import { ERRORS } from '../../server/errors.ts';
import { ProblemSchema } from '../../server/schemas.ts';
import { freePort } from '../ports.ts';
import { findNginx, nginxSkip, requireNginx, startNginx, type Nginx } from './nginx.ts';
import { sampleFixture, startTestServer, type Fixture, type TestServer } from '../server/helpers.ts';

const NGINX = findNginx();
/** The bound on each answer: a request that gets none within it is a hang, and fails the test. */
const ANSWER_MS = 5000;

/** Everything nginx sends the server, as it passes: the server sees nothing else. */
class RecordingRelay {
  private bytes = '';
  private readonly open = new Set<net.Socket>();
  private readonly server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: this.target });
    for (const s of [client, upstream]) {
      this.open.add(s);
      s.on('close', () => this.open.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (d: Buffer) => {
      this.bytes += d.toString('latin1');
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => client.write(d));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });

  private readonly target: number;
  constructor(target: number) {
    this.target = target;
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  get received(): string {
    return this.bytes;
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** One raw exchange: every byte the peer sends until it closes, or ANSWER_MS (then the test fails: a hang). */
function exchange(port: number, req: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write(Buffer.from(req, 'latin1')));
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text, closed: false });
    }, ANSWER_MS);
    s.on('data', (c: Buffer) => (text += c.toString('latin1')));
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    s.on('error', () => undefined);
  });
}

describe('what uWS mishandles exposed directly, nginx answers itself (README › Why not expose the server directly)', { skip: nginxSkip(NGINX) }, () => {
  let fx: Fixture;
  let srv: TestServer;
  let relay: RecordingRelay;
  let front: Nginx;
  /** In front of a port nothing listens on. */
  let dead: Nginx;

  before(async () => {
    fx = await sampleFixture();
    srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
    relay = new RecordingRelay(srv.server.port);
    front = await startNginx(requireNginx(NGINX), await relay.listen());
    dead = await startNginx(requireNginx(NGINX), await freePort());
  });

  after(async () => {
    await Promise.all([front?.stop(), dead?.stop()]);
    await relay?.close();
    await srv?.stop();
    await fx?.cleanup();
  });

  // A whole second request as the body of the first: a server that framed the first by the wrong
  // length would answer it too (request smuggling).
  const smuggled = 'GET /v1/usage HTTP/1.1\r\nHost: api.example\r\n\r\n';
  const CASES: readonly (readonly [string, string])[] = [
    [
      'two different Content-Length fields',
      `GET /v1/events?limit=1 HTTP/1.1\r\nHost: api.example\r\nContent-Length: 0\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
    ],
    [
      'two equal Content-Length fields',
      `GET /v1/events?limit=1 HTTP/1.1\r\nHost: api.example\r\nContent-Length: ${smuggled.length}\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
    ],
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: api.example\r\n\r\n'],
    ['CONNECT host:443', 'CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\n'],
    [
      'Transfer-Encoding with a space before the colon',
      `GET /v1/events?limit=1 HTTP/1.1\r\nHost: api.example\r\nTransfer-Encoding : chunked\r\n\r\n${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`,
    ],
  ];

  for (const [what, req] of CASES) {
    test(`${what}: a 400 problem from nginx, the connection closed, nothing forwarded`, async () => {
      const before = relay.received.length;
      const { text, closed } = await exchange(front.port, req);
      assert.ok(closed, `no end of the answer within ${ANSWER_MS} ms (a hang): ${JSON.stringify(text.slice(0, 200))}`);
      const end = text.indexOf('\r\n\r\n');
      assert.ok(end > 0, `no answer at all: ${JSON.stringify(text)}`);
      const head = text.slice(0, end);
      const answers = text.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
      assert.equal(answers.length, 1, `one answer, not one per framing: ${JSON.stringify(text.slice(0, 400))}`);
      assert.match(head, /^HTTP\/1\.1 400 /, head);
      assert.match(head, /\r\ncontent-type: application\/problem\+json\r\n/i, head);
      assert.match(head, /\r\nx-content-type-options: nosniff(?:\r\n|$)/i, head);
      const p = v.parse(ProblemSchema, JSON.parse(text.slice(end + 4)));
      assert.equal(p.status, 400);
      assert.equal(p.code, 'invalid_parameter');
      assert.equal(p.title, ERRORS.invalid_parameter.title);
      assert.ok(p.detail.length > 10, 'a detail that says what to change');
      assert.equal(relay.received.length, before, `the server was sent: ${JSON.stringify(relay.received.slice(before, before + 300))}`);
    });
  }

  test('an absolute-form target (GET http://host/…): served, and the server is sent the origin form only', async () => {
    const before = relay.received.length;
    const req = `GET http://api.example/v1/events?limit=1 HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${srv.key}\r\nConnection: close\r\n\r\n`;
    const { text, closed } = await exchange(front.port, req);
    assert.ok(closed, `no end of the answer within ${ANSWER_MS} ms (a hang): ${JSON.stringify(text.slice(0, 200))}`);
    assert.match(text, /^HTTP\/1\.1 200 /, text.slice(0, 300));
    const sent = relay.received.slice(before);
    assert.match(sent, /^GET \/v1\/events\?limit=1 HTTP\/1\.1\r\n/, `what the server was sent: ${JSON.stringify(sent.slice(0, 200))}`);
    assert.doesNotMatch(sent, /http:\/\//, 'the absolute form reached the server');
  });

  test("X-Content-Type-Options: nosniff on nginx's own error answers, once, and on proxied answers (the server's)", async () => {
    const get = (target: string, extra = ''): string =>
      `GET ${target} HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${srv.key}\r\n${extra}Connection: close\r\n\r\n`;
    const cases: [string, number, string, number][] = [
      ['proxied 200', front.port, get('/v1/events?limit=1'), 200],
      ['proxied problem', front.port, get('/v1/events?nope=1'), 400],
      ['a method nginx refuses', front.port, 'QUERY /v1/events HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n', 405],
      ['a body over the limit', front.port, get('/v1/events', `Content-Length: 4096\r\n\r\n${'x'.repeat(4096)}`).replace(/\r\n\r\n$/, ''), 400],
      ['a URL over 16 KiB', front.port, get(`/v1/events?q=${'a'.repeat(20 * 1024)}`), 414],
      ['a header line over 16 KiB', front.port, get('/v1/events', `X-Big: ${'b'.repeat(20 * 1024)}\r\n`), 431],
      ['the server down', dead.port, get('/v1/events'), 503],
    ];
    for (const [what, port, req, status] of cases) {
      const { text } = await exchange(port, req);
      const head = text.slice(0, text.indexOf('\r\n\r\n'));
      assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${head}`);
      assert.equal(head.match(/\r\nx-content-type-options: nosniff(?=\r\n|$)/gi)?.length, 1, `${what}: one nosniff\n${head}`);
    }
  });
});
