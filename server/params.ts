// The query parameters of the search family (live search, demo, and later the exports), as valibot
// schemas over the raw strings. Each is the text a client sends, decoded the way OpenAPI's style
// "form" defines (a number, a comma-separated list), then the decoded value's own schema. The OpenAPI
// document describes that value: server/openapi.ts converts each parameter from its last schema on
// (typeMode 'output') and refuses to build if a check there has no JSON Schema form, so nothing the
// server enforces on a value goes undocumented. The rules between parameters are data (RULES), read
// by the check below and by the document. Patterns use [0-9], never \d: other engines (Python, and
// ECMAScript in unicode mode for \p) read these patterns too, and there \d takes any script's digits.
import { DateTime } from 'luxon';
import * as v from 'valibot';
import { CATEGORY_SLUGS } from '../core/taxonomy.ts';
import { ZONE } from '../core/zone.ts';
import { CURSOR_PATTERN, decodeCursor, type CursorKey } from '../core/cursor.ts';

export const MAX_OFFSET = 100_000;
export const MAX_AGE_YEARS = 18;
export const MAX_RADIUS_KM = 500;
export const DEFAULT_RADIUS_KM = 10;
export const Q_MAX = 200;
/** Any double as Python's repr or JavaScript's String print it fits in 24; the bound keeps parsing cheap. */
export const MAX_NUMBER_CHARS = 64;
/** A comma-separated list's text, before it is split. */
export const MAX_LIST_CHARS = 2000;
export const MAX_CITIES = 50;

/**
 * Where a parameter's values are listed when the snapshot decides them; openapi.ts turns this
 * marker into the `enum` of the snapshot it serves the document from.
 */
export const VALUES_FROM = 'x-values-from';

/** A check that no valibot action states in JSON Schema, with the keywords that do (openapi.ts publishes them). */
export interface Stated {
  readonly jsonSchema: Readonly<Record<string, unknown>>;
}
const stated = <A extends object>(action: A, jsonSchema: Record<string, unknown>): A & Stated => Object.assign(action, { jsonSchema });

// ------------------------------------------------------------------ numbers

/**
 * A number as clients print one: JSON's grammar, also with a leading + or zeros, a bare point (.5,
 * 5.) and an exponent (1e-05, as Python writes 0.00001). Anything a double can be read from.
 */
const NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?$/i;
const NUMBER_PARTS = /^[+-]?([0-9]*)(?:\.([0-9]*))?(?:e([+-]?[0-9]+))?$/i;

/**
 * Whether a NUMBER denotes a whole number (5, 5.0, 1e2, -0), decided on its digits: none but 0 after
 * the decimal point once the exponent has moved it. Number() alone would round 1.00000000000000001 to 1.
 */
function isWhole(s: string): boolean {
  const [, int = '', frac = '', exp = '0'] = NUMBER_PARTS.exec(s) ?? [];
  const point = int.length + Number(exp);
  return !/[1-9]/.test((int + frac).slice(Math.max(0, point)));
}

const numberText = (message: string) =>
  v.pipe(v.string(), v.maxLength(MAX_NUMBER_CHARS, `${message}, written in at most ${MAX_NUMBER_CHARS} characters`), v.regex(NUMBER, message));

const decimalIn = (min: number, max: number, what: string) => {
  const message = `must be a number ${what}`;
  return v.pipe(numberText(message), v.transform(Number), v.number(), v.minValue(min, message), v.maxValue(max, message));
};

const wholeIn = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return v.pipe(
    numberText(message),
    v.check(isWhole, message),
    v.transform(Number),
    v.number(),
    v.integer(message),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
};

// ------------------------------------------------------------------ lists

/**
 * Comma-separated items (OpenAPI style form, explode false), each one checked by `item`; no empty
 * items. Splitting always gives one item at least: minLength states minItems for the document. The
 * text bound keeps splitting cheap; the longest list the document admits stays under it (tested).
 */
