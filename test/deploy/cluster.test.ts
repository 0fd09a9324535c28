// Several API nodes on one PostgreSQL ledger behind nginx: three real `family-events serve`
// processes on loopback ports, sharing one DATA_DIR (the snapshot volume) and one database of
// their own on the machine's PostgreSQL, with the shipped nginx site round-robin in front.
// - 50 concurrent requests of a fresh Community key, spread over the nodes, get exactly the 25
//   records of its cap in total; again with a mix of formats, cached and uncached pages.
// - A key revoked anywhere is refused by every node within a second.
// - A node killed with SIGKILL under load, three times: the ledger holds at least every record the
//   clients received, never more than they could have been charged for, and the records the dead
//   node held come back once its holds expire (LEDGER_HOLD_MS).
// - A new snapshot recorded in the ledger while the nodes serve: every answer is one snapshot's.
// - Three nodes started at once on an empty shared volume and an empty database: one sample
//   snapshot, the same on every node, with the same ETags.
// - A visitor of the website signs in, makes a key and revokes it through nginx (the shipped site's
//   account form routes), each request on the next node by its round-robin: sessions, sign-in links
//   and the key that signs forms are the cluster's, not one node's (each node has a LEDGER_DIR of
//   its own).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import type pg from 'pg';
import { Agent, request } from 'undici';
import { REPO_ROOT } from '../../core/config.ts';
import { PgAccounts } from '../../ledger/postgres/store.ts';
import { openPool } from '../../ledger/postgres/db.ts';
import { migrate, migrations } from '../../ledger/postgres/migrate.ts';
import { recordSnapshot } from '../../ledger/postgres/cluster.ts';
import { currentSnapshotId } from '../../snapshot/store.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../pg.ts';
import { buildInChild, NOW, PUBLIC, sampleFixture, WEB, type Fixture } from '../server/helpers.ts';
import { FormBrowser, hiddenFields } from '../server/web/form-browser.ts';
import { Outbox } from '../server/web/outbox.ts';
import { findNginx, nginxSkip, requireNginx, startNginx, type Nginx } from './nginx.ts';
import { startNode, stopNodes, type ApiNode } from './nodes.ts';

const NODES = 3;
const CAP = 25;
/** Records a dead node's holds keep from their organization, at most this long (the nodes' LEDGER_HOLD_MS). */
const HOLD_MS = 4000;
const NGINX = findNginx();
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
const execFileP = promisify(execFile);
const FORMATS = ['/v1/events', '/v1/events.csv', '/v1/feed.ics', '/v1/feed.rss', '/v1/feed.json'] as const;
const missing = await postgresMissing();
const skip = missing ?? nginxSkip(NGINX);

