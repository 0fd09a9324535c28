// Event facts as people say them, in Pacific time whatever the machine's zone. luxon's zone rules
// (the memoized America/Los_Angeles of times.ts) give each instant its offset; the wall clock is then
// plain arithmetic, and names of days and months come from fixed English tables rather than Intl,
// so the words never depend on the host's locale and a browse page of 100 events costs no formatter
// calls (building luxon DateTimes was most of a page's render time).
import type { EventRecord } from '../../core/record.ts';
import { LA, ZONE } from '../../core/zone.ts';

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
const WEEKDAYS_SHORT = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;
const MONTHS_SHORT = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** A Pacific wall clock. `weekday` counts from Monday = 1, as ISO does. */
interface Wall {
  readonly ms: number;
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly weekday: number;
}

/** An instant as the wall clock in Pacific time. */
function wallAt(ms: number): Wall {
  const d = new Date(ms + LA.offset(ms) * 60_000);
  return {
    ms,
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: ((d.getUTCDay() + 6) % 7) + 1,
  };
}

/** An ISO datetime (any offset, as the record writes it) as the wall clock in Pacific time. */
const pacific = (iso: string): Wall => wallAt(Date.parse(iso));

/** The calendar day `days` away from a wall clock's day, as [year, month, day]. */
function dayFrom(w: Wall, days: number): readonly [number, number, number] {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
}

/** "Sat, Dec 6" or, with the year, "Sat, Dec 6, 2027". */
function shortDay(d: Wall, withYear: boolean): string {
  const day = `${WEEKDAYS_SHORT[d.weekday - 1]}, ${MONTHS_SHORT[d.month - 1]} ${d.day}`;
  return withYear ? `${day}, ${d.year}` : day;
}

/** "10 AM", "10:30 AM", or without the meridiem "10:30" (the end of a range carries it). */
function clock(d: Wall, meridiem: boolean): string {
  const h = d.hour % 12 === 0 ? 12 : d.hour % 12;
  const t = d.minute === 0 ? String(h) : `${h}:${pad2(d.minute)}`;
  return meridiem ? `${t} ${d.hour < 12 ? 'AM' : 'PM'}` : t;
}

const sameDay = (a: Wall, b: Wall): boolean => a.year === b.year && a.month === b.month && a.day === b.day;
const isMidnight = (d: Wall): boolean => d.hour === 0 && d.minute === 0 && d.second === 0;
/** `e` is the midnight that ends `s`'s day. */
function endsAtMidnightOf(s: Wall, e: Wall): boolean {
  if (!isMidnight(e)) return false;
  const [y, m, d] = dayFrom(e, -1);
  return s.year === y && s.month === m && s.day === d;
}

/**
 * When an event happens, for people: "Sat, Dec 6, 10:30–11:30 AM", "Sat, Dec 6, 11:30 AM–1 PM",
 * "Sat, Dec 6, 7 PM – Sun, Dec 7, 2 AM"; an all-day event (the record's all_day: the upstream
 * gave no time of day) "Sat, Dec 6, All day" or "Sat, Dec 6 – Sun, Dec 14, All day".
 * With `nowMs`, dates outside the current (Pacific) year carry their year.
 */
export function whenText(start: string, end: string | null, nowMs?: number, allDay = false): string {
  const s = pacific(start);
  const e = end === null ? null : pacific(end);
  const year = nowMs === undefined ? null : wallAt(nowMs).year;
  const withYear = year !== null && (s.year !== year || (e !== null && e.year !== year));
  if (allDay) {
    return e === null || e.ms <= s.ms || sameDay(s, e) ? `${shortDay(s, withYear)}, All day` : `${shortDay(s, withYear)} – ${shortDay(e, withYear)}, All day`;
  }
  if (e === null || e.ms <= s.ms) return `${shortDay(s, withYear)}, ${clock(s, true)}`;
  // An evening ending at the stroke of midnight is still that evening: "7 PM–midnight".
  if (endsAtMidnightOf(s, e)) return `${shortDay(s, withYear)}, ${clock(s, true)}–midnight`;
  if (!sameDay(s, e)) return `${shortDay(s, withYear)}, ${clock(s, true)} – ${shortDay(e, withYear)}, ${clock(e, true)}`;
  const oneMeridiem = s.hour < 12 === e.hour < 12;
  return `${shortDay(s, withYear)}, ${clock(s, !oneMeridiem)}–${clock(e, true)}`;
}

/**
 * A list heading for the day an event starts: "Saturday, December 6"; with `nowMs`, a day outside
 * the current year reads "Saturday, January 9, 2027".
 */
export function dateHeading(start: string, nowMs?: number): string {
  const d = pacific(start);
  const day = `${WEEKDAYS[d.weekday - 1]}, ${MONTHS[d.month - 1]} ${d.day}`;
  return nowMs !== undefined && d.year !== wallAt(nowMs).year ? `${day}, ${d.year}` : day;
}

/** The day an event starts, always with its year: "Saturday, December 6, 2025". */
export function fullDate(start: string): string {
  const d = pacific(start);
  return `${WEEKDAYS[d.weekday - 1]}, ${MONTHS[d.month - 1]} ${d.day}, ${d.year}`;
}

