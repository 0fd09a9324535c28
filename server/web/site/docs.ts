// The docs, generated from the OpenAPI document: the overview at /docs, a page for each route at
// /docs/<slug> (the slugs come from the document, docsSlugs), and the errors' page.
import type { Reply, Request } from '../../http.ts';
import { docsEndpointPage, docsPage, errorsPage, type DocsInput, type OpenApiDoc } from '../pages/docs.ts';
import { notFoundPage } from '../pages/errors.ts';
import type { SiteContext } from './context.ts';

export function docsRoutes(ctx: SiteContext) {
  const { svc, site, config, page, search, queryOf } = ctx;
  const openapi = (): OpenApiDoc => JSON.parse(svc.openapi().toString('utf8')) as OpenApiDoc;

  /** What every docs page reads: the document, a record of the snapshot for the examples, the plans. */
  const input = async (signal: AbortSignal): Promise<DocsInput> => {
    const snap = svc.snapshots.require();
    const example = await search(snap, { ...queryOf(snap, {}, 1, null), limit: 1 }, [], signal);
    return { openapi: openapi(), example: example.records[0] ?? null, plans: svc.meter.plans, plansContact: config.plansContact };
  };

  const docs = (req: Request): Promise<Reply> =>
    page(req, 'web:/docs', 'docs', async (signal) => ({ body: docsPage(site, await input(signal)), validUntilMs: null }));

  /** /docs/<slug>: a 404 page for a slug the document has no route for. */
  const endpointDoc = (req: Request, slug: string): Promise<Reply> =>
    page(req, 'web:/docs/{slug}', `docs/${slug}`, async (signal) => {
      const body = docsEndpointPage(site, await input(signal), slug);
      return body === null ? { ok: false, status: 404, html: notFoundPage(site, { path: req.path.slice(0, 200) }) } : { body, validUntilMs: null };
    });

  const errorsDoc = (req: Request): Promise<Reply> =>
    page(req, 'web:/docs/errors', 'docs/errors', () => Promise.resolve({ body: errorsPage(site, openapi()), validUntilMs: null }));

  return { docs, endpointDoc, errorsDoc };
}
