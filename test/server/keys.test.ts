// API keys on the live routes over real HTTP against one server: both ways of presenting a key,
// missing/malformed/unknown/foreign/revoked keys, keys created and revoked by the real CLI while the
// server runs, /v1/usage per organization, keyless routes, and that no key ever leaks into bodies or logs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import * as v from 'valibot';
import { FAILED_KEY_CHECKS_PER_MINUTE } from '../../server/auth.ts';
import { REPO_ROOT } from '../../core/config.ts';
import { ProblemSchema, UsageSchema } from '../../server/schemas.ts';
import { NOW, provisionKey, sampleFixture, startTestServer, type Fixture, type Got, type TestServer } from './helpers.ts';

const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
const run = promisify(execFile);
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PAGE = 10;

let fx: Fixture;
let ts: TestServer;
let foreignLedger = '';
/** A city whose upcoming events fill more than one page, and the ids of that search in start order. */
let city = '';
let query = '';
let expectedIds: string[] = [];
let expectedTotal = 0;
/** Every key-like string this file ever sent to the server: none may show up in a body or a log line. */
const presented = new Set<string>();

const randomBase62 = (n: number): string => [...randomBytes(n)].map((b) => BASE62[b % 62] ?? '0').join('');
const fakeKey = (): string => `bsc_live_${randomBase62(40)}`;

/** The client address of the next call (the server trusts X-Forwarded-For here). */
let nextAddress = 0;
const freshAddress = (): string => `10.${(++nextAddress >> 16) & 255}.${(nextAddress >> 8) & 255}.${nextAddress & 255}`;

/**
 * A request over real HTTP with exactly the authorization given: `null` sends no Authorization
 * header at all (the shared get() would add the server's default key). Each call comes from an
 * address of its own unless `from` names one, so the throttle on failed key checks per address
 * only cuts in where a test means it to.
 */
async function call(pathAndQuery: string, authorization: string | null = null, from: string = freshAddress()): Promise<Got> {
  const headers = new Headers({ 'x-forwarded-for': from });
  if (authorization !== null) headers.set('authorization', authorization);
  const res = await fetch(`${ts.base}${pathAndQuery}`, { headers });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, text, json: type.includes('json') && text ? JSON.parse(text) : null };
}

const bearer = (key: string): string => {
  presented.add(key);
  return `Bearer ${key}`;
};
const withKey = (pathAndQuery: string, key: string): string => {
  presented.add(key);
  return `${pathAndQuery}${pathAndQuery.includes('?') ? '&' : '?'}api_key=${encodeURIComponent(key)}`;
};

/** A problem+json answer with this status and code, and no presented key anywhere in it. */
function assertProblem(r: Got, status: number, codes: readonly string[], what: string): v.InferOutput<typeof ProblemSchema> {
  assert.equal(r.status, status, `${what}: ${r.text}`);
  assert.equal((r.headers.get('content-type') ?? '').split(';')[0]?.trim(), 'application/problem+json', what);
  const body = v.parse(ProblemSchema, r.json);
  assert.equal(body.status, status, what);
  assert.ok(codes.includes(body.code), `${what}: code ${body.code}, expected ${codes.join(' or ')}`);
  for (const key of presented) assert.ok(!r.text.includes(key), `${what}: the body repeats a presented key`);
  // RFC 9110 §15.5.2: a 401 must say how to authenticate.
  if (status === 401) assert.match(r.headers.get('www-authenticate') ?? '', /\bbearer\b/i, `${what}: WWW-Authenticate`);
  return body;
}

function assertSearch(r: Got, what: string): void {
  assert.equal(r.status, 200, `${what}: ${r.text}`);
  assert.equal(r.json.total, expectedTotal, `${what}: total`);
  assert.deepEqual(
    (r.json.events as { id: string }[]).map((e) => e.id),
    expectedIds,
    `${what}: page`,
  );
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '', DATA_DIR: fx.dataDir, LEDGER_DIR: ts.config.ledgerDir };
  return run(process.execPath, [BIN, ...args], { env }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

/** Asks with a key until it is refused (a revocation reaches the server within about a second). */
async function untilRefused(key: string): Promise<Got> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const r = await call(query, bearer(key));
    if (r.status !== 200 || Date.now() > deadline) return r;
    await sleep(100);
  }
}