/** The Pacific calendar day of an instant, "2025-12-06": what list grouping compares. */
export function pacificDay(isoOrMs: string | number): string {
  const d = typeof isoOrMs === 'number' ? wallAt(isoOrMs) : pacific(isoOrMs);
  return `${d.year}-${pad2(d.month)}-${pad2(d.day)}`;
}

const TOP_MONTHS = 18 * 12;
const monthsText = (n: number): string => (n === 1 ? '1 month' : `${n} months`);
const yearsText = (a: number, b: number): string => (a === b ? `Age ${a}` : `Ages ${a}–${b}`);

/**
 * Ages as people say them, from `age_range` in months. The pipeline stores "ages 3–5" as months
 * 36..71 (from the 3rd birthday to the day before the 6th), caps every range at 18 years, and stores
 * "ages 6–18 months" as months 6..18. So:
 * - no range: "All ages";
 * - a range reaching 18 years: "Ages 12 and up", or "Ages 18 and under" when it starts at birth;
 * - both ends on whole years (min a multiple of 12, max one month short of one): "Ages 3–5",
 *   "Age 4" for a single year, "Under 2" / "Under 1" for babies' spans from birth;
 * - a span within the first two years, in months: "Ages 6–18 months";
 * - otherwise years as `age_range_years` floors them ("Ages 2–3"), or, from an age in months,
 *   "Ages 6 months to 2 years".
 */
export function agesText(range: EventRecord['age_range']): string {
  if (range === null) return 'All ages';
  const { min_months: lo, max_months: hi } = range;
  const loYears = lo % 12 === 0;
  if (hi >= TOP_MONTHS) {
    if (lo === 0) return 'Ages 18 and under';
    return loYears ? `Ages ${lo / 12} and up` : `Ages ${monthsText(lo)} and up`;
  }
  if (loYears && (hi + 1) % 12 === 0) {
    const a = lo / 12;
    const b = (hi + 1) / 12 - 1;
    if (a === 0 && b <= 1) return `Under ${b + 1}`;
    return yearsText(a, b);
  }
  if (hi < 24) return lo === hi ? `Age ${monthsText(lo)}` : `Ages ${lo}–${monthsText(hi)}`;
  return loYears ? yearsText(lo / 12, Math.floor(hi / 12)) : `Ages ${monthsText(lo)} to ${Math.floor(hi / 12)} years`;
}

const money = (n: number): string => (Number.isInteger(n) ? `$${n}` : `$${n.toFixed(2)}`);

/** "Free", "$5", "$5–$12", the upstream note when that is all there is, or "Price not listed". */
export function priceText(isFree: boolean, price: EventRecord['price']): string {
  if (isFree) return 'Free';
  if (price === null) return 'Price not listed';
  const lo = price.min ?? price.max;
  const hi = price.max ?? price.min;
  if (lo !== null && hi !== null) return lo === hi ? money(lo) : `${money(lo)}–${money(hi)}`;
  return price.note ?? 'Price not listed';
}

/** Text cut to at most `max` characters at a word boundary, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** An instant as Google Calendar's UTC form, 20251206T183000Z. */
function utcStamp(iso: string): string {
  const d = new Date(iso);
  return `${d.getUTCFullYear()}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}T${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}Z`;
}

const compactDay = ([y, m, d]: readonly [number, number, number]): string => `${y}${pad2(m)}${pad2(d)}`;

// Google's template URL is limited in length (about 8 KB in practice); the page link carries the rest.
const CALENDAR_DETAILS_MAX = 1500;

/**
 * A Google Calendar "add event" link. Timed events are UTC instants; an all-day event is its
 * dates (end exclusive, as Google expects). An event without an end is added as an instant.
 */
export function googleCalendarUrl(
  r: Pick<EventRecord, 'title' | 'start_datetime' | 'end_datetime' | 'all_day' | 'summary' | 'description' | 'venue' | 'event_url'>,
): string {
  const s = pacific(r.start_datetime);
  const e = r.end_datetime === null ? s : pacific(r.end_datetime);
  const dates = r.all_day
    ? `${compactDay(dayFrom(s, 0))}/${compactDay(dayFrom(e.ms > s.ms ? e : s, 1))}`
    : `${utcStamp(r.start_datetime)}/${utcStamp(r.end_datetime ?? r.start_datetime)}`;
  const about = r.description ?? r.summary;
  const details = about === null ? r.event_url : `${clip(about, CALENDAR_DETAILS_MAX)}\n\n${r.event_url}`;
  const q = new URLSearchParams({
    action: 'TEMPLATE',
    text: r.title,
    dates,
    details,
    location: `${r.venue.name}, ${r.venue.address}`,
    ctz: ZONE,
  });
  return `https://calendar.google.com/calendar/render?${q.toString()}`;
}

// Six decimals is about 10 cm: more only lengthens the link.
const coord = (n: number): string => String(Math.round(n * 1e6) / 1e6);

/**
 * A marker on OpenStreetMap's own site (a link; the pages embed no third-party tiles). An
 * approximate point (a ZIP's or a town's) gets no marker, only the area around it.
 */
export function osmUrl(lat: number, lng: number, approximate = false): string {
  const la = coord(lat);
  const lo = coord(lng);
  return approximate ? `https://www.openstreetmap.org/#map=13/${la}/${lo}` : `https://www.openstreetmap.org/?mlat=${la}&mlon=${lo}#map=17/${la}/${lo}`;
}
