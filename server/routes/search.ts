// The searches: /v1/events (JSON), /v1/events.csv, /v1/feed.rss, /v1/feed.json, and the keyless
// /v1/demo/events (at most 10 a call, rate-limited per client address). One flow for all of them:
// parameters → canonical query → response cache (single-flight) or query worker → metering →
// conditional reply (ETag/304) in the encoding the client accepts. JSON and feed bodies come back
// whole from a worker; CSV bodies stream from the worker to the socket at the client's pace.
import { LRUCache } from 'lru-cache';
import { compressStream, encodingFor, negotiate, type Encoding } from '../compress.ts';
import { noneMatchHits } from '../conditional.ts';
import { ApiError, unavailable } from '../errors.ts';
import { holdRecords, type Hold } from '../hold.ts';
import type { BodyStream, Reply } from '../http.ts';
import { MAX_OFFSET, type SearchParams } from '../params.ts';
import type { Streamed, TaskInput } from '../pool.ts';
import { canonicalQuery, queryKey } from '../query.ts';
import { quotaHeaders } from '../quota.ts';
import type { Answer } from '../cache.ts';
import type { LoadedSnapshot as Snapshot } from '../snapshots.ts';
import type { CalendarInfo, FeedLinks, SearchQuery, TaskFailure } from '../../query/protocol.ts';
import type { RouteRequest, Services } from '../route.ts';
import type { Plan, QuotaState } from '../../ledger/accounts.ts';
import { attribution, DEMO_PLAN } from '../terms.ts';
import { answerReply, baseUrl, DEMO_MAX_LIMIT, FORMATS, okReply, PAGING_PARAMS, searchHeaders, type Format, type Headers } from './formats.ts';

export interface Prepared {
  readonly query: SearchQuery;
  readonly key: string;
  /** Feeds: the links their bodies carry. */
  readonly links: FeedLinks | null;
  readonly validUntilMs: number;
}

/** One request's context, as the helpers below need it. */
export interface Call {
  readonly req: RouteRequest;
  readonly path: string;
  readonly fmt: Format;
  readonly svc: Services;
  readonly snap: Snapshot;
  readonly plan: Plan;
  readonly prepared: Prepared;
  readonly nowMs: number;
  /** The encoding the client accepts best. */
  readonly enc: Encoding;
}

/** A query string's canonical query, under what else it depends on (compared, not hashed). */
interface Remembered {
  readonly snapId: string;
  readonly planName: string;
  readonly excluded: string;
  readonly prefix: string;
  readonly path: string;
  readonly prepared: Prepared;
}

/**
 * Remembered by the query string as uWS handed it over: a string made per request, so every Map
 * lookup hashes (and first flattens) its key, and a key joined from the query string and five other
 * parts cost that again per lookup (V8's string hashing was 3-5% of a cached answer's main thread).
 * The other parts are compared in the entry; a query string polled under a few plans keeps one each.
 */
const canonicalMemo = new LRUCache<string, Remembered[]>({ max: 10_000 });
const PLANS_PER_QUERY = 8;

function remembered(
  list: readonly Remembered[] | undefined,
  snapId: string,
  planName: string,
  excluded: string,
  prefix: string,
  path: string,
): Prepared | undefined {
  if (list === undefined) return undefined;
  for (const r of list) {
    if (r.snapId === snapId && r.planName === planName && r.excluded === excluded && r.prefix === prefix && r.path === path) return r.prepared;
  }
  return undefined;
}

/**
 * A body's links: its URL as reached, and the request's parameters but the paging ones, in a
 * canonical order. The key stays when the request carried one (FeedLinks.params says why).
 */
export function feedLinks(req: RouteRequest, path: string, svc: Services, snap: Snapshot): FeedLinks {
  // Sorted so that equal queries share one entry (the worker sorts again, with the page's position).
  const params = [...new URLSearchParams(req.http.rawQuery)].filter(([k]) => !PAGING_PARAMS.includes(k));
  params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { url: `${baseUrl(req, svc)}${path}`, params, updated: snap.manifest.built_at };
}

