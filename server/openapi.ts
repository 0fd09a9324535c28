// The OpenAPI 3.1 document, generated from the route table: each route's valibot parameter schema
// (converted with @valibot/to-json-schema: the value each parameter decodes to, with every check on
// it), the rules between its parameters (server/params.ts RULES), its response schemas
// (server/schemas.ts) and the error table. Nothing here is written twice.
import { toJsonSchema, type ConversionConfig } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { API_KEY_PARAM } from './auth.ts';
import type { Config } from '../core/config.ts';
import { ERRORS, statusesOf, type ErrorCode } from './errors.ts';
import { VALUES_FROM, type ParamRule, type Stated } from './params.ts';
import { RESPONSE_SCHEMAS } from './schemas.ts';
import { paramEntries, paramRules, type AnyRoute, type PathParam } from './route.ts';

/** Codes any route may answer with: routing, methods, request size, and our own failures. */
const EVERY_ROUTE: readonly ErrorCode[] = ['not_found', 'method_not_allowed', 'request_too_large', 'internal'];

/** Codes every keyed route may answer with. */
const LIVE_ROUTE: readonly ErrorCode[] = ['missing_api_key', 'invalid_api_key', 'too_many_invalid_keys', 'invalid_parameter'];

interface Header {
  readonly description: string;
  readonly required?: boolean;
  readonly schema: { readonly type: string };
}

