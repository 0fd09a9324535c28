// The home page: the cities and the categories a visitor can browse.
import type { Reply, Request } from '../../http.ts';
import { CATEGORY_LABELS, CATEGORY_SLUGS } from '../../../core/taxonomy.ts';
import { homePage } from '../pages/home.ts';
import type { SiteContext } from './context.ts';

export function homeRoutes(ctx: SiteContext) {
  const { svc, site, page, unlistedNow, listedKey } = ctx;

  const home = (req: Request): Promise<Reply> => {
    const snap = svc.snapshots.require();
    const unlisted = unlistedNow();
    return page(req, 'web:/', `home\0${listedKey({ excludedCategories: unlisted })}`, () =>
      Promise.resolve({
        body: homePage(site, {
          cities: snap.manifest.cities,
          // The categories a visitor can browse: a link to one keyless browsing leaves out would be a 403.
          categories: CATEGORY_SLUGS.filter((slug) => !unlisted.includes(slug)).map((slug) => ({
            slug,
            name: CATEGORY_LABELS[slug],
            events: snap.manifest.categories[slug] ?? 0,
          })),
          totalEvents: snap.manifest.counts.events,
          updatedAt: snap.manifest.built_at,
        }),
        validUntilMs: null,
      }),
    );
  };

  return { home };
}
