// Parsed parameters → the one canonical SearchQuery (query/protocol.ts). Everything that depends
// on the snapshot (which cities exist), the plan (which categories it excludes) or the clock (which
// week is "current") is resolved here, so a worker only ever sees plain values and equal searches
// produce equal cache keys.
import { DateTime } from 'luxon';
import type { SearchQuery } from '../query/protocol.ts';
import { ApiError } from './errors.ts';
import { DEFAULT_RADIUS_KM, type SearchParams, type WeekSpec } from './params.ts';
import { ZONE } from '../core/zone.ts';
import { fold, words } from '../core/text.ts';
import { queryForms } from '../core/stem.ts';

export interface QueryContext {
  /** Folded city name → the name as published, for the snapshot the request will be answered from. */
  readonly cities: ReadonlyMap<string, string>;
  readonly excludedCategories: readonly string[];
  readonly planName: string;
  readonly now: Date;
  readonly defaultLimit: number;
}

/**
 * Week ranges by week: luxon's zone arithmetic costs ~200 µs on the main thread, on every distinct
 * query string that names a week. current/next are keyed by the hour, which is exact because Los
 * Angeles changes offset and day only on whole hours; a few hundred entries at most, then cleared.
 */
const weeks = new Map<string, { fromMs: number; toMs: number }>();
const HOUR_MS = 3_600_000;

export function weekRange(spec: WeekSpec, now: Date): { fromMs: number; toMs: number } {
  const key = spec.kind === 'iso' ? `${spec.year}-W${spec.week}` : `${spec.kind}@${Math.floor(now.getTime() / HOUR_MS)}`;
  let range = weeks.get(key);
  if (range === undefined) {
    if (weeks.size >= 1024) weeks.clear();
    range = computeWeekRange(spec, now);
    weeks.set(key, range);
  }
  return range;
}

function computeWeekRange(spec: WeekSpec, now: Date): { fromMs: number; toMs: number } {
  const monday =
    spec.kind === 'iso'
      ? DateTime.fromObject({ weekYear: spec.year, weekNumber: spec.week, weekday: 1 }, { zone: ZONE })
      : DateTime.fromJSDate(now, { zone: ZONE })
          .startOf('week')
          .plus({ weeks: spec.kind === 'next' ? 1 : 0 });
  const start = monday.startOf('day');
  return { fromMs: start.toMillis(), toMs: start.plus({ weeks: 1 }).toMillis() - 1 };
}

const sortedDistinct = (xs: readonly string[]): string[] => [...new Set(xs)].sort();

export function canonicalQuery(p: SearchParams, ctx: QueryContext): SearchQuery {
  let cities: string[] | null = null;
  if (p.city) {
    const unknown = p.city.filter((c) => !ctx.cities.has(fold(c)));
    if (unknown.length) {
      const message = `unknown city ${unknown.map((c) => `"${c}"`).join(', ')}; the accepted names are listed at /v1/cities`;
      throw new ApiError('invalid_parameter', `The city filter names a city we have no events for: ${unknown.join(', ')}. Use a name from /v1/cities.`, [
        { param: 'city', message },
      ]);
    }
    cities = sortedDistinct(p.city.map(fold));
  }

  const categories = p.category ? sortedDistinct(p.category) : null;
  const refused = (categories ?? []).filter((c) => ctx.excludedCategories.includes(c));
  if (refused.length) {
    throw new ApiError(
      'category_not_in_plan',
      `The ${ctx.planName} plan does not include ${refused.map((c) => `"${c}"`).join(' or ')} events; remove ${refused.length > 1 ? 'them' : 'it'} from category, or use a plan that includes ${refused.length > 1 ? 'them' : 'it'}.`,
    );
  }

  let range: SearchQuery['range'] = 'upcoming';
  // week=current keeps only what has not ended (contract, amended 2026-11-26): the week from now on.
  if (p.week) range = p.week.kind === 'current' ? { ...weekRange(p.week, ctx.now), fromNow: true } : weekRange(p.week, ctx.now);
  else if (p.start_date || p.end_date) range = { fromMs: p.start_date?.startMs ?? 0, toMs: p.end_date?.endMs ?? Number.MAX_SAFE_INTEGER };

  // In order, not sorted: a compound is made of neighbours ("story time" is not "time story").
  const qWords = p.q === undefined ? null : queryForms(words(p.q));
  return {
    cities,
    geo: p.lat !== undefined && p.lng !== undefined ? { lat: p.lat, lng: p.lng, radiusKm: p.radius_km ?? DEFAULT_RADIUS_KM } : null,
    ages: p.age_min !== undefined || p.age_max !== undefined ? { loMonths: (p.age_min ?? 0) * 12, hiMonths: (p.age_max ?? 18) * 12 + 11 } : null,
    categories,
    words: qWords && qWords.length ? qWords : null,
    isFree: p.is_free ?? null,
    range,
    sort: p.sort ?? 'start',
    limit: p.limit ?? ctx.defaultLimit,
    offset: p.offset ?? 0,
    ...(p.cursor ? { after: p.cursor } : {}),
  };
}

/** The cache key of a search: the canonical query in a fixed field order. */
export function queryKey(q: SearchQuery): string {
  return JSON.stringify([
    q.cities,
    q.geo && [q.geo.lat, q.geo.lng, q.geo.radiusKm],
    q.ages && [q.ages.loMonths, q.ages.hiMonths],
    q.categories,
    q.words && q.words.map((w) => [w.word, ...w.prefixes]),
    q.isFree,
    q.range === 'upcoming' ? 'upcoming' : [q.range.fromMs, q.range.toMs, q.range.fromNow === true],
    q.sort,
    q.limit,
    q.offset,
    // Only keyset pages carry it, so every other search keeps its key.
    ...(q.after ? [[q.after.startMs, q.after.id]] : []),
  ]);
}
