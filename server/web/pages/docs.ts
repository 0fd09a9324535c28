// The developer docs, generated at start-up from the OpenAPI document the server serves at
// /v1/openapi.json (server/openapi.ts), which is itself generated from the route table and the
// schemas that validate requests: one section per operation with its parameters and their
// constraints, the rules between them, its answers and problem codes, and examples built from the
// same document. What no schema says (how quota, polling and attribution work together) is prose
// here, with its figures taken from the plans and the error table.
import type * as v from 'valibot';
import { ERRORS, problem, statusesOf, type ErrorCode, type ParamError } from '../../errors.ts';
import type { EventListSchema } from '../../schemas.ts';
import type { EventRecord } from '../../../core/record.ts';
import { CATEGORY_LABELS } from '../../../core/taxonomy.ts';
import { clip } from '../format.ts';
import { html, type Html } from '../html.ts';
import { renderPage, type Site } from '../layout.ts';
import { attributionSnippet, codeBlock } from './home.ts';
import type { Plan } from '../../../ledger/accounts.ts';
import { SIGN_UP_PLAN } from '../../../ledger/rules.ts';
import { MAX_HEADER_BYTES, MAX_TARGET_BYTES, attribution } from '../../terms.ts';

// ------------------------------------------------------------------ the document, as far as the docs read it

export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly $ref?: string;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly format?: string;
  readonly description?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly 'x-values-from'?: string;
}

export interface OpenApiParameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly style?: string;
  readonly explode?: boolean;
  readonly schema?: JsonSchema;
}

export interface OpenApiResponse {
  readonly description?: string;
  readonly headers?: Readonly<Record<string, { readonly description?: string; readonly required?: boolean; readonly schema?: JsonSchema }>>;
  readonly content?: Readonly<Record<string, { readonly schema?: JsonSchema }>>;
}

export interface OpenApiOperation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly parameters?: readonly OpenApiParameter[];
  readonly responses?: Readonly<Record<string, OpenApiResponse>>;
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
  readonly 'x-dependencies'?: readonly string[];
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'] as const;
type HttpMethod = (typeof METHODS)[number];

export interface OpenApiDoc {
  readonly openapi: string;
  readonly info?: { readonly title?: string; readonly version?: string };
  readonly servers?: readonly { readonly url: string; readonly description?: string }[];
  readonly paths: Readonly<Record<string, Readonly<Partial<Record<HttpMethod, OpenApiOperation>>>>>;
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
  readonly components?: {
    readonly schemas?: Readonly<Record<string, JsonSchema>>;
    readonly securitySchemes?: Readonly<
      Record<string, { readonly type: string; readonly scheme?: string; readonly in?: string; readonly name?: string; readonly description?: string }>
    >;
  };
}

export interface DocsInput {
  /** The document as /v1/openapi.json serves it (parsed JSON). */
  readonly openapi: OpenApiDoc;
  /** A record of the current snapshot for the example responses; null when there is none. */
  readonly example: EventRecord | null;
  readonly plans: readonly Plan[];
  /** Where an organization writes to move to a plan other than the sign-up plan (PLANS_CONTACT); null or absent: the operator. */
  readonly plansContact?: string | null;
}

// ------------------------------------------------------------------ small pieces

/** The page's own section ids (and the layout's), which no operation's id may take. */
const SECTION_IDS = [
  'main',
  'contents',
  'quick-start',
  'authentication',
  'reference',
  'plans',
  'attribution',
  'polling',
  'syncing',
  'errors',
  'formats',
] as const;

const PROBLEM_TYPE = 'application/problem+json';
const KEY_VAR = 'FAMILY_EVENTS_KEY';
/** Longer text fields of an example record are cut to this many characters. */
const EXAMPLE_TEXT_MAX = 160;
/** A pattern longer than this is folded into a <details>: the week pattern alone is 600 characters. */
const PATTERN_INLINE_MAX = 48;

const NOT_SLUG = /[^a-z0-9]+/g;
const EDGE_DASHES = /^-|-$/g;
const BACKTICKED_WORD = /`([a-z_]+)`/g;
const PATH_TEMPLATE = /\{([^{}]+)\}/g;

const isErrorCode = (s: string): s is ErrorCode => Object.hasOwn(ERRORS, s);
const refName = (ref: string | undefined): string | null => (ref === undefined ? null : (ref.split('/').pop() ?? null));
const isJsonType = (type: string): boolean => type === 'application/json' || type.endsWith('+json');

/** Items with a separator between them. */
function joined(items: readonly Html[], separator: string): Html[] {
  return items.flatMap((item, i) => (i === 0 ? [item] : [html`${separator}`, item]));
}

/** Description text with its `code spans` as <code>; everything else is text. */
function prose(text: string | undefined): Html {
  const parts = (text ?? '').split('`');
  // An odd number of parts means balanced backticks: every second part was inside a pair.
  if (parts.length % 2 === 0) return html`${text ?? ''}`;
  return html`${parts.map((p, i) => (i % 2 === 1 ? html`<code>${p}</code>` : html`${p}`))}`;
}

const methodPath = (e: Entry): string => `${e.method.toUpperCase()} ${e.path}`;

// ------------------------------------------------------------------ operations

interface Entry {
  readonly method: HttpMethod;
  readonly path: string;
  readonly op: OpenApiOperation;
  /** The section's id: the method and path as a slug, e.g. get-v1-events-id. */
  readonly id: string;
}

/** An operation with its own section, and the HEAD of the same path when it is GET's twin (rendered inside it). */
interface Endpoint {
  readonly main: Entry;
  readonly head: Entry | null;
}

function endpoints(doc: OpenApiDoc): Endpoint[] {
  const taken = new Set<string>(SECTION_IDS);
  const idFor = (method: string, path: string): string => {
    const base = `${method}-${path}`.toLowerCase().replace(NOT_SLUG, '-').replace(EDGE_DASHES, '');
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
    taken.add(id);
    return id;
  };
  const out: Endpoint[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op === undefined || (method === 'head' && item.get !== undefined)) continue;
      const main = { method, path, op, id: idFor(method, path) };
      const head = method === 'get' && item.head !== undefined ? { method: 'head' as const, path, op: item.head, id: idFor('head', path) } : null;
      out.push({ main, head });
    }
  }
  return out;
}

/** One page of the reference: a path, with every method it answers (GET and its HEAD twin, in this API). */
interface DocPage {
  /** /docs/<slug>: the path without its version prefix, as a slug, e.g. events-csv for /v1/events.csv. */
  readonly slug: string;
  readonly path: string;
  readonly endpoints: readonly Endpoint[];
  /** The first tag of its first operation: the navigation's group. */
  readonly tag: string;
}

/** Slugs /docs/<slug> cannot take: the pages the docs have besides the reference. */
const RESERVED_SLUGS = ['errors'] as const;
const VERSION_PREFIX = /^\/v\d+\//;

function docPages(all: readonly Endpoint[]): DocPage[] {
  const taken = new Set<string>(RESERVED_SLUGS);
  const byPath = new Map<string, Endpoint[]>();
  for (const x of all) byPath.set(x.main.path, [...(byPath.get(x.main.path) ?? []), x]);
  return [...byPath].map(([path, xs]) => {
    const base = path.replace(VERSION_PREFIX, '/').toLowerCase().replace(NOT_SLUG, '-').replace(EDGE_DASHES, '') || 'root';
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    taken.add(slug);
    return { slug, path, endpoints: xs, tag: xs[0]?.main.op.tags?.[0] ?? 'other' };
  });
}

/** The reference's pages, /docs/<slug> each, in the document's order: what the site routes and the sitemap lists. */
export function docsSlugs(doc: OpenApiDoc): string[] {
  return docPages(endpoints(doc)).map((p) => p.slug);
}

const keyed = (doc: OpenApiDoc, op: OpenApiOperation): boolean => (op.security ?? doc.security ?? []).some((req) => Object.keys(req).length > 0);

/**
 * Where an operation takes its key, as parameters: one for each security scheme its requirements
 * name (the bearer scheme is the Authorization header, an apiKey scheme its named parameter). The
 * document keeps them apart from `parameters`, as OpenAPI does; a reader wants them in the list.
 */
export function keyParameters(doc: OpenApiDoc, op: OpenApiOperation): OpenApiParameter[] {
  const names = [...new Set((op.security ?? doc.security ?? []).flatMap((req) => Object.keys(req)))];
  const others = (name: string): string =>
    names
      .filter((n) => n !== name)
      .map((n) => {
        const o = doc.components?.securitySchemes?.[n];
        return o?.type === 'apiKey' && o.name ? `the ${o.name} parameter` : 'the Authorization header';
      })
      .join(' or ');
  return names.flatMap((name): OpenApiParameter[] => {
    const s = doc.components?.securitySchemes?.[name];
    if (s === undefined) return [];
    const what = `your API key${names.length > 1 ? `, here or in ${others(name)}` : ''} (security scheme \`${name}\`).`;
    if (s.type === 'http' && s.scheme?.toLowerCase() === 'bearer')
      return [{ name: 'Authorization', in: 'header', description: `\`Bearer <key>\`: ${what}`, schema: { type: 'string' } }];
    if (s.type === 'apiKey' && s.name !== undefined)
      return [{ name: s.name, in: s.in ?? 'query', description: `The key itself: ${what} ${s.description ?? ''}`.trim(), schema: { type: 'string' } }];
    return [];
  });
}