const commaList = <I extends v.GenericSchema<string>>(item: I, what: string, max: number) =>
  v.pipe(
    v.string(),
    v.maxLength(MAX_LIST_CHARS, `must be at most ${MAX_LIST_CHARS} characters`),
    v.transform((s) => s.split(',')),
    v.array(item),
    v.minLength(1, `must name at least one ${what}`),
    v.maxLength(max, `must name at most ${max} ${what}s`),
  );

// The city filter matches folded names (case, accents and spacing aside), so any spelling of a
// listed city is accepted; which cities exist is the snapshot's to say (server/query.ts).
const cityName = () => v.pipe(v.string(), v.nonEmpty('has an empty name (two commas in a row, or one at an end)'), v.metadata({ [VALUES_FROM]: '/v1/cities' }));

const categorySlug = () => v.picklist(CATEGORY_SLUGS, (issue) => `names an unknown category "${String(issue.input)}"; the slugs are listed at /v1/categories`);

// ------------------------------------------------------------------ dates and weeks

/** A bound of the date range: a whole day in America/Los_Angeles, or an RFC 3339 instant. */
export interface DateBound {
  readonly kind: 'day' | 'instant';
  /** The day's first ms (start) or last ms (end, inclusive), or the instant itself. */
  readonly startMs: number;
  readonly endMs: number;
}

/** Years divisible by 4, but not by 100 unless by 400 (0000 included, as the proleptic calendar has it). */
const LEAP_YEAR = '(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)';
/** Exactly the calendar dates of years 0000–9999. */
const DATE =
  '(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))' + `|${LEAP_YEAR}-02-29)`;
/** RFC 3339 time with an offset (T, Z in either case, or a space, as its section 5.6 allows); no leap second; at most 9 fraction digits. */
const TIME = '(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,9})?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])';
const DAY = new RegExp(`^${DATE}$`);
const DAY_OR_INSTANT = new RegExp(`^${DATE}(?:[Tt ]${TIME})?$`);

const dateBound = () =>
  v.pipe(
    v.string(),
    v.regex(DAY_OR_INSTANT, 'must be a date YYYY-MM-DD or an RFC 3339 date-time with offset, e.g. 2026-12-05T10:00:00-08:00'),
    v.rawTransform(({ dataset, addIssue, NEVER }): DateBound => {
      const s = dataset.value;
      if (DAY.test(s)) {
        const day = DateTime.fromISO(s, { zone: ZONE });
        if (day.isValid) return { kind: 'day', startMs: day.startOf('day').toMillis(), endMs: day.endOf('day').toMillis() };
      } else {
        const t = DateTime.fromISO(s.toUpperCase().replace(' ', 'T'), { setZone: true });
        if (t.isValid) return { kind: 'instant', startMs: t.toMillis(), endMs: t.toMillis() };
      }
      // The pattern admits only real dates and times, so this is our disagreement with luxon, not the client's mistake.
      addIssue({ message: `${s} could not be read as a date; use YYYY-MM-DD, e.g. 2026-12-05` });
      return NEVER;
    }),
  );

export type WeekSpec = { readonly kind: 'current' } | { readonly kind: 'next' } | { readonly kind: 'iso'; readonly year: number; readonly week: number };

/**
 * The years (as a pattern on YYYY) whose ISO week-year has a week 53: those starting on a Thursday,
 * and leap years starting on a Wednesday. The calendar repeats every 400 years (146097 days is
 * exactly 20871 weeks), and a year's remainder by 400 is 100 × (its century mod 4) + its last two digits.
 */
function longYears(): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  const classes: string[] = [];
  for (let k = 0; k < 4; k++) {
    const centuries = Array.from({ length: 25 }, (_, i) => pad(4 * i + k));
    const years = Array.from({ length: 100 }, (_, yy) => yy).filter((yy) => DateTime.utc(2000 + 100 * k + yy, 12, 28).weekNumber === 53);
    classes.push(`(?:${centuries.join('|')})(?:${years.map(pad).join('|')})`);
  }
  return `(?:${classes.join('|')})`;
}