/** The canonical query of a request, and its cache key (remembered per query string). */
function prepare(
  req: RouteRequest,
  path: string,
  fmt: Format,
  params: SearchParams,
  snap: Snapshot,
  plan: Plan,
  maxLimit: number,
  now: Date,
  svc: Services,
): Prepared {
  // The canonical query of a query string depends on the snapshot (its cities), the plan's
  // exclusions and, for week=current|next, the week we are in: remembered under the first two
  // until the week ends. Plans with the same exclusions share cache entries: bodies do not depend
  // on anything else of the plan.
  const excluded = plan.excludedCategories.join(',');
  const rawQuery = req.http.rawQuery;
  const list = canonicalMemo.get(rawQuery);
  let prepared = remembered(list, snap.ref.id, plan.name, excluded, req.prefix, path);
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
    // A feed's body carries its own links, so its entry is also keyed by them.
    const feed = fmt.format === 'rss' || fmt.format === 'jsonfeed' || fmt.format === 'ics' ? feedLinks(req, path, svc, snap) : null;
    prepared = {
      query,
      key: `${snap.ref.id}\0${excluded}\0${fmt.format}\0${queryKey(query)}${feed ? `\0${feed.url}\0${JSON.stringify(feed.params)}` : ''}`,
      links: feed,
      validUntilMs: relativeWeekEnd ?? Number.POSITIVE_INFINITY,
    };
    const entry: Remembered = { snapId: snap.ref.id, planName: plan.name, excluded, prefix: req.prefix, path, prepared };
    const others = (list ?? []).filter(
      (r) => r.snapId === entry.snapId && !(r.planName === plan.name && r.excluded === excluded && r.prefix === req.prefix && r.path === path),
    );
    canonicalMemo.set(rawQuery, [entry, ...others.slice(0, PLANS_PER_QUERY - 1)]);
  }
  return prepared;
}

function taskInput(c: Call, cut: number | null): TaskInput {
  const config = c.svc.config;
  return {
    kind: 'search',
    snapshot: c.snap.ref,
    query: c.prepared.query,
    format: c.fmt.format,
    excludedCategories: c.plan.excludedCategories,
    nowMs: c.nowMs,
    webBaseUrl: config.webBaseUrl,
    attribution: attribution(config.webBaseUrl),
    maxOffset: MAX_OFFSET,
    cut,
    links: c.prepared.links,
    calendar: c.fmt.format === 'ics' && c.prepared.links ? searchCalendar(c.prepared.links, config.webBaseUrl) : null,
  };
}

/** A subscribed search's calendar: named for the site, its URL the feed's own (never with a key). */
export function searchCalendar(links: FeedLinks, webBaseUrl: string): CalendarInfo {
  const query = new URLSearchParams(links.params.filter(([k]) => k !== 'api_key') as [string, string][]).toString();
  return { name: `Family events (${new URL(webBaseUrl).host})`, url: query ? `${links.url}?${query}` : links.url, stamp: links.updated };
}

export function failed(f: TaskFailure): never {
  if (f.code === 'unavailable') throw unavailable(f.detail);
  if (f.code === 'cancelled') throw unavailable('The request was cancelled.');
  throw new Error(f.detail);
}

/** The whole answer from the cache or a worker (single-flight); `cut` asks for a page cut by the quota. */
async function fetchAnswer(c: Call, cut: number | null): Promise<{ answer: Answer; hit: boolean }> {
  const key = cut === null ? c.prepared.key : `${c.prepared.key}\0cut=${cut}`;
  const outcome = await c.svc.cache.get(key, c.nowMs, c.req.http.signal, (signal) => c.svc.pool.run(taskInput(c, cut), signal));
  c.svc.metrics.cacheResult(c.path, outcome.hit);
  if ('failure' in outcome) failed(outcome.failure);
  return { answer: outcome.answer, hit: outcome.hit };
}