before(async () => {
  fx = await sampleFixture();
  ts = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
  presented.add(ts.key);
  foreignLedger = await mkdtemp(path.join(os.tmpdir(), 'fe-foreign-ledger-'));
  // Partner keys (no exclusions, no cap) see every upcoming event, so the oracle is plain.
  const upcoming = fx.rows.filter((r) => r.end_ms >= NOW.getTime());
  const counts = new Map<string, number>();
  for (const r of upcoming) counts.set(r.venue_city, (counts.get(r.venue_city) ?? 0) + 1);
  const best = [...counts].sort((a, b) => b[1] - a[1])[0];
  assert.ok(best && best[1] > PAGE, 'the sample has a city with more than a page of upcoming events');
  city = best[0];
  const matched = upcoming.filter((r) => r.venue_city === city).sort((a, b) => a.start_ms - b.start_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  expectedTotal = matched.length;
  expectedIds = matched.slice(0, PAGE).map((r) => r.id);
  query = `/v1/events?city=${encodeURIComponent(city)}&limit=${PAGE}`;
});

after(async () => {
  await ts.stop();
  await rm(foreignLedger, { recursive: true, force: true });
  await fx.cleanup();
});

describe('presenting a key', () => {
  test('Bearer header and api_key parameter give the same answer, on /v1 and /api/v1', async () => {
    const { key } = provisionKey(ts.config.ledgerDir, { plan: 'partner' });
    const header = await call(query, bearer(key));
    assertSearch(header, 'Bearer');
    const param = await call(withKey(query, key));
    assertSearch(param, 'api_key');
    assert.equal(param.text, header.text, 'same body either way');
    const twinHeader = await call(`/api${query}`, bearer(key));
    const twinParam = await call(withKey(`/api${query}`, key));
    assertSearch(twinHeader, '/api Bearer');
    assert.equal(twinParam.status, 200, twinParam.text);
    assert.equal(twinParam.text, twinHeader.text, '/api: same body either way');
    assert.equal(twinHeader.text, header.text, 'the /api twin answers the same body');
  });

  test('the Bearer scheme is case-insensitive', async () => {
    const { key } = provisionKey(ts.config.ledgerDir, { plan: 'partner' });
    presented.add(key);
    const reference = await call(query, `Bearer ${key}`);
    assertSearch(reference, 'Bearer');
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const r = await call(query, `${scheme} ${key}`);
      assert.equal(r.status, 200, `${scheme}: ${r.text}`);
      assert.equal(r.text, reference.text, scheme);
    }
  });

  test('header and api_key both present: different → 400 naming api_key; equal → 200', async () => {
    const a = provisionKey(ts.config.ledgerDir, { plan: 'partner' }).key;
    const b = provisionKey(ts.config.ledgerDir, { plan: 'partner' }).key;
    const differ = await call(withKey(query, b), bearer(a));
    const body = assertProblem(differ, 400, ['invalid_parameter'], 'two different keys');
    assert.ok(
      body.errors?.some((e) => e.param === 'api_key'),
      `errors name api_key: ${differ.text}`,
    );
    assert.match(body.detail, /api_key/);
    const same = await call(withKey(query, a), bearer(a));
    assertSearch(same, 'the same key twice');
  });

  test('an empty Authorization header counts as none: api_key alone is used', async () => {
    const { key } = provisionKey(ts.config.ledgerDir, { plan: 'partner' });
    assertSearch(await call(withKey(query, key), ''), 'empty header + api_key');
  });
});

