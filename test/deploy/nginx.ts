// nginx with the shipped site (deploy/nginx/family-events.conf) for the tests that put it in front
// of one server or several: bench/lib/nginx.ts starts it (found on PATH or where Debian puts it,
// from a generated nginx.conf that includes the shipped file with only the upstream servers, the
// listen port and the log directory substituted); this adds what the tests look at.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { findNginx, NGINX_SITE, nginxPids, startNginx as launch } from '../../bench/lib/nginx.ts';

export const SITE_TEXT = readFileSync(NGINX_SITE, 'utf8');

export { findNginx };

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
export async function startNginx(bin: string, upstreamPorts: number | readonly number[]): Promise<Nginx> {
  const ports = typeof upstreamPorts === 'number' ? [upstreamPorts] : upstreamPorts;
  const n = await launch(bin, ports, { http: WORSE_THAN_DEBIAN, workerConnections: 256, errorLogLevel: 'info' });
  return {
    port: n.port,
    base: n.base,
    upstream: () => upstreamSockets(n.pid, ports[0]!),
    errorLog: n.errorLog,
    accessLog: () => n.readLog('family-events.access.log'),
    stop: n.stop,
  };
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

