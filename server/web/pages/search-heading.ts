// What a listing shows, said in words for its heading and tab title: "Free storytime events in
// Berkeley for ages 3–5, this week", "Events matching “puppets”". Read from the filters as the
// request gave them (already checked: only a search that ran is described), in the order a person
// would say them: price, categories, what was searched, where, for whom, when.
import { DateTime } from 'luxon';
import { fold } from '../../../core/text.ts';
import { CATEGORY_LABELS, type CategorySlug } from '../../../core/taxonomy.ts';
import { ZONE } from '../../../core/zone.ts';
import { DEFAULT_MILES, KM_PER_MILE } from './browse.ts';

/** The API's radius when none is given (server/params.ts DEFAULT_RADIUS_KM), kept in step by the tests. */
const DEFAULT_RADIUS_KM = 10;

const list = (s: string | undefined): string[] =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

/** "a", "a or b", "a, b or c": any of them matches. */
function anyOf(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]!}`;
}

function agesWords(min: string | undefined, max: string | undefined): string | null {
  if (min === undefined && max === undefined) return null;
  if (min !== undefined && max !== undefined) return min === max ? `for age ${min}` : `for ages ${min}–${max}`;
  if (min !== undefined) return `for ages ${min} and up`;
  return `for ages ${max!} and under`;
}

/** A bound as a Pacific day, "Dec 5" or with its weekday "Sat, Dec 5" (and the year when it is not the current one). */
function dayWords(s: string, nowMs: number, weekday = false): string {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(s) ? DateTime.fromISO(s, { zone: ZONE }) : DateTime.fromISO(s.replace(' ', 'T'), { zone: ZONE });
  if (!day.isValid) return s;
  const thisYear = DateTime.fromMillis(nowMs, { zone: ZONE }).year;
  return day.toFormat(`${weekday ? 'EEE, ' : ''}MMM d${day.year === thisYear ? '' : ', yyyy'}`, { locale: 'en-US' });
}

/** The website's When choices (server/web/site/filters.ts), said as the form offers them. */
const WHEN_WORDS: Readonly<Record<string, string>> = {
  today: 'today',
  tomorrow: 'tomorrow',
  weekend: 'this weekend',
  week: 'this week',
  'next-week': 'next week',
};

function whenWords(v: Readonly<Record<string, string>>, nowMs: number): string | null {
  const chosen = v.when === undefined ? undefined : WHEN_WORDS[v.when];
  if (chosen !== undefined) return chosen;
  const week = v.week;
  if (week === 'current') return 'this week';
  if (week === 'next') return 'next week';
  if (week !== undefined) {
    const m = /^(\d{4})-W(\d{2})$/.exec(week);
    if (!m) return null;
    const monday = DateTime.fromObject({ weekYear: Number(m[1]), weekNumber: Number(m[2]), weekday: 1 }, { zone: ZONE });
    return monday.isValid ? `in the week of ${dayWords(monday.toISODate() ?? week, nowMs)}` : null;
  }
  const from = v.start_date === undefined ? null : dayWords(v.start_date, nowMs);
  const to = v.end_date === undefined ? null : dayWords(v.end_date, nowMs);
  if (from !== null && from === to) return `on ${dayWords(v.start_date!, nowMs, true)}`;
  if (from !== null && to !== null) return `from ${from} to ${to}`;
  if (from !== null) return `from ${from}`;
  if (to !== null) return `until ${to}`;
  return null;
}

function nearWords(v: Readonly<Record<string, string>>, place: string | null): string | null {
  // A typed ZIP code or town, resolved (the website's "near" and "miles"): named as resolved.
  if (v.near !== undefined && place !== null) {
    const m = v.miles === undefined ? DEFAULT_MILES : Number(v.miles);
    return `within ${m} ${m === 1 ? 'mile' : 'miles'} of ${place}`;
  }
  if (v.lat === undefined || v.lng === undefined) return null;
  const miles = v.miles !== undefined ? Number(v.miles) : Number(v.radius_km ?? DEFAULT_RADIUS_KM) / KM_PER_MILE;
  const shown = miles < 10 ? String(Math.round(miles * 10) / 10) : String(Math.round(miles));
  return `within ${shown} ${shown === '1' ? 'mile' : 'miles'} of ${v.lat}, ${v.lng}`;
}

export interface HeadingContext {
  /** The snapshot's city names: a city asked for in any case or spelling is named as listed. */
  readonly cities: readonly string[];
  readonly nowMs: number;
  /** The place a typed ZIP code or town resolved to, when the search has one. */
  readonly place?: string | null;
}

/**
 * The search in words, or null when nothing is filtered (the page's own heading then stands).
 * Parameters it does not know are left out of the words, not guessed at.
 */
export function searchHeading(values: Readonly<Record<string, string>>, ctx: HeadingContext): string | null {
  const v = values;
  const byFold = new Map(ctx.cities.map((c) => [fold(c), c]));
  const price = v.is_free === 'true' || v.is_free === '1' ? 'free' : v.is_free === 'false' || v.is_free === '0' ? 'paid' : null;
  const categories = list(v.category).map((c) => (CATEGORY_LABELS[c as CategorySlug] ?? c).toLowerCase());
  const q = v.q === undefined ? null : `matching “${v.q}”`;
  const cities = list(v.city).map((c) => byFold.get(fold(c)) ?? c);
  const parts = [
    [price, categories.length ? anyOf(categories) : null, 'events'].filter((x) => x !== null).join(' '),
    q,
    cities.length ? `in ${anyOf(cities)}` : null,
    nearWords(v, ctx.place ?? null),
    agesWords(v.age_min, v.age_max),
  ].filter((x) => x !== null);
  const when = whenWords(v, ctx.nowMs);
  if (parts.length === 1 && price === null && categories.length === 0 && when === null) return null;
  // "Events this week", but "Free events in Berkeley for ages 3–5, this week": the comma keeps the
  // time from reading as part of the last filter.
  const text = parts.join(' ') + (when === null ? '' : `${parts.length > 1 ? ',' : ''} ${when}`);
  return text.charAt(0).toUpperCase() + text.slice(1);
}
