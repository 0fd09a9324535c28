// `family-events ledger migrate|copy` as an operator runs them (real processes, a real PostgreSQL
// database per test): migrations apply once; a single node's embedded ledger, made by the command
// line and charged by the metering thread's own writer, copies into PostgreSQL so that the same
// commands print the same with DATABASE_URL as without; and the copy refuses, writing nothing,
// when the target is not empty or a server still holds the files. Skips without PostgreSQL.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { REPO_ROOT } from '../../core/config.ts';
import { migrationLabel, migrations } from '../../ledger/postgres/migrate.ts';
import { CHANGES_CHANNEL } from '../../ledger/postgres/cluster.ts';
import { AccountsDb, takeWriterLock, UsageDb } from '../../ledger/sqlite/store.ts';
import { NOW_ISO } from '../server/helpers.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../pg.ts';

const run = promisify(execFile);
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
const missing = await postgresMissing();

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let dir = '';
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-cli-ledger-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

let dirs = 0;
/** A DATA_DIR of its own (its ledger under DATA_DIR/ledger). */
const dataDir = (): string => path.join(dir, `data${++dirs}`);
const ledgerOf = (data: string): string => path.join(data, 'ledger');

async function cli(data: string, databaseUrl: string | null, args: string[]): Promise<Result> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', DATA_DIR: data, FAMILY_EVENTS_NOW: NOW_ISO };
  if (databaseUrl !== null) env['DATABASE_URL'] = databaseUrl;
  try {
    const r = await run(process.execPath, [BIN, ...args], { env });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function ok(data: string, databaseUrl: string | null, args: string[]): Promise<string> {
  const r = await cli(data, databaseUrl, args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A failure: exit 1, nothing on stdout, one line on stderr matching `says`. */
async function fails(data: string, databaseUrl: string | null, args: string[], says: RegExp): Promise<string> {
  const r = await cli(data, databaseUrl, args);
  assert.equal(r.code, 1, `${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, says);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  return r.stderr;
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Runs `fn` with a fresh database, dropped after. */
async function withDatabase(label: string, fn: (db: TestDatabase) => Promise<void>): Promise<void> {
  const db = await testDatabase(label);
  try {
    await fn(db);
  } finally {
    await db.drop();
  }
}

describe('family-events ledger', { skip: missing ?? false }, () => {
  test('migrate applies the schema once: the second run finds it current', () =>
    withDatabase('cli_migrate', async (db) => {
      const data = dataDir();
      const files = migrations();
      const newest = files.at(-1)?.version;
      assert.ok(newest !== undefined && files.length >= 2);
      assert.deepEqual(JSON.parse(await ok(data, db.url, ['ledger', 'migrate', '--json'])), {
        applied: files.map((m) => ({ version: m.version, name: m.name })),
        version: newest,
      });
      assert.deepEqual(JSON.parse(await ok(data, db.url, ['ledger', 'migrate', '--json'])), { applied: [], version: newest });
      assert.equal(await ok(data, db.url, ['ledger', 'migrate']), `the ledger schema is current (version ${newest}); nothing to apply\n`);
      const applied = await query<{ version: number }>(db.url, 'SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(
        applied,
        files.map((m) => ({ version: m.version })),
      );
    }));

  test('migrate and copy say what to do when DATABASE_URL is not set or reaches nothing', async () => {
    const data = dataDir();
    await fails(data, null, ['ledger', 'migrate'], /DATABASE_URL is not set/);
    await fails(data, null, ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres'], /DATABASE_URL is not set/);
    const nowhere = 'postgresql://postgres@localhost/fe_no_such_database_here?host=/var/run/postgresql';
    await fails(data, nowhere, ['ledger', 'migrate'], /cannot reach the PostgreSQL ledger at DATABASE_URL .*does not exist/);
    await fails(data, nowhere, ['keys', 'list'], /cannot reach the PostgreSQL ledger at DATABASE_URL/);
    await fails(data, nowhere, ['ledger', 'copy', '--from', 'postgres', '--to', 'sqlite'], /the one supported copy is --from sqlite --to postgres/);
    await fails(data, nowhere, ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres'], /no embedded ledger to copy: .*accounts\.sqlite does not exist/);
  });

  describe('copy --from sqlite --to postgres', () => {
    let data = '';
    let db: TestDatabase;
    const orgs: Record<string, string> = {};
    /** What the commands print on the embedded ledger, before any copy. */
    const printed = new Map<string, string>();
    const COMMANDS = [
      ['keys', 'list', '--json'],
      ['keys', 'list'],
      ['plans', 'list', '--json'],
      ['usage', '--org', 'Acme Newsletter', '--json'],
      ['usage', '--org', 'Acme Newsletter'],
      ['usage', '--org', 'Bay Media', '--json'],
      ['usage', '--org', 'Kids Club'],
    ];

    before(async () => {
      db = await testDatabase('cli_copy');
      data = dataDir();
      const create = async (org: string, email: string, plan?: string) => {
        const made = JSON.parse(await ok(data, null, ['keys', 'create', '--email', email, '--org', org, ...(plan ? ['--plan', plan] : []), '--json'])) as {
          org_id: string;
          key: string;
        };
        orgs[org] = made.org_id;
        return made;
      };
      await ok(data, null, ['plans', 'set', 'kids', '--monthly-limit', '100', '--exclude', 'seasonal', '--requests-per-minute', '5']);
      const acme = await create('Acme Newsletter', 'ann@acme.example');
      const acme2 = await create('Acme Newsletter', 'bob@acme.example');
      const bay = await create('Bay Media', 'ed@baymedia.example', 'partner');
      await create('Kids Club', 'kim@kidsclub.example');
      await ok(data, null, ['orgs', 'set-plan', '--org', 'Kids Club', '--plan', 'kids']);
      await ok(data, null, ['keys', 'revoke', acme2.key]);
      const keys = (JSON.parse(await ok(data, null, ['keys', 'list', '--json'])) as { keys: { id: string; hint: string }[] }).keys;
      const idOf = (key: string) => keys.find((k) => key.endsWith(k.hint.slice(-4)))!.id;
      // Usage as the server's metering thread writes it: this month, and the month before.
      const usage = UsageDb.openWriter(ledgerOf(data));
      usage.transaction(() => {
        usage.charge(orgs['Acme Newsletter']!, idOf(acme.key), '2026-11-02', 10, 2);
        usage.charge(orgs['Acme Newsletter']!, idOf(acme.key), '2026-11-21', 5, 1);
        usage.charge(orgs['Acme Newsletter']!, idOf(acme2.key), '2026-11-20', 7, 3);
        usage.charge(orgs['Acme Newsletter']!, idOf(acme.key), '2026-10-31', 25, 9);
        usage.charge(orgs['Bay Media']!, idOf(bay.key), '2026-11-21', 1200, 4);
      });
      usage.close();
      // A sign-in link waiting to be used, with its one-time code (issue 28 item 15), as the
      // website leaves them: a move must not lose the code someone is about to type.
      const accounts = AccountsDb.open(ledgerOf(data));
      try {
        const link = accounts.issueLoginToken('new@parent.example', 'sign_in', null, 'binding-of-the-laptop', 60 * 60_000);
        assert.ok(link.ok);
        assert.ok(accounts.attachLoginCode(link.token, 'slow-hash-of-the-code').attached);
      } finally {
        accounts.close();
      }
      for (const args of COMMANDS) printed.set(args.join(' '), await ok(data, null, args));
    });
    after(async () => {
      await db?.drop();
    });

    test('copies every row in one transaction, verifies it, and the commands print the same with DATABASE_URL', async () => {
      const r = await cli(data, db.url, ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), {
        from: 'sqlite',
        to: 'postgres',
        ledger_dir: ledgerOf(data),
        migrated: migrations().map(migrationLabel),
        rows: { plans: 3, users: 0, organizations: 3, api_keys: 4, identities: 0, memberships: 0, sessions: 0, login_tokens: 1, login_codes: 1, usage_days: 5 },
        usage: { organizations: 2, records: 1247, requests: 19 },
        verified: true,
      });
      for (const args of COMMANDS) assert.equal(await ok(data, db.url, args), printed.get(args.join(' ')), `${args.join(' ')} prints the same on PostgreSQL`);

      // Keys keep the order they were made in, and their states; instants and jsonb converted.
      const keys = await query<{ email: string; revoked: boolean }>(db.url, 'SELECT email, revoked_at IS NOT NULL AS revoked FROM api_keys ORDER BY seq');
      assert.deepEqual(keys, [
        { email: 'ann@acme.example', revoked: false },
        { email: 'bob@acme.example', revoked: true },
        { email: 'ed@baymedia.example', revoked: false },
        { email: 'kim@kidsclub.example', revoked: false },
      ]);
      const kids = await query<Record<string, unknown>>(
        db.url,
        "SELECT monthly_record_limit::int AS lim, excluded_categories, attribution_required, pg_typeof(created_at)::text AS t FROM plans WHERE name = 'kids'",
      );
      assert.deepEqual(kids, [{ lim: 100, excluded_categories: ['seasonal'], attribution_required: true, t: 'timestamp with time zone' }]);
      // The waiting code came along with its link, still bound to the browser that asked.
      const codes = await query<Record<string, unknown>>(
        db.url,
        'SELECT c.binding_hash, c.code_hash, c.attempts, t.email FROM login_codes c JOIN login_tokens t USING (token_hash)',
      );
      assert.deepEqual(codes, [{ binding_hash: 'binding-of-the-laptop', code_hash: 'slow-hash-of-the-code', attempts: 0, email: 'new@parent.example' }]);
    });

    test('refuses a target that already holds accounts, and writes nothing', async () => {
      const before = await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM api_keys');
      await fails(
        data,
        db.url,
        ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres'],
        /already holds 3 organizations, 4 keys, 1 sign-in link, 1 sign-in code, 5 usage rows: copy only into a new, empty ledger .*Nothing was written/,
      );
      assert.deepEqual(await query(db.url, 'SELECT count(*)::int AS n FROM api_keys'), before);

      // A ledger that only a key was made in, on PostgreSQL itself, is no target either.
      await withDatabase('cli_copy_busy', async (other) => {
        await ok(dataDir(), other.url, ['keys', 'create', '--email', 'x@y.example', '--org', 'Already Here', '--json']);
        await fails(data, other.url, ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres'], /already holds 1 organization, 1 key:/);
        assert.deepEqual(await query(other.url, 'SELECT name FROM organizations'), [{ name: 'Already Here' }]);
      });
    });

    test("refuses while a server holds the ledger's writer lock, and writes nothing", () =>
      withDatabase('cli_copy_locked', async (other) => {
        const lock = takeWriterLock(ledgerOf(data));
        try {
          await fails(
            data,
            other.url,
            ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres'],
            /a server is running on .* \(it holds writer\.lock\): stop it first.*Nothing was written/,
          );
        } finally {
          lock.release();
        }
        assert.deepEqual(await query(other.url, "SELECT to_regclass('organizations') AS t"), [{ t: null }], 'not even migrated');
        // Once the server has stopped, the same copy goes through.
        const out = await ok(data, other.url, ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres']);
        const migrated = migrations().map(migrationLabel).join(', ');
        assert.ok(out.startsWith(`applied ${migrated} to DATABASE_URL first\n`), out);
        assert.match(
          out,
          /\ncopied .* in one transaction:\n {2}3 plans, 0 users, 3 organizations, 4 keys, .*, 5 usage rows\n {2}usage: 1247 records and 19 requests of 2 organizations\nverified:/,
        );
      }));
  });
});

// The copy announces itself to running nodes at its commit (they re-read the accounts).
describe('family-events ledger copy, heard by a running node', { skip: missing ?? false }, () => {
  test('announces the accounts change once, at the commit', () =>
    withDatabase('cli_copy_heard', async (db) => {
      const data = dataDir();
      await ok(data, null, ['keys', 'create', '--email', 'a@heard.example', '--org', 'Heard', '--json']);
      await ok(data, db.url, ['ledger', 'migrate']);
      const listener = new pg.Client({ connectionString: db.url });
      await listener.connect();
      const heard: (string | undefined)[] = [];
      listener.on('notification', (m) => heard.push(m.payload));
      await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
      try {
        await ok(data, db.url, ['ledger', 'copy', '--from', 'sqlite', '--to', 'postgres']);
        const start = Date.now();
        while (heard.length === 0 && Date.now() - start < 2000) await sleep(20);
        await sleep(100);
        assert.deepEqual(heard, ['accounts']);
      } finally {
        await listener.end();
      }
    }));
});
