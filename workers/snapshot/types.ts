// The two shapes of the pipeline: what a parser reads from a feed (RawEvent), and the
// normalized snapshot row (EventRow) that the API serves. Parsers never normalize;
// normalization never parses a feed.
import type { UpstreamTime } from './normalize/times.ts';
import type { GeoPrecision } from './normalize/venues.ts';
import type { CategorySlug } from './taxonomy.ts';

export interface RawEvent {
  /** Upstream identifier (iCal UID + occurrence, RSS guid, JSON-LD @id/url, CSV id column). */
  readonly uid: string | null;
  readonly title: string;
  /** May hold HTML. */
  readonly description: string | null;
  readonly summary: string | null;
  readonly start: UpstreamTime;
  readonly end: UpstreamTime | null;
  /** iCal DATE-valued DTEND is exclusive (the day after the last day). */
  readonly endIsExclusiveDate?: boolean;
  /** Free text: venue name and/or address. */
  readonly location: string | null;
  readonly lat: number | null;
  readonly lng: number | null;
  readonly categories: readonly string[];
  /** JSON-LD's schema.org @type (MusicEvent, ScreeningEvent…): the upstream's own kind of event. */
  readonly schemaTypes?: readonly string[];
  /** The upstream event page. Used only to derive a stable uid; never republished. */
  readonly url: string | null;
  readonly ticketUrl: string | null;
  readonly imageUrl: string | null;
  readonly organizerName: string | null;
  readonly organizerUrl: string | null;
  /** Price as upstream text ("$5–$10", "Free") and/or numbers. */
  readonly priceText: string | null;
  readonly priceMin: number | null;
  readonly priceMax: number | null;
  readonly isFree: boolean | null;
  /** An upstream ages field ("3-5 years"), read before the title and description. */
  readonly ages: string | null;
  readonly cancelled: boolean;
  /** iCalendar SEQUENCE: of two copies of one occurrence, the higher is the later revision. */
  readonly sequence?: number;
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
  /** Folded city name: what the city filter compares. */
  city_key: string;
  /** " word word …": folded words of title, summary, description, venue, organizer, tags, for q. */
  search_text: string;
  /** Registry id of the source the row came from (internal; never served). */
  source_id: string;
  /** Registry position of that source: lower wins when two sources publish the same event. */
  source_rank: number;
}

export type DropReason =
  | 'adults_only'
  /** A closure, private booking, deadline, opening hours or other notice posted as an event (normalize/kind.ts). */
  | 'not_an_event'
  | 'no_title'
  | 'no_start'
  | 'no_location'
  /** Upstream coordinates, or an address in another country or state, put it outside every destination. */
  | 'outside_area'
  | 'outside_window'
  /** The normalizer threw on this item; the report keeps the first message. */
  | 'invalid';

export interface SourceReport {
  id: string;
  format: string;
  status: 'ok' | 'not_modified' | 'failed';
  error: string | null;
  /** First per-item problem, when some items were dropped as invalid. */
  item_error: string | null;
  bytes: number;
  /** Upstream items (iCalendar: VEVENTs, a series counting as its occurrences in the window): kept + dropped + merged_duplicates + merged_into_other_sources. */
  parsed: number;
  /** Records of this source in the snapshot. */
  kept: number;
  dropped: Partial<Record<DropReason, number>>;
  /** Items that were another item of this feed again (same uid, start and place; or an older SEQUENCE). */
  merged_duplicates: number;
  /** Rows folded into another record with the same title, start and place (another source's, or this one's under another uid). */
  merged_into_other_sources: number;
  ms: number;
}
