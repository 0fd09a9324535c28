// Known places, shipped with the project: cities (with their destination) and venues.
// Resolves upstream location strings to one canonical name/address/coordinates per place.
import { readFileSync } from 'node:fs';
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
