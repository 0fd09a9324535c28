// The website host: event pages at every event_url, browsing, add-to-calendar, docs and home. It
// answers on the same listener as the API (server/app.ts hands it every path that is not the API's)
// and goes through the same HTTP adapter, query workers and response cache, but never through the
// API's routes: browsing is for people, needs no key and counts toward no quota (spec §8).
// Because it needs no key, it is kept at a person's scale (issue 26: it had become a keyless bulk
// feed): listings and a search's calendar are rate-limited per client address, list only what the
// Community plan (the demo's, a keyless caller's) includes, and a calendar holds one page of events.
// A single event's page and .ics stay free: they are every record's event_url.
// Every page is rendered once per snapshot and query (the cache, single-flight), and answered with
// a strong ETag of its bytes, so a reload that changed nothing is a 304.
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import * as v from 'valibot';
import { issuesToErrors, parseQuery } from '../querystring.ts';
import type { ResponseCache } from '../cache.ts';
import { MIN_COMPRESSED_BYTES, negotiate } from '../compress.ts';
import { REPO_ROOT, type Config } from '../config.ts';
import { etagValue, httpDate, noneMatchHits } from '../conditional.ts';
import { ApiError, type ParamError } from '../errors.ts';
import type { Reply, Request } from '../http.ts';
import type { Logger } from '../log.ts';
import type { Meter } from '../meter.ts';
import type { Metrics } from '../metrics.ts';
import { MAX_OFFSET, searchParams, type SearchParams } from '../params.ts';
import type { QueryPool } from '../pool.ts';
import { canonicalQuery, queryKey } from '../query.ts';
import { RateLimiter } from '../ratelimit.ts';
import { DEMO_PLAN } from '../routes/events.ts';
import type { LoadedSnapshot, Snapshots } from '../snapshots.ts';
import type { EventRecord } from '../../workers/record.ts';
import type { CalendarInfo, EventMissing, Plan, SearchOk, SearchQuery, TaskFailure } from '../../workers/protocol.ts';
import { bodyTag } from '../../workers/query/etag.ts';
import { ICS_CONTENT_TYPE } from '../../workers/query/ical.ts';
import { EVENT_ID_PATTERN } from '../../workers/snapshot/normalize/event.ts';
import { CATEGORY_LABELS, CATEGORY_SLUGS, type CategorySlug } from '../../workers/snapshot/taxonomy.ts';
import { createAccount, OIDC_CALLBACK_PATH } from './account/index.ts';
import { SECURITY_HEADERS, type Site } from './layout.ts';
import type { Mailer } from './mail.ts';
import { lazyClient } from './oidc.ts';
import { browsePage, type BrowseInput } from './pages/browse.ts';
import { docsPage, errorsPage } from './pages/docs.ts';
import { eventPage } from './pages/event.ts';
import {
  badRequestPage,
  categoryNotListedPage,
  gonePage,
  internalErrorPage,
  methodNotAllowedPage,
  notFoundPage,
  tooManyRequestsPage,
  unavailablePage,
} from './pages/errors.ts';
import { citySlug, homePage } from './pages/home.ts';

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
  /** The key of CSRF tokens and signed cookies, as the ledger has it now (Meter.webSecret). */
  readonly webSecret: () => Buffer;
}

const HTML_TYPE = 'text/html; charset=utf-8';
/** Pages change with the snapshot: a minute in any cache, then revalidated (a 304 when unchanged). */
const PAGE_CACHE_CONTROL = 'public, max-age=60';
const STATIC_CACHE_CONTROL = 'public, max-age=3600';
/**
 * Results a browse page lists at most, and by default. A search's calendar is one such page: the
 * next BROWSE_LIMIT events (`limit` up to BROWSE_MAX_LIMIT, as on the listing), never paged, so a
 * calendar is what a person subscribes to and not a keyless export (the API's feed.ics, with a key,
 * holds 100 a page and pages).
 */
