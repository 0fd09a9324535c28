// `family-events keys create` at an organization's limit of live keys (issue 26), as an operator
// runs it (a real process), on both ledgers: a clear error that says what to do and writes nothing,
// and --allow-over-limit as the operator's override. Other organizations are not affected.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../core/config.ts';
import { openPool } from '../../ledger/postgres/db.ts';
import { migrate } from '../../ledger/postgres/migrate.ts';
import { PgAccounts } from '../../ledger/postgres/store.ts';
import { LIVE_KEYS_PER_ORG } from '../../ledger/rules.ts';
import { AccountsDb } from '../../ledger/sqlite/store.ts';
import { NOW_ISO } from '../server/helpers.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../pg.ts';

const run = promisify(execFile);
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
const missing = await postgresMissing();
const settings = (url: string) => ({ url, poolMax: 2, statementTimeoutMs: 5000 });

for (const backend of [
  { name: 'the embedded ledger', postgres: false, skip: false as const },
  { name: 'PostgreSQL', postgres: true, skip: missing ?? (false as const) },
]) {
  describe(`keys create at the limit of live keys, on ${backend.name}`, { skip: backend.skip }, () => {
    let dataDir = '';
    let database: TestDatabase | null = null;

    before(async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'fe-cli-key-limit-'));
      if (backend.postgres) database = await testDatabase('cli_key_limit');
    });
    after(async () => {
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
      const env: Record<string, string> = { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, FAMILY_EVENTS_NOW: NOW_ISO };
      if (database) env['DATABASE_URL'] = database.url;
      try {
        const r = await run(process.execPath, [BIN, ...args], { env });
        return { code: 0, stdout: r.stdout, stderr: r.stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    }

    /** The organization with the limit of live keys, made through the store as `keys create` makes them. */
    async function orgAtLimit(name: string): Promise<{ count(): Promise<number> }> {
      if (database) {
        await migrate(settings(database.url));
        const pool = openPool(settings(database.url), 'key-limit test');
        const a = new PgAccounts(pool);
        for (let i = 0; i < LIVE_KEYS_PER_ORG; i++) await a.createKey(name, 'ops@example.org', 'community', LIVE_KEYS_PER_ORG);
        await pool.end();
        return {
          count: async () => {
            const p = openPool(settings(database!.url), 'key-limit test');
            try {
              return (await new PgAccounts(p).keys()).filter((k) => k.org_name === name).length;
            } finally {
              await p.end();
            }
          },
        };
      }
      const ledgerDir = path.join(dataDir, 'ledger');
      const a = AccountsDb.open(ledgerDir);
      for (let i = 0; i < LIVE_KEYS_PER_ORG; i++) a.createKey(name, 'ops@example.org', 'community', LIVE_KEYS_PER_ORG);
      a.close();
      return {
        count: async () => {
          const b = AccountsDb.open(ledgerDir);
          try {
            return b.keys().filter((k) => k.org_name === name).length;
          } finally {
            b.close();
          }
        },
      };
    }

    test('refused with what to do and nothing written; --allow-over-limit creates it; another organization is free', async () => {
      const org = await orgAtLimit('Busy Newsletter');
      const refused = await cli(['keys', 'create', '--org', 'Busy Newsletter', '--email', 'ops@example.org']);
      assert.notEqual(refused.code, 0);
      assert.equal(refused.stdout, '');
      assert.match(refused.stderr, new RegExp(`already has ${LIVE_KEYS_PER_ORG} live keys`));
      assert.match(refused.stderr, /keys revoke/);
      assert.match(refused.stderr, /--allow-over-limit/);
      assert.ok(!refused.stderr.includes('    at '), 'no stack trace');
      assert.equal(await org.count(), LIVE_KEYS_PER_ORG);

      const over = await cli(['keys', 'create', '--org', 'Busy Newsletter', '--email', 'ops@example.org', '--allow-over-limit', '--json']);
      assert.equal(over.code, 0, over.stderr);
      assert.match((JSON.parse(over.stdout) as { key: string }).key, /^bsc_live_/);
      assert.equal(await org.count(), LIVE_KEYS_PER_ORG + 1);

      assert.equal((await cli(['keys', 'create', '--org', 'Quiet Club', '--email', 'ops@example.org'])).code, 0);
    });
  });
}
