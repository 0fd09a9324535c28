// The event record as the API serves it (spec 2.1 + venue.city, contract invariants): one mapping
// from a snapshot row, used by every output path and by `family-events normalize`.
import { DateTime } from 'luxon';
import type { CategorySlug } from './taxonomy.ts';
import { LA } from './zone.ts';

/** Where a venue's coordinates come from, so how near the place they are. */
export type GeoPrecision = 'exact' | 'venue' | 'zip' | 'place';
export const GEO_PRECISIONS: readonly GeoPrecision[] = ['exact', 'venue', 'zip', 'place'];

export interface AgeRange {
  readonly min_months: number;
  readonly max_months: number;
}

/** One snapshot row. Column order and types are sql/snapshot_schema.sql's. */
export interface EventRow {
  id: string;
  title: string;
  description: string | null;
  summary: string | null;
  start_datetime: string;
  end_datetime: string | null;
  /** Epoch ms of the start, and of the end (the start when there is no end): the filter columns. */
  start_ms: number;
  end_ms: number;
  venue_key: string;
  venue_name: string;
  venue_address: string;
  venue_city: string;
  venue_lat: number;
  venue_lng: number;
  /**
   * Where the coordinates come from, so how near the place they are: 'exact' the upstream's own,
   * 'venue' a known venue's (named, or at the same street address), 'zip' the ZIP's centroid,
   * 'place' the city's or town's point.
   */
  venue_geo_precision: GeoPrecision;
  organizer: string | null;
  organizer_url: string | null;
  categories: CategorySlug[];
  tags: string[];
  image_url: string | null;
  is_free: boolean;
  price_min: number | null;
  price_max: number | null;
  price_note: string | null;
  ticket_url: string | null;
  source: string | null;
  destination: string;
  age_min_months: number | null;
  age_max_months: number | null;
  is_canceled: boolean;
  /**
   * The upstream gave a date without a time of day (iCalendar VALUE=DATE, a date-only startDate…):
   * the datetimes are then local midnight of the first day to 23:59:59 of the last, and formats
   * with a date type (iCalendar, schema.org) write dates.
   */
  all_day: boolean;
  /** Folded city name: what the city filter compares. */
  city_key: string;
  /** " word word …": folded words of title, summary, description, venue, organizer, tags, for q. */
  search_text: string;
  /** Registry id of the source the row came from (internal; never served). */
  source_id: string;
  /** Registry position of that source: lower wins when two sources publish the same event. */
  source_rank: number;
}

export function ageRangeYears(range: AgeRange | null): { min_years: number; max_years: number } | null {
  return range && { min_years: Math.floor(range.min_months / 12), max_years: Math.floor(range.max_months / 12) };
}

/** The fields a served record takes unchanged from its row; their types are the row's. */
type SameAsRow =
  | 'id'
  | 'title'
  | 'description'
  | 'summary'
  | 'start_datetime'
  | 'end_datetime'
  | 'organizer'
  | 'organizer_url'
  | 'image_url'
  | 'is_free'
  | 'ticket_url'
  | 'source'
  | 'destination'
  | 'is_canceled'
  | 'all_day';

export interface EventRecord extends Pick<EventRow, SameAsRow> {
  venue: { name: string; address: string; city: string; lat: number; lng: number; geo_precision: GeoPrecision };
  categories: string[];
  tags: string[];
  price: { min: number | null; max: number | null; note: string | null } | null;
  source_url: null;
  age_range: { min_months: number; max_months: number } | null;
  age_range_years: { min_years: number; max_years: number } | null;
  /** When the record first appeared: the build time of the first snapshot that served it. */
  created_at: string;
  /** When the record last changed: the build time of the first snapshot with its current content. */
  updated_at: string;
  event_url: string;
  /** On geo searches only: great-circle distance from the search centre. */
  distance_km?: number;
}

/** The fields of a row that a served record is made from (a query selects exactly these). */
export type RecordRow = Pick<
  EventRow,
  | 'id'
  | 'title'
  | 'description'
  | 'summary'
  | 'start_datetime'
  | 'end_datetime'
  | 'venue_name'
  | 'venue_address'
  | 'venue_city'
  | 'venue_lat'
  | 'venue_lng'
  | 'venue_geo_precision'
  | 'organizer'
  | 'organizer_url'
  | 'categories'
  | 'tags'
  | 'image_url'
  | 'is_free'
  | 'price_min'
  | 'price_max'
  | 'price_note'
  | 'ticket_url'
  | 'source'
  | 'destination'
  | 'age_min_months'
  | 'age_max_months'
  | 'is_canceled'
  | 'all_day'
> &
  ChangeTimes;

/**
 * A record's change times (epoch ms), stamped by the snapshot build against the snapshot it
 * replaced (sql/snapshot_changes.sql): not columns of the staged rows, so not of EventRow.
 */
export interface ChangeTimes {
  created_ms: number;
  updated_ms: number;
}

/**
 * A change time as records show it: ISO 8601 in America/Los_Angeles, with milliseconds, like every
 * datetime of the API. Remembered per instant: a snapshot's million records share a few dozen
 * build times, and luxon costs microseconds a call.
 */
const changeTimes = new Map<number, string>();
export function changeTime(ms: number): string {
  let iso = changeTimes.get(ms);
  if (iso === undefined) {
    iso = DateTime.fromMillis(ms, { zone: LA }).toISO() ?? new Date(ms).toISOString();
    if (changeTimes.size >= 4096) changeTimes.clear();
    changeTimes.set(ms, iso);
  }
  return iso;
}

export function eventUrl(webBaseUrl: string, id: string): string {
  return `${webBaseUrl}/events/${id}`;
}

/** A served record without `event_url`, whose host is the server's configuration, not the snapshot's. */
export type RecordBody = Omit<EventRecord, 'event_url' | 'distance_km'>;

export function toRecord(r: RecordRow, webBaseUrl: string): EventRecord {
  return { ...toRecordBody(r), event_url: eventUrl(webBaseUrl, r.id) };
}

export function toRecordBody(r: RecordRow): RecordBody {
  const age_range = r.age_min_months !== null && r.age_max_months !== null ? { min_months: r.age_min_months, max_months: r.age_max_months } : null;
  const hasPrice = r.price_min !== null || r.price_max !== null || r.price_note !== null;
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    summary: r.summary,
    start_datetime: r.start_datetime,
    end_datetime: r.end_datetime,
    venue: { name: r.venue_name, address: r.venue_address, city: r.venue_city, lat: r.venue_lat, lng: r.venue_lng, geo_precision: r.venue_geo_precision },
    organizer: r.organizer,
    organizer_url: r.organizer_url,
    categories: [...r.categories],
    tags: [...r.tags],
    image_url: r.image_url,
    is_free: r.is_free,
    price: hasPrice ? { min: r.price_min, max: r.price_max, note: r.price_note } : null,
    ticket_url: r.ticket_url,
    source: r.source,
    source_url: null,
    destination: r.destination,
    age_range,
    age_range_years: ageRangeYears(age_range),
    is_canceled: r.is_canceled,
    all_day: r.all_day,
    created_at: changeTime(r.created_ms),
    updated_at: changeTime(r.updated_ms),
  };
}
