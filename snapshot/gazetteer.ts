// Known places, shipped with the project: cities (with their destination) and venues.
// Resolves upstream location strings to one canonical name/address/coordinates per place.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as v from 'valibot';
import { REPO_ROOT } from '../core/config.ts';
import { fold } from '../core/text.ts';

const Coord = { lat: v.pipe(v.number(), v.minValue(-90), v.maxValue(90)), lng: v.pipe(v.number(), v.minValue(-180), v.maxValue(180)) };

const GazetteerSchema = v.object({
  cities: v.array(
    v.object({
      name: v.string(),
      destination: v.string(),
      county: v.string(),
      ...Coord,
      aliases: v.optional(v.array(v.string()), []),
      /** Incorporated city or town, census-designated place, or a name only the mail uses (Rutherford). */
      kind: v.optional(v.picklist(['city', 'cdp', 'postal'])),
    }),
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
  /** Cities outside the nine counties (a registry's own places): each takes in the land around it. */
  readonly extraCities: readonly City[];
}

type Ring = readonly (readonly [number, number])[];
type Polygons = readonly (readonly Ring[])[];

interface CountyShape {
  readonly name: string;
  readonly fips: string;
  readonly polygons: Polygons;
  /** [minLng, minLat, maxLng, maxLat] */
  readonly box: readonly [number, number, number, number];
}

export interface BayPlace {
  readonly name: string;
  readonly county: string;
  readonly kind: 'city' | 'cdp' | 'postal';
  readonly lat: number;
  readonly lng: number;
}

export interface BayZip {
  readonly zip: string;
  readonly county: string;
  /** The city mail to the ZIP is addressed to. */
  readonly city: string;
  readonly lat: number;
  readonly lng: number;
}

/** sources/bayarea.json: the nine counties' outlines, places and ZIP codes (see sources/bayarea.build.ts). */
export interface BayArea {
  readonly provenance: Readonly<Record<string, unknown>>;
  readonly counties: readonly (CountyShape & { readonly destination: string })[];
  /** The counties around the nine: a point off their shore is theirs, not ours. */
  readonly neighbours: readonly CountyShape[];
  readonly destinationOf: ReadonlyMap<string, string>;
  readonly places: readonly BayPlace[];
  readonly zips: ReadonlyMap<string, BayZip>;
}

const BayAreaFileSchema = v.object({
  provenance: v.record(v.string(), v.unknown()),
  counties: v.array(
    v.object({ fips: v.string(), name: v.string(), destination: v.string(), polygons: v.array(v.array(v.array(v.tuple([v.number(), v.number()])))) }),
  ),
  neighbours: v.array(v.object({ fips: v.string(), name: v.string(), polygons: v.array(v.array(v.array(v.tuple([v.number(), v.number()])))) })),
  places: v.array(v.tuple([v.string(), v.string(), v.picklist(['city', 'cdp']), v.number(), v.number()])),
  zips: v.array(v.tuple([v.pipe(v.string(), v.regex(/^\d{5}$/)), v.string(), v.string(), v.number(), v.number()])),
});

function box(polygons: Polygons): [number, number, number, number] {
  const b: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const p of polygons) for (const [x, y] of p[0]!) [b[0], b[1], b[2], b[3]] = [Math.min(b[0], x), Math.min(b[1], y), Math.max(b[2], x), Math.max(b[3], y)];
  return b;
}

export function buildBayArea(json: unknown): BayArea {
  const f = v.parse(BayAreaFileSchema, json);
  const counties = f.counties.map((c) => ({ ...c, box: box(c.polygons) }));
  const places: BayPlace[] = f.places.map(([name, county, kind, lat, lng]) => ({ name, county, kind, lat, lng }));
  const zips = new Map(f.zips.map(([zip, county, city, lat, lng]) => [zip, { zip, county, city, lat, lng }]));
  // A city the mail knows that is no Census place (Rutherford's post office is, Oakville's) is
  // still a place an address names: it stands at its ZIP's centroid.
  const named = new Set(places.map((p) => fold(p.name)));
  for (const z of zips.values()) {
    const spelled = [z.city, z.city.replace(/^Saint /, 'St. ')];
    if (spelled.some((n) => named.has(fold(n)))) continue;
    named.add(fold(z.city));
    places.push({ name: z.city, county: z.county, kind: 'postal', lat: z.lat, lng: z.lng });
  }
  return {
    provenance: f.provenance,
    counties,
    neighbours: f.neighbours.map((c) => ({ ...c, box: box(c.polygons) })),
    destinationOf: new Map(counties.map((c) => [c.name, c.destination])),
    places,
    zips,
  };
}

const BAY_AREA_FILE = path.join(REPO_ROOT, 'sources', 'bayarea.json');
let bayArea: BayArea | undefined;
export function bundledBayArea(): BayArea {
  bayArea ??= buildBayArea(JSON.parse(readFileSync(BAY_AREA_FILE, 'utf8')));
  return bayArea;
}

function inRing(lng: number, lat: number, ring: Ring): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function inside(c: CountyShape, lng: number, lat: number): boolean {
  if (lng < c.box[0] || lng > c.box[2] || lat < c.box[1] || lat > c.box[3]) return false;
  return c.polygons.some((p) => inRing(lng, lat, p[0]!) && !p.slice(1).some((hole) => inRing(lng, lat, hole)));
}

function kmToOutline(c: CountyShape, lng: number, lat: number): number {
  const kx = 111.32 * Math.cos((lat * Math.PI) / 180);
  const ky = 110.57;
  let best = Infinity;
  for (const p of c.polygons) {
    for (const r of p) {
      for (let i = 1; i < r.length; i++) {
        const ax = (r[i - 1]![0] - lng) * kx,
          ay = (r[i - 1]![1] - lat) * ky;
        const dx = (r[i]![0] - lng) * kx - ax,
          dy = (r[i]![1] - lat) * ky - ay;
        const len2 = dx * dx + dy * dy;
        const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2));
        best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
      }
    }
  }
  return best;
}

