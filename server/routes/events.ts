// /v1/events (JSON search) and /v1/demo/events (the keyless sample: at most 10 a call, rate-limited
// per client address). Both: parameters → canonical query → response cache (single-flight) →
// query worker, which returns the finished body.
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.ts';
import type { Reply } from '../http.ts';
import { searchParams, MAX_OFFSET, type SearchParams } from '../params.ts';
import { DEMO_PLAN, type Plan } from '../plans.ts';
import { canonicalQuery, queryKey } from '../query.ts';
import { jsonReply } from '../reply.ts';
import type { Answer } from '../cache.ts';
import type { SearchQuery } from '../../workers/protocol.ts';
import { defineRoute, type RouteRequest, type Services } from './types.ts';

export const LIVE_MAX_LIMIT = 100;
export const DEMO_MAX_LIMIT = 10;

/** Live routes: private caches may keep an answer a minute (polls inside it cost nothing). */
const LIVE_CACHE_CONTROL = 'private, max-age=60';

export function attribution(webBaseUrl: string): { text: string; url: string } {
  return { text: `Family events data by Family Events API (${new URL(webBaseUrl).host})`, url: webBaseUrl };
}

/** The client's own query string with `offset` moved on and any key left out. */
function nextLink(req: RouteRequest, path: string, svc: Services, next: number): string {
  const base = req.prefix === '/api' ? `${svc.config.webBaseUrl}/api` : svc.config.publicBaseUrl;
  const params = new URLSearchParams(req.http.rawQuery);
  params.delete('api_key');
  params.set('offset', String(next));
  return `<${base}${path}?${params.toString()}>; rel="next"`;
}

function answerReply(req: RouteRequest, path: string, svc: Services, a: Answer, extra: readonly (readonly [string, string])[], cache: 'hit' | 'miss'): Reply {
  const headers: (readonly [string, string])[] = [['Cache-Control', LIVE_CACHE_CONTROL], ...extra];
  if (a.nextOffset !== null) headers.push(['Link', nextLink(req, path, svc, a.nextOffset)]);
  return { ...jsonReply(a.body, headers), route: path, cache };
}

function unavailable(detail: string): ApiError {
  return new ApiError('unavailable', detail, undefined, [['Retry-After', '1']]);
}

interface Prepared {
  readonly query: SearchQuery;
  readonly key: string;
  readonly validUntilMs: number;
}

const canonicalMemo = new LRUCache<string, Prepared>({ max: 10_000 });

/** Answers a search from the cache when it can (synchronously), else from a worker. */
function search(req: RouteRequest, path: string, params: SearchParams, svc: Services, plan: Plan, maxLimit: number, extra: readonly (readonly [string, string])[]): Reply | Promise<Reply> {
  const snap = svc.snapshots.require();
  const now = svc.config.now();
  const nowMs = now.getTime();
  // The canonical query of a query string depends on the snapshot (its cities), the plan and, for
  // week=current|next, the week we are in: remembered under the first two until the week ends.
  const memoKey = `${snap.ref.id}\0${plan.name}\0${path}\0${req.http.rawQuery}`;
  let prepared = canonicalMemo.get(memoKey);
  if (prepared === undefined || nowMs > prepared.validUntilMs) {
    const query: SearchQuery = canonicalQuery(params, {
      cities: snap.cities,
      excludedCategories: plan.excludedCategories,
      planName: plan.name,
      now,
      defaultLimit: Math.min(20, maxLimit),
    });
    // "current" resolves anew when its week ends; "next" when the week before it (today's) ends.
    const w = params.week;
    const range = query.range;
    const relativeWeekEnd = w !== undefined && w.kind !== 'iso' && range !== 'upcoming' ? (w.kind === 'current' ? range.toMs : range.fromMs - 1) : null;
    prepared = {
      query,
      key: `${snap.ref.id}\0${plan.name}\0json\0${queryKey(query)}`,
      validUntilMs: relativeWeekEnd ?? Number.POSITIVE_INFINITY,
    };
    canonicalMemo.set(memoKey, prepared);
  }
  const { query, key } = prepared;
  const hit = svc.cache.peek(key, nowMs);
  if (hit) {
    svc.metrics.cacheResult(path, true);
    return answerReply(req, path, svc, hit, extra, 'hit');
  }
  return svc.cache
    .get(key, nowMs, req.http.signal, (signal) =>
      svc.pool.run(
        {
          kind: 'search',
          snapshot: snap.ref,
          query,
          format: 'json',
          excludedCategories: plan.excludedCategories,
          nowMs,
          webBaseUrl: svc.config.webBaseUrl,
          attribution: attribution(svc.config.webBaseUrl),
          maxOffset: MAX_OFFSET,
        },
        signal,
      ),
    )
    .then((outcome) => {
      svc.metrics.cacheResult(path, outcome.hit);
      if ('failure' in outcome) {
        const f = outcome.failure;
        if (f.code === 'unavailable') throw unavailable(f.detail);
        if (f.code === 'cancelled') throw unavailable('The request was cancelled.');
        throw new Error(f.detail);
      }
      return answerReply(req, path, svc, outcome.answer, extra, outcome.hit ? 'hit' : 'miss');
    });
}

export const eventsRoute = defineRoute({
  path: '/v1/events',
  summary: 'Search events (JSON)',
  description:
    'Family events in the San Francisco Bay Area matching every given filter, as a JSON envelope with the total, paging and attribution. ' +
    'Without a date filter, events that have not ended yet. Sorted by start time, then id, or by distance.',
  tag: 'events',
  access: 'live',
  params: searchParams({ maxLimit: LIVE_MAX_LIMIT, defaultLimit: 20 }),
  produces: [{ type: 'application/json', schema: 'EventList' }],
  errors: ['invalid_parameter', 'unknown_parameter', 'category_not_in_plan', 'unavailable'],
  // Until keys exist (the keys issue), live routes answer with the demo's plan rules.
  handle: (req, params, svc) => search(req, '/v1/events', params, svc, DEMO_PLAN, LIVE_MAX_LIMIT, []),
});

export const demoRoute = defineRoute({
  path: '/v1/demo/events',
  summary: 'Demo search (no key)',
  description:
    `The same search and JSON shape as /v1/events without a key, under the Community plan's rules: at most ${DEMO_MAX_LIMIT} events a call, ` +
    'and a per-address rate limit (429 rate_limited with Retry-After when exceeded).',
  tag: 'events',
  access: 'demo',
  params: searchParams({ maxLimit: DEMO_MAX_LIMIT, defaultLimit: DEMO_MAX_LIMIT }),
  produces: [{ type: 'application/json', schema: 'EventList' }],
  errors: ['invalid_parameter', 'unknown_parameter', 'category_not_in_plan', 'rate_limited', 'unavailable'],
  handle: (req, params, svc) => {
    const verdict = svc.demoLimiter.take(req.http.remoteAddress);
    const headers: [string, string][] = [
      ['RateLimit-Limit', String(verdict.limit)],
      ['RateLimit-Remaining', String(verdict.remaining)],
      ['RateLimit-Reset', String(verdict.resetS)],
    ];
    if (!verdict.allowed) {
      throw new ApiError(
        'rate_limited',
        `The demo allows ${verdict.limit} calls a minute from one address; retry in ${verdict.retryAfterS} s, or use an API key for more.`,
        undefined,
        [['Retry-After', String(verdict.retryAfterS)], ...headers],
      );
    }
    return search(req, '/v1/demo/events', params, svc, DEMO_PLAN, DEMO_MAX_LIMIT, headers);
  },
});
