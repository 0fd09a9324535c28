// nginx with the shipped site (deploy/nginx/family-events.conf) for the tests that put it in front
// of one server or several: bench/lib/nginx.ts starts it (found on PATH or where Debian puts it,
// from a generated nginx.conf that includes the shipped file with only the upstream servers, the
// listen port (or the site's TLS lines, with a test certificate made here) and the log directory
// substituted); this adds what the tests look at.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findNginx, NGINX_SITE, nginxPids, startNginx as launch } from '../../bench/lib/nginx.ts';
import { freePort } from '../ports.ts';
import { inCi } from '../server/web/browser.ts';

export const SITE_TEXT = readFileSync(NGINX_SITE, 'utf8');

export { findNginx };

/**
 * The `skip` option of a suite that needs nginx: a one-line reason outside CI when it is missing,
 * else false (in CI a missing nginx then fails the suite, with `requireNginx`'s message).
 */
export function nginxSkip(bin: string | null, env: NodeJS.ProcessEnv = process.env): string | false {
  return bin === null && !inCi(env) ? 'nginx is not installed: apt-get install -y nginx' : false;
}

/** The nginx binary, or a failure that says what to install (CI, where a missing nginx must not pass). */
export function requireNginx(bin: string | null): string {
  assert.ok(bin, 'nginx is not installed (CI installs it: apt-get install -y nginx)');
  return bin;
}

// ---------------------------------------------------------------- nginx

export interface Nginx {
  readonly port: number;
  readonly base: string;
  /** nginx's own established connections to its upstream. */
  upstream(): Promise<UpstreamSocket[]>;
  errorLog(): Promise<string>;
  accessLog(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * What Debian's nginx.conf gives the http block the site is included in (mime types, a default
 * type, gzip on), made worse (gzip for every type and size): the site has to hold against it.
 */
const WORSE_THAN_DEBIAN = [
  'types { application/json json; text/csv csv; application/rss+xml rss; text/html html; }',
  'default_type application/octet-stream;',
  'gzip on; gzip_types *; gzip_min_length 0; gzip_proxied any;',
];

/**
 * Starts nginx with the shipped site in front of `upstreamPorts` (several: nginx's round-robin over
 * API nodes), and waits until it accepts connections. `upstream()` sees the connections to the first.
 */
export async function startNginx(
  bin: string,
  upstreamPorts: number | readonly number[],
  o: { readonly tls?: TestCertificate; readonly port?: number; readonly siteErrorLogLevel?: 'warn' } = {},
): Promise<Nginx> {
  const ports = typeof upstreamPorts === 'number' ? [upstreamPorts] : upstreamPorts;
  const n = await launch(bin, ports, {
    http: WORSE_THAN_DEBIAN,
    workerConnections: 256,
    errorLogLevel: 'info',
    ...(o.port === undefined ? {} : { port: o.port }),
    ...(o.siteErrorLogLevel === undefined ? {} : { siteErrorLogLevel: o.siteErrorLogLevel }),
    ...(o.tls ? { tls: { certFile: o.tls.certFile, keyFile: o.tls.keyFile } } : {}),
  });
  return {
    port: n.port,
    base: n.base,
    upstream: () => upstreamSockets(n.pid, ports[0]!),
    errorLog: n.errorLog,
    accessLog: () => n.readLog('family-events.access.log'),
    stop: n.stop,
  };
}

/**
 * A server behind nginx over TLS, as the site is deployed with TLS: nginx first (its https origin is
 * the server's WEB_BASE_URL, and an identity provider must know the callback URL on it before the
 * server starts), in front of a port chosen for the server, which `start` then binds. Another
 * process may take that port in between: then, and only then, both are tried again.
 */
export async function behindNginx<S>(
  bin: string,
  cert: TestCertificate,
  start: (web: string, port: number) => Promise<S>,
): Promise<{ readonly srv: S; readonly front: Nginx }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const front = await startNginx(bin, port, { tls: cert });
    try {
      return { srv: await start(front.base, port), front };
    } catch (err) {
      await front.stop();
      if (attempt >= 3 || !/cannot listen/.test((err as Error).message)) throw err;
    }
  }
}

// ---------------------------------------------------------------- a test certificate

/** A self-signed certificate for 127.0.0.1 and localhost, made for one test file by openssl. */
export interface TestCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  /** The certificate (PEM): what a Node client is told to trust (`ca`). */
  readonly pem: string;
  /**
   * base64 of the SHA-256 of its SubjectPublicKeyInfo: chromium trusts exactly this key with
   * --ignore-certificate-errors-spki-list, and every other certificate error still fails.
   */
  readonly spki: string;
  cleanup(): Promise<void>;
}

export const OPENSSL = '/usr/bin/openssl';

/**
 * Makes the certificate in a temp directory of its own: a P-256 key (an RSA one takes a noticeable
 * fraction of a second), valid for two days, with 127.0.0.1 and localhost as its names, as the
 * browser checks them.
 */
export async function testCertificate(): Promise<TestCertificate> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  try {
    await promisify(execFile)(OPENSSL, [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${OPENSSL} could not make a test certificate: ${(err as Error).message}`, { cause: err });
  }
  const pem = await readFile(certFile, 'utf8');
  const der = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return { certFile, keyFile, pem, spki: createHash('sha256').update(der).digest('base64'), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------- the kernel's view of nginx's upstream connections

/** A TCP connection of nginx's worker to the server: its local port, and the bytes it has not read yet. */
export interface UpstreamSocket {
  readonly localPort: number;
  readonly unread: number;
}

/**
 * nginx's established connections to `upstreamPort`, seen from the kernel: the worker's socket
 * inodes (its /proc fd links) matched against /proc/net/tcp. Only nginx's own: the test's direct
 * connections to the server are not counted.
 */
async function upstreamSockets(masterPid: number, upstreamPort: number): Promise<UpstreamSocket[]> {
  const workers = (await nginxPids(masterPid)).filter((pid) => pid !== masterPid);
  assert.ok(workers.length > 0, `nginx (pid ${masterPid}) has no worker`);
  const inodes = new Set<string>();
  for (const pid of workers) {
    for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
      const m = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''));
      if (m?.[1]) inodes.add(m[1]);
    }
  }
  const out: UpstreamSocket[] = [];
  for (const line of (await readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const [, local, remote, state, queues, , , , , inode] = line.trim().split(/\s+/);
    if (state !== '01' || inode === undefined || !inodes.has(inode)) continue;
    if (parseInt(remote?.split(':')[1] ?? '', 16) !== upstreamPort) continue;
    out.push({ localPort: parseInt(local?.split(':')[1] ?? '', 16), unread: parseInt(queues?.split(':')[1] ?? '', 16) });
  }
  return out;
}
