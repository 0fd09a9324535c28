// Operating the server over real HTTP: health and readiness, Prometheus metrics on the admin listener,
// the access log (and that no key ever reaches it), the response cache, overload answers, a snapshot
// hot swap under load, SIGTERM drain of a real process, and start-up refusal of bad configuration.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import * as v from 'valibot';
import { loadConfig, REPO_ROOT } from '../../core/config.ts';
import { CityListSchema, EventListSchema, HealthSchema, ProblemSchema } from '../../server/schemas.ts';
import {
  buildInChild,
  get,
  NOW,
  NOW_ISO,
  provisionKey,
  PUBLIC,
  readRows,
  sampleFixture,
  startTestServer,
  UNMETERED,
  WEB,
  parseProm,
  type Fixture,
  type Got,
  type OracleRow,
  type Sample,
  type TestServer,
  TWO_THREADS,
} from './helpers.ts';
import { freePort } from '../ports.ts';

const NOW_MS = NOW.getTime();
const DAY_MS = 24 * 60 * 60 * 1000;
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
/** The interim live plan (Community rules): events in these categories never appear. */
const EXCLUDED = new Set(['seasonal', 'festivals']);

// ---------------------------------------------------------------- oracles (from the Parquet rows)

const visible = (rows: readonly OracleRow[]): OracleRow[] => rows.filter((r) => !r.categories.some((c) => EXCLUDED.has(c)));
/** What a search without a date filter sees: visible events that have not ended at the pinned now. */
const upcoming = (rows: readonly OracleRow[]): OracleRow[] => visible(rows).filter((r) => r.end_ms >= NOW_MS);
const byStartThenId = (a: OracleRow, b: OracleRow): number => a.start_ms - b.start_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

interface Page {
  readonly total: number;
  readonly ids: readonly string[];
}

function expectedPage(rows: readonly OracleRow[], offset: number, limit: number): Page {
  const sorted = [...rows].sort(byStartThenId);
  return { total: sorted.length, ids: sorted.slice(offset, offset + limit).map((r) => r.id) };
}

function pageOf(got: Got): Page {
  const body = v.parse(EventListSchema, got.json);
  return { total: body.total, ids: body.events.map((e) => e.id) };
}

/** The value that occurs most often, with its count. */
function mostCommon(values: Iterable<string>): [string, number] {
  const counts = new Map<string, number>();
  for (const x of values) counts.set(x, (counts.get(x) ?? 0) + 1);
  const best = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  assert.ok(best, 'no values to choose from');
  return best;
}

// ---------------------------------------------------------------- small tools

