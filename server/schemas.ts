// The response bodies as valibot schemas: the OpenAPI document publishes them (openapi.ts) and the
// tests parse every response with them, so the documented shape is the checked shape.
import * as v from 'valibot';
import { ERRORS } from './errors.ts';
import { GEO_PRECISIONS } from '../core/record.ts';

const nullableString = v.nullable(v.string());
const iso = v.pipe(v.string(), v.isoTimestamp(), v.description('ISO 8601 with the America/Los_Angeles offset'));

export const EventRecordSchema = v.strictObject({
  id: v.pipe(v.string(), v.startsWith('bsc_evt_')),
  title: v.string(),
  description: nullableString,
  summary: nullableString,
  start_datetime: iso,
  end_datetime: v.nullable(iso),
  venue: v.strictObject({
    name: v.string(),
    address: v.string(),
    city: v.string(),
    lat: v.number(),
    lng: v.number(),
    geo_precision: v.pipe(
      v.picklist(GEO_PRECISIONS),
      v.description(
        'Where lat/lng come from, so how near the place they are: "exact", the upstream\'s own coordinates of the event; "venue", a known venue\'s (the upstream named it, or gave its street address); "zip", the centroid of the address\'s ZIP code (within a few km); "place", the point of the city or town (anywhere in it). "zip" and "place" are an approximate location, not the spot',
      ),
    ),
  }),
  organizer: nullableString,
  organizer_url: nullableString,
  categories: v.array(v.string()),
  tags: v.array(v.string()),
  image_url: nullableString,
  is_free: v.pipe(
    v.boolean(),
    v.description(
      'Attending costs nothing. Agrees with price: a free event is priced 0–0 or has no amount, and a price of 0–0 is always free. "Free with (museum) admission" is not free: is_free false, no amount, the text in price.note',
    ),
  ),
  price: v.pipe(
    v.nullable(v.strictObject({ min: v.nullable(v.number()), max: v.nullable(v.number()), note: nullableString })),
    v.description(
      'What attending costs in USD, from the upstream price field or the sentences of the description that state it (tiers such as "kids 12 and under free" give min 0); null when nothing is stated. note is the text it was read from',
    ),
  ),
  ticket_url: nullableString,
  source: nullableString,
  source_url: v.null(),
  destination: v.string(),
  age_range: v.nullable(v.strictObject({ min_months: v.number(), max_months: v.number() })),
  age_range_years: v.nullable(v.strictObject({ min_years: v.number(), max_years: v.number() })),
  is_canceled: v.boolean(),
  all_day: v.pipe(
    v.boolean(),
    v.description(
      'The upstream gave the event a date without a time of day. start_datetime and end_datetime are then local midnight of the first day and 23:59:59 of the last (still ISO 8601 datetimes), and show no time of day: the iCalendar feed writes DATE values (DTSTART;VALUE=DATE, with the exclusive DTEND of the day after the last), and the website says "All day"',
    ),
  ),
  created_at: v.pipe(
    v.string(),
    v.isoTimestamp(),
    v.description('When the event was first listed: the build time of the first data snapshot that had it (ISO 8601, America/Los_Angeles offset)'),
  ),
  updated_at: v.pipe(
    v.string(),
    v.isoTimestamp(),
    v.description(
      'When the record last changed: the build time of the first data snapshot in which every field above had its current value. The order of /v1/changes',
    ),
  ),
  event_url: v.pipe(v.string(), v.url()),
  distance_km: v.optional(v.pipe(v.number(), v.description('Great-circle km from lat/lng, on geo searches only'))),
});

export const EventListSchema = v.strictObject({
  events: v.array(EventRecordSchema),
  total: v.pipe(v.number(), v.integer(), v.description('Events matching the filters, across all pages')),
  limit: v.number(),
  offset: v.number(),
  next_offset: v.nullable(v.number()),
  next_cursor: v.pipe(
    v.nullable(v.string()),
    v.description(
      'The cursor parameter of the next page, on a page asked by cursor and on a page whose next offset would pass the offset cap; null otherwise (and on the last page)',
    ),
  ),
  truncated: v.pipe(v.boolean(), v.description('The page was cut short by the monthly record quota')),
  did_you_mean: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "Only when q found nothing: q with each word no event contains replaced by the snapshot's nearest word (at most two edits), given only when that q finds events",
      ),
    ),
  ),
  attribution: v.strictObject({ text: v.string(), url: v.string() }),
});

/** A removed event (or, in a filtered feed, one that no longer matches the filters), as /v1/changes lists it. */
export const DeletionSchema = v.strictObject({
  id: v.pipe(v.string(), v.startsWith('bsc_evt_')),
  deleted: v.literal(true),
  updated_at: v.pipe(iso, v.description('When it was removed (or changed so that it no longer matches): the order of /v1/changes')),
});

