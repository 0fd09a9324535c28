// How a search is answered in each output format: its content type, page limit and headers, the
// encoding a body goes out in, and the 200 or 304 that carries it. The search flow itself is in
// search.ts; the routes, with their OpenAPI prose, in events.ts.
import { LRUCache } from 'lru-cache';
import { encodingFor, type Encoding } from '../compress.ts';
import { etagValue, httpDate, noneMatchHits } from '../conditional.ts';
import type { Reply } from '../http.ts';
import { JSON_TYPE } from '../reply.ts';
import type { Answer } from '../cache.ts';
import type { LoadedSnapshot as Snapshot } from '../snapshots.ts';
import { ICS_CONTENT_TYPE } from '../../query/ical.ts';
import { pageUrl } from '../../query/links.ts';
import type { OutputFormat, PageHead } from '../../query/protocol.ts';
import type { RouteRequest, Services } from '../route.ts';
import type { Call } from './search.ts';

export const LIVE_MAX_LIMIT = 100;
export const CSV_MAX_LIMIT = 10_000;
export const DEMO_MAX_LIMIT = 10;

/** Live routes: private caches may keep an answer a minute (polls inside it cost nothing). */
export const LIVE_CACHE_CONTROL = 'private, max-age=60';

export type Headers = (readonly [string, string])[];

/** How each output format is answered. */
export interface Format {
  readonly format: OutputFormat;
  readonly contentType: string;
  readonly maxLimit: number;
  /** CSV: the body streams from the worker; the others come back whole. */
  readonly streamed: boolean;
  /** Headers only this format carries. */
  readonly headers: (svc: Services) => Headers;
}

export const FORMATS: Readonly<Record<OutputFormat, Format>> = {
  json: { format: 'json', contentType: JSON_TYPE, maxLimit: LIVE_MAX_LIMIT, streamed: false, headers: () => [] },
  csv: {
    format: 'csv',
    contentType: 'text/csv; charset=utf-8',
    maxLimit: CSV_MAX_LIMIT,
    streamed: true,
    headers: () => [['Content-Disposition', 'attachment; filename="events.csv"']],
  },
  rss: { format: 'rss', contentType: 'application/rss+xml; charset=utf-8', maxLimit: LIVE_MAX_LIMIT, streamed: false, headers: () => [] },
  jsonfeed: { format: 'jsonfeed', contentType: 'application/feed+json; charset=utf-8', maxLimit: LIVE_MAX_LIMIT, streamed: false, headers: () => [] },
  ics: { format: 'ics', contentType: ICS_CONTENT_TYPE, maxLimit: LIVE_MAX_LIMIT, streamed: false, headers: () => [] },
};

/** The API's base URL as the request reached it: the API host, or the website host's /api twin. */
export const baseUrl = (req: RouteRequest, svc: Services): string => (req.prefix === '/api' ? `${svc.config.webBaseUrl}/api` : svc.config.publicBaseUrl);

/**
 * Link headers by query string (the string uWS handed over, hashed once per request: see
 * search.ts's canonicalMemo), then by prefix, route and next offset: pollers ask the same page
 * again and again.
 */
const links = new LRUCache<string, Map<string, string>>({ max: 10_000 });

/** The parameters that say where a page starts: a next link replaces them with the next page's. */
export const PAGING_PARAMS = ['offset', 'cursor', 'since'];

/** Where the next page starts: a search's offset, or a change feed's cursor. */
type NextPage = readonly ['offset' | 'cursor', string];

/**
 * The Link header: rel="next" (the client's own parameters, the key too when it sent one, with the
 * page's position moved on, in the order every link of ours has: query/links.ts) and, on CSV,
 * rel="attribution" (the website, as the Community plan requires).
 */
function linkHeader(req: RouteRequest, path: string, fmt: Format, svc: Services, next: NextPage | null): string | null {
  if (next === null && fmt.format !== 'csv') return null;
  const rawQuery = req.http.rawQuery;
  let byRoute = links.get(rawQuery);
  if (byRoute === undefined) links.set(rawQuery, (byRoute = new Map()));
  const memo = `${req.prefix}${path}#${next?.join('=')}`;
  let link = byRoute.get(memo);
  if (link === undefined) {
    const parts: string[] = [];
    if (fmt.format === 'csv') parts.push(`<${svc.config.webBaseUrl}>; rel="attribution"`);
    if (next !== null) {
      const params = [...new URLSearchParams(rawQuery)].filter(([k]) => !PAGING_PARAMS.includes(k));
      parts.push(`<${pageUrl(`${baseUrl(req, svc)}${path}`, params, [next])}>; rel="next"`);
    }
    link = parts.join(', ');
    // A query string asked of every route and offset stays a few dozen entries.
    if (byRoute.size >= 64) byRoute.clear();
    byRoute.set(memo, link);
  }
  return link;
}

/** The headers a search's 200 and 304 share: validators, caching, paging, quota. */
export function searchHeaders(
  req: RouteRequest,
  path: string,
  fmt: Format,
  svc: Services,
  snap: Snapshot,
  head: PageHead,
  enc: Encoding,
  extra: Headers,
): Headers {
  const headers: Headers = [
    ['ETag', etagValue(head.etag, enc)],
    ['Last-Modified', httpDate(snap.manifest.built_at)],
    ['Cache-Control', LIVE_CACHE_CONTROL],
    ['Vary', 'Accept-Encoding'],
    ['X-Total-Count', String(head.total)],
    ...fmt.headers(svc),
    ...extra,
  ];
  // By offset while a request pages by offset; by cursor on a page asked by cursor, past the offset
  // cap, and on the change feed.
  const next: NextPage | null = head.nextOffset !== null ? ['offset', String(head.nextOffset)] : head.nextCursor ? ['cursor', head.nextCursor] : null;
  const link = linkHeader(req, path, fmt, svc, next);
  if (link !== null) headers.push(['Link', link]);
  // The next page's cursor in every format that takes one, so a CSV export can switch to cursors on any page.
  if (head.nextCursor) headers.push(['X-Next-Cursor', head.nextCursor]);
  if (head.truncated) headers.push(['X-Quota-Truncated', 'true']);
  return headers;
}

/** A search's 200: its type and coding before the headers it shares with a 304. */
export function okReply(c: Call, enc: Encoding, headers: Headers, body: Reply['body'], cache: 'hit' | 'miss'): Reply {
  const head: Headers = [['Content-Type', c.fmt.contentType]];
  if (enc !== 'identity') head.push(['Content-Encoding', enc]);
  return { status: 200, headers: [...head, ...headers], body, route: c.path, cache };
}

/** A whole answer (cached or just computed) as a 200, or a 304 when the client holds it already. */
export function answerReply(c: Call, a: Answer, extra: Headers, cache: 'hit' | 'miss'): Reply | Promise<Reply> {
  const enc = encodingFor(c.enc, a.body.length);
  const headers = searchHeaders(c.req, c.path, c.fmt, c.svc, c.snap, a, enc, extra);
  if (noneMatchHits(c.req.http.headers['if-none-match'], a.etag)) return { status: 304, headers, body: '', route: c.path, cache };
  if (enc === 'identity') return okReply(c, enc, headers, a.body, cache);
  const form = c.svc.cache.encoded(c.prepared.key, a, enc);
  return form instanceof Promise ? form.then((b) => okReply(c, enc, headers, b, cache)) : okReply(c, enc, headers, form, cache);
}
