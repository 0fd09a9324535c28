// The website's own filters, as a person asks: "this weekend", "near 94110 within 5 miles". Each is
// translated here into the API's parameters (week, lat, lng, radius_km) or, for days the API has no
// name for (today, tomorrow, the weekend), into the canonical query's date range, so the listing and
// its calendar run the same search the API would. They stay website-only: the API expresses each of
// them exactly already (start_date/end_date take a day or an RFC 3339 instant, lat/lng/radius_km a
// point), its contract is binding, and a program has a clock and a geocoder of its own.
import { DateTime } from 'luxon';
import type { ParamError } from '../../errors.ts';
import type { SearchQuery } from '../../../query/protocol.ts';
import { LA } from '../../../core/zone.ts';
import { fold } from '../../../core/text.ts';
import { bundledBayArea, bundledGazetteer, californiaZips } from '../../../snapshot/gazetteer.ts';
import { DEFAULT_MILES, KM_PER_MILE, MAX_MILES, WHEN_CHOICES } from '../pages/browse.ts';

/** The names the website reads besides the API's. */
export const WEB_FILTERS: readonly string[] = ['when', 'near', 'miles'];

type When = (typeof WHEN_CHOICES)[number]['value'];
const isWhen = (s: string): s is When => WHEN_CHOICES.some((c) => c.value === s);

/** What the website's filters add to a search. */
export interface WebFilters {
  /** API parameters to parse with the rest (week, lat, lng, radius_km, sort). */
  readonly api: Record<string, string>;
  /** API parameters the website's own replace (a location's lat/lng give way to a typed place). */
  readonly drop: readonly string[];
  /** A range the API has no parameter for (today, tomorrow, the weekend), replacing the query's. */
  readonly range: SearchQuery['range'] | null;
  /** Where the search is centred, as the page says it ("94110 (San Francisco)"). */
  readonly place: string | null;
  /** Nearest first (a location, and no sort asked for). */
  readonly byDistance: boolean;
  readonly errors: readonly ParamError[];
}

/**
 * A Pacific day's range: its first ms to its last, or from `now` on (fromNow) when the day is under
 * way, so nothing already ended is listed, as week=current does (contract, amended 2026-11-26).
 */
function days(first: DateTime, count: number, fromNow: boolean): SearchQuery['range'] {
  const start = first.startOf('day');
  const range = { fromMs: start.toMillis(), toMs: start.plus({ days: count }).toMillis() - 1 };
  return fromNow ? { ...range, fromNow: true } : range;
}

/** today, tomorrow and the weekend in Pacific time, at `now`. */
export function whenRange(when: 'today' | 'tomorrow' | 'weekend', now: Date): SearchQuery['range'] {
  const here = DateTime.fromJSDate(now, { zone: LA });
  if (when === 'today') return days(here, 1, true);
  if (when === 'tomorrow') return days(here.plus({ days: 1 }), 1, false);
  // Saturday and Sunday: the coming ones, or the rest of this one when it has begun (luxon: Monday 1 … Sunday 7).
  const saturday = here.weekday === 7 ? here.minus({ days: 1 }) : here.plus({ days: 6 - here.weekday });
  return days(saturday, 2, true);
}

const ZIP = /^\d{5}(?:-\d{4})?$/;
const EXAMPLES = 'Type a Bay Area ZIP code such as 94110, or a city or town such as Berkeley.';

/** Optimal string alignment distance (a swapped pair is one edit), given up beyond `max`. */
function editsWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
    }
    if (Math.min(...row) > max) return max + 1;
    [prev2, prev] = [prev, row];
  }
  return prev[b.length]!;
}

/** Folded place name → the name as written and its point: the gazetteer's cities and towns, and the names the mail uses. */
let places: Map<string, { name: string; lat: number; lng: number }> | undefined;
function placeIndex(): Map<string, { name: string; lat: number; lng: number }> {
  if (places) return places;
  places = new Map();
  for (const [key, c] of bundledGazetteer().cityByName) places.set(key, { name: c.name, lat: c.lat, lng: c.lng });
  for (const z of bundledBayArea().zips.values()) if (!places.has(fold(z.city))) places.set(fold(z.city), { name: z.city, lat: z.lat, lng: z.lng });
  return places;
}