describe('three API nodes on one PostgreSQL ledger behind nginx', { skip }, () => {
  let db: TestDatabase;
  let fx: Fixture;
  let pool: pg.Pool;
  let accounts: PgAccounts;
  const nodes: ApiNode[] = [];
  let lb: Nginx;
  const dispatcher = new Agent({ connections: 64, pipelining: 1 });
  const settings = () => ({ url: db.url, poolMax: 2, statementTimeoutMs: 5000 });

  const startNodeNo = (i: number, ports?: { port: number; adminPort: number }): Promise<ApiNode> =>
    // A LEDGER_DIR (so a web-secret file) of its own: the cluster's key is the ledger's.
    startNode({
      name: `node-${i}`,
      dataDir: fx.dataDir,
      databaseUrl: db.url,
      env: {
        LEDGER_DIR: path.join(fx.dataDir, `ledger-node-${i}`),
        QUERY_TIMEOUT_MS: '2000',
        LEDGER_HOLD_MS: String(HOLD_MS),
        PUBLIC_BASE_URL: PUBLIC,
        WEB_BASE_URL: WEB,
      },
      ports,
    });

  async function get(base: string, pathAndQuery: string, key?: string): Promise<{ status: number; headers: Record<string, string>; text: string }> {
    const res = await request(`${base}${pathAndQuery}`, {
      dispatcher,
      headers: key ? { authorization: `Bearer ${key}` } : {},
      headersTimeout: 20_000,
      bodyTimeout: 20_000,
    });
    const text = await res.body.text();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
    return { status: res.statusCode, headers, text };
  }

  /** Event records in a 200 body of any format. */
  function records(pathAndQuery: string, text: string): number {
    if (pathAndQuery.includes('.csv')) return Math.max(0, text.trim().split('\n').length - 1);
    if (pathAndQuery.includes('.ics')) return text.split('BEGIN:VEVENT').length - 1;
    if (pathAndQuery.includes('.rss')) return text.split('<item>').length - 1;
    const body = JSON.parse(text) as { events?: unknown[]; items?: unknown[] };
    return (body.events ?? body.items ?? []).length;
  }

  /** Requests each node answered on routes starting with `route` (its metrics' route label). */
  async function requestsPerNode(route = '/v1/events'): Promise<number[]> {
    return Promise.all(
      nodes.map(async (n) => {
        const text = await (await fetch(`http://127.0.0.1:${n.adminPort}/metrics`)).text();
        return [...text.matchAll(/^http_requests_total\{route="([^"]*)",status="\d+"\} (\d+)/gm)]
          .filter((m) => m[1]?.startsWith(route))
          .reduce((a, m) => a + Number(m[2]), 0);
      }),
    );
  }

  async function usedRecords(orgId: string): Promise<number> {
    const r = await pool.query<{ n: string | null }>('SELECT sum(records) AS n FROM usage_days WHERE org_id = $1', [orgId]);
    return Number(r.rows[0]?.n ?? 0);
  }

  async function liveHolds(orgId: string): Promise<number> {
    const r = await pool.query<{ n: string | null }>('SELECT sum(amount) AS n FROM quota_holds WHERE org_id = $1 AND expires_at > now()', [orgId]);
    return Number(r.rows[0]?.n ?? 0);
  }

  before(async () => {
    db = await testDatabase('cluster');
    fx = await sampleFixture();
    await migrate(settings());
    pool = openPool(settings(), 'cluster test');
    accounts = new PgAccounts(pool);
    const id = await currentSnapshotId(fx.dataDir);
    assert.ok(id);
    await recordSnapshot(settings(), id);
    for (let i = 0; i < NODES; i++) nodes.push(await startNodeNo(i));
    lb = await startNginx(
      requireNginx(NGINX),
      nodes.map((n) => n.port),
    );
  });

  after(async () => {
    await lb?.stop();
    await stopNodes(nodes);
    await dispatcher.close();
    await pool?.end();
    await db?.drop();
    await fx?.cleanup();
  });

  test('50 concurrent requests of a fresh Community key over three nodes deliver exactly its 25 records', async () => {
    const made = await accounts.createKey('Cluster Community', 'dev@example.com', 'community');
    const before = await requestsPerNode();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => get(lb.base, `/v1/events?limit=1&offset=${i}`, made.key)));
    const ok = answers.filter((a) => a.status === 200);
    assert.deepEqual([...new Set(answers.map((a) => a.status))].sort(), [200, 429], answers.map((a) => `${a.status} ${a.text.slice(0, 120)}`).join('\n'));
    const delivered = ok.reduce((n, a) => n + records('/v1/events', a.text), 0);
    assert.equal(delivered, CAP);
    assert.equal(await usedRecords(made.org.id), CAP);
    const spread = (await requestsPerNode()).map((n, i) => n - before[i]!);
    assert.ok(
      spread.every((n) => n > 0),
      `every node served some of them: ${spread.join(', ')}`,
    );
  });

  test('the same with a mix of formats, repeated (cached) and distinct pages', async () => {
    const made = await accounts.createKey('Cluster Mix', 'mix@example.com', 'community');
    const paths = Array.from({ length: 50 }, (_, i) => {
      const route = FORMATS[i % FORMATS.length]!;
      // Every third request asks for the same page: on each node the second of those is a cache hit.
      const offset = i % 3 === 0 ? 0 : i;
      return `${route}?limit=${1 + (i % 3)}&offset=${offset}`;
    });
    const answers = await Promise.all(paths.map((p) => get(lb.base, p, made.key).then((a) => ({ ...a, p }))));
    for (const a of answers) assert.ok([200, 429].includes(a.status), `${a.p}: ${a.status} ${a.text.slice(0, 200)}`);
    const delivered = answers.filter((a) => a.status === 200).reduce((n, a) => n + records(a.p, a.text), 0);
    assert.equal(delivered, CAP);
    assert.equal(await usedRecords(made.org.id), CAP);
    assert.equal(await liveHolds(made.org.id), 0);
  });

  test('a key revoked on one node is refused by every node within a second', async () => {
    const made = await accounts.createKey('Cluster Revoke', 'rev@example.com', 'partner');
    // Every node has seen the new key (the announcement, or the lookup of an unknown key).
    for (const n of nodes) assert.equal((await get(n.base, '/v1/events?limit=1', made.key)).status, 200);
    const revokedAt = performance.now();
    assert.equal((await accounts.revoke(made.keyId)).revoked, true);
    const refusedAfter = await Promise.all(
      nodes.map(async (n) => {
        for (;;) {
          const r = await get(n.base, '/v1/events?limit=1', made.key);
          if (r.status === 401) return performance.now() - revokedAt;
          assert.equal(r.status, 200);
          if (performance.now() - revokedAt > 5000) return Infinity;
          await delay(20);
        }
      }),
    );
    assert.ok(
      refusedAfter.every((ms) => ms <= 1000),
      `every node refuses the key within a second (ms: ${refusedAfter.map(Math.round).join(', ')})`,
    );
  });

  test('the website through nginx over three nodes, each request on the next one: sign in by mail, make a key that every node takes, revoke it', async () => {
    // The nodes share DATA_DIR (the outbox) and the ledger (sessions, links, keys and the key that
    // signs forms and cookies), each with a LEDGER_DIR of its own; nothing else of a visit may live
    // in one node's memory. Every page and form goes through the shipped nginx site, whose
    // round-robin sends each request of this one visitor to the next node.
    const outbox = new Outbox(fx.dataDir);
    const b = new FormBrowser(lb.base, WEB);
    const accountBefore = await requestsPerNode('web:/account');
    const email = 'web-cluster@example.org';
    const seen = await outbox.names();
    const form = await b.get('/account/sign-in');
    assert.equal(form.status, 200);
    const sent = await b.post('/account/sign-in', { ...hiddenFields(form.text, '/account/sign-in'), email });
    assert.equal(sent.status, 303);
    assert.equal(sent.headers.get('location'), '/account/sign-in/sent');
    const link = new URL((await outbox.next(seen, 5000, (m) => m.to === email)).link);
    const confirm = await b.get(link.pathname + link.search);
    assert.equal(confirm.status, 200);
    const done = await b.post('/account/confirm', hiddenFields(confirm.text, '/account/confirm'));
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.equal(done.headers.get('location'), '/account');
    const dash = await b.get('/account');
    assert.equal(dash.status, 200);
    assert.ok(dash.text.includes(email), 'the dashboard, on another node than the sign-in, names the account');
    const made = await b.post('/account/keys', hiddenFields(dash.text, '/account/keys'));
    assert.equal(made.status, 200, made.text.slice(0, 300));
    const key = /bsc_live_[A-Za-z0-9]{32,}/.exec(made.text)?.[0];
    assert.ok(key, 'the new-key page shows the key');
    for (const n of nodes) {
      const r = await get(n.base, '/v1/events?limit=1', key);
      assert.equal(r.status, 200, `${n.name} takes the key made on another: ${r.text.slice(0, 200)}`);
    }
    const used = await b.get('/account');
    assert.equal(/data-usage="used">([\d,]+)</.exec(used.text)?.[1], '3', 'the dashboard counts the record each node delivered');
    const revoked = await b.post('/account/keys/revoke', hiddenFields(used.text, '/account/keys/revoke'));
    assert.equal(revoked.status, 303, revoked.text.slice(0, 300));
    const spread = (await requestsPerNode('web:/account')).map((n, i) => n - accountBefore[i]!);
    assert.ok(
      spread.every((n) => n >= 2),
      `every node answered pages and forms of the visit through nginx: ${spread.join(', ')}`,
    );
    const revokedAt = performance.now();
    for (const n of nodes) {
      for (;;) {
        const r = await get(n.base, '/v1/events?limit=1', key);
        if (r.status === 401) break;
        assert.equal(r.status, 200);
        assert.ok(performance.now() - revokedAt <= 1000, `${n.name} still takes the key revoked on the website a second later`);
        await delay(20);
      }
    }
  });

  test("a key's requests a minute: its plan's rate on each node, so at least that and at most N times it behind N nodes", async () => {
    const RPM = 4;
    await accounts.setPlan({ name: 'tight', monthlyRecordLimit: null, excludedCategories: [], attributionRequired: false, requestsPerMinute: RPM });
    const made = await accounts.createKey('Cluster Rate', 'rate@example.com', 'tight');
    const statuses: number[] = [];
    for (let i = 0; i < NODES * RPM * 2; i++) statuses.push((await get(lb.base, `/v1/events?limit=1&offset=${i}`, made.key)).status);
    const ok = statuses.filter((s) => s === 200).length;
    assert.deepEqual([...new Set(statuses)].sort(), [200, 429]);
    // The buckets refill continuously (one request every 15 s at 4 a minute): a node may allow one more meanwhile.
    assert.ok(ok >= RPM && ok <= NODES * (RPM + 1), `${ok} allowed, between ${RPM} and ${NODES} × (${RPM} + 1)`);
    // Round-robin spread them: every node's own bucket for the key is empty now.
    for (const n of nodes) {
      const r = await get(n.base, '/v1/events?limit=1', made.key);
      assert.equal(r.status, 429, n.name);
      assert.ok(Number(r.headers['retry-after']) > 0, 'says when to retry');
      assert.match(r.text, new RegExp(`may make ${RPM} requests a minute`));
    }
  });

  test('SIGKILL one node under load, three times: no charge lost, none doubled, its holds come back', async () => {
    const capped = await accounts.createKey('Cluster Crash Capped', 'crash@example.com', 'community');
    const open = await accounts.createKey('Cluster Crash Partner', 'partner@example.com', 'partner');
    let received = 0;
    let inFlightAtKill = 0;
    let inFlight = 0;
    let stop = false;
    const LIMIT = 3;
    const loop = async (key: string, i: number): Promise<void> => {
      let n = i;
      while (!stop) {
        inFlight++;
        try {
          const a = await get(lb.base, `/v1/events?limit=${LIMIT}&offset=${n++ % 40}`, key);
          if (a.status === 200) received += records('/v1/events', a.text);
          else assert.ok([429, 502, 503].includes(a.status), `${a.status} ${a.text.slice(0, 200)}`);
        } catch {
          // A connection cut by the kill: nginx had no answer for it.
        } finally {
          inFlight--;
        }
      }
    };
    const cappedHeld: number[] = [];
    for (let cycle = 0; cycle < 3; cycle++) {
      stop = false;
      const clients = Array.from({ length: 8 }, (_, i) => loop(open.key, i));
      await delay(600);
      const victim = nodes[cycle % NODES]!;
      // The capped organization's reservation taken on the victim: it must not stay locked.
      const hold = get(victim.base, '/v1/events.csv?limit=10', capped.key).catch(() => null);
      await delay(5);
      inFlightAtKill += inFlight;
      victim.child.kill('SIGKILL');
      await victim.exited;
      await hold;
      cappedHeld.push(await liveHolds(capped.org.id));
      await delay(400);
      stop = true;
      await Promise.all(clients);
      // Back on its ports: nginx's upstream list names them.
      nodes[cycle % NODES] = await startNodeNo(cycle % NODES, victim);
    }
    const used = await usedRecords(open.org.id);
    assert.ok(used >= received, `the ledger holds every record received (${used} ≥ ${received})`);
    // Charged and never received: only answers cut off by a kill (each at most LIMIT records).
    assert.ok(
      used - received <= inFlightAtKill * LIMIT,
      `no double charge: ${used - received} records charged beyond those received, with ${inFlightAtKill} requests in flight at the kills`,
    );
    // After the holds' lifetime, nothing is held and the capped organization has all but what it was charged.
    await delay(HOLD_MS + 500);
    assert.equal(await liveHolds(capped.org.id), 0);
    // Every node, asked directly, reports what the ledger holds.
    for (const n of nodes) {
      const usage = await get(n.base, '/v1/usage', capped.key);
      assert.equal(usage.status, 200, `${n.name}: ${usage.text}`);
      const body = JSON.parse(usage.text) as { records: { used: number; remaining: number } };
      assert.equal(body.records.used, await usedRecords(capped.org.id));
      assert.equal(body.records.remaining, CAP - body.records.used);
    }
    // nginx takes a node out of its rotation for fail_timeout (10 s) after a failed request: nodes
    // killed and restarted in quick succession (and stale keep-alive connections to them) can leave
    // it with "no live upstreams" for that long. It must come back by itself within it.
    let inARow = 0;
    const deadline = Date.now() + 15_000;
    while (inARow < 2 * NODES && Date.now() < deadline) {
      inARow = (await get(lb.base, '/v1/events?limit=1', open.key)).status === 200 ? inARow + 1 : 0;
      if (inARow === 0) await delay(200);
    }
    assert.equal(inARow, 2 * NODES, `nginx serves through every node again: ${(await lb.errorLog()).slice(-2000)}`);
  });

  test('a snapshot the nodes cannot load: they keep serving theirs and say so in /readyz and metrics', async () => {
    const serving = (JSON.parse((await get(nodes[0]!.base, '/readyz')).text) as { snapshot: string }).snapshot;
    await recordSnapshot(settings(), 'missing-from-the-volume');
    for (const n of nodes) {
      let body: { snapshot: string; snapshot_pending?: { id: string; reason: string } } = { snapshot: '' };
      for (let i = 0; i < 100 && !body.snapshot_pending; i++) {
        const r = await get(n.base, '/readyz');
        assert.equal(r.status, 200, 'still ready: it serves the snapshot it has');
        body = JSON.parse(r.text) as typeof body;
        if (!body.snapshot_pending) await delay(50);
      }
      assert.equal(body.snapshot, serving);
      assert.equal(body.snapshot_pending?.id, 'missing-from-the-volume');
      // /readyz is public: the reason says what failed, never a path or an error's text.
      assert.doesNotMatch(body.snapshot_pending?.reason ?? '', /\/|ENOENT/);
      const metrics = await (await fetch(`http://127.0.0.1:${n.adminPort}/metrics`)).text();
      assert.match(metrics, /^snapshot_behind\{wanted="missing-from-the-volume"\} 1$/m);
    }
    // Rolled back by the operator's command, as the README says.
    const published = await execFileP(process.execPath, [BIN, 'snapshot', 'publish', serving, '--json'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: fx.dataDir, DATABASE_URL: db.url },
    });
    assert.deepEqual(JSON.parse(published.stdout), { snapshot: serving });
    for (const n of nodes) {
      let pending: unknown = true;
      for (let i = 0; i < 100 && pending; i++) {
        pending = (JSON.parse((await get(n.base, '/readyz')).text) as { snapshot_pending?: unknown }).snapshot_pending;
        if (pending) await delay(50);
      }
      assert.equal(pending, undefined, `${n.name} is back on the snapshot the ledger names`);
    }
  });

  test('a new snapshot recorded in the ledger while three nodes serve: no failed request, every answer one snapshot', async () => {
    const made = await accounts.createKey('Cluster Snapshots', 'snap@example.com', 'partner');
    const q = '/v1/events?limit=5';
    const before = await get(nodes[0]!.base, q, made.key);
    const etagA = before.headers.etag;
    assert.ok(etagA);
    // The same snapshot gives the same answer, ETag included, on every node.
    for (const n of nodes.slice(1)) {
      const other = await get(n.base, q, made.key);
      assert.equal(other.headers.etag, etagA, n.name);
      assert.equal(other.text, before.text, n.name);
    }
    let stop = false;
    const seen: { status: number; etag: string; body: string }[] = [];
    const clients = Array.from({ length: 6 }, async () => {
      while (!stop) {
        const a = await get(lb.base, q, made.key);
        seen.push({ status: a.status, etag: a.headers.etag ?? '', body: a.text });
      }
    });
    const later = new Date(NOW.getTime() + 24 * 3600_000);
    const manifest = await buildInChild(fx.dataDir, later, [], { DATABASE_URL: db.url });
    const etagsB = new Set<string>();
    const deadline = Date.now() + 20_000;
    while (etagsB.size < NODES && Date.now() < deadline) {
      etagsB.clear();
      for (const n of nodes) {
        const r = await get(n.base, '/readyz');
        if ((JSON.parse(r.text) as { snapshot: string }).snapshot === manifest.id) etagsB.add(n.name);
      }
      await delay(100);
    }
    assert.equal(etagsB.size, NODES, 'every node switched to the new snapshot');
    await delay(300);
    stop = true;
    await Promise.all(clients);
    const after = await get(nodes[1]!.base, q, made.key);
    const etagB = after.headers.etag;
    assert.notEqual(etagB, etagA);
    assert.ok(seen.length > 0);
    const bodies = new Map([
      [etagA, before.text],
      [etagB, after.text],
    ]);
    const errorLog = seen.some((s) => s.status !== 200) ? (await lb.errorLog()).slice(-2000) : '';
    for (const s of seen) {
      assert.equal(s.status, 200, `${s.body}\nnginx: ${errorLog}`);
      assert.ok(bodies.has(s.etag), `an answer of one of the two snapshots (${s.etag})`);
      assert.equal(s.body, bodies.get(s.etag));
    }
  });
});

