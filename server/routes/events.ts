// /v1/events (JSON search) and /v1/demo/events (the keyless sample: at most 10 a call, rate-limited
// per client address). Both: parameters → canonical query → response cache (single-flight) →
// query worker, which returns the finished body.
import { LRUCache } from 'lru-cache';
import { meterError } from '../auth.ts';
import { ApiError, unavailable } from '../errors.ts';
import type { Reply } from '../http.ts';
import { searchParams, MAX_OFFSET, type SearchParams } from '../params.ts';
import { canonicalQuery, queryKey } from '../query.ts';
import { quotaExhausted, quotaHeaders } from '../quota.ts';
import { jsonReply } from '../reply.ts';
import type { Answer } from '../cache.ts';
import type { LoadedSnapshot as Snapshot } from '../snapshots.ts';
import type { Plan, SearchQuery } from '../../workers/protocol.ts';
import { defineRoute, type RouteRequest, type Services } from './types.ts';

export const LIVE_MAX_LIMIT = 100;
export const DEMO_MAX_LIMIT = 10;
/** The keyless demo answers under this plan's rules (and its own per-call and per-address limits). */
export const DEMO_PLAN = 'community';

/** Live routes: private caches may keep an answer a minute (polls inside it cost nothing). */
const LIVE_CACHE_CONTROL = 'private, max-age=60';

export function attribution(webBaseUrl: string): { text: string; url: string } {
  return { text: `Family events data by Family Events API (${new URL(webBaseUrl).host})`, url: webBaseUrl };
}

/** Link headers by prefix, route, query string and next offset: pollers ask the same page again and again. */
const links = new LRUCache<string, string>({ max: 10_000 });

/** The client's own query string with `offset` moved on and any key left out. */
function nextLink(req: RouteRequest, path: string, svc: Services, next: number): string {
  const memo = `${req.prefix}${path}?${req.http.rawQuery}#${next}`;
  let link = links.get(memo);
  if (link === undefined) {
    const base = req.prefix === '/api' ? `${svc.config.webBaseUrl}/api` : svc.config.publicBaseUrl;
    const params = new URLSearchParams(req.http.rawQuery);
    params.delete('api_key');
    params.set('offset', String(next));
    link = `<${base}${path}?${params.toString()}>; rel="next"`;
    links.set(memo, link);
  }
  return link;
}

function answerReply(req: RouteRequest, path: string, svc: Services, a: Answer, extra: readonly (readonly [string, string])[], cache: 'hit' | 'miss'): Reply {
  const headers: (readonly [string, string])[] = [['Cache-Control', LIVE_CACHE_CONTROL], ...extra];
  if (a.nextOffset !== null) headers.push(['Link', nextLink(req, path, svc, a.nextOffset)]);
  return { ...jsonReply(a.body, headers), route: path, cache };
}


interface Prepared {
  readonly query: SearchQuery;
  readonly key: string;
  readonly validUntilMs: number;
}

const canonicalMemo = new LRUCache<string, Prepared>({ max: 10_000 });

/** The canonical query of a request, and its cache key (remembered per query string). */
function prepare(req: RouteRequest, path: string, params: SearchParams, snap: Snapshot, plan: Plan, maxLimit: number, now: Date): Prepared {
  // The canonical query of a query string depends on the snapshot (its cities), the plan's
  // exclusions and, for week=current|next, the week we are in: remembered under the first two
  // until the week ends. Plans with the same exclusions share cache entries: bodies do not depend
  // on anything else of the plan.
  const excluded = plan.excludedCategories.join(',');
  const memoKey = `${snap.ref.id}\0${plan.name}\0${excluded}\0${path}\0${req.http.rawQuery}`;
  let prepared = canonicalMemo.get(memoKey);
  if (prepared === undefined || now.getTime() > prepared.validUntilMs) {
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
      key: `${snap.ref.id}\0${excluded}\0json\0${queryKey(query)}`,
      validUntilMs: relativeWeekEnd ?? Number.POSITIVE_INFINITY,
    };
    canonicalMemo.set(memoKey, prepared);
  }
  return prepared;
}

/** The answer from the cache or a worker (single-flight); `cut` asks for a page cut by the quota. */
async function fetchAnswer(req: RouteRequest, path: string, svc: Services, snap: Snapshot, prepared: Prepared, plan: Plan, nowMs: number, cut: number | null): Promise<{ answer: Answer; hit: boolean }> {
  const key = cut === null ? prepared.key : `${prepared.key}\0cut=${cut}`;
  const outcome = await svc.cache.get(key, nowMs, req.http.signal, (signal) =>
    svc.pool.run(
      {
        kind: 'search',
        snapshot: snap.ref,
        query: prepared.query,
        format: 'json',
        excludedCategories: plan.excludedCategories,
        nowMs,
        webBaseUrl: svc.config.webBaseUrl,
        attribution: attribution(svc.config.webBaseUrl),
        maxOffset: MAX_OFFSET,
        cut,
      },
      signal,
    ),
  );
  svc.metrics.cacheResult(path, outcome.hit);
  if ('failure' in outcome) {
    const f = outcome.failure;
    if (f.code === 'unavailable') throw unavailable(f.detail);
    if (f.code === 'cancelled') throw unavailable('The request was cancelled.');
    throw new Error(f.detail);
  }
  return { answer: outcome.answer, hit: outcome.hit };
}

