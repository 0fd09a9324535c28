// The website host: event pages at every event_url, browsing, add-to-calendar, docs and home. It
// answers on the same listener as the API (server/app.ts hands it every path that is not the API's)
// and goes through the same HTTP adapter, query workers and response cache, but never through the
// API's routes: browsing is for people, needs no key and counts toward no quota (spec §8).
// Each kind of page has its module (listings and calendars, event pages, home, docs, the static
// files); this one routes a path to its page, and hands the account pages their own routes.
import { ApiError } from '../../errors.ts';
import type { Reply, Request } from '../../http.ts';
import type { Logger } from '../../log.ts';
import { CATEGORY_LABELS, CATEGORY_SLUGS, type CategorySlug } from '../../../core/taxonomy.ts';
import { createAccount, OIDC_CALLBACK_PATH } from '../account/index.ts';
import { lazyClient } from '../oidc.ts';
import { internalErrorPage, methodNotAllowedPage, notFoundPage, unavailablePage } from '../pages/errors.ts';
import { siteContext, STATIC_CACHE_CONTROL, type SiteServices } from './context.ts';
import { docsRoutes } from './docs.ts';
import { eventRoutes } from './event.ts';
import { homeRoutes } from './home.ts';
import { listingRoutes } from './listings.ts';
import { sitemapRoutes, EVENTS_SITEMAP, SITEMAP_PATH } from './sitemap.ts';
import { IMMUTABLE_CACHE_CONTROL, loadStatic } from './static.ts';
import { EVENT_ID_PATTERN } from '../../../core/ids.ts';

export type { SiteServices } from './context.ts';

const ALLOW = 'GET, HEAD';
/** A reference page's path: its slug is checked against the OpenAPI document's (docsSlugs), a 404 page otherwise. */
const DOCS_PAGE = /^\/docs\/([a-z0-9-]{1,80})$/;

export function createSite(svc: SiteServices, log: Logger): (req: Request) => Reply | Promise<Reply> {
  const statics = loadStatic();
  const ctx = siteContext(svc, log, statics.assets);
  const { config, site, htmlReply, keptReply } = ctx;
  const listings = listingRoutes(ctx);
  const { listing, calendar, cityBySlug } = listings;
  const { eventPageReply, eventIcsReply } = eventRoutes(ctx);
  const { home } = homeRoutes(ctx, listings);
  const { docs, endpointDoc, errorsDoc } = docsRoutes(ctx);
  const sitemap = sitemapRoutes(ctx);

  const dispatch = (req: Request): Reply | Promise<Reply> => {
    const p = req.path;
    const asset = statics.lookup(p);
    if (asset) return keptReply(req, asset, asset.type, 'web:/static', true, [], null, asset.immutable ? IMMUTABLE_CACHE_CONTROL : STATIC_CACHE_CONTROL);
    if (p === '/robots.txt')
      return {
        status: 200,
        headers: [
          ['Content-Type', 'text/plain; charset=utf-8'],
          ['Cache-Control', STATIC_CACHE_CONTROL],
        ],
        body: `User-agent: *\nAllow: /\nSitemap: ${config.webBaseUrl}${SITEMAP_PATH}\n`,
        route: 'web:/robots.txt',
      };
    if (p === '/' || p === '') return home(req);
    if (p === '/events' || p === '/events/') return listing(req, 'web:/events', '/events', 'Family events in the Bay Area', {});
    if (p === '/events.ics') return calendar(req);
    if (p === '/docs' || p === '/docs/') return docs(req);
    if (p === '/docs/errors') return errorsDoc(req);
    const docsPath = DOCS_PAGE.exec(p);
    if (docsPath) return endpointDoc(req, docsPath[1] ?? '');
    if (p === SITEMAP_PATH) return sitemap.index(req);
    if (p === '/sitemaps/pages.xml') return sitemap.pages(req);
    const events = EVENTS_SITEMAP.exec(p);
    if (events) return sitemap.events(req, Number(events[1]));
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
    oidc === null ? null : lazyClient({ ...oidc, redirectUri: `${config.webBaseUrl}${OIDC_CALLBACK_PATH}`, allowHttp: oidc.issuer.startsWith('http:') }); // config.ts allows http for a loopback issuer only
  const account = createAccount({ config, site, meter: svc.meter, mailer: svc.mailer, afterAnswer: svc.afterAnswer, provider, secret: svc.webSecret, log });
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
