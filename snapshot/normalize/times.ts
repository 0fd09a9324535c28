// Upstream time strings → instants in America/Los_Angeles. luxon owns the zone rules (DST included).
import { DateTime, type Zone } from 'luxon';
import { LA, ZONE } from '../../core/zone.ts';
import type { UpstreamTime } from '../types.ts';

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

const zoneCache = new Map<string, Zone | string>();

/** An IANA zone for an upstream TZID; unknown or missing → the region's zone. */
export function zoneFor(tzid: string | null | undefined): Zone | string {
  if (!tzid) return LA;
  let z = zoneCache.get(tzid);
  if (z === undefined) {
    const name = ZONE_ALIASES[tzid.trim().toLowerCase()] ?? (DateTime.local({ zone: tzid }).isValid ? tzid : ZONE);
    z = name === ZONE ? LA : name;
    if (zoneCache.size < 1000) zoneCache.set(tzid, z);
  }
  return z;
}

const LOCAL_FORMATS = [
  'M/d/yyyy h:mm a',
  'M/d/yyyy h:mma',
  'M/d/yyyy H:mm',
  'M/d/yy h:mm a',
  'M/d/yyyy h a',
  'M/d/yyyy ha',
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
export function parseUpstreamTime(input: string | null | undefined, zone: Zone | string = LA): UpstreamTime | null {
  if (input == null) return null;
  const fast = fastPath(input, zone);
  if (fast !== undefined) return fast;
  const s = input
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/\b([ap])\.m\.?/gi, '$1m');
  if (s === '' || s.length > 64) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(s) || /^\d{8}$/.test(s)) {
    const d = DateTime.fromISO(s, { zone });
    return d.isValid ? { at: d.setZone(LA), dateOnly: true } : null;
  }
  const iso = DateTime.fromISO(s, { zone, setZone: false });
  if (iso.isValid) return { at: iso.setZone(LA), dateOnly: false };
  const rfc = DateTime.fromRFC2822(s, { zone });
  if (rfc.isValid) return { at: rfc.setZone(LA), dateOnly: false };
  for (const f of LOCAL_FORMATS) {
    const d = DateTime.fromFormat(s, f, { zone, locale: 'en-US' });
    if (d.isValid) return { at: d.setZone(LA), dateOnly: false };
  }
  for (const f of DATE_FORMATS) {
    const d = DateTime.fromFormat(s, f, { zone, locale: 'en-US' });
    if (d.isValid) return { at: d.setZone(LA), dateOnly: true };
  }
  return null;
}

// The two shapes nearly every feed uses, read without luxon's general parsers (which cost
// 35–270 µs a call): ISO 8601 calendar date-times, and US "M/D/YYYY h:mm AM". Zone math stays
// luxon's. Anything else, or any out-of-range field, falls through to the general path, so this
// only ever answers what luxon would (a property test holds it to that).
const ISO_FAST = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/;
const US_FAST = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2}) ?([AP]M)$/i;

function fastPath(s: string, zone: Zone | string): UpstreamTime | null | undefined {
  let y: number,
    mo: number,
    d: number,
    h: number,
    mi: number,
    sec = 0;
  let offset: string | undefined;
  const iso = ISO_FAST.exec(s);
  if (iso) {
    [y, mo, d, h, mi] = [Number(iso[1]), Number(iso[2]), Number(iso[3]), Number(iso[4]), Number(iso[5])];
    if (iso[6] !== undefined) sec = Number(iso[6]);
    offset = iso[7];
  } else {
    const us = US_FAST.exec(s);
    if (!us) return undefined;
    [mo, d, y, h, mi] = [Number(us[1]), Number(us[2]), Number(us[3]), Number(us[4]), Number(us[5])];
    if (h < 1 || h > 12) return undefined;
    const pm = us[6]!.toLowerCase() === 'pm';
    h = (h % 12) + (pm ? 12 : 0);
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59) return undefined;
  let at: DateTime;
  if (offset !== undefined) {
    const minutes = offset === 'Z' ? 0 : (offset[0] === '-' ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
    const ms = Date.UTC(y, mo - 1, d, h, mi, sec) - minutes * 60_000;
    // Date.UTC rolls Feb 30 into March; luxon would call it invalid, so we defer to it.
    if (new Date(ms + minutes * 60_000).getUTCDate() !== d) return undefined;
    at = DateTime.fromMillis(ms, { zone: LA });
  } else {
    at = DateTime.fromObject({ year: y, month: mo, day: d, hour: h, minute: mi, second: sec }, { zone });
    if (!at.isValid) return undefined;
    at = at.setZone(LA);
  }
  return { at, dateOnly: false };
}

/** Wall-clock components in a zone → an instant (DST gaps move forward, as RFC 5545 says). */
export function fromWallClock(
  parts: { year: number; month: number; day: number; hour: number; minute: number; second: number },
  zone: Zone | string,
): DateTime {
  return DateTime.fromObject(parts, { zone }).setZone(LA);
}

/** "2026-11-21T10:00:00-08:00": the form every datetime in the API takes. */
export function isoLocal(d: DateTime): string {
  return d.setZone(LA).toISO({ suppressMilliseconds: true, includeOffset: true }) ?? '';
}

export interface Span {
  readonly start: DateTime;
  readonly end: DateTime | null;
}

/**
 * Start and end of an event, and whether it is all-day: the upstream gave a date without a time
 * of day, or whole days as times (below). All-day events run from local midnight of the first day
 * to 23:59:59 of the last (an exclusive DTEND date is the day after the last). An end before the
 * start is upstream noise and is dropped rather than guessed.
 */
export function eventSpan(start: UpstreamTime, end: UpstreamTime | null, endIsExclusiveDate = false): Span & { readonly allDay: boolean } {
  if (start.dateOnly) {
    const first = start.at.startOf('day');
    let last = end ? end.at.startOf('day') : first;
    if (end && end.dateOnly && endIsExclusiveDate && last > first) last = last.minus({ days: 1 });
    if (last < first) last = first;
    return { start: first, end: dayEnd(last), allDay: true };
  }
  let e = end === null ? null : end.dateOnly ? dayEnd(end.at) : end.at;
  if (e !== null && e < start.at) e = null;
  // Dates written as times: local midnight with no end (or ending as it starts) is how calendars
  // without a date-only form, and spreadsheets' "00:00-00:00", fill in a date; midnight to the
  // day's last half hour ("00:00–23:59:59", Trumba's "00:00–23:30") or to a later midnight is
  // whole days. Nobody starts a timed event at midnight and ends it then or so late.
  const s = start.at.setZone(LA);
  if (isMidnight(s)) {
    const ee = e?.setZone(LA) ?? s;
    if (ee.toMillis() === s.toMillis()) return { start: s, end: dayEnd(s), allDay: true };
    if (isMidnight(ee)) return { start: s, end: dayEnd(ee.minus({ days: 1 })), allDay: true };
    if (ee.hour === 23 && ee.minute >= 30) return { start: s, end: dayEnd(ee), allDay: true };
  }
  return { start: start.at, end: e, allDay: false };
}

const dayEnd = (d: DateTime): DateTime => d.endOf('day').set({ millisecond: 0 });
const isMidnight = (d: DateTime): boolean => d.hour === 0 && d.minute === 0 && d.second === 0;