/** The keyless demo: answered from the cache synchronously when it can. Nothing is metered. */
function demoSearch(req: RouteRequest, params: SearchParams, svc: Services, extra: readonly (readonly [string, string])[]): Reply | Promise<Reply> {
  const path = '/v1/demo/events';
  const plan = svc.meter.plan(DEMO_PLAN);
  if (!plan) throw unavailable(`The ${DEMO_PLAN} plan the demo follows is missing from the accounts store.`);
  const snap = svc.snapshots.require();
  const now = svc.config.now();
  const nowMs = now.getTime();
  const prepared = prepare(req, path, params, snap, plan, DEMO_MAX_LIMIT, now);
  const hit = svc.cache.peek(prepared.key, nowMs);
  if (hit) {
    svc.metrics.cacheResult(path, true);
    return answerReply(req, path, svc, hit, extra, 'hit');
  }
  return fetchAnswer(req, path, svc, snap, prepared, plan, nowMs, null).then(({ answer, hit: h }) => answerReply(req, path, svc, answer, extra, h ? 'hit' : 'miss'));
}

/**
 * A live search, metered. Records are held in the metering thread before they are handed out and
 * charged, durably, before the reply leaves:
 * - answer already known (cached page, or any page of a plan without a cap): one call charges it
 *   whole, or holds what is left of the quota;
 * - a capped plan's answer not known yet: up to `limit` records are held first, the search runs
 *   (cut to the hold when the quota is short), then what was delivered is charged and the rest freed.
 * HEAD holds and frees, so it answers what GET would without charging anything.
 */
async function liveSearch(req: RouteRequest, path: string, params: SearchParams, svc: Services): Promise<Reply> {
  const account = req.account;
  if (!account) throw new Error(`${path} was reached without an account`);
  const plan = account.plan;
  const verdict = svc.keyLimiter.take(account.keyId, plan.requestsPerMinute);
  if (!verdict.allowed) {
    throw new ApiError(
      'rate_limited',
      `This key may make ${verdict.limit} requests a minute on the ${plan.name} plan; retry in ${verdict.retryAfterS} s.`,
      undefined,
      [['Retry-After', String(verdict.retryAfterS)]],
    );
  }
  const snap = svc.snapshots.require();
  const now = svc.config.now();
  const nowMs = now.getTime();
  const prepared = prepare(req, path, params, snap, plan, LIVE_MAX_LIMIT, now);
  const isHead = req.http.method === 'HEAD';

  let known = svc.cache.peek(prepared.key, nowMs);
  let cache: 'hit' | 'miss' = 'hit';
  if (known) svc.metrics.cacheResult(path, true);
  else if (plan.monthlyRecordLimit === null) {
    const got = await fetchAnswer(req, path, svc, snap, prepared, plan, nowMs, null);
    known = got.answer;
    cache = got.hit ? 'hit' : 'miss';
  }
  const want = known ? known.count : prepared.query.limit;
  const r = await svc.meter.reserve(account.keyId, want, !isHead && known !== undefined, nowMs);
  if (!r.ok) throw meterError(r);
  if (r.granted === 0 && want > 0) throw quotaExhausted(r.quota, nowMs);

  let answer: Answer;
  let quota = r.quota;
  try {
    if (known && r.granted >= known.count) answer = known;
    else {
      const got = await fetchAnswer(req, path, svc, snap, prepared, plan, nowMs, r.granted < want ? r.granted : null);
      answer = got.answer;
      cache = got.hit ? 'hit' : 'miss';
    }
  } catch (err) {
    if (r.reservation !== null) svc.meter.release(r.reservation);
    throw err;
  }
  if (r.reservation !== null) {
    if (isHead || req.http.signal.aborted) {
      svc.meter.release(r.reservation);
      if (quota.remaining !== null) quota = { ...quota, remaining: quota.remaining + r.granted };
    } else {
      const c = await svc.meter.commit(r.reservation, answer.count, nowMs);
      if (!c.ok) throw meterError(c);
      quota = c.quota;
    }
  }
  const headers = quotaHeaders(quota, nowMs);
  if (answer.truncated) headers.push(['X-Quota-Truncated', 'true']);
  return answerReply(req, path, svc, answer, headers, cache);
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
  errors: ['invalid_parameter', 'unknown_parameter', 'category_not_in_plan', 'quota_exhausted', 'rate_limited', 'unavailable'],
  handle: (req, params, svc) => liveSearch(req, '/v1/events', params, svc),
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
    return demoSearch(req, params, svc, headers);
  },
});
