// An event's page and its .ics: every record's event_url, free to read (no rate limit), kept
// whatever the event's categories.
import type { Reply, Request } from '../../http.ts';
import type { LoadedSnapshot } from '../../snapshots.ts';
import type { EventRecord } from '../../../core/record.ts';
import type { CalendarInfo, EventMissing, TaskFailure } from '../../../query/protocol.ts';
import { ICS_CONTENT_TYPE } from '../../../query/ical.ts';
import { eventPage } from '../pages/event.ts';
import { gonePage, notFoundPage } from '../pages/errors.ts';
import { workerFailed, type PageFailure, type SiteContext } from './context.ts';
import type { Plan } from '../../../ledger/accounts.ts';

export function eventRoutes(ctx: SiteContext) {
  const { svc, config, site, page, unlistedNow, listedKey } = ctx;

  /** The record of one event for a page, or the page saying it is gone (410) or was never here (404). */
  // Every event keeps its page whatever its categories (it is the record's event_url): no exclusion here.
  const eventRecord = async (
    snap: LoadedSnapshot,
    id: string,
    plan: Pick<Plan, 'excludedCategories'>,
    signal: AbortSignal,
  ): Promise<EventRecord | PageFailure> => {
    const r = await svc.pool.event(
      { kind: 'event', snapshot: snap.ref, id, format: 'json', excludedCategories: [], webBaseUrl: config.webBaseUrl, calendar: null },
      signal,
    );
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
    const m = r;
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
        const r = await svc.pool.event(
          { kind: 'event', snapshot: snap.ref, id, format: 'ics', excludedCategories: [], webBaseUrl: config.webBaseUrl, calendar: cal },
          signal,
        );
        if (!r.ok) return missing(r, id, plan);
        return { body: r.body, validUntilMs: null };
      },
      { type: ICS_CONTENT_TYPE, headers: [['Content-Disposition', `attachment; filename="${id}.ics"`]] },
    );
  };

  return { eventPageReply, eventIcsReply };
}
