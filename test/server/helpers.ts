// Shared by the server tests: a real snapshot built by the pipeline from the bundled sample, a real
// server on a loopback port (port 0), and the snapshot's full record list for test-local oracles.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { DuckDBInstance } from '@duckdb/node-api';
import { request } from 'undici';
import { loadConfig, REPO_ROOT, type Config } from '../../core/config.ts';
import { startServer, type RunningServer } from '../../server/start/main.ts';
import { buildSnapshot, type BuildResult } from '../../snapshot/build/build.ts';
import { AccountsDb } from '../../ledger/sqlite/store.ts';
import type { Manifest } from '../../snapshot/store.ts';
import { provisionKeyIn } from '../ledger.ts';
import { checkIfFeed } from './readers.ts';
import type { Plan } from '../../ledger/accounts.ts';

/** The pinned clock of every server test: a Saturday morning in Pacific time. */
export const NOW_ISO = '2026-11-21T09:00:00-08:00';
/** startTestServer's env for a server whose test needs two query threads (each must switch snapshots alike). */
export const TWO_THREADS = { POOL_THREADS: '2' } as const;
export const NOW = new Date(NOW_ISO);
export const WEB = 'https://web.example';
export const PUBLIC = 'https://api.example';

/** What a test sees of the snapshot: every row with the filter columns a search reads. */
export interface OracleRow {
  readonly id: string;
  readonly rid: number;
  readonly title: string;
  readonly start_ms: number;
  readonly end_ms: number;
  readonly start_datetime: string;
  readonly end_datetime: string | null;
  readonly venue_city: string;
  readonly venue_lat: number;
  readonly venue_lng: number;
  readonly categories: string[];
  readonly tags: string[];
  readonly is_free: boolean;
  readonly age_min_months: number | null;
  readonly age_max_months: number | null;
  readonly description: string | null;
  readonly summary: string | null;
  readonly venue_name: string;
  readonly organizer: string | null;
}

export interface Fixture {
  readonly dataDir: string;
  readonly build: BuildResult;
  /** Every event of the snapshot, read straight from its Parquet file (not through the server). */
  readonly rows: readonly OracleRow[];
  cleanup(): Promise<void>;
}

/**
 * The bundled sample built into a fresh DATA_DIR of its own. The build is real (buildSnapshot, as
 * the CLI runs it) but made once per `now` and per state of what it reads (BUILD_INPUTS), then
 * copied: ~6 s a build, asked for by some fifty test files, was a sixth of the suite's time.
 */
