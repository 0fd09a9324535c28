// The home page: the cities and the categories a visitor can browse, each with the number of
// events its page lists.
import type { Reply, Request } from '../../http.ts';
import { CATEGORY_LABELS, CATEGORY_SLUGS } from '../../../core/taxonomy.ts';
import { homePage } from '../pages/home.ts';
import type { SiteContext } from './context.ts';
import type { listingRoutes } from './listings.ts';

export function homeRoutes(ctx: SiteContext, listings: Pick<ReturnType<typeof listingRoutes>, 'listingTotals' | 'keyless'>) {
  const { svc, site, page, listedKey } = ctx;

  const home = (req: Request): Promise<Reply> => {
    const snap = svc.snapshots.require();
    const plan = listings.keyless();
    return page(req, 'web:/', `home\0${listedKey(plan)}`, async (signal) => {
      // The categories a visitor can browse: a link to one keyless browsing leaves out would be a 403.
      const categories = CATEGORY_SLUGS.filter((slug) => !plan.excludedCategories.includes(slug));
      const cities = snap.manifest.cities;
      // Counted by the listings themselves, not from the snapshot's manifest: the manifest counts
      // every event built, ended ones and unlisted categories included, so its numbers were never
      // what the linked page shows.
      const { totals, validUntilMs } = await listings.listingTotals(
        snap,
        plan,
        [{}, ...cities.map((city) => ({ city })), ...categories.map((category) => ({ category }))],
        signal,
      );
      const [all = 0, ...rest] = totals;
      return {
        body: homePage(site, {
          cities: cities.map((name, i) => ({ name, events: rest[i] ?? 0 })),
          categories: categories.map((slug, i) => ({ slug, name: CATEGORY_LABELS[slug], events: rest[cities.length + i] ?? 0 })),
          totalEvents: all,
          updatedAt: snap.manifest.built_at,
        }),
        validUntilMs,
      };
    });
  };

  return { home };
}
