// Request → route → validated parameters → handler → reply. The one place that turns anything a
// handler raises into a problem: ApiError as itself, anything else as a logged 500 whose body
// says nothing about the cause.
import { LRUCache } from 'lru-cache';
import * as v from 'valibot';
import { ApiError, type ParamError } from './errors.ts';
import type { Reply, Request } from './http.ts';
import type { Logger } from './log.ts';
import { API_KEY_PARAM, authenticate, FailedKeyChecks, type Account } from './auth.ts';
import { quotaHeaders } from './quota.ts';
import { issuesToErrors, parseQuery } from './querystring.ts';
import { errorReply, problemReply } from './reply.ts';
import { paramEntries, type AnyRoute, type RouteRequest, type Services } from './route.ts';
import type { QuotaState } from '../ledger/accounts.ts';
import { MAX_HEADER_BYTES, MAX_TARGET_BYTES } from './terms.ts';

const ALLOW = 'GET, HEAD';
/** Distinct valid query strings whose parse is remembered (parsed values are never mutated). */
const PARSE_MEMO_ENTRIES = 10_000;

function sentence(errors: readonly ParamError[]): string {
  const [first] = errors;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''}, listed in errors)` : '';
  return `${first ? `${first.param} ${first.message}` : 'The query is invalid'}${more}.`;
}

/**
 * The API's paths: any version (/v2/… is the API's 404, in problem+json, not a web page), the
 * website host's /api twin, and the probes. Everything else on the listener is the website's.
 */
const API_PATH = /^\/(?:v\d+(?:\/|$)|api(?:\/|$)|healthz$|readyz$)/;
export const isApiPath = (path: string): boolean => API_PATH.test(path);

/** What a valid query string parses to: the route's parameters, and the key it carries (live routes). */
interface Parsed {
  readonly params: object;
  readonly apiKey: string | undefined;
}

/** A matched request on its way through validation. */
interface Matched {
  readonly req: Request;
  readonly route: AnyRoute;
  readonly pathParam: string;
  readonly prefix: RouteRequest['prefix'];
  readonly remembered: Parsed | undefined;
}

const withQuotaHeaders = (r: Reply, q: QuotaState, nowMs: number): Reply => ({ ...r, headers: [...r.headers, ...quotaHeaders(q, nowMs)] });

export function createHandler(
  routes: readonly AnyRoute[],
  svc: Services,
  log: Logger,
  website: (req: Request) => Reply | Promise<Reply>,
): (req: Request) => Reply | Promise<Reply> {
  const table = new Map<string, AnyRoute>();
  /** Templated routes by the path before their parameter, e.g. '/v1/events/' → /v1/events/{id}. */
  const templated = new Map<string, AnyRoute>();
  for (const r of routes) {
    if (r.pathParam) templated.set(r.path.slice(0, r.path.lastIndexOf('/') + 1), r);
    else table.set(r.path, r);
  }
  const web = svc.config.webBaseUrl;

  /** The route of a path, and the value of its path parameter (valid or not: the route decides). */
  const match = (path: string): { route: AnyRoute; pathParam: string } | null => {
    const exact = table.get(path);
    if (exact) return { route: exact, pathParam: '' };
    const slash = path.lastIndexOf('/');
    const route = templated.get(path.slice(0, slash + 1));
    return route && slash < path.length - 1 ? { route, pathParam: path.slice(slash + 1) } : null;
  };

  const fail = (err: unknown, route: string): Reply => {
    if (err instanceof ApiError) return { ...errorReply(web, err), route };
    log.error({ route, err: (err as Error).message, stack: (err as Error).stack }, 'unhandled error');
    return { ...problemReply(web, 'internal', 'The server failed to answer this request; it has been logged. Retry later.'), route };
  };

  /**
   * A valid query string's parameters, and on live routes the key it carries (not a parameter:
   * the apiKey scheme); per route, by the query string as uWS handed it over (hashed once per
   * request and shared with the later lookups of routes/search.ts, rather than joined with the path).
   */
  const parsedMemo = new Map<AnyRoute, LRUCache<string, Parsed>>(routes.map((r) => [r, new LRUCache<string, Parsed>({ max: PARSE_MEMO_ENTRIES })]));
  /** Failed key checks per client address (429 too_many_invalid_keys past the limit). */
  const failedKeys = new FailedKeyChecks();

  /** A refusal or a 304 on a live route still tells the caller where its quota stands. */
  const withQuota = (r: Reply, a: Account): Reply | Promise<Reply> => {
    if ((r.status < 400 && r.status !== 304) || r.headers.some(([k]) => k === 'X-Quota-Limit')) return r;
    const nowMs = svc.config.now().getTime();
    const known = svc.meter.lastQuota(a.orgId);
    if (known && nowMs >= known.periodStartMs && nowMs < known.resetMs) return withQuotaHeaders(r, known, nowMs);
    return svc.meter.peek(a.keyId, nowMs).then((p) => (p.ok ? withQuotaHeaders(r, p.quota, nowMs) : r));
  };
  const run = (route: AnyRoute, rr: RouteRequest, params: unknown): Reply | Promise<Reply> => {
    try {
      const out = route.handle(rr, params, svc);
      return out instanceof Promise ? out.catch((err: unknown) => fail(err, route.path)) : out;
    } catch (err) {
      return fail(err, route.path);
    }
  };

  // Functions made once and handed the request, not closures made per request: with http.ts's
  // Exchange, re-measured on tsc's output (issue 27), per-request closures were no faster.
  /** The route's path parameter and query parameters, then its handler. */
  const validated = (c: Matched, account: Account | null): Reply | Promise<Reply> => {
    const { req, route, pathParam } = c;
    if (route.pathParam) {
      const checked = v.safeParse(route.pathParam.schema, pathParam);
      if (!checked.success) {
        return {
          ...problemReply(web, 'not_found', `There is no ${req.path.slice(0, 200)}: ${route.pathParam.name} ${checked.issues[0].message}.`),
          route: route.path,
        };
      }
    }
    const rr: RouteRequest = { http: req, prefix: c.prefix, account, pathParam };
    if (c.remembered !== undefined) return run(route, rr, c.remembered.params);
    const { values, errors } = parseQuery(req.rawQuery);
    const known = paramEntries(route);
    const keyParam = route.access === 'live' ? API_KEY_PARAM : null;
    const unknown = Object.keys(values).filter((k) => !Object.hasOwn(known, k) && k !== keyParam);
    if (unknown.length) {
      const errs: ParamError[] = unknown.map((param) => ({ param: param.slice(0, 100), message: `is not a parameter of ${route.path}` }));
      return {
        ...problemReply(
          web,
          'unknown_parameter',
          `${route.path} does not take ${unknown.map((u) => u.slice(0, 100)).join(', ')}; see /v1/openapi.json for its parameters.`,
          errs,
        ),
        route: route.path,
      };
    }
    if (errors.length) return { ...problemReply(web, 'invalid_parameter', sentence(errors), errors), route: route.path };
    const parsed = v.safeParse(route.params, values);
    if (!parsed.success) {
      const errs = issuesToErrors(parsed.issues);
      return { ...problemReply(web, 'invalid_parameter', sentence(errs), errs), route: route.path };
    }
    parsedMemo.get(route)?.set(req.rawQuery, { params: parsed.output, apiKey: keyParam === null ? undefined : values[keyParam] });
    return run(route, rr, parsed.output);
  };
  /** A live route's answer once the caller is known, with its quota headers. */
  const proceed = (c: Matched, a: Account): Reply | Promise<Reply> => {
    const out = validated(c, a);
    return out instanceof Promise ? out.then((r) => withQuota(r, a)) : withQuota(out, a);
  };

  return (req) => {
    if (req.targetLength > MAX_TARGET_BYTES) {
      return {
        ...problemReply(web, 'request_too_large', `The URL is ${req.targetLength} bytes; the limit is ${MAX_TARGET_BYTES}. Shorten the query.`),
        route: 'unmatched',
      };
    }
    if (req.headerBytes > MAX_HEADER_BYTES) {
      return {
        ...problemReply(
          web,
          'request_too_large',
          `The request headers are ${req.headerBytes} bytes; the limit is ${MAX_HEADER_BYTES}. Send fewer or shorter headers.`,
          undefined,
          [],
          431,
        ),
        route: 'unmatched',
      };
    }
    if (!isApiPath(req.path)) return website(req);
    const prefix = req.path.startsWith('/api/') ? '/api' : '';
    const matched = match(prefix ? req.path.slice(4) : req.path);
    if (!matched) {
      return { ...problemReply(web, 'not_found', `There is no ${req.path.slice(0, 200)}; the routes are listed at /v1/openapi.json.`), route: 'unmatched' };
    }
    const { route, pathParam } = matched;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return {
        ...problemReply(web, 'method_not_allowed', `${route.path} answers GET and HEAD only; ${req.method.slice(0, 20)} is not allowed.`, undefined, [
          ['Allow', ALLOW],
        ]),
        route: route.path,
      };
    }
    // Pollers repeat the exact same query string: its parse (a pure function of route and string)
    // is remembered, so a cached answer costs no validation work.
    const remembered = parsedMemo.get(route)?.get(req.rawQuery);
    const call: Matched = { req, route, pathParam, prefix, remembered };
    if (route.access !== 'live') return validated(call, null);

    // Live routes: who is calling comes first (401 before any 400), and every answer after that
    // carries the caller's quota headers.
    const apiKey = remembered ? remembered.apiKey : parseQuery(req.rawQuery).values[API_KEY_PARAM];
    let account: Account | Promise<Account>;
    try {
      account = authenticate(svc.meter, req, apiKey, failedKeys);
    } catch (err) {
      return fail(err, route.path);
    }
    return account instanceof Promise
      ? account.then(
          (a) => proceed(call, a),
          (err: unknown) => fail(err, route.path),
        )
      : proceed(call, account);
  };
}
