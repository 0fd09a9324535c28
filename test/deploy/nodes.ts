// API nodes as real processes for the tests of several nodes: `family-events serve` on fresh
// loopback ports, on a DATA_DIR (the shared snapshot volume) and a DATABASE_URL, resolved once
// /readyz says 200 (or, with `ready: false`, once it answers at all).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { REPO_ROOT } from '../../core/config.ts';
import { freePort } from '../ports.ts';
import { NOW_ISO } from '../server/helpers.ts';

const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');

export interface ApiNode {
  readonly name: string;
  readonly port: number;
  readonly adminPort: number;
  readonly base: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  output(): string;
  alive(): boolean;
}

export interface NodeOptions {
  readonly name: string;
  readonly dataDir: string;
  readonly databaseUrl: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Wait for /readyz 200 (default) or only for the listener (a node started while PostgreSQL is down). */
  readonly ready?: boolean;
  /** The ports of a node being restarted (the load balancer knows it there); fresh ones by default. */
  readonly ports?: { readonly port: number; readonly adminPort: number } | undefined;
}

export async function startNode(o: NodeOptions): Promise<ApiNode> {
  const port = o.ports?.port ?? (await freePort());
  let adminPort = o.ports?.adminPort ?? (await freePort());
  while (adminPort === port) adminPort = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: o.dataDir,
      DATABASE_URL: o.databaseUrl,
      NODE_NAME: o.name,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      FAMILY_EVENTS_NOW: NOW_ISO,
      POOL_THREADS: '1',
      PG_POOL_MAX: '3',
      LOG_LEVEL: 'warn',
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // Both pipes are drained, or a chatty node would block on a full pipe.
  for (const s of [child.stdout, child.stderr]) s?.on('data', (c: Buffer) => (out = (out + c.toString('utf8')).slice(-6000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const node: ApiNode = { name: o.name, port, adminPort, base: `http://127.0.0.1:${port}`, child, exited, output: () => out, alive };
  // A hang guard, not a timing assertion.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!alive()) throw new Error(`${o.name} exited before it was ready: ${out}`);
    const r = await fetch(`${node.base}/readyz`).catch(() => null);
    await r?.arrayBuffer();
    if (r && (r.status === 200 || o.ready === false)) return node;
    if (Date.now() > deadline) throw new Error(`${o.name} never became ready: ${out}`);
    await delay(100);
  }
}

/** SIGTERM (drain) every node still running, and wait for them all. */
export async function stopNodes(nodes: readonly ApiNode[]): Promise<void> {
  for (const n of nodes) if (n.alive()) n.child.kill('SIGTERM');
  await Promise.all(nodes.map((n) => n.exited));
}
