// No secret in any log nginx or the server writes, whatever fails (issue 26 item 4). Real nginx with
// the shipped site (its main error log at `info`, more than Debian's default `error`: the site must
// hold against it) in front of the real server, of a port nothing listens on, and of a fake upstream
// that fails on purpose, and with TLS on (plain HTTP to its port, failed handshakes, the upstream
// down, a client leaving). Every request carries a known key in the query string and in
// Authorization, a session cookie, and a sign-in or invitation token in its query string; after the
// fault tests, every file in nginx's log directory and every line the server logged is searched for
// each secret. nginx adds `request: "<request line>"` and `upstream: "<url>"` to each error it logs
// about a request, so before the site's own `error_log … crit` the first fault wrote the key there.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { DEBIAN_HTTP, findNginx, startNginx, type Nginx } from '../../bench/lib/nginx.ts';
import { freePort } from '../ports.ts';
import { nginxSkip, requireNginx, testCertificate, type TestCertificate } from './nginx.ts';
import { sampleFixture, startTestServer, type Fixture, type TestServer } from '../server/helpers.ts';

const NGINX = findNginx();
/** How long any one answer may take before the test calls it lost (the upstream read timeout is 30 s). */
const ANSWER_MS = 45_000;

// The secrets, each unique to this run so a hit cannot be anything else.
const random = (n: number): string => randomBytes(n).toString('base64url');
const SESSION = random(24);
const SIGN_IN_TOKEN = random(24);
const INVITE_TOKEN = random(24);

/** What a client got on a raw socket: the status line's code, or null when the connection closed first. */
interface Got {
  readonly status: number | null;
  readonly bytes: number;
}

/**
 * Writes `req` byte for byte on a connection of its own and reads until the peer closes it (every
 * request here says Connection: close) or `abortAfter` bytes have come (then the client leaves);
 * over TLS with `tls` (a handshake that fails ends it with no status).
 */
