// The accounts commands as an operator runs them (real processes on a temporary DATA_DIR): keys
// create/list, errors, the key stored only as a hash, plans as data, and `usage` agreeing with a real
// server's /v1/usage for a key on a plan made with `plans set`. Every case runs on both ledgers: the
// embedded one in LEDGER_DIR, and the shared PostgreSQL one (DATABASE_URL, a database of its own;
// skipped with a reason where no PostgreSQL server answers).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import * as v from 'valibot';
import { REPO_ROOT } from '../../core/config.ts';
import { ProblemSchema, UsageSchema } from '../../server/schemas.ts';
import { get, NOW, NOW_ISO, sampleFixture, startTestServer, type Fixture } from '../server/helpers.ts';
import { postgresMissing, testDatabase, type TestDatabase } from '../pg.ts';

const run = promisify(execFile);
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
const KEY_SHAPE = /^bsc_live_[0-9A-Za-z]{32,}$/;

const missing = await postgresMissing();

let dir = '';
let fx: Fixture;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

interface Created {
  org_id: string;
  key: string;
  plan: string;
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-cli-accounts-'));
  fx = await sampleFixture();
});

after(async () => {
  await fx.cleanup();
  await rm(dir, { recursive: true, force: true });
});

/** Every file under a directory, recursively (the store may add -wal/-shm files next to its databases). */
async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const p = path.join(root, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(p)));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Every row of every table of the shared ledger, as text. */
async function databaseText(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const tables = (await c.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'")).rows.map((r) => r.t);
    assert.ok(tables.includes('api_keys'), `the shared ledger's tables: ${tables.join(', ')}`);
    const out: string[] = [];
    for (const t of tables) out.push(JSON.stringify((await c.query(`SELECT * FROM ${t}`)).rows));
    return out.join('\n');
  } finally {
    await c.end();
  }
}