export const ChangeListSchema = v.strictObject({
  changes: v.pipe(
    v.array(v.union([EventRecordSchema, DeletionSchema])),
    v.description('In (updated_at, id) order: records to add or replace by id, and deletions (deleted: true) to remove by id'),
  ),
  next: v.pipe(v.string(), v.url(), v.description('The next page: on the last page, where the next changes will appear (poll it)')),
  next_cursor: v.pipe(v.string(), v.description('The cursor parameter of next: store it with your copy to go on from it')),
  has_more: v.pipe(v.boolean(), v.description('More changes are waiting: follow next now')),
  total: v.pipe(v.number(), v.integer(), v.description('Changes from this cursor on, this page included')),
  limit: v.number(),
  truncated: v.pipe(v.boolean(), v.description('The page was cut short by the monthly record quota; next goes on from the cut')),
  attribution: v.strictObject({ text: v.string(), url: v.string() }),
});

export const ProblemSchema = v.strictObject({
  type: v.string(),
  title: v.string(),
  status: v.number(),
  detail: v.string(),
  code: v.picklist(Object.keys(ERRORS) as (keyof typeof ERRORS)[]),
  errors: v.optional(v.array(v.strictObject({ param: v.string(), message: v.string() }))),
});

export const CategoryListSchema = v.strictObject({
  snapshot: v.string(),
  categories: v.array(v.strictObject({ slug: v.string(), name: v.string(), events: v.number(), excluded_from_plans: v.array(v.string()) })),
});

export const CityListSchema = v.strictObject({ snapshot: v.string(), cities: v.array(v.strictObject({ name: v.string() })) });

const day = v.pipe(v.string(), v.isoDate());
const count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const UsageSchema = v.strictObject({
  organization: v.strictObject({ id: v.string(), name: v.string() }),
  plan: v.strictObject({
    name: v.string(),
    monthly_record_limit: v.pipe(v.nullable(count), v.description('Event records per calendar month; null: no cap')),
    excluded_categories: v.array(v.string()),
    attribution_required: v.boolean(),
  }),
  period: v.strictObject({
    start: iso,
    end: v.pipe(iso, v.description('The last second of the period')),
    resets_at: v.pipe(iso, v.description('When the quota starts afresh: the first instant of next month, Pacific time')),
  }),
  records: v.strictObject({ used: count, remaining: v.nullable(count), limit: v.nullable(count) }),
  requests: v.strictObject({ count: v.pipe(count, v.description('Live data requests answered with 200 this period')) }),
  by_day: v.array(v.strictObject({ date: day, records: count, requests: count })),
});

/** JSON Feed 1.1 (https://jsonfeed.org/version/1.1) as /v1/feed.json writes it, with its `_family_events` extensions. */
export const JsonFeedSchema = v.strictObject({
  version: v.literal('https://jsonfeed.org/version/1.1'),
  title: v.string(),
  home_page_url: v.pipe(v.string(), v.url(), v.description('The website: attribution')),
  feed_url: v.pipe(v.string(), v.url()),
  next_url: v.optional(v.pipe(v.string(), v.url())),
  description: v.string(),
  authors: v.array(v.strictObject({ name: v.string(), url: v.string() })),
  language: v.string(),
  _family_events: v.strictObject({
    about: v.string(),
    total: v.number(),
    limit: v.number(),
    offset: v.number(),
    next_offset: v.nullable(v.number()),
    truncated: v.boolean(),
    attribution: v.strictObject({ text: v.string(), url: v.string() }),
  }),
  items: v.array(
    v.strictObject({
      id: v.pipe(v.string(), v.startsWith('bsc_evt_')),
      url: v.pipe(v.string(), v.url()),
      title: v.string(),
      content_text: v.string(),
      summary: v.optional(v.string()),
      image: v.optional(v.string()),
      date_published: iso,
      tags: v.array(v.string()),
      _family_events: EventRecordSchema,
    }),
  ),
});

export const CsvSchema = v.pipe(v.string(), v.description('RFC 4180 CSV with a header row; the columns are listed in the route description'));

/** The change feed's CSV: a schema of its own (one valibot object under two names would make each component a $ref to the other). */
export const ChangeCsvSchema = v.pipe(
  v.string(),
  v.description('RFC 4180 CSV with a header row: the columns of /v1/events.csv, then deleted; listed in the route description'),
);

export const IcsSchema = v.pipe(
  v.string(),
  v.description('iCalendar (RFC 5545): one VEVENT per event, UID = event id, times in America/Los_Angeles with its VTIMEZONE'),
);
export const RssSchema = v.pipe(v.string(), v.description('RSS 2.0 XML (https://www.rssboard.org/rss-specification)'));

export const HealthSchema = v.object({
  status: v.picklist(['ok', 'ready']),
  snapshot: v.optional(v.string()),
  /** Several nodes: a snapshot the shared ledger names that this node could not load (it serves `snapshot` meanwhile). */
  snapshot_pending: v.optional(v.object({ id: v.string(), reason: v.string() })),
});

export const OpenApiSchema = v.looseObject({ openapi: v.string() });

export const RESPONSE_SCHEMAS = {
  EventRecord: EventRecordSchema,
  EventList: EventListSchema,
  EventCsv: CsvSchema,
  ChangeList: ChangeListSchema,
  Deletion: DeletionSchema,
  ChangeCsv: ChangeCsvSchema,
  Rss: RssSchema,
  Ics: IcsSchema,
  JsonFeed: JsonFeedSchema,
  Problem: ProblemSchema,
  CategoryList: CategoryListSchema,
  CityList: CityListSchema,
  Usage: UsageSchema,
  Health: HealthSchema,
  OpenApi: OpenApiSchema,
} as const;
