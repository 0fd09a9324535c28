// GET /v1/events/{id}: one event record, from the response cache or a query worker, metered as
// one record. Its route, with the OpenAPI prose, is in events.ts.
import * as v from 'valibot';
import { encodingFor, negotiate } from '../compress.ts';
import { etagValue, httpDate, noneMatchHits } from '../conditional.ts';
import { ApiError } from '../errors.ts';
import { holdRecords } from '../hold.ts';
import type { Reply } from '../http.ts';
import { quotaHeaders } from '../quota.ts';
import { JSON_TYPE } from '../reply.ts';
import type { EventMissing, TaskFailure } from '../../query/protocol.ts';
import type { RouteRequest, Services } from '../route.ts';
import { EVENT_ID_PATTERN } from '../../core/ids.ts';
import { LIVE_CACHE_CONTROL, type Headers } from './formats.ts';
import { failed, rateLimited } from './search.ts';

/** An event id as the snapshot builder makes them (snapshot/normalize/event.ts). */
export const EVENT_ID = v.pipe(
  v.string(),
  v.regex(EVENT_ID_PATTERN, 'is not an event id (bsc_evt_ followed by 20 hexadecimal digits, as in event records)'),
  v.description("The event id, as in the record's `id` (bsc_evt_ and 20 hexadecimal digits)."),
);

/** The detail of a 404 for an event id: why, and where to look instead. */
export function missingEventDetail(id: string, m: EventMissing): string {
  if (m.gone)
    return `Event ${id} ("${m.gone.title.slice(0, 120)}") is no longer listed (removed on ${m.gone.removed_at.slice(0, 10)}); search /v1/events for current events.`;
  return `There is no event ${id} in the current data for your plan; search /v1/events for current events.`;
}

export const EVENT_PATH = '/v1/events/{id}';

/**
 * One event by id, metered as one record. Plans that exclude a category do not receive its events
 * by id either: 404, as for an id that does not exist. A 304 and HEAD charge nothing.
 */
export async function liveEvent(req: RouteRequest, svc: Services): Promise<Reply> {
  const account = rateLimited(req, EVENT_PATH, svc);
  const plan = account.plan;
  const snap = svc.snapshots.require();
  const nowMs = svc.config.now().getTime();
  const id = req.pathParam;
  const key = `${snap.ref.id}\0${plan.excludedCategories.join(',')}\0event\0json\0${id}`;
  const outcome = await svc.cache.get<EventMissing | TaskFailure>(key, nowMs, req.http.signal, (signal) =>
    svc.pool.event(
      { kind: 'event', snapshot: snap.ref, id, format: 'json', excludedCategories: plan.excludedCategories, webBaseUrl: svc.config.webBaseUrl, calendar: null },
      signal,
    ),
  );
  svc.metrics.cacheResult(EVENT_PATH, outcome.hit);
  if ('failure' in outcome) {
    const f = outcome.failure;
    if (f.code === 'not_found') throw new ApiError('not_found', missingEventDetail(id, f));
    failed(f);
  }
  const answer = outcome.answer;
  const enc = encodingFor(negotiate(req.http.headers['accept-encoding']), answer.body.length);
  const headers: Headers = [
    ['ETag', etagValue(answer.etag, enc)],
    ['Last-Modified', httpDate(snap.manifest.built_at)],
    ['Cache-Control', LIVE_CACHE_CONTROL],
    ['Vary', 'Accept-Encoding'],
  ];
  const cache = outcome.hit ? 'hit' : 'miss';
  if (noneMatchHits(req.http.headers['if-none-match'], answer.etag)) return { status: 304, headers, body: '', route: EVENT_PATH, cache };
  const isHead = req.http.method === 'HEAD';
  // GET charges its one record at once; HEAD's hold is freed at once: it only reports the quota.
  const quota = (await holdRecords(svc.meter, account.keyId, 1, { settle: !isHead, atMs: nowMs, client: req.http })).release();
  const body = enc === 'identity' ? answer.body : await svc.cache.encoded(key, answer, enc);
  const head: Headers = [['Content-Type', JSON_TYPE]];
  if (enc !== 'identity') head.push(['Content-Encoding', enc]);
  return { status: 200, headers: [...head, ...headers, ...quotaHeaders(quota, nowMs)], body, route: EVENT_PATH, cache };
}
