// The developer docs, the error reference and the home page, rendered from the real OpenAPI
// document (built from the real route table) and read back with a real HTML parser (htmlparser2):
// every operation has a section linked from the contents, every parameter and each of its stated
// constraints is in its table, every error code has its anchor, each example request is a URL the
// route's own parameter schema accepts and its curl and fetch forms agree, the pages are well
// formed (one h1, no skipped heading level, unique ids, internal links that land, tables with
// captions and scoped headers) and hostile record text stays text.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { DomUtils, parseDocument } from 'htmlparser2';
import * as v from 'valibot';
import { loadConfig } from '../../../core/config.ts';
import { ERRORS, statusesOf, type ErrorCode } from '../../../server/errors.ts';
import { ROUTES } from '../../../server/start/main.ts';
import { openApiDocument } from '../../../server/openapi.ts';
import { eventRoute, icsFeedRoute } from '../../../server/routes/events.ts';
import { paramEntries } from '../../../server/route.ts';
import type { Site } from '../../../server/web/layout.ts';
import {
  docsEndpointPage,
  docsPage,
  docsSlugs,
  errorsPage,
  ruleText,
  type DocsInput,
  type JsonSchema,
  type OpenApiDoc,
} from '../../../server/web/pages/docs.ts';
import { attributionSnippet, citySlug, homePage, type HomeInput } from '../../../server/web/pages/home.ts';
import type { EventRecord } from '../../../core/record.ts';
import type { Plan } from '../../../ledger/accounts.ts';

type Doc = ReturnType<typeof parseDocument>;
type El = ReturnType<typeof DomUtils.findAll>[number];

const SITE: Site = { webBaseUrl: 'https://web.example', apiBaseUrl: 'https://web.example/api', name: 'Family Events' };
const CONFIG = loadConfig({ WEB_BASE_URL: SITE.webBaseUrl, PUBLIC_BASE_URL: 'https://api.example' });
// The routes being added with the website are documented as soon as they exist, listed in main.ts or not yet.
const ROUTE_TABLE = [...ROUTES, ...[eventRoute, icsFeedRoute].filter((r) => !ROUTES.includes(r))];
const OPENAPI = JSON.parse(JSON.stringify(openApiDocument(ROUTE_TABLE, CONFIG, '1.2.3'))) as OpenApiDoc;
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'] as const;

const PLANS: readonly Plan[] = [
  { name: 'community', monthlyRecordLimit: 25, excludedCategories: ['festivals', 'seasonal'], attributionRequired: true, requestsPerMinute: 60 },
  { name: 'partner', monthlyRecordLimit: null, excludedCategories: [], attributionRequired: false, requestsPerMinute: 6000 },
];

const HOSTILE = '</script><script>alert(1)</script>';

function record(over: Partial<EventRecord> = {}): EventRecord {
  const id = over.id ?? 'bsc_evt_0123456789abcdef0123';
  return {
    id,
    title: 'Toddler Storytime',
    description: 'Songs, rhymes and stories for toddlers and their grown-ups. '.repeat(10),
    summary: 'Songs and stories for toddlers',
    start_datetime: '2025-12-06T10:30:00-08:00',
    end_datetime: '2025-12-06T11:30:00-08:00',
    venue: { name: 'Central Library', address: '2090 Kittredge St, Berkeley, CA 94704', city: 'Berkeley', lat: 37.868, lng: -122.268, geo_precision: 'venue' },
    organizer: 'Berkeley Public Library',
    organizer_url: 'https://www.berkeleypubliclibrary.org',
    categories: ['storytime'],
    tags: ['toddlers'],
    image_url: null,
    is_free: true,
    price: null,
    ticket_url: null,
    source: 'berkeleypubliclibrary.org',
    source_url: null,
    destination: 'east-bay',
    age_range: { min_months: 12, max_months: 47 },
    age_range_years: { min_years: 1, max_years: 3 },
    is_canceled: false,
    all_day: false,
    created_at: '2026-11-01T09:00:00.000-07:00',
    updated_at: '2026-11-02T09:00:00.000-08:00',
    event_url: `${SITE.webBaseUrl}/events/${id}`,
    ...over,
  };
}

const EXAMPLE = record();
const HOSTILE_EXAMPLE = record({
  title: `Storytime ${HOSTILE} "quoted" & <b>bold</b>`,
  description: `${HOSTILE} <img src=x onerror=alert(1)>`,
  organizer: `Org ${HOSTILE}`,
  // A quote in the city would end a shell-quoted URL if the example URL were not encoded.
  venue: { name: `Hall ${HOSTILE}`, address: '1 Main St, Berkeley, CA 94704', city: "O'Brien </script>", lat: 37.8, lng: -122.2, geo_precision: 'venue' },
});

// ------------------------------------------------------------------ reading pages back

const all = (root: Doc | El, pred: (e: El) => boolean): El[] => DomUtils.findAll(pred, root.children);
const byTag = (root: Doc | El, name: string): El[] => all(root, (e) => e.name === name);
const text = (n: Doc | El): string => DomUtils.textContent(n);
const attr = (e: El, name: string): string | undefined => DomUtils.getAttributeValue(e, name);

function byId(doc: Doc, id: string): El {
  const found = all(doc, (e) => attr(e, 'id') === id);
  assert.equal(found.length, 1, `exactly one element with id="${id}"`);
  return found[0] as El;
}

