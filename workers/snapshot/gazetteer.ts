// Known places, shipped with the project: cities (with their destination) and venues.
// Resolves upstream location strings to one canonical name/address/coordinates per place.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as v from 'valibot';
import { REPO_ROOT } from '../../server/config.ts';
import { fold } from './normalize/text.ts';

const Coord = { lat: v.pipe(v.number(), v.minValue(-90), v.maxValue(90)), lng: v.pipe(v.number(), v.minValue(-180), v.maxValue(180)) };

const GazetteerSchema = v.object({
  cities: v.array(
    v.object({ name: v.string(), destination: v.string(), county: v.string(), ...Coord, aliases: v.optional(v.array(v.string()), []) }),
  ),
  venues: v.array(
    v.object({
      key: v.string(),
      name: v.string(),
      organizer: v.string(),
      street: v.string(),
      city: v.string(),
      zip: v.pipe(v.string(), v.regex(/^\d{5}$/)),
      ...Coord,
      aliases: v.optional(v.array(v.string()), []),
    }),
  ),
});

export type City = v.InferOutput<typeof GazetteerSchema>['cities'][number];
export type KnownVenue = v.InferOutput<typeof GazetteerSchema>['venues'][number];

export interface Gazetteer {
  readonly cities: readonly City[];
  readonly venues: readonly KnownVenue[];
  readonly venueByKey: ReadonlyMap<string, KnownVenue>;
  /** Folded name or alias → venues (several organizers may have a "Main Library"). */
  readonly venuesByName: ReadonlyMap<string, readonly KnownVenue[]>;
  readonly venueByStreet: ReadonlyMap<string, KnownVenue>;
  /** Folded city name or alias → city. */
  readonly cityByName: ReadonlyMap<string, City>;
}

export function streetKey(street: string, city: string): string {
  return `${fold(street).replace(/[^a-z0-9 ]/g, '').replace(/\b(?:street|st|avenue|ave|boulevard|blvd|road|rd|drive|dr)\b/g, '').replace(/\s+/g, ' ').trim()}|${fold(city)}`;
}

export function buildGazetteer(json: unknown): Gazetteer {
  const g = v.parse(GazetteerSchema, json);
  const cityByName = new Map<string, City>();
  for (const c of g.cities) for (const n of [c.name, ...c.aliases]) cityByName.set(fold(n), c);
  const venueByKey = new Map<string, KnownVenue>();
  const venuesByName = new Map<string, KnownVenue[]>();
  const venueByStreet = new Map<string, KnownVenue>();
  for (const ven of g.venues) {
    if (!cityByName.has(fold(ven.city))) throw new Error(`gazetteer: venue ${ven.key} is in unknown city ${ven.city}`);
    venueByKey.set(ven.key, ven);
    for (const n of new Set([ven.name, ...ven.aliases, `${ven.organizer} ${ven.name}`].map(fold))) {
      const list = venuesByName.get(n) ?? [];
      list.push(ven);
      venuesByName.set(n, list);
    }
    venueByStreet.set(streetKey(ven.street, ven.city), ven);
  }
  return { cities: g.cities, venues: g.venues, venueByKey, venuesByName, venueByStreet, cityByName };
}

const BUNDLED_FILE = path.join(REPO_ROOT, 'sources', 'gazetteer.json');
let bundled: Gazetteer | undefined;
export function bundledGazetteer(): Gazetteer {
  bundled ??= buildGazetteer(JSON.parse(readFileSync(BUNDLED_FILE, 'utf8')));
  return bundled;
}

/** The bundled gazetteer with another file's cities and venues added (a registry's own places). */
export function extendedGazetteer(extraFile: string): Gazetteer {
  const base = JSON.parse(readFileSync(BUNDLED_FILE, 'utf8')) as { cities: unknown[]; venues: unknown[] };
  const extra = JSON.parse(readFileSync(extraFile, 'utf8')) as { cities?: unknown[]; venues?: unknown[] };
  return buildGazetteer({ cities: [...base.cities, ...(extra.cities ?? [])], venues: [...base.venues, ...(extra.venues ?? [])] });
}

export function kmBetween(aLat: number, aLng: number, bLat: number, bLng: number): number {
  const dLat = (aLat - bLat) * 111.2;
  const dLng = (aLng - bLng) * 111.2 * Math.cos((((aLat + bLat) / 2) * Math.PI) / 180);
  return Math.hypot(dLat, dLng);
}

// A destination's area is the land within this distance of one of its cities: it takes in the
// unincorporated places between them (Stanford, Kentfield) and leaves out the next region's towns
// (Davis is ~40 km from the nearest gazetteer city, Stockton ~45 km).
const AREA_KM = 20;
// A ZIP centroid farther than this from a point says nothing about it (open water, wilderness).
const ZIP_KM = 8;

