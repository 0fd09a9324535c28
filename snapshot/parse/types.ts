// What every parser receives and returns. A parser throws only when the document as a whole
// is unreadable (the source is then reported failed and skipped); a bad item is counted, not fatal.
import type { DateTime } from 'luxon';
import type { RawEvent } from '../types.ts';

export interface ParseWindow {
  readonly start: DateTime;
  readonly end: DateTime;
}

/**
 * What a parser read, with every upstream item accounted for (itemCount): an event read, an item
 * without a readable start, a series with no occurrence in the window, or an item merged into
 * another. For iCalendar the items are the VEVENTs, a recurring series counting as its
 * occurrences in the window (at least one).
 */
export interface ParseOutput {
  readonly events: RawEvent[];
  /** Items with no readable start time. */
  readonly noStart: number;
  /** Recurring series none of whose occurrences falls in the window (dropped as outside_window). */
  readonly outsideWindow?: number;
  /** Items merged into another: an iCalendar override into the occurrence it revises, or into a later revision (higher SEQUENCE) of itself. */
  readonly merged?: number;
  /**
   * Those items, by position among the document's items (0-based), from parsers that read one
   * event per item (RSS, CSV): `normalize --explain` names them, and the events are then the
   * remaining positions in order.
   */
  readonly noStartItems?: readonly SkippedItem[];
}

/** The upstream items a parse accounts for: events + no start + series outside the window + merged copies. */
export const itemCount = (p: ParseOutput): number => p.events.length + p.noStart + (p.outsideWindow ?? 0) + (p.merged ?? 0);

export interface SkippedItem {
  readonly position: number;
  readonly uid: string | null;
  readonly title: string | null;
}

export interface ParseOptions {
  readonly window: ParseWindow;
  /** For CSV: our field → upstream header. */
  readonly csvColumns?: Readonly<Record<string, string>> | undefined;
  /** Where relative links in the document point. */
  readonly baseUrl?: string | undefined;
}

export class FeedFormatError extends Error {}

/** Occurrences per recurring series at most: a FREQ=SECONDLY rule must not eat the build. */
export const MAX_OCCURRENCES = 500;

export function emptyRaw(): Omit<RawEvent, 'title' | 'start'> {
  return {
    uid: null,
    description: null,
    summary: null,
    end: null,
    location: null,
    lat: null,
    lng: null,
    categories: [],
    url: null,
    ticketUrl: null,
    imageUrl: null,
    organizerName: null,
    organizerUrl: null,
    priceText: null,
    priceMin: null,
    priceMax: null,
    isFree: null,
    ages: null,
    cancelled: false,
  };
}

export function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string' || v.trim() === '') return null;
  const n = Number(v.trim().replace(/^\$/, ''));
  return Number.isFinite(n) ? n : null;
}