function ancestor(e: El, pred: (x: El) => boolean): El | null {
  for (let p = e.parent; p !== null; p = p.parent) if (p.type === 'tag' && pred(p)) return p;
  return null;
}

/** Page-wide checks every page must pass. */
function assertWellFormed(page: string, label: string): Doc {
  const doc = parseDocument(page);
  assert.equal(byTag(doc, 'h1').length, 1, `${label}: one h1`);
  const levels = all(doc, (e) => /^h[1-6]$/.test(e.name)).map((h) => Number(h.name[1]));
  assert.equal(levels[0], 1, `${label}: the h1 comes first`);
  for (let i = 1; i < levels.length; i++) assert.ok((levels[i] ?? 0) <= (levels[i - 1] ?? 0) + 1, `${label}: heading skip h${levels[i - 1]} → h${levels[i]}`);

  const ids = all(doc, (e) => attr(e, 'id') !== undefined).map((e) => attr(e, 'id') ?? '');
  assert.deepEqual(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
    `${label}: duplicate ids`,
  );
  const idSet = new Set(ids);
  for (const a of byTag(doc, 'a')) {
    const href = attr(a, 'href') ?? '';
    assert.ok(href !== '', `${label}: a link without href`);
    assert.notEqual(text(a).trim(), '', `${label}: a link to ${href} without text`);
    if (href.startsWith('#')) assert.ok(idSet.has(href.slice(1)), `${label}: ${href} lands nowhere`);
  }
  for (const e of all(doc, (x) => attr(x, 'aria-labelledby') !== undefined))
    assert.ok(idSet.has(attr(e, 'aria-labelledby') ?? ''), `${label}: aria-labelledby names a missing id`);
  for (const table of byTag(doc, 'table')) {
    assert.equal(byTag(table, 'caption').length, 1, `${label}: a table without caption`);
    for (const th of byTag(table, 'th'))
      assert.ok(['col', 'row'].includes(attr(th, 'scope') ?? ''), `${label}: th without scope in ${text(byTag(table, 'caption')[0] as El)}`);
  }
  for (const pre of byTag(doc, 'pre')) {
    assert.equal(attr(pre, 'tabindex'), '0', `${label}: a code block that the keyboard cannot scroll`);
    assert.ok(attr(pre, 'data-copy'), `${label}: a code block without a copy button`);
  }

  // Nothing leaked from a missing value or an object rendered as text, in text or in attributes.
  assert.doesNotMatch(page, /undefined|\[object Object\]|NaN/, `${label}: a missing value leaked into the HTML`);
  return doc;
}

/** Scripts: the layout's site.js and JSON-LD data, nothing else; no inline handlers. */
function assertNoInjectedScript(doc: Doc, label: string): void {
  for (const s of byTag(doc, 'script')) {
    const src = attr(s, 'src');
    if (src !== undefined) assert.equal(src, '/static/site.js', `${label}: unexpected script src`);
    else {
      assert.equal(attr(s, 'type'), 'application/ld+json', `${label}: an inline script`);
      JSON.parse(text(s));
    }
  }
  for (const e of all(doc, () => true)) {
    for (const name of Object.keys(e.attribs)) assert.ok(!name.startsWith('on'), `${label}: event handler attribute ${name} on <${e.name}>`);
  }
  assert.deepEqual(byTag(doc, 'img'), [], `${label}: an image element`);
  assert.deepEqual(byTag(doc, 'b'), [], `${label}: markup from record text`);
}

// ------------------------------------------------------------------ the document, walked independently

interface OpRef {
  readonly method: string;
  readonly path: string;
  readonly parameters: readonly { readonly name: string; readonly in: string; readonly schema?: JsonSchema }[];
}

function operations(doc: OpenApiDoc): OpRef[] {
  const out: OpRef[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) out.push({ method, path, parameters: op.parameters ?? [] });
    }
  }
  return out;
}

/** Every value a schema states as a constraint, which the parameter's row must show. */
function stated(s: JsonSchema | undefined): string[] {
  if (s === undefined) return [];
  const keys = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'default'] as const;
  const own = keys.flatMap((k) => (s[k] === undefined ? [] : [String(s[k])]));
  // A snapshot's list (x-values-from) is linked, not copied: its values are the listing route's to show.
  const values = s['x-values-from'] === undefined ? (s.enum ?? []).map(String) : [];
  return [...own, ...values, ...stated(s.items)];
}

/** The docs as a site: the overview and each route's page, every one checked well formed. */
interface Docs {
  readonly overview: Doc;
  /** By path: /docs/<slug>. */
  readonly pages: ReadonlyMap<string, Doc>;
}

function renderDocs(input: DocsInput, label: string): Docs {
  const overview = assertWellFormed(docsPage(SITE, input), label);
  const pages = new Map(
    docsSlugs(input.openapi).map((slug) => {
      const body = docsEndpointPage(SITE, input, slug);
      assert.ok(body !== null, `${label}: /docs/${slug} is listed but not rendered`);
      return [`/docs/${slug}`, assertWellFormed(body, `${label} /docs/${slug}`)] as const;
    }),
  );
  return { overview, pages };
}

/** A docs link as its page and the id it names. */
function target(href: string): { path: string; id: string } {
  const u = new URL(href, SITE.webBaseUrl);
  return { path: u.pathname, id: decodeURIComponent(u.hash.slice(1)) };
}

