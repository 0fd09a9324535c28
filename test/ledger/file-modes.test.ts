// The ledger's files are owner only (issue 26 item 9): accounts.sqlite, usage.sqlite, their -wal
// and -shm, writer.lock and web-secret are 0600, and a ledger directory the server makes is 0700,
// with the umask at 022 (which leaves SQLite's own files 0644). Real files, real server, fs.stat.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { AccountsDb, UsageDb, takeWriterLock } from '../../ledger/sqlite/store.ts';
import { loadSecret } from '../../ledger/web-secret.ts';
import { get, provisionKey, sampleFixture, startTestServer, type Fixture } from '../server/helpers.ts';

const mode = (file: string): string => (statSync(file).mode & 0o777).toString(8).padStart(3, '0');

/** Every file of `dir` with its mode, for one assertion that names the ones that are wrong. */
function modes(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((name) => [name, mode(path.join(dir, name))]));
}

function assertOwnerOnly(dir: string, expected: readonly string[]): void {
  const seen = modes(dir);
  for (const name of expected) assert.ok(name in seen, `${name} was not written (files: ${Object.keys(seen).join(', ')})`);
  assert.deepEqual(seen, Object.fromEntries(Object.keys(seen).map((n) => [n, '600'])), `every file of ${dir} is owner only`);
}

describe('ledger files are owner only (0600), with the umask at 022', () => {
  let umask: number;
  const dirs: string[] = [];
  const tmp = (): string => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'fe-modes-'));
    dirs.push(d);
    return d;
  };

  before(() => {
    umask = process.umask(0o022);
  });
  after(() => {
    process.umask(umask);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('what the metering thread and the command line write: both stores, their WAL files, the writer lock, the web secret', () => {
    const dir = path.join(tmp(), 'ledger');
    const lock = takeWriterLock(dir);
    const accounts = AccountsDb.open(dir);
    const usage = UsageDb.openWriter(dir);
    loadSecret(dir);
    // The command line's `keys create`, while the stores are open: the WAL files exist now.
    provisionKey(dir, { org: 'Modes' });
    assertOwnerOnly(dir, [
      'accounts.sqlite',
      'accounts.sqlite-wal',
      'accounts.sqlite-shm',
      'usage.sqlite',
      'usage.sqlite-wal',
      'usage.sqlite-shm',
      'writer.lock',
      'web-secret',
    ]);
    assert.equal(mode(dir), '700', 'the ledger directory the server made');
    usage.close();
    accounts.close();
    lock.release();
  });

  test('files an older version left world-readable are narrowed when a writer opens them', () => {
    const dir = tmp();
    for (const name of ['accounts.sqlite', 'usage.sqlite']) {
      const db = new Database(path.join(dir, name));
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE IF NOT EXISTS t (x)');
      db.close();
      chmodSync(path.join(dir, name), 0o644);
    }
    assert.equal(mode(path.join(dir, 'accounts.sqlite')), '644');
    const accounts = AccountsDb.open(dir);
    const usage = UsageDb.openWriter(dir);
    assertOwnerOnly(dir, ['accounts.sqlite', 'usage.sqlite']);
    usage.close();
    accounts.close();
  });

  describe('the real server', () => {
    let fx: Fixture;
    before(async () => {
      fx = await sampleFixture();
    });
    after(async () => {
      await fx?.cleanup();
    });

    test('its ledger directory, after it has served and charged a metered key, holds only owner-only files', async () => {
      const ledger = path.join(tmp(), 'ledger');
      const srv = await startTestServer(fx.dataDir, { LEDGER_DIR: ledger });
      try {
        const { key } = provisionKey(ledger, { plan: 'community', org: 'Charged' });
        const r = await get(srv.base, '/v1/events?limit=2', { headers: { authorization: `Bearer ${key}` } });
        assert.equal(r.status, 200, r.text.slice(0, 200));
        assertOwnerOnly(ledger, ['accounts.sqlite', 'usage.sqlite', 'writer.lock', 'web-secret']);
        assert.equal(mode(ledger), '700');
      } finally {
        await srv.stop();
      }
    });
  });
});