/** The place of `places` nearest the point, if one is nearer than `withinKm`. */
export function nearestWithin<P extends { readonly lat: number; readonly lng: number }>(places: readonly P[], lat: number, lng: number, withinKm: number): P | undefined {
  let best: P | undefined;
  let bestKm = withinKm;
  for (const p of places) {
    const km = kmBetween(p.lat, p.lng, lat, lng);
    if (km < bestKm) {
      best = p;
      bestKm = km;
    }
  }
  return best;
}

/** The gazetteer city nearest the point, if the point lies in any destination's area. */
export const areaCity = (g: Gazetteer, lat: number, lng: number): City | undefined => nearestWithin(g.cities, lat, lng, AREA_KM);

export interface ZipCentroid {
  readonly zip: string;
  readonly city: string;
  readonly lat: number;
  readonly lng: number;
}

interface ZipcodesRow {
  readonly zip: string;
  readonly latitude: number;
  readonly longitude: number;
  readonly city: string;
  readonly state: string;
}

// The table places a firm's or a post office's own ZIP at a point rounded to hundredths of a degree
// and names it after the firm (94138 "Wells Fargo Bank", 94155 "Macys Of California"): no delivery
// area, no city. Real centroids carry four decimals.
const hundredths = (x: number): boolean => Math.abs(x * 100 - Math.round(x * 100)) < 1e-6;

let caZips: { readonly byZip: ReadonlyMap<string, ZipCentroid>; readonly all: readonly ZipCentroid[] } | undefined;

/**
 * California's ZIP centroids, from the `zipcodes` package's offline US table (the city each ZIP is
 * addressed to and its centroid). Loaded on first use: the table is ~5 MB of JavaScript, and only
 * events whose city the gazetteer cannot name need it.
 */
export function californiaZips(): { readonly byZip: ReadonlyMap<string, ZipCentroid>; readonly all: readonly ZipCentroid[] } {
  if (!caZips) {
    const { codes } = createRequire(import.meta.url)('zipcodes/lib/codes.js') as { codes: Record<string, ZipcodesRow> };
    const all = Object.values(codes)
      .filter((z) => z.state === 'CA' && Number.isFinite(z.latitude) && Number.isFinite(z.longitude) && !(hundredths(z.latitude) && hundredths(z.longitude)))
      .map((z) => ({ zip: z.zip, city: z.city, lat: z.latitude, lng: z.longitude }));
    caZips = { byZip: new Map(all.map((z) => [z.zip, z])), all };
  }
  return caZips;
}

// How many of the nearest ZIP centroids vote on a point's city.
const ZIP_VOTES = 5;

function nearestZips(lat: number, lng: number): { readonly zip: ZipCentroid; readonly km: number }[] {
  return californiaZips()
    .all.map((zip) => ({ zip, km: kmBetween(zip.lat, zip.lng, lat, lng) }))
    .filter((z) => z.km < ZIP_KM)
    .sort((a, b) => a.km - b.km)
    .slice(0, ZIP_VOTES);
}

export interface Place {
  /** The city a postal address at the point names. */
  readonly city: string;
  readonly destination: string;
  /** Folded names of the cities the nearest ZIP centroids are addressed to: any of them may be right near a boundary. */
  readonly nearby: ReadonlySet<string>;
}

/**
 * Where a point is: null outside every destination's area. A centroid is not a boundary, so the
 * nearest one alone misnames points near one (Montclair, Oakland is nearer Piedmont's only centroid
 * than any of Oakland's): the nearest centroids vote, each by the inverse square of its distance,
 * so a point on Stanford's campus is still Stanford. With no ZIP near (a registry's own places),
 * the nearest gazetteer city.
 */
export function placeAt(g: Gazetteer, lat: number, lng: number): Place | null {
  const area = areaCity(g, lat, lng);
  if (!area) return null;
  const near = nearestZips(lat, lng);
  const votes = new Map<string, number>();
  for (const { zip, km } of near) votes.set(zip.city, (votes.get(zip.city) ?? 0) + 1 / Math.max(km, 0.1) ** 2);
  const nearby = new Set(near.map((z) => fold(z.zip.city)));
  const city = [...votes].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (city === undefined) return { city: area.name, destination: area.destination, nearby };
  const known = g.cityByName.get(fold(city));
  // A gazetteer city's destination wins over the nearest one's (Brisbane is nearer SF's centre than Daly City's).
  return known ? { city: known.name, destination: known.destination, nearby } : { city, destination: area.destination, nearby };
}