/** A streamed search (CSV) from a worker: its head now, its body as the client reads it. */
async function startStream(c: Call, cut: number | null): Promise<Streamed> {
  const r = await c.svc.pool.runStream(taskInput(c, cut), c.req.http.signal);
  c.svc.metrics.cacheResult(c.path, false);
  if ('ok' in r) failed(r);
  // Not awaited: the metrics are counted when the body ends. The pool answers failures as data,
  // so done never rejects.
  void r.done.then((d) => {
    if (d.ok) c.svc.metrics.streamEnded(d.cancelled ? 'cancelled' : 'completed', d.rows, d.bytes);
    else c.svc.metrics.streamEnded('failed', 0, 0);
  });
  return r;
}

/**
 * The reply carrying a streamed body: compressed on the way unless it is small, and kept if it is
 * small enough. A page cut by the quota is not kept: the CSV path never looks one up.
 */
function streamReply(c: Call, s: Streamed, extra: Headers): Reply {
  let body: BodyStream = s.head.truncated ? s.body : c.svc.cache.keepStreamed(c.prepared.key, s.head, s.body);
  const enc = encodingFor(c.enc, s.wholeBytes);
  if (enc !== 'identity') body = compressStream(body, enc);
  return okReply(c, enc, searchHeaders(c.req, c.path, c.fmt, c.svc, c.snap, s.head, enc, extra), body, 'miss');
}

/** The keyless demo: answered from the cache synchronously when it can. Nothing is metered. */
function demoSearch(req: RouteRequest, params: SearchParams, svc: Services, extra: Headers): Reply | Promise<Reply> {
  const path = '/v1/demo/events';
  const fmt = FORMATS.json;
  const plan = svc.meter.plan(DEMO_PLAN);
  if (!plan) throw unavailable(`The ${DEMO_PLAN} plan the demo follows is missing from the accounts store.`);
  const snap = svc.snapshots.require();
  const now = svc.config.now();
  const nowMs = now.getTime();
  const prepared = prepare(req, path, fmt, params, snap, plan, DEMO_MAX_LIMIT, now, svc);
  const c: Call = { req, path, fmt, svc, snap, plan, prepared, nowMs, enc: negotiate(req.http.headers['accept-encoding']) };
  const hit = svc.cache.peek(prepared.key, nowMs);
  if (hit) {
    svc.metrics.cacheResult(path, true);
    return answerReply(c, hit, extra, 'hit');
  }
  return fetchAnswer(c, null).then(({ answer, hit: h }) => answerReply(c, answer, extra, h ? 'hit' : 'miss'));
}

/** The keyless demo within its per-address rate (429 rate_limited with Retry-After beyond it). */
export function demoEvents(req: RouteRequest, params: SearchParams, svc: Services): Reply | Promise<Reply> {
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
}

/** The caller of a live route, within its plan's request rate (429 rate_limited beyond it). */
export function rateLimited(req: RouteRequest, path: string, svc: Services): NonNullable<RouteRequest['account']> {
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
  return account;
}

export function liveSearch(req: RouteRequest, path: string, fmt: Format, params: SearchParams, svc: Services): Reply | Promise<Reply> {
  const account = rateLimited(req, path, svc);
  const plan = account.plan;
  const snap = svc.snapshots.require();
  const now = svc.config.now();
  const nowMs = now.getTime();
  const prepared = prepare(req, path, fmt, params, snap, plan, fmt.maxLimit, now, svc);
  return answerLive({ req, path, fmt, svc, snap, plan, prepared, nowMs, enc: negotiate(req.http.headers['accept-encoding']) }, account);
}

/** A live route's answer to a prepared query (a search's page, a change feed's): from the cache, or metered from a worker. */
export function answerLive(c: Call, account: NonNullable<RouteRequest['account']>): Reply | Promise<Reply> {
  const { req, path, svc, prepared, nowMs } = c;
  const ifNoneMatch = req.http.headers['if-none-match'];
  const known = svc.cache.peek(prepared.key, nowMs);
  if (known) svc.metrics.cacheResult(path, true);
  // A poller whose copy is current: answered here, synchronously (no charge, nothing to wait for).
  if (known && noneMatchHits(ifNoneMatch, known.etag)) return answerReply(c, known, [], 'hit');
  return meteredSearch(c, account, known, ifNoneMatch);
}