describe('refused keys', () => {
  test('no key → 401 missing_api_key with WWW-Authenticate: Bearer, on every live route', async () => {
    for (const p of [query, `/api${query}`, '/v1/usage', '/api/v1/usage']) {
      for (const auth of [null, '']) {
        const r = await call(p, auth);
        assertProblem(r, 401, ['missing_api_key'], `${p} with ${auth === null ? 'no' : 'an empty'} Authorization header`);
      }
    }
  });

  test('401 comes before parameter validation', async () => {
    for (const p of ['/v1/events?limit=abc&no_such_param=1', '/v1/events?city=Atlantis&age_min=40', '/v1/events?limit=5&limit=6', '/v1/usage?bogus=1']) {
      assertProblem(await call(p), 401, ['missing_api_key'], p);
      const unknown = fakeKey();
      assertProblem(await call(p, bearer(unknown)), 401, ['invalid_api_key'], `${p} with an unknown key`);
    }
  });

  test('malformed, unknown and foreign keys → 401 invalid_api_key, in either form', async () => {
    const real = provisionKey(ts.config.ledgerDir, { plan: 'partner' }).key;
    const foreign = provisionKey(foreignLedger, { plan: 'partner' }).key;
    const cases: [string, string][] = [
      ['wrong prefix', `bsc_test_${real.slice('bsc_live_'.length)}`],
      ['no prefix', real.slice('bsc_live_'.length)],
      ['too short', real.slice(0, 'bsc_live_'.length + 20)],
      ['non-base62', `${real.slice(0, -3)}-_!`],
      ['one character off', `${real.slice(0, -1)}${real.endsWith('a') ? 'b' : 'a'}`],
      ['well-formed, unknown', fakeKey()],
      ["another server's ledger", foreign],
    ];
    for (const [what, key] of cases) {
      assertProblem(await call(query, bearer(key)), 401, ['invalid_api_key'], `${what} (header)`);
      assertProblem(await call(withKey(query, key)), 401, ['invalid_api_key'], `${what} (api_key)`);
    }
    // The real key still works: the refusals above were about the keys, not the query.
    assertSearch(await call(query, bearer(real)), 'the real key');
  });

  test('a scheme other than Bearer → 401', async () => {
    const { key } = provisionKey(ts.config.ledgerDir, { plan: 'partner' });
    presented.add(key);
    presented.add(Buffer.from(`${key}:`).toString('base64'));
    for (const auth of [`Basic ${Buffer.from(`${key}:`).toString('base64')}`, `Token ${key}`, key]) {
      assertProblem(await call(query, auth), 401, ['invalid_api_key', 'missing_api_key'], auth.split(' ')[0] ?? '');
    }
  });
});

