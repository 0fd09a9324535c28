// The sitemap (sitemaps.org protocol 0.9) that search engines read to find every event page.
// Always a sitemap index, so one form serves any snapshot: /sitemap.xml names /sitemaps/pages.xml
// (home, browse, each city's and listed category's page, the docs: the overview, a page per route, the error codes) and /sitemaps/events-1.xml,
// events-2.xml … of at most 50,000 event pages each (the protocol's cap per file; its 50 MB cap is
// far off: an entry is about 120 bytes). Each is rendered once per snapshot and kept, compressed
// and ETagged like any page. Every event of the snapshot is listed, whatever its categories: each
// keeps its page (event.ts). The ids come from the query workers (a search of all time in start
// order, paged), never from the snapshot's files on this thread.
// <lastmod> is the snapshot's build time, the same instant each page's Last-Modified header gives:
// a snapshot records no per-event change time, and a page is rendered anew from each snapshot.
import type { Reply, Request } from '../../http.ts';
import type { LoadedSnapshot } from '../../snapshots.ts';
import type { SearchQuery } from '../../../query/protocol.ts';
import { CATEGORY_SLUGS } from '../../../core/taxonomy.ts';
import { docsSlugs, type OpenApiDoc } from '../pages/docs.ts';
import { notFoundPage } from '../pages/errors.ts';
import { citySlug } from '../pages/home.ts';
import type { SiteContext } from './context.ts';
// The five characters sitemaps.org says to entity-escape (& < > " '), by the escaper the website's
// templates use (' as &#39;, a character reference XML reads as '). Not an XML builder:
// fast-xml-parser's (a dependency) took 1.6 s of this thread for a 50,000-URL file.
import escapeHtml from 'escape-html';

export const SITEMAP_PATH = '/sitemap.xml';
/** The sitemaps.org cap on the URLs of one sitemap file. */
export const URLS_PER_SITEMAP = 50_000;
/** Records a search brings back at once while a sitemap is made: a few MB of JSON per search. */
const EVENTS_PER_SEARCH = 1_000;
export const EVENTS_SITEMAP = /^\/sitemaps\/events-([1-9]\d{0,8})\.xml$/;
const XML_TYPE = 'application/xml; charset=utf-8';
const XMLNS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** Every event, from the earliest start to the latest end a date can have (ECMAScript's ±8.64e15 ms). */
const allEvents = (offset: number, limit: number): SearchQuery => ({
  cities: null,
  geo: null,
  ages: null,
  categories: null,
  words: null,
  isFree: null,
  range: { fromMs: -8.64e15, toMs: 8.64e15 },
  sort: 'start',
  limit,
  offset,
});

/** W3C Datetime to the second, in UTC: what sitemaps.org asks of <lastmod>. */
export const w3cDatetime = (iso: string): string => `${new Date(iso).toISOString().slice(0, 19)}Z`;

function urlset(locs: readonly string[], lastmod: string): string {
  const mod = escapeHtml(lastmod);
  const urls = locs.map((loc) => `<url><loc>${escapeHtml(loc)}</loc><lastmod>${mod}</lastmod></url>\n`);
  return `${XML_DECLARATION}<urlset xmlns="${XMLNS}">\n${urls.join('')}</urlset>\n`;
}

function sitemapIndex(locs: readonly string[], lastmod: string): string {
  const mod = escapeHtml(lastmod);
  const maps = locs.map((loc) => `<sitemap><loc>${escapeHtml(loc)}</loc><lastmod>${mod}</lastmod></sitemap>\n`);
  return `${XML_DECLARATION}<sitemapindex xmlns="${XMLNS}">\n${maps.join('')}</sitemapindex>\n`;
}

export function sitemapRoutes(ctx: SiteContext) {
  const { svc, config, site, page, search, unlistedNow, listedKey } = ctx;
  const base = config.webBaseUrl;
  const lastmodOf = (snap: LoadedSnapshot): string => w3cDatetime(snap.manifest.built_at);

  /** The index: the site's pages, then one sitemap per 50,000 events of the snapshot. */
  const index = (req: Request): Promise<Reply> => {
    const snap = svc.snapshots.require();
    return page(
      req,
      'web:/sitemap.xml',
      'sitemap.xml',
      async (signal) => {
        const { total } = await search(snap, allEvents(0, 1), [], signal);
        const maps = [`${base}/sitemaps/pages.xml`];
        for (let n = 1; (n - 1) * URLS_PER_SITEMAP < total; n++) maps.push(`${base}/sitemaps/events-${n}.xml`);
        return { body: sitemapIndex(maps, lastmodOf(snap)), validUntilMs: null };
      },
      { type: XML_TYPE },
    );
  };

  /** The pages worth finding besides events: those the home page and the navigation link to. */
  const pages = (req: Request): Promise<Reply> => {
    const snap = svc.snapshots.require();
    const unlisted = unlistedNow();
    return page(
      req,
      'web:/sitemaps/pages.xml',
      `sitemaps/pages.xml\0${listedKey({ excludedCategories: unlisted })}`,
      () => {
        const paths = [
          '/',
          '/events',
          // A category keyless browsing does not list is a 403 page, one without events an empty one.
          ...CATEGORY_SLUGS.filter((slug) => !unlisted.includes(slug) && (snap.manifest.categories[slug] ?? 0) > 0).map((slug) => `/categories/${slug}`),
          ...snap.manifest.cities.map((city) => `/cities/${citySlug(city)}`),
          '/docs',
          // A page for each route of the OpenAPI document, as the site routes them.
          ...docsSlugs(JSON.parse(svc.openapi().toString('utf8')) as OpenApiDoc).map((slug) => `/docs/${slug}`),
          '/docs/errors',
        ];
        return Promise.resolve({
          body: urlset(
            [...new Set(paths)].map((p) => base + p),
            lastmodOf(snap),
          ),
          validUntilMs: null,
        });
      },
      { type: XML_TYPE },
    );
  };

  /** Events (n-1)·50,000 to n·50,000 - 1 in start order; a 404 page past the last. */
  const events = (req: Request, n: number): Promise<Reply> => {
    const snap = svc.snapshots.require();
    return page(
      req,
      'web:/sitemaps/events-{n}.xml',
      `sitemaps/events\0${n}`,
      async (signal) => {
        const first = (n - 1) * URLS_PER_SITEMAP;
        const locs: string[] = [];
        for (let offset = first; offset < first + URLS_PER_SITEMAP; offset += EVENTS_PER_SEARCH) {
          const r = await search(snap, allEvents(offset, Math.min(EVENTS_PER_SEARCH, first + URLS_PER_SITEMAP - offset)), [], signal);
          for (const rec of r.records) locs.push(rec.event_url);
          if (r.records.length === 0 || offset + r.records.length >= r.total) break;
        }
        if (locs.length === 0) return { ok: false, status: 404, html: notFoundPage(site, { path: req.path.slice(0, 200) }) };
        return { body: urlset(locs, lastmodOf(snap)), validUntilMs: null };
      },
      { type: XML_TYPE },
    );
  };

  return { index, pages, events };
}
