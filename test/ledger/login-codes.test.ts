// The sign-in codes (issue 28 item 15; ledger/codes.ts) on both ledgers: AccountsDb on a temporary
// LEDGER_DIR and PgAccounts on a fresh PostgreSQL database, with the same assertions. A code
// spends its link (and the link its code), only in the browser the link is bound to; wrong codes
// count down and the code dies after CODE_MAX_ATTEMPTS; expired and used codes say so; codes go
// with their links when those are purged. The PostgreSQL half skips on a machine without a server.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { sqlFile } from '../../core/sql.ts';
import { CODE_MAX_ATTEMPTS } from '../../ledger/codes.ts';
import { openPool, pgQuery } from '../../ledger/postgres/db.ts';
import { migrate } from '../../ledger/postgres/migrate.ts';
import { PgAccounts } from '../../ledger/postgres/store.ts';
import { PURGE_AFTER_MS } from '../../ledger/rules.ts';
import { AccountsDb, codeQuery, codeQueryNames } from '../../ledger/sqlite/store.ts';
import { postgresMissing, testDatabase } from '../pg.ts';

const missing = await postgresMissing();
const MIN = 60_000;

type Accounts = Pick<PgAccounts, 'issueLoginToken' | 'spendLoginToken' | 'attachLoginCode' | 'spendLoginCode' | 'purgeExpired'>;
interface Backend {
  readonly accounts: Accounts;
  /** The rows of login_codes, as stored. */
  codes(): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

async function openSqlite(): Promise<Backend> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-codes-'));
  const db = AccountsDb.open(dir);
  const call =
    <K extends keyof Accounts>(k: K) =>
    async (...args: unknown[]) =>
      (db[k] as (...a: unknown[]) => unknown).apply(db, args);
  const accounts = {
    issueLoginToken: call('issueLoginToken'),
    spendLoginToken: call('spendLoginToken'),
    attachLoginCode: call('attachLoginCode'),
    spendLoginCode: call('spendLoginCode'),
    purgeExpired: call('purgeExpired'),
  } as unknown as Accounts;
  return {
    accounts,
    codes: async () => {
      const file = new Database(path.join(dir, 'accounts.sqlite'), { readonly: true });
      try {
        return file.prepare('SELECT * FROM login_codes').all() as Record<string, unknown>[];
      } finally {
        file.close();
      }
    },
    close: async () => {
      db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Backend> {
  const database = await testDatabase('codes');
  const settings = { url: database.url, poolMax: 4, statementTimeoutMs: 5000 };
  await migrate(settings);
  const pool = openPool(settings, 'login-codes test');
  return {
    accounts: new PgAccounts(pool),
    codes: async () => (await pool.query('SELECT * FROM login_codes')).rows as Record<string, unknown>[],
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
}

const sha = (v: string): string => createHash('sha256').update(v).digest('hex');
let n = 0;
const freshEmail = (): string => `code${++n}.${Date.now()}@codes.example`;

const BACKENDS = [
  { name: 'sqlite', skip: false as const, open: openSqlite },
  { name: 'postgres', skip: missing ?? (false as const), open: openPostgres },
];

for (const backend of BACKENDS) {
  describe(`sign-in codes on ${backend.name}`, { skip: backend.skip }, () => {
    let be: Backend;
    let a: Accounts;
    before(async () => {
      be = await backend.open();
      a = be.accounts;
    });
    after(async () => be.close());

    /** A sign-in link bound to `browser` with the code whose hash is `code`. */
    async function issue(browser: string, code: string, email = freshEmail(), nowMs = Date.now()): Promise<{ token: string; email: string }> {
      const issued = await a.issueLoginToken(email, 'sign_in', null, sha(browser), 15 * MIN, nowMs);
      assert.ok(issued.ok);
      assert.deepEqual(await a.attachLoginCode(issued.token, sha(`code ${code}`)), { attached: true });
      return { token: issued.token, email };
    }

    test('the right code in the browser that asked spends the link once; the link then and the code again are refused as used', async () => {
      const { token, email } = await issue('laptop', 'A');
      assert.deepEqual(await a.spendLoginCode(sha('laptop'), sha('code A'), Date.now()), { ok: true, email });
      assert.deepEqual(await a.spendLoginCode(sha('laptop'), sha('code A'), Date.now()), { ok: false, reason: 'used' });
      assert.deepEqual(await a.spendLoginToken(token, 'sign_in', sha('laptop'), Date.now()), { ok: false, reason: 'used' });
    });

    test('a code is nothing in another browser: no sign-in waits there, and the laptop can still use it', async () => {
      const { email } = await issue('laptop 2', 'B');
      assert.deepEqual(await a.spendLoginCode(sha('phone'), sha('code B'), Date.now()), { ok: false, reason: 'none' });
      assert.deepEqual(await a.spendLoginCode(sha('laptop 2'), sha('code B'), Date.now()), { ok: true, email });
    });

    test('a link spent first leaves its code used', async () => {
      const { token } = await issue('laptop 3', 'C');
      assert.equal((await a.spendLoginToken(token, 'sign_in', sha('laptop 3'), Date.now())).ok, true);
      assert.deepEqual(await a.spendLoginCode(sha('laptop 3'), sha('code C'), Date.now()), { ok: false, reason: 'used' });
    });

    test(`wrong codes count down; after ${CODE_MAX_ATTEMPTS} the right one is refused too, and the tries are stored`, async () => {
      await issue('laptop 4', 'D');
      for (let left = CODE_MAX_ATTEMPTS - 1; left >= 0; left--)
        assert.deepEqual(await a.spendLoginCode(sha('laptop 4'), sha(`wrong ${left}`), Date.now()), { ok: false, reason: 'wrong', attemptsLeft: left });
      assert.deepEqual(await a.spendLoginCode(sha('laptop 4'), sha('code D'), Date.now()), { ok: false, reason: 'too_many' });
      assert.deepEqual(await a.spendLoginCode(sha('laptop 4'), sha('wrong again'), Date.now()), { ok: false, reason: 'too_many' });
      const row = (await be.codes()).find((r) => r.binding_hash === sha('laptop 4'));
      assert.equal(row?.attempts, CODE_MAX_ATTEMPTS);
      // Only the hash is stored.
      assert.equal(row?.code_hash, sha('code D'));
    });

    test('an expired code says so, and a wrong one then counts nothing; the same code in time works', async () => {
      const at = Date.now();
      const { email } = await issue('laptop 5', 'E', freshEmail(), at);
      assert.deepEqual(await a.spendLoginCode(sha('laptop 5'), sha('code E'), at + 16 * MIN), { ok: false, reason: 'expired' });
      assert.deepEqual(await a.spendLoginCode(sha('laptop 5'), sha('wrong'), at + 16 * MIN), { ok: false, reason: 'expired' });
      assert.equal((await be.codes()).find((r) => r.binding_hash === sha('laptop 5'))?.attempts, 0);
      assert.deepEqual(await a.spendLoginCode(sha('laptop 5'), sha('code E'), at + 14 * MIN), { ok: true, email });
    });

    test('two sign-ins in one browser: either code works, and a wrong code counts against both', async () => {
      const first = await issue('laptop 6', 'F1');
      await issue('laptop 6', 'F2');
      assert.deepEqual(await a.spendLoginCode(sha('laptop 6'), sha('nope'), Date.now()), { ok: false, reason: 'wrong', attemptsLeft: CODE_MAX_ATTEMPTS - 1 });
      assert.deepEqual(
        (await be.codes()).filter((r) => r.binding_hash === sha('laptop 6')).map((r) => r.attempts),
        [1, 1],
      );
      assert.deepEqual(await a.spendLoginCode(sha('laptop 6'), sha('code F1'), Date.now()), { ok: true, email: first.email });
    });

    test('a code is kept only for a sign-in link (not an invitation, not an unknown token)', async () => {
      assert.deepEqual(await a.attachLoginCode('no-such-token', sha('x')), { attached: false });
    });

    test('codes go with their links when those are purged', async () => {
      const at = Date.now() - 2 * PURGE_AFTER_MS;
      await issue('laptop 7', 'G', freshEmail(), at);
      assert.ok((await be.codes()).some((r) => r.binding_hash === sha('laptop 7')));
      await a.purgeExpired(Date.now());
      assert.ok(!(await be.codes()).some((r) => r.binding_hash === sha('laptop 7')));
    });
  });
}

test('every code statement prepares against the embedded schemas', () => {
  const db = new Database(':memory:');
  try {
    db.exec(sqlFile('ledger_accounts'));
    db.exec(sqlFile('ledger_login_codes'));
    const names = codeQueryNames();
    assert.equal(names.length, 4);
    for (const name of names) assert.doesNotThrow(() => db.prepare(codeQuery(name)), name);
  } finally {
    db.close();
  }
});

test('the shared ledger has the same code statements', () => {
  for (const name of codeQueryNames()) assert.doesNotThrow(() => pgQuery(name, new Proxy({}, { has: () => true, get: () => null })), name);
});
