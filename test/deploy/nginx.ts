// nginx with the shipped site (deploy/nginx/family-events.conf) for the tests that put it in front
// of one server or several: found on PATH (or where Debian puts it), started on a loopback port from
// a generated nginx.conf that includes the shipped file with only the upstream servers, the listen
// port and the log directory substituted.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { REPO_ROOT } from '../../server/config.ts';
import { findNginx, substitute } from '../../bench/lib/nginx.ts';
import { freePort } from '../ports.ts';

const SITE = path.join(REPO_ROOT, 'deploy', 'nginx', 'family-events.conf');
export const SITE_TEXT = readFileSync(SITE, 'utf8');

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
 * Starts nginx with the shipped site in front of `upstreamPorts` (several: nginx's round-robin over
 * API nodes), and waits until it accepts connections. `upstream()` sees the connections to the first.
 */
export async function startNginx(bin: string, upstreamPorts: number | readonly number[]): Promise<Nginx> {
  const ports = typeof upstreamPorts === 'number' ? [upstreamPorts] : upstreamPorts;
  const upstreamPort = ports[0]!;
  const prefix = await mkdtemp(path.join(os.tmpdir(), 'fe-nginx-'));
  const logs = path.join(prefix, 'logs');
  await mkdir(logs);
  await mkdir(path.join(prefix, 'temp'));
  const port = await freePort();
  let site = substitute(SITE_TEXT, 'server 127.0.0.1:8080;', ports.map((p) => `server 127.0.0.1:${p};`).join('\n    '));
  site = substitute(site, 'listen 80 default_server;', `listen 127.0.0.1:${port} default_server;`);
  site = substitute(site, '/var/log/nginx/', `${logs}/`);
  await writeFile(path.join(prefix, 'family-events.conf'), site);
  const temp = (name: string): string => `${name}_temp_path ${path.join(prefix, 'temp', name)};`;
  const conf = [
    'daemon off;',
    'worker_processes 1;',
    // As root, nginx hands its workers to `nobody`, who cannot enter the 0700 temp prefix; the
    // directive is ignored (with a notice) when the tests do not run as root.
    process.getuid?.() === 0 ? 'user root;' : '',
    `pid ${path.join(prefix, 'nginx.pid')};`,
    `error_log ${path.join(logs, 'error.log')} info;`,
    'events { worker_connections 256; }',
    'http {',
    `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
    // What Debian's nginx.conf gives the http block the site is included in (mime types, a default
    // type, gzip on), made worse (gzip for every type and size): the site has to hold against it.
    '  types { application/json json; text/csv csv; application/rss+xml rss; text/html html; }',
    '  default_type application/octet-stream;',
    '  gzip on; gzip_types *; gzip_min_length 0; gzip_proxied any;',
    `  access_log ${path.join(logs, 'http.access.log')};`,
    `  include ${path.join(prefix, 'family-events.conf')};`,
    '}',
    '',
  ].join('\n');
  const confFile = path.join(prefix, 'nginx.conf');
  await writeFile(confFile, conf);
  const child: ChildProcess = spawn(bin, ['-p', `${prefix}/`, '-c', confFile, '-e', path.join(logs, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    for (const e of ['exit', 'error']) child.once(e, () => ((exited = true), resolve()));
  });
  const readLog = (name: string): Promise<string> => readFile(path.join(logs, name), 'utf8').catch(() => '');

  const stop = async (): Promise<void> => {
    // SIGTERM: nginx's fast shutdown; the master takes its worker with it.
    if (!exited) child.kill('SIGTERM');
    await exit;
    await rm(prefix, { recursive: true, force: true });
  };

  // Up once it accepts a connection; bounded by a count of attempts, not a duration.
  for (let attempt = 0; ; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (exited || attempt > 200) {
      const why: string = `nginx ${exited ? 'exited at start' : `did not accept connections on ${port}`}: ${stderr}\n${await readLog('error.log')}`;
      await stop();
      assert.fail(why);
    }
    await delay(20);
  }
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    upstream: () => upstreamSockets(child.pid ?? 0, upstreamPort),
    errorLog: () => readLog('error.log'),
    accessLog: () => readLog('family-events.access.log'),
    stop,
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
  // The master's children: /proc/PID/stat is "pid (comm) state ppid …", and comm may hold spaces.
  const workers: string[] = [];
  for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === masterPid) workers.push(pid);
  }
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