/** The sample's value, or 0 when the series does not exist yet (a counter child before its first use). */
function metric(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const s = samples.find((x) => x.name === name && Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return s?.value ?? 0;
}

async function scrape(ts: TestServer): Promise<Sample[]> {
  const r = await get(ts.adminBase, '/metrics');
  assert.equal(r.status, 200);
  return parseProm(r.text);
}

const requestLines = (lines: readonly Record<string, unknown>[]): Record<string, unknown>[] => lines.filter((l) => l.msg === 'request');

/** Makes one request and returns the access-log lines it produced (after letting the log stream catch up). */
async function logged(ts: TestServer, pathAndQuery: string, init: RequestInit = {}): Promise<{ got: Got; lines: Record<string, unknown>[] }> {
  const from = ts.logs.length;
  const got = await get(ts.base, pathAndQuery, init);
  for (let i = 0; i < 200 && requestLines(ts.logs.slice(from)).length === 0; i++) await delay(5);
  // A duplicate line, if the server wrote one, would be in the same write burst: give it a moment.
  await delay(30);
  return { got, lines: requestLines(ts.logs.slice(from)) };
}

function assertProblem(got: Got, status: number, code: string): void {
  assert.equal(got.status, status, got.text);
  assert.match(got.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const p = v.parse(ProblemSchema, got.json);
  assert.equal(p.code, code);
  assert.equal(p.status, status);
}

function assertRetryAfter(got: Got): void {
  const ra = got.headers.get('retry-after');
  assert.ok(ra !== null, 'Retry-After header missing');
  assert.match(ra, /^\d+$/, `Retry-After ${ra} is not delta-seconds`);
}

/** Resolves with the connect outcome: 'connected' or the error code (ECONNREFUSED, …). */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

/** `family-events serve` as an operator starts it, with only the environment given (plus PATH). */
function serve(env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [BIN, 'serve'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => out, stderr: () => err };
}

/** The exit code, or 'timeout' (after killing the process) when it does not exit in time. */
async function exitWithin(p: Proc, ms: number): Promise<number | null | 'timeout'> {
  const timer = delay(ms, 'timeout' as const);
  const r = await Promise.race([p.exited, timer]);
  if (r === 'timeout') {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  return r;
}

// ---------------------------------------------------------------- shared fixture and server

let fixture: Fixture;
let ts: TestServer;
let city: string;
let cityRows: OracleRow[];
let category: string;
let categoryRows: OracleRow[];

before(async () => {
  fixture = await sampleFixture();
  ts = await startTestServer(fixture.dataDir, TWO_THREADS);
  const live = upcoming(fixture.rows);
  [city] = mostCommon(live.map((r) => r.venue_city));
  cityRows = live.filter((r) => r.venue_city === city);
  [category] = mostCommon(live.flatMap((r) => r.categories));
  categoryRows = live.filter((r) => r.categories.includes(category));
  // Filters chosen so that a right answer is neither empty nor everything.
  assert.ok(cityRows.length > 10 && cityRows.length < live.length, `city ${city}: ${cityRows.length} of ${live.length}`);
  assert.ok(categoryRows.length > 14 && categoryRows.length < live.length, `category ${category}: ${categoryRows.length} of ${live.length}`);
});

after(async () => {
  await ts?.stop();
  await fixture?.cleanup();
});

// ---------------------------------------------------------------- health and readiness

describe('health and readiness', () => {
  test('/healthz answers 200 {"status":"ok"}', async () => {
    const r = await get(ts.base, '/healthz');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(r.json, { status: 'ok' });
  });

  test('/readyz answers 200 naming the snapshot the fixture built', async () => {
    const r = await get(ts.base, '/readyz');
    assert.equal(r.status, 200);
    const body = v.parse(HealthSchema, r.json);
    assert.equal(body.snapshot, fixture.build.manifest.id);
  });

  test('with no snapshot: /readyz is 503 unavailable with Retry-After, /healthz is 200, searches are 503 (not 500)', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'fe-ops-empty-'));
    const bare = await startTestServer(empty);
    try {
      const ready = await get(bare.base, '/readyz');
      assertProblem(ready, 503, 'unavailable');
      assertRetryAfter(ready);
      const health = await get(bare.base, '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(health.json, { status: 'ok' });
      const search = await get(bare.base, '/v1/events');
      assertProblem(search, 503, 'unavailable');
      assertRetryAfter(search);
      assertProblem(await get(bare.base, '/api/v1/events?limit=5'), 503, 'unavailable');
    } finally {
      await bare.stop();
      await rm(empty, { recursive: true, force: true });
    }
  });

  test("a snapshot this server's workers cannot load is not served (readyz 503, searches 503), even while another server in the process serves that id", async () => {
    // A copy of the fixture under the same snapshot id, with the search database its workers open destroyed.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-ops-broken-'));
    await cp(fixture.dataDir, dir, { recursive: true, verbatimSymlinks: true });
    await writeFile(path.join(dir, 'snapshots', fixture.build.manifest.id, 'search.duckdb'), 'not a DuckDB database');
    const broken = await startTestServer(dir, { POOL_THREADS: '1' });
    try {
      const ready = await get(broken.base, '/readyz');
      const search = await get(broken.base, '/v1/events?limit=5');
      assertProblem(ready, 503, 'unavailable');
      assertProblem(search, 503, 'unavailable');
    } finally {
      await broken.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------- metrics

describe('metrics', () => {
  test('the admin listener serves Prometheus text that counts searches, cache hits and the snapshot', async () => {
    const q = `/v1/events?city=${encodeURIComponent(city)}&limit=3&offset=2`;
    const before = await scrape(ts);
    const first = await get(ts.base, q);
    const second = await get(ts.base, q);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.deepEqual(pageOf(first), expectedPage(cityRows, 2, 3));

    const r = await get(ts.adminBase, '/metrics');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; ?version=0\.0\.4/);
    const now = parseProm(r.text);
    const delta = (name: string, labels: Record<string, string>): number => metric(now, name, labels) - metric(before, name, labels);

    assert.equal(delta('http_requests_total', { route: '/v1/events', status: '200' }), 2);
    assert.equal(delta('http_request_duration_seconds_bucket', { route: '/v1/events', le: '+Inf' }), 2);
    assert.equal(delta('response_cache_total', { route: '/v1/events', result: 'miss' }), 1);
    assert.equal(delta('response_cache_total', { route: '/v1/events', result: 'hit' }), 1);
    const depth = now.find((s) => s.name === 'query_pool_queue_depth');
    assert.ok(depth, 'query_pool_queue_depth missing');
    assert.equal(depth.value, 0, 'nothing is queued between requests');
    const info = now.filter((s) => s.name === 'snapshot_info');
    assert.deepEqual(
      info.map((s) => [s.labels.id, s.value]),
      [[fixture.build.manifest.id, 1]],
    );
  });

  test('the public port does not serve /metrics; the admin listener serves nothing else', async () => {
    // /metrics is no API path: the website's HTML 404 answers it, with no metric in it.
    const web = await get(ts.base, '/metrics');
    assert.equal(web.status, 404);
    assert.equal(web.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.ok(!web.text.includes('http_requests_total'));
    assertProblem(await get(ts.base, '/api/metrics'), 404, 'not_found');
    assertProblem(await get(ts.base, '/v1/metrics'), 404, 'not_found');
    assertProblem(await get(ts.adminBase, '/v1/events'), 404, 'not_found');
  });

  test('the admin listener binds loopback by default', async () => {
    // The helper leaves ADMIN_HOST unset, so this is the default.
    assert.equal(ts.config.adminHost, '127.0.0.1');
    assert.equal(await tryConnect('127.0.0.1', ts.server.adminPort), 'connected');
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
    if (external) assert.equal(await tryConnect(external.address, ts.server.adminPort), 'ECONNREFUSED', `admin port reachable on ${external.address}`);
  });
});

// ---------------------------------------------------------------- access log

describe('access log', () => {
  test('each request writes exactly one line: method, route template, status, bytes, ms, cache', async () => {
    const q = `/v1/events?city=${encodeURIComponent(city)}&limit=4`;
    // Uncompressed, so that the logged body bytes can be compared with what arrived.
    const plain = { headers: { 'Accept-Encoding': 'identity' } };
    const miss = await logged(ts, q, plain);
    assert.equal(miss.got.status, 200);
    assert.equal(miss.lines.length, 1, JSON.stringify(miss.lines));
    const line = miss.lines[0]!;
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/v1/events');
    assert.equal(line.status, 200);
    assert.equal(line.bytes, Buffer.byteLength(miss.got.text));
    assert.equal(typeof line.ms, 'number');
    assert.ok((line.ms as number) >= 0);
    assert.equal(line.cache, 'miss');

    const hit = await logged(ts, q, plain);
    assert.equal(hit.lines.length, 1, JSON.stringify(hit.lines));
    assert.equal(hit.lines[0]!.cache, 'hit');
    assert.equal(hit.lines[0]!.bytes, Buffer.byteLength(hit.got.text));

    const page = await logged(ts, '/no/such/page?x=1');
    assert.equal(page.got.status, 404);
    assert.equal(page.lines.length, 1, JSON.stringify(page.lines));
    assert.equal(page.lines[0]!.route, 'web:unmatched');

    const unmatched = await logged(ts, '/v1/no/such/route?x=1');
    assert.equal(unmatched.got.status, 404);
    assert.equal(unmatched.lines.length, 1, JSON.stringify(unmatched.lines));
    assert.equal(unmatched.lines[0]!.route, 'unmatched');
    assert.equal(unmatched.lines[0]!.status, 404);
    assert.ok(unmatched.lines[0]!.cache !== 'hit' && unmatched.lines[0]!.cache !== 'miss', 'a 404 is no cache lookup');

    const bad = await logged(ts, '/v1/events?nonsense=1');
    assert.equal(bad.got.status, 400);
    assert.equal(bad.lines.length, 1, JSON.stringify(bad.lines));
    assert.deepEqual([bad.lines[0]!.route, bad.lines[0]!.status], ['/v1/events', 400]);

    const cities = await logged(ts, '/v1/cities');
    assert.equal(cities.lines.length, 1, JSON.stringify(cities.lines));
    assert.deepEqual([cities.lines[0]!.method, cities.lines[0]!.route, cities.lines[0]!.status], ['GET', '/v1/cities', 200]);

    const head = await logged(ts, '/healthz', { method: 'HEAD' });
    assert.equal(head.lines.length, 1, JSON.stringify(head.lines));
    assert.deepEqual([head.lines[0]!.method, head.lines[0]!.route, head.lines[0]!.status], ['HEAD', '/healthz', 200]);
  });

  test('no log line ever holds an API key, from the query string, the header, a parameter name or the path', async () => {
    const queryKey = `bsc_live_SECRETSECRETSECRET${'q'.repeat(24)}`;
    const headerKey = `bsc_live_OTHERSECRET${'h'.repeat(30)}`;
    const probes: [string, RequestInit][] = [
      [`/v1/events?limit=1&api_key=${queryKey}`, {}],
      ['/v1/events?limit=2', { headers: { Authorization: `Bearer ${headerKey}` } }],
      [`/v1/events?${queryKey}=1`, {}],
      [`/v1/demo/events?api_key=${queryKey}&limit=nope`, { headers: { Authorization: `Bearer ${headerKey}` } }],
      [`/${queryKey}`, {}],
    ];
    for (const [pq, init] of probes) {
      const { lines } = await logged(ts, pq, init);
      assert.equal(lines.length, 1, `${pq}: ${JSON.stringify(lines)}`);
    }
    const all = JSON.stringify(ts.logs);
    assert.ok(!all.includes('SECRET'), 'a key reached the log');
    assert.ok(!all.includes('bsc_live_'), 'a key prefix reached the log');
  });
});

// ---------------------------------------------------------------- response cache

describe('response cache', () => {
  test('the same search twice gives identical bodies, the second from the cache; another offset is a miss', async () => {
    const q = `/v1/events?category=${encodeURIComponent(category)}&limit=7`;
    const a = await logged(ts, q);
    const b = await logged(ts, q);
    assert.equal(a.got.status, 200);
    assert.equal(b.got.status, 200);
    assert.deepEqual(pageOf(a.got), expectedPage(categoryRows, 0, 7));
    assert.equal(b.got.text, a.got.text);
    assert.deepEqual([a.lines.map((l) => l.cache), b.lines.map((l) => l.cache)], [['miss'], ['hit']]);

    const c = await logged(ts, `${q}&offset=7`);
    assert.equal(c.got.status, 200);
    assert.deepEqual(pageOf(c.got), expectedPage(categoryRows, 7, 7));
    assert.notEqual(c.got.text, a.got.text);
    assert.deepEqual(
      c.lines.map((l) => l.cache),
      ['miss'],
    );
  });
});

// ---------------------------------------------------------------- overload

describe('overload', () => {
  const live = (): OracleRow[] => upcoming(fixture.rows);

  /**
   * Waits until the server's worker answers a search: the burst should meet a pool that has the
   * snapshot open, so that its 503s come from the timeout or the queue and not from a cold load.
   */
  async function warm(base: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if ((await get(base, `/v1/events?limit=1&offset=${50_000 + i}`)).status === 200) return;
      await delay(20);
    }
    assert.fail('the server never answered a search');
  }

  /** Fires distinct uncached searches at once; checks every 200 against the oracle. */
  async function burst(base: string, n: number): Promise<Got[]> {
    const all = live();
    const offsets = Array.from({ length: n }, (_, i) => i * 3);
    const got = await Promise.all(offsets.map((o) => get(base, `/v1/events?limit=100&offset=${o}`)));
    got.forEach((g, i) => {
      if (g.status === 200) assert.deepEqual(pageOf(g), expectedPage(all, offsets[i]!, 100));
    });
    return got;
  }

  test('a query past QUERY_TIMEOUT_MS is answered 503 unavailable with Retry-After, never another 5xx', async () => {
    const srv = await startTestServer(fixture.dataDir, { POOL_THREADS: '1', QUERY_TIMEOUT_MS: '10', CACHE_MAX_MB: '0' });
    try {
      await warm(srv.base);
      const got = await burst(srv.base, 60);
      const statuses = got.map((g) => g.status);
      assert.deepEqual(
        statuses.filter((s) => s !== 200 && s !== 503),
        [],
        `statuses: ${statuses.join(',')}`,
      );
      const refused = got.filter((g) => g.status === 503);
      assert.ok(refused.length > 0, 'no search was refused');
      for (const g of refused) {
        assertProblem(g, 503, 'unavailable');
        assertRetryAfter(g);
      }
    } finally {
      await srv.stop();
    }
  });

  test('a full queue (POOL_MAX_QUEUE) is answered 503 unavailable, the rest 200, and the server recovers', async () => {
    const srv = await startTestServer(fixture.dataDir, { POOL_THREADS: '1', POOL_MAX_QUEUE: '1', CACHE_MAX_MB: '0' });
    try {
      await warm(srv.base);
      const got = await burst(srv.base, 40);
      const statuses = got.map((g) => g.status);
      assert.deepEqual(
        statuses.filter((s) => s !== 200 && s !== 503),
        [],
        `statuses: ${statuses.join(',')}`,
      );
      const refused = got.filter((g) => g.status === 503);
      assert.ok(refused.length > 0, 'the queue never filled');
      assert.ok(refused.length < got.length, 'nothing was answered');
      for (const g of refused) {
        assertProblem(g, 503, 'unavailable');
        assertRetryAfter(g);
      }
      const later = await get(srv.base, `/v1/events?city=${encodeURIComponent(city)}&limit=5`);
      assert.equal(later.status, 200);
      assert.deepEqual(pageOf(later), expectedPage(cityRows, 0, 5));
    } finally {
      await srv.stop();
    }
  });
});

// ---------------------------------------------------------------- the log of a real process

describe('the log of a real process, read from its stdout', () => {
  test('says where it listens before any request, and an idle server writes a request line within the flush interval', async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const ledger = await mkdtemp(path.join(os.tmpdir(), 'fe-log-ledger-'));
    const proc = serve({
      DATA_DIR: fixture.dataDir,
      LEDGER_DIR: ledger,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      FAMILY_EVENTS_NOW: NOW_ISO,
      POOL_THREADS: '1',
    });
    const lines = (): Record<string, unknown>[] =>
      proc
        .stdout()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    /** Waits (no request made meanwhile) until a line satisfies `pred`; null if none came. */
    const lineWhere = async (pred: (l: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown> | null> => {
      for (let waited = 0; waited < ms && proc.child.exitCode === null; waited += 50) {
        const hit = lines().find(pred);
        if (hit) return hit;
        await delay(50);
      }
      return lines().find(pred) ?? null;
    };
    try {
      const listening = await lineWhere((l) => typeof l.msg === 'string' && l.msg.startsWith('listening on'), 60_000);
      assert.ok(listening, `no "listening on" line without a request; stdout: ${proc.stdout()} stderr: ${proc.stderr()}`);
      assert.equal(listening.msg, `listening on http://127.0.0.1:${port} (metrics on http://127.0.0.1:${adminPort}/metrics)`);
      assert.equal((await get(`http://127.0.0.1:${port}`, '/healthz')).status, 200);
      // One short line, far below the 4 KiB write batch: only the timer can bring it out.
      const line = await lineWhere((l) => l.msg === 'request' && l.route === '/healthz', 5000);
      assert.ok(line, `the request line of an idle server did not reach stdout; stdout: ${proc.stdout()}`);
      assert.equal(line.status, 200);
    } finally {
      proc.child.kill('SIGTERM');
      await exitWithin(proc, 15_000);
      await rm(ledger, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------- SIGTERM drain (real process)

describe('SIGTERM drain', () => {
  test('requests received before SIGTERM are all answered 200, then the process exits 0 and the port is closed', async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const ledger = await mkdtemp(path.join(os.tmpdir(), 'fe-drain-ledger-'));
    const { key } = provisionKey(ledger, { plan: UNMETERED });
    const proc = serve({
      DATA_DIR: fixture.dataDir,
      LEDGER_DIR: ledger,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      FAMILY_EVENTS_NOW: NOW_ISO,
      WEB_BASE_URL: WEB,
      PUBLIC_BASE_URL: PUBLIC,
      POOL_THREADS: '1',
      LOG_LEVEL: 'info',
    });
    const base = `http://127.0.0.1:${port}`;
    try {
      let ready = false;
      for (let i = 0; i < 600 && !ready && proc.child.exitCode === null; i++) {
        ready = await get(base, '/readyz').then(
          (r) => r.status === 200,
          () => false,
        );
        if (!ready) await delay(100);
      }
      assert.ok(ready, `never ready; stderr: ${proc.stderr()}`);

      // Connections opened (and known to the server) beforehand, so that each request below reaches
      // an accepted socket before the signal does: "started" means the server has the request.
      const N = 6;
      const agent = new http.Agent({ keepAlive: true, maxSockets: N });
      const call = (p: string, onWritten?: () => void): Promise<{ status: number; body: string }> =>
        new Promise((resolve, reject) => {
          const req = http.get({ host: '127.0.0.1', port, path: p, agent }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            res.on('error', reject);
          });
          req.on('error', reject);
          if (onWritten) req.on('finish', onWritten);
        });
      const warm = await Promise.all(Array.from({ length: N }, () => call('/healthz')));
      assert.deepEqual(
        warm.map((w) => w.status),
        Array<number>(N).fill(200),
      );

      const offsets = Array.from({ length: N }, (_, i) => i * 100);
      const written: Promise<void>[] = [];
      const inflight = offsets.map((o) => {
        let done!: () => void;
        written.push(new Promise<void>((r) => (done = r)));
        return call(`/v1/events?limit=100&offset=${o}&api_key=${key}`, done).then(
          (r) => r,
          (err: unknown) => ({ status: -1, body: (err as Error).message }),
        );
      });
      await Promise.all(written);
      proc.child.kill('SIGTERM');

      const answers = await Promise.all(inflight);
      agent.destroy();
      assert.deepEqual(
        answers.map((a) => a.status),
        Array<number>(N).fill(200),
        answers.map((a) => a.body.slice(0, 200)).join('\n'),
      );
      const all = upcoming(fixture.rows);
      answers.forEach((a, i) => {
        const body = v.parse(EventListSchema, JSON.parse(a.body));
        assert.deepEqual({ total: body.total, ids: body.events.map((e) => e.id) }, expectedPage(all, offsets[i]!, 100));
      });

      assert.equal(await exitWithin(proc, 15_000), 0, `stderr: ${proc.stderr()}`);
      assert.equal(await tryConnect('127.0.0.1', port), 'ECONNREFUSED');
      assert.equal(await tryConnect('127.0.0.1', adminPort), 'ECONNREFUSED');

      const lines = proc
        .stdout()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const msgs = lines.map((l) => l.msg);
      assert.ok(msgs.includes('draining') || msgs.includes('stopped'), `log messages: ${msgs.join(' | ')}`);
      // The drain had something to wait for: otherwise this test would not have tested it.
      const draining = lines.find((l) => l.msg === 'draining');
      if (draining && typeof draining.in_flight === 'number') assert.ok(draining.in_flight > 0, 'SIGTERM arrived after every request was answered');
      const searches = lines.filter((l) => l.msg === 'request' && l.route === '/v1/events');
      assert.deepEqual(
        searches.map((l) => l.status),
        Array<number>(N).fill(200),
        'every drained search was logged as answered',
      );
    } finally {
      if (proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }
      await rm(ledger, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------- configuration

describe('configuration', () => {
  test('out of the box the website host is the server itself, so every event_url opens on it', () => {
    assert.equal(loadConfig({}, '/tmp').webBaseUrl, 'http://127.0.0.1:8080');
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }, '/tmp').webBaseUrl, 'http://0.0.0.0:9000');
    assert.equal(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.org/' }, '/tmp').webBaseUrl, 'https://api.example.org');
    assert.equal(
      loadConfig({ PUBLIC_BASE_URL: 'https://api.example.org', WEB_BASE_URL: 'https://www.example.org' }, '/tmp').webBaseUrl,
      'https://www.example.org',
    );
  });

  test('mail and identity provider settings: outbox and no provider by default; OIDC_* come together; SMTP_URL is smtp(s)', () => {
    const plain = loadConfig({ WEB_BASE_URL: 'https://www.example.org' }, '/tmp');
    assert.equal(plain.smtpUrl, null);
    assert.equal(plain.mailFrom, 'Family Events <no-reply@www.example.org>');
    assert.equal(plain.oidc, null);
    const full = loadConfig(
      { OIDC_ISSUER: 'https://idp.example.org/', OIDC_CLIENT_ID: 'fe', OIDC_CLIENT_SECRET: 's3cret', SMTP_URL: 'smtps://u:p@smtp.example.org' },
      '/tmp',
    );
    assert.deepEqual(full.oidc, { issuer: 'https://idp.example.org', clientId: 'fe', clientSecret: 's3cret', name: 'idp.example.org' });
    assert.equal(full.smtpUrl, 'smtps://u:p@smtp.example.org');
    assert.throws(
      () => loadConfig({ OIDC_ISSUER: 'https://idp.example.org' }, '/tmp'),
      (e: Error) => /^OIDC_CLIENT_ID: /.test(e.message),
    );
    const oidc = { OIDC_CLIENT_ID: 'fe', OIDC_CLIENT_SECRET: 's' };
    assert.throws(
      () => loadConfig({ ...oidc, OIDC_ISSUER: 'http://idp.example.org' }, '/tmp'),
      (e: Error) => /^OIDC_ISSUER: must be an https:\/\/ URL/.test(e.message),
    );
    assert.equal(
      loadConfig({ ...oidc, OIDC_ISSUER: 'http://127.0.0.1:4000' }, '/tmp').oidc?.issuer,
      'http://127.0.0.1:4000',
      'a provider on this machine may be plain http',
    );
    assert.equal(
      loadConfig({ ...oidc, OIDC_ISSUER: 'https://accounts.example.com/realm' }, '/tmp').oidc?.name,
      'accounts.example.com',
      'the button names the issuer by default',
    );
    assert.equal(loadConfig({ ...oidc, OIDC_ISSUER: 'https://accounts.example.com', OIDC_NAME: ' Example SSO ' }, '/tmp').oidc?.name, 'Example SSO');
    assert.throws(
      () => loadConfig({ SMTP_URL: 'http://smtp.example.org' }, '/tmp'),
      (e: Error) => /^SMTP_URL: /.test(e.message),
    );
  });

  async function refused(env: Record<string, string>): Promise<{ code: number | null | 'timeout'; stderr: string }> {
    const proc = serve({ DATA_DIR: fixture.dataDir, FAMILY_EVENTS_NOW: NOW_ISO, HOST: '127.0.0.1', ...env });
    const code = await exitWithin(proc, 20_000);
    return { code, stderr: proc.stderr() };
  }

  test('ADMIN_PORT equal to PORT, or POOL_THREADS=0, stops start-up with exit 2 and one line naming the variable', async () => {
    const port = String(await freePort());
    const [samePort, noThreads] = await Promise.all([refused({ PORT: port, ADMIN_PORT: port }), refused({ PORT: '0', ADMIN_PORT: '0', POOL_THREADS: '0' })]);
    for (const [r, variable] of [
      [samePort, 'ADMIN_PORT'],
      [noThreads, 'POOL_THREADS'],
    ] as const) {
      assert.equal(r.code, 2, `${variable}: stderr ${r.stderr}`);
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `${variable}: ${r.stderr}`);
      assert.match(lines[0]!, new RegExp(`\\b${variable}\\b`));
    }
  });

  test('a second server on a ledger in use refuses to start (one writer), and says which directory', async () => {
    // ts (this process) holds its ledger's writer lock; another process must not meter the same files.
    const ledger = ts.config.ledgerDir;
    const r = await refused({ LEDGER_DIR: ledger, PORT: String(await freePort()), ADMIN_PORT: String(await freePort()) });
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(ledger), r.stderr);
    assert.match(r.stderr, /one writer/);
    // The refusal changed nothing: the running server still answers keys on that ledger.
    assert.equal((await get(ts.base, '/v1/events?limit=1')).status, 200);
  });
});

// ---------------------------------------------------------------- hot swap

// Last: it stops the shared server.
describe('snapshot hot swap', () => {
  test('a new snapshot is picked up under load: no failed request, every answer from exactly one snapshot', async () => {
    // A fresh DATA_DIR holding a copy of the fixture's snapshot (`current` is a relative symlink).
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-ops-swap-'));
    await cp(fixture.dataDir, dir, { recursive: true, verbatimSymlinks: true });
    // Alone in the process: pools of one process share the snapshot broadcast channel, so another
    // server's workers would answer for this one's (see the readiness test; a reported bug).
    await ts.stop();
    const srv = await startTestServer(dir, { SNAPSHOT_POLL_MS: '50', ...TWO_THREADS });
    const oldId = fixture.build.manifest.id;
    try {
      assert.equal((await get(srv.base, '/readyz')).json?.snapshot, oldId);
      const OFFSETS = [0, 5, 10];
      type Seen = { kind: 'events'; offset: number; got: Got } | { kind: 'cities'; got: Got } | { kind: 'error'; path: string; error: string };
      const seen: Seen[] = [];
      let stop = false;
      const loop = async (n: number): Promise<void> => {
        for (let i = 0; !stop; i++) {
          const offset = OFFSETS[(n + i) % OFFSETS.length]!;
          const p = i % 2 === 0 ? `/v1/events?limit=5&offset=${offset}` : '/v1/cities';
          try {
            const got = await get(srv.base, p);
            seen.push(p === '/v1/cities' ? { kind: 'cities', got } : { kind: 'events', offset, got });
          } catch (err) {
            seen.push({ kind: 'error', path: p, error: (err as Error).message });
          }
        }
      };
      const loops = Array.from({ length: 8 }, (_, n) => loop(n));

      // A small synthetic set built two days later: other content, so another id and other answers
      // (and a third of the sample's build time). It runs as its own process, as an operator runs
      // it: in this process its synchronous stretches would stall the server's event loop.
      // A build that fails must stop the load too, or the test would wait on the loops for ever.
      const build = await buildInChild(dir, new Date(NOW_MS + 2 * DAY_MS), ['--synthetic', '3000']).catch(async (err: unknown) => {
        stop = true;
        await Promise.all(loops);
        throw err;
      });
      const newId = build.id;
      assert.notEqual(newId, oldId);
      let switched = false;
      for (let i = 0; i < 600 && !switched; i++) {
        switched = (await get(srv.base, '/readyz')).json?.snapshot === newId;
        if (!switched) await delay(50);
      }
      await delay(1000);
      stop = true;
      await Promise.all(loops);
      assert.ok(switched, `/readyz never reported ${newId}`);

      const oldRows = fixture.rows;
      const newRows = await readRows(path.join(dir, 'snapshots', newId, 'events.parquet'));
      const expected = new Map<string, { events: Page[]; cities: string[] }>();
      for (const [id, rows] of [
        [oldId, oldRows],
        [newId, newRows],
      ] as const) {
        expected.set(id, { events: OFFSETS.map((o) => expectedPage(upcoming(rows), o, 5)), cities: [...new Set(rows.map((r) => r.venue_city))].sort() });
      }
      const oldTotal = expected.get(oldId)!.events[0]!.total;
      const newTotal = expected.get(newId)!.events[0]!.total;
      assert.notEqual(oldTotal, newTotal, 'the two snapshots must be told apart by their totals');

      const failed = seen.filter((s) => s.kind === 'error' || s.got.status !== 200);
      assert.deepEqual(
        failed.map((s) => (s.kind === 'error' ? `${s.path}: ${s.error}` : `${s.got.status} ${s.got.text.slice(0, 200)}`)),
        [],
      );
      const observed = { events: new Set<string>(), cities: new Set<string>() };
      for (const s of seen) {
        if (s.kind === 'events') {
          const got = pageOf(s.got);
          const idx = OFFSETS.indexOf(s.offset);
          const matches = [oldId, newId].filter((id) => {
            const want = expected.get(id)!.events[idx]!;
            return got.total === want.total && got.ids.join() === want.ids.join();
          });
          assert.equal(matches.length, 1, `offset ${s.offset}: total ${got.total} ids ${got.ids.join()} matches ${matches.length} snapshots`);
          observed.events.add(matches[0]!);
        } else if (s.kind === 'cities') {
          const body = v.parse(CityListSchema, s.got.json);
          const want = expected.get(body.snapshot);
          assert.ok(want, `/v1/cities named snapshot ${body.snapshot}`);
          assert.deepEqual(body.cities.map((c) => c.name).sort(), want.cities);
          observed.cities.add(body.snapshot);
        }
      }
      assert.deepEqual([...observed.events].sort(), [oldId, newId].sort(), 'both snapshots answered /v1/events');
      assert.ok(observed.cities.has(newId), '/v1/cities moved to the new snapshot');
      const afterSwap = await get(srv.base, '/v1/events?limit=5');
      assert.deepEqual(pageOf(afterSwap), expected.get(newId)!.events[0]);
    } finally {
      await srv.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