const BROWSE_MAX_LIMIT = 50;
const BROWSE_LIMIT = 20;
/**
 * Per client address and per process (several nodes each count their own): a person browsing reads
 * a listing page every few seconds at most and downloads a calendar now and then; a token bucket
 * lets such bursts through whole and refills continuously. Beyond it: a 429 page with Retry-After
 * that points programs at the API. Event pages and their .ics are not counted (see README).
 */
export const LISTING_PAGES_PER_MINUTE = 60;
export const CALENDARS_PER_MINUTE = 10;
/** The plan keyless browsing follows: the demo's, so what no key gets is one rule, kept in the ledger. */
const KEYLESS_PLAN = DEMO_PLAN;
const ALLOW = 'GET, HEAD';

type Headers = (readonly [string, string])[];


/** A page that could not be rendered as asked: a complete HTML answer with its own status. */
interface PageFailure {
  readonly ok: false;
  readonly status: number;
  readonly html: string;
  readonly headers?: Headers;
}

/** A rendered page and, for pages that depend on the clock, when it stops being right. */
interface Rendered {
  readonly body: string | Uint8Array;
  readonly validUntilMs: number | null;
}

const STATIC_TYPES: Readonly<Record<string, string>> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** A body kept in memory with its tag, and its compressed forms on demand. */
interface Kept {
  readonly body: Uint8Array;
  readonly etag: string;
  encoded(enc: 'gzip' | 'br'): Uint8Array | Promise<Uint8Array>;
}

/** server/web/static, read and compressed once: a few small files, served from memory with their own ETags. */
function loadStatic(): ReadonlyMap<string, Kept & { readonly type: string }> {
  const dir = path.join(REPO_ROOT, 'server', 'web', 'static');
  const out = new Map<string, Kept & { readonly type: string }>();
  for (const name of ['site.css', 'site.js', 'favicon.svg']) {
    const body = readFileSync(path.join(dir, name));
    const forms = { gzip: gzipSync(body), br: brotliCompressSync(body) };
    out.set(`/static/${name}`, { type: STATIC_TYPES[path.extname(name)] ?? 'application/octet-stream', body, etag: bodyTag(body), encoded: (enc) => forms[enc] });
  }
  return out;
}

/** Everything a browse-like page is asked: the filters as given (empty fields dropped) and their parse. */
interface Listing {
  readonly values: Record<string, string>;
  readonly parsed: SearchParams | null;
  readonly errors: readonly ParamError[];
}

const browseSchema = searchParams({ maxLimit: BROWSE_MAX_LIMIT, defaultLimit: BROWSE_LIMIT });
const FILTER_NAMES: ReadonlySet<string> = new Set(Object.keys(browseSchema.pipe[0].entries));

/**
 * A form submits every field, filled or not, and links from elsewhere carry tracking parameters:
 * the website reads the filters it knows, ignores empty fields and anything else, and reports
 * the problems of the rest on the page (the API, for machines, refuses unknown parameters instead).
 */
function readListing(rawQuery: string, schema: typeof browseSchema, fixed: Readonly<Record<string, string>> = {}): Listing {
  const { values: raw, errors } = parseQuery(rawQuery);
  const values: Record<string, string> = {};
  for (const [k, val] of Object.entries(raw)) if (FILTER_NAMES.has(k) && val.trim() !== '') values[k] = val.trim();
  Object.assign(values, fixed);
  if (errors.length) return { values, parsed: null, errors };
  const r = v.safeParse(schema, values);
  return r.success ? { values, parsed: r.output, errors: [] } : { values, parsed: null, errors: issuesToErrors(r.issues) };
}

/** A listing's query string without paging: the same search as a link, a calendar, another page. */
function filterQuery(values: Readonly<Record<string, string>>, drop: readonly string[] = ['offset']): string {
  const params = new URLSearchParams(Object.entries(values).filter(([k]) => !drop.includes(k)));
  params.sort();
  return params.toString();
}

const withQuery = (p: string, q: string): string => (q ? `${p}?${q}` : p);

