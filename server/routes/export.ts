// /v1/export.csv (and /api/v1/export.csv): every event of the current snapshot as one CSV body,
// for exporters that want the whole data set rather than a search. The body streams from a query
// worker (query/export.ts: the snapshot's stored CSV rows, read sequentially) at the client's pace,
// with the columns, header and row bytes of /v1/events.csv; it is metered as records delivered and
// cut by the quota like a CSV page. No parameters: a filtered or ordered export is a search, paged
// by cursor (/v1/events.csv?cursor=…).
import * as v from 'valibot';
import { compressStream, encodingFor, negotiate } from '../compress.ts';
import { etagValue, httpDate, noneMatchHits } from '../conditional.ts';
import { holdRecords } from '../hold.ts';
import type { BodyStream, Reply } from '../http.ts';
import { quotaHeaders } from '../quota.ts';
import type { Streamed } from '../pool.ts';
import { defineRoute, type RouteRequest, type Services } from '../route.ts';
import { CSV_COLUMNS } from '../../core/csv.ts';
import type { QuotaState } from '../../ledger/accounts.ts';
import { FORMATS, LIVE_CACHE_CONTROL, type Headers } from './formats.ts';
import { failed, rateLimited } from './search.ts';

export const EXPORT_PATH = '/v1/export.csv';
const FILENAME = 'events-export.csv';

/** The headers the export's 200 and 304 share: validators, caching, size, attribution, quota. */
function exportHeaders(svc: Services, builtAt: string, s: Streamed, enc: 'identity' | 'gzip' | 'br', quota: Headers): Headers {
  const headers: Headers = [
    ['ETag', etagValue(s.head.etag, enc)],
    ['Last-Modified', httpDate(builtAt)],
    ['Cache-Control', LIVE_CACHE_CONTROL],
    ['Vary', 'Accept-Encoding'],
    ['X-Total-Count', String(s.head.total)],
    ['Content-Disposition', `attachment; filename="${FILENAME}"`],
    ['Link', `<${svc.config.webBaseUrl}>; rel="attribution"`],
    ...quota,
  ];
  if (s.head.truncated) headers.push(['X-Quota-Truncated', 'true']);
  return headers;
}

/**
 * Holds the snapshot's event count (what the plan's quota grants of it), starts the worker (cut to
 * the hold), and charges the rows its head counts, durably, before the first byte leaves: the same
 * terms as a CSV page (search.ts liveStream). HEAD and a 304 (If-None-Match naming the body the
 * plan and quota would get) charge nothing.
 */
export async function liveExport(req: RouteRequest, svc: Services): Promise<Reply> {
  const path = EXPORT_PATH;
  const account = rateLimited(req, path, svc);
  const snap = svc.snapshots.require();
  const nowMs = svc.config.now().getTime();
  const want = snap.manifest.counts.events;
  const hold = await holdRecords(svc.meter, account.keyId, want, { settle: false, atMs: nowMs, client: req.http });
  try {
    const s = await svc.pool.runStream(
      {
        kind: 'export',
        snapshot: snap.ref,
        excludedCategories: account.plan.excludedCategories,
        webBaseUrl: svc.config.webBaseUrl,
        cut: hold.granted < want ? hold.granted : null,
      },
      req.http.signal,
    );
    svc.metrics.cacheResult(path, false);
    if ('ok' in s) failed(s);
    // Not awaited: counted when the body ends; the pool answers failures as data, so done never rejects.
    void s.done.then((d) => {
      if (d.ok) svc.metrics.streamEnded(d.cancelled ? 'cancelled' : 'completed', d.rows, d.bytes);
      else svc.metrics.streamEnded('failed', 0, 0);
    });
    const enc = encodingFor(negotiate(req.http.headers['accept-encoding']), s.wholeBytes);
    const unchanged = noneMatchHits(req.http.headers['if-none-match'], s.head.etag);
    let quota: QuotaState;
    if (req.http.method === 'HEAD' || unchanged || req.http.aborted) {
      quota = hold.release();
      if (unchanged) {
        s.body.cancel();
        return { status: 304, headers: exportHeaders(svc, snap.manifest.built_at, s, enc, quotaHeaders(quota, nowMs)), body: '', route: path, cache: 'miss' };
      }
    } else {
      try {
        quota = await hold.commit(s.head.count);
      } catch (err) {
        s.body.cancel();
        throw err;
      }
    }
    const body: BodyStream = enc === 'identity' ? s.body : compressStream(s.body, enc);
    const head: Headers = [['Content-Type', FORMATS.csv.contentType]];
    if (enc !== 'identity') head.push(['Content-Encoding', enc]);
    return {
      status: 200,
      headers: [...head, ...exportHeaders(svc, snap.manifest.built_at, s, enc, quotaHeaders(quota, nowMs))],
      body,
      route: path,
      cache: 'miss',
    };
  } finally {
    hold.release();
  }
}

export const exportRoute = defineRoute({
  path: EXPORT_PATH,
  summary: 'Every event (CSV export)',
  description:
    'Every event of the current snapshot your plan includes, ended ones too, as one RFC 4180 CSV body (UTF-8, CRLF, a header row): the columns, ' +
    `header and row bytes of /v1/events.csv (${CSV_COLUMNS.length} columns; distance_km is empty), streamed at the pace you read. ` +
    "Rows are in the snapshot's stored order, not by start: sort by start_datetime, id if you need that order, or page /v1/events.csv by cursor. " +
    'The strong ETag names the snapshot (with your plan and any quota cut): If-None-Match gets a 304 that charges nothing until the data changes. ' +
    'Every row counts one record against the monthly quota, charged before the first byte; a quota shorter than the export cuts it to the first rows ' +
    "that fit (X-Quota-Truncated: true), and none left is 429 quota_exhausted. X-Total-Count is the export's full row count. " +
    'Attribution is in the Link header (rel="attribution").',
  tag: 'events',
  access: 'live',
  params: v.object({}),
  produces: [{ type: 'text/csv', schema: 'EventCsv' }],
  errors: ['unknown_parameter', 'quota_exhausted', 'quota_held', 'rate_limited', 'unavailable'],
  handle: (req, _params, svc) => liveExport(req, svc),
});
