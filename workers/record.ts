// The event record as the API serves it (spec 2.1 + venue.city, contract invariants): one mapping
// from a snapshot row, used by every output path and by `family-events normalize`.
import { ageRangeYears } from './snapshot/normalize/ages.ts';
import type { GeoPrecision } from './snapshot/normalize/venues.ts';
import type { EventRow } from './snapshot/types.ts';

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
  | 'is_canceled';

export interface EventRecord extends Pick<EventRow, SameAsRow> {
  venue: { name: string; address: string; city: string; lat: number; lng: number; geo_precision: GeoPrecision };
  categories: string[];
  tags: string[];
  price: { min: number | null; max: number | null; note: string | null } | null;
  source_url: null;
  age_range: { min_months: number; max_months: number } | null;
  age_range_years: { min_years: number; max_years: number } | null;
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
>;

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
  };
}
