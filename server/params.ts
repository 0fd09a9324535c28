// The query parameters of the search family (live search, demo, and later the exports), as valibot
// schemas over the raw strings. The OpenAPI document is generated from these same schemas
// (typeMode 'input': the string each parameter accepts); the handlers get their parsed output.
import { DateTime } from 'luxon';
import * as v from 'valibot';
import { ZONE } from '../workers/snapshot/normalize/times.ts';
import { CATEGORY_SLUGS } from '../workers/snapshot/taxonomy.ts';

export const MAX_OFFSET = 100_000;
export const MAX_AGE_YEARS = 18;
export const MAX_RADIUS_KM = 500;
export const DEFAULT_RADIUS_KM = 10;
export const Q_MAX = 200;

const DECIMAL = /^[+-]?(?:\d{1,12}(?:\.\d{0,15})?|\.\d{1,15})$/;
const WHOLE = /^\d{1,9}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_WEEK = /^(\d{4})-W(\d{2})$/;

const decimalIn = (min: number, max: number, what: string) =>
  v.pipe(
    v.string(),
    v.regex(DECIMAL, `must be a decimal number ${what}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be ${what}`),
    v.maxValue(max, `must be ${what}`),
  );

const wholeIn = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(WHOLE, `must be a whole number from ${min} to ${max}`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `must be a whole number from ${min} to ${max}`),
    v.maxValue(max, `must be a whole number from ${min} to ${max}`),
  );

/** Comma-separated names: trimmed, empty items dropped, at least one left, at most `max`. */
const commaList = (what: string, max: number) =>
  v.pipe(
    v.string(),
    v.maxLength(2000, `must be at most 2000 characters`),
    v.transform((s) => s.split(',').map((x) => x.trim()).filter((x) => x !== '')),
    v.array(v.string()),
    v.minLength(1, `must name at least one ${what}`),
    v.maxLength(max, `must name at most ${max} ${what}s`),
  );

/** A bound of the date range: a whole day in America/Los_Angeles, or an RFC 3339 instant. */
export interface DateBound {
  readonly kind: 'day' | 'instant';
  /** The day's first ms (start) or last ms (end, inclusive), or the instant itself. */
  readonly startMs: number;
  readonly endMs: number;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:z|[+-]\d{2}:\d{2})$/i;

const dateBound = () =>
  v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }): DateBound => {
      const s = dataset.value;
      if (DAY.test(s)) {
        const day = DateTime.fromISO(s, { zone: ZONE });
        if (day.isValid) return { kind: 'day', startMs: day.startOf('day').toMillis(), endMs: day.endOf('day').toMillis() };
        addIssue({ message: `${s} is not a calendar date; use YYYY-MM-DD, e.g. 2026-12-05` });
        return NEVER;
      }
      if (RFC3339.test(s)) {
        const t = DateTime.fromISO(s.toUpperCase().replace(' ', 'T'), { setZone: true });
        if (t.isValid) return { kind: 'instant', startMs: t.toMillis(), endMs: t.toMillis() };
      }
      addIssue({ message: 'must be a date YYYY-MM-DD or an RFC 3339 date-time with offset, e.g. 2026-12-05T10:00:00-08:00' });
      return NEVER;
    }),
  );

export type WeekSpec = { readonly kind: 'current' } | { readonly kind: 'next' } | { readonly kind: 'iso'; readonly year: number; readonly week: number };

const week = () =>
  v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }): WeekSpec => {
      const s = dataset.value;
      if (s === 'current' || s === 'next') return { kind: s };
      const m = ISO_WEEK.exec(s);
      if (m) {
        const year = Number(m[1]);
        const wk = Number(m[2]);
        const monday = DateTime.fromObject({ weekYear: year, weekNumber: wk, weekday: 1 }, { zone: ZONE });
        if (wk >= 1 && monday.isValid && monday.weekYear === year && monday.weekNumber === wk) return { kind: 'iso', year, week: wk };
        addIssue({ message: `${s} is not a week of ${year}; ISO years have weeks W01 to W52 or W53` });
        return NEVER;
      }
      addIssue({ message: 'must be current, next, or an ISO week such as 2026-W49' });
      return NEVER;
    }),
  );

const category = () =>
  v.pipe(
    commaList('category', CATEGORY_SLUGS.length),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const known = new Set<string>(CATEGORY_SLUGS);
      const unknown = dataset.value.filter((c) => !known.has(c));
      if (unknown.length) addIssue({ message: `names an unknown category: ${unknown.map((c) => `"${c}"`).join(', ')}; the slugs are listed at /v1/categories` });
    }),
  );

const q = () =>
  v.pipe(
    v.string(),
    v.minLength(1, `must be 1 to ${Q_MAX} characters`),
    v.maxLength(Q_MAX, `must be 1 to ${Q_MAX} characters`),
    v.check((s) => /[\p{L}\p{N}]/u.test(s), 'must contain at least one letter or digit'),
  );

