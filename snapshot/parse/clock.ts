// Times of day as people type them next to a date: a spreadsheet's "time" column ("6pm-9pm",
// "9:30-16:30", "10:00:00 AM", "1700-2100") or a calendar blurb ("6 – 8:30pm"). Only a
// meridiem-less pair needs a guess, and then only the end moves ("10:00-4:00" ends at 4pm):
// a start is never shifted, because a wrong guess would move the event.
import type { DateTime } from 'luxon';

/** Minutes after the day's midnight; an end may pass midnight ("9pm-1am"). */
export interface ClockRange {
  readonly start: number;
  readonly end: number | null;
}

interface Clock {
  readonly hour: number;
  readonly minute: number;
  readonly meridiem: 'a' | 'p' | null;
}

const CLOCK = /^(?:(\d{1,2})(?::(\d{2}))?(?::\d{2})?|(\d{2})(\d{2}))\s?(?:([ap])\.?m\.?)?(?:\s(?:start|onwards?))?$/i;
const RANGE_SEPARATOR = /[-–—]|\bto\b|\buntil\b/i;

function clock(text: string): Clock | null {
  const m = CLOCK.exec(text.trim());
  if (!m) return null;
  const hour = Number(m[1] ?? m[3]);
  const minute = Number(m[2] ?? m[4] ?? 0);
  const meridiem = (m[5]?.toLowerCase() ?? null) as Clock['meridiem'];
  if (minute > 59 || (meridiem ? hour < 1 || hour > 12 : hour > 23)) return null;
  return { hour, minute, meridiem };
}

const minutesOf = (c: Clock, meridiem: Clock['meridiem']): number => (meridiem ? (c.hour % 12) + (meridiem === 'p' ? 12 : 0) : c.hour) * 60 + c.minute;

/** "6pm-9pm" → 18:00–21:00; null when the text is not a time or a range of two times. */
export function parseClockRange(text: string): ClockRange | null {
  const parts = text.split(RANGE_SEPARATOR);
  if (parts.length > 2) return null;
  const a = clock(parts[0]!);
  if (!a) return null;
  if (parts.length === 1) return { start: minutesOf(a, a.meridiem), end: null };
  const b = clock(parts[1]!);
  if (!b) return null;
  if (a.meridiem && b.meridiem) {
    const start = minutesOf(a, a.meridiem);
    const end = minutesOf(b, b.meridiem);
    // Both halves say am/pm, so an earlier end is after midnight.
    return { start, end: end > start ? end : end + 24 * 60 };
  }
  if (b.meridiem) {
    // "6 – 8:30pm" shares the end's meridiem, unless that puts the start after the end ("11 – 1pm").
    const end = minutesOf(b, b.meridiem);
    const same = minutesOf(a, b.meridiem);
    const start = same <= end ? same : minutesOf(a, b.meridiem === 'p' ? 'a' : 'p');
    return start < end ? { start, end } : { start, end: null };
  }
  const start = minutesOf(a, a.meridiem);
  let end = minutesOf(b, a.meridiem);
  // "10:00-4:00" (no am/pm): a 12-hour clock's afternoon; "11am-1" likewise.
  if (end < start && b.hour <= 12 && end + 12 * 60 > start) end += 12 * 60;
  return end > start && end < 24 * 60 ? { start, end } : { start, end: null };
}

/** The instant `minutes` after `day`'s midnight, by the wall clock (DST days have 23 or 25 hours). */
export function atClock(day: DateTime, minutes: number): DateTime {
  const d = day.startOf('day').plus({ days: Math.floor(minutes / (24 * 60)) });
  const m = minutes % (24 * 60);
  return d.set({ hour: Math.floor(m / 60), minute: m % 60 });
}