// The Census 1:10m outline stops short of the bay shore (Treasure Island, Alameda's beaches, the
// Sausalito waterfront lie in no outline): a point in no county's outline belongs to the nearest
// county within this distance, so that one inside another county (Davis, 2 km from Solano's line)
// or off another county's coast (Santa Cruz) never counts as ours.
const SHORE_KM = 6;

/** Which of the nine counties the point is in, if any. */
export function countyAt(lat: number, lng: number, area: BayArea = bundledBayArea()): { readonly name: string; readonly destination: string } | null {
  const mine = area.counties.find((c) => inside(c, lng, lat));
  if (mine) return mine;
  if (area.neighbours.some((c) => inside(c, lng, lat))) return null;
  let best: CountyShape | undefined;
  let bestKm = SHORE_KM;
  for (const c of [...area.counties, ...area.neighbours]) {
    const km = kmToOutline(c, lng, lat);
    if (km < bestKm) [best, bestKm] = [c, km];
  }
  return area.counties.find((c) => c === best) ?? null;
}

export function streetKey(street: string, city: string): string {
  return `${fold(street)
    .replace(/[^a-z0-9 ]/g, '')
    .replace(/\b(?:street|st|avenue|ave|boulevard|blvd|road|rd|drive|dr)\b/g, '')
    .replace(/\s+/g, ' ')
    .trim()}|${fold(city)}`;
}

/** "St. Helena" is also written "Saint Helena" and "St Helena" (the mail's name for 94574 is the former). */
function spellings(name: string): string[] {
  const out = [name];
  if (/\bSt\.? /.test(name)) out.push(name.replace(/\bSt\.? /, 'Saint '), name.replace(/\bSt\.? /, 'St '), name.replace(/\bSt\.? /, 'St. '));
  if (/\bSaint /.test(name)) out.push(name.replace(/\bSaint /, 'St. '), name.replace(/\bSaint /, 'St '));
  return out;
}

export function buildGazetteer(json: unknown, bayArea: BayArea = bundledBayArea()): Gazetteer {
  const parsed = v.parse(GazetteerSchema, json);
  const nine = new Set(bayArea.counties.map((c) => c.name));
  // The curated cities (with their spellings and centres) first; then every place of the nine
  // counties they do not name, incorporated before census-designated before postal-only, so that a
  // name two places share (Mountain View, Santa Clara County and Contra Costa County) is the city's.
  const known = new Set(parsed.cities.flatMap((c) => [c.name, ...c.aliases].map(fold)));
  // A curated city (no kind) is named bare, as any incorporated one; the data file's CDPs need an address around them.
  const curated = parsed.cities;
  const added: City[] = [];
  for (const kind of ['city', 'cdp', 'postal'] as const) {
    for (const p of bayArea.places) {
      if (p.kind !== kind || known.has(fold(p.name))) continue;
      known.add(fold(p.name));
      added.push({
        name: p.name,
        destination: bayArea.destinationOf.get(p.county)!,
        county: p.county,
        lat: p.lat,
        lng: p.lng,
        aliases: spellings(p.name).slice(1),
        kind,
      });
    }
  }
  const g = { cities: [...curated, ...added], venues: parsed.venues };
  const cityByName = new Map<string, City>();
  for (const c of g.cities) for (const n of [c.name, ...c.aliases].flatMap(spellings)) if (!cityByName.has(fold(n))) cityByName.set(fold(n), c);
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
  const extraCities = g.cities.filter((c) => !nine.has(c.county));
  return { cities: g.cities, venues: g.venues, venueByKey, venuesByName, venueByStreet, cityByName, extraCities };
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

// A registry's own city (outside the nine counties) takes in the land within this distance.
const AREA_KM = 20;
// A ZIP centroid farther than this from a point says nothing about it (open water, wilderness).
const ZIP_KM = 8;

/** The place of `places` nearest the point, if one is nearer than `withinKm`. */
export function nearestWithin<P extends { readonly lat: number; readonly lng: number }>(
  places: readonly P[],
  lat: number,
  lng: number,
  withinKm: number,
): P | undefined {
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

/**
 * The gazetteer city nearest the point among those of its county, if the point lies in one of the
 * nine counties (or near a registry's own city).
 */
export function areaCity(g: Gazetteer, lat: number, lng: number): City | undefined {
  const county = countyAt(lat, lng);
  if (county)
    return (
      nearestWithin(
        g.cities.filter((c) => c.county === county.name),
        lat,
        lng,
        Infinity,
      ) ?? nearestWithin(g.cities, lat, lng, Infinity)
    );
  return nearestWithin(g.extraCities, lat, lng, AREA_KM);
}

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