const isFree = () =>
  v.pipe(
    v.picklist(['true', 'false', '1', '0'], 'must be true, false, 1 or 0'),
    v.transform((s) => s === 'true' || s === '1'),
  );

const doc = <S extends v.GenericSchema>(schema: S, description: string) => v.optional(v.pipe(schema, v.description(description)));

/** The search filters and paging, with `limit` capped per route (100 JSON/feeds, 10 demo, 10000 CSV). */
export function searchParams(opts: { readonly maxLimit: number; readonly defaultLimit: number }) {
  return v.pipe(
    v.object({
      city: doc(commaList('city', 50), 'Comma-separated city names from /v1/cities; case- and accent-insensitive; any of them matches.'),
      lat: doc(decimalIn(-90, 90, 'from -90 to 90'), 'Latitude of the search centre (WGS84). Needs lng.'),
      lng: doc(decimalIn(-180, 180, 'from -180 to 180'), 'Longitude of the search centre (WGS84). Needs lat.'),
      radius_km: doc(
        v.pipe(
          v.string(),
          v.regex(DECIMAL, `must be a decimal number greater than 0 and at most ${MAX_RADIUS_KM}`),
          v.transform(Number),
          v.number(),
          v.gtValue(0, `must be greater than 0 and at most ${MAX_RADIUS_KM}`),
          v.maxValue(MAX_RADIUS_KM, `must be greater than 0 and at most ${MAX_RADIUS_KM}`),
        ),
        `Great-circle radius in km around lat/lng, in (0, ${MAX_RADIUS_KM}]; default ${DEFAULT_RADIUS_KM}. Needs lat and lng.`,
      ),
      age_min: doc(wholeIn(0, MAX_AGE_YEARS), 'Child age in whole years, lower bound (0–18). Events whose age range overlaps match; events without one match any age.'),
      age_max: doc(wholeIn(0, MAX_AGE_YEARS), 'Child age in whole years, upper bound (0–18), inclusive of the whole year.'),
      category: doc(category(), 'Comma-separated category slugs from /v1/categories; any of them matches.'),
      q: doc(q(), `Free text, 1–${Q_MAX} characters: every word must start a word of the title, summary, description, venue, organizer or tags (case- and accent-insensitive).`),
      is_free: doc(isFree(), 'true|false|1|0: only free, or only paid, events.'),
      start_date: doc(dateBound(), 'Range start: YYYY-MM-DD (a day in America/Los_Angeles) or RFC 3339 with offset. Events overlapping the range match.'),
      end_date: doc(dateBound(), 'Range end, inclusive: YYYY-MM-DD (the whole day) or RFC 3339 with offset.'),
      week: doc(week(), 'current, next, or an ISO week YYYY-Www: Monday 00:00 to Sunday end, America/Los_Angeles. Not with start_date/end_date.'),
      sort: doc(v.picklist(['start', 'distance'], 'must be start or distance'), 'start (default: start time, then id) or distance (needs lat/lng).'),
      limit: doc(wholeIn(1, opts.maxLimit), `Page size, 1–${opts.maxLimit}; default ${opts.defaultLimit}.`),
      offset: doc(wholeIn(0, MAX_OFFSET), `Records to skip, 0–${MAX_OFFSET}; default 0.`),
      api_key: doc(v.string(), 'The API key, instead of the Authorization header.'),
    }),
    v.forward(
      v.partialCheck([['lat'], ['lng']], (i) => (i.lat === undefined) === (i.lng === undefined), 'must be given together with lat (both or neither)'),
      ['lng'],
    ),
    v.forward(
      v.partialCheck([['lat'], ['radius_km']], (i) => i.radius_km === undefined || i.lat !== undefined, 'needs lat and lng'),
      ['radius_km'],
    ),
    v.forward(
      v.partialCheck([['lat'], ['sort']], (i) => i.sort !== 'distance' || i.lat !== undefined, 'can be distance only with lat and lng'),
      ['sort'],
    ),
    v.forward(
      v.partialCheck(
        [['age_min'], ['age_max']],
        (i) => i.age_min === undefined || i.age_max === undefined || i.age_min <= i.age_max,
        'must not be less than age_min',
      ),
      ['age_max'],
    ),
    v.forward(
      v.partialCheck(
        [['start_date'], ['end_date']],
        (i) => i.start_date === undefined || i.end_date === undefined || i.end_date.endMs >= i.start_date.startMs,
        'must not be before start_date',
      ),
      ['end_date'],
    ),
    v.forward(
      v.partialCheck(
        [['week'], ['start_date'], ['end_date']],
        (i) => i.week === undefined || (i.start_date === undefined && i.end_date === undefined),
        'cannot be combined with start_date or end_date; use one or the other',
      ),
      ['week'],
    ),
  );
}

export type SearchParamsSchema = ReturnType<typeof searchParams>;
export type SearchParams = v.InferOutput<SearchParamsSchema>;