/** The headers of every answer on a keyed route (see server/quota.ts). */
const QUOTA_HEADERS: Record<string, Header> = {
  'X-Quota-Limit': { description: 'Event records a month on your plan, or "unlimited".', required: true, schema: { type: 'string' } },
  'X-Quota-Remaining': {
    description: 'Records left this month (after this response; not yet charged, as /v1/usage says), or "unlimited".',
    required: true,
    schema: { type: 'string' },
  },
  'X-Quota-Reset': {
    description: 'Unix time (seconds) when the monthly quota resets: the first instant of next month, Pacific time.',
    required: true,
    schema: { type: 'integer' },
  },
  'X-Quota-Truncated': {
    description: '"true" when the page was cut short because the quota ran out (the JSON body says truncated: true).',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': { description: 'IETF draft: "<plan>";q=<records a month>;w=<seconds in the month>. Capped plans only.', schema: { type: 'string' } },
  RateLimit: { description: 'IETF draft: "<plan>";r=<records remaining>;t=<seconds to reset>. Capped plans only.', schema: { type: 'string' } },
};

/** The headers of every search answer (200 and 304): validators, caching, paging. */
const SEARCH_HEADERS: Record<string, Header> = {
  ETag: {
    description: 'Strong validator of the body; each content-coding has its own ("…", "…-gzip", "…-br"). Send it back in If-None-Match.',
    required: true,
    schema: { type: 'string' },
  },
  'Last-Modified': { description: 'When the event snapshot answering the request was built.', required: true, schema: { type: 'string' } },
  'Cache-Control': { description: 'private, max-age=60', required: true, schema: { type: 'string' } },
  Vary: { description: 'Accept-Encoding', required: true, schema: { type: 'string' } },
  'X-Total-Count': { description: 'Events matching the filters, across all pages.', required: true, schema: { type: 'integer' } },
  Link: { description: 'rel="next": the next page, when there is one; on CSV also rel="attribution": the website.', schema: { type: 'string' } },
  'X-Next-Cursor': {
    description:
      'On routes that take cursor, in start order: the cursor of the next page, when there is one (the JSON body says it as next_cursor). ' +
      'rel="next" pages by offset while the request does, and by cursor on a page asked by cursor or where the next offset would pass 100000.',
    schema: { type: 'string' },
  },
  'Content-Encoding': { description: 'br or gzip when Accept-Encoding allows and the body is over 1 KiB.', schema: { type: 'string' } },
};

/** The headers of the reference documents (categories, cities, this document), 200 and 304. */
const REFERENCE_HEADERS: Record<string, Header> = {
  ETag: SEARCH_HEADERS.ETag as Header,
  'Cache-Control': { description: 'public, max-age=300', required: true, schema: { type: 'string' } },
  Vary: SEARCH_HEADERS.Vary as Header,
  'Content-Encoding': SEARCH_HEADERS['Content-Encoding'] as Header,
};

/** The keyless demo's per-address rate limit, on each of its answers. */
const DEMO_HEADERS: Record<string, Header> = {
  'RateLimit-Limit': { description: 'Demo calls allowed per minute from one address.', required: true, schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Demo calls left in the current minute.', required: true, schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the minute ends.', required: true, schema: { type: 'integer' } },
};

const TAGS = [
  {
    name: 'events',
    description: 'Searches of the event snapshot: JSON, CSV, RSS, JSON Feed and iCalendar with an API key, one event by id, and the keyless demo.',
  },
  { name: 'account', description: "Your organization's plan and this month's usage." },
  { name: 'reference', description: 'The values the filters accept, and this document.' },
  { name: 'operations', description: 'Liveness and readiness probes.' },
];

/**
 * Parameters as the document states them: the value each one decodes to (typeMode 'output', from
 * the last schema of its pipe on), with every check on that value. A check with no JSON Schema form
 * (and none stated beside it, see Stated in params.ts) stops the build, so no constraint of the
 * server goes undocumented. Transforms are no constraints: decoding, and the internal forms.
 */
const PARAM_CONVERSION: ConversionConfig = {
  target: 'draft-2020-12',
  typeMode: 'output',
  errorMode: 'throw',
  ignoreActions: ['transform', 'raw_transform'],
  overrideAction: ({ valibotAction, jsonSchema }) =>
    'jsonSchema' in valibotAction ? { ...jsonSchema, ...(valibotAction as unknown as Stated).jsonSchema } : undefined,
};

function queryParameter(name: string, schema: v.GenericSchema, notes: readonly string[]): object {
  const json = toJsonSchema(schema, PARAM_CONVERSION) as Record<string, unknown>;
  const description = json.description;
  delete json.$schema;
  delete json.description;
  const text = [typeof description === 'string' ? description : '', ...notes].filter((s) => s !== '').join(' ');
  return {
    name,
    in: 'query',
    required: false,
    ...(text ? { description: text } : {}),
    // Lists are comma-separated: OpenAPI's form style without explode.
    ...(json.type === 'array' ? { style: 'form', explode: false } : {}),
    schema: json,
  };
}

function pathParameter(p: PathParam): object {
  const json = toJsonSchema(p.schema, PARAM_CONVERSION) as Record<string, unknown>;
  const description = typeof json.description === 'string' ? json.description : p.description;
  delete json.$schema;
  delete json.description;
  return { name: p.name, in: 'path', required: true, description, schema: json };
}

/** Each parameter's sentences from the rules that name it. */
function ruleNotes(rules: readonly ParamRule[]): Map<string, string[]> {
  const notes = new Map<string, string[]>();
  for (const r of rules) for (const [param, note] of Object.entries(r.notes)) if (note) notes.set(param, [...(notes.get(param) ?? []), note]);
  return notes;
}

/** A response schema, referring to the other components where it holds one (an EventList's events are EventRecords). */
export const componentSchema = (name: keyof typeof RESPONSE_SCHEMAS): object => {
  const others = Object.fromEntries(Object.entries(RESPONSE_SCHEMAS).filter(([k]) => k !== name));
  const json = toJsonSchema(RESPONSE_SCHEMAS[name], {
    target: 'draft-2020-12',
    errorMode: 'ignore',
    definitions: others,
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  }) as Record<string, unknown>;
  delete json.$schema;
  delete json.$defs;
  return json;
};

/** A HEAD answer: GET's, without a body. */
const headersOnly = (responses: Record<string, object>): Record<string, object> =>
  Object.fromEntries(Object.entries(responses).map(([status, r]) => [status, Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'content'))]));

