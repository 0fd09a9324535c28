// GET /v1/openapi.json as a client sees it, checked against the route table, the parameter schemas,
// the error table and the response schemas that the server itself runs on: the document must describe
// exactly what is served.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERRORS, type ErrorCode } from '../../server/errors.ts';
import { ROUTES } from '../../server/main.ts';
import { paramEntries, type AnyRoute } from '../../server/routes/types.ts';
import { EventListSchema } from '../../server/schemas.ts';
import { get, PUBLIC, sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from './helpers.ts';

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly description?: string;
  readonly schema?: { readonly description?: string };
}
interface Operation {
  readonly parameters?: readonly Parameter[];
  readonly responses: Record<string, { readonly description?: string; readonly content?: Record<string, { readonly schema?: { readonly $ref?: string } }> }>;
}
interface Doc {
  readonly openapi: string;
  readonly info: { readonly description?: string };
  readonly servers: readonly { readonly url: string }[];
  readonly paths: Record<string, { readonly get?: Operation; readonly head?: Operation }>;
  readonly components: { readonly schemas: Record<string, { readonly properties?: Record<string, unknown> }> };
}

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
      const missing = queryParams(ops(path)[0][1]).filter((p) => descriptionOf(p).trim() === '').map((p) => p.name);
      assert.deepEqual(missing, [], `parameters without a description on ${path}`);
    });
  }

  test('limit is documented with each route\'s own maximum (100 live, 10 demo)', () => {
    const limitOf = (path: string): string => {
      const p = queryParams(ops(path)[0][1]).find((x) => x.name === 'limit');
      assert.ok(p, `${path} documents limit`);
      return descriptionOf(p);
    };
    const live = limitOf('/v1/events');
    const demo = limitOf('/v1/demo/events');
    assert.notEqual(live, demo, 'the two limits are described differently');
    assert.match(live, /\b100\b/, `live limit: ${live}`);
    assert.match(demo, /\b10\b/, `demo limit: ${demo}`);
    assert.doesNotMatch(demo, /\b100\b/, `demo limit: ${demo}`);
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

  test("every route's responses include the status of each of its error codes, as problem+json", () => {
    for (const r of ROUTES) {
      for (const [method, op] of ops(r.path)) {
        for (const code of r.errors as readonly ErrorCode[]) {
          const status = String(ERRORS[code].status);
          const resp = op.responses[status];
          assert.ok(resp, `${method} ${r.path} documents ${status} for ${code}`);
          assert.ok((resp.description ?? '').includes(code), `${method} ${r.path} ${status} names ${code}`);
          assert.equal(resp.content?.['application/problem+json']?.schema?.$ref, '#/components/schemas/Problem', `${method} ${r.path} ${status}`);
        }
        assert.ok(op.responses['200'], `${method} ${r.path} documents its 200`);
      }
    }
  });

  test('the 200 of /v1/events references the event list schema under components', () => {
    for (const [method, op] of ops('/v1/events')) {
      const ref = op.responses['200']?.content?.['application/json']?.schema?.$ref;
      assert.ok(ref, `${method}: 200 application/json has a $ref`);
      const prefix = '#/components/schemas/';
      assert.ok(ref.startsWith(prefix), ref);
      const component = doc.components.schemas[ref.slice(prefix.length)];
      assert.ok(component, `${ref} exists`);
      // The component must be the envelope a client receives, field for field.
      assert.deepEqual(Object.keys(component.properties ?? {}).sort(), Object.keys(EventListSchema.entries).sort());
    }
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

  test('servers are the API host and the website host under /api', () => {
    assert.deepEqual(
      doc.servers.map((s) => s.url),
      [PUBLIC, `${WEB}/api`],
    );
  });
});