const ISO_WEEK = /^([0-9]{4})-W([0-9]{2})$/;
const WEEK = new RegExp(`^(?:current|next|[0-9]{4}-W(?:0[1-9]|[1-4][0-9]|5[0-2])|${longYears()}-W53)$`);

/** A week's text as read: current, next, or an ISO week that exists. */
const readWeek = () =>
  v.rawTransform<string, WeekSpec>(({ dataset, addIssue, NEVER }): WeekSpec => {
    const s = dataset.value;
    if (s === 'current' || s === 'next') return { kind: s };
    const m = ISO_WEEK.exec(s);
    const year = Number(m?.[1]);
    const wk = Number(m?.[2]);
    const monday = DateTime.fromObject({ weekYear: year, weekNumber: wk, weekday: 1 }, { zone: ZONE });
    if (monday.isValid && monday.weekYear === year && monday.weekNumber === wk) return { kind: 'iso', year, week: wk };
    addIssue({ message: `${s} could not be read as a week of ${year}` });
    return NEVER;
  });

const week = () => v.pipe(v.string(), v.regex(WEEK, 'must be current, next, or an ISO week such as 2026-W49 (W53 only in years that have one)'), readWeek());

// ------------------------------------------------------------------ text and flags

/** Characters as JSON Schema counts them: code points, not UTF-16 units. */
const codePoints = (s: string): number => [...s].length;

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

const q = () =>
  v.pipe(
    v.string(),
    stated(
      v.check((s: string) => {
        const n = codePoints(s);
        return n >= 1 && n <= Q_MAX;
      }, `must be 1 to ${Q_MAX} characters`),
      { minLength: 1, maxLength: Q_MAX },
    ),
    stated(
      v.check((s: string) => LETTER_OR_DIGIT.test(s), 'must contain at least one letter or digit'),
      { pattern: LETTER_OR_DIGIT.source },
    ),
  );

const isFree = () =>
  v.pipe(
    v.picklist(['true', 'false', '1', '0'], 'must be true, false, 1 or 0'),
    v.transform((s) => s === 'true' || s === '1'),
  );

const doc = <S extends v.GenericSchema>(schema: S, description: string) => v.optional(v.pipe(schema, v.description(description)));

// ------------------------------------------------------------------ the search parameters

const searchEntries = (maxLimit: number, defaultLimit: number) => ({
  city: doc(
    commaList(cityName(), 'city', MAX_CITIES),
    'Comma-separated city names from /v1/cities; any of them matches. Matching is case- and accent-insensitive and ignores spacing, ' +
      'so other spellings of the listed names are accepted too; a name that is not a city of the snapshot is a 400.',
  ),
  lat: doc(decimalIn(-90, 90, 'from -90 to 90'), 'Latitude of the search centre (WGS84), in decimal or exponent notation.'),
  lng: doc(decimalIn(-180, 180, 'from -180 to 180'), 'Longitude of the search centre (WGS84), in decimal or exponent notation.'),
  radius_km: doc(
    v.pipe(
      numberText(`must be a number greater than 0 and at most ${MAX_RADIUS_KM}`),
      v.transform(Number),
      v.number(),
      v.gtValue(0, `must be greater than 0 and at most ${MAX_RADIUS_KM}`),
      v.maxValue(MAX_RADIUS_KM, `must be greater than 0 and at most ${MAX_RADIUS_KM}`),
    ),
    `Great-circle radius in km around lat/lng, in (0, ${MAX_RADIUS_KM}]; default ${DEFAULT_RADIUS_KM}.`,
  ),
  age_min: doc(
    wholeIn(0, MAX_AGE_YEARS),
    `Child age in whole years, lower bound (0–${MAX_AGE_YEARS}). Events whose age range overlaps match; events without one match any age.`,
  ),
  age_max: doc(wholeIn(0, MAX_AGE_YEARS), `Child age in whole years, upper bound (0–${MAX_AGE_YEARS}), inclusive of the whole year.`),
  category: doc(commaList(categorySlug(), 'category', CATEGORY_SLUGS.length), 'Comma-separated category slugs from /v1/categories; any of them matches.'),
  q: doc(
    q(),
    `Free text, 1–${Q_MAX} characters (code points) with at least one letter or digit: every word must start a word of the title, summary, description, venue, organizer or tags (case- and accent-insensitive).`,
  ),
  is_free: doc(isFree(), 'true|false|1|0: only free, or only paid, events.'),
  start_date: doc(
    dateBound(),
    'Range start: YYYY-MM-DD (the whole day in America/Los_Angeles) or an RFC 3339 date-time with offset (T, or a space, between date and time; ' +
      'no leap second; up to 9 fraction digits). Events overlapping the range match.',
  ),
  end_date: doc(dateBound(), 'Range end, inclusive: YYYY-MM-DD (the whole day, to its last instant) or an RFC 3339 date-time with offset, as for start_date.'),
  week: doc(
    week(),
    'current, next, or an ISO week YYYY-Www: Monday 00:00 to Sunday end, America/Los_Angeles; current keeps only the events that have not ended yet (the rest of this week). Every year has W01–W52; ' +
      'W53 exists only in long ISO years (those starting on a Thursday, and leap years starting on a Wednesday), and the pattern admits it for exactly those.',
  ),
  sort: doc(v.picklist(['start', 'distance'], 'must be start or distance'), 'start (default: start time, then id) or distance.'),
  limit: doc(wholeIn(1, maxLimit), `Page size, 1–${maxLimit}; default ${defaultLimit}.`),
  offset: doc(wholeIn(0, MAX_OFFSET), `Records to skip, 0–${MAX_OFFSET}; default 0.`),
});