describe('three nodes started at once on an empty shared volume and an empty database', { skip: missing ?? false }, () => {
  let db: TestDatabase;
  let dir: string;
  let nodes: ApiNode[] = [];

  before(async () => {
    db = await testDatabase('cluster_empty');
    dir = await mkdtemp(path.join(os.tmpdir(), 'fe-cluster-empty-'));
  });
  after(async () => {
    await stopNodes(nodes);
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('they migrate the ledger once between them, build one sample snapshot and serve it alike', async () => {
    // What `npm start` on three fresh machines does, configured as the README says (one DATA_DIR,
    // DATABASE_URL, PUBLIC_BASE_URL and WEB_BASE_URL for all): each finds no snapshot.
    const started = await Promise.allSettled(
      [0, 1, 2].map((i) =>
        startNode({
          name: `fresh-${i}`,
          dataDir: dir,
          databaseUrl: db.url,
          env: { LEDGER_DIR: path.join(dir, `ledger-fresh-${i}`), FAMILY_EVENTS_NOW: NOW.toISOString(), PUBLIC_BASE_URL: PUBLIC, WEB_BASE_URL: WEB },
        }),
      ),
    );
    nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    assert.deepEqual(
      started.filter((r) => r.status === 'rejected').map((r) => String(r.reason).slice(0, 2000)),
      [],
    );
    const builders = nodes.filter((n) => n.output().includes('no snapshot under')).map((n) => n.name);
    assert.equal(builders.length, 1, `one node built the snapshot, the others waited for it: ${builders.join(', ')}`);
    const ids = await Promise.all(nodes.map(async (n) => ((await (await fetch(`${n.base}/readyz`)).json()) as { snapshot: string }).snapshot));
    assert.equal(new Set(ids).size, 1, `one snapshot on every node: ${ids.join(', ')}`);
    const ledger = openPool({ url: db.url, poolMax: 1, statementTimeoutMs: 5000 }, 'cluster test');
    try {
      const applied = await ledger.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(
        applied.rows.map((r) => r.version),
        migrations().map((m) => m.version),
        'each migration applied once',
      );
      const recorded = await ledger.query<{ snapshot_id: string }>('SELECT snapshot_id FROM current_snapshot');
      assert.deepEqual(
        recorded.rows.map((r) => r.snapshot_id),
        [ids[0]],
        'the ledger names the snapshot they serve',
      );
    } finally {
      await ledger.end();
    }
    assert.deepEqual(
      (await readdir(path.join(dir, 'snapshots'))).filter((f) => f !== 'current'),
      [ids[0]],
      'one snapshot on the volume, none half-built',
    );
    const answers = await Promise.all(
      nodes.map((n) => fetch(`${n.base}/v1/demo/events?limit=5`).then(async (r) => ({ status: r.status, etag: r.headers.get('etag'), body: await r.text() }))),
    );
    for (const a of answers) assert.equal(a.status, 200, a.body.slice(0, 300));
    assert.equal(new Set(answers.map((a) => a.etag)).size, 1, `the same ETag on every node: ${answers.map((a) => a.etag).join(', ')}`);
    assert.equal(new Set(answers.map((a) => a.body)).size, 1, 'the same body on every node');
  });
});