export async function sampleFixture(now: Date = NOW): Promise<Fixture> {
  const built = await sampleBuild(now);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fe-server-'));
  // verbatimSymlinks: snapshots/current is relative (its snapshot's id) and must stay so.
  await cp(built.dataDir, dataDir, { recursive: true, verbatimSymlinks: true });
  const build: BuildResult = { manifest: built.manifest, dir: path.join(dataDir, path.relative(built.dataDir, built.dir)) };
  return { dataDir, build, rows: built.rows, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
}

/** What a sample build reads: its code, its SQL, the registry and gazetteer, and the DuckDB it writes with. */
const BUILD_INPUTS = ['core', 'snapshot', 'sql', 'sources', 'package-lock.json'];

interface SampleBuild {
  readonly dataDir: string;
  readonly dir: string;
  readonly manifest: Manifest;
  readonly rows: OracleRow[];
}

async function inputsDigest(now: Date): Promise<string> {
  const h = createHash('sha256').update(now.toISOString());
  const files: string[] = [];
  for (const input of BUILD_INPUTS) {
    const at = path.join(REPO_ROOT, input);
    if ((await stat(at)).isFile()) files.push(input);
    else
      for (const f of await readdir(at, { recursive: true, withFileTypes: true }))
        if (f.isFile()) files.push(path.relative(REPO_ROOT, path.join(f.parentPath, f.name)));
  }
  for (const f of files.sort()) h.update(`\0${f}\0`).update(await readFile(path.join(REPO_ROOT, f)));
  return h.digest('hex').slice(0, 24);
}

/**
 * The sample built for `now`, from the cache shared by test processes (under the OS's temporary
 * directory, keyed by inputsDigest), or built now and published there by an atomic rename; two
 * processes that build at once both finish, and the second rename loses harmlessly.
 */
async function sampleBuild(now: Date): Promise<SampleBuild> {
  const root = path.join(os.tmpdir(), 'fe-sample-builds');
  const home = path.join(root, await inputsDigest(now));
  const meta = path.join(home, 'build.json');
  const read = async (): Promise<SampleBuild | null> => {
    try {
      const kept = JSON.parse(await readFile(meta, 'utf8')) as Omit<SampleBuild, 'dataDir' | 'dir'> & { dir: string };
      return { ...kept, dataDir: path.join(home, 'data'), dir: path.join(home, 'data', kept.dir) };
    } catch {
      return null;
    }
  };
  const kept = await read();
  if (kept) return kept;
  await mkdir(root, { recursive: true });
  const work = await mkdtemp(path.join(root, 'building-'));
  const dataDir = path.join(work, 'data');
  const build = await buildSnapshot({ dataDir, registryFile: path.join(REPO_ROOT, 'sources', 'registry.json'), now });
  const rows = await readRows(path.join(build.dir, 'events.parquet'));
  await writeFile(path.join(work, 'build.json'), JSON.stringify({ manifest: build.manifest, dir: path.relative(dataDir, build.dir), rows }));
  try {
    await rename(work, home);
  } catch {
    await rm(work, { recursive: true, force: true });
  }
  const made = await read();
  assert.ok(made, `the sample build at ${home} has no build.json`);
  return made;
}

export async function readRows(parquet: string): Promise<OracleRow[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const r = await c.runAndReadAll(
    `SELECT id, file_row_number::INTEGER AS rid, title, start_ms::DOUBLE AS start_ms, end_ms::DOUBLE AS end_ms, start_datetime, end_datetime,
            venue_city, venue_lat, venue_lng, categories, tags, is_free, age_min_months, age_max_months, description, summary, venue_name, organizer
     FROM read_parquet('${parquet.replaceAll("'", "''")}', file_row_number = true) ORDER BY file_row_number`,
  );
  const rows = r.getRowObjectsJson() as unknown as OracleRow[];
  c.closeSync();
  db.closeSync();
  return rows;
}

/**
 * The plan of the key that search tests use by default: Community's exclusions without its cap or
 * request rate, so a suite can make thousands of searches. Plans are rows of data; this is one more.
 */
export const UNMETERED: Plan = {
  name: 'unmetered-community',
  monthlyRecordLimit: null,
  excludedCategories: ['festivals', 'seasonal'],
  attributionRequired: true,
  requestsPerMinute: 10_000_000,
};

/** Creates a key in a ledger directory's accounts store (as `family-events keys create` does); adds the plan first when given. */
export function provisionKey(
  ledgerDir: string,
  opts: { org?: string; plan?: string | Plan; email?: string } = {},
): { key: string; orgId: string; keyId: string } {
  const accounts = AccountsDb.open(ledgerDir);
  try {
    let planName = 'community';
    if (typeof opts.plan === 'string') planName = opts.plan;
    else if (opts.plan) {
      accounts.setPlan(opts.plan);
      planName = opts.plan.name;
    }
    const made = accounts.createKey(opts.org ?? `Test org ${Math.random().toString(36).slice(2)}`, opts.email ?? 'dev@test.example', planName);
    return { key: made.key, orgId: made.org.id, keyId: made.keyId };
  } finally {
    accounts.close();
  }
}

/** Server base URL → the key get() presents on live routes when the request brings none of its own. */
const defaultKeys = new Map<string, string>();
const LIVE_PATH = /^(?:\/api)?\/v1\/(?:events|usage|feed|changes|export)/;

export interface TestServer {
  readonly base: string;
  /** The key on the UNMETERED plan that get() presents on live routes by default. */
  readonly key: string;
  readonly adminBase: string;
  readonly server: RunningServer;
  readonly config: Config;
  /** Every log line the server wrote, parsed. */
  readonly logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * Starts the real server in-process on loopback ports chosen by the OS. `env` overrides the
 * defaults. Each server gets a ledger directory of its own (a ledger has one writer), unless
 * `env.LEDGER_DIR` names one; it is removed on stop() only when the helper made it. With
 * `env.DATABASE_URL` the server meters on that PostgreSQL database, and the default key is made there.
 */
export async function startTestServer(dataDir: string, env: Record<string, string> = {}): Promise<TestServer> {
  const ownLedger = env.LEDGER_DIR === undefined ? await mkdtemp(path.join(os.tmpdir(), 'fe-ledger-')) : null;
  const config = loadConfig({
    DATA_DIR: dataDir,
    ...(ownLedger ? { LEDGER_DIR: ownLedger } : {}),
    PORT: '0',
    ADMIN_PORT: '0',
    HOST: '127.0.0.1',
    FAMILY_EVENTS_NOW: NOW_ISO,
    WEB_BASE_URL: WEB,
    PUBLIC_BASE_URL: PUBLIC,
    // One query thread: most tests ask one thing at a time, and each thread costs ~0.6 s of CPU to
    // start. Tests of what several threads do (a snapshot switch every worker makes) ask for TWO_THREADS.
    POOL_THREADS: '1',
    LOG_LEVEL: 'info',
    ...env,
  });
  const logs: Record<string, unknown>[] = [];
  const stream = new PassThrough();
  let partial = '';
  stream.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8');
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  const { key } = await provisionKeyIn({ ledgerDir: config.ledgerDir, databaseUrl: config.database?.url ?? null }, { plan: UNMETERED, org: 'Search tests' });
  const server = await startServer(config, { logStream: stream });
  const base = `http://127.0.0.1:${server.port}`;
  defaultKeys.set(base, key);
  return {
    base,
    key,
    adminBase: `http://127.0.0.1:${server.adminPort}`,
    server,
    config,
    logs,
    stop: async () => {
      await server.stop();
      defaultKeys.delete(base);
      if (ownLedger) await rm(ownLedger, { recursive: true, force: true });
    },
  };
}

export interface Got {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of any route; tests narrow it with the response schemas
  readonly json: any;
}

/**
 * GET (or another method) over real HTTP; parses JSON bodies, and reads every feed with the
 * third-party readers of ./readers.ts (a feed they reject fails the test that fetched it). On a live route of a test server,
 * presents the server's default key unless the request carries an Authorization header (send
 * `authorization: ''` for none) or an api_key parameter of its own.
 */
export async function get(base: string, pathAndQuery: string, init: RequestInit = {}): Promise<Got> {
  const headers = new Headers(init.headers);
  const key = defaultKeys.get(base);
  if (key !== undefined && LIVE_PATH.test(pathAndQuery) && !headers.has('authorization') && !/[?&]api_key=/.test(pathAndQuery)) {
    headers.set('authorization', `Bearer ${key}`);
  }
  const res = await fetch(`${base}${pathAndQuery}`, { ...init, headers });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  if (init.method === undefined || init.method === 'GET') await checkIfFeed(res.status, type, text, `GET ${pathAndQuery}`);
  return { status: res.status, headers: res.headers, text, json: type.includes('json') && text ? JSON.parse(text) : null };
}

/** An answer's status, headers and body bytes exactly as they came off the wire (nothing decoded). */
export interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly bytes: Buffer;
}

export interface RawOptions {
  /** The key sent as a Bearer token; the server's default key when not given. */
  readonly key?: string;
  readonly headers?: Record<string, string>;
  readonly method?: 'GET' | 'HEAD';
}

/** A request through undici: no Accept-Encoding unless given, and bytes exactly as they came off the wire. */
export async function raw(server: Pick<TestServer, 'base' | 'key'>, pathAndQuery: string, opts: RawOptions = {}): Promise<Raw> {
  const res = await request(`${server.base}${pathAndQuery}`, {
    method: opts.method ?? 'GET',
    headers: { authorization: `Bearer ${opts.key ?? server.key}`, ...opts.headers },
  });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

/** A header of a Raw answer, repeated values joined by ", "; null when absent. */
export function rawHeader(r: Raw, name: string): string | null {
  const h = r.headers[name];
  if (h === undefined) return null;
  return Array.isArray(h) ? h.join(', ') : h;
}

/** The records.jsonl body of a row, as the snapshot stores it (for byte-level comparisons). */
export async function recordLines(build: BuildResult): Promise<string[]> {
  return (await readFile(path.join(build.dir, 'records.jsonl'), 'utf8')).split('\n').filter((l) => l !== '');
}

// ---------------------------------------------------------------- processes and metrics

const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');

/** `family-events snapshot build --json [args]` into `dataDir` with the clock pinned at `now`; its manifest. */
export async function buildInChild(dataDir: string, now: Date, args: readonly string[] = [], env: Record<string, string> = {}): Promise<Manifest> {
  const child = spawn(process.execPath, [BIN, 'snapshot', 'build', '--json', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, FAMILY_EVENTS_NOW: now.toISOString(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, `snapshot build failed: ${err}`);
  return JSON.parse(out) as Manifest;
}

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Prometheus text exposition → samples (comments skipped). */
export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    const head = line.slice(0, sp);
    const brace = head.indexOf('{');
    const labels: Record<string, string> = {};
    // {name="value",...} with backslash escapes in values, scanned by hand.
    for (let i = brace + 1; brace >= 0 && i < head.length && head[i] !== '}';) {
      const eq = head.indexOf('=', i);
      const name = head.slice(i, eq);
      let value = '';
      let j = eq + 2;
      for (; j < head.length && head[j] !== '"'; j++) value += (head[j] === '\\' ? head[++j] : head[j]) ?? '';
      labels[name] = value;
      i = head[j + 1] === ',' ? j + 2 : j + 1;
    }
    out.push({ name: brace < 0 ? head : head.slice(0, brace), labels, value: Number(line.slice(sp + 1)) });
  }
  return out;
}
