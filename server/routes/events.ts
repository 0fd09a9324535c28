// The event routes: /v1/events (JSON), /v1/events.csv, /v1/feed.rss, /v1/feed.json, /v1/feed.ics,
// the keyless /v1/demo/events and /v1/events/{id}, each with its OpenAPI summary, description,
// parameters and errors. How a search is handled is in search.ts, how each format is answered in
// formats.ts, the single event in event.ts.
import * as v from 'valibot';
import { cursorSearchParams, searchParams } from '../params.ts';
import { CSV_COLUMNS } from '../../core/csv.ts';
import type { OutputFormat } from '../../query/protocol.ts';
import { defineRoute } from '../route.ts';
import { EVENT_ID, EVENT_PATH, liveEvent } from './event.ts';
import { CSV_MAX_LIMIT, DEMO_MAX_LIMIT, FORMATS } from './formats.ts';
import { demoEvents, liveSearch } from './search.ts';

function searchRoute(path: string, format: OutputFormat, summary: string, description: string, schema: string) {
  const fmt = FORMATS[format];
  // Pages of JSON and CSV are what exports walk through, past any offset: those take a cursor.
  const paging = format === 'json' || format === 'csv' ? cursorSearchParams : searchParams;
  return defineRoute({
    path,
    summary,
    description,
    tag: 'events',
    access: 'live',
    params: paging({ maxLimit: fmt.maxLimit, defaultLimit: 20 }),
    produces: [{ type: fmt.contentType.split(';')[0] ?? fmt.contentType, schema }],
    errors: ['invalid_parameter', 'unknown_parameter', 'category_not_in_plan', 'quota_exhausted', 'quota_held', 'rate_limited', 'unavailable'],
    handle: (req, params, svc) => liveSearch(req, path, fmt, params, svc),
  });
}

const FILTERS =
  'Family events in the San Francisco Bay Area matching every given filter. Without a date filter, events that have not ended yet. ' +
  'Sorted by start time, then id, or by distance.';

export const eventsRoute = searchRoute(
  '/v1/events',
  'json',
  'Search events (JSON)',
  `${FILTERS} A JSON envelope with the total, paging and attribution.`,
  'EventList',
);

export const csvRoute = searchRoute(
  '/v1/events.csv',
  'csv',
  'Search events (CSV)',
  `${FILTERS} RFC 4180 CSV (UTF-8, CRLF, a header row even when nothing matches), up to ${CSV_MAX_LIMIT} rows a page, streamed. ` +
    'Columns, in this order: ' +
    CSV_COLUMNS.map(([name]) => name).join(', ') +
    '. Nested fields are flattened with "_", lists (categories, tags) joined with ";", null is an empty cell, booleans are true/false. ' +
    'Text cells starting with = + - @, tab or carriage return get a leading apostrophe so spreadsheets do not run them as formulas; ' +
    'numeric cells (coordinates, prices, ages, distance_km) are plain numbers. distance_km is empty unless lat/lng are given. ' +
    'Attribution and paging are in the Link header (rel="attribution", rel="next"); the total in X-Total-Count.',
  'EventCsv',
);

export const rssRoute = searchRoute(
  '/v1/feed.rss',
  'rss',
  'Events as RSS 2.0',
  `${FILTERS} One item per event: guid is the event id, link its event_url, pubDate its start, description plain text (when, where, what); ` +
    'categories are its category slugs and tags. Canceled events are titled "Canceled: …" and carry the category "canceled". ' +
    'The channel links to the website (attribution) and to itself and the next page (atom:link).',
  'Rss',
);

export const jsonFeedRoute = searchRoute(
  '/v1/feed.json',
  'jsonfeed',
  'Events as JSON Feed 1.1',
  `${FILTERS} One item per event: id is the event id, url its event_url, content_text plain text, date_published its start; ` +
    "the full event record is in the item's `_family_events` extension, the page figures (total, paging, attribution) in the feed's. " +
    'home_page_url is the website (attribution); next_url the next page.',
  'JsonFeed',
);

export const demoRoute = defineRoute({
  path: '/v1/demo/events',
  summary: 'Demo search (no key)',
  description:
    `The same search and JSON shape as /v1/events without a key, under the Community plan's rules: at most ${DEMO_MAX_LIMIT} events a call, ` +
    'and a per-address rate limit (429 rate_limited with Retry-After when exceeded).',
  tag: 'events',
  access: 'demo',
  params: searchParams({ maxLimit: DEMO_MAX_LIMIT, defaultLimit: DEMO_MAX_LIMIT }),
  produces: [{ type: 'application/json', schema: 'EventList' }],
  errors: ['invalid_parameter', 'unknown_parameter', 'category_not_in_plan', 'rate_limited', 'unavailable'],
  handle: (req, params, svc) => demoEvents(req, params, svc),
});

export const eventRoute = defineRoute({
  path: EVENT_PATH,
  pathParam: { name: 'id', description: 'The event id, as in event records.', schema: EVENT_ID },
  summary: 'One event (JSON)',
  description:
    'One event record by id, exactly as searches return it (with event_url), counted as one record against the quota. ' +
    'An id that is not in the current data, or whose event is in a category your plan excludes, is 404 not_found ' +
    '(the detail says when an event was listed before and has since been removed).',
  tag: 'events',
  access: 'live',
  params: v.object({}),
  produces: [{ type: 'application/json', schema: 'EventRecord' }],
  errors: ['not_found', 'quota_exhausted', 'quota_held', 'rate_limited', 'unavailable'],
  handle: (req, _params, svc) => liveEvent(req, svc),
});

export const icsFeedRoute = searchRoute(
  '/v1/feed.ics',
  'ics',
  'Events as iCalendar',
  `${FILTERS} An iCalendar (RFC 5545) feed to subscribe to in a calendar app: one VEVENT per event, UID its id, URL its event_url, ` +
    'times in America/Los_Angeles (VTIMEZONE included), all-day events (all_day) as DATE values with the exclusive DTEND of the day after the last, ' +
    'STATUS:CANCELLED for canceled events. Calendar apps that cannot send headers ' +
    'take the key as api_key in the subscribed URL.',
  'Ics',
);
