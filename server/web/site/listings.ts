// Listings: browse, a city's page, a category's page, and the same search as a calendar.
// Because it needs no key, it is kept at a person's scale (issue 26: it had become a keyless bulk
// feed): listings and a search's calendar are rate-limited per client address, list only what the
// Community plan (the demo's, a keyless caller's) includes, and a calendar holds one page of events.
// A single event's page and .ics stay free: they are every record's event_url.
import { setMaxListeners } from 'node:events';
import { isIPv6 } from 'node:net';
import * as v from 'valibot';
import { ApiError, type ParamError } from '../../errors.ts';
import type { Reply, Request } from '../../http.ts';
import { MAX_OFFSET, searchParams, type SearchParams } from '../../params.ts';
import { queryKey } from '../../query.ts';
import { issuesToErrors, parseQuery } from '../../querystring.ts';
import { RateLimiter } from '../../ratelimit.ts';
import type { LoadedSnapshot } from '../../snapshots.ts';
import type { CalendarInfo, SearchQuery } from '../../../query/protocol.ts';
import type { EventRecord } from '../../../core/record.ts';
import { ICS_CONTENT_TYPE } from '../../../query/ical.ts';
import { CATEGORY_LABELS, CATEGORY_SLUGS, type CategorySlug } from '../../../core/taxonomy.ts';
import { browsePage, websiteError, type BrowseInput } from '../pages/browse.ts';
import { searchHeading } from '../pages/search-heading.ts';
import { badRequestPage, categoryNotListedPage, tooManyRequestsPage } from '../pages/errors.ts';
import { citySlug } from '../pages/home.ts';
import { KEYLESS_PLAN, type PageFailure, type SiteContext } from './context.ts';
import { WEB_FILTERS, webFilters, type WebFilters } from './filters.ts';
import type { Plan } from '../../../ledger/accounts.ts';

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

/** Everything a browse-like page is asked: the filters as given (empty fields dropped) and their parse. */
interface Listing {
  readonly values: Record<string, string>;
  readonly parsed: SearchParams | null;
  readonly errors: readonly ParamError[];
  /** The website's own filters (when, near, miles) as the search they mean. */
  readonly web: WebFilters | null;
}

const browseSchema = searchParams({ maxLimit: BROWSE_MAX_LIMIT, defaultLimit: BROWSE_LIMIT });
const API_NAMES: ReadonlySet<string> = new Set(Object.keys(browseSchema.pipe[0].entries));
const FILTER_NAMES: ReadonlySet<string> = new Set([...API_NAMES, ...WEB_FILTERS]);

/**
 * A form submits every field, filled or not, and links from elsewhere carry tracking parameters:
 * the website reads the filters it knows, ignores empty fields and anything else, and reports
 * the problems of the rest on the page (the API, for machines, refuses unknown parameters instead).
 */
function readListing(rawQuery: string, schema: typeof browseSchema, now: Date, fixed: Readonly<Record<string, string>> = {}): Listing {
  const { values: raw, errors: all } = parseQuery(rawQuery);
  const values: Record<string, string> = {};
  for (const [k, val] of Object.entries(raw)) if (FILTER_NAMES.has(k) && val.trim() !== '') values[k] = val.trim();
  Object.assign(values, fixed);
  // A tracking parameter given twice is as ignorable as one given once.
  const errors = all.filter((e) => FILTER_NAMES.has(e.param));
  if (errors.length) return { values, parsed: null, errors, web: null };
  // The website's own filters become API parameters, checked with the rest as the API checks them.
  const web = webFilters(values, now);
  const api: Record<string, string> = {};
  for (const [k, val] of Object.entries(values)) if (API_NAMES.has(k) && !web.drop.includes(k)) api[k] = val;
  Object.assign(api, web.api);
  const r = v.safeParse(schema, api);
  const found = [...web.errors, ...(r.success ? [] : issuesToErrors(r.issues))];
  return r.success && found.length === 0 ? { values, parsed: r.output, errors: [], web } : { values, parsed: null, errors: found, web };
}