function rawRequest(port: number, req: string, opts: { abortAfter?: number; abortWhen?: Promise<unknown>; tls?: tls.ConnectionOptions } = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const send = (): void => void s.write(Buffer.from(req, 'latin1'));
    const s = opts.tls ? tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ...opts.tls }, send) : net.connect({ host: '127.0.0.1', port }, send);
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no end of the answer within ${ANSWER_MS} ms: ${req.slice(0, 80)}`));
    }, ANSWER_MS);
    const done = (): void => {
      clearTimeout(timer);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(buf.toString('latin1', 0, 20));
      resolve({ status: m ? Number(m[1]) : null, bytes: buf.length });
    };
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (opts.abortAfter !== undefined && buf.length >= opts.abortAfter) s.destroy();
    });
    void opts.abortWhen?.then(() => s.destroy());
    s.on('close', done);
    s.on('error', () => undefined);
  });
}

/**
 * An upstream that fails as the request's path says: /fault/close-mid-answer sends a head and part
 * of the body then closes, /fault/close-before-answer closes on the request, /fault/garbage answers
 * a head nginx refuses (a NUL in a header), /fault/silent never answers (the client leaves, or nginx times out).
 */
class FaultyUpstream {
  readonly received: string[] = [];
  private readonly server = net.createServer((c) => this.serve(c));
  private readonly waiters: { path: string; resolve: () => void }[] = [];
  private readonly open = new Set<net.Socket>();

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Resolves once a request for `p` has reached this upstream. */
  reached(p: string): Promise<void> {
    if (this.received.some((r) => r.startsWith(`GET ${p}`))) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ path: p, resolve }));
  }

  private serve(c: net.Socket): void {
    this.open.add(c);
    c.on('close', () => this.open.delete(c));
    c.on('error', () => undefined);
    let head = '';
    c.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const line = head.slice(0, head.indexOf('\r\n'));
      head = '';
      this.received.push(line);
      for (const w of this.waiters.filter((w) => line.startsWith(`GET ${w.path}`))) w.resolve();
      const p = line.split(' ')[1] ?? '';
      if (p.startsWith('/fault/close-mid-answer')) {
        c.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"events":[');
        setImmediate(() => c.destroy());
      } else if (p.startsWith('/fault/close-before-answer')) {
        c.destroy();
      } else if (p.startsWith('/fault/garbage')) {
        c.end('HTTP/1.1 200 OK\r\nX-Bad\x00: x\r\n\r\n');
      }
      // /fault/silent: nothing, ever.
    });
  }

  async close(): Promise<void> {
    for (const c of this.open) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Every file in nginx's log directory (under its prefix, `-p`, read from its command line). */
async function nginxLogs(n: Nginx): Promise<Map<string, string>> {
  // nginx rewrites its title: "nginx: master process /usr/sbin/nginx -p <prefix>/ -c …".
  const prefix = / -p (\S+)/.exec((await readFile(`/proc/${n.pid}/cmdline`, 'utf8')).replaceAll('\0', ' '))?.[1];
  assert.ok(prefix, `nginx ${n.pid} was started without -p`);
  const dir = path.join(prefix, 'logs');
  const out = new Map<string, string>();
  for (const name of await readdir(dir)) out.set(path.join(dir, name), await readFile(path.join(dir, name), 'latin1'));
  return out;
}

describe('no secret in any log, whatever fails (nginx and the server)', { skip: nginxSkip(NGINX) }, () => {
  let fx: Fixture;
  let srv: TestServer;
  let faulty: FaultyUpstream;
  /** In front of the real server, of a port nothing listens on, and of the faulty upstream. */
  let front: Nginx;
  let dead: Nginx;
  let broken: Nginx;
  /** The site with TLS on (its `listen 443 ssl` lines), in front of the real server and of nothing. */
  let tlsFront: Nginx;
  let tlsDead: Nginx;
  let cert: TestCertificate;
  let key: string;

  before(async () => {
    const bin = requireNginx(NGINX);
    fx = await sampleFixture();
    srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
    key = srv.key;
    faulty = new FaultyUpstream();
    const faultyPort = await faulty.listen();
    // The main error log at `info` (Debian's is at `error`): the site's own log must keep secrets out.
    const opts = { http: DEBIAN_HTTP, errorLogLevel: 'info' } as const;
    front = await startNginx(bin, [srv.server.port], opts);
    dead = await startNginx(bin, [await freePort()], opts);
    broken = await startNginx(bin, [faultyPort], opts);
    cert = await testCertificate();
    const withTls = { ...opts, tls: { certFile: cert.certFile, keyFile: cert.keyFile } };
    tlsFront = await startNginx(bin, [srv.server.port], withTls);
    tlsDead = await startNginx(bin, [await freePort()], withTls);
  });

  after(async () => {
    await Promise.all([front?.stop(), dead?.stop(), broken?.stop(), tlsFront?.stop(), tlsDead?.stop()]);
    await cert?.cleanup();
    await faulty?.close();
    await srv?.stop();
    await fx?.cleanup();
  });

  /** A request as a browser or a client library would send it, every secret in place. */
  const request = (target: string, extra = ''): string => {
    // The server refuses a key given both ways: Authorization only when the query has none.
    const auth = target.includes('api_key=') ? '' : `Authorization: Bearer ${key}\r\n`;
    return `GET ${target} HTTP/1.1\r\nHost: api.example\r\n${auth}Cookie: fe_session=${SESSION}; fe_pre=${SESSION}\r\n${extra}Connection: close\r\n\r\n`;
  };
  /** Targets whose query strings carry the key or a token, on a given path prefix. */
  const targets = (p: string): string[] => [`${p}?api_key=${key}&limit=2`, `${p}?token=${SIGN_IN_TOKEN}`, `${p}?limit=1&token=${INVITE_TOKEN}`];

  test('the fault tests run, and every log nginx and the server wrote is searched for each secret', async () => {
    // nginx waits 30 s (proxy_read_timeout) for a silent server: started first, awaited last.
    const timedOut = rawRequest(broken.port, request(`/fault/silent/timeout?api_key=${key}&token=${SIGN_IN_TOKEN}`));

    const statuses: [string, number | null][] = [];
    const run = async (what: string, port: number, req: string, opts?: Parameters<typeof rawRequest>[2]): Promise<void> => {
      statuses.push([what, (await rawRequest(port, req, opts)).status]);
    };

    // What succeeds: the website's sign-in and invitation links, the API with the key both ways.
    for (const t of [`/account/confirm?token=${SIGN_IN_TOKEN}`, `/account/invite?token=${INVITE_TOKEN}`, ...targets('/v1/events')]) {
      await run(`served ${t.split('?')[0]}`, front.port, request(t));
    }
    // The upstream down: nginx's "connect() failed … while connecting to upstream".
    for (const t of [`/account/confirm?token=${SIGN_IN_TOKEN}`, `/account/invite?token=${INVITE_TOKEN}`, ...targets('/v1/events')]) {
      await run('upstream down', dead.port, request(t));
    }
    // The upstream closes before answering, mid-answer, or answers a head nginx refuses.
    for (const fault of ['close-before-answer', 'close-mid-answer', 'garbage']) {
      for (const t of targets(`/fault/${fault}`)) await run(fault, broken.port, request(t));
    }
    // The client leaves while the upstream works on its request ...
    for (const t of targets('/fault/silent/abort')) {
      await run('client abort (upstream working)', broken.port, request(t), { abortWhen: faulty.reached(t) });
    }
    // ... and in the middle of a streamed export from the real server.
    await run('client abort (mid-export)', front.port, request('/v1/events.csv?limit=10000'), { abortAfter: 16 * 1024 });
    // Malformed requests nginx refuses itself, each with the secrets in its request line or headers.
    const target = `/v1/events?api_key=${key}&token=${SIGN_IN_TOKEN}`;
    const malformed: [string, string][] = [
      ['lower-case method', request(target).replace(/^GET/, 'get')],
      ['unknown method', request(target).replace(/^GET/, 'QUERY')],
      ['control character in Authorization', request('/v1/events').replace(`Bearer ${key}`, `Bearer ${key}\x01`)],
      ['space before a colon', request(target, 'Transfer-Encoding : chunked\r\n')],
      ['duplicate Content-Length', request(target, 'Content-Length: 0\r\nContent-Length: 5\r\n')],
      ['a header line without a colon', request(target, `X-Token ${SIGN_IN_TOKEN}\r\n`)],
      ['a body over the limit', request(target, 'Content-Length: 1048576\r\n')],
      ['HTTP/2.0 on an HTTP/1 port', request(target).replace('HTTP/1.1', 'HTTP/2.0')],
      ['request line over 16 KiB', request(`${target}&q=${'a'.repeat(20 * 1024)}`)],
      ['header line over 16 KiB', request(target, `Cookie: fe_session=${SESSION}; pad=${'b'.repeat(20 * 1024)}\r\n`)],
      ['64 KiB of headers', request(target, Array.from({ length: 8 }, (_, i) => `X-Pad-${i}: ${'c'.repeat(12 * 1024)}\r\n`).join(''))],
    ];
    for (const [what, req] of malformed) await run(what, front.port, req);
    // Over TLS: served, the upstream down, a client leaving mid-export, plain HTTP sent to the TLS
    // port, and handshakes that fail (an untrusted certificate, TLS 1.0).
    const trusted = { ca: cert.pem };
    await run('served over TLS', tlsFront.port, request(`/v1/events?api_key=${key}&limit=1`), { tls: trusted });
    await run('upstream down over TLS', tlsDead.port, request(`/account/confirm?token=${SIGN_IN_TOKEN}`), { tls: trusted });
    await run('client abort over TLS', tlsFront.port, request('/v1/events.csv?limit=10000'), { tls: trusted, abortAfter: 16 * 1024 });
    await run('plain HTTP to the TLS port', tlsFront.port, request(`/v1/events?api_key=${key}&token=${INVITE_TOKEN}`));
    await run('untrusted certificate', tlsFront.port, request(`/v1/events?api_key=${key}`), { tls: { ca: [] } });
    await run('TLS 1.0', tlsFront.port, request(`/v1/events?api_key=${key}`), { tls: { ...trusted, minVersion: 'TLSv1', maxVersion: 'TLSv1' } });

    statuses.push(['upstream timed out', (await timedOut).status]);

    // Each fault happened as intended: a status from nginx (503 for an upstream that failed before
    // its head, 400/405/413/414/431/505 for what nginx refused), a cut answer, or none (the client left).
    const byWhat = new Map(statuses);
    // The server answers these itself: an unknown token is the website's 400 page, a key sent twice a 400 problem.
    const served = statuses.filter(([w]) => w.startsWith('served'));
    for (const [what, s] of served) assert.ok(s !== null && s < 500, `${what}: ${s}`);
    assert.ok(
      served.some(([, s]) => s === 200),
      'a request with the key was served',
    );
    for (const what of ['upstream down', 'close-before-answer', 'garbage', 'upstream timed out', 'upstream down over TLS'])
      assert.equal(byWhat.get(what), 503, what);
    assert.equal(byWhat.get('served over TLS'), 200, 'served over TLS');
    assert.equal(byWhat.get('plain HTTP to the TLS port'), 400, 'plain HTTP to the TLS port');
    for (const what of ['untrusted certificate', 'TLS 1.0']) assert.equal(byWhat.get(what), null, `${what}: no answer`);
    assert.equal(byWhat.get('close-mid-answer'), 200, 'a head, then the connection cut');
    for (const [what] of malformed) {
      const s = byWhat.get(what) ?? 0;
      assert.ok((s >= 400 && s < 500) || s === 505, `${what}: ${s}`);
    }

    // nginx writes the access log when a request ends; the aborted ones may land a moment later.
    const logged = async (): Promise<number> => (await front.readLog('family-events.access.log')).split('\n').filter(Boolean).length;
    for (let poll = 0; (await logged()) < 5 + malformed.length; poll++) {
      assert.ok(poll < 100, 'the requests never reached the access log');
      await delay(20);
    }
    await delay(100);

    const logs = new Map<string, string>();
    for (const n of [front, dead, broken, tlsFront, tlsDead]) for (const [file, text] of await nginxLogs(n)) logs.set(file, text);
    logs.set('the server (pino)', srv.logs.map((l) => JSON.stringify(l)).join('\n'));
    const secrets: [string, string][] = [
      ['the API key', key],
      ['the session cookie', SESSION],
      ['the sign-in token', SIGN_IN_TOKEN],
      ['the invitation token', INVITE_TOKEN],
    ];
    for (const [file, text] of logs) {
      for (const [what, secret] of secrets) {
        const at = text.indexOf(secret);
        assert.equal(at, -1, `${what} is in ${file}: …${text.slice(Math.max(0, at - 200), at + 60)}…`);
      }
      assert.doesNotMatch(text, /(?:api_key|token)=[^&\s"]/, `a query string is in ${file}`);
    }

    // Failures stay visible without them: the access logs name the upstream and what it did.
    const access = async (n: Nginx): Promise<string> => n.readLog('family-events.access.log');
    assert.match(
      await access(dead),
      /"GET \/v1\/events HTTP\/1\.1" 503 \d+ [\d.]+ upstream=127\.0\.0\.1:\d+ 502 /,
      'the upstream down: the path asked, its address and 502',
    );
    assert.match(
      await access(broken),
      /"GET \/fault\/silent\/timeout HTTP\/1\.1" 503 \d+ [\d.]+ upstream=127\.0\.0\.1:\d+ 504 /,
      'the upstream timed out: 504',
    );
    assert.match(
      await access(broken),
      /"GET \/fault\/close-mid-answer HTTP\/1\.1" 200 11 [\d.]+ upstream=127\.0\.0\.1:\d+ 200 [\d.]+ 11 length=1000$/m,
      'an answer cut mid-body: 11 bytes of the 1000 announced',
    );
    assert.match(await access(front), / 200 (\d+) [\d.]+ upstream=127\.0\.0\.1:\d+ 200 [\d.]+ \1 length=\1$/m, 'a whole answer: every byte announced');
    assert.match(await access(front), /"get \/v1\/events -" 400 \d+ [\d.]+ upstream=- - - - length=\d+$/m, 'what nginx answers itself names no upstream');
    // The server logged the requests it served (so its output was searched, not empty).
    assert.ok(
      srv.logs.some((l) => l.route === 'web:/account/confirm'),
      'the server logged the sign-in link',
    );
    assert.ok(
      srv.logs.some((l) => l.aborted === true),
      'the server logged the abandoned export',
    );
  });
});
