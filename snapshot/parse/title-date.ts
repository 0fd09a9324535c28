// A date given only in an item's title ("Sat, Nov 29", "Nov 29 – Storytime", "Saturday, November
// 29th"), for items whose feed gives no event time of its own. chrono-node reads the many ways people
// write a date (ordinals, abbreviations, ranges, a time beside it) where a format list would chase
// each spelling; it also places a year-less date in the year nearest a reference instant, which is
// the rule here: the item's own date (publication, DTSTAMP), else the feed's.
import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';
import { fromWallClock } from '../normalize/times.ts';
import { LA } from '../../core/zone.ts';
import type { UpstreamTime } from '../types.ts';

// A month written in letters. Numeric forms in titles ("Grades 3/4", "Ages 2-5") are rarely dates.
const MONTH_WORD = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s{0,3}\d/i;

/** A feed's or item's own timestamp (RFC 2822 pubDate, ISO 8601, iCalendar basic form), or null. */
export function referenceInstant(text: string | null | undefined): DateTime | null {
  const s = text?.trim();
  if (!s) return null;
  for (const d of [
    DateTime.fromISO(s, { zone: LA }),
    DateTime.fromRFC2822(s, { zone: LA }),
    DateTime.fromHTTP(s, { zone: LA }),
    DateTime.fromFormat(s.replace(/Z$/, ''), "yyyyMMdd'T'HHmmss", { zone: s.endsWith('Z') ? 'UTC' : LA }),
  ]) {
    if (d.isValid) return d;
  }
  return null;
}

/**
 * The start a title states, or null when it states no day of a month. A weekday beside the date
 * ("Sat, Nov 29") picks, of the nearest year and the two beside it, the nearest one where that day
 * is that weekday.
 */
export function titleDate(title: string | null | undefined, ref: DateTime | null): UpstreamTime | null {
  if (!title || !ref?.isValid) return null;
  const found = chrono.en
    .parse(title, { instant: ref.toJSDate(), timezone: ref.offset })
    .find((r) => r.start.isCertain('month') && r.start.isCertain('day') && MONTH_WORD.test(r.text));
  if (!found) return null;
  const s = found.start;
  const month = s.get('month')!;
  const day = s.get('day')!;
  let year = s.get('year')!;
  const weekday = s.isCertain('year') ? null : s.get('weekday');
  if (weekday !== null && weekday !== undefined) {
    // chrono numbers weekdays from Sunday = 0, luxon from Monday = 1 to Sunday = 7.
    const fits = (y: number): boolean => DateTime.fromObject({ year: y, month, day }, { zone: LA }).weekday % 7 === weekday;
    const away = (y: number): number => Math.abs(DateTime.fromObject({ year: y, month, day }, { zone: LA }).diff(ref).toMillis());
    year = [year, year - 1, year + 1].filter(fits).sort((a, b) => away(a) - away(b))[0] ?? year;
  }
  const timed = s.isCertain('hour');
  const at = fromWallClock({ year, month, day, hour: timed ? s.get('hour')! : 0, minute: timed ? (s.get('minute') ?? 0) : 0, second: 0 }, LA);
  return at.isValid ? { at, dateOnly: !timed } : null;
}
