// The iCalendar (RFC 5545) body of events, for /v1/feed.ics and an event page's .ics, built with
// ical-generator. One VEVENT per record: UID = the event id, times in America/Los_Angeles with its
// VTIMEZONE (in UTC for the hour the clocks repeat), DTSTAMP = the snapshot's build time, so the same
// records give the same bytes (the server hashes the body into a strong ETag). ical-generator
// escapes TEXT and folds lines at 75 octets without splitting a UTF-8 sequence; what it cannot make
// valid (controls, lone surrogates) is removed here first, so every upstream text reads back as
// itself, cleaned as `icsText` says.
import { DateTime } from 'luxon';
import { ICalCalendar, ICalCalendarMethod, ICalEventStatus, type ICalEventData } from 'ical-generator';
import { tzlib_get_ical_block } from 'timezones-ical-library';
import type { CalendarInfo } from './protocol.ts';
import type { EventRecord } from '../core/record.ts';

export const ICS_CONTENT_TYPE = 'text/calendar; charset=utf-8';

const ZONE = 'America/Los_Angeles';
const PRODID = { company: 'Family Events API', product: 'v1', language: 'EN' };
/** How often a subscribed calendar is asked to poll (REFRESH-INTERVAL, X-PUBLISHED-TTL). */
const REFRESH_SECONDS = 3600;

// The zone's rules, read once: tzlib builds the block from its tables on every call.
const VTIMEZONE = (() => {
  const block = tzlib_get_ical_block(ZONE);
  const text = Array.isArray(block) ? block[0] : undefined;
  if (!text?.startsWith('BEGIN:VTIMEZONE')) throw new Error(`timezones-ical-library has no VTIMEZONE for ${ZONE}`);
  return text;
})();
const vtimezone = (tz: string): string | null => (tz === ZONE ? VTIMEZONE : null);

// RFC 5545 TEXT allows no control characters but HTAB (CONTROL = %x00-08 / %x0A-1F / %x7F); line
// breaks travel escaped as \n, so CR LF and lone CR become LF first. An unpaired surrogate has no
// UTF-8 form at all: it becomes U+FFFD, as any UTF-8 encoder would make it.
const LINE_BREAK = /\r\n?/g;
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const CONTROL = /[\u0000-\u0008\v\f\u000E-\u001F\u007F]/g;
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * Text as the body carries it: CR LF and CR become LF, C0 controls but TAB and LF and DEL are
 * removed, unpaired surrogates become U+FFFD. Everything else reads back exactly.
 */
function icsText(s: string): string {
  return s.replace(LINE_BREAK, '\n').replace(CONTROL, '').replace(LONE_SURROGATE, '\uFFFD');
}

const present = (s: string | null): s is string => s !== null && s !== '';

/** A value ical-generator writes unescaped (URIs): no line break or control may reach the body. */
const bare = (s: string): string => icsText(s).replace(/\s/g, '');

/** "Ages 3–5", "Age 4". */
function agesLine(r: EventRecord): string | null {
  const a = r.age_range_years;
  if (!a) return null;
  return a.min_years === a.max_years ? `Age ${a.min_years}` : `Ages ${a.min_years}–${a.max_years}`;
}

const dollars = (n: number): string => `$${Number.isInteger(n) ? n : n.toFixed(2)}`;

/** "Free", "$15–$20 (members $15)", "$10": what the record knows of the price. */
function priceLine(r: EventRecord): string | null {
  if (r.is_free) return 'Free';
  const p = r.price;
  if (!p) return null;
  const amounts = [...new Set([p.min, p.max].filter((n): n is number => n !== null))].map(dollars).join('–');
  if (amounts && p.note) return `${amounts} (${p.note})`;
  return amounts || p.note;
}

/**
 * The plain-text DESCRIPTION: a cancellation notice (clients that ignore STATUS still show it),
 * the event's text, ages and price, then the event page; each cleaned by `icsText`, the ones left
 * non-empty separated by a blank line.
 */
function icsDescription(r: EventRecord): string {
  const details = [agesLine(r), priceLine(r)].filter(present).join(' · ');
  const about = [r.description, r.summary].find(present) ?? null;
  const paragraphs = [r.is_canceled ? 'This event is canceled.' : null, about, details, r.event_url];
  return paragraphs.filter(present).map(icsText).filter(present).join('\n\n');
}