/** The sections of the reference by the "METHOD /path" each one's heading names, found by following the overview's index to each page. */
function sectionsByOperation(d: Docs): Map<string, El> {
  const index = byId(d.overview, 'reference');
  const out = new Map<string, El>();
  for (const a of all(index, (e) => e.name === 'a' && attr(e, 'data-moved') !== undefined)) {
    const { path, id } = target(attr(a, 'href') ?? '');
    const page = d.pages.get(path);
    assert.ok(page, `the index links ${path}, which is not a docs page`);
    const section = byId(page, id);
    const heading = all(section, (e) => /^h[2-6]$/.test(e.name))[0];
    if (!heading) continue;
    for (const code of byTag(heading, 'code')) out.set(text(code), section);
  }
  return out;
}

/** The element of this id on whichever route's page has it (exactly one). */
function sectionById(d: Docs, id: string): El {
  const found = [...d.pages.values()].flatMap((page) => all(page, (e) => attr(e, 'id') === id));
  assert.equal(found.length, 1, `exactly one page has id="${id}"`);
  return found[0] as El;
}

function operationSection(sections: Map<string, El>, op: OpRef): El {
  const section = sections.get(`${op.method.toUpperCase()} ${op.path}`);
  assert.ok(section, `${op.method.toUpperCase()} ${op.path} has no section linked from the contents`);
  // A HEAD twin is documented inside its GET's section, which holds the parameter table.
  return attr(section, 'class')?.includes('operation') ? section : (ancestor(section, (p) => attr(p, 'class') === 'operation') ?? section);
}

/** Code blocks as their caption and the text a copy button copies (site.js copies the [data-copy] element's text). */
function codeBlocks(root: Doc | El): { caption: string; code: string }[] {
  return all(root, (e) => attr(e, 'data-copy') !== undefined).map((el) => {
    const figure = ancestor(el, (p) => p.name === 'figure');
    return { caption: text(byTag(figure ?? el, 'figcaption')[0] ?? el), code: text(el) };
  });
}

const CURL = /^curl(?: -[iH] (?:"[^"]*"|'[^']*'))* '([^']+)'$/;

/** The URL a curl example requests, after checking the command's shape (options, then one quoted URL). */
function curlUrl(code: string): string {
  const line = code.split('\n').find((l) => l.startsWith('curl '));
  assert.ok(line, `no curl line in: ${code}`);
  const m = CURL.exec(line);
  assert.ok(m, `a curl line that is not curl [-H "…"]… '<url>': ${line}`);
  return m[1] ?? '';
}

function pathMatcher(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^{}]+\}/g, '([^/]+)');
  return new RegExp(`^${escaped}$`);
}

// ------------------------------------------------------------------ the tests