describe('failed key checks per client address', () => {
  test(`past ${FAILED_KEY_CHECKS_PER_MINUTE} failed checks a minute an address gets 429 too_many_invalid_keys; its valid keys still pass, other addresses are untouched`, async () => {
    const from = '198.51.100.7';
    const valid = provisionKey(ts.config.ledgerDir, { plan: 'partner' }).key;
    const revoked = provisionKey(ts.config.ledgerDir, { plan: 'partner' });
    assertSearch(await call(query, bearer(revoked.key)), 'before revocation');
    assertSearch(await call(query, bearer(valid)), 'the valid key, known to the server');
    const r = await cli(['keys', 'revoke', revoked.keyId]);
    assert.equal(r.code, 0, r.stderr);
    assertProblem(await untilRefused(revoked.key), 401, ['invalid_api_key'], 'revoked, from another address');

    // Requests without a key are not key checks: they never count.
    for (let i = 0; i < FAILED_KEY_CHECKS_PER_MINUTE + 5; i++) assertProblem(await call(query, null, from), 401, ['missing_api_key'], `no key #${i + 1}`);
    // Failures of every kind count: unknown (header and api_key), malformed, a scheme other than Bearer, revoked.
    const failing = (i: number): Promise<Got> => {
      switch (i % 5) {
        case 0:
          return call(query, bearer(fakeKey()), from);
        case 1:
          return call(withKey(query, fakeKey()), null, from);
        case 2:
          return call(query, bearer(`${fakeKey().slice(0, 20)}!`), from);
        case 3:
          return call(query, `Basic ${Buffer.from('user:pass').toString('base64')}`, from);
        default:
          return call(query, bearer(revoked.key), from);
      }
    };
    for (let i = 0; i < FAILED_KEY_CHECKS_PER_MINUTE; i++) assertProblem(await failing(i), 401, ['invalid_api_key'], `failure #${i + 1}`);
    for (let i = 0; i < 10; i++) {
      const over = await failing(i);
      const p = assertProblem(over, 429, ['too_many_invalid_keys'], `failure #${FAILED_KEY_CHECKS_PER_MINUTE + i + 1}`);
      assert.match(over.headers.get('retry-after') ?? '', /^[1-9]\d*$/, 'Retry-After in whole seconds');
      assert.match(p.detail, /valid key still works/);
    }
    // The address's valid key (a NAT neighbour's, say) still works, in either form; no key is still a 401.
    assertSearch(await call(query, bearer(valid), from), 'a valid key from the throttled address');
    assertSearch(await call(withKey(query, valid), null, from), 'a valid key as api_key from the throttled address');
    assertProblem(await call(query, null, from), 401, ['missing_api_key'], 'no key from the throttled address');
    // The keyless demo is not a key check either.
    assert.equal((await call('/v1/demo/events?limit=1', null, from)).status, 200);
    // Another address is checked as usual.
    assertProblem(await call(query, bearer(fakeKey()), '198.51.100.8'), 401, ['invalid_api_key'], 'an unknown key from another address');
    // X-Forwarded-For's last hop is the address (the proxy's own view of its client), not the first.
    assertProblem(await call(query, bearer(fakeKey()), `${from}, 198.51.100.9`), 401, ['invalid_api_key'], 'another last hop');
    assertProblem(await call(query, bearer(fakeKey()), `198.51.100.9, ${from}`), 429, ['too_many_invalid_keys'], 'the throttled last hop');
  });
});

describe('keys change while the server runs (real CLI)', () => {
  test('revoked by id or by the key itself → refused; other keys of the org keep working; revoking twice is fine', async () => {
    const org = `Revocation org ${randomBase62(8)}`;
    const byId = provisionKey(ts.config.ledgerDir, { plan: 'partner', org });
    const byKey = provisionKey(ts.config.ledgerDir, { plan: 'partner', org });
    const survivor = provisionKey(ts.config.ledgerDir, { plan: 'partner', org });
    // Used first, so the server has them in hand when they are revoked.
    for (const k of [byId, byKey, survivor]) assertSearch(await call(query, bearer(k.key)), 'before revocation');

    const r1 = await cli(['keys', 'revoke', byId.keyId]);
    assert.equal(r1.code, 0, r1.stderr);
    const r2 = await cli(['keys', 'revoke', byKey.key]);
    assert.equal(r2.code, 0, r2.stderr);
    for (const [what, k] of [
      ['by id', byId.key],
      ['by key', byKey.key],
    ] as const) {
      assertProblem(await untilRefused(k), 401, ['invalid_api_key'], `revoked ${what} (header)`);
      assertProblem(await call(withKey(query, k)), 401, ['invalid_api_key'], `revoked ${what} (api_key)`);
      assertProblem(await call('/v1/usage', bearer(k)), 401, ['invalid_api_key'], `revoked ${what} on /v1/usage`);
    }
    assertSearch(await call(query, bearer(survivor.key)), 'another key of the same organization');

    const again = await cli(['keys', 'revoke', byId.keyId]);
    assert.equal(again.code, 0, `revoking twice is not an error: ${again.stderr}`);
    assertProblem(await call(query, bearer(byId.key)), 401, ['invalid_api_key'], 'still revoked');
  });

  test('a key created by the CLI works on its very next request', async () => {
    const made = await cli(['keys', 'create', '--email', 'dev@cli.example', '--org', `CLI org ${randomBase62(8)}`, '--plan', 'partner', '--json']);
    assert.equal(made.code, 0, made.stderr);
    const { key } = JSON.parse(made.stdout) as { key: string };
    assertSearch(await call(query, bearer(key)), 'a brand-new key');
    assertSearch(await call(withKey(query, key)), 'a brand-new key as api_key');
  });
});