// ------------------------------------------------------------------ the cursor (JSON and CSV searches)

const cursor = () =>
  v.pipe(
    v.string(),
    v.regex(CURSOR_PATTERN, 'is not a cursor this server made; send the next_cursor (or the Link rel="next" URL) of the page before, unchanged'),
    v.transform((s): CursorKey => decodeCursor(s) as CursorKey),
  );

const cursorEntries = {
  cursor: doc(
    cursor(),
    'Keyset paging for exports of any depth: the next_cursor of the page before (also in its Link rel="next"), echoed unchanged. ' +
      'The page starts after that event in (start, id) order, whatever snapshot the cursor was made on: events are never skipped or repeated ' +
      `because earlier ones ended, changed or were removed. Offered when a request used a cursor, and where offset paging would pass ${MAX_OFFSET}.`,
  ),
};

/** Every parameter the rules may name: the search's (with its cursor), and the change feed's own (whose cursor is text). */
type Values = Omit<Partial<v.InferOutput<v.ObjectSchema<ReturnType<typeof searchEntries> & typeof cursorEntries, undefined>>>, 'cursor'> & {
  readonly cursor?: CursorKey | string | undefined;
  readonly since?: DateBound | undefined;
};
type Name = keyof Values & string;

/**
 * A rule between parameters. `idl` states it in IDL, the Inter-parameter Dependency Language
 * (Martin-Lopez et al.) that test generators such as RESTest read from an operation's
 * `x-dependencies`; `notes` say it in each named parameter's description; `holds` decides it on
 * the parsed values, and a violation is reported on `blame`.
 */
export interface ParamRule {
  /** The parameters it names. */
  readonly params: readonly Name[];
  readonly idl: string;
  readonly notes: Readonly<Partial<Record<string, string>>>;
  readonly holds: (x: Values) => boolean;
  readonly blame: (x: Values) => Name;
  readonly message: string;
}

const given = (x: Values, p: Name): boolean => x[p] !== undefined;
const and = (ps: readonly string[]): string => ps.join(' and ');

function allOrNone(a: Name, b: Name): ParamRule {
  return {
    params: [a, b],
    idl: `AllOrNone(${a}, ${b});`,
    notes: { [a]: `Needs ${b}.`, [b]: `Needs ${a}.` },
    holds: (x) => given(x, a) === given(x, b),
    blame: (x) => (given(x, a) ? a : b),
    message: `needs its partner: ${a} and ${b} are given together or not at all`,
  };
}

