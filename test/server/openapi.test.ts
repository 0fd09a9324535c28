// GET /v1/openapi.json as a client sees it, checked against the route table, the parameter schemas,
// the error table and the response schemas that the server itself runs on: the document must describe
// exactly what is served.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { DateTime } from 'luxon';
import { REPO_ROOT } from '../../core/config.ts';
import { ERRORS, type ErrorCode } from '../../server/errors.ts';
import { ROUTES } from '../../server/start/main.ts';
import { paramEntries, type AnyRoute } from '../../server/route.ts';
import { CURSOR_RULES, MAX_LIST_CHARS, RULES } from '../../server/params.ts';
import { EventListSchema } from '../../server/schemas.ts';
import { CATEGORY_SLUGS } from '../../core/taxonomy.ts';
import { get, PUBLIC, sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from './helpers.ts';
import type { Doc, Operation, Parameter } from './openapi-doc.ts';

const run = promisify(execFile);

let fx: Fixture;
let srv: TestServer;
let doc: Doc;
let raw = '';

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir);
  const r = await get(srv.base, '/v1/openapi.json');
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.match(r.headers.get('content-type') ?? '', /^application\/json\b/);
  raw = r.text;
  doc = r.json as Doc;
});

after(async () => {
  await srv.stop();
  await fx.cleanup();
});

const route = (path: string): AnyRoute => {
  const r = ROUTES.find((x) => x.path === path);
  assert.ok(r, `${path} is in ROUTES`);
  return r;
};

const ops = (path: string): [[string, Operation], [string, Operation]] => {
  const item = doc.paths[path];
  assert.ok(item, `the document has ${path}`);
  assert.ok(item.get && item.head, `${path} has get and head`);
  return [
    ['get', item.get],
    ['head', item.head],
  ];
};

const queryParams = (op: Operation): Parameter[] => (op.parameters ?? []).filter((p) => p.in === 'query');
const descriptionOf = (p: Parameter): string => p.description ?? p.schema?.description ?? '';