/**
 * Whom a rate limit counts: an IPv4 address (IPv4-mapped IPv6 too) as itself, an IPv6 address by
 * its /64, which one subscriber's network usually holds whole (per address, one host could take a
 * fresh one for each request). Anything else (no address) as given.
 */
export function clientKey(address: string): string {
  if (!isIPv6(address)) return address;
  let hex = address.split('%')[0]!.toLowerCase();
  // A dotted IPv4 tail (::ffff:1.2.3.4) as the two groups it stands for.
  const cut = hex.lastIndexOf(':');
  const dotted = hex.slice(cut + 1);
  if (dotted.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
    hex = `${hex.slice(0, cut + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = hex.split('::');
  const first = head === '' ? [] : head.split(':');
  const last = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? 0 : 8 - first.length - last.length;
  const g = [...first, ...Array<string>(zeros).fill('0'), ...last].map((x) => parseInt(x, 16));
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    const [hi = 0, lo = 0] = g.slice(6);
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}

/** A worker failure on the way to a page: busy → 503 page; anything else is ours → 500 (logged by the caller). */
function workerFailed(f: TaskFailure): never {
  if (f.code === 'unavailable' || f.code === 'cancelled') throw new ApiError('unavailable', f.detail, undefined, [['Retry-After', '1']]);
  throw new Error(f.detail);
}

export function createSite(svc: SiteServices, log: Logger): (req: Request) => Reply | Promise<Reply> {
  const config = svc.config;
  const site: Site = { webBaseUrl: config.webBaseUrl, apiBaseUrl: `${config.webBaseUrl}/api`, name: 'Family Events' };
  const statics = loadStatic();

  const htmlReply = (status: number, html: string, route: string, headers: Headers = []): Reply => ({
    status,
    headers: [['Content-Type', HTML_TYPE], ['Cache-Control', 'no-store'], ...SECURITY_HEADERS, ...headers],
    body: html,
    route,
  });

  /** The reply of a kept body: its ETag, a 304 when the client holds it, compressed when it is worth it. */
  const keptReply = async (req: Request, kept: Kept, type: string, route: string, hit: boolean, extra: Headers, snap: LoadedSnapshot | null): Promise<Reply> => {
    const wanted = negotiate(req.headers['accept-encoding']);
    const enc = kept.body.length <= MIN_COMPRESSED_BYTES ? 'identity' : wanted;
    const headers: Headers = [
      ['ETag', etagValue(kept.etag, enc)],
      ['Cache-Control', snap ? PAGE_CACHE_CONTROL : STATIC_CACHE_CONTROL],
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
        kind: 'search', snapshot: snap.ref, query, format, excludedCategories: excluded, nowMs: config.now().getTime(), webBaseUrl: config.webBaseUrl,
        attribution: { text: site.name, url: config.webBaseUrl }, maxOffset: MAX_OFFSET, cut: null, links: null, calendar,
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
   * The plan keyless browsing follows, as the ledger has it now (the meter mirrors the plans, so
   * this is a lookup, and a change with `plans set` reaches the website within a second).
   */
  const keyless = (): Plan => {
    const plan = svc.meter.plan(KEYLESS_PLAN);
    if (!plan) throw new ApiError('unavailable', `The ${KEYLESS_PLAN} plan the website follows is missing from the accounts store.`, undefined, [['Retry-After', '5']]);
    return plan;
  };
  /**
   * For pages that only link to listings (an event's, home): the categories not listed, none when
   * the plan is missing (those pages need no plan, and the listings they link to say it is missing).
   */
  const unlistedNow = (): readonly string[] => svc.meter.plan(KEYLESS_PLAN)?.excludedCategories ?? [];
  /** Part of every cache key whose page depends on what keyless browsing lists. */
  const listedKey = (plan: Pick<Plan, 'excludedCategories'>): string => plan.excludedCategories.join(',');
  const label = (slug: string): string => CATEGORY_LABELS[slug as CategorySlug] ?? slug;

  const queryOf = (snap: LoadedSnapshot, p: SearchParams, defaultLimit: number, plan: Plan | null): SearchQuery =>
    canonicalQuery(p, { cities: snap.cities, excludedCategories: plan?.excludedCategories ?? [], planName: plan?.name ?? 'website', now: config.now(), defaultLimit });

  /** The categories of a search that keyless browsing does not list: a 403 page says so. */
  const unlistedOf = (p: SearchParams, plan: Plan): string[] => [...new Set(p.category ?? [])].filter((c) => plan.excludedCategories.includes(c)).sort();

  /** Per client address: null when allowed, else the 429 page. HEAD and 304 count as well (each is a request). */
  const limiter = new RateLimiter(LISTING_PAGES_PER_MINUTE);
  const throttled = (req: Request, route: string, what: 'listing' | 'calendar'): Reply | null => {
    const perMinute = what === 'listing' ? LISTING_PAGES_PER_MINUTE : CALENDARS_PER_MINUTE;
    const verdict = limiter.take(`${what}\0${clientKey(req.remoteAddress)}`, perMinute);
    if (verdict.allowed) return null;
    const retry = String(Math.max(1, verdict.retryAfterS));
    return htmlReply(429, tooManyRequestsPage(site, { what, perMinute, retryAfterS: verdict.retryAfterS }), route, [['Retry-After', retry]]);
  };

  const cityNames = (snap: LoadedSnapshot): string[] => [...snap.manifest.cities];
  const categoryOptions = (plan: Plan): { slug: string; name: string }[] =>
    CATEGORY_SLUGS.filter((slug) => !plan.excludedCategories.includes(slug)).map((slug) => ({ slug, name: CATEGORY_LABELS[slug] }));

  /** Browse, a city's page and a category's page: the same listing, with a filter fixed by the path. */
  const listing = async (req: Request, route: string, pagePath: string, heading: string, fixed: Record<string, string>, intro?: string): Promise<Reply> => {
    const refused = throttled(req, route, 'listing');
    if (refused) return refused;
    const snap = svc.snapshots.require();
    const plan = keyless();
    const l = readListing(req.rawQuery, browseSchema, fixed);
    const nowMs = config.now().getTime();
    const base = (results: BrowseInput['results'], errors: readonly ParamError[], unlisted: readonly string[] = []): BrowseInput => {
      const q = filterQuery(l.values, ['offset', 'limit']);
      const feeds = errors.length === 0 && unlisted.length === 0;
      return {
        heading,
        ...(intro ? { intro } : {}),
        path: pagePath,
        form: { action: '/events', values: l.values, cities: cityNames(snap), categories: categoryOptions(plan) },
        errors,
        results,
        subscribeHref: feeds ? `${config.webBaseUrl.replace(/^https?:/, 'webcal:')}${withQuery('/events.ics', q)}` : null,
        icsHref: feeds ? `${config.webBaseUrl}${withQuery('/events.ics', q)}` : null,
        ...(feeds ? { calendarEvents: BROWSE_LIMIT } : {}),
        ...(unlisted.length ? { unlisted: { categories: unlisted.map(label), planName: label(plan.name) } } : {}),
        nowMs,
      };
    };
    const invalid = (errors: readonly ParamError[]): PageFailure => ({ ok: false, status: 400, html: browsePage(site, base(null, errors)) });
    if (l.parsed === null) return htmlReply(400, browsePage(site, base(null, l.errors)), route);
    // Asked for a category keyless browsing leaves out: said plainly, with the form to search again.
    const unlisted = unlistedOf(l.parsed, plan);
    if (unlisted.length) return htmlReply(403, browsePage(site, base(null, [], unlisted)), route);
    let query: SearchQuery;
    try {
      query = queryOf(snap, l.parsed, BROWSE_LIMIT, plan);
    } catch (err) {
      if (err instanceof ApiError && err.errors) return htmlReply(400, invalid(err.errors).html, route);
      throw err;
    }
    return page(req, route, `browse\0${pagePath}\0${queryKey(query)}\0${filterQuery(l.values)}\0${listedKey(plan)}`, async (signal) => {
      const found = await search(snap, query, plan.excludedCategories, signal);
      const pageHref = (offset: number): string => {
        const vals = { ...l.values };
        for (const k of Object.keys(fixed)) delete vals[k];
        if (offset > 0) vals.offset = String(offset);
        else delete vals.offset;
        return withQuery(pagePath, filterQuery(vals, []));
      };
      const prev = query.offset > 0 ? pageHref(Math.max(0, query.offset - query.limit)) : null;
      const next = query.offset + query.limit < found.total && query.offset + query.limit <= MAX_OFFSET ? pageHref(query.offset + query.limit) : null;
      const html = browsePage(site, base({ records: found.records, total: found.total, offset: query.offset, limit: query.limit, prevHref: prev, nextHref: next }, []));
      return { body: html, validUntilMs: found.validUntilMs };
    });
  };

  /**
   * The same search as a calendar to subscribe to: its first page (the next BROWSE_LIMIT events, or
   * `limit` up to BROWSE_MAX_LIMIT), never another: `offset` is ignored, so a calendar follows the
   * search forward as events pass and cannot be paged through as an export.
   */
  const calendar = async (req: Request): Promise<Reply> => {
    const route = 'web:/events.ics';
    const refused = throttled(req, route, 'calendar');
    if (refused) return refused;
    const snap = svc.snapshots.require();
    const plan = keyless();
    const l = readListing(req.rawQuery, browseSchema);
    if (l.parsed === null) return htmlReply(400, badRequestPage(site, { detail: 'The calendar link has filters we cannot read.', errors: l.errors }), route);
    const unlisted = unlistedOf(l.parsed, plan);
    if (unlisted.length) return htmlReply(403, categoryNotListedPage(site, { categories: unlisted.map(label), planName: label(plan.name) }), route);
    let query: SearchQuery;
    try {
      query = { ...queryOf(snap, l.parsed, BROWSE_LIMIT, plan), offset: 0 };
    } catch (err) {
      if (err instanceof ApiError && err.errors) return htmlReply(400, badRequestPage(site, { detail: err.detail, errors: err.errors }), route);
      throw err;
    }
    const q = filterQuery(l.values, ['offset', 'limit']);
    const cal: CalendarInfo = { name: `${site.name}${l.values.city ? ` in ${l.values.city}` : ''}`, url: `${config.webBaseUrl}${withQuery('/events', q)}`, stamp: snap.manifest.built_at };
    return page(
      req,
      route,
      `calendar\0${queryKey(query)}\0${q}\0${listedKey(plan)}`,
      async (signal) => {
        const r = await runSearch(snap, query, plan.excludedCategories, 'ics', cal, signal);
        return { body: r.body, validUntilMs: r.validUntilMs };
      },
      { type: ICS_CONTENT_TYPE, headers: [['Content-Disposition', 'inline; filename="family-events.ics"']] },
    );
  };

  /** The record of one event for a page, or the page saying it is gone (410) or was never here (404). */
  // Every event keeps its page whatever its categories (it is the record's event_url): no exclusion here.
  const eventRecord = async (snap: LoadedSnapshot, id: string, plan: Pick<Plan, 'excludedCategories'>, signal: AbortSignal): Promise<EventRecord | PageFailure> => {
    const r = await svc.pool.event({ kind: 'event', snapshot: snap.ref, id, format: 'json', excludedCategories: [], webBaseUrl: config.webBaseUrl, calendar: null }, signal);
    if (!r.ok) return missing(r, id, plan);
    return JSON.parse(Buffer.from(r.body).toString('utf8')) as EventRecord;
  };

  /** A listing of events like one: its city and its first category that keyless browsing lists. */
  const similarHref = (city: string, categories: readonly string[], plan: Pick<Plan, 'excludedCategories'>): string => {
    const category = categories.find((c) => !plan.excludedCategories.includes(c));
    const q = new URLSearchParams({ city, ...(category ? { category } : {}) });
    return `/events?${q.toString()}`;
  };

  const missing = (r: EventMissing | TaskFailure, id: string, plan: Pick<Plan, 'excludedCategories'>): PageFailure => {
    if (r.code !== 'not_found') workerFailed(r);
    const m = r as EventMissing;
    if (m.gone) return { ok: false, status: 410, html: gonePage(site, { gone: m.gone, similarHref: similarHref(m.gone.venue_city, m.gone.categories, plan) }) };
    return { ok: false, status: 404, html: notFoundPage(site, { path: `/events/${id}` }) };
  };

  const eventPageReply = (req: Request, id: string): Promise<Reply> => {
    const snap = svc.snapshots.require();
    const plan = { excludedCategories: unlistedNow() };
    return page(req, 'web:/events/{id}', `event\0${id}\0${listedKey(plan)}`, async (signal) => {
      const rec = await eventRecord(snap, id, plan, signal);
      if ('ok' in rec) return rec;
      const nowMs = config.now().getTime();
      const out = eventPage(site, rec, {
        nowMs,
        icsPath: `/events/${id}.ics`,
        similarPath: similarHref(rec.venue.city, rec.categories, plan),
        unlistedCategories: plan.excludedCategories,
      });
      // The page says "has ended" once the event is over: it is right until then.
      const endMs = Date.parse(rec.end_datetime ?? rec.start_datetime);
      return { body: out.html, validUntilMs: endMs > nowMs ? endMs : null };
    });
  };

  const eventIcsReply = (req: Request, id: string): Promise<Reply> => {
    const snap = svc.snapshots.require();
    const plan = { excludedCategories: unlistedNow() };
    const cal: CalendarInfo = { name: site.name, url: `${config.webBaseUrl}/events/${id}`, stamp: snap.manifest.built_at };
    return page(
      req,
      'web:/events/{id}.ics',
      `event.ics\0${id}\0${listedKey(plan)}`,
      async (signal) => {
        const r = await svc.pool.event({ kind: 'event', snapshot: snap.ref, id, format: 'ics', excludedCategories: [], webBaseUrl: config.webBaseUrl, calendar: cal }, signal);
        if (!r.ok) return missing(r, id, plan);
        return { body: r.body, validUntilMs: null };
      },
      { type: ICS_CONTENT_TYPE, headers: [['Content-Disposition', `attachment; filename="${id}.ics"`]] },
    );
  };

  /** City pages by slug, per snapshot (the city list changes only with it). */
  let citySlugs: { id: string; bySlug: Map<string, string> } | null = null;
  const cityBySlug = (snap: LoadedSnapshot, slug: string): string | undefined => {
    if (citySlugs?.id !== snap.ref.id) citySlugs = { id: snap.ref.id, bySlug: new Map(snap.manifest.cities.map((c) => [citySlug(c), c])) };
    return citySlugs.bySlug.get(slug);
  };

  const home = (req: Request): Promise<Reply> => {
    const snap = svc.snapshots.require();
    const unlisted = unlistedNow();
    return page(req, 'web:/', `home\0${listedKey({ excludedCategories: unlisted })}`, () =>
      Promise.resolve({
        body: homePage(site, {
          cities: snap.manifest.cities,
          // The categories a visitor can browse: a link to one keyless browsing leaves out would be a 403.
          categories: CATEGORY_SLUGS.filter((slug) => !unlisted.includes(slug)).map((slug) => ({ slug, name: CATEGORY_LABELS[slug], events: snap.manifest.categories[slug] ?? 0 })),
          totalEvents: snap.manifest.counts.events,
          updatedAt: snap.manifest.built_at,
        }),
        validUntilMs: null,
      }),
    );
  };

  const docs = (req: Request): Promise<Reply> => {
    const snap = svc.snapshots.require();
    return page(req, 'web:/docs', 'docs', async (signal) => {
      const example = await search(snap, { ...queryOf(snap, {} as SearchParams, 1, null), limit: 1 }, [], signal);
      const openapi = JSON.parse(svc.openapi().toString('utf8')) as Parameters<typeof docsPage>[1]['openapi'];
      return { body: docsPage(site, { openapi, example: example.records[0] ?? null, plans: svc.meter.plans }), validUntilMs: null };
    });
  };

  const errorsDoc = (req: Request): Promise<Reply> => page(req, 'web:/docs/errors', 'docs/errors', () => Promise.resolve({ body: errorsPage(site), validUntilMs: null }));

  const dispatch = (req: Request): Reply | Promise<Reply> => {
    const p = req.path;
    const asset = statics.get(p);
    if (asset) return keptReply(req, asset, asset.type, 'web:/static', true, [], null);
    if (p === '/robots.txt') return { status: 200, headers: [['Content-Type', 'text/plain; charset=utf-8'], ['Cache-Control', STATIC_CACHE_CONTROL]], body: 'User-agent: *\nAllow: /\n', route: 'web:/robots.txt' };
    if (p === '/' || p === '') return home(req);
    if (p === '/events' || p === '/events/') return listing(req, 'web:/events', '/events', 'Family events in the Bay Area', {});
    if (p === '/events.ics') return calendar(req);
    if (p === '/docs' || p === '/docs/') return docs(req);
    if (p === '/docs/errors') return errorsDoc(req);
    const m = /^\/(events|cities|categories)\/([^/]+)$/.exec(p);
    if (m) {
      const [, kind, raw] = m as unknown as [string, string, string];
      if (kind === 'events') {
        if (raw.endsWith('.ics') && EVENT_ID_PATTERN.test(raw.slice(0, -4))) return eventIcsReply(req, raw.slice(0, -4));
        if (EVENT_ID_PATTERN.test(raw)) return eventPageReply(req, raw);
      } else if (kind === 'cities') {
        const city = cityBySlug(svc.snapshots.require(), raw);
        if (city) return listing(req, 'web:/cities/{city}', p, `Family events in ${city}`, { city });
      } else if ((CATEGORY_SLUGS as readonly string[]).includes(raw)) {
        const name = CATEGORY_LABELS[raw as CategorySlug];
        return listing(req, 'web:/categories/{slug}', p, `${name} for families`, { category: raw });
      }
    }
    return htmlReply(404, notFoundPage(site, { path: p.slice(0, 200) }), 'web:unmatched');
  };

  // The account pages take POSTs of their own forms; every other page is GET/HEAD only.
  const oidc = config.oidc;
  const provider =
    oidc === null
      ? null
      : lazyClient({ ...oidc, redirectUri: `${config.webBaseUrl}${OIDC_CALLBACK_PATH}`, allowHttp: oidc.issuer.startsWith('http:') }); // config.ts allows http for a loopback issuer only
  const account = createAccount({ config, site, meter: svc.meter, mailer: svc.mailer, provider, secret: svc.webSecret, log });
  const pages = (req: Request): Reply | Promise<Reply> =>
    req.method !== 'GET' && req.method !== 'HEAD' ? htmlReply(405, methodNotAllowedPage(site), 'web:unmatched', [['Allow', ALLOW]]) : dispatch(req);

  return (req) => {
    const fail = (err: unknown): Reply => {
      if (err instanceof ApiError && err.code === 'unavailable') {
        const retry = err.headers.find(([k]) => k === 'Retry-After')?.[1] ?? '5';
        return htmlReply(503, unavailablePage(site, { retryAfterS: Number(retry) }), 'web', [['Retry-After', retry]]);
      }
      log.error({ path: req.path.slice(0, 200), err: (err as Error).message, stack: (err as Error).stack }, 'website page failed');
      return htmlReply(500, internalErrorPage(site), 'web');
    };
    try {
      const out = account(req) ?? pages(req);
      return out instanceof Promise ? out.catch(fail) : out;
    } catch (err) {
      return fail(err);
    }
  };
}