describe('/docs', () => {
  const docs = renderDocs({ openapi: OPENAPI, example: EXAMPLE, plans: PLANS, plansContact: 'partners@web.example' }, '/docs');
  const doc = docs.overview;
  const sections = sectionsByOperation(docs);
  const section = (id: string): El => sectionById(docs, id);
  const ops = operations(OPENAPI);

  test('the document has the routes the table has, the website additions among them', () => {
    for (const r of ROUTE_TABLE) assert.ok(OPENAPI.paths[r.path]?.get, `${r.path} is in the document`);
    assert.ok(ops.length >= 2 * ROUTE_TABLE.length, 'a GET and a HEAD for every route');
  });

  test('every operation has a section on its route’s page, linked from the overview’s index; ids are slugs of method and path', () => {
    for (const op of ops) operationSection(sections, op);
    assert.equal(sections.get('GET /v1/events'), byId(docs.pages.get('/docs/events') as Doc, 'get-v1-events'));
    assert.equal(sections.get('GET /v1/events/{id}'), byId(docs.pages.get('/docs/events-id') as Doc, 'get-v1-events-id'));
    assert.equal(sections.get('HEAD /v1/events'), byId(docs.pages.get('/docs/events') as Doc, 'head-v1-events'));
    assert.equal(sections.get('GET /v1/usage'), byId(docs.pages.get('/docs/usage') as Doc, 'get-v1-usage'));
    // One page a route: the document's paths, each once.
    assert.equal(docs.pages.size, Object.keys(OPENAPI.paths).length);
  });

  test('every id of the one-page docs still lands on /docs: the guides in place, each operation’s id on a link to its new page', () => {
    const slug = (s: string): string =>
      s
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '');
    const guides = ['contents', 'quick-start', 'authentication', 'reference', 'plans', 'attribution', 'polling', 'errors', 'formats'];
    for (const id of guides) byId(doc, id);
    for (const op of ops) {
      const id = slug(`${op.method}-${op.path}`);
      const el = byId(doc, id);
      const link = attr(el, 'data-moved') !== undefined ? el : all(el, (e) => e.name === 'a' && attr(e, 'data-moved') !== undefined)[0];
      assert.ok(link, `/docs#${id} holds a link to where it moved`);
      const to = target(attr(link, 'href') ?? '');
      const page = docs.pages.get(to.path);
      assert.ok(page, `/docs#${id} links ${to.path}, a page`);
      assert.equal(to.id, id, `/docs#${id} links the same id on its page`);
      byId(page, id);
    }
  });

  test('every link to a docs page lands on a page that exists and an id on it', () => {
    const errors = parseDocument(errorsPage(SITE, OPENAPI));
    const site = new Map<string, Doc>([['/docs', doc], ['/docs/errors', errors], ...docs.pages]);
    for (const [from, page] of site) {
      for (const a of byTag(page, 'a')) {
        const href = attr(a, 'href') ?? '';
        if (!href.startsWith('/docs')) continue;
        const to = target(href);
        const dest = site.get(to.path);
        assert.ok(dest, `${from}: ${href} is not a docs page`);
        if (to.id) byId(dest, to.id);
      }
    }
  });

  test('each page has the docs’ navigation to every page, marks itself, and links the previous and next page', () => {
    const order = ['/docs', ...docs.pages.keys(), '/docs/errors'];
    const site = new Map<string, Doc>([['/docs', doc], ...docs.pages, ['/docs/errors', parseDocument(errorsPage(SITE, OPENAPI))]]);
    for (const [i, path] of order.entries()) {
      const page = site.get(path) as Doc;
      const sidebar = all(page, (e) => e.name === 'nav' && attr(e, 'aria-label') === 'Developer docs')[0];
      assert.ok(sidebar, `${path}: a sidebar`);
      assert.deepEqual(
        byTag(sidebar, 'a').map((a) => attr(a, 'href')),
        order,
        `${path}: the sidebar lists every page in order`,
      );
      assert.deepEqual(
        byTag(sidebar, 'a')
          .filter((a) => attr(a, 'aria-current') === 'page')
          .map((a) => attr(a, 'href')),
        [path],
      );
      const menu = all(page, (e) => e.name === 'details' && attr(e, 'class') === 'docs-menu')[0];
      assert.ok(menu, `${path}: the phone's menu`);
      assert.deepEqual(
        byTag(menu, 'a').map((a) => attr(a, 'href')),
        order,
      );
      const rel = (r: string): string | undefined => all(page, (e) => e.name === 'a' && attr(e, 'rel') === r).map((a) => attr(a, 'href'))[0];
      assert.equal(rel('prev'), order[i - 1], `${path}: previous`);
      assert.equal(rel('next'), order[i + 1], `${path}: next`);
    }
  });

  test('every operation’s parameter list is the document’s parameters plus where its security schemes put the key', () => {
    const schemes = OPENAPI.components?.securitySchemes ?? {};
    for (const op of ops.filter((o) => o.method === 'get')) {
      const operation = OPENAPI.paths[op.path]?.get;
      const expected = (operation?.parameters ?? []).map((p) => `${p.in} ${p.name}`);
      for (const req of operation?.security ?? OPENAPI.security ?? [])
        for (const name of Object.keys(req)) {
          const s = schemes[name];
          assert.ok(s, `scheme ${name} is defined`);
          expected.push(s.type === 'http' ? 'header Authorization' : `${s.in} ${s.name}`);
        }
      const table = byTag(operationSection(sections, op), 'table').find((t) => text(byTag(t, 'caption')[0] ?? t).startsWith('Parameters'));
      const listed = (table ? byTag(table, 'tr') : [])
        .filter((tr) => byTag(tr, 'th').some((th) => attr(th, 'scope') === 'row'))
        .map((tr) => `${text(byTag(tr, 'td')[0] as El)} ${text(byTag(byTag(tr, 'th')[0] as El, 'code')[0] as El)}`);
      assert.deepEqual(listed.sort(), [...new Set(expected)].sort(), `${op.path}: the parameters listed`);
    }
    const usage = text(operationSection(sections, { method: 'get', path: '/v1/usage', parameters: [] }));
    assert.doesNotMatch(usage, /Parameters\s*None/, '/v1/usage lists where its key goes');
    assert.match(usage, /api_key/);
  });

  test('every parameter is in its operation’s table, or in the table of the operation it links to for the ones they share, with every constraint its schema states', () => {
    const paramRows = (section: El): Map<string, El> => {
      const table = byTag(section, 'table').find((t) => text(byTag(t, 'caption')[0] ?? t).startsWith('Parameters'));
      return new Map(
        (table ? byTag(table, 'tr') : [])
          .filter((tr) => byTag(tr, 'th').some((th) => attr(th, 'scope') === 'row'))
          .map((tr) => [text(byTag(byTag(tr, 'th')[0] as El, 'code')[0] as El), tr] as const),
      );
    };
    const byId = new Map([...sections.values()].map((s) => [attr(s, 'id'), s] as const));
    for (const op of ops) {
      const section = operationSection(sections, op);
      const keyed = (OPENAPI.paths[op.path]?.get?.security ?? []).length > 0;
      const own = paramRows(section);
      const link = byTag(section, 'a').find((a) => attr(a, 'class') === 'shared-params');
      const base = link ? byId.get((attr(link, 'href') ?? '').slice(1)) : undefined;
      if (link) assert.ok(base, `${op.method} ${op.path}: its shared parameters link to a section on the page`);
      const shared = base ? paramRows(base) : new Map<string, El>();
      if (op.parameters.length === 0 && !keyed) {
        assert.equal(own.size + shared.size, 0, `${op.method} ${op.path} has no parameters but a table`);
        continue;
      }
      for (const p of op.parameters) {
        const row = own.get(p.name) ?? shared.get(p.name);
        assert.ok(row, `${op.method} ${op.path}: parameter ${p.name} is missing from its table`);
        const cells = byTag(row, 'td').map(text);
        assert.equal(cells[0], p.in, `${p.name}: where it goes`);
        for (const fact of stated(p.schema)) assert.ok(cells[2]?.includes(fact), `${op.method} ${op.path}: ${p.name}'s constraints do not state ${fact}`);
      }
    }
  });

  test('the search parameters are exactly the route table’s (the page is generated, not written)', () => {
    const section = operationSection(sections, { method: 'get', path: '/v1/events', parameters: [] });
    const table = byTag(section, 'table')[0] as El;
    const names = byTag(table, 'tr').flatMap((tr) =>
      byTag(tr, 'th')
        .filter((th) => attr(th, 'scope') === 'row')
        .map((th) => text(th)),
    );
    const expected = Object.keys(paramEntries(ROUTE_TABLE.find((r) => r.path === '/v1/events') ?? eventRoute));
    for (const name of expected) assert.ok(names.includes(name), name);
  });

  test('the rules between parameters are listed, in words and as the IDL the document carries', () => {
    const search = section('get-v1-events');
    const rules = OPENAPI.paths['/v1/events']?.get?.['x-dependencies'] ?? [];
    assert.ok(rules.length > 0, 'the search has rules between parameters');
    for (const idl of rules) {
      assert.ok(text(search).includes(idl), `rule ${idl} is shown`);
      assert.ok(ruleText(idl), `rule ${idl} is said in words`);
    }
    assert.match(ruleText('AllOrNone(lat, lng);')?.text ?? '', /lat.*and.*lng.*together/);
    assert.match(
      ruleText('IF week THEN NOT start_date AND NOT end_date;')?.text ?? '',
      /week<\/code> cannot be combined with <code>start_date<\/code> or <code>end_date/,
    );
    assert.equal(ruleText('Or(a, b);'), null);
  });

  test('problem codes each operation answers link to their anchor on /docs/errors', () => {
    const byId = new Map([...sections.values()].map((s) => [attr(s, 'id'), s] as const));
    for (const op of ops.filter((o) => o.method === 'get')) {
      const own = operationSection(sections, op);
      // An operation with the same codes as one before links to that one's table instead.
      const shared = byTag(own, 'a').find((a) => attr(a, 'class') === 'shared-problems');
      const section = shared ? byId.get((attr(shared, 'href') ?? '').slice(1)) : own;
      assert.ok(section, `${op.path}: its shared problem codes link to a section on the page`);
      const links = byTag(section, 'a')
        .map((a) => attr(a, 'href') ?? '')
        .filter((h) => h.startsWith('/docs/errors#'));
      const responses = OPENAPI.paths[op.path]?.get?.responses ?? {};
      for (const [status, r] of Object.entries(responses)) {
        if (!r.content?.['application/problem+json']) continue;
        for (const code of Object.keys(ERRORS)) {
          if ((r.description ?? '').includes(`\`${code}\``)) assert.ok(links.includes(`/docs/errors#${code}`), `${op.path} ${status}: ${code} is not linked`);
        }
      }
    }
  });

  test('example requests: curl, fetch and Python ask the same URL of the website’s /api, on the operation’s path, with its own parameters', () => {
    for (const op of ops.filter((o) => o.method === 'get')) {
      const blocks = codeBlocks(operationSection(sections, op));
      const curl = blocks.find((b) => b.caption === 'curl');
      const js = blocks.find((b) => b.caption.includes('fetch'));
      const py = blocks.find((b) => b.caption.startsWith('Python'));
      assert.ok(curl && js && py, `${op.path}: curl, fetch and Python examples`);
      const raw = curlUrl(curl.code);
      const url = new URL(raw);
      assert.ok(raw.startsWith(`${SITE.apiBaseUrl}/`), `${raw} is on ${SITE.apiBaseUrl}`);
      assert.ok(js.code.includes(`fetch(${JSON.stringify(raw)}`), `${op.path}: the fetch example asks ${raw}`);
      assert.ok(py.code.includes(`requests.get(\n    ${JSON.stringify(raw)},`), `${op.path}: the Python example asks ${raw}`);
      assert.equal(
        py.code.includes('"Authorization": f"Bearer'),
        curl.code.includes('Authorization: Bearer'),
        `${op.path}: Python sends the key when curl does`,
      );
      const path = url.pathname.slice(new URL(SITE.apiBaseUrl).pathname.length);
      assert.match(path, pathMatcher(op.path), `${raw} is ${op.path}`);
      const queryParams = new Set(op.parameters.filter((p) => p.in === 'query').map((p) => p.name));
      for (const name of url.searchParams.keys()) assert.ok(queryParams.has(name), `${op.path}: ${name} is not one of its parameters`);
      const route = ROUTE_TABLE.find((r) => r.path === op.path);
      const parsed = route ? v.safeParse(route.params, Object.fromEntries(url.searchParams)) : null;
      assert.ok(parsed === null || parsed.success, `${raw}: the route's own schema refuses it: ${JSON.stringify(parsed?.issues?.map((i) => i.message))}`);
      const keyed = (OPENAPI.paths[op.path]?.get?.security ?? []).length > 0;
      assert.equal(curl.code.includes('Authorization: Bearer'), keyed, `${op.path}: the key is sent exactly when the route needs one`);
    }
  });

  test('each GET has a try-it form: a GET to its own URL on /api, its query parameters as fields, the key field empty, unremembered and named as the apiKey scheme', () => {
    for (const op of ops.filter((o) => o.method === 'get')) {
      const section = operationSection(sections, op);
      const form = all(section, (e) => e.name === 'form' && attr(e, 'data-try-it') !== undefined)[0];
      assert.ok(form, `${op.path}: a try-it form`);
      assert.equal(attr(form, 'method'), 'get');
      assert.equal(attr(form, 'autocomplete'), 'off');
      assert.equal(attr(form, 'data-try-it'), `${SITE.apiBaseUrl}${op.path}`);
      assert.match(new URL(attr(form, 'action') ?? '').pathname, pathMatcher(`/api${op.path}`), `${op.path}: the form asks the API`);
      const named = byTag(form, 'input')
        .map((i) => attr(i, 'name'))
        .filter((n) => n !== undefined);
      const keyField = all(form, (e) => attr(e, 'data-api-key') !== undefined);
      const keyed = (OPENAPI.paths[op.path]?.get?.security ?? []).length > 0;
      const query = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      assert.deepEqual(named.sort(), [...query, ...(keyed ? ['api_key'] : [])].sort(), `${op.path}: the form's fields`);
      assert.equal(keyField.length, keyed ? 1 : 0, `${op.path}: a key field exactly when the route needs a key`);
      for (const k of keyField) {
        assert.equal(attr(k, 'value'), undefined, 'the key field holds nothing');
        assert.equal(attr(k, 'autocomplete'), 'off');
      }
    }
  });

  test('every Python sample, the quick start’s too, is valid Python (python3’s own parser)', () => {
    const samples = [doc, ...docs.pages.values()].flatMap((page) => codeBlocks(page).filter((b) => b.caption.startsWith('Python')));
    assert.ok(samples.length > ops.length / 2, `${samples.length} Python samples`);
    for (const sample of samples) {
      const r = spawnSync('python3', ['-c', 'import ast,sys; ast.parse(sys.stdin.read())'], { input: sample.code, encoding: 'utf8' });
      assert.equal(r.error, undefined, 'python3 runs');
      assert.equal(r.status, 0, `not valid Python:\n${sample.code}\n${r.stderr}`);
    }
  });

  test('example values are drawn from the example record and fit the schemas', () => {
    const search = new URL(curlUrl(codeBlocks(section('get-v1-events')).find((b) => b.caption === 'curl')?.code ?? ''));
    assert.equal(search.searchParams.get('city'), EXAMPLE.venue.city);
    assert.equal(search.searchParams.get('age_min'), String(EXAMPLE.age_range_years?.min_years));
    const demo = new URL(curlUrl(codeBlocks(section('get-v1-demo-events')).find((b) => b.caption === 'curl')?.code ?? ''));
    const demoLimit = OPENAPI.paths['/v1/demo/events']?.get?.parameters?.find((p) => p.name === 'limit')?.schema?.maximum ?? 0;
    assert.ok(Number(demo.searchParams.get('limit') ?? 0) <= demoLimit, 'the demo example stays within its own limit');
    const one = new URL(curlUrl(codeBlocks(section('get-v1-events-id')).find((b) => b.caption === 'curl')?.code ?? ''));
    assert.equal(one.pathname, `/api/v1/events/${EXAMPLE.id}`);
    assert.equal(one.search, '');
  });

  test('example responses: the envelope around the record for searches, the record alone by id', () => {
    const responseOf = (id: string): unknown => JSON.parse(codeBlocks(section(id)).find((b) => b.caption.startsWith('Example response'))?.code ?? 'null');
    const list = responseOf('get-v1-events') as { events: EventRecord[]; attribution: { url: string } };
    assert.equal(list.events.length, 1);
    assert.equal(list.events[0]?.id, EXAMPLE.id);
    assert.ok((list.events[0]?.description ?? '').length < (EXAMPLE.description ?? '').length, 'long texts are shortened');
    assert.equal(list.attribution.url, SITE.webBaseUrl);
    // Every field the schema requires, and no other; an optional one (did_you_mean, only when q finds
    // nothing) may be absent from an example that found its record.
    const schema = OPENAPI.components?.schemas?.EventList;
    const keys = Object.keys(schema?.properties ?? {});
    const required = schema?.required ?? [];
    assert.ok(required.length > 0, 'the schema names its required fields');
    assert.deepEqual(
      Object.keys(list).filter((k) => !keys.includes(k)),
      [],
      'the envelope has no field the schema lacks',
    );
    assert.deepEqual(
      required.filter((k) => !(k in list)),
      [],
      'the envelope has every field the schema requires',
    );
    assert.equal((responseOf('get-v1-events-id') as EventRecord).event_url, EXAMPLE.event_url);
    const usage = JSON.parse(codeBlocks(section('get-v1-usage')).find((b) => b.caption.startsWith('Response shape'))?.code ?? 'null') as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(usage).sort(), Object.keys(OPENAPI.components?.schemas?.Usage?.properties ?? {}).sort());
  });

  test('guide sections: quick start on both hosts, authentication, plans, attribution, polling, errors, formats', () => {
    const quick = text(byId(doc, 'quick-start'));
    assert.ok(quick.includes(SITE.apiBaseUrl) && quick.includes(CONFIG.publicBaseUrl), 'both hosts are named');
    const auth = text(byId(doc, 'authentication'));
    assert.ok(auth.includes('Authorization: Bearer') && auth.includes('api_key'), 'both ways of sending a key');
    const plans = byId(doc, 'plans');
    for (const p of PLANS) assert.ok(text(plans).includes(p.name), p.name);
    // How to get each plan: the sign-up plan by signing in, the partner plan by writing to the configured address.
    const howTo = (name: string): El => byTag(byId(doc, `plan-${name}`), 'td').find((c) => attr(c, 'data-label') === 'How to get it') as El;
    assert.ok(byTag(howTo('community'), 'a').some((a) => attr(a, 'href') === '/account/sign-in'));
    assert.ok(byTag(howTo('partner'), 'a').some((a) => attr(a, 'href') === 'mailto:partners@web.example'));
    const unset = renderDocs({ openapi: OPENAPI, example: EXAMPLE, plans: PLANS }, '/docs (no contact)').overview;
    assert.match(text(byTag(byId(unset, 'plan-partner'), 'td').at(-1) as El), /Ask the operator/);
    for (const h of ['X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset', 'Retry-After', 'X-Quota-Truncated']) assert.ok(text(plans).includes(h), h);
    const snippet = codeBlocks(byId(doc, 'attribution'))[0]?.code;
    assert.equal(snippet, attributionSnippet(SITE));
    const polling = text(byId(doc, 'polling'));
    for (const w of ['If-None-Match', '304', 'Cache-Control', 'rel="next"']) assert.ok(polling.includes(w), w);
    assert.ok(byTag(byId(doc, 'errors'), 'a').some((a) => attr(a, 'href') === '/docs/errors'));
    const formats = text(byId(doc, 'formats'));
    for (const f of ['JSON', 'CSV', 'RSS', 'JSON Feed', 'iCalendar']) assert.ok(formats.includes(f), f);
    // All-day events: how each format writes them.
    for (const w of ['all_day', 'DTSTART;VALUE=DATE', 'DTEND;VALUE=DATE', 'All day']) assert.ok(formats.includes(w), w);
  });

  test('the attribution snippet is one link to the website, copied as text', () => {
    const snippet = parseDocument(attributionSnippet(SITE));
    const links = byTag(snippet, 'a');
    assert.equal(links.length, 1);
    assert.equal(attr(links[0] as El, 'href'), SITE.webBaseUrl);
  });

  test('hostile record text stays text: no script but the layout’s, the title shown verbatim', () => {
    const hostileDocs = renderDocs({ openapi: OPENAPI, example: HOSTILE_EXAMPLE, plans: PLANS }, '/docs (hostile)');
    for (const [path, page] of [['/docs', hostileDocs.overview] as const, ...hostileDocs.pages]) assertNoInjectedScript(page, `${path} (hostile)`);
    const response = codeBlocks(sectionById(hostileDocs, 'get-v1-events')).find((b) => b.caption.startsWith('Example response'))?.code ?? '';
    assert.equal((JSON.parse(response) as { events: EventRecord[] }).events[0]?.title, HOSTILE_EXAMPLE.title);
    const url = new URL(curlUrl(codeBlocks(sectionById(hostileDocs, 'get-v1-events')).find((b) => b.caption === 'curl')?.code ?? ''));
    assert.equal(url.searchParams.get('city'), HOSTILE_EXAMPLE.venue.city, 'the city survives the shell quoting');
  });

  test('tolerates other documents: no example, fewer paths, methods it has never seen', () => {
    const openapi: OpenApiDoc = {
      openapi: '3.1.0',
      paths: {
        '/v1/cities': OPENAPI.paths['/v1/cities'] ?? {},
        '/v2/things/{thing_id}': {
          post: {
            summary: 'Make a thing',
            parameters: [{ name: 'thing_id', in: 'path', required: true, schema: { type: 'string', enum: ['a'] } }],
            responses: { 201: { description: 'Made' } },
          },
        },
      },
    };
    const other = renderDocs({ openapi, example: null, plans: [] }, '/docs (other document)');
    const secs = sectionsByOperation(other);
    for (const op of operations(openapi)) operationSection(secs, op);
    const post = codeBlocks(secs.get('POST /v2/things/{thing_id}') ?? other.overview).find((b) => b.caption === 'curl');
    assert.equal(new URL(curlUrl(post?.code ?? '')).pathname, '/api/v2/things/a');
    const bare = renderDocs({ openapi: OPENAPI, example: null, plans: PLANS }, '/docs (no record)');
    const captions = [...bare.pages.values()].flatMap((p) => codeBlocks(p).map((b) => b.caption));
    assert.ok(!captions.some((c) => c.startsWith('Example response')), 'no record, no example response');
    assert.ok(
      captions.some((c) => c.startsWith('Response shape (application/json)')),
      'the schema’s shape instead',
    );
  });
});

