// The change feed: /v1/changes (JSON) and /v1/changes.csv, for clients that keep a copy of the
// data and want only what changed. Every record added, changed, canceled or removed after a
// cursor, in (updated_at, id) order, keyset-paged by opaque cursors that stay exact across
// snapshot switches (query/changes.ts says why). A page is answered like a search's (cache,
// metering, ETag/304: search.ts answerLive): its records count toward the quota, its deletions
// are free, and the last page's body stays the same until something changes, so an idle poller
// holding its ETag pays nothing.
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.ts';
import { changesParams, type ChangesParams } from '../params.ts';
import { canonicalQuery, queryKey } from '../query.ts';
import { negotiate } from '../compress.ts';
import { defineRoute, type RouteRequest, type Services } from '../route.ts';
import type { LoadedSnapshot as Snapshot } from '../snapshots.ts';
import type { Plan } from '../../ledger/accounts.ts';
import type { SearchQuery } from '../../query/protocol.ts';
import { AFTER_ALL_IDS, CHANGES_CSV_COLUMNS, decodeCursor, DELETIONS_KEPT_DAYS, encodeCursor, type ChangesCursor } from '../../query/changes.ts';
import { FORMATS, type Format } from './formats.ts';
import { answerLive, feedLinks, rateLimited, type Prepared } from './search.ts';

export const CHANGES_MAX_LIMIT = 1000;
const CHANGES_DEFAULT_LIMIT = 100;

const CHANGES_FORMATS: Readonly<Record<'json' | 'csv', Format>> = {
  json: { ...FORMATS.json, maxLimit: CHANGES_MAX_LIMIT },
  // Buffered, unlike a search's CSV: a page is at most CHANGES_MAX_LIMIT rows.
  csv: { ...FORMATS.csv, maxLimit: CHANGES_MAX_LIMIT, streamed: false, headers: () => [['Content-Disposition', 'attachment; filename="changes.csv"']] },
};

const invalid = (param: string, message: string, detail: string): ApiError => new ApiError('invalid_parameter', detail, [{ param, message }]);

/** The filters a cursor was issued for, as a digest: its plan's exclusions too, which decide what it delivers. */
function filtersDigest(q: SearchQuery, excluded: readonly string[]): string {
  return createHash('sha256')
    .update(`${queryKey({ ...q, limit: 0, offset: 0, sort: 'start' })}\0${excluded.join(',')}`)
    .digest('base64url')
    .slice(0, 16);
}

/** The canonical query of a change-feed request: the search's filters, never measured from now, and where it starts. */
function prepareChanges(req: RouteRequest, path: string, fmt: Format, p: ChangesParams, snap: Snapshot, plan: Plan, svc: Services): Prepared {
  // The change feed's cursor is its own (below), not a search's keyset.
  const search = canonicalQuery(
    { ...p, cursor: undefined },
    {
      cities: snap.cities,
      excludedCategories: plan.excludedCategories,
      planName: plan.name,
      now: svc.config.now(),
      defaultLimit: CHANGES_DEFAULT_LIMIT,
    },
  );
  // No date filter: every event the data holds (an event leaves the feed when it leaves the data, as a deletion).
  const range = search.range === 'upcoming' ? { fromMs: 0, toMs: Number.MAX_SAFE_INTEGER } : { fromMs: search.range.fromMs, toMs: search.range.toMs };
  const filters = filtersDigest({ ...search, range }, plan.excludedCategories);
  const clock = snap.manifest.changes;
  let cursor: ChangesCursor;
  if (p.cursor !== undefined) {
    const c = decodeCursor(p.cursor);
    if (c === null) throw invalid('cursor', 'is not a cursor this feed returned', 'The cursor is damaged: pass next_cursor exactly as a page returned it.');
    if (c.filters !== filters) {
      throw invalid(
        'cursor',
        'was returned for other filters',
        'This cursor belongs to a feed with other filters (or another plan): go on with the filters you started with, or start again without cursor.',
      );
    }
    cursor = c;
  } else if (p.since !== undefined) {
    const at = p.since.startMs;
    cursor = { horizonMs: at - 1, afterMs: at - 1, afterId: AFTER_ALL_IDS, filters };
  } else {
    // From the beginning: the client holds nothing, so nothing stamped up to this snapshot needs deleting.
    cursor = { horizonMs: Date.parse(clock.stamp), afterMs: -1, afterId: '', filters };
  }
  const known = Math.max(cursor.horizonMs, cursor.afterMs);
  const completeSince = clock.complete_since === null ? null : Date.parse(clock.complete_since);
  if (completeSince !== null && known < completeSince) {
    throw new ApiError(
      'cursor_expired',
      `This ${p.since !== undefined ? 'since' : 'cursor'} starts at ${new Date(known).toISOString()}, before ${clock.complete_since}, since when every removal is kept ` +
        `(removals are kept at least ${DELETIONS_KEPT_DAYS} days); request ${path} without cursor to sync again from the start.`,
    );
  }
  const query: SearchQuery = { ...search, range, sort: 'start', offset: 0, changes: cursor };
  const links = feedLinks(req, path, svc, snap);
  return {
    query,
    key: `${snap.ref.id}\0${plan.excludedCategories.join(',')}\0changes-${fmt.format}\0${queryKey(query)}\0${encodeCursor(cursor)}\0${links.url}\0${JSON.stringify(links.params)}`,
    links,
    validUntilMs: Number.POSITIVE_INFINITY,
  };
}