describe('/v1/usage', () => {
  test('needs a key, and answers for the caller’s own organization', async () => {
    assertProblem(await call('/v1/usage'), 401, ['missing_api_key'], '/v1/usage without a key');
    const nameA = `Usage org A ${randomBase62(8)}`;
    const nameB = `Usage org B ${randomBase62(8)}`;
    const a = provisionKey(ts.config.ledgerDir, { plan: 'community', org: nameA });
    const b = provisionKey(ts.config.ledgerDir, { plan: 'community', org: nameB });
    const search = await call(`/v1/events?city=${encodeURIComponent(city)}&limit=3`, bearer(a.key));
    assert.equal(search.status, 200, search.text);
    const delivered = (search.json.events as unknown[]).length;
    assert.ok(delivered > 0, 'org A received records');

    const ua = await call('/v1/usage', bearer(a.key));
    assert.equal(ua.status, 200, ua.text);
    const bodyA = v.parse(UsageSchema, ua.json);
    assert.deepEqual(bodyA.organization, { id: a.orgId, name: nameA });
    assert.equal(bodyA.plan.name, 'community');
    assert.deepEqual(bodyA.records, { used: delivered, remaining: 25 - delivered, limit: 25 });

    const ub = await call(withKey('/v1/usage', b.key));
    assert.equal(ub.status, 200, ub.text);
    const bodyB = v.parse(UsageSchema, ub.json);
    assert.deepEqual(bodyB.organization, { id: b.orgId, name: nameB });
    assert.deepEqual(bodyB.records, { used: 0, remaining: 25, limit: 25 }, 'org A’s records are not org B’s');
  });
});

describe('keyless routes', () => {
  test('the demo and /v1/categories need no key', async () => {
    const demo = await call('/v1/demo/events?limit=5');
    assert.equal(demo.status, 200, demo.text);
    assert.ok(Array.isArray(demo.json.events) && demo.json.events.length > 0, 'the demo returns events');
    const cats = await call('/v1/categories');
    assert.equal(cats.status, 200, cats.text);
    assert.ok(Array.isArray(cats.json.categories) && cats.json.categories.length > 0);
  });
});

describe('no key leaks', () => {
  test('the server’s log lines never contain a presented key', async () => {
    // Keys of every kind, in both places, on answers of every kind, so the scan covers them even
    // when this test runs alone.
    const { key } = provisionKey(ts.config.ledgerDir, { plan: 'partner' });
    assert.equal((await call(query, bearer(key))).status, 200);
    assert.equal((await call(withKey(query, key))).status, 200);
    assert.equal((await call(withKey('/v1/events?limit=abc', key))).status, 400);
    assert.equal((await call(withKey(query, fakeKey()))).status, 401);
    assert.equal((await call(query, bearer(`${key.slice(0, 20)}!`))).status, 401);
    // The access line of the last request may be written just after its response.
    await sleep(200);
    const requests = ts.logs.filter((l) => l['msg'] === 'request');
    for (const status of [200, 400, 401])
      assert.ok(
        requests.some((l) => l['status'] === status),
        `an access line with status ${status} was captured`,
      );
    const text = JSON.stringify(ts.logs);
    for (const key of presented) {
      assert.ok(!text.includes(key), `a log line contains the presented key …${key.slice(-4)}`);
      // The secret part of a real key on its own would leak it just the same.
      if (key.startsWith('bsc_live_') && key.length >= 41)
        assert.ok(!text.includes(key.slice('bsc_live_'.length)), `a log line contains the secret of …${key.slice(-4)}`);
    }
  });
});
