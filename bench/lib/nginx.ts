// nginx with the shipped site (deploy/nginx/family-events.conf) in front of one API node or several,
// for the benchmark of several nodes and for the tests (test/deploy/nginx.ts): the site as shipped,
// with only its upstream's `server` line (one per node: nginx's round-robin), its listen address
// (or, for TLS, its commented TLS lines uncommented with a test certificate) and its log directory
// substituted, included in an http block the caller describes (the bench:
// Debian's nginx.conf; the tests: a worse one the site must hold against).
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BenchError, freePort, REPO_ROOT, sleep } from './common.ts';

export const NGINX_SITE = path.join(REPO_ROOT, 'deploy', 'nginx', 'family-events.conf');

/** nginx on PATH or where Debian puts it; null when it is not installed (the tests use it too). */
export function findNginx(): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin']) {
    if (!dir) continue;
    const file = path.join(dir, 'nginx');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** What Debian's nginx.conf gives the http block the site is included in (the site turns gzip off). */
export const DEBIAN_HTTP: readonly string[] = [
  'sendfile on; tcp_nopush on;',
  'types { application/json json; text/csv csv; application/rss+xml rss; text/html html; }',
  'default_type application/octet-stream;',
  'gzip on;',
];

export interface Nginx {
  readonly base: string;
  readonly port: number;
  /** The master's pid; its workers are its children (nginxPids). */
  readonly pid: number;
  readonly workers: number;
  /** A file of its log directory ('' before it exists): error.log, family-events.access.log… */
  readLog(name: string): Promise<string>;
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

export interface NginxOptions {
  /** worker_processes (1 by default). */
  readonly workers?: number;
  /**
   * The http block's own directives, besides the temp paths, the access log and the site: what the
   * caller wants the site to be included in (Debian's defaults; the tests' worse ones).
   */
  readonly http: readonly string[];
  readonly workerConnections?: number;
  readonly errorLogLevel?: 'info' | 'notice' | 'warn' | 'error';
  /** The port to listen on (a free one by default): a caller that must name its origin first picks it. */
  readonly port?: number;
  /**
   * TLS only, as the site's commented TLS lines describe it: those lines uncommented with this
   * certificate (PEM files), and the plain listener left out. `base` is then https://.
   */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  /**
   * The site's own error log level instead of its shipped `crit` (which keeps request lines, and so
   * keys and tokens, out of it): a test that looks for one of nginx's warnings lowers it.
   */
  readonly siteErrorLogLevel?: 'info' | 'notice' | 'warn' | 'error';
}

/**
 * `from` must occur in the shipped site exactly once: a changed site fails here, not in a confusing
 * figure or answer.
 */
export function substitute(text: string, from: string, to: string): string {
  const n = text.split(from).length - 1;
  if (n !== 1) throw new BenchError(`deploy/nginx/family-events.conf must contain "${from}" exactly once (found ${n})`);
  return text.replace(from, to);
}

/**
 * Starts nginx with the shipped site in front of the nodes on `upstreamPorts` (several: nginx's
 * round-robin), in a prefix of its own under the temp directory, and resolves once it accepts
 * connections. Throws, with nginx's own words, when it does not start.
 */
export async function startNginx(bin: string, upstreamPorts: readonly number[], o: NginxOptions): Promise<Nginx> {
  const workers = o.workers ?? 1;
  const prefix = await mkdtemp(path.join(os.tmpdir(), 'fe-nginx-'));
  const logs = path.join(prefix, 'logs');
  await mkdir(logs);
  await mkdir(path.join(prefix, 'temp'));
  const port = o.port ?? (await freePort());
  let site = substitute(readFileSync(NGINX_SITE, 'utf8'), 'server 127.0.0.1:8080;', upstreamPorts.map((p) => `server 127.0.0.1:${p};`).join('\n    '));
  // The line itself, not the comments that name it (a line of the site starts with its indent).
  const plain = '\n    listen 80 default_server;';
  if (o.tls) {
    site = substitute(site, plain, '');
    site = substitute(site, '#listen 443 ssl default_server;', `listen 127.0.0.1:${port} ssl default_server;`);
    site = substitute(site, '#ssl_certificate /etc/ssl/certs/familyevents.example.pem;', `ssl_certificate ${o.tls.certFile};`);
    site = substitute(site, '#ssl_certificate_key /etc/ssl/private/familyevents.example.key;', `ssl_certificate_key ${o.tls.keyFile};`);
  } else {
    site = substitute(site, plain, `\n    listen 127.0.0.1:${port} default_server;`);
  }
  // The site's access log and its own error log, both under the prefix.
  if (!site.includes('/var/log/nginx/')) throw new BenchError('deploy/nginx/family-events.conf must write its logs under /var/log/nginx/');
  site = site.replaceAll('/var/log/nginx/', `${logs}/`);
  if (o.siteErrorLogLevel) site = substitute(site, 'family-events.error.log crit;', `family-events.error.log ${o.siteErrorLogLevel};`);
  await writeFile(path.join(prefix, 'family-events.conf'), site);
  const temp = (name: string): string => `${name}_temp_path ${path.join(prefix, 'temp', name)};`;
  const conf = [
    'daemon off;',
    `worker_processes ${workers};`,
    // As root, nginx hands its workers to `nobody`, who cannot enter the 0700 temp prefix; the
    // directive is ignored (with a notice) when not run as root.
    process.getuid?.() === 0 ? 'user root;' : '',
    `pid ${path.join(prefix, 'nginx.pid')};`,
    `error_log ${path.join(logs, 'error.log')} ${o.errorLogLevel ?? 'warn'};`,
    `events { worker_connections ${o.workerConnections ?? 1024}; }`,
    'http {',
    `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
    ...o.http.map((line) => `  ${line}`),
    `  access_log ${path.join(logs, 'http.access.log')};`,
    `  include ${path.join(prefix, 'family-events.conf')};`,
    '}',
    '',
  ].join('\n');
  const confFile = path.join(prefix, 'nginx.conf');
  await writeFile(confFile, conf);
  const child = spawn(bin, ['-p', `${prefix}/`, '-c', confFile, '-e', path.join(logs, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    for (const e of ['exit', 'error']) child.once(e, () => ((exited = true), resolve()));
  });
  const readLog = (name: string): Promise<string> => readFile(path.join(logs, name), 'utf8').catch(() => '');
  const stop = async (): Promise<void> => {
    // SIGTERM: nginx's fast shutdown (the master takes its workers with it), whatever is in flight.
    if (!exited) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(timer);
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
    if (exited || attempt > 250) {
      const why = `nginx ${exited ? 'exited at start' : `did not accept connections on ${port}`}: ${stderr}\n${await readLog('error.log')}`;
      await stop();
      throw new BenchError(why);
    }
    await sleep(20);
  }
  return {
    base: `${o.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    workers,
    readLog,
    errorLog: async () => (await readLog('error.log')) + (await readLog('family-events.error.log')),
    stop,
  };
}

/** The master and its workers (children by /proc/<pid>/stat's ppid). */
export async function nginxPids(master: number): Promise<number[]> {
  const out = [master];
  for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // "pid (comm) state ppid …": comm may hold spaces, so count from its closing parenthesis.
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === master) out.push(Number(pid));
  }
  return out;
}
