// The shared ledger goes away and comes back: two API nodes on a PostgreSQL server of the test's
// own, which is stopped under load and started again. While it is down, live routes answer 503
// `unavailable` with Retry-After (never a 500, never a hang), /readyz says 503, and the keyless demo
// and the website's event pages keep answering from the snapshot; the nodes reconnect by
// themselves; the ledger holds every record the clients received.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { Agent, request } from 'undici';
import { PgAccounts } from '../../ledger/postgres/store.ts';
import { openPool } from '../../ledger/postgres/db.ts';
import { migrate } from '../../ledger/postgres/migrate.ts';
import { recordSnapshot } from '../../ledger/postgres/cluster.ts';
import { currentSnapshotId } from '../../snapshot/store.ts';
import { privateCluster, privateClusterMissing, type PrivateCluster } from '../pg.ts';
import { freePort } from '../ports.ts';
import { sampleFixture, type Fixture } from '../server/helpers.ts';
import { startNode, stopNodes, type ApiNode } from './nodes.ts';

const LIMIT = 2;

describe('PostgreSQL restarted under load', { skip: privateClusterMissing() ?? false }, () => {
  let cluster: PrivateCluster;
  let fx: Fixture;
  let pool: pg.Pool;
  let key: string;
  let orgId: string;
  const nodes: ApiNode[] = [];
  const dispatcher = new Agent({ connections: 32 });

  async function get(base: string, p: string, auth?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
    const res = await request(`${base}${p}`, {
      dispatcher,
      headers: auth ? { authorization: `Bearer ${auth}` } : {},
      headersTimeout: 15_000,
      bodyTimeout: 15_000,
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  before(async () => {
    cluster = await privateCluster(await freePort());
    const settings = { url: cluster.url, poolMax: 2, statementTimeoutMs: 5000 };
    await migrate(settings);
    pool = openPool(settings, 'outage test');
    const made = await new PgAccounts(pool).createKey('Outage Partner', 'dev@example.com', 'partner');
    key = made.key;
    orgId = made.org.id;
    fx = await sampleFixture();
    await recordSnapshot(settings, (await currentSnapshotId(fx.dataDir))!);
    // Short statement timeouts: a node notices a dead server in about a second.
    for (const name of ['node-a', 'node-b'])
      nodes.push(await startNode({ name, dataDir: fx.dataDir, databaseUrl: cluster.url, env: { PG_STATEMENT_TIMEOUT_MS: '1000' } }));
  });

  after(async () => {
    await stopNodes(nodes);
    await dispatcher.close();
    await pool?.end().catch(() => undefined);
    await cluster?.destroy();
    await fx?.cleanup();
  });

  test('503 with Retry-After while it is down, public pages still served, full service after, no charge lost', async () => {
    const statuses = new Map<number, number>();
    let received = 0;
    let cutOff = 0;
    const failures = new Set<string>();
    let stop = false;
    const loops = Array.from({ length: 6 }, async (_, i) => {
      let n = i;
      while (!stop) {
        const node = nodes[n % nodes.length]!;
        try {
          const a = await get(node.base, `/v1/events?limit=${LIMIT}&offset=${n++ % 30}`, key);
          statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
          if (a.status === 200) received += (JSON.parse(a.text) as { events: unknown[] }).events.length;
          else if (a.status === 503) {
            assert.ok(a.headers['retry-after'], 'a 503 says when to retry');
            assert.match((JSON.parse(a.text) as { type: string }).type, /#unavailable$/, a.text);
          }
        } catch (err) {
          cutOff++;
          failures.add((err as Error).message.slice(0, 200));
        }
        await delay(5);
      }
    });
    await delay(500);
    await cluster.stop();
    // Down: every node says so, refuses live routes, and still serves what needs no ledger.
    for (const node of nodes) {
      let ready = 200;
      for (let i = 0; i < 100 && ready === 200; i++) {
        ready = (await get(node.base, '/readyz')).status;
        if (ready === 200) await delay(50);
      }
      assert.equal(ready, 503, `${node.name}'s /readyz reports the ledger down`);
      const live = await get(node.base, '/v1/events?limit=1', key);
      assert.equal(live.status, 503, live.text);
      const demo = await get(node.base, '/v1/demo/events?limit=1');
      assert.equal(demo.status, 200, `the keyless demo works without the ledger: ${demo.text.slice(0, 200)}`);
      const id = (JSON.parse(demo.text) as { events: { id: string }[] }).events[0]?.id;
      assert.ok(id, demo.text.slice(0, 300));
      const page = await get(node.base, `/events/${id}`);
      assert.equal(page.status, 200, "the website's event page works without the ledger");
    }
    await delay(500);
    await cluster.start();
    // Back: every node reconnects by itself.
    for (const node of nodes) {
      let ready = 503;
      for (let i = 0; i < 200 && ready !== 200; i++) {
        ready = (await get(node.base, '/readyz')).status;
        if (ready !== 200) await delay(50);
      }
      assert.equal(ready, 200, `${node.name} reconnected: ${node.output()}`);
      assert.equal((await get(node.base, '/v1/events?limit=1', key)).status, 200);
    }
    await delay(300);
    stop = true;
    await Promise.all(loops);
    assert.deepEqual(
      [...statuses.keys()].filter((s) => s !== 200 && s !== 503),
      [],
      `only 200 and 503: ${JSON.stringify([...statuses])}`,
    );
    assert.ok((statuses.get(503) ?? 0) > 0, 'some requests met the outage');
    assert.equal(cutOff, 0, `no request was left without an answer: ${[...failures].join('; ')}`);
    const used = Number((await pool.query<{ n: string | null }>('SELECT sum(records) AS n FROM usage_days WHERE org_id = $1', [orgId])).rows[0]?.n ?? 0);
    // The direct checks above received 1 record each on the way back.
    assert.ok(used >= received, `the ledger holds every record received (${used} ≥ ${received})`);
  });
});