function liveChanges(req: RouteRequest, path: string, fmt: Format, params: ChangesParams, svc: Services) {
  const account = rateLimited(req, path, svc);
  const snap = svc.snapshots.require();
  const prepared = prepareChanges(req, path, fmt, params, snap, account.plan, svc);
  const enc = negotiate(req.http.headers['accept-encoding']);
  return answerLive({ req, path, fmt, svc, snap, plan: account.plan, prepared, nowMs: svc.config.now().getTime(), enc }, account);
}

const ABOUT =
  'Every event record added, changed, canceled or removed since a cursor, oldest change first: ordered by (updated_at, id), ' +
  'so a client keeps an exact copy of the data by applying each page in order and keeping its next_cursor. Start without cursor ' +
  '(or with since, a time you already hold the data as of); follow next until has_more is false, then poll that last next URL: ' +
  'it answers the same body (ETag, 304 with If-None-Match, costing nothing) until something changes. A removed event is a deletion ' +
  `({id, deleted: true, updated_at}), listed at least ${DELETIONS_KEPT_DAYS} days; a cursor older than that is 410 cursor_expired. ` +
  'The search filters apply (city, lat/lng/radius_km, age, category, q, is_free, start_date/end_date or an ISO week), with no "not ended yet" default: ' +
  'every event the data holds (events leave it, as deletions, about two weeks after they end). A record that changes so that it no longer matches ' +
  'your filters comes as a deletion. Each page never skips or repeats a change across data rebuilds. Records count toward the quota; deletions do not. ' +
  `Pages of up to ${CHANGES_MAX_LIMIT} entries; X-Total-Count is the number of changes from this cursor on.`;

/** The JSON page's next_cursor goes on with the same filters, in either format. */
const NEXT_LINKS = {
  next: {
    path: '/v1/changes',
    description: 'The next page: the same parameters, with cursor from this page.',
    parameters: { cursor: '$response.body#/next_cursor' },
  },
  next_csv: {
    path: '/v1/changes.csv',
    description: 'The next page as CSV: the same parameters, with cursor from this page.',
    parameters: { cursor: '$response.body#/next_cursor' },
  },
};

function changesRoute(path: string, format: 'json' | 'csv', summary: string, description: string, schema: string) {
  const fmt = CHANGES_FORMATS[format];
  return defineRoute({
    path,
    summary,
    description,
    tag: 'events',
    access: 'live',
    params: changesParams({ maxLimit: CHANGES_MAX_LIMIT, defaultLimit: CHANGES_DEFAULT_LIMIT }),
    produces: [{ type: fmt.contentType.split(';')[0] ?? fmt.contentType, schema }],
    errors: [
      'invalid_parameter',
      'unknown_parameter',
      'category_not_in_plan',
      'cursor_expired',
      'quota_exhausted',
      'quota_held',
      'rate_limited',
      'unavailable',
    ],
    ...(format === 'json' ? { links: NEXT_LINKS } : {}),
    handle: (req, params, svc) => liveChanges(req, path, fmt, params, svc),
  });
}

export const changesJsonRoute = changesRoute(
  '/v1/changes',
  'json',
  'Changes since a cursor (JSON)',
  `${ABOUT} The body: changes (records as /v1/events returns them, and deletions), next (the next page's URL), next_cursor, has_more, total, limit, truncated, attribution.`,
  'ChangeList',
);

export const changesCsvRoute = changesRoute(
  '/v1/changes.csv',
  'csv',
  'Changes since a cursor (CSV)',
  `${ABOUT} The columns of /v1/events.csv, then deleted (true for a deletion, whose other cells are empty but id and updated_at): ` +
    `${CHANGES_CSV_COLUMNS.join(', ')}. The next page is in the Link header (rel="next").`,
  'ChangeCsv',
);
