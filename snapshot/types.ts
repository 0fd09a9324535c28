// The two shapes of the pipeline: what a parser reads from a feed (RawEvent), and the
// normalized snapshot row (EventRow, core/record.ts) that the API serves. Parsers never normalize;
// normalization never parses a feed.
import type { DateTime } from 'luxon';

export interface UpstreamTime {
  readonly at: DateTime;
  /** A calendar date with no time of day (all-day). `at` is then local midnight. */
  readonly dateOnly: boolean;
}

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
