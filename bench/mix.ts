// The distinct-query mix: a fixed, seeded list of realistic searches drawn from the dataset's own
// facts (busy venues, cities, frequent words), each as our URL and as the values PostGIS binds.
// wrk walks the URLs (bench/wrk/mix.lua) against our server and the Fastify peer; pgbench draws
// rows of the same list from the bench_mix table.
import { weekRange } from '../server/query.ts';
import { rng } from '../snapshot/sample/synthetic.ts';
import type { DatasetFacts } from './lib/dataset.ts';

/**
 * Searches in the list, all different: wrk walks it in order (bench/wrk/mix.lua), so a measured run
 * meets no search twice, and no response-cache hit, until it has asked them all.
 */
export const MIX_SIZE = 20_000;
const FOREVER_MS = Number.MAX_SAFE_INTEGER;

/** The shapes of search a family app sends, and how often (weights sum to 100). */
const KINDS = [
  // "Near me": a circle around a place people go, a child's ages, sometimes one category.
  { kind: 'near', weight: 35 },
  // "In my city", ages, often this or next week.
  { kind: 'city', weight: 30 },
  // A word ("storytime", "lego"), sometimes only its first letters, with ages.
  { kind: 'q', weight: 20 },
  // A word within a city.
  { kind: 'city-q', weight: 15 },
] as const;
export type MixKind = (typeof KINDS)[number]['kind'];

/** One search: our URL, and the values of bench/postgis/search.sql's variables ('' and 0 for filters not used). */
export interface MixRow {
  readonly i: number;
  readonly kind: MixKind;
  readonly path: string;
  readonly has_geo: 0 | 1;
  readonly lat: number;
  readonly lng: number;
  readonly radius: number;
  readonly city_key: string;
  readonly word: string;
  readonly has_ages: 0 | 1;
  readonly age_lo: number;
  readonly age_hi: number;
  readonly cat: string;
  readonly from_ms: number;
  readonly to_ms: number;
  readonly off: number;
}

export function generateMix(facts: DatasetFacts, seed: number, size = MIX_SIZE): MixRow[] {
  const rand = rng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => {
    const x = xs[Math.floor(rand() * xs.length)];
    if (x === undefined) throw new Error('the dataset facts have an empty list');
    return x;
  };
  const now = new Date(facts.nowMs);
  // week=current is the week from now on (the contract, amended 2026-11-26: nothing that has ended),
  // as the server binds it (query/db.ts); PostGIS is asked the same range.
  const current = weekRange({ kind: 'current' }, now);
  const weeks = { current: { fromMs: Math.max(current.fromMs, facts.nowMs), toMs: current.toMs }, next: weekRange({ kind: 'next' }, now) };
  const rows: MixRow[] = [];
  const seen = new Set<string>();
  let kind: MixKind = 'near';
  // A search already drawn is drawn again within its kind, so the kinds keep their weights.
  for (let tries = 0, fresh = true; rows.length < size; tries++) {
    if (tries > size * 50) throw new Error(`the dataset's facts allow fewer than ${size} different searches`);
    if (fresh) {
      let r = rand() * 100;
      kind = KINDS.find((k) => (r -= k.weight) < 0)?.kind ?? 'near';
    }
    const params: [string, string][] = [];
    let geo = { has: 0 as 0 | 1, lat: 0, lng: 0, radius: 0 };
    let cityKey = '';
    let word = '';
    let cat = '';
    if (kind === 'near') {
      const c = pick(facts.centres);
      // Within about a kilometre of the venue: a home or a school near it, not the venue itself.
      const lat = +(c.lat + (rand() - 0.5) * 0.02).toFixed(6);
      const lng = +(c.lng + (rand() - 0.5) * 0.02).toFixed(6);
      geo = { has: 1, lat, lng, radius: int(2, 15) };
      params.push(['lat', lat.toFixed(6)], ['lng', lng.toFixed(6)], ['radius_km', String(geo.radius)]);
      if (rand() < 0.5) {
        cat = pick(facts.categories);
        params.push(['category', cat]);
      }
    }
    if (kind === 'city' || kind === 'city-q') {
      // Busy cities are asked more often: the square skews picks towards the head of the list.
      const c = facts.cities[Math.floor(rand() ** 2 * facts.cities.length)] ?? pick(facts.cities);
      cityKey = c.key;
      params.push(['city', c.name]);
    }
    if (kind === 'q' || kind === 'city-q') {
      const w = pick(facts.words);
      word = rand() < 0.3 ? w.slice(0, Math.max(3, w.length - 3)) : w;
      params.push(['q', word]);
    }
    const ages = rand() < (kind === 'city-q' ? 0.5 : 0.75);
    let ageLo = 0;
    let ageHi = 0;
    if (ages) {
      const min = int(0, 12);
      const max = Math.min(18, min + int(0, 6));
      ageLo = min * 12;
      ageHi = max * 12 + 11;
      params.push(['age_min', String(min)], ['age_max', String(max)]);
    }
    let range = { fromMs: facts.nowMs, toMs: FOREVER_MS };
    const w = rand();
    if (w < 0.45) {
      const which = w < 0.25 ? 'current' : 'next';
      range = weeks[which];
      params.push(['week', which]);
    }
    const off = rand() < 0.8 ? 0 : pick([20, 40]);
    if (off) params.push(['offset', String(off)]);
    const url = `/v1/events?${new URLSearchParams(params).toString()}`;
    fresh = !seen.has(url);
    if (!fresh) continue;
    seen.add(url);
    rows.push({
      i: rows.length + 1,
      kind,
      path: url,
      has_geo: geo.has,
      lat: geo.lat,
      lng: geo.lng,
      radius: geo.radius,
      city_key: cityKey,
      word,
      has_ages: ages ? 1 : 0,
      age_lo: ageLo,
      age_hi: ageHi,
      cat,
      from_ms: range.fromMs,
      to_ms: range.toMs,
      off,
    });
  }
  return rows;
}

/** The variables of bench/postgis/search.sql for the fixed search of the "repeated" scenario (bench/scenarios.ts repeatedPath). */
export function repeatedValues(facts: DatasetFacts): Omit<MixRow, 'i' | 'kind' | 'path'> {
  return {
    has_geo: 0,
    lat: 0,
    lng: 0,
    radius: 0,
    city_key: facts.cityKey,
    word: '',
    has_ages: 1,
    age_lo: 3 * 12,
    age_hi: 6 * 12 + 11,
    cat: '',
    from_ms: facts.nowMs,
    to_ms: FOREVER_MS,
    off: 0,
  };
}

/** The column order of the bench_mix table and of the CSV it is loaded from. */
export const MIX_COLUMNS = [
  'i',
  'kind',
  'has_geo',
  'lat',
  'lng',
  'radius',
  'city_key',
  'word',
  'has_ages',
  'age_lo',
  'age_hi',
  'cat',
  'from_ms',
  'to_ms',
  'off',
] as const;