/** Every parameter the docs list for an operation: the document's parameters, then where the key goes. */
export const documentedParameters = (doc: OpenApiDoc, op: OpenApiOperation): OpenApiParameter[] => [...(op.parameters ?? []), ...keyParameters(doc, op)];

/** The component a 200 answers with in JSON, e.g. "EventList". */
function jsonComponent(op: OpenApiOperation): { readonly type: string; readonly schema: JsonSchema | undefined; readonly name: string | null } | null {
  const found = Object.entries(op.responses?.['200']?.content ?? {}).find(([type]) => isJsonType(type));
  if (!found) return null;
  return { type: found[0], schema: found[1].schema, name: refName(found[1].schema?.$ref) };
}

/**
 * The problem codes an operation answers with, by status. The document names them in each problem
 * response's description (`code`: Title); the error table decides which words are codes.
 */
function problemCodes(op: OpenApiOperation): Map<ErrorCode, string[]> {
  const codes = new Map<ErrorCode, string[]>();
  const responses = Object.entries(op.responses ?? {}).sort(([a], [b]) => Number(a) - Number(b));
  for (const [status, r] of responses) {
    if (r.content?.[PROBLEM_TYPE] === undefined) continue;
    for (const m of (r.description ?? '').matchAll(BACKTICKED_WORD)) {
      const code = m[1] ?? '';
      if (isErrorCode(code)) codes.set(code, [...(codes.get(code) ?? []), status]);
    }
  }
  return codes;
}

// ------------------------------------------------------------------ schemas as words

function typeText(s: JsonSchema | undefined): string {
  if (s === undefined) return 'any';
  const ref = refName(s.$ref);
  if (ref !== null) return ref;
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return alternatives.map(typeText).join(' or ');
  const type = Array.isArray(s.type) ? s.type.join(' or ') : typeof s.type === 'string' ? s.type : s.enum ? typeof s.enum[0] : 'any';
  if (type === 'array') return `array of ${typeText(s.items)}`;
  return s.format === undefined ? type : `${type} (${s.format})`;
}

const literal = (x: unknown): string => (typeof x === 'string' ? x : JSON.stringify(x));

