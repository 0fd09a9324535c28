// What every page of the website shares, made once per website (server/web/site/index.ts): the
// services, the page answers and the cached render, searches on a query worker, and what keyless
// browsing lists. Page modules get it as one object.
// Every page is rendered once per snapshot and query (the cache, single-flight), and answered with
// a strong ETag of its bytes, so a reload that changed nothing is a 304.
import type { AfterAnswer } from '../../after-answer.ts';
import type { ResponseCache } from '../../cache.ts';
import { MIN_COMPRESSED_BYTES, negotiate } from '../../compress.ts';
import type { Config } from '../../../core/config.ts';
import { etagValue, httpDate, noneMatchHits } from '../../conditional.ts';
import { ApiError } from '../../errors.ts';
import type { Reply, Request } from '../../http.ts';
import type { Logger } from '../../log.ts';
import type { Meter } from '../../meter.ts';
import type { Metrics } from '../../metrics.ts';
import { MAX_OFFSET, type SearchParams } from '../../params.ts';
import type { QueryPool } from '../../pool.ts';
import { canonicalQuery } from '../../query.ts';
import type { LoadedSnapshot, Snapshots } from '../../snapshots.ts';
import type { EventRecord } from '../../../core/record.ts';
import type { CalendarInfo, SearchOk, SearchQuery, TaskFailure } from '../../../query/protocol.ts';
import { bodyTag } from '../../../query/etag.ts';
import { SECURITY_HEADERS, type Site, type SiteAssets } from '../layout.ts';
import type { Mailer } from '../mail.ts';
import type { Plan } from '../../../ledger/accounts.ts';
import { DEMO_PLAN } from '../../terms.ts';

/** What the website uses of the server: the same snapshot, workers and cache as the API, the ledger's plans for the docs. */
export interface SiteServices {
  readonly config: Config;
  readonly snapshots: Snapshots;
  readonly pool: QueryPool;
  readonly cache: ResponseCache;
  readonly meter: Pick<Meter, 'plans' | 'plan' | 'accounts' | 'usage'>;
  readonly metrics: Metrics;
  /** The OpenAPI document's bytes: the docs are generated from it. */
  readonly openapi: () => Buffer;
  /** Sign-in mail (account pages). */
  readonly mailer: Pick<Mailer, 'send'>;
  /** Work done after an answer has left (a sign-in mail), finished before the server stops. */
  readonly afterAnswer: Pick<AfterAnswer, 'run'>;
  /** The key of CSRF tokens and signed cookies, as the ledger has it now (Meter.webSecret). */
  readonly webSecret: () => Buffer;
}

export const HTML_TYPE = 'text/html; charset=utf-8';
/** Pages change with the snapshot: a minute in any cache, then revalidated (a 304 when unchanged). */
const PAGE_CACHE_CONTROL = 'public, max-age=60';
export const STATIC_CACHE_CONTROL = 'public, max-age=3600';
/** The plan keyless browsing follows: the demo's, so what no key gets is one rule, kept in the ledger. */
export const KEYLESS_PLAN = DEMO_PLAN;

export type Headers = (readonly [string, string])[];

/** A page that could not be rendered as asked: a complete HTML answer with its own status. */
export interface PageFailure {
  readonly ok: false;
  readonly status: number;
  readonly html: string;
  readonly headers?: Headers;
}

/** A rendered page and, for pages that depend on the clock, when it stops being right. */
export interface Rendered {
  readonly body: string | Uint8Array;
  readonly validUntilMs: number | null;
}

/** A body kept in memory with its tag, and its compressed forms on demand. */
export interface Kept {
  readonly body: Uint8Array;
  readonly etag: string;
  encoded(enc: 'gzip' | 'br'): Uint8Array | Promise<Uint8Array>;
}

/** A worker failure on the way to a page: busy → 503 page; anything else is ours → 500 (logged by the caller). */
export function workerFailed(f: TaskFailure): never {
  if (f.code === 'unavailable' || f.code === 'cancelled') throw new ApiError('unavailable', f.detail, undefined, [['Retry-After', '1']]);
  throw new Error(f.detail);
}

