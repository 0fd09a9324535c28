// The PostgreSQL metering thread's own promises, with two nodes' metering threads (two Meters, each
// its own thread and pool) on one database: a hold that expires gives its records back to any node
// and can no longer be charged, so the cap stays exact; a key revoked in the database is refused at
// once, before any announcement could arrive; changes reach the other node without polling.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { loadConfig } from '../../../core/config.ts';
import { createLogger } from '../../../server/log.ts';
import { Meter } from '../../../server/meter.ts';
import { keyHash } from '../../../core/keys.ts';
import { PgAccounts } from '../../../ledger/postgres/store.ts';
import { openPool } from '../../../ledger/postgres/db.ts';
import { migrate } from '../../../ledger/postgres/migrate.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../../pg.ts';

const missing = await postgresMissing();
const AT_MS = Date.parse('2026-11-21T09:00:00-08:00');
/** The shortest hold the settings allow: QUERY_TIMEOUT_MS 10 + 1 s. */
const HOLD_MS = 1010;

describe('the PostgreSQL metering thread, two nodes', { skip: missing ?? false }, () => {
  let db: TestDatabase;
  let dir: string;
  let pool: pg.Pool;
  let accounts: PgAccounts;
  let a: Meter;
  let b: Meter;
  const { logger } = createLogger('silent');

  before(async () => {
    db = await testDatabase('pg_thread');
    dir = await mkdtemp(path.join(os.tmpdir(), 'fe-pg-thread-'));
    const settings = { url: db.url, poolMax: 2, statementTimeoutMs: 5000 };
    await migrate(settings);
    pool = openPool(settings, 'pg-thread test');
    accounts = new PgAccounts(pool);
    const node = (name: string) =>
      loadConfig({ DATA_DIR: dir, DATABASE_URL: db.url, NODE_NAME: name, QUERY_TIMEOUT_MS: '10', LEDGER_HOLD_MS: String(HOLD_MS) });
    [a, b] = await Promise.all([Meter.start(node('a'), logger), Meter.start(node('b'), logger)]);
  });

  after(async () => {
    await a?.close();
    await b?.close();
    await pool?.end();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** The key as a node knows it once a request has looked it up. */
  async function known(m: Meter, key: string): Promise<string> {
    const k = await m.lookup(keyHash(key));
    assert.ok(k !== null && !('ok' in k), JSON.stringify(k));
    return k.keyId;
  }

  test('an expired hold gives its records to another node and cannot be charged after', async () => {
    const made = await accounts.createKey('Expiring', 'x@example.com', 'community');
    const keyA = await known(a, made.key);
    const keyB = await known(b, made.key);
    const held = await a.reserve(keyA, 20, false, AT_MS);
    assert.ok(held.ok && held.reservation !== null);
    assert.equal(held.granted, 20);
    // While a's hold lives, b gets only what is left.
    const meanwhile = await b.reserve(keyB, 25, false, AT_MS);
    assert.ok(meanwhile.ok);
    assert.equal(meanwhile.granted, 5);
    if (meanwhile.reservation !== null) b.release(meanwhile.reservation);
    await delay(HOLD_MS + 200);
    // Expired: the 20 are back, and b takes all 25.
    const after = await b.reserve(keyB, 25, false, AT_MS);
    assert.ok(after.ok && after.reservation !== null);
    assert.equal(after.granted, 25);
    const late = await a.commit(held.reservation, 20, AT_MS);
    assert.equal(late.ok, false, 'a charge against an expired hold is refused');
    assert.equal(!late.ok && late.code, 'unavailable');
    const done = await b.commit(after.reservation, 25, AT_MS);
    assert.ok(done.ok);
    const used = await pool.query<{ n: number }>('SELECT sum(records)::int AS n FROM usage_days WHERE org_id = $1', [made.org.id]);
    assert.equal(used.rows[0]?.n, 25, 'exactly the cap, never 45');
  });

  test('a key revoked in the database is refused by the other node at once, and its copy of the keys follows within a second', async () => {
    const made = await accounts.createKey('Revoked', 'r@example.com', 'partner');
    const keyB = await known(b, made.key);
    assert.ok((await b.reserve(keyB, 1, true, AT_MS)).ok);
    const t0 = performance.now();
    await accounts.revoke(made.keyId);
    // The grant is decided against the database's row, whatever the node's copy says yet.
    const refused = await b.reserve(keyB, 1, true, AT_MS);
    assert.equal(!refused.ok && refused.code, 'invalid_api_key');
    while (b.key(keyHash(made.key))?.revoked !== true && performance.now() - t0 < 3000) await delay(10);
    assert.equal(b.key(keyHash(made.key))?.revoked, true);
    assert.ok(performance.now() - t0 < 1000, `announced within a second (${Math.round(performance.now() - t0)} ms)`);
  });
});