/** The known name closest to a misspelled one: a name it begins, else the fewest edits (one in three letters, at most three). */
function closestPlace(key: string): string | null {
  const index = placeIndex();
  if (key.length >= 3) {
    const starts = [...index.entries()].filter(([k]) => k.startsWith(key)).sort((a, b) => a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1));
    if (starts[0]) return starts[0][1].name;
  }
  const max = Math.max(1, Math.min(3, Math.floor((key.length + 1) / 3)));
  let best: { name: string; d: number } | null = null;
  for (const [k, p] of index) {
    const d = editsWithin(key, k, max);
    if (d <= max && (best === null || d < best.d)) best = { name: p.name, d };
  }
  return best?.name ?? null;
}

/** A ZIP code or a city or town of the Bay Area → its point; else the error the page shows. */
export function resolvePlace(text: string): { lat: number; lng: number; label: string } | { error: string } {
  const t = text.trim();
  if (ZIP.test(t)) {
    const zip = t.slice(0, 5);
    const z = bundledBayArea().zips.get(zip);
    if (z) return { lat: z.lat, lng: z.lng, label: `${zip} (${z.city})` };
    // A California ZIP named for what it is; anything else, that we have no such ZIP.
    const ca = californiaZips().byZip.get(zip);
    return {
      error: ca
        ? `${zip} is ${ca.city}, outside the nine Bay Area counties this site lists events for. ${EXAMPLES}`
        : `${zip} is not a Bay Area ZIP code we know. ${EXAMPLES}`,
    };
  }
  // "Berkeley, CA" and "Berkeley, California" are Berkeley.
  const key = fold(t.replace(/,\s*(?:ca|calif|california)\.?$/i, '')).replace(/\s+/g, ' ');
  if (!/[a-z]/.test(key)) return { error: `“${t}” is neither a ZIP code nor a place name. ${EXAMPLES}` };
  const place = placeIndex().get(key);
  if (place) return { lat: place.lat, lng: place.lng, label: place.name };
  const close = closestPlace(key);
  return {
    error: `We do not know a Bay Area city or town called “${t}”.${close === null ? '' : ` Did you mean ${close}?`} ${EXAMPLES}`,
  };
}

/** Miles as the page gives them → the API's radius_km; null when not a distance the form could mean. */
function radiusKm(miles: string): string | null {
  const n = Number(miles);
  if (!/^\d+(?:\.\d+)?$/.test(miles) || !(n > 0) || n > MAX_MILES) return null;
  return String(n * KM_PER_MILE);
}

/** Reads when, near and miles (and the lat/lng/radius_km a link may carry) into the search they mean. */
export function webFilters(values: Readonly<Record<string, string>>, now: Date): WebFilters {
  const api: Record<string, string> = {};
  const drop: string[] = [];
  const errors: ParamError[] = [];
  let range: SearchQuery['range'] | null = null;
  let place: string | null = null;

  const when = values.when;
  if (when !== undefined) {
    if (!isWhen(when)) errors.push({ param: 'when', message: 'choose Today, Tomorrow, This weekend, This week, Next week or Specific dates' });
    else if (when !== 'dates') {
      // A link's week (kept hidden in the form) gives way to the period chosen; typed dates are asked about.
      if (values.week !== undefined) drop.push('week');
      const dated = ['start_date', 'end_date'].filter((k) => values[k] !== undefined);
      if (dated.length)
        errors.push({ param: 'when', message: 'choose Specific dates to search between the From and To dates, or clear the dates to search this period' });
      else if (when === 'week' || when === 'next-week') api.week = when === 'week' ? 'current' : 'next';
      else range = whenRange(when, now);
    }
  }

  const near = values.near;
  if (near !== undefined) {
    const p = resolvePlace(near);
    if ('error' in p) errors.push({ param: 'near', message: p.error });
    else {
      // A typed place is what the person asked for last: it replaces a point "Use my location" gave.
      api.lat = String(p.lat);
      api.lng = String(p.lng);
      drop.push('lat', 'lng');
      place = p.label;
    }
    // A point from "Use my location" or a shared link: whose it is the page cannot know, so it gives the numbers.
  } else if (values.lat !== undefined && values.lng !== undefined) place = `the location ${values.lat}, ${values.lng}`;

  if (place !== null) {
    if (values.miles !== undefined) {
      const km = radiusKm(values.miles);
      if (km === null) errors.push({ param: 'miles', message: `choose a distance in miles, more than 0 and at most ${MAX_MILES}, such as 5` });
      else {
        api.radius_km = km;
        drop.push('radius_km');
      }
    } else if (values.radius_km === undefined) api.radius_km = String(DEFAULT_MILES * KM_PER_MILE);
    // Nearest first, unless the link asks otherwise.
    if (values.sort === undefined) api.sort = 'distance';
  }
  return { api, drop, range, place, byDistance: api.sort === 'distance' || values.sort === 'distance', errors };
}
