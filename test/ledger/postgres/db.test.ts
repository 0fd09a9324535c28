// The shared ledger's connection layer (ledger/postgres/db.ts, migrate.ts, cluster.ts) on a real PostgreSQL database: the
// migrations applied once however many nodes start together, every statement of sql/postgres
// prepared against the migrated schema with its $name parameters in order, and an announcement
// delivered to a listener only when its transaction commits.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { openClient, openPool, pgQuery, pgQueryNames, transaction } from '../../../ledger/postgres/db.ts';
import { migrate, migrations } from '../../../ledger/postgres/migrate.ts';
import { announce, CHANGES_CHANNEL, recordSnapshot } from '../../../ledger/postgres/cluster.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../../pg.ts';

const missing = await postgresMissing();

describe('the PostgreSQL ledger connection', { skip: missing ?? false }, () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  const settings = () => ({ url: db.url, poolMax: 4, statementTimeoutMs: 5000 });

  before(async () => {
    db = await testDatabase('pg');
  });

  after(async () => {
    await pool?.end();
    await db?.drop();
  });

  test('eight nodes migrating at once apply each migration exactly once', async () => {
    const applied = await Promise.all(Array.from({ length: 8 }, () => migrate(settings())));
    const all = applied.flat().sort((a, b) => a - b);
    assert.deepEqual(
      all,
      migrations().map((m) => m.version),
    );
    pool = openPool(settings(), 'pg test');
    const rows = (await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    assert.deepEqual(
      rows,
      migrations().map((m) => m.version),
    );
    assert.deepEqual(await migrate(settings()), [], 'a later start applies nothing');
  });

  test('every statement prepares against the schema, its parameters numbered in order of first use', async () => {
    const client = await pool.connect();
    try {
      for (const name of pgQueryNames()) {
        const q = pgQuery(name, new Proxy({}, { has: () => true, get: () => null }));
        const numbers = [...q.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
        assert.equal(Math.max(0, ...numbers), q.values?.length ?? 0, name);
        // PREPARE checks the statement and its types without running it (LOCK cannot be prepared).
        if (!/^(?:SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(q.text.replace(/^(?:--.*\n)*/, ''))) continue;
        await client.query(`PREPARE check_${name} AS ${q.text}`);
        await client.query(`DEALLOCATE check_${name}`);
      }
    } finally {
      client.release();
    }
    assert.throws(() => pgQuery('meter_state', {}), /needs parameter \$key_ids/);
  });

  test('an announcement reaches a listener at its commit, and never from a rolled-back transaction', async () => {
    const listener = openClient(settings(), 'pg test listener');
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload}`));
    await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
    try {
      await transaction(pool, async (c) => {
        await announce(c, 'accounts');
        await delay(100);
        assert.deepEqual(heard, [], 'not before the commit');
      });
      await assert.rejects(
        transaction(pool, async (c) => {
          await announce(c, 'accounts');
          throw new Error('rolled back');
        }),
      );
      await recordSnapshot(settings(), 'snap-1');
      for (let i = 0; i < 50 && heard.length < 2; i++) await delay(20);
      assert.deepEqual(heard, [`${CHANGES_CHANNEL}:accounts`, `${CHANGES_CHANNEL}:snapshot`]);
      assert.equal((await pool.query<{ snapshot_id: string }>('SELECT snapshot_id FROM current_snapshot')).rows[0]?.snapshot_id, 'snap-1');
    } finally {
      await listener.end();
    }
  });
});