/**
 * A live search past the cache's synchronous 304: fetched if need be, then metered and answered.
 * Records are held (a Hold, server/hold.ts) before they are handed out and charged, durably,
 * before the reply leaves:
 * - answer already known (cached page, or any whole page of a plan without a cap): one call
 *   charges it whole, or holds what is left of the quota;
 * - otherwise up to `limit` records are held first, the search runs (cut to the hold when the
 *   quota is short), then what was delivered is charged and the rest freed.
 * A 304 (the client's If-None-Match names the current body) and HEAD charge nothing. Every path
 * ends in the `finally`'s release, which does nothing once the hold is committed.
 */
async function meteredSearch(
  c: Call,
  account: NonNullable<RouteRequest['account']>,
  cached: Answer | undefined,
  ifNoneMatch: string | undefined,
): Promise<Reply> {
  const { req, fmt, svc, plan, prepared, nowMs } = c;
  const isHead = req.http.method === 'HEAD';
  let known = cached;
  let cache: 'hit' | 'miss' = 'hit';
  if (!known && !fmt.streamed && (plan.monthlyRecordLimit === null || ifNoneMatch !== undefined)) {
    // Whole pages are fetched before metering when nothing can cut them, or when the client may
    // already hold the page (a 304 must not depend on the quota left).
    const got = await fetchAnswer(c, null);
    known = got.answer;
    cache = got.hit ? 'hit' : 'miss';
  }
  if (known && noneMatchHits(ifNoneMatch, known.etag)) return answerReply(c, known, [], cache);
  if (!known && fmt.streamed) return liveStream(c, account.keyId, isHead, ifNoneMatch, null);

  const want = known ? known.count : prepared.query.limit;
  const hold = await holdRecords(svc.meter, account.keyId, want, { settle: !isHead && known !== undefined, atMs: nowMs, client: req.http });
  try {
    // A cached export the quota cannot cover whole: the cut page streams from a worker, on this hold.
    if (known && fmt.streamed && hold.granted < known.count) return await liveStream(c, account.keyId, isHead, ifNoneMatch, hold);
    let answer: Answer;
    if (known && hold.granted >= known.count) answer = known;
    else {
      const got = await fetchAnswer(c, hold.granted < want ? hold.granted : null);
      answer = got.answer;
      cache = got.hit ? 'hit' : 'miss';
    }
    const quota = isHead || req.http.aborted ? hold.release() : await hold.commit(answer.count);
    return await answerReply(c, answer, quotaHeaders(quota, nowMs), cache);
  } finally {
    hold.release();
  }
}

/**
 * A CSV export not in the cache (or cached, but longer than the quota left; `held` is then its hold): hold `limit` records, start the worker (cut to the hold), and once
 * its head says how many records the body has, charge them durably before the first byte leaves.
 * The body then streams; a client that leaves mid-body stops the worker (it was charged for the
 * records, which were already on their way).
 */
async function liveStream(c: Call, keyId: string, isHead: boolean, ifNoneMatch: string | undefined, held: Hold | null): Promise<Reply> {
  const { svc, nowMs } = c;
  const want = c.prepared.query.limit;
  const hold = held ?? (await holdRecords(svc.meter, keyId, want, { settle: false, atMs: nowMs, client: c.req.http }));
  try {
    const s = await startStream(c, hold.granted < want ? hold.granted : null);
    const unchanged = noneMatchHits(ifNoneMatch, s.head.etag);
    if (isHead || unchanged || c.req.http.aborted) {
      // Nothing is delivered: free the hold, and give the headers GET would (the HTTP adapter drops
      // a HEAD's body, which stops the worker) or a 304.
      const quota = quotaHeaders(hold.release(), nowMs);
      if (!unchanged) return streamReply(c, s, quota);
      s.body.cancel();
      const headers = searchHeaders(c.req, c.path, c.fmt, svc, c.snap, s.head, encodingFor(c.enc, s.wholeBytes), quota);
      return { status: 304, headers, body: '', route: c.path, cache: 'miss' };
    }
    let quota: QuotaState;
    try {
      quota = await hold.commit(s.head.count);
    } catch (err) {
      s.body.cancel();
      throw err;
    }
    return streamReply(c, s, quotaHeaders(quota, nowMs));
  } finally {
    hold.release();
  }
}
