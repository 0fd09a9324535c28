// The website's signing key: a file beside an embedded ledger, made once; on the shared ledger one
// key for every node, whichever node's file seeded it, however many nodes start at once.
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../server/log.ts';
import { Meter } from '../../server/meter.ts';
import { migrate } from '../../ledger/postgres/migrate.ts';
import { loadSecret } from '../../ledger/web-secret.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../pg.ts';

const missing = await postgresMissing();

test('the file is made once, 600, and read back the same by every server on the ledger', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-secret-'));
  try {
    const a = loadSecret(dir);
    const b = loadSecret(dir);
    assert.equal(a.length, 32);
    assert.deepEqual(a, b);
    assert.equal((await stat(path.join(dir, 'web-secret'))).mode & 0o777, 0o600);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('on the embedded ledger the meter signs with the file', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-secret-'));
  const { logger } = createLogger('silent');
  const meter = await Meter.start(loadConfig({ DATA_DIR: dir }), logger);
  try {
    assert.deepEqual(meter.webSecret, loadSecret(path.join(dir, 'ledger')));
  } finally {
    await meter.close();
    await rm(dir, { recursive: true, force: true });
  }
});

describe('on the shared ledger', { skip: missing ?? false }, () => {
  let db: TestDatabase;
  let dir: string;
  const meters: Meter[] = [];
  const { logger } = createLogger('silent');
  /** A node with a LEDGER_DIR (so a web-secret file) of its own. */
  const node = (name: string): Promise<Meter> =>
    Meter.start(loadConfig({ DATA_DIR: dir, LEDGER_DIR: path.join(dir, name), DATABASE_URL: db.url, NODE_NAME: name }), logger).then((m) => {
      meters.push(m);
      return m;
    });

  before(async () => {
    db = await testDatabase('web_secret');
    dir = await mkdtemp(path.join(os.tmpdir(), 'fe-secret-pg-'));
    await migrate({ url: db.url, poolMax: 1, statementTimeoutMs: 5000 });
  });
  after(async () => {
    for (const m of meters) await m.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  test('nodes starting at once, each with its own file, all sign with one of those files; a later node too', async () => {
    const names = ['a', 'b', 'c', 'd'];
    const started = await Promise.all(names.map(node));
    const files = names.map((n) => loadSecret(path.join(dir, n)).toString('hex'));
    assert.equal(new Set(files).size, names.length, 'the nodes own files differ');
    const used = new Set(started.map((m) => m.webSecret.toString('hex')));
    assert.equal(used.size, 1, 'one key for every node');
    assert.ok(files.includes([...used][0] ?? ''), 'the key is one node’s file: the first node seeded it');
    const late = await node('late');
    assert.equal(late.webSecret.toString('hex'), [...used][0]);
    assert.notEqual(loadSecret(path.join(dir, 'late')).toString('hex'), [...used][0]);
  });
});
