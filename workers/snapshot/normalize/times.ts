// Upstream time strings → instants in America/Los_Angeles. luxon owns the zone rules (DST included).
import { DateTime } from 'luxon';

export const ZONE = 'America/Los_Angeles';

export interface UpstreamTime {
  readonly at: DateTime;
  /** A calendar date with no time of day (all-day). `at` is then local midnight. */
  readonly dateOnly: boolean;
}

// Windows and legacy zone names that calendar exports (Outlook, Exchange) put in TZID.
const ZONE_ALIASES: Readonly<Record<string, string>> = {
  'pacific standard time': ZONE,
  'pacific time': ZONE,
  'us/pacific': ZONE,
  pst8pdt: ZONE,
  'mountain standard time': 'America/Denver',
  'central standard time': 'America/Chicago',
  'eastern standard time': 'America/New_York',
  utc: 'UTC',
  gmt: 'UTC',
};

/** An IANA zone for an upstream TZID; unknown or missing → the region's zone. */
export function zoneFor(tzid: string | null | undefined): string {
  if (!tzid) return ZONE;
  const alias = ZONE_ALIASES[tzid.trim().toLowerCase()];
  if (alias) return alias;
  return DateTime.local({ zone: tzid }).isValid ? tzid : ZONE;
}

const LOCAL_FORMATS = [
  'M/d/yyyy h:mm a',
  'M/d/yyyy h:mma',
  'M/d/yyyy H:mm',
  'M/d/yy h:mm a',
  'MMMM d, yyyy h:mm a',
  'MMMM d, yyyy h a',
  'MMM d, yyyy h:mm a',
  'EEEE, MMMM d, yyyy h:mm a',
  'yyyy-MM-dd h:mm a',
  'yyyy-MM-dd HH:mm',
];
const DATE_FORMATS = ['yyyy-MM-dd', 'M/d/yyyy', 'M/d/yy', 'MMMM d, yyyy', 'MMM d, yyyy', 'EEEE, MMMM d, yyyy'];

/**
 * ISO 8601 (with or without offset), RFC 2822, or the US wall-clock forms spreadsheets export.
 * A string with an offset is an instant; one without is wall-clock time in `zone`.
 */
export function parseUpstreamTime(input: string | null | undefined, zone = ZONE): UpstreamTime | null {
  if (input == null) return null;
  const s = input.trim().replace(/\s+/g, ' ').replace(/\b([ap])\.m\.?/gi, '$1m');
  if (s === '' || s.length > 64) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(s) || /^\d{8}$/.test(s)) {
    const d = DateTime.fromISO(s, { zone });
    return d.isValid ? { at: d.setZone(ZONE), dateOnly: true } : null;
  }
  const iso = DateTime.fromISO(s, { zone, setZone: false });
  if (iso.isValid) return { at: iso.setZone(ZONE), dateOnly: false };
  const rfc = DateTime.fromRFC2822(s, { zone });
  if (rfc.isValid) return { at: rfc.setZone(ZONE), dateOnly: false };
  for (const f of LOCAL_FORMATS) {
    const d = DateTime.fromFormat(s, f, { zone, locale: 'en-US' });
    if (d.isValid) return { at: d.setZone(ZONE), dateOnly: false };
  }
  for (const f of DATE_FORMATS) {
    const d = DateTime.fromFormat(s, f, { zone, locale: 'en-US' });
    if (d.isValid) return { at: d.setZone(ZONE), dateOnly: true };
  }
  return null;
}

/** Wall-clock components in a zone → an instant (DST gaps move forward, as RFC 5545 says). */
export function fromWallClock(
  parts: { year: number; month: number; day: number; hour: number; minute: number; second: number },
  zone: string,
): DateTime {
  return DateTime.fromObject(parts, { zone }).setZone(ZONE);
}

/** "2026-11-21T10:00:00-08:00": the form every datetime in the API takes. */
export function isoLocal(d: DateTime): string {
  return d.setZone(ZONE).toISO({ suppressMilliseconds: true, includeOffset: true }) ?? '';
}

export interface Span {
  readonly start: DateTime;
  readonly end: DateTime | null;
}

/**
 * Start and end of an event. All-day events run from local midnight of the first day to
 * 23:59:59 of the last (an exclusive DTEND date is the day after the last). An end before the
 * start is upstream noise and is dropped rather than guessed.
 */
export function eventSpan(start: UpstreamTime, end: UpstreamTime | null, endIsExclusiveDate = false): Span {
  if (start.dateOnly) {
    const first = start.at.startOf('day');
    let last = end ? end.at.startOf('day') : first;
    if (end && end.dateOnly && endIsExclusiveDate && last > first) last = last.minus({ days: 1 });
    if (last < first) last = first;
    return { start: first, end: last.endOf('day').set({ millisecond: 0 }) };
  }
  if (!end) return { start: start.at, end: null };
  let e = end.at;
  if (end.dateOnly) e = e.endOf('day').set({ millisecond: 0 });
  return { start: start.at, end: e >= start.at ? e : null };
}