/**
 * A link's point (lat, lng, radius_km) has no field of its own on the form: its errors are said at
 * the place field, where a person gives a place instead.
 */
const POINT_LABELS: Readonly<Record<string, string>> = {
  lat: 'The link’s latitude',
  lng: 'The link’s longitude',
  radius_km: 'The link’s distance',
};
const pointAtNear = (e: ParamError): ParamError => {
  const label = POINT_LABELS[e.param];
  return label === undefined ? e : { param: 'near', message: `${label} ${e.message}; or type a ZIP code or a town instead.` };
};

/** The canonical query with the website's own date range, when it names one (today, tomorrow, the weekend). */
const withWebRange = (query: SearchQuery, web: WebFilters | null): SearchQuery => (web?.range ? { ...query, range: web.range } : query);

/** A listing's query string without paging: the same search as a link, a calendar, another page. */
function filterQuery(values: Readonly<Record<string, string>>, drop: readonly string[] = ['offset']): string {
  const params = new URLSearchParams(Object.entries(values).filter(([k]) => !drop.includes(k)));
  params.sort();
  return params.toString();
}

const withQuery = (p: string, q: string): string => (q ? `${p}?${q}` : p);

/** Parameters that page or order a search without changing what it finds. */
const PAGING: ReadonlySet<string> = new Set(['offset', 'limit', 'sort']);

/** A parameter's error on a website page: named by the form's label, in the form's words (the API keeps its names). */
const asShown = (e: ParamError): ParamError => {
  const w = websiteError(e);
  return { param: w.label, message: w.message };
};

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
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