describe('/docs/errors', () => {
  const page = errorsPage(SITE, OPENAPI);
  const doc = assertWellFormed(page, '/docs/errors');

  test('every code of the error table has its anchor, with status, title, when and what to do', () => {
    for (const code of Object.keys(ERRORS) as ErrorCode[]) {
      const section = byId(doc, code);
      const t = text(section);
      assert.ok(t.includes(ERRORS[code].title), `${code}: title`);
      for (const s of statusesOf(code)) assert.ok(t.includes(String(s)), `${code}: status ${s}`);
      const terms = byTag(section, 'dt').map(text);
      assert.deepEqual(terms, ['Status', 'When it happens', 'What to do']);
      const example = JSON.parse(codeBlocks(section)[0]?.code ?? '{}') as { type: string; code: string };
      assert.equal(example.code, code);
      assert.equal(example.type, `${SITE.webBaseUrl}/docs/errors#${code}`, 'the example problem’s type links right here');
    }
  });

  test('no script but the layout’s', () => assertNoInjectedScript(doc, '/docs/errors'));
});

describe('/ (home)', () => {
  const input: HomeInput = {
    cities: [
      { name: 'Berkeley', events: 3 },
      { name: 'San José', events: 1 },
      { name: 'Half Moon Bay', events: 0 },
      { name: `Evil ${HOSTILE}`, events: 2 },
    ],
    categories: [
      { slug: 'storytime', name: 'Storytime', events: 12 },
      { slug: 'music', name: 'Music', events: 1 },
      { slug: 'camps', name: 'Camps', events: 0 },
    ],
    totalEvents: 1234,
    updatedAt: '2025-12-01T08:00:00-08:00',
  };
  const page = homePage(SITE, input);
  const doc = assertWellFormed(page, '/');

  test('citySlug: lowercase, accents stripped, spaces to dashes', () => {
    assert.equal(citySlug('San José'), 'san-jose');
    assert.equal(citySlug('Half Moon Bay'), 'half-moon-bay');
    assert.equal(citySlug('  St. Helena '), 'st-helena');
    assert.equal(citySlug('Ñipomo'), 'nipomo');
  });

  test('a search form for /events with q and a labelled city select', () => {
    const form = byTag(doc, 'form')[0] as El;
    assert.equal(attr(form, 'action'), '/events');
    assert.equal((attr(form, 'method') ?? 'get').toLowerCase(), 'get');
    const fields = all(form, (e) => e.name === 'input' || e.name === 'select');
    assert.deepEqual(
      fields.map((f) => attr(f, 'name')),
      ['q', 'city'],
    );
    for (const f of fields) assert.equal(all(doc, (e) => e.name === 'label' && attr(e, 'for') === attr(f, 'id')).length, 1, `${attr(f, 'name')} has a label`);
    const options = byTag(form, 'option').map((o) => attr(o, 'value'));
    assert.deepEqual(options, ['', ...input.cities.filter((c) => c.events > 0).map((c) => c.name)], 'the cities with upcoming events');
  });

  test('links to browsing, each city and category that has events with its count (the others named, unlinked), and the docs', () => {
    const hrefs = byTag(byId(doc, 'main'), 'a').map((a) => attr(a, 'href'));
    assert.ok(hrefs.includes('/events'), 'browse');
    assert.ok(hrefs.includes('/docs'), 'docs');
    for (const c of input.cities) {
      const link = byTag(doc, 'a').find((a) => attr(a, 'href') === `/cities/${citySlug(c.name)}`);
      if (c.events === 0) {
        assert.equal(link, undefined, `${c.name}, with nothing coming up, is not linked`);
        continue;
      }
      assert.ok(link, c.name);
      assert.ok(text(link.parent as El).includes(`${c.events} event`), `${c.name} shows its count`);
    }
    for (const c of input.categories) {
      const link = byTag(doc, 'a').find((a) => attr(a, 'href') === `/categories/${c.slug}`);
      if (c.events === 0) {
        assert.equal(link, undefined, `${c.slug}, with nothing coming up, is not linked`);
        continue;
      }
      assert.ok(link, c.slug);
      assert.ok(text(link.parent as El).includes(`${c.events} event`), `${c.slug} shows its count`);
    }
    const said = text(byId(doc, 'main'));
    assert.ok(said.includes('No upcoming events right now in Half Moon Bay.'), 'the empty city is named, unlinked');
    assert.ok(said.includes('No upcoming events right now in Camps.'), 'the empty category is named, unlinked');
    assert.ok(said.includes('See all 1,234 upcoming events'), 'the link to browse says how many');
  });

  test('the attribution snippet is shown as text to copy', () => {
    assert.ok(
      codeBlocks(doc).some((b) => b.code === attributionSnippet(SITE)),
      'the snippet, as text',
    );
  });

  test('meta: canonical, Open Graph, WebSite JSON-LD with a SearchAction on /events', () => {
    const link = byTag(doc, 'link').find((l) => attr(l, 'rel') === 'canonical');
    assert.equal(attr(link as El, 'href'), `${SITE.webBaseUrl}/`);
    assert.ok(byTag(doc, 'meta').some((m) => attr(m, 'property') === 'og:title'));
    const ld = JSON.parse(text(byTag(doc, 'script').find((s) => attr(s, 'type') === 'application/ld+json') as El)) as {
      '@type': string;
      potentialAction: { '@type': string; target: { urlTemplate: string }; 'query-input': string };
    };
    assert.equal(ld['@type'], 'WebSite');
    assert.equal(ld.potentialAction['@type'], 'SearchAction');
    assert.equal(ld.potentialAction.target.urlTemplate, `${SITE.webBaseUrl}/events?q={search_term_string}`);
    assert.equal(ld.potentialAction['query-input'], 'required name=search_term_string');
  });

  test('a hostile city name stays text', () => {
    assertNoInjectedScript(doc, '/');
    assert.ok(byTag(doc, 'option').some((o) => text(o) === `Evil ${HOSTILE}`));
  });
});