/** The context of the website's pages: made once by createSite, handed to each page module. */
export function siteContext(svc: SiteServices, log: Logger, assets: SiteAssets) {
  const config = svc.config;
  const site: Site = { webBaseUrl: config.webBaseUrl, apiBaseUrl: `${config.webBaseUrl}/api`, name: 'Family Events', assets };

  const htmlReply = (status: number, html: string, route: string, headers: Headers = []): Reply => ({
    status,
    headers: [['Content-Type', HTML_TYPE], ['Cache-Control', 'no-store'], ...SECURITY_HEADERS, ...headers],
    body: html,
    route,
  });

  /** The reply of a kept body: its ETag, a 304 when the client holds it, compressed when it is worth it. */
  const keptReply = async (
    req: Request,
    kept: Kept,
    type: string,
    route: string,
    hit: boolean,
    extra: Headers,
    snap: LoadedSnapshot | null,
    cacheControl: string = snap ? PAGE_CACHE_CONTROL : STATIC_CACHE_CONTROL,
  ): Promise<Reply> => {
    const wanted = negotiate(req.headers['accept-encoding']);
    const enc = kept.body.length <= MIN_COMPRESSED_BYTES ? 'identity' : wanted;
    const headers: Headers = [
      ['ETag', etagValue(kept.etag, enc)],
      ['Cache-Control', cacheControl],
      ['Vary', 'Accept-Encoding'],
      ...(snap ? ([['Last-Modified', httpDate(snap.manifest.built_at)]] as Headers) : []),
      ...SECURITY_HEADERS,
      ...extra,
    ];
    const cache = hit ? 'hit' : 'miss';
    if (noneMatchHits(req.headers['if-none-match'], kept.etag)) return { status: 304, headers, body: '', route, cache };
    const body = enc === 'identity' ? kept.body : await kept.encoded(enc);
    const head: Headers = [['Content-Type', type]];
    if (enc !== 'identity') head.push(['Content-Encoding', enc]);
    return { status: 200, headers: [...head, ...headers], body, route, cache };
  };

  /**
   * A page from the cache, or rendered now (once, however many ask): `render` returns the page, or
   * a complete answer of another status (404, 410, 400), which is not kept.
   */
  const page = async (
    req: Request,
    route: string,
    key: string,
    render: (signal: AbortSignal) => Promise<Rendered | PageFailure>,
    opts: { type?: string; headers?: Headers } = {},
  ): Promise<Reply> => {
    const snap = svc.snapshots.require();
    const full = `${snap.ref.id}\0web\0${key}`;
    const nowMs = config.now().getTime();
    const outcome = await svc.cache.get<PageFailure>(full, nowMs, req.signal, async (signal) => {
      const r = await render(signal);
      if ('ok' in r) return r;
      const body = typeof r.body === 'string' ? Buffer.from(r.body) : r.body;
      return { ok: true, body, etag: bodyTag(body), total: 0, count: 0, nextOffset: null, truncated: false, validUntilMs: r.validUntilMs };
    });
    svc.metrics.cacheResult(route, outcome.hit);
    if ('failure' in outcome) return htmlReply(outcome.failure.status, outcome.failure.html, route, outcome.failure.headers);
    const a = outcome.answer;
    const kept: Kept = { body: a.body, etag: a.etag, encoded: (enc) => svc.cache.encoded(full, a, enc) };
    return keptReply(req, kept, opts.type ?? HTML_TYPE, route, outcome.hit, opts.headers ?? [], snap);
  };

  /** A search on a query worker as the website asks it: the keyless plan's excluded categories, no quota cut. */
  const runSearch = async (
    snap: LoadedSnapshot,
    query: SearchQuery,
    excluded: readonly string[],
    format: 'json' | 'ics',
    calendar: CalendarInfo | null,
    signal: AbortSignal,
  ): Promise<SearchOk> => {
    const r = await svc.pool.run(
      {
        kind: 'search',
        snapshot: snap.ref,
        query,
        format,
        excludedCategories: excluded,
        nowMs: config.now().getTime(),
        webBaseUrl: config.webBaseUrl,
        attribution: { text: site.name, url: config.webBaseUrl },
        maxOffset: MAX_OFFSET,
        cut: null,
        links: null,
        calendar,
      },
      signal,
    );
    if (!r.ok) workerFailed(r);
    return r;
  };

  /** One page of a search, as records. */
  const search = async (
    snap: LoadedSnapshot,
    query: SearchQuery,
    excluded: readonly string[],
    signal: AbortSignal,
  ): Promise<{ records: EventRecord[]; total: number; validUntilMs: number | null }> => {
    const r = await runSearch(snap, query, excluded, 'json', null, signal);
    const parsed = JSON.parse(Buffer.from(r.body).toString('utf8')) as { events: EventRecord[]; total: number };
    return { records: parsed.events, total: parsed.total, validUntilMs: r.validUntilMs };
  };

  /**
   * For pages that only link to listings (an event's, home): the categories not listed, none when
   * the plan is missing (those pages need no plan, and the listings they link to say it is missing).
   */
  const unlistedNow = (): readonly string[] => svc.meter.plan(KEYLESS_PLAN)?.excludedCategories ?? [];
  /** Part of every cache key whose page depends on what keyless browsing lists. */
  const listedKey = (plan: Pick<Plan, 'excludedCategories'>): string => plan.excludedCategories.join(',');

  const queryOf = (snap: LoadedSnapshot, p: SearchParams, defaultLimit: number, plan: Plan | null): SearchQuery =>
    canonicalQuery(p, {
      cities: snap.cities,
      excludedCategories: plan?.excludedCategories ?? [],
      planName: plan?.name ?? 'website',
      now: config.now(),
      defaultLimit,
    });

  return { svc, log, config, site, htmlReply, keptReply, page, runSearch, search, unlistedNow, listedKey, queryOf };
}

export type SiteContext = ReturnType<typeof siteContext>;