function requires(p: Name, needs: readonly Name[], value?: string): ParamRule {
  return {
    params: [p, ...needs],
    idl: `IF ${value === undefined ? p : `${p}=='${value}'`} THEN ${needs.join(' AND ')};`,
    notes: { [p]: value === undefined ? `Needs ${and(needs)}.` : `${value} needs ${and(needs)}.` },
    holds: (x) => !given(x, p) || (value !== undefined && x[p] !== value) || needs.every((n) => given(x, n)),
    blame: () => p,
    message: value === undefined ? `needs ${and(needs)}` : `can be ${value} only with ${and(needs)}`,
  };
}

function notGreater<A extends Name, B extends Name>(
  lo: A,
  hi: B,
  leq: (a: NonNullable<Values[A]>, b: NonNullable<Values[B]>) => boolean,
  notes: { readonly lo: string; readonly hi: string },
  message: string,
): ParamRule {
  return {
    params: [lo, hi],
    idl: `${lo} <= ${hi};`,
    notes: { [lo]: notes.lo, [hi]: notes.hi },
    holds: (x) => {
      const a = x[lo];
      const b = x[hi];
      return a === undefined || a === null || b === undefined || b === null || leq(a, b);
    },
    blame: () => hi,
    message,
  };
}

function excludes(p: Name, others: readonly Name[]): ParamRule {
  return {
    params: [p, ...others],
    idl: `IF ${p} THEN ${others.map((o) => `NOT ${o}`).join(' AND ')};`,
    notes: { [p]: `Not with ${others.join(' or ')}.`, ...Object.fromEntries(others.map((o) => [o, `Not with ${p}.`])) },
    holds: (x) => !given(x, p) || others.every((o) => !given(x, o)),
    blame: () => p,
    message: `cannot be combined with ${others.join(' or ')}; use one or the other`,
  };
}

/** Every rule between the search parameters, written once: the check below and the document read these. */
export const RULES: readonly ParamRule[] = [
  allOrNone('lat', 'lng'),
  requires('radius_km', ['lat', 'lng']),
  requires('sort', ['lat', 'lng'], 'distance'),
  notGreater('age_min', 'age_max', (a, b) => a <= b, { lo: 'Not greater than age_max.', hi: 'Not less than age_min.' }, 'must not be less than age_min'),
  notGreater(
    'start_date',
    'end_date',
    (a, b) => b.endMs >= a.startMs,
    {
      lo: 'Not after end_date: its first instant must not follow the last instant of end_date.',
      hi: 'Not before start_date: its last instant (a day’s is 23:59:59.999 in America/Los_Angeles) must not precede the first instant of start_date.',
    },
    'must not be before start_date',
  ),
  excludes('week', ['start_date', 'end_date']),
];

/** A cursor pages in (start, id) order: it says where a page starts, so neither offset nor sort=distance goes with it. */
export const CURSOR_RULES: readonly ParamRule[] = [
  {
    params: ['cursor', 'offset'],
    idl: 'IF cursor THEN NOT offset;',
    notes: { cursor: 'Not with offset.', offset: 'Not with cursor.' },
    holds: (x) => !given(x, 'cursor') || !given(x, 'offset'),
    blame: () => 'cursor',
    message: 'cannot be combined with offset: the cursor already says where the page starts; drop offset',
  },
  {
    params: ['sort', 'cursor'],
    idl: "IF sort=='distance' THEN NOT cursor;",
    notes: { cursor: 'Not with sort=distance.', sort: 'distance is not paged by cursor (use offset).' },
    holds: (x) => !given(x, 'cursor') || x.sort !== 'distance',
    blame: () => 'cursor',
    message: 'pages in start order only: drop sort=distance to page by cursor, or page by offset',
  },
];