for (const backend of [
  { name: 'the embedded ledger', postgres: false, skip: false as const },
  { name: 'PostgreSQL', postgres: true, skip: missing ?? (false as const) },
]) {
  describe(`on ${backend.name}`, { skip: backend.skip }, () => {
    let dataDir = '';
    let ledgerDir = '';
    let database: TestDatabase | null = null;

    before(async () => {
      dataDir = path.join(dir, backend.postgres ? 'postgres' : 'sqlite', 'data');
      ledgerDir = path.join(dataDir, 'ledger');
      if (backend.postgres) database = await testDatabase('cli_accounts');
    });

    after(async () => {
      await database?.drop();
    });

    /** Every key a command printed, with the organization it was made for. */
    const created: { org: string; email: string; made: Created }[] = [];

    async function cli(args: string[]): Promise<Result> {
      try {
        const env: Record<string, string> = { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, FAMILY_EVENTS_NOW: NOW_ISO };
        if (database) env['DATABASE_URL'] = database.url;
        const r = await run(process.execPath, [BIN, ...args], { env });
        return { code: 0, stdout: r.stdout, stderr: r.stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    }

    /** `keys create --json`: stdout must be exactly one JSON object with exactly the three fields. */
    async function createKey(org: string, email: string, plan?: string): Promise<Created> {
      const r = await cli(['keys', 'create', '--email', email, '--org', org, ...(plan === undefined ? [] : ['--plan', plan]), '--json']);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
      assert.equal(lines.length, 1, `one line on stdout: ${JSON.stringify(r.stdout)}`);
      const made = JSON.parse(r.stdout) as Created;
      assert.deepEqual(Object.keys(made).sort(), ['key', 'org_id', 'plan']);
      assert.equal(typeof made.org_id, 'string');
      assert.ok(made.org_id.length > 0);
      assert.match(made.key, KEY_SHAPE);
      created.push({ org, email, made });
      return made;
    }

    async function assertNoKeyStored(keys: readonly string[]): Promise<void> {
      const stores: [string, Buffer | string][] = [];
      if (database) {
        // The command line wrote nothing under LEDGER_DIR: the shared ledger holds the accounts.
        const files = await filesUnder(ledgerDir).catch(() => []);
        assert.ok(!files.some((f) => path.basename(f) === 'accounts.sqlite'), `no accounts.sqlite with DATABASE_URL: ${files.join(', ')}`);
        stores.push(['the shared ledger', await databaseText(database.url)]);
      } else {
        const files = await filesUnder(ledgerDir);
        assert.ok(
          files.some((f) => path.basename(f) === 'accounts.sqlite'),
          `the accounts store is under LEDGER_DIR: ${files.join(', ')}`,
        );
        for (const file of files) stores.push([path.basename(file), await readFile(file)]);
      }
      for (const [where, bytes] of stores) {
        for (const key of keys) {
          assert.ok(!bytes.includes(key), `${where} holds the key …${key.slice(-4)}`);
          assert.ok(!bytes.includes(key.slice('bsc_live_'.length)), `${where} holds the secret of …${key.slice(-4)}`);
        }
      }
    }

    describe('family-events keys', () => {
      test('keys create --json: one object {org_id, key, plan}; community by default; same --org reuses the organization', async () => {
        const first = await createKey('Acme Newsletter', 'ann@acme.example');
        assert.equal(first.plan, 'community');
        const [second, partner] = await Promise.all([
          createKey('Acme Newsletter', 'bob@acme.example'),
          createKey('Bay Media', 'ed@baymedia.example', 'partner'),
        ]);
        assert.equal(second.org_id, first.org_id, 'an existing organization name reuses the organization');
        assert.equal(second.plan, 'community');
        assert.notEqual(second.key, first.key, 'every key is new');
        assert.equal(partner.plan, 'partner');
        assert.notEqual(partner.org_id, first.org_id);
        assert.equal(new Set([first.key, second.key, partner.key]).size, 3);
      });

      test("bad input: non-zero exit, nothing on stdout, one line on stderr (plus commander's --help hint)", async () => {
        const cases: [string, string[], RegExp][] = [
          ['no --email', ['keys', 'create', '--org', 'Nobody Inc', '--json'], /--email/],
          ['bad --email', ['keys', 'create', '--email', 'not-an-address', '--org', 'Bad Mail Inc', '--json'], /not-an-address/],
          ['unknown --plan', ['keys', 'create', '--email', 'gold@example.org', '--org', 'Gold Inc', '--plan', 'gold', '--json'], /gold/],
          ['usage of an unknown organization', ['usage', '--org', 'org_NoSuchOrganization', '--json'], /org_NoSuchOrganization/],
        ];
        const results = await Promise.all(cases.map(([, args]) => cli(args)));
        // Every case is checked before anything is asserted, so one failure does not hide another.
        const wrong: string[] = [];
        cases.forEach(([what, , names], i) => {
          const r = results[i];
          assert.ok(r);
          if (r.code === 0) wrong.push(`${what}: exit code 0`);
          if (r.stdout.trim() !== '') wrong.push(`${what}: stdout ${JSON.stringify(r.stdout)}`);
          const stderr = r.stderr.trim();
          if (!names.test(stderr)) wrong.push(`${what}: stderr does not say what is wrong: ${JSON.stringify(r.stderr)}`);
          // Usage errors caught by commander add one fixed hint line after the message.
          const lines = stderr.split('\n').filter((l) => l !== '(run with --help for usage)');
          if (lines.length !== 1) wrong.push(`${what}: not one line on stderr: ${JSON.stringify(r.stderr)}`);
        });
        assert.deepEqual(wrong, []);
      });

      test('the key is stored only as a hash; keys list shows a hint, never the key', async () => {
        assert.ok(created.length >= 3, 'keys were created above');
        const keys = created.map((c) => c.made.key);
        await assertNoKeyStored(keys);

        const r = await cli(['keys', 'list', '--json']);
        assert.equal(r.code, 0, r.stderr);
        for (const key of keys) {
          assert.ok(!r.stdout.includes(key), `keys list shows the key …${key.slice(-4)}`);
          assert.ok(!r.stdout.includes(key.slice('bsc_live_'.length)), `keys list shows the secret of …${key.slice(-4)}`);
        }
        const listed = (
          JSON.parse(r.stdout) as { keys: { id: string; hint: string; org_id: string; org_name: string; email: string; revoked_at: string | null }[] }
        ).keys;
        // The failed creates above made nothing.
        assert.equal(listed.length, created.length, JSON.stringify(listed));
        for (const { org, email, made } of created) {
          const mine = listed.filter((k) => k.org_id === made.org_id && k.email === email);
          assert.equal(mine.length, 1, `one listed key for ${email}`);
          const k = mine[0];
          assert.ok(k);
          assert.ok(k.hint.endsWith(made.key.slice(-4)), `hint ${k.hint} ends with the key's last four characters`);
          assert.ok(k.hint.length < made.key.length - 20, `hint ${k.hint} gives away little of the key`);
          assert.equal(k.org_name, org);
          assert.equal(k.revoked_at, null);
        }
      });
    });

    describe('family-events plans and usage', () => {
      test('plans set adds a plan; a key on it is capped and filtered by a real server; usage --org equals /v1/usage', async () => {
        const set = await cli(['plans', 'set', 'kids', '--monthly-limit', '100', '--exclude', 'seasonal', '--requests-per-minute', '5']);
        assert.equal(set.code, 0, set.stderr);
        const [list, made] = await Promise.all([cli(['plans', 'list', '--json']), createKey('Kids Club', 'kim@kidsclub.example', 'kids')]);
        assert.equal(list.code, 0, list.stderr);
        const plans = (JSON.parse(list.stdout) as { plans: Record<string, unknown>[] }).plans;
        const kids = plans.find((p) => p['name'] === 'kids');
        assert.ok(kids, `plans list shows kids: ${list.stdout}`);
        assert.deepEqual(kids, {
          name: 'kids',
          monthly_record_limit: 100,
          excluded_categories: ['seasonal'],
          attribution_required: true,
          requests_per_minute: 5,
        });
        for (const shipped of ['community', 'partner'])
          assert.ok(
            plans.some((p) => p['name'] === shipped),
            `${shipped} is still there`,
          );
        assert.equal(made.plan, 'kids');

        // A city with more than a page of upcoming events the kids plan may see.
        const allowed = fx.rows.filter((r) => r.end_ms >= NOW.getTime() && !r.categories.includes('seasonal'));
        const counts = new Map<string, number>();
        for (const r of allowed) counts.set(r.venue_city, (counts.get(r.venue_city) ?? 0) + 1);
        const best = [...counts].sort((a, b) => b[1] - a[1])[0];
        assert.ok(best && best[1] > 11, 'the sample has a busy city');
        const city = encodeURIComponent(best[0]);
        const byId = new Map(fx.rows.map((r) => [r.id, r]));

        // On PostgreSQL the server meters on the database (the test helper's default key is made there too).
        const ts = await startTestServer(fx.dataDir, database ? { DATABASE_URL: database.url } : { LEDGER_DIR: ledgerDir });
        try {
          // The kids plan allows 5 requests a minute per key: this test makes 4 with it.
          const auth = { headers: { authorization: `Bearer ${made.key}` } };
          const first = await get(ts.base, `/v1/events?city=${city}&limit=7`, auth);
          assert.equal(first.status, 200, first.text);
          assert.equal(first.headers.get('x-quota-limit'), '100');
          assert.equal(first.json.events.length, 7);
          assert.equal(first.json.total, best[1], 'total counts every allowed upcoming event in the city');
          assert.equal(first.headers.get('x-quota-remaining'), '93');

          const seasonal = await get(ts.base, '/v1/events?category=seasonal', auth);
          assert.equal(seasonal.status, 403, seasonal.text);
          assert.equal(v.parse(ProblemSchema, seasonal.json).code, 'category_not_in_plan');
          assert.equal(seasonal.headers.get('x-quota-limit'), '100');

          const second = await get(ts.base, `/v1/events?city=${city}&limit=4&offset=7`, auth);
          assert.equal(second.status, 200, second.text);
          assert.equal(second.json.events.length, 4);
          assert.equal(second.headers.get('x-quota-remaining'), '89');
          for (const e of [...first.json.events, ...second.json.events] as { id: string }[]) {
            assert.ok(!byId.get(e.id)?.categories.includes('seasonal'), `${e.id} is seasonal`);
          }

          const usage = await get(ts.base, '/v1/usage', auth);
          assert.equal(usage.status, 200, usage.text);
          const body = v.parse(UsageSchema, usage.json);
          assert.deepEqual(body.organization, { id: made.org_id, name: 'Kids Club' });
          assert.deepEqual(body.plan, { name: 'kids', monthly_record_limit: 100, excluded_categories: ['seasonal'], attribution_required: true });
          assert.deepEqual(body.records, { used: 11, remaining: 89, limit: 100 });
          assert.equal(body.requests.count, 2, 'two data requests answered 200');
          assert.equal(body.by_day.length, 21, 'November 1st through the 21st');
          assert.deepEqual(body.by_day.at(-1), { date: '2026-11-21', records: 11, requests: 2 });

          // The CLI reads the same ledger while the server (its only writer) runs.
          const cliUsage = await cli(['usage', '--org', made.org_id, '--json']);
          assert.equal(cliUsage.code, 0, cliUsage.stderr);
          assert.deepEqual(JSON.parse(cliUsage.stdout), usage.json);
        } finally {
          await ts.stop();
        }
        // Nothing the server wrote holds a key either.
        await assertNoKeyStored(created.map((c) => c.made.key));
      });
    });
  });
}