function rangeConstraints(s: JsonSchema): Html[] {
  const out: Html[] = [];
  if (s.minimum !== undefined) out.push(html`minimum ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) out.push(html`greater than ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined) out.push(html`maximum ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) out.push(html`less than ${s.exclusiveMaximum}`);
  return out;
}

function countConstraint(min: number | undefined, max: number | undefined, unit: string): Html | null {
  const units = (n: number): string => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (min !== undefined && max !== undefined) return html`${min}–${units(max)}`;
  if (min !== undefined) return html`at least ${units(min)}`;
  if (max !== undefined) return html`at most ${units(max)}`;
  return null;
}

function patternConstraint(pattern: string): Html {
  if (pattern.length <= PATTERN_INLINE_MAX) return html`matches <code>${pattern}</code>`;
  return html`<details><summary>matches a pattern (${pattern.length} characters)</summary><code class="pattern">${pattern}</code></details>`;
}

/** Every check a schema states, in words; `listedBy` links the route a value list comes from. */
function constraints(s: JsonSchema | undefined, listedBy: (path: string) => Html): Html[] {
  if (s === undefined) return [];
  const out: Html[] = [];
  const from = s['x-values-from'];
  // A list the snapshot decides (the cities) is named by the route that lists it, not copied here.
  if (from !== undefined) out.push(html`a value listed by ${listedBy(from)}`);
  else if (s.enum)
    out.push(
      html`one of ${joined(
        s.enum.map((x) => html`<code>${literal(x)}</code>`),
        ', ',
      )}`,
    );
  if (s.const !== undefined) out.push(html`exactly <code>${literal(s.const)}</code>`);
  out.push(...rangeConstraints(s));
  const length = countConstraint(s.minLength, s.maxLength, 'character');
  if (length) out.push(length);
  const items = countConstraint(s.minItems, s.maxItems, 'item');
  if (items) out.push(items);
  if (s.pattern !== undefined) out.push(patternConstraint(s.pattern));
  if (s.default !== undefined) out.push(html`default <code>${literal(s.default)}</code>`);
  const each = constraints(s.items, listedBy);
  if (each.length) out.push(html`each item: ${joined(each, '; ')}`);
  return out;
}

function constraintCell(items: readonly Html[]): Html {
  if (items.length === 0) return html`none`;
  if (items.length === 1) return items[0] ?? html``;
  return html`<ul class="constraints">${items.map((c) => html`<li>${c}</li>`)}</ul>`;
}

// ------------------------------------------------------------------ rules between parameters

const ALL_OR_NONE = /^AllOrNone\(([^()]*)\);?$/;
const IF_THEN = /^IF (\w+)(?:=='([^']*)')? THEN ([^;]+);?$/;
const COMPARISON = /^(\w+) (<=|<|>=|>) (\w+);?$/;
const COMPARISON_WORDS: Readonly<Record<string, string>> = {
  '<=': 'not be greater than',
  '<': 'be less than',
  '>=': 'not be less than',
  '>': 'be greater than',
};

/** "`a`", "`a` and `b`", "`a`, `b` or `c`". */
function names(ps: readonly string[], conj: string): Html {
  const codes = ps.map((p) => html`<code>${p}</code>`);
  const last = codes.pop();
  return codes.length === 0 ? html`${last}` : html`${joined(codes, ', ')} ${conj} ${last}`;
}

/** An IDL dependency (the x-dependencies of server/params.ts RULES) in words; null for a form it does not know. */
export function ruleText(idl: string): Html | null {
  const all = ALL_OR_NONE.exec(idl);
  if (all)
    return html`Give ${names(
      (all[1] ?? '').split(',').map((s) => s.trim()),
      'and',
    )} together, or none of them.`;
  const cond = IF_THEN.exec(idl);
  if (cond) {
    const [, p = '', value, then = ''] = cond;
    const clauses = then.split(' AND ').map((c) => c.trim());
    const subject = value === undefined ? html`<code>${p}</code>` : html`<code>${p}=${value}</code>`;
    if (clauses.every((c) => c.startsWith('NOT ')))
      return html`${subject} cannot be combined with ${names(
        clauses.map((c) => c.slice(4)),
        'or',
      )}.`;
    if (clauses.every((c) => /^\w+$/.test(c))) return html`${subject} needs ${names(clauses, 'and')}.`;
    return null;
  }
  const cmp = COMPARISON.exec(idl);
  if (cmp) return html`<code>${cmp[1] ?? ''}</code> must ${COMPARISON_WORDS[cmp[2] ?? ''] ?? ''} <code>${cmp[3] ?? ''}</code>.`;
  return null;
}

// ------------------------------------------------------------------ examples

/** Filters an example query may use, in order, each only where the operation takes it and the value fits its schema. */
const EXAMPLE_FILTERS: readonly { readonly name: string; readonly value: (ex: EventRecord | null) => string | number }[] = [
  { name: 'city', value: (ex) => ex?.venue.city ?? 'Berkeley' },
  { name: 'age_min', value: (ex) => ex?.age_range_years?.min_years ?? 3 },
  { name: 'limit', value: () => 10 },
];

/** Whether a value satisfies what a parameter's schema states (so an example never shows a 400). */
function fits(s: JsonSchema | undefined, value: string | number): boolean {
  if (s === undefined) return true;
  if (s.type === 'array') return fits(s.items, value);
  if (s.enum && !s.enum.includes(value)) return false;
  if (typeof value === 'number') {
    if (s.type !== 'number' && s.type !== 'integer') return false;
    if (s.type === 'integer' && !Number.isInteger(value)) return false;
    if (s.minimum !== undefined && value < s.minimum) return false;
    if (s.maximum !== undefined && value > s.maximum) return false;
    if (s.exclusiveMinimum !== undefined && value <= s.exclusiveMinimum) return false;
    return s.exclusiveMaximum === undefined || value < s.exclusiveMaximum;
  }
  if (s.type !== undefined && s.type !== 'string') return false;
  const length = [...value].length;
  if ((s.minLength !== undefined && length < s.minLength) || (s.maxLength !== undefined && length > s.maxLength)) return false;
  return s.pattern === undefined || new RegExp(s.pattern, 'u').test(value);
}

function exampleQuery(op: OpenApiOperation, example: EventRecord | null): [string, string][] {
  const query = (op.parameters ?? []).filter((p) => p.in === 'query');
  const out: [string, string][] = [];
  for (const f of EXAMPLE_FILTERS) {
    const param = query.find((p) => p.name === f.name);
    const value = f.value(example);
    if (param && fits(param.schema, value)) out.push([f.name, String(value)]);
  }
  return out;
}

/** A path parameter's example: the example record's field of that name, else the schema's first value, else its name. */
function pathValue(param: OpenApiParameter | undefined, name: string, example: EventRecord | null): string {
  const field = example === null ? undefined : Object.entries(example).find(([k]) => k === name)?.[1];
  if (typeof field === 'string') return field;
  const first = param?.schema?.enum?.[0];
  return first === undefined ? name.toUpperCase() : literal(first);
}

function exampleUrl(site: Site, e: Entry, example: EventRecord | null): string {
  const params = e.op.parameters ?? [];
  const path = e.path.replace(PATH_TEMPLATE, (_, name: string) =>
    encodeURIComponent(
      pathValue(
        params.find((p) => p.in === 'path' && p.name === name),
        name,
        example,
      ),
    ),
  );
  const url = new URL(site.apiBaseUrl + path);
  for (const [k, value] of exampleQuery(e.op, example)) url.searchParams.append(k, value);
  return url.href;
}

function curlExample(url: string, withKey: boolean): string {
  return withKey ? `curl -H "Authorization: Bearer $${KEY_VAR}" '${url}'` : `curl '${url}'`;
}

function fetchExample(url: string, withKey: boolean, readsJson: boolean): string {
  const call = withKey
    ? `const response = await fetch(${JSON.stringify(url)}, {\n  headers: { Authorization: \`Bearer \${process.env.${KEY_VAR}}\` },\n});`
    : `const response = await fetch(${JSON.stringify(url)});`;
  return [
    call,
    'if (!response.ok) {',
    `  const problem = await response.json(); // ${PROBLEM_TYPE}`,
    '  throw new Error(`${response.status} ${problem.code}: ${problem.detail}`);',
    '}',
    readsJson ? 'const body = await response.json();' : 'const body = await response.text();',
  ].join('\n');
}

/**
 * Python with requests: what most Python code calling an HTTP API uses (and what most API docs
 * show), over urllib's Request/urlopen, whose HTTPError turns every 4xx into an exception to unwrap
 * before the problem body can be read. The URL is the one curl and fetch ask, written as a JSON
 * string, which is also a Python string literal.
 */
function pythonExample(url: string, withKey: boolean, readsJson: boolean): string {
  return [
    ...(withKey ? ['import os', ''] : []),
    'import requests',
    '',
    'response = requests.get(',
    `    ${JSON.stringify(url)},`,
    ...(withKey ? [`    headers={"Authorization": f"Bearer {os.environ['${KEY_VAR}']}"},`] : []),
    '    timeout=30,',
    ')',
    'if not response.ok:',
    `    problem = response.json()  # ${PROBLEM_TYPE}`,
    `    raise RuntimeError(f"{response.status_code} {problem['code']}: {problem['detail']}")`,
    readsJson ? 'body = response.json()' : 'body = response.text',
  ].join('\n');
}

type EventList = v.InferOutput<typeof EventListSchema>;

/** The example record with its long texts cut: the point is the shape, not the prose. */
function trimmed(r: EventRecord): EventRecord {
  const cut = (s: string | null): string | null => (s === null ? null : clip(s, EXAMPLE_TEXT_MAX));
  return { ...r, description: cut(r.description), summary: cut(r.summary) };
}

/** A schema as a JSON skeleton: each value is its type in words, objects and arrays as they nest. */
function shape(s: JsonSchema | undefined, doc: OpenApiDoc, depth: number): unknown {
  if (s === undefined || depth > 8) return 'any';
  const ref = refName(s.$ref);
  if (ref !== null) return shape(doc.components?.schemas?.[ref], doc, depth + 1);
  if (s.const !== undefined) return s.const;
  const alternatives = (s.anyOf ?? s.oneOf ?? []).filter((a) => a.type !== 'null');
  const structured = alternatives.find((a) => a.$ref !== undefined || a.type === 'object' || a.type === 'array');
  if (structured) return shape(structured, doc, depth + 1);
  if (s.enum) return s.enum.map(literal).join(' | ');
  if (s.type === 'object' && s.properties) return Object.fromEntries(Object.entries(s.properties).map(([k, p]) => [k, shape(p, doc, depth + 1)]));
  if (s.type === 'array') return [shape(s.items, doc, depth + 1)];
  return typeText(s);
}

/** What an operation's 200 looks like: the real example where the answer is made of records, else the schema's skeleton. */
function exampleResponse(
  site: Site,
  doc: OpenApiDoc,
  e: Entry,
  example: EventRecord | null,
): { readonly heading: string; readonly caption: string; readonly body: unknown } | null {
  const json = jsonComponent(e.op);
  if (json === null) return null;
  if (example !== null && json.name === 'EventList') {
    const limit = Number(exampleQuery(e.op, example).find(([k]) => k === 'limit')?.[1] ?? 20);
    const body: EventList = {
      events: [trimmed(example)],
      total: 1,
      limit,
      offset: 0,
      next_offset: null,
      next_cursor: null,
      truncated: false,
      attribution: attribution(site.webBaseUrl),
    };
    return { heading: 'Example response', caption: `Example response (${json.type}; long texts shortened)`, body };
  }
  if (example !== null && json.name === 'EventRecord') {
    return { heading: 'Example response', caption: `Example response (${json.type}; long texts shortened)`, body: trimmed(example) };
  }
  return { heading: 'Response shape', caption: `Response shape (${json.type}): the type of each field`, body: shape(json.schema, doc, 0) };
}

// ------------------------------------------------------------------ an operation's section

interface Ctx {
  readonly site: Site;
  readonly doc: OpenApiDoc;
  readonly example: EventRecord | null;
  readonly endpoints: readonly Endpoint[];
  readonly pages: readonly DocPage[];
  /** Where to write for another plan (PLANS_CONTACT), or null. */
  readonly plansContact: string | null;
  /**
   * Table rows already on the page, by their HTML, with the operation whose table holds them: the
   * searches share most of their parameters and headers, and a reader (and a screen reader) should
   * meet each table once, then a link to it and what differs.
   */
  readonly shown: {
    readonly params: Map<string, Entry>;
    readonly headers: Map<string, Entry>;
    readonly problems: Map<string, Entry>;
    readonly responses: Map<string, Entry>;
  };
}

/** The earlier operation whose table holds most of `rows`, when it holds enough of them to be worth a link. */
function sharedWith(seen: ReadonlyMap<string, Entry>, rows: readonly string[]): Entry | null {
  const counts = new Map<Entry, number>();
  for (const r of rows) {
    const e = seen.get(r);
    if (e) counts.set(e, (counts.get(e) ?? 0) + 1);
  }
  let best: Entry | null = null;
  let most = 0;
  for (const [e, n] of counts) if (n > most) [best, most] = [e, n];
  return most >= 3 ? best : null;
}

/** Where an operation's section is: on its path's page, at its id (the id it had on the one-page docs). */
function href(ctx: Ctx, e: Entry): string {
  const page = ctx.pages.find((p) => p.path === e.path);
  return page ? `/docs/${page.slug}#${e.id}` : `/docs#${e.id}`;
}

/** A link to the GET section of a path when the docs have one, else the path as code. */
function pathLink(ctx: Ctx, path: string): Html {
  const target = ctx.endpoints.find((x) => x.main.path === path && x.main.method === 'get');
  return target ? html`<a href="${href(ctx, target.main)}"><code>GET ${path}</code></a>` : html`<code>${path}</code>`;
}

/** A data cell with its column's name, which a phone shows beside it when the table stacks into cards. */
const td = (label: string, content: Html | string): Html => html`<td data-label="${label}">${content}</td>`;

/** Columns a phone shows side by side; a table with more stacks each row into a card there (site.css .stack). */
const PHONE_COLUMNS = 3;

/** A table that keeps its columns on a wide screen; one too wide for a phone becomes a card per row there. */
function scrollTable(id: string, caption: Html, head: readonly string[], rows: readonly Html[]): Html {
  return html`<div class="table-scroll" role="region" aria-labelledby="${id}" tabindex="0">
<table${head.length > PHONE_COLUMNS ? html` class="stack"` : ''}>
<caption id="${id}">${caption}</caption>
<thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>`;
}

function parametersTable(ctx: Ctx, e: Entry): Html {
  const params = documentedParameters(ctx.doc, e.op);
  if (params.length === 0) return html`<h3>Parameters</h3>\n<p>None.</p>`;
  const rows = params.map((p) => {
    const list = p.schema?.type === 'array' && p.style === 'form' && p.explode === false ? ', comma-separated' : '';
    return html`<tr><th scope="row"><code>${p.name}</code>${p.required ? html` <span class="required">(required)</span>` : ''}</th>${td('In', p.in)}${td('Type', html`${typeText(p.schema)}${list}`)}${td('Constraints', constraintCell(constraints(p.schema, (path) => pathLink(ctx, path))))}${td('Description', prose(p.description))}</tr>\n`;
  });
  const texts = rows.map((r) => r.text);
  const base = sharedWith(ctx.shown.params, texts);
  for (const t of texts) if (!ctx.shown.params.has(t)) ctx.shown.params.set(t, e);
  const own = base === null ? rows : rows.filter((r) => ctx.shown.params.get(r.text) !== base);
  const shared = base === null ? [] : params.filter((_, i) => ctx.shown.params.get(texts[i] ?? '') === base);
  const intro =
    base === null
      ? ''
      : html`<p>The ${shared.length} parameters ${joined(
          shared.map((p) => html`<code>${p.name}</code>`),
          ', ',
        )} are those of <a class="shared-params" href="#${base.id}"><code>${methodPath(base)}</code></a>${own.length ? '; these differ or are its own:' : '.'}</p>\n`;
  return html`<h3>Parameters</h3>
${intro}${own.length ? scrollTable(`${e.id}-parameters`, html`Parameters of <code>${methodPath(e)}</code>${base ? ' not shared' : ''}`, ['Name', 'In', 'Type', 'Constraints', 'Description'], own) : ''}`;
}

function rulesList(e: Entry): Html {
  const rules = e.op['x-dependencies'] ?? [];
  if (rules.length === 0) return html``;
  const items = rules.map((idl) => {
    const words = ruleText(idl);
    return html`<li>${words ?? ''}${words ? ' ' : ''}<span class="idl">IDL: <code>${idl}</code></span></li>`;
  });
  return html`<h3>Rules between parameters</h3>
<p>Breaking one is a 400 <a href="/docs/errors#invalid_parameter"><code>invalid_parameter</code></a> naming the parameter. Generators read them from the operation’s <code>x-dependencies</code> (IDL).</p>
<ul>${items}</ul>`;
}

function responsesPart(ctx: Ctx, e: Entry): Html {
  const responses = Object.entries(e.op.responses ?? {}).filter(([, r]) => r.content?.[PROBLEM_TYPE] === undefined);
  const items = responses.map(([status, r]) => {
    const types = Object.keys(r.content ?? {});
    const what = types.length
      ? html`${joined(
          types.map((t) => html`<code>${t}</code>`),
          ', ',
        )}`
      : prose(r.description);
    return html`<li><strong>${status}</strong>: ${what}</li>`;
  });
  const headers = Object.entries(e.op.responses?.['200']?.headers ?? {});
  const headerRows = headers.map(
    ([name, h]) =>
      html`<tr><th scope="row"><code>${name}</code></th>${td('Sent', h.required ? 'always' : 'sometimes')}${td('Description', prose(h.description))}</tr>\n`,
  );
  // Identical header tables (every keyed search has the same) are shown once and linked after.
  const key = headerRows.map((r) => r.text).join('');
  const same = headers.length ? ctx.shown.headers.get(key) : undefined;
  if (headers.length && same === undefined) ctx.shown.headers.set(key, e);
  const table = !headers.length
    ? ''
    : same
      ? html`<p>Response headers: the same as <a class="shared-headers" href="#${same.id}"><code>${methodPath(same)}</code></a>.</p>`
      : scrollTable(`${e.id}-headers`, html`Response headers of <code>${methodPath(e)}</code>`, ['Header', 'Sent', 'Description'], headerRows);
  return html`<h3>Responses</h3>
<ul>${items}</ul>
${table}`;
}

function problemsPart(ctx: Ctx, e: Entry): Html {
  const codes = [...problemCodes(e.op)];
  if (codes.length === 0) return html``;
  const rows = codes.map(
    ([code, statuses]) =>
      html`<tr><th scope="row"><a href="/docs/errors#${code}"><code>${code}</code></a></th>${td('Status', statuses.join(' or '))}${td('Title', ERRORS[code].title)}</tr>\n`,
  );
  const key = rows.map((r) => r.text).join('');
  const same = ctx.shown.problems.get(key);
  if (same === undefined) ctx.shown.problems.set(key, e);
  return html`<h3>Problems</h3>
${
  same
    ? html`<p>The same problem codes as <a class="shared-problems" href="#${same.id}"><code>${methodPath(same)}</code></a>.</p>`
    : html`<p>Errors are <code>${PROBLEM_TYPE}</code>; each code links to what it means and what to do.</p>
${scrollTable(`${e.id}-problems`, html`Problem codes of <code>${methodPath(e)}</code>`, ['Code', 'Status', 'Title'], rows)}`
}`;
}

function examplesPart(ctx: Ctx, e: Entry): Html {
  const url = exampleUrl(ctx.site, e, ctx.example);
  const withKey = keyed(ctx.doc, e.op);
  const types = Object.keys(e.op.responses?.['200']?.content ?? {});
  const readsJson = types.length > 0 && types.every(isJsonType);
  const response = exampleResponse(ctx.site, ctx.doc, e, ctx.example);
  return html`<h3>Example request</h3>
${codeBlock(curlExample(url, withKey), 'curl')}
${codeBlock(fetchExample(url, withKey, readsJson), 'JavaScript (fetch)')}
${codeBlock(pythonExample(url, withKey, readsJson), 'Python (requests)')}
${response === null ? '' : exampleBody(ctx, e, response)}`;
}

/** An example response, or a link to the identical one shown earlier (the searches share their envelope). */
function exampleBody(ctx: Ctx, e: Entry, response: { readonly heading: string; readonly caption: string; readonly body: unknown }): Html {
  const json = JSON.stringify(response.body, null, 2);
  const key = `${response.heading}\0${json}`;
  const same = ctx.shown.responses.get(key);
  if (same === undefined) ctx.shown.responses.set(key, e);
  return html`<h3>${response.heading}</h3>
${same ? html`<p>The same as for <a class="shared-response" href="#${same.id}"><code>${methodPath(same)}</code></a>.</p>` : codeBlock(json, response.caption)}`;
}

/**
 * A console for a GET: a form of the operation's parameters that asks the API itself. Without
 * JavaScript it is a plain GET to the operation's URL (the key, if any, as the apiKey scheme's
 * query parameter, the one way a form can send it). site.js instead sends the key in an
 * Authorization header with fetch and shows the status, headers and body here, so the key stays out
 * of the address bar and the history. Nothing of what is typed reaches the page (it is the same
 * cached page for everyone), and autocomplete is off so the browser keeps no copy.
 */
function tryIt(ctx: Ctx, e: Entry): Html {
  if (e.method !== 'get') return html``;
  const params = e.op.parameters ?? [];
  const examples = new Map(exampleQuery(e.op, ctx.example));
  const action = new URL(exampleUrl(ctx.site, e, ctx.example));
  action.search = '';
  const field = (name: string, label: Html, input: Html, hint: Html | null): Html => {
    const id = `${e.id}-try-${name}`;
    return html`<div class="field"><label for="${id}">${label}</label>${input}${hint === null ? '' : html`<span class="hint" id="${id}-hint">${hint}</span>`}</div>`;
  };
  const pathFields = params
    .filter((p) => p.in === 'path')
    .map((p) => {
      const id = `${e.id}-try-${p.name}`;
      const value = pathValue(p, p.name, ctx.example);
      return field(
        p.name,
        html`<code>${p.name}</code> (in the path)`,
        html`<input id="${id}" type="text" value="${value}" data-path-param="${p.name}" autocomplete="off" spellcheck="false" aria-describedby="${id}-hint" required>`,
        html`Without JavaScript the form asks for <code>${value}</code>.`,
      );
    });
  const query = params.filter((p) => p.in === 'query');
  const queryField = (p: OpenApiParameter): Html => {
    const id = `${e.id}-try-${p.name}`;
    return field(
      p.name,
      html`<code>${p.name}</code> <span class="muted">${typeText(p.schema)}</span>`,
      html`<input id="${id}" name="${p.name}" type="text" value="${examples.get(p.name) ?? ''}" autocomplete="off" spellcheck="false">`,
      null,
    );
  };
  // The example's parameters in view, the rest folded away (a search has twenty): a folded field is
  // still the form's and is sent like the others.
  const shown = query.filter((p) => examples.has(p.name));
  const folded = query.filter((p) => !examples.has(p.name));
  const queryFields = html`${shown.map(queryField)}${
    folded.length
      ? html`<details class="try-more"><summary>More parameters (${folded.length})</summary><div class="try-more-fields">${folded.map(queryField)}</div></details>`
      : ''
  }`;
  const keyParam = keyParameters(ctx.doc, e.op).find((p) => p.in === 'query');
  const keyId = `${e.id}-try-key`;
  const keyField = keyed(ctx.doc, e.op)
    ? html`<div class="field"><label for="${keyId}">Your API key</label><input id="${keyId}"${keyParam ? html` name="${keyParam.name}"` : ''} type="text" data-api-key autocomplete="off" spellcheck="false" autocapitalize="off" aria-describedby="${keyId}-hint" placeholder="bsc_live_…" required><span class="hint" id="${keyId}-hint">Sent in the <code>Authorization</code> header by this page’s script${keyParam ? html`, or without JavaScript as <code>${keyParam.name}</code> in the address (and so in your browser’s history)` : ''}. This page keeps no copy. A request counts against your quota like any other.</span></div>`
    : html`<p>No key needed.</p>`;
  return html`<form class="try-it" method="get" action="${action.href}" data-try-it="${ctx.site.apiBaseUrl}${e.path}" data-result="${e.id}-try-result" autocomplete="off" aria-labelledby="${e.id}-try-heading">
<h3 id="${e.id}-try-heading">Try it</h3>
${pathFields}${queryFields}
${keyField}
<p class="hint">The answer shows below this form; empty fields are left out. Without JavaScript the answer replaces this page, and empty fields are sent empty (the API names any it refuses).</p>
<button type="submit">Send <span class="visually-hidden">${methodPath(e)} </span>request</button>
</form>
<div class="try-result" id="${e.id}-try-result" aria-live="polite"></div>`;
}

function keyPart(ctx: Ctx, op: OpenApiOperation): Html {
  return keyed(ctx.doc, op)
    ? html`<p class="key-requirement"><strong>API key required</strong>: <a href="/docs#authentication">send it as a Bearer token or as <code>api_key</code></a>.</p>`
    : html`<p class="key-requirement"><strong>No key needed.</strong></p>`;
}

function headPart(h: Entry): Html {
  return html`<section id="${h.id}" class="head-twin">
<h3><code>${methodPath(h)}</code></h3>
<p><code>${methodPath(h)}</code> answers with the status and headers GET would, without a body, and consumes no quota: a cheap way to read an ETag or where your quota stands.</p>
</section>`;
}

function operationSection(ctx: Ctx, x: Endpoint): Html {
  const e = x.main;
  return html`<section id="${e.id}" class="operation">
<h2>${prose(e.op.summary ?? methodPath(e))} <code class="endpoint">${methodPath(e)}</code></h2>
${e.op.description ? html`<p>${prose(e.op.description)}</p>\n` : ''}${keyPart(ctx, e.op)}
${parametersTable(ctx, e)}
${rulesList(e)}
${tryIt(ctx, e)}
${responsesPart(ctx, e)}
${problemsPart(ctx, e)}
${examplesPart(ctx, e)}
${x.head === null ? '' : headPart(x.head)}
</section>`;
}

// ------------------------------------------------------------------ the guide sections

const isSearch = (x: Endpoint): boolean => jsonComponent(x.main.op)?.name === 'EventList' && x.main.method === 'get';

function quickStart(ctx: Ctx): Html {
  const demo = ctx.endpoints.find((x) => isSearch(x) && !keyed(ctx.doc, x.main.op));
  const search = ctx.endpoints.find((x) => isSearch(x) && keyed(ctx.doc, x.main.op));
  const servers = ctx.doc.servers ?? [];
  const apiHost = servers.find((s) => s.url !== ctx.site.apiBaseUrl);
  const demoUrl = demo ? exampleUrl(ctx.site, demo.main, ctx.example) : null;
  const searchUrl = search ? exampleUrl(ctx.site, search.main, ctx.example) : null;
  return html`<section id="quick-start">
<h2>Quick start</h2>
<ol class="steps">
${
  demo && demoUrl
    ? html`<li><p><strong>Try it without a key.</strong> ${pathLink(ctx, demo.main.path)} answers the same search as the keyed API, a few events a call:</p>
${codeBlock(curlExample(demoUrl, false), 'curl')}</li>\n`
    : ''
}<li><p><strong>Get a key.</strong> <a href="/account/sign-in">Sign in</a> with your e-mail (or your identity provider, where the site offers one): your organization starts on the Community plan, and your account page creates, rolls and revokes keys and shows this month’s usage. Keys look like <code>bsc_live_…</code> and are shown once, when they are created. On a server of your own, an operator can also create one with <code>npx family-events keys create --email you@example.com --org "Your newsletter"</code>. Keep it on your server: never put a key in code that runs in a browser.</p></li>
${
  searchUrl && search
    ? html`<li><p><strong>Make your first request</strong> to ${pathLink(ctx, search.main.path)}, with the key in the <code>Authorization</code> header:</p>
${codeBlock(`export ${KEY_VAR}=bsc_live_…   # your key\n${curlExample(searchUrl, true)}`, 'curl')}
${codeBlock(fetchExample(searchUrl, true, true), 'JavaScript (fetch, on your server)')}
${codeBlock(pythonExample(searchUrl, true, true), 'Python (requests)')}</li>\n`
    : ''
}<li><p><strong>Read the answer.</strong> <code>events</code> holds the page of records, <code>total</code> how many match, <code>next_offset</code> where the next page starts; each record’s <code>event_url</code> is its page on this site, the link to give your readers.</p></li>
</ol>
<p>The API answers at <code>${ctx.site.apiBaseUrl}</code>, this website’s <code>/api</code>${apiHost ? html`, and at the API host <code>${apiHost.url}</code>` : ''}: the same routes, keys and answers on ${apiHost ? 'both' : 'every address'}. ${servers.length ? html`The servers the OpenAPI document lists:` : ''}</p>
${servers.length ? html`<ul>${servers.map((s) => html`<li><code>${s.url}</code>${s.description ? html`: ${s.description}` : ''}</li>`)}</ul>\n` : ''}<p>The whole API is described by <a href="${ctx.site.apiBaseUrl}/v1/openapi.json">its OpenAPI 3.1 document</a>; this page is generated from it.</p>
</section>`;
}

function authentication(ctx: Ctx): Html {
  const schemes = Object.entries(ctx.doc.components?.securitySchemes ?? {});
  const items = schemes.map(([name, s]) => {
    if (s.type === 'http' && s.scheme === 'bearer')
      return html`<li>The <code>Authorization</code> header: <code>Authorization: Bearer &lt;key&gt;</code> (scheme <code>${name}</code>). Prefer this: headers stay out of logs and browser history.</li>`;
    if (s.type === 'apiKey' && s.name)
      return html`<li>The <code>${s.name}</code> ${s.in ?? 'query'} parameter: <code>?${s.name}=&lt;key&gt;</code> (scheme <code>${name}</code>). ${prose(s.description)}</li>`;
    return html`<li><code>${name}</code>: ${prose(s.description)}</li>`;
  });
  return html`<section id="authentication">
<h2>Authentication</h2>
<p>Routes marked “API key required” take your key in one of these ways:</p>
<ul>${items}</ul>
<p>No key is a 401 <a href="/docs/errors#missing_api_key"><code>missing_api_key</code></a>; a key that is unknown, malformed or revoked is a 401 <a href="/docs/errors#invalid_api_key"><code>invalid_api_key</code></a>. The reference routes and the demo need no key.</p>
</section>`;
}

const LABELS: Readonly<Record<string, string>> = CATEGORY_LABELS;

/** How an organization comes to be on a plan: the sign-up plan by signing in, any other by asking. */
function howToGet(ctx: Ctx, p: Plan): Html {
  if (p.name === SIGN_UP_PLAN) return html`Automatic: every new organization starts on it. <a href="/account/sign-in">Sign in</a> to get a key.`;
  const ask = ctx.plansContact ? html`Write to <a href="mailto:${ctx.plansContact}">${ctx.plansContact}</a>` : html`Ask the operator of this service`;
  return html`${ask} with your organization’s name (on <a href="/account">your account page</a>) and what you will publish; the operator moves your organization to it. Your keys and usage stay as they are.`;
}

function plansTable(ctx: Ctx, plans: readonly Plan[]): Html {
  if (plans.length === 0) return html`<p>The plans are set by the operator of this service.</p>`;
  const rows = plans.map((p) => {
    const excluded = p.excludedCategories.length
      ? html`${joined(
          p.excludedCategories.map((c) => html`${LABELS[c] ?? c} (<code>${c}</code>)`),
          ', ',
        )}`
      : html`none`;
    return html`<tr id="plan-${p.name}"><th scope="row">${p.name}</th>${td('Event records a month', p.monthlyRecordLimit === null ? 'no cap' : p.monthlyRecordLimit.toLocaleString('en-US'))}${td('Excluded categories', excluded)}${td('Attribution', p.attributionRequired ? 'required' : 'not required')}${td('Requests a minute per key', p.requestsPerMinute.toLocaleString('en-US'))}${td('How to get it', howToGet(ctx, p))}</tr>\n`;
  });
  return scrollTable(
    'plans-caption',
    html`Plans`,
    ['Plan', 'Event records a month', 'Excluded categories', 'Attribution', 'Requests a minute per key', 'How to get it'],
    rows,
  );
}

/** The quota headers as the document describes them, from the first operation that sends them. */
function quotaHeaders(ctx: Ctx): Html {
  for (const x of ctx.endpoints) {
    const headers = Object.entries(x.main.op.responses?.['200']?.headers ?? {}).filter(([name]) => name.startsWith('X-Quota-') || name.startsWith('RateLimit'));
    if (headers.length === 0) continue;
    const rows = headers.map(([name, h]) => html`<tr><th scope="row"><code>${name}</code></th>${td('Meaning', prose(h.description))}</tr>\n`);
    return scrollTable('quota-headers-caption', html`Quota headers`, ['Header', 'Meaning'], rows);
  }
  return html``;
}

function plansSection(ctx: Ctx, plans: readonly Plan[]): Html {
  return html`<section id="plans">
<h2>Plans, quota and rate limits</h2>
${plansTable(ctx, plans)}
<ul>
<li><strong>Records, not requests.</strong> Every event record delivered in a 200 counts one against the month’s quota, in any format, cached or not. HEAD, 304 Not Modified, errors, <code>/v1/usage</code> and the demo count nothing.</li>
<li><strong>A hard cap.</strong> The quota is a calendar month in Pacific time and belongs to your organization: its keys share it. No key ever receives more records than the plan allows, however many requests run at once.</li>
<li><strong>Truncation.</strong> A page longer than what is left is cut to what is left: <code>truncated: true</code> in JSON, <code>X-Quota-Truncated: true</code> in every format, and <code>next_offset</code> where it was cut.</li>
<li><strong>429.</strong> With nothing left, requests answer 429 <a href="/docs/errors#quota_exhausted"><code>quota_exhausted</code></a> with <code>Retry-After</code> until the first instant of next month. Too many requests a minute on one key is 429 <a href="/docs/errors#rate_limited"><code>rate_limited</code></a>, with <code>Retry-After</code> in seconds.</li>
<li><strong>Where you stand.</strong> Every answer to a key carries the headers below; ${pathLink(ctx, '/v1/usage')} gives the month so far, per day.</li>
<li><strong>The website is for people.</strong> Browsing it needs no key and counts nothing, so it is kept at a person’s scale: its listings and calendars hold what the free plan includes, a search’s calendar holds the next events of one page, and listings and calendar downloads are limited per address to a person’s pace. Every event’s page and its calendar file stay open to all. Programs use the API with a key.</li>
</ul>
${quotaHeaders(ctx)}
</section>`;
}

function attributionSection(ctx: Ctx, plans: readonly Plan[]): Html {
  const a = attribution(ctx.site.webBaseUrl);
  const requiring = plans.filter((p) => p.attributionRequired).map((p) => p.name);
  return html`<section id="attribution">
<h2>Attribution</h2>
<p>${requiring.length ? html`On the ${requiring.join(' and ')} plan${requiring.length > 1 ? 's' : ''}, wherever` : 'Wherever'} you show our events, show a visible link to <a href="${a.url}">${ctx.site.name}</a>. Every answer carries the link: <code>attribution</code> in the JSON envelope, the channel link in RSS, <code>home_page_url</code> in JSON Feed, and <code>Link: &lt;${a.url}&gt;; rel="attribution"</code> on CSV. Paste this where the events appear:</p>
${codeBlock(attributionSnippet(ctx.site), 'HTML to paste')}
<p>Link each event to its <code>event_url</code> too: it is the event’s page here, with the details, a map and an add-to-calendar file.</p>
</section>`;
}

function pollingSection(ctx: Ctx): Html {
  const search = ctx.endpoints.find((x) => isSearch(x) && keyed(ctx.doc, x.main.op));
  const url = search ? exampleUrl(ctx.site, search.main, ctx.example) : `${ctx.site.apiBaseUrl}/v1/events`;
  const cacheControl = search?.main.op.responses?.['200']?.headers?.['Cache-Control']?.description;
  const poll = [
    'let etag = null;',
    '',
    'async function poll() {',
    `  const headers = { Authorization: \`Bearer \${process.env.${KEY_VAR}}\` };`,
    "  if (etag) headers['If-None-Match'] = etag;",
    `  const response = await fetch(${JSON.stringify(url)}, { headers });`,
    '  if (response.status === 304) return null; // unchanged: nothing charged',
    '  if (!response.ok) throw new Error(`${response.status}: ${(await response.json()).detail}`);',
    "  etag = response.headers.get('ETag');",
    '  return response.json();',
    '}',
  ].join('\n');
  return html`<section id="polling">
<h2>Polling with ETags</h2>
<p>Every 200 carries a strong <code>ETag</code> of its body: the same snapshot, query and plan give the same ETag. Send it back in <code>If-None-Match</code>; while nothing has changed the answer is <strong>304 Not Modified</strong>, without a body, and it costs nothing against your quota. Quota state travels only in headers, so identical polls get identical bodies.</p>
<ul>
${cacheControl ? html`<li><code>Cache-Control: ${cacheControl}</code>: a private cache may reuse an answer for that long; polling more often gains nothing.</li>\n` : ''}<li><code>Last-Modified</code> is when the event data was built; the data changes a few times a day at most.</li>
<li><code>Accept-Encoding: br</code> or <code>gzip</code> compresses bodies over 1 KiB; each encoding has its own ETag.</li>
<li>Paging: follow <code>Link: &lt;…&gt;; rel="next"</code> (or <code>next_offset</code> in JSON) until it is absent; <code>X-Total-Count</code> says how many events match.</li>
<li>Exports: <code>/v1/events</code> and <code>/v1/events.csv</code> page past offset 100,000 by <code>cursor</code>, the <code>next_cursor</code> (JSON) or <code>X-Next-Cursor</code> header of the page before; a cursor keeps its place when the data is rebuilt, so nothing is skipped or repeated. <a href="/docs/export-csv"><code>/v1/export.csv</code></a> streams every event at once.</li>
</ul>
${codeBlock(`curl -i -H "Authorization: Bearer $${KEY_VAR}" -H 'If-None-Match: "<the ETag you received>"' '${url}'`, 'curl: a conditional request')}
${codeBlock(poll, 'JavaScript: polling with If-None-Match')}
</section>`;
}

/** The change feed, for clients that keep the whole data set (or a filtered part of it). */
function syncingSection(ctx: Ctx): Html {
  const base = ctx.site.apiBaseUrl;
  const curl = [
    `# The first page, from the beginning (add filters such as city=Oakland; they stay in every next URL)`,
    `curl -s -H "Authorization: Bearer $${KEY_VAR}" '${base}/v1/changes?limit=1000' > page.json`,
    `# Apply .changes in order: a record replaces your copy by id, {"deleted": true} removes it.`,
    `# While .has_more is true, fetch .next at once; then keep .next and poll it later:`,
    `curl -s -H "Authorization: Bearer $${KEY_VAR}" "$(jq -r .next page.json)" > page.json`,
  ].join('\n');
  return html`<section id="syncing">
<h2>Keeping a copy in sync</h2>
<p>Aggregators that keep the data set need only what changed: ${pathLink(ctx, '/v1/changes')} lists every record added, changed, canceled or removed since a cursor, oldest change first, ordered by <code>updated_at</code> then <code>id</code>. Every record carries <code>created_at</code> and <code>updated_at</code> (the build time of the data snapshot that first had it as it is now).</p>
<ol>
<li>Start without a cursor, or with <code>since</code> (a time you already hold the data as of). Each page has <code>changes</code>, <code>next</code> (also in <code>Link: rel="next"</code>), <code>next_cursor</code> and <code>has_more</code>.</li>
<li>Apply each page in order: a record replaces yours with the same <code>id</code>; <code>{"id", "deleted": true, "updated_at"}</code> removes it. Save <code>next</code> with your copy, after the page.</li>
<li>Follow <code>next</code> while <code>has_more</code> is true. Then poll the last <code>next</code> with <code>If-None-Match</code>: it answers 304 (free) until something changes.</li>
</ol>
<p>Cursors never skip or repeat a change across data rebuilds, and never expire on their own: a client that stops (or is killed) mid-way goes on from its last saved <code>next</code>. Deletions are kept at least 30 days; a cursor older than the oldest kept deletion answers 410 <a href="/docs/errors#cursor_expired"><code>cursor_expired</code></a>: sync again from the start. Records count toward your quota; deletions and 304s do not. Filters work as for a search, without the "not ended yet" default; a record that stops matching your filters comes as a deletion. <code>/v1/changes.csv</code> gives the same pages as CSV with a <code>deleted</code> column.</p>
${codeBlock(curl, 'curl: a sync, page by page')}
</section>`;
}

function errorsSection(): Html {
  const rows = (Object.keys(ERRORS) as ErrorCode[]).map(
    (code) =>
      html`<tr><th scope="row"><a href="/docs/errors#${code}"><code>${code}</code></a></th>${td('Status', statusesOf(code).join(' or '))}${td('Title', ERRORS[code].title)}</tr>\n`,
  );
  return html`<section id="errors">
<h2>Errors</h2>
<p>Every error is <code>${PROBLEM_TYPE}</code> (RFC 9457) with a stable <code>code</code>, a <code>detail</code> sentence that says what to change, and for bad parameters <code>errors[]</code> naming each one. Its <code>type</code> links to <a href="/docs/errors">the error reference</a>, which says when each code happens and what to do.</p>
${scrollTable('error-codes-caption', html`Error codes`, ['Code', 'Status', 'Title'], rows)}
</section>`;
}

/** What each media type is, for people. */
const FORMAT_NAMES: Readonly<Record<string, string>> = {
  'application/json': 'JSON',
  'text/csv': 'CSV (RFC 4180)',
  'application/rss+xml': 'RSS 2.0',
  'application/feed+json': 'JSON Feed 1.1',
  'text/calendar': 'iCalendar (RFC 5545)',
};

function formatsSection(ctx: Ctx): Html {
  const rows = ctx.endpoints
    .filter((x) => x.main.op.tags?.includes('events'))
    .flatMap((x) =>
      Object.keys(x.main.op.responses?.['200']?.content ?? {}).map(
        (type) =>
          html`<tr><th scope="row">${FORMAT_NAMES[type] ?? type}</th>${td('Media type', html`<code>${type}</code>`)}${td('Route', html`<a href="${href(ctx, x.main)}"><code>${methodPath(x.main)}</code></a>`)}</tr>\n`,
      ),
    );
  return html`<section id="formats">
<h2>Formats</h2>
<p>Every format answers the same search with the same events in the same order, under the same plan, quota and paging rules.</p>
<p id="all-day"><strong>All-day events.</strong> A record's <code>all_day</code> is <code>true</code> when the organizer gave a date without a time of day. Its <code>start_datetime</code> and <code>end_datetime</code> stay ISO 8601 datetimes with the Pacific offset (midnight of the first day, 23:59:59 of the last), so show the dates and no clock. iCalendar writes such an event as dates (<code>DTSTART;VALUE=DATE</code>, and <code>DTEND;VALUE=DATE</code> the day after the last day, as RFC 5545 counts it), CSV has an <code>all_day</code> column, and RSS and JSON Feed items say “All day”.</p>
${rows.length ? scrollTable('formats-caption', html`Formats`, ['Format', 'Media type', 'Route'], rows) : ''}
</section>`;
}

/** The docs' pages in reading order: the overview, the reference's pages, the error codes. */
interface NavItem {
  readonly path: string;
  readonly label: Html;
  /** The navigation's group: null for the guides around the reference. */
  readonly tag: string | null;
}

const TAG_LABELS: Readonly<Record<string, string>> = { events: 'Events', account: 'Your account', reference: 'Reference data', operations: 'Operations' };

function navItems(ctx: Ctx): NavItem[] {
  return [
    { path: '/docs', label: html`Overview`, tag: null },
    ...ctx.pages.map((p) => {
      const main = p.endpoints[0]?.main;
      return { path: `/docs/${p.slug}`, label: html`${prose(main?.op.summary ?? p.path)} <code>${p.path}</code>`, tag: p.tag };
    }),
    { path: '/docs/errors', label: html`Error codes`, tag: null },
  ];
}

/** The list of every docs page, grouped by tag, the current one marked: the sidebar and the phone's menu show the same list. */
function navList(ctx: Ctx, current: string): Html {
  const items = navItems(ctx);
  const link = (i: NavItem): Html => html`<li><a href="${i.path}"${i.path === current ? html` aria-current="page"` : ''}>${i.label}</a></li>`;
  const tags = [...new Set(items.flatMap((i) => (i.tag === null ? [] : [i.tag])))];
  const groups = tags.map(
    (tag) =>
      html`<li class="docs-nav-group"><span class="docs-nav-tag">${TAG_LABELS[tag] ?? tag}</span><ul>${items.filter((i) => i.tag === tag).map(link)}</ul></li>`,
  );
  const [first] = items;
  const last = items[items.length - 1];
  return html`<ul class="docs-nav-list">${first ? link(first) : ''}${groups}${last && last !== first ? link(last) : ''}</ul>`;
}

/**
 * The docs around a page's content: a sidebar of every page on a wide screen, a collapsed menu of
 * the same list on a phone (a <details>, so it opens without JavaScript), and previous and next.
 */
function docsFrame(ctx: Ctx, current: string, content: Html): Html {
  const items = navItems(ctx);
  const at = items.findIndex((i) => i.path === current);
  const prev = at > 0 ? items[at - 1] : undefined;
  const next = at >= 0 ? items[at + 1] : undefined;
  return html`<div class="docs-layout">
<nav class="docs-sidebar" aria-label="Developer docs">${navList(ctx, current)}</nav>
<div class="docs-content">
<details class="docs-menu"><summary>All developer docs pages</summary><nav aria-label="Developer docs (menu)">${navList(ctx, current)}</nav></details>
${content}
${
  prev || next
    ? html`<nav class="docs-pager" aria-label="Previous and next page">${prev ? html`<a class="docs-prev" href="${prev.path}" rel="prev"><span class="docs-pager-dir">Previous</span> ${prev.label}</a>` : ''}${next ? html`<a class="docs-next" href="${next.path}" rel="next"><span class="docs-pager-dir">Next</span> ${next.label}</a>` : ''}</nav>`
    : ''
}
</div>
</div>`;
}

/**
 * The reference's index on the overview. Each entry keeps the id its section had when the docs were
 * one page, so an old link (/docs#get-v1-events) still lands here, on the link to where it moved
 * (data-moved: site.js follows it at once).
 */
function referenceIndex(ctx: Ctx): Html {
  const groups = [...new Set(ctx.pages.map((p) => p.tag))].map((tag) => {
    const items = ctx.pages
      .filter((p) => p.tag === tag)
      .flatMap((p) =>
        p.endpoints.map(
          (x) =>
            html`<li id="${x.main.id}"><a href="${href(ctx, x.main)}" data-moved>${prose(x.main.op.summary ?? methodPath(x.main))}: <code>${methodPath(x.main)}</code></a>${x.head === null ? '' : html` (also <a id="${x.head.id}" href="${href(ctx, x.head)}" data-moved>HEAD<span class="visually-hidden"> ${x.head.path}</span></a>)`}</li>`,
        ),
      );
    return html`<h3>${TAG_LABELS[tag] ?? tag}</h3>\n<ul class="link-list">${items}</ul>\n`;
  });
  return html`<section id="reference">
<h2>Reference</h2>
<p>One page for each route, with its parameters, a console to try it, examples in curl, JavaScript and Python, and its answers. Every route is also served under this website’s <code>/api</code>. Only GET and HEAD are accepted.</p>
${groups}</section>`;
}

function contents(): Html {
  return html`<nav id="contents" class="toc" aria-labelledby="contents-heading">
<h2 id="contents-heading">On this page</h2>
<ol>
<li><a href="#quick-start">Quick start: get a key</a></li>
<li><a href="#authentication">Authentication</a></li>
<li><a href="#reference">Reference</a></li>
<li><a href="#plans">Plans, quota and rate limits</a></li>
<li><a href="#attribution">Attribution</a></li>
<li><a href="#polling">Polling with ETags</a></li>
<li><a href="#syncing">Keeping a copy in sync</a></li>
<li><a href="#errors">Errors</a></li>
<li><a href="#formats">Formats</a></li>
</ol>
</nav>`;
}

function docsContext(site: Site, input: DocsInput): Ctx {
  const all = endpoints(input.openapi);
  return {
    site,
    doc: input.openapi,
    example: input.example,
    endpoints: all,
    pages: docPages(all),
    plansContact: input.plansContact ?? null,
    shown: { params: new Map(), headers: new Map(), problems: new Map(), responses: new Map() },
  };
}

/** /docs: the guides (key, authentication, plans and limits, attribution, polling, errors, formats) and the reference's index. */
export function docsPage(site: Site, input: DocsInput): string {
  const ctx = docsContext(site, input);
  const title = input.openapi.info?.title ?? `${site.name} API`;
  const main = html`<h1>${title}: developer docs</h1>
<p class="lede">Family-friendly events in the San Francisco Bay Area for newsletters, media and apps: search by city, place, age, category, price and date, in JSON, CSV, RSS, JSON Feed or iCalendar.${input.openapi.info?.version ? html` API version ${input.openapi.info.version}.` : ''}</p>
${contents()}
${quickStart(ctx)}
${authentication(ctx)}
${referenceIndex(ctx)}
${plansSection(ctx, input.plans)}
${attributionSection(ctx, input.plans)}
${pollingSection(ctx)}
${syncingSection(ctx)}
${errorsSection()}
${formatsSection(ctx)}`;
  return renderPage(
    site,
    {
      title: `Developer docs – ${site.name}`,
      description: `How to use the ${site.name} API: getting a key, authentication, plans, quota and rate limits, polling with ETags, errors and formats, and a page for every route.`,
      canonicalPath: '/docs',
      og: { type: 'website' },
      script: true,
    },
    docsFrame(ctx, '/docs', main),
  );
}

/** /docs/<slug>: one route (its GET and HEAD), with its console and examples; null for a slug the document has no page for. */
export function docsEndpointPage(site: Site, input: DocsInput, slug: string): string | null {
  const ctx = docsContext(site, input);
  const page = ctx.pages.find((p) => p.slug === slug);
  if (page === undefined) return null;
  const first = page.endpoints[0]?.main;
  const summary = first?.op.summary ?? page.path;
  const main = html`<h1>${prose(summary)} <code class="endpoint">${page.path}</code></h1>
${page.endpoints.map((x) => operationSection(ctx, x))}`;
  return renderPage(
    site,
    {
      title: `${summary}: ${page.path} – ${site.name} API docs`,
      description: `${page.path} of the ${site.name} API: ${first?.op.description ?? summary}`.slice(0, 300),
      canonicalPath: `/docs/${page.slug}`,
      og: { type: 'website' },
      script: true,
    },
    docsFrame(ctx, `/docs/${page.slug}`, main),
  );
}

// ------------------------------------------------------------------ /docs/errors

interface ErrorHelp {
  readonly when: string;
  readonly fix: string;
  /** An example problem of this code, as the server words them. */
  readonly detail: string;
  readonly errors?: readonly ParamError[];
}

// Built on call: the limits come from server/app.ts, which imports the website (and so this module).
const errorHelp = (): Readonly<Record<ErrorCode, ErrorHelp>> => ({
  invalid_parameter: {
    when: 'A parameter’s value is out of range or malformed (a number outside its bounds, a date not written YYYY-MM-DD, a city or category that is not listed), a rule between parameters is broken (lat without lng, age_min above age_max, week with a date range), a parameter is given twice, or the api_key parameter and the Authorization header carry different keys.',
    fix: 'Read errors[]: each entry names a parameter and says what it accepts. The reference lists every parameter’s constraints and the rules between them.',
    detail: 'age_max must not be less than age_min.',
    errors: [{ param: 'age_max', message: 'must not be less than age_min' }],
  },
  unknown_parameter: {
    when: 'The query names a parameter the route does not take: a misspelling (cities for city), or a filter sent to a route without filters.',
    fix: 'Remove or rename the parameters errors[] names; each route’s parameters are in the reference.',
    detail: '/v1/events does not take cities; see /v1/openapi.json for its parameters.',
    errors: [{ param: 'cities', message: 'is not a parameter of /v1/events' }],
  },
  missing_api_key: {
    when: 'A route that needs a key was called without one. The answer carries WWW-Authenticate: Bearer.',
    fix: 'Send Authorization: Bearer <key>, or the api_key parameter.',
    detail: 'This route needs an API key: send "Authorization: Bearer <key>" or the api_key parameter.',
  },
  invalid_api_key: {
    when: 'The key is not one we issued, is cut short or malformed, or has been revoked.',
    fix: 'Check that the whole key was copied (bsc_live_ and 40 more characters), with no spaces or quotes around it. A revoked key never works again: use another one.',
    detail: 'The API key is not valid.',
  },
  category_not_in_plan: {
    when: 'The category filter names a category your plan excludes (the Community plan has no festivals or seasonal events).',
    fix: 'Remove that category from the filter, or move to a plan that includes it; the plans are listed in the docs.',
    detail: 'The community plan does not include "festivals" events; remove it from category, or use a plan that includes it.',
  },
  not_found: {
    when: 'No route has this path, or /v1/events/{id} names an event that is not in the current data: the id is wrong, the event has been removed, or it is in a category your plan excludes.',
    fix: 'Check the path against the reference. For an event, search again: the detail says when a listed event was removed.',
    detail: 'There is no event bsc_evt_0123456789abcdef0123 in the current data for your plan; search /v1/events for current events.',
  },
  cursor_expired: {
    when: 'A /v1/changes cursor (or since) is older than the deletions the server keeps: events removed since then may no longer be listed, so following it could leave removed events in your copy. Deletions are kept at least 30 days.',
    fix: 'Sync again from the start: request /v1/changes without cursor, replace your copy with what it returns, and keep its next_cursor. Poll at least every few weeks to stay within the window.',
    detail:
      'This cursor starts at 2026-09-01T00:00:00.000Z, before 2026-10-02T00:00:00.000Z, since when every removal is kept; request /v1/changes without cursor to sync again from the start.',
  },
  method_not_allowed: {
    when: 'A method other than GET or HEAD was used. The answer carries Allow: GET, HEAD.',
    fix: 'Use GET (or HEAD for the headers alone). The API is read-only.',
    detail: '/v1/events answers GET and HEAD only; POST is not allowed.',
  },
  request_too_large: {
    when: `The URL is longer than ${MAX_TARGET_BYTES.toLocaleString('en-US')} bytes (414), or the request headers are larger than ${MAX_HEADER_BYTES.toLocaleString('en-US')} bytes (431).`,
    fix: 'Shorten the query (fewer cities or categories a request, a shorter q) or send fewer headers.',
    detail: `The URL is 9000 bytes; the limit is ${MAX_TARGET_BYTES}. Shorten the query.`,
  },
  quota_exhausted: {
    when: 'Your organization has received every event record its plan allows this month. Retry-After says how long until the quota resets (the first instant of next month, Pacific time); the X-Quota-* headers say where you stand.',
    fix: 'Wait for the reset, or move to a plan with more records. To spend fewer records, poll with If-None-Match (a 304 costs nothing) and ask for smaller pages.',
    detail:
      "The community plan's 25 records for this month are used up; the quota resets at 2026-01-01T00:00:00-08:00. Check /v1/usage, or move to a plan with more records.",
  },
  quota_held: {
    when: 'Your organization’s month is not used up, but every record left is set aside for its other requests still being answered (each holds up to its limit until its answer is counted). A request first waits for those answers, up to the query timeout; this comes only if they have not settled by then. The X-Quota-* headers say what is not used yet.',
    fix: 'Retry after the seconds Retry-After gives (a few). Send fewer requests at once near the end of your quota, or ask for smaller pages (limit).',
    detail:
      "The 3 records left of this month's 25 are all set aside for other requests of your organization still being answered; retry in 2 s, or send fewer requests at once.",
  },
  rate_limited: {
    when: 'Too many requests a minute: on one key, beyond its plan’s rate, or on the keyless demo, from one address.',
    fix: 'Wait the seconds Retry-After gives, then space your requests out. Reuse answers for their Cache-Control lifetime instead of asking again.',
    detail: 'This key may make 60 requests a minute on the community plan; retry in 12 s.',
  },
  too_many_invalid_keys: {
    when: 'Your address presented too many keys that failed (unknown, revoked or malformed) in the last minute. Until it cools down, a request from it is answered only if its key is valid; other keys are not checked.',
    fix: 'Fix the key your client sends (see invalid_api_key), then retry after the seconds Retry-After gives. A valid key keeps working meanwhile.',
    detail: 'This address presented 20 keys that failed in the last minute; check the key you send, then retry in 3 s.',
  },
  internal: {
    when: 'The server failed to answer. It has been logged; the answer says nothing about the cause.',
    fix: 'Retry later, waiting longer each time. If it keeps happening for the same request, tell us which request.',
    detail: 'The server failed to answer this request; it has been logged. Retry later.',
  },
  unavailable: {
    when: 'The server cannot answer right now: it is starting and has no event data loaded yet, it is too busy, or usage cannot be recorded for a moment.',
    fix: 'Retry after the seconds Retry-After gives.',
    detail: 'No event snapshot is loaded yet; retry in a few seconds.',
  },
});

function errorSection(site: Site, code: ErrorCode, help: ErrorHelp): Html {
  const body = problem(site.webBaseUrl, code, help.detail, help.errors);
  return html`<section id="${code}" class="error-code">
<h2><code>${code}</code>: ${ERRORS[code].title}</h2>
<dl class="facts">
<div><dt>Status</dt><dd>${statusesOf(code).join(' or ')}</dd></div>
<div><dt>When it happens</dt><dd>${help.when}</dd></div>
<div><dt>What to do</dt><dd>${help.fix}</dd></div>
</dl>
${codeBlock(JSON.stringify(body, null, 2), `Example: a ${body.status} ${code} body`)}
</section>`;
}

/** /docs/errors, inside the docs' navigation (the pages listed from `openapi`, the document the other pages read). */
export function errorsPage(site: Site, openapi: OpenApiDoc): string {
  const help = errorHelp();
  const codes = Object.keys(ERRORS) as ErrorCode[];
  const main = html`<h1>API error codes</h1>
<p class="lede">Every error of the ${site.name} API is <code>${PROBLEM_TYPE}</code> (RFC 9457): <code>type</code> (a link to its section here), <code>title</code>, <code>status</code>, <code>code</code> (stable: program against it), <code>detail</code> (one sentence saying what to change) and, for bad parameters, <code>errors[]</code> with a <code>param</code> and <code>message</code> each. Back to <a href="/docs">the developer docs</a>.</p>
<nav class="toc" aria-labelledby="codes-heading">
<h2 id="codes-heading">Codes</h2>
<ul>${codes.map((c) => html`<li><a href="#${c}"><code>${c}</code>: ${ERRORS[c].title}</a> (${statusesOf(c).join(' or ')})</li>`)}</ul>
</nav>
${codes.map((c) => errorSection(site, c, help[c]))}`;
  const ctx = docsContext(site, { openapi, example: null, plans: [] });
  return renderPage(
    site,
    {
      title: `API error codes – ${site.name}`,
      description: `Every error code of the ${site.name} API: its HTTP status, when it happens and what to do about it.`,
      canonicalPath: '/docs/errors',
      og: { type: 'website' },
      script: true,
    },
    docsFrame(ctx, '/docs/errors', main),
  );
}