export function listingRoutes(ctx: SiteContext) {
  const { svc, config, site, htmlReply, page, runSearch, listedKey, queryOf } = ctx;

  /**
   * The plan keyless browsing follows, as the ledger has it now (the meter mirrors the plans, so
   * this is a lookup, and a change with `plans set` reaches the website within a second).
   */
  const keyless = (): Plan => {
    const plan = svc.meter.plan(KEYLESS_PLAN);
    if (!plan)
      throw new ApiError('unavailable', `The ${KEYLESS_PLAN} plan the website follows is missing from the accounts store.`, undefined, [['Retry-After', '5']]);
    return plan;
  };
  const label = (slug: string): string => CATEGORY_LABELS[slug as CategorySlug] ?? slug;

  /** The categories of a search that keyless browsing does not list: a 403 page says so. */
  const unlistedOf = (p: SearchParams, plan: Plan): string[] => [...new Set(p.category ?? [])].filter((c) => plan.excludedCategories.includes(c)).sort();

  /** Per client address: null when allowed, else the 429 page. HEAD and 304 count as well (each is a request). */
  // WEB_LISTINGS_PER_MINUTE and WEB_CALENDARS_PER_MINUTE (60 and 10 by default); a load test raises them.
  const limiter = new RateLimiter(config.webListingsPerMinute);
  const throttled = (req: Request, route: string, what: 'listing' | 'calendar'): Reply | null => {
    const perMinute = what === 'listing' ? config.webListingsPerMinute : config.webCalendarsPerMinute;
    const verdict = limiter.take(`${what}\0${clientKey(req.remoteAddress)}`, perMinute);
    if (verdict.allowed) return null;
    const retry = String(Math.max(1, verdict.retryAfterS));
    return htmlReply(429, tooManyRequestsPage(site, { what, perMinute, retryAfterS: verdict.retryAfterS }), route, [['Retry-After', retry]]);
  };

  const cityNames = (snap: LoadedSnapshot): string[] => [...snap.manifest.cities];
  const categoryOptions = (plan: Plan): { slug: string; name: string }[] =>
    CATEGORY_SLUGS.filter((slug) => !plan.excludedCategories.includes(slug)).map((slug) => ({ slug, name: CATEGORY_LABELS[slug] }));

  /**
   * How many events each listing lists now (its page's total), for pages that link to listings
   * with a count (home): the same parse, plan and query as the listing itself, so the count beside
   * a link is the number its page shows (upcoming events, in the categories keyless browsing
   * lists). `validUntilMs` is when the first of those totals changes (an event ends).
   */
  const listingTotals = async (
    snap: LoadedSnapshot,
    plan: Plan,
    pages: readonly Readonly<Record<string, string>>[],
    signal: AbortSignal,
  ): Promise<{ totals: number[]; validUntilMs: number | null }> => {
    // One search per listing, all on the same signal: each listens for its abort, on purpose.
    setMaxListeners(pages.length + 10, signal);
    const answers = await Promise.all(
      pages.map((fixed) => {
        const l = readListing('', browseSchema, config.now(), fixed);
        if (l.parsed === null) throw new Error(`a listing's fixed filter does not parse: ${JSON.stringify(fixed)}`);
        // One record a page: only the total is read, and it does not depend on the page size.
        return runSearch(snap, queryOf(snap, l.parsed, 1, plan), plan.excludedCategories, 'json', null, signal);
      }),
    );
    const ends = answers.flatMap((a) => (a.validUntilMs === null ? [] : [a.validUntilMs]));
    return { totals: answers.map((a) => a.total), validUntilMs: ends.length ? Math.min(...ends) : null };
  };

  /** Browse, a city's page and a category's page: the same listing, with a filter fixed by the path. */
  const listing = async (req: Request, route: string, pagePath: string, heading: string, fixed: Record<string, string>, intro?: string): Promise<Reply> => {
    const refused = throttled(req, route, 'listing');
    if (refused) return refused;
    const snap = svc.snapshots.require();
    const plan = keyless();
    const now = config.now();
    const l = readListing(req.rawQuery, browseSchema, now, fixed);
    const nowMs = now.getTime();
    // Whether the visitor narrowed this page beyond what its path fixes (paging and order narrow nothing).
    const narrowed = Object.keys(l.values).some((k) => !(k in fixed) && k !== 'offset' && k !== 'limit' && k !== 'sort');
    const base = (results: BrowseInput['results'], given: readonly ParamError[], unlisted: readonly string[] = []): BrowseInput => {
      const errors = given.map(pointAtNear);
      const q = filterQuery(l.values, ['offset', 'limit']);
      const feeds = errors.length === 0 && unlisted.length === 0;
      // A search that ran is named by what it asked (more than the page's own filter); one that
      // could not run keeps the page's heading, its errors say the rest.
      const asked = Object.keys(l.values).some((k) => !Object.hasOwn(fixed, k) && !PAGING.has(k));
      const described = results !== null && asked ? searchHeading(l.values, { cities: cityNames(snap), nowMs, place: l.web?.place ?? null }) : null;
      return {
        heading: described ?? heading,
        ...(intro ? { intro } : {}),
        path: pagePath,
        form: { action: '/events', values: l.values, cities: cityNames(snap), categories: categoryOptions(plan) },
        errors,
        results,
        subscribeHref: feeds ? `${config.webBaseUrl.replace(/^https?:/, 'webcal:')}${withQuery('/events.ics', q)}` : null,
        icsHref: feeds ? `${config.webBaseUrl}${withQuery('/events.ics', q)}` : null,
        ...(feeds ? { calendarEvents: BROWSE_LIMIT } : {}),
        ...(unlisted.length ? { unlisted: { categories: unlisted.map(label), planName: label(plan.name) } } : {}),
        empty: { filtered: narrowed, scope: fixed.city ?? (fixed.category === undefined ? null : label(fixed.category)) },
        nowMs,
        near: l.web?.place ?? null,
        byDistance: l.web?.byDistance === true,
      };
    };
    const invalid = (errors: readonly ParamError[]): PageFailure => ({ ok: false, status: 400, html: browsePage(site, base(null, errors)) });
    if (l.parsed === null) return htmlReply(400, browsePage(site, base(null, l.errors)), route);
    // Asked for a category keyless browsing leaves out: said plainly, with the form to search again.
    const unlisted = unlistedOf(l.parsed, plan);
    if (unlisted.length) return htmlReply(403, browsePage(site, base(null, [], unlisted)), route);
    let query: SearchQuery;
    try {
      query = withWebRange(queryOf(snap, l.parsed, BROWSE_LIMIT, plan), l.web);
    } catch (err) {
      if (err instanceof ApiError && err.errors) return htmlReply(400, invalid(err.errors).html, route);
      throw err;
    }
    return page(req, route, `browse\0${pagePath}\0${queryKey(query)}\0${filterQuery(l.values)}\0${listedKey(plan)}`, async (signal) => {
      // The envelope as the API serves it, did_you_mean included: the website suggests what the API does.
      const r = await runSearch(snap, query, plan.excludedCategories, 'json', null, signal);
      const found = JSON.parse(Buffer.from(r.body).toString('utf8')) as { events: EventRecord[]; total: number; did_you_mean?: string };
      const pageHref = (offset: number, q?: string): string => {
        const vals = { ...l.values };
        for (const k of Object.keys(fixed)) delete vals[k];
        if (offset > 0) vals.offset = String(offset);
        else delete vals.offset;
        if (q !== undefined) vals.q = q;
        return withQuery(pagePath, filterQuery(vals, []));
      };
      const suggestion = found.did_you_mean === undefined ? null : { q: found.did_you_mean, href: pageHref(0, found.did_you_mean) };
      const prev = query.offset > 0 ? pageHref(Math.max(0, query.offset - query.limit)) : null;
      const next = query.offset + query.limit < found.total && query.offset + query.limit <= MAX_OFFSET ? pageHref(query.offset + query.limit) : null;
      const html = browsePage(
        site,
        base({ records: found.events, total: found.total, offset: query.offset, limit: query.limit, prevHref: prev, nextHref: next, suggestion }, []),
      );
      return { body: html, validUntilMs: r.validUntilMs };
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
    const l = readListing(req.rawQuery, browseSchema, config.now());
    if (l.parsed === null)
      return htmlReply(400, badRequestPage(site, { detail: 'The calendar link has filters we cannot read.', errors: l.errors.map(asShown) }), route);
    const unlisted = unlistedOf(l.parsed, plan);
    if (unlisted.length) return htmlReply(403, categoryNotListedPage(site, { categories: unlisted.map(label), planName: label(plan.name) }), route);
    let query: SearchQuery;
    try {
      query = { ...withWebRange(queryOf(snap, l.parsed, BROWSE_LIMIT, plan), l.web), offset: 0 };
    } catch (err) {
      if (err instanceof ApiError && err.errors)
        return htmlReply(400, badRequestPage(site, { detail: 'The calendar link has filters we cannot read.', errors: err.errors.map(asShown) }), route);
      throw err;
    }
    const q = filterQuery(l.values, ['offset', 'limit']);
    const cal: CalendarInfo = {
      name: `${site.name}${l.values.city ? ` in ${l.values.city}` : ''}`,
      url: `${config.webBaseUrl}${withQuery('/events', q)}`,
      stamp: snap.manifest.built_at,
    };
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

  /** City pages by slug, per snapshot (the city list changes only with it). */
  let citySlugs: { id: string; bySlug: Map<string, string> } | null = null;
  const cityBySlug = (snap: LoadedSnapshot, slug: string): string | undefined => {
    if (citySlugs?.id !== snap.ref.id) citySlugs = { id: snap.ref.id, bySlug: new Map(snap.manifest.cities.map((c) => [citySlug(c), c])) };
    return citySlugs.bySlug.get(slug);
  };

  return { listing, listingTotals, keyless, calendar, cityBySlug };
}
