// The OpenAPI 3.1 document, generated from the route table: each route's valibot parameter schema
// (converted with @valibot/to-json-schema, input side: the strings a client sends), its response
// schemas (server/schemas.ts) and the error table. Nothing here is written twice.
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { Config } from './config.ts';
import { ERRORS, statusesOf, type ErrorCode } from './errors.ts';
import { RESPONSE_SCHEMAS } from './schemas.ts';
import { paramEntries, type AnyRoute } from './routes/types.ts';

/** Codes any route may answer with: routing, methods, request size, and our own failures. */
const EVERY_ROUTE: readonly ErrorCode[] = ['not_found', 'method_not_allowed', 'request_too_large', 'internal'];

/** Codes every keyed route may answer with. */
const LIVE_ROUTE: readonly ErrorCode[] = ['missing_api_key', 'invalid_api_key', 'invalid_parameter'];

/** The headers of every answer on a keyed route (see server/quota.ts). */
const QUOTA_HEADERS = {
  'X-Quota-Limit': { description: 'Event records a month on your plan, or "unlimited".', schema: { type: 'string' } },
  'X-Quota-Remaining': { description: 'Records left this month (after this response), or "unlimited".', schema: { type: 'string' } },
  'X-Quota-Reset': { description: 'Unix time (seconds) when the monthly quota resets: the first instant of next month, Pacific time.', schema: { type: 'integer' } },
  'X-Quota-Truncated': { description: '"true" when the page was cut short because the quota ran out (the JSON body says truncated: true).', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF draft: "<plan>";q=<records a month>;w=<seconds in the month>. Capped plans only.', schema: { type: 'string' } },
  RateLimit: { description: 'IETF draft: "<plan>";r=<records remaining>;t=<seconds to reset>. Capped plans only.', schema: { type: 'string' } },
};

/** The headers of every search answer (200 and 304): validators, caching, paging. */
const SEARCH_HEADERS = {
  ETag: { description: 'Strong validator of the body; each content-coding has its own ("…", "…-gzip", "…-br"). Send it back in If-None-Match.', schema: { type: 'string' } },
  'Last-Modified': { description: 'When the event snapshot answering the request was built.', schema: { type: 'string' } },
  'Cache-Control': { description: 'private, max-age=60', schema: { type: 'string' } },
  Vary: { description: 'Accept-Encoding', schema: { type: 'string' } },
  'X-Total-Count': { description: 'Events matching the filters, across all pages.', schema: { type: 'integer' } },
  Link: { description: 'rel="next": the next page, when there is one; on CSV also rel="attribution": the website.', schema: { type: 'string' } },
  'Content-Encoding': { description: 'br or gzip when Accept-Encoding allows and the body is over 1 KiB.', schema: { type: 'string' } },
};

interface Walkable {
  readonly type?: string;
  readonly description?: unknown;
  readonly wrapped?: Walkable;
  readonly pipe?: readonly Walkable[];
}

/**
 * A parameter's v.description, wherever its pipe puts it. The JSON Schema conversion of the input
 * side stops at the first transform, and our descriptions sit after the parsing steps they describe.
 */
function descriptionOf(s: Walkable | undefined): string | undefined {
  if (!s) return undefined;
  if (s.type === 'description' && typeof s.description === 'string') return s.description;
  for (const item of s.pipe ?? []) {
    const d = item === s ? undefined : descriptionOf(item);
    if (d) return d;
  }
  return descriptionOf(s.wrapped);
}

function describe(schema: v.GenericSchema): { description?: string; schema: object } {
  const json = toJsonSchema(schema, { target: 'draft-2020-12', typeMode: 'input', errorMode: 'ignore' }) as Record<string, unknown>;
  delete json.$schema;
  delete json.description;
  const description = descriptionOf(schema as Walkable);
  return description ? { description, schema: json } : { schema: json };
}

const componentSchema = (name: keyof typeof RESPONSE_SCHEMAS): object => {
  const json = toJsonSchema(RESPONSE_SCHEMAS[name], { target: 'draft-2020-12', errorMode: 'ignore' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
};

export function openApiDocument(routes: readonly AnyRoute[], config: Config, version: string): object {
  const paths: Record<string, object> = {};
  for (const r of routes) {
    const parameters = Object.entries(paramEntries(r)).map(([name, schema]) => {
      const d = describe(schema);
      return { name, in: 'query', required: false, ...d };
    });
    const codes = [...new Set([...r.errors, ...(r.access === 'live' ? LIVE_ROUTE : []), ...EVERY_ROUTE])];
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of codes) for (const st of statusesOf(c)) byStatus.set(st, [...(byStatus.get(st) ?? []), c]);
    const search = r.tag === 'events';
    const headers = { ...(search ? SEARCH_HEADERS : {}), ...(r.access === 'live' ? QUOTA_HEADERS : {}) };
    const responses: Record<string, object> = {
      200: {
        description: r.summary,
        ...(Object.keys(headers).length ? { headers } : {}),
        content: Object.fromEntries(r.produces.map((p) => [p.type, { schema: { $ref: `#/components/schemas/${p.schema}` } }])),
      },
      ...(search ? { 304: { description: 'Not Modified: If-None-Match names the current body. No body; nothing is charged.', headers } } : {}),
    };
    for (const [status, cs] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: cs.map((c) => `\`${c}\`: ${ERRORS[c].title}`).join('; '),
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
    const op = {
      operationId: r.path.replace(/^\//, '').replace(/[^a-z0-9]+/gi, '_'),
      summary: r.summary,
      description: r.description,
      tags: [r.tag],
      parameters: search
        ? [
            ...parameters,
            { name: 'If-None-Match', in: 'header', required: false, description: 'ETags you hold: a match answers 304 without a body, and charges nothing.', schema: { type: 'string' } },
            { name: 'Accept-Encoding', in: 'header', required: false, description: 'br and gzip are honoured for bodies over 1 KiB.', schema: { type: 'string' } },
          ]
        : parameters,
      responses,
      ...(r.access === 'live' ? { security: [{ bearer: [] }, { apiKey: [] }] } : { security: [] }),
    };
    paths[r.path] = { get: op, head: { ...op, operationId: `${op.operationId}_head`, summary: `${r.summary} (headers only)` } };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Family Events API',
      version,
      description:
        'Family-friendly events in the San Francisco Bay Area. Every operation is a GET (HEAD gives the headers only). ' +
        'Errors are RFC 9457 problem+json with a stable `code`:\n\n' +
        Object.entries(ERRORS).map(([code, e]) => `- \`${code}\` (${statusesOf(code as ErrorCode).join(' or ')}): ${e.title}`).join('\n'),
    },
    servers: [
      { url: config.publicBaseUrl, description: 'API host' },
      { url: `${config.webBaseUrl}/api`, description: 'Website host (the same routes under /api)' },
    ],
    tags: [{ name: 'events' }, { name: 'account' }, { name: 'reference' }, { name: 'operations' }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer bsc_live_…' },
        apiKey: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
      schemas: Object.fromEntries(Object.keys(RESPONSE_SCHEMAS).map((k) => [k, componentSchema(k as keyof typeof RESPONSE_SCHEMAS)])),
    },
  };
}
