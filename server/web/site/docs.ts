// The docs: generated from the OpenAPI document, with a live example, and the errors' page.
import type { Reply, Request } from '../../http.ts';
import { docsPage, errorsPage } from '../pages/docs.ts';
import type { SiteContext } from './context.ts';

export function docsRoutes(ctx: SiteContext) {
  const { svc, site, page, search, queryOf } = ctx;

  const docs = (req: Request): Promise<Reply> => {
    const snap = svc.snapshots.require();
    return page(req, 'web:/docs', 'docs', async (signal) => {
      const example = await search(snap, { ...queryOf(snap, {}, 1, null), limit: 1 }, [], signal);
      const openapi = JSON.parse(svc.openapi().toString('utf8')) as Parameters<typeof docsPage>[1]['openapi'];
      return { body: docsPage(site, { openapi, example: example.records[0] ?? null, plans: svc.meter.plans }), validUntilMs: null };
    });
  };

  const errorsDoc = (req: Request): Promise<Reply> =>
    page(req, 'web:/docs/errors', 'docs/errors', () => Promise.resolve({ body: errorsPage(site), validUntilMs: null }));

  return { docs, errorsDoc };
}