/** Reads the rules on the parameters parsed so far, skipping any rule that names a parameter already refused. */
const rulesCheck = <T extends Values = Values>(rules: readonly ParamRule[]) =>
  v.rawCheck<T>(({ dataset, addIssue }) => {
    const refused = new Set((dataset.issues ?? []).map((i) => i.path?.[0]?.key));
    for (const rule of rules) {
      if (rule.params.some((p) => refused.has(p))) continue;
      const x = dataset.value as Values;
      if (rule.holds(x)) continue;
      const key = rule.blame(x);
      addIssue({ message: rule.message, path: [{ type: 'object', origin: 'value', input: x, key, value: x[key] }] });
    }
  });

/** Only ISO weeks: current and next move with the clock, and a feed's membership must not. */
const ISO_WEEK_ONLY = new RegExp(WEEK.source.replace('current|next|', ''));
const isoWeek = () =>
  v.pipe(
    v.string(),
    v.regex(ISO_WEEK_ONLY, 'must be an ISO week such as 2026-W49 (W53 only in years that have one): current and next move with the clock'),
    readWeek(),
  );

/** A change-feed cursor as this server writes them (query/changes.ts decodes the rest). */
// Spelled out, not \w: the pattern is published in the OpenAPI document, and other engines' \w takes any script's letters.
// eslint-disable-next-line regexp/prefer-w
const CHANGES_CURSOR = /^c1\.[A-Za-z0-9_-]{1,600}$/;

/**
 * The change feed's parameters (/v1/changes): the search filters (no sort or offset: the feed's
 * order is its own), its page size, and where it starts: a cursor it returned, or a time.
 */
export function changesParams(opts: { readonly maxLimit: number; readonly defaultLimit: number }) {
  const filters = v.omit(v.object(searchEntries(opts.maxLimit, opts.defaultLimit)), ['sort', 'offset', 'limit']);
  const entries = {
    ...filters.entries,
    week: doc(isoWeek(), 'An ISO week YYYY-Www: Monday 00:00 to Sunday end, America/Los_Angeles (events overlapping it).'),
    limit: doc(wholeIn(1, opts.maxLimit), `Entries a page, 1–${opts.maxLimit}; default ${opts.defaultLimit}.`),
    cursor: doc(
      v.pipe(v.string(), v.regex(CHANGES_CURSOR, 'must be a next_cursor this feed returned, unchanged')),
      'Where to go on from: the next_cursor of the page before (also in its next URL and Link header). Without cursor and since, the feed starts from the beginning.',
    ),
    since: doc(
      dateBound(),
      'Start at changes made at or after this time (YYYY-MM-DD, a day in America/Los_Angeles, or RFC 3339 with offset) instead of the beginning: for a client that already holds the data as of then. Not with cursor.',
    ),
  };
  type Parsed = v.InferOutput<v.ObjectSchema<typeof entries, undefined>>;
  // The search's rules between the parameters it has (not sort's), and one start at a time.
  const rules = [...RULES, excludes('cursor', ['since'])].filter((r) => r.params.every((p) => p in entries));
  return v.pipe(v.object(entries), v.metadata({ rules }), rulesCheck<Parsed>(rules));
}

export type ChangesParams = v.InferOutput<ReturnType<typeof changesParams>>;

/** The search filters and paging, with `limit` capped per route (100 JSON/feeds, 10 demo, 10000 CSV). */
export function searchParams(opts: { readonly maxLimit: number; readonly defaultLimit: number }) {
  return v.pipe(v.object(searchEntries(opts.maxLimit, opts.defaultLimit)), v.metadata({ rules: RULES }), rulesCheck(RULES));
}

/** The search parameters with `cursor` (/v1/events and /v1/events.csv, which exports page through). */
export function cursorSearchParams(opts: { readonly maxLimit: number; readonly defaultLimit: number }) {
  const rules = [...RULES, ...CURSOR_RULES];
  return v.pipe(v.object({ ...searchEntries(opts.maxLimit, opts.defaultLimit), ...cursorEntries }), v.metadata({ rules }), rulesCheck(rules));
}

export type SearchParamsSchema = ReturnType<typeof searchParams>;
/** Every search's parameters; `cursor` only where cursorSearchParams admits it. */
export type SearchParams = v.InferOutput<ReturnType<typeof cursorSearchParams>>;