describe('GET /v1/openapi.json', () => {
  test('is OpenAPI 3.1.0', () => {
    assert.equal(doc.openapi, '3.1.0');
  });

  test('the /api twin serves the same document', async () => {
    const twin = await get(srv.base, '/api/v1/openapi.json');
    assert.equal(twin.status, 200);
    assert.equal(twin.text, raw);
  });

  test('has exactly one path per route, each with get and head', () => {
    assert.ok(ROUTES.length >= 7);
    for (const r of ROUTES) ops(r.path);
    assert.deepEqual(Object.keys(doc.paths).sort(), ROUTES.map((r) => r.path).sort(), 'no path that is not served');
  });

  for (const path of ['/v1/events', '/v1/demo/events']) {
    test(`${path}: its query parameters are exactly the keys of its parameter schema`, () => {
      const keys = Object.keys(paramEntries(route(path))).sort();
      assert.ok(keys.includes('limit') && keys.includes('city') && keys.length >= 15, `the schema has the search parameters: ${keys.join(',')}`);
      for (const [method, op] of ops(path)) {
        const names = queryParams(op).map((p) => p.name);
        assert.equal(new Set(names).size, names.length, `${method} ${path}: no parameter listed twice`);
        assert.deepEqual([...names].sort(), keys, `${method} ${path}`);
      }
    });

    test(`${path}: every query parameter is described`, () => {
      // A client reads what each parameter accepts from here; the schemas carry these sentences.
      const missing = queryParams(ops(path)[0][1])
        .filter((p) => descriptionOf(p).trim() === '')
        .map((p) => p.name);
      assert.deepEqual(missing, [], `parameters without a description on ${path}`);
    });
  }

  test("limit is documented with each route's own maximum (100 live, 10 demo, 10000 CSV), as an integer from 1", () => {
    const limitOf = (path: string): Parameter => {
      const p = queryParams(ops(path)[0][1]).find((x) => x.name === 'limit');
      assert.ok(p, `${path} documents limit`);
      return p;
    };
    for (const [path, max] of [
      ['/v1/events', 100],
      ['/v1/demo/events', 10],
      ['/v1/events.csv', 10_000],
    ] as const) {
      const p = limitOf(path);
      assert.deepEqual(p.schema, { type: 'integer', minimum: 1, maximum: max }, path);
      assert.match(descriptionOf(p), new RegExp(`\\b1–${max}\\b`), `${path}: ${descriptionOf(p)}`);
    }
  });

  test('numbers are numbers, with the bounds the server enforces', () => {
    const schemas = Object.fromEntries(queryParams(ops('/v1/events')[0][1]).map((p) => [p.name, p.schema]));
    assert.deepEqual(schemas.lat, { type: 'number', minimum: -90, maximum: 90 });
    assert.deepEqual(schemas.lng, { type: 'number', minimum: -180, maximum: 180 });
    assert.deepEqual(schemas.radius_km, { type: 'number', exclusiveMinimum: 0, maximum: 500 });
    assert.deepEqual(schemas.age_min, { type: 'integer', minimum: 0, maximum: 18 });
    assert.deepEqual(schemas.age_max, { type: 'integer', minimum: 0, maximum: 18 });
    assert.deepEqual(schemas.offset, { type: 'integer', minimum: 0, maximum: 100_000 });
  });

  test("lists are comma-separated arrays of the listed values: category of the slugs, city of this snapshot's cities", async () => {
    const cities = (await get(srv.base, '/v1/cities')).json as { cities: { name: string }[] };
    for (const path of ['/v1/events', '/v1/demo/events', '/v1/feed.rss']) {
      const byName = new Map(queryParams(ops(path)[0][1]).map((p) => [p.name, p]));
      for (const name of ['category', 'city']) {
        const p = byName.get(name);
        assert.ok(p?.schema, `${path} documents ${name}`);
        assert.equal(p.style, 'form', `${path} ${name}`);
        assert.equal(p.explode, false, `${path} ${name}`);
        assert.equal(p.schema.type, 'array', `${path} ${name}`);
        assert.equal(p.schema.minItems, 1, `${path} ${name}`);
      }
      assert.deepEqual(byName.get('category')?.schema?.items?.enum, [...CATEGORY_SLUGS], `${path}: category slugs`);
      const cityItems = byName.get('city')?.schema?.items;
      assert.equal(cityItems?.['x-values-from'], '/v1/cities');
      assert.ok(cities.cities.length > 3, 'the sample has cities');
      assert.deepEqual(
        cityItems?.enum,
        cities.cities.map((c) => c.name),
        `${path}: the cities /v1/cities lists`,
      );
      // The server bounds a list's text before splitting it: every list the document admits fits.
      for (const name of ['category', 'city']) {
        const schema = byName.get(name)?.schema;
        const longest = Math.max(...(schema?.items?.enum ?? []).map((e) => e.length));
        assert.ok((schema?.maxItems ?? Infinity) * (longest + 1) <= MAX_LIST_CHARS, `${path} ${name}: ${schema?.maxItems} × ${longest} characters`);
      }
    }
  });

  test('no pattern uses \\d, and every pattern compiles as ECMA-262 with the u flag', () => {
    const patterns = [...raw.matchAll(/"pattern":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1] ?? '""') as string);
    assert.ok(patterns.length >= 4, `the document has patterns: ${patterns.length}`);
    for (const p of patterns) {
      assert.doesNotMatch(p, /\\d/i, p);
      assert.doesNotThrow(() => new RegExp(p, 'u'), p);
    }
  });

  test('week admits W01–W52 of any year and W53 in exactly the years that have one', () => {
    const p = queryParams(ops('/v1/events')[0][1]).find((x) => x.name === 'week');
    assert.ok(p?.schema?.pattern);
    const re = new RegExp(p.schema.pattern, 'u');
    assert.match(descriptionOf(p), /W53 exists only in long ISO years/);
    for (const w of ['current', 'next', '0000-W01', '2025-W52', '9999-W52']) assert.match(w, re);
    for (const w of ['CURRENT', '2025-W00', '2025-W54', '2026-W5', '20260-W01', '2026-w01', '٢٠٢٦-W01', '2026-W٠١']) assert.doesNotMatch(w, re);
    let long = 0;
    for (let year = 0; year <= 9999; year++) {
      const has53 = DateTime.fromObject({ weekYear: year, weekNumber: 53, weekday: 1 }, { zone: 'utc' }).isValid;
      const yyyy = String(year).padStart(4, '0');
      assert.equal(re.test(`${yyyy}-W53`), has53, `${yyyy}-W53`);
      if (has53) long++;
    }
    // 71 long years in every 400.
    assert.equal(long, 71 * 25);
  });

  test("dates admit exactly the calendar's days, alone or with an RFC 3339 time and offset", () => {
    const p = queryParams(ops('/v1/events')[0][1]).find((x) => x.name === 'start_date');
    assert.ok(p?.schema?.pattern);
    const re = new RegExp(p.schema.pattern, 'u');
    // Every day of a 400-year cycle (the Gregorian calendar repeats after it), and 29 February of every year.
    const day = new Date(Date.UTC(2000, 0, 1));
    const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
    const iso = (d: Date): string => `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    for (let i = 0; i < 146_097; i++, day.setUTCDate(day.getUTCDate() + 1)) assert.ok(re.test(iso(day)), iso(day));
    for (let year = 0; year <= 9999; year++) {
      const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
      assert.equal(re.test(`${pad(year, 4)}-02-29`), leap, `${year}-02-29`);
    }
    for (const bad of ['2026-02-30', '2026-04-31', '2026-13-01', '2026-00-10', '2026-12-00', '2026-1-01', '٢٠٢٦-12-01']) assert.doesNotMatch(bad, re);
    for (const ok of [
      '2026-12-01T10:00:00Z',
      '2026-12-01t10:00:00z',
      '2026-12-01 10:00:00-08:00',
      '2026-12-01T23:59:59.123456789+14:00',
      '2026-12-01T00:00:00-00:00',
    ]) {
      assert.match(ok, re);
    }
    for (const bad of [
      '2026-12-01T10:00:00',
      '2026-12-01T24:00:00Z',
      '2026-12-01T10:60:00Z',
      '2026-12-01T10:00:60Z',
      '2026-12-01T10:00:00+24:00',
      '2026-12-01T10:00:00.1234567890Z',
      '2026-12-01T10:00Z',
    ]) {
      assert.doesNotMatch(bad, re);
    }
  });

  test("rules between parameters: in each one's description and, once per operation, as x-dependencies", () => {
    for (const path of ['/v1/events', '/v1/demo/events', '/v1/events.csv']) {
      const op = ops(path)[0][1];
      // The routes that take a cursor add its rules (/v1/events and /v1/events.csv, not the demo).
      const rules = path === '/v1/demo/events' ? RULES : [...RULES, ...CURSOR_RULES];
      assert.deepEqual(
        op['x-dependencies'],
        rules.map((r) => r.idl),
        path,
      );
      const byName = new Map(queryParams(op).map((p) => [p.name, descriptionOf(p)]));
      for (const rule of rules)
        for (const [param, note] of Object.entries(rule.notes)) assert.ok(byName.get(param)?.includes(note ?? '?'), `${path} ${param}: ${note}`);
    }
    assert.ok(!('x-dependencies' in ops('/v1/usage')[0][1]), 'routes without rules state none');
    const radius = queryParams(ops('/v1/events')[0][1]).find((p) => p.name === 'radius_km');
    assert.ok(radius, 'radius_km is a parameter of /v1/events');
    assert.match(descriptionOf(radius), /Needs lat and lng/);
  });

  test('the key is the apiKey security scheme (in: query), never a parameter', () => {
    assert.deepEqual(doc.components.securitySchemes['apiKey'], { ...doc.components.securitySchemes['apiKey'], type: 'apiKey', in: 'query', name: 'api_key' });
    for (const r of ROUTES) {
      for (const [method, op] of ops(r.path)) {
        assert.ok(!(op.parameters ?? []).some((p) => p.name === 'api_key'), `${method} ${r.path} lists no api_key parameter`);
        const schemes = (op.security ?? []).flatMap((s) => Object.keys(s)).sort();
        assert.deepEqual(schemes, r.access === 'live' ? ['apiKey', 'bearer'] : [], `${method} ${r.path} security`);
      }
    }
  });

  test('license and tag descriptions', () => {
    assert.deepEqual(doc.info.license, { name: 'Family Events API Terms', url: `${WEB}/terms` });
    assert.deepEqual(doc.tags.map((t) => t.name).sort(), [...new Set(ROUTES.map((r) => r.tag))].sort());
    for (const t of doc.tags) assert.ok((t.description ?? '').length > 10, `tag ${t.name} is described`);
  });

  test('every error code is documented, with its status', () => {
    const description = doc.info.description ?? '';
    const codes = Object.keys(ERRORS) as ErrorCode[];
    assert.ok(codes.length >= 12);
    for (const code of codes) {
      assert.ok(description.includes(code), `info.description lists ${code}`);
      assert.ok(description.includes(String(ERRORS[code].status)), `info.description gives ${ERRORS[code].status}`);
    }
  });

  test("every route's responses include the status of each of its error codes, as problem+json on GET", () => {
    for (const r of ROUTES) {
      for (const [method, op] of ops(r.path)) {
        for (const code of r.errors) {
          const status = String(ERRORS[code].status);
          const resp = op.responses[status];
          assert.ok(resp, `${method} ${r.path} documents ${status} for ${code}`);
          assert.ok((resp.description ?? '').includes(code), `${method} ${r.path} ${status} names ${code}`);
          if (method === 'get')
            assert.equal(resp.content?.['application/problem+json']?.schema?.$ref, '#/components/schemas/Problem', `${method} ${r.path} ${status}`);
        }
        assert.ok(op.responses['200'], `${method} ${r.path} documents its 200`);
      }
    }
  });

  test("HEAD answers GET's statuses and headers, and declares no body", () => {
    for (const r of ROUTES) {
      const [[, get], [, head]] = ops(r.path);
      assert.deepEqual(Object.keys(head.responses), Object.keys(get.responses), `${r.path}: the same statuses`);
      for (const [status, resp] of Object.entries(head.responses)) {
        assert.equal(resp.content, undefined, `HEAD ${r.path} ${status} has no content`);
        assert.deepEqual(resp.headers, get.responses[status]?.headers, `HEAD ${r.path} ${status}: GET's headers`);
      }
    }
    assert.ok(ops('/v1/events')[1][1].responses['200']?.headers?.['ETag'], 'headers stay on HEAD');
  });

  test('the 200 of /v1/events references the event list schema under components', () => {
    const ref = ops('/v1/events')[0][1].responses['200']?.content?.['application/json']?.schema?.$ref;
    assert.ok(ref, 'get: 200 application/json has a $ref');
    const prefix = '#/components/schemas/';
    assert.ok(ref.startsWith(prefix), ref);
    const component = doc.components.schemas[ref.slice(prefix.length)];
    assert.ok(component, `${ref} exists`);
    // The component must be the envelope a client receives, field for field.
    assert.deepEqual(Object.keys(component.properties ?? {}).sort(), Object.keys(EventListSchema.entries).sort());
  });

  test('the event record documents all_day after is_canceled: what it means and how iCalendar writes it', () => {
    const record = doc.components.schemas['EventRecord'] as
      { properties?: Record<string, { type?: string; description?: string }>; required?: string[] } | undefined;
    assert.ok(record?.properties, 'EventRecord under components');
    const names = Object.keys(record.properties);
    assert.equal(names[names.indexOf('is_canceled') + 1], 'all_day');
    const allDay = record.properties['all_day']!;
    assert.equal(allDay.type, 'boolean');
    assert.ok(record.required?.includes('all_day'), 'all_day is required');
    for (const w of ['date without a time of day', 'VALUE=DATE', 'All day']) assert.ok(allDay.description?.includes(w), w);
  });

  test('every $ref in the document resolves', () => {
    const refs = [...raw.matchAll(/"\$ref":"([^"]*)"/g)].map((m) => m[1] ?? '');
    assert.ok(refs.length > ROUTES.length);
    for (const ref of new Set(refs)) {
      const parts = ref.replace(/^#\//, '').split('/');
      let at: unknown = doc;
      for (const part of parts) at = (at as Record<string, unknown> | undefined)?.[part];
      assert.ok(at !== undefined, `${ref} resolves`);
    }
  });

  test("Redocly's recommended rules find no error and no warning in it", async () => {
    // The pinned CLI (package.json), run as a client would run it, on the bytes served.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      await writeFile(file, raw);
      const cli = path.join(REPO_ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
      const { stdout } = await run(process.execPath, [cli, 'lint', file, '--format=json'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: readonly { ruleId: string; message: string }[] };
      assert.deepEqual(
        report.problems.map((p) => `${p.ruleId}: ${p.message}`),
        [],
      );
      assert.deepEqual([report.totals.errors, report.totals.warnings], [0, 0]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('servers are the API host and the website host under /api', () => {
    assert.deepEqual(
      doc.servers.map((s) => s.url),
      [PUBLIC, `${WEB}/api`],
    );
  });
});