/** A route's GET operationId: its path as a name (/v1/events/{id} → v1_events_id); its HEAD's adds _head. */
const operationId = (path: string): string =>
  path
    .replace(/^\//, '')
    .replace(/[{}]/g, '')
    .replace(/[^a-z0-9]+/gi, '_');

export function openApiDocument(routes: readonly AnyRoute[], config: Config, version: string): object {
  const paths: Record<string, object> = {};
  for (const r of routes) {
    const rules = paramRules(r);
    const notes = ruleNotes(rules);
    const parameters = Object.entries(paramEntries(r)).map(([name, schema]) => queryParameter(name, schema, notes.get(name) ?? []));
    if (r.pathParam) parameters.unshift(pathParameter(r.pathParam));
    const codes = [...new Set([...r.errors, ...(r.access === 'live' ? LIVE_ROUTE : []), ...EVERY_ROUTE])];
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of codes) for (const st of statusesOf(c)) byStatus.set(st, [...(byStatus.get(st) ?? []), c]);
    const search = r.tag === 'events';
    // One event by id: the validators and caching of a search, without its paging figures.
    const searchHeaders = r.pathParam
      ? Object.fromEntries(Object.entries(SEARCH_HEADERS).filter(([k]) => k !== 'X-Total-Count' && k !== 'Link'))
      : SEARCH_HEADERS;
    // Searches and the reference documents answer If-None-Match and Accept-Encoding.
    const conditional = search || r.tag === 'reference';
    const headers = {
      ...(search ? searchHeaders : r.tag === 'reference' ? REFERENCE_HEADERS : {}),
      ...(r.access === 'live' ? QUOTA_HEADERS : {}),
      ...(r.access === 'demo' ? DEMO_HEADERS : {}),
    };
    // By operationId: an operationRef to the route's own GET is a pointer into the operation holding it, which resolvers refuse as circular.
    const links = Object.entries(r.links ?? {}).map(([name, l]) => [
      name,
      { operationId: operationId(l.path), parameters: l.parameters, description: l.description },
    ]);
    const responses: Record<string, object> = {
      200: {
        description: r.summary,
        ...(Object.keys(headers).length ? { headers } : {}),
        content: Object.fromEntries(r.produces.map((p) => [p.type, { schema: { $ref: `#/components/schemas/${p.schema}` } }])),
        ...(links.length ? { links: Object.fromEntries(links) } : {}),
      },
      ...(conditional
        ? { 304: { description: `Not Modified: If-None-Match names the current body. No body${search ? '; nothing is charged' : ''}.`, headers } }
        : {}),
    };
    for (const [status, cs] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: cs.map((c) => `\`${c}\`: ${ERRORS[c].title}`).join('; '),
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
    const op = {
      operationId: operationId(r.path),
      summary: r.summary,
      description: r.description,
      tags: [r.tag],
      parameters: conditional
        ? [
            ...parameters,
            {
              name: 'If-None-Match',
              in: 'header',
              required: false,
              description: `ETags you hold: a match answers 304 without a body${search ? ', and charges nothing' : ''}.`,
              schema: { type: 'string' },
            },
            {
              name: 'Accept-Encoding',
              in: 'header',
              required: false,
              description: 'br and gzip are honoured for bodies over 1 KiB.',
              schema: { type: 'string' },
            },
          ]
        : parameters,
      // The rules between parameters that no parameter's schema can state, in IDL (see ParamRule).
      ...(rules.length ? { 'x-dependencies': rules.map((x) => x.idl) } : {}),
      responses,
      ...(r.access === 'live' ? { security: [{ bearer: [] }, { apiKey: [] }] } : { security: [] }),
    };
    paths[r.path] = {
      get: op,
      head: { ...op, operationId: `${op.operationId}_head`, summary: `${r.summary} (headers only)`, responses: headersOnly(responses) },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Family Events API',
      version,
      description:
        'Family-friendly events in the San Francisco Bay Area. Every operation is a GET (HEAD gives the headers only). ' +
        'Errors are RFC 9457 problem+json with a stable `code`:\n\n' +
        Object.entries(ERRORS)
          .map(([code, e]) => `- \`${code}\` (${statusesOf(code as ErrorCode).join(' or ')}): ${e.title}`)
          .join('\n') +
        "\n\nRules between parameters that no single parameter schema can state are in each parameter's description and, " +
        "for generators, in the operation's `x-dependencies` (IDL, the Inter-parameter Dependency Language). " +
        `A parameter whose schema has \`${VALUES_FROM}\` takes the values that route lists; its \`enum\` is those of the snapshot this document was served from.`,
      license: { name: 'Family Events API Terms', url: `${config.webBaseUrl}/terms` },
    },
    servers: [
      { url: config.publicBaseUrl, description: 'API host' },
      { url: `${config.webBaseUrl}/api`, description: 'Website host (the same routes under /api)' },
    ],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer bsc_live_…' },
        apiKey: {
          type: 'apiKey',
          in: 'query',
          name: API_KEY_PARAM,
          description: 'The same key as a query parameter, for clients that cannot set headers. If both are sent they must be equal.',
        },
      },
      schemas: Object.fromEntries(Object.keys(RESPONSE_SCHEMAS).map((k) => [k, componentSchema(k as keyof typeof RESPONSE_SCHEMAS)])),
    },
  };
}

/**
 * The document as served from one snapshot: every schema marked with where its values are listed
 * (VALUES_FROM) gets the listed values as its `enum`, e.g. the city names of /v1/cities.
 */
export function withListedValues(doc: unknown, lists: Readonly<Record<string, readonly string[]>>): unknown {
  if (Array.isArray(doc)) return doc.map((x: unknown) => withListedValues(x, lists));
  if (doc === null || typeof doc !== 'object') return doc;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(doc)) out[k] = withListedValues(x, lists);
  const from = out[VALUES_FROM];
  const values = typeof from === 'string' ? lists[from] : undefined;
  if (values) out.enum = [...values];
  return out;
}