/**
 * A local time the clocks show twice (01:00–01:59 on the night they go back). RFC 5545 reads such a
 * TZID time as its first occurrence, but libical and ical.js read it as the second: either way one of
 * the two would land an hour off somewhere.
 */
const repeatedWallTime = (t: DateTime): boolean => t.setZone(ZONE).getPossibleOffsets().length > 1;

/**
 * The event's times: an all-day event's days as DATE values; a timed one at its local wall time with TZID (Luxon keeps the zone; ical-generator would
 * format native Dates in the process's zone), or in UTC, which every reader agrees on, when a wall
 * time is one the clocks show twice. No DTEND when the end is unknown or not after the start: RFC
 * 5545 then ends a DATE-TIME event at its start, which is what the API contract says of it as well.
 */
function times(r: EventRecord): Pick<ICalEventData, 'start' | 'end' | 'timezone' | 'allDay'> {
  const start = DateTime.fromISO(r.start_datetime, { setZone: true });
  if (!start.isValid) throw new Error(`event ${r.id}: start_datetime is not ISO 8601`);
  const parsedEnd = r.end_datetime === null ? null : DateTime.fromISO(r.end_datetime, { setZone: true });
  if (r.all_day) {
    // DATE values, the days as the Pacific calendar has them; DTEND is exclusive (RFC 5545 3.6.1):
    // the day after the last, so a one-day event ends the next day and a weekend spans both days.
    const first = start.setZone(ZONE).startOf('day');
    const last = parsedEnd?.isValid && parsedEnd > start ? parsedEnd.setZone(ZONE).startOf('day') : first;
    return { start: first, end: last.plus({ days: 1 }), timezone: ZONE, allDay: true };
  }
  const end = parsedEnd?.isValid && parsedEnd > start ? parsedEnd : null;
  const utc = repeatedWallTime(start) || (end !== null && repeatedWallTime(end));
  return { start, end, timezone: utc ? null : ZONE };
}

/** LOCATION ("venue name, address") and GEO, each when known. */
function place(r: EventRecord): Pick<ICalEventData, 'location'> {
  const title = [r.venue.name, r.venue.address].map(icsText).filter(present).join(', ');
  const { lat, lng } = r.venue;
  const geo = Number.isFinite(lat) && Number.isFinite(lng) ? { lat, lon: lng } : null;
  if (title !== '') return { location: geo ? { title, geo } : { title } };
  return geo ? { location: { geo } } : {};
}

function eventData(r: EventRecord, stamp: Date): ICalEventData {
  const categories = r.categories.map(icsText).filter(present);
  return {
    id: r.id,
    sequence: 0,
    stamp,
    ...times(r),
    summary: icsText(r.title),
    description: icsDescription(r),
    ...place(r),
    url: bare(r.event_url),
    categories: categories.map((name) => ({ name })),
    status: r.is_canceled ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    // ORGANIZER is a cal-address (mailto:); we know organizers by name and web site only.
  };
}

/**
 * One VCALENDAR of `records`. The calendar is given no zone name of its own: with one, ical-generator
 * writes DTSTAMP in local time, and DTSTAMP must be UTC. So the VTIMEZONE is made for the events'
 * TZID, and X-WR-TIMEZONE and X-WR-CALNAME are custom properties, which the library escapes (it
 * writes NAME unescaped) but places after the events (readers take calendar properties in any order).
 */
export function icsBody(records: readonly EventRecord[], cal: CalendarInfo): Buffer {
  const stamp = new Date(cal.stamp);
  if (Number.isNaN(stamp.getTime())) throw new Error(`calendar stamp is not a date: ${cal.stamp}`);
  const calendar = new ICalCalendar({
    prodId: PRODID,
    method: ICalCalendarMethod.PUBLISH,
    url: bare(cal.url),
    ttl: REFRESH_SECONDS,
    timezone: { name: null, generator: vtimezone },
    x: [
      ['X-WR-CALNAME', icsText(cal.name)],
      ['X-WR-TIMEZONE', ZONE],
    ],
  });
  for (const r of records) calendar.createEvent(eventData(r, stamp));
  return Buffer.from(calendar.toString() + '\r\n');
}
