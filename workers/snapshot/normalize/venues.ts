// Upstream location text (+ optional coordinates) → one canonical venue per place.
// Known venues come from the gazetteer; unknown ones are parsed from "name, street, City, CA ZIP"
// and located at the upstream coordinates or, failing those, the ZIP's centroid or the city's centre.
// Upstream coordinates outside every destination's area mean the event is not ours.
import { createRequire } from 'node:module';
import { areaCity, californiaZips, kmBetween, nearestWithin, placeAt, streetKey, type City, type Gazetteer, type KnownVenue } from '../gazetteer.ts';
import { memoize } from './memo.ts';
import { fold } from './text.ts';

export interface Venue {
  readonly key: string;
  readonly name: string;
  readonly street: string | null;
  readonly city: string;
  readonly zip: string | null;
  readonly lat: number;
  readonly lng: number;
  readonly destination: string;
}

export function formatAddress(v: Pick<Venue, 'street' | 'city' | 'zip'>): string {
  const tail = v.zip ? `CA ${v.zip}` : 'CA';
  return v.street ? `${v.street}, ${v.city}, ${tail}` : `${v.city}, ${tail}`;
}

function fromKnown(g: Gazetteer, k: KnownVenue): Venue {
  const city = g.cityByName.get(fold(k.city))!;
  return { key: k.key, name: k.name, street: k.street, city: city.name, zip: k.zip, lat: k.lat, lng: k.lng, destination: city.destination };
}

function pick(candidates: readonly KnownVenue[] | undefined, organizer: string | null): KnownVenue | undefined {
  if (!candidates || candidates.length === 0) return undefined;
  if (candidates.length === 1) return candidates[0];
  const org = organizer ? fold(organizer) : null;
  return candidates.find((c) => fold(c.organizer) === org) ?? undefined;
}

const ZIP = /\b(9[4-6]\d{3})(?:-\d{4})?\b/;
const STATE = /\b(?:ca|calif|california)\.?$/;
// A ZIP ending a part ("Newark, DE 19716"); California's run from 90000 to 96199.
const TRAILING_ZIP = /\b(\d{5})(?:-\d{4})?$/;
const CALIFORNIA_ZIP = /^9[0-6]/;
const US = new Set(['us', 'usa', 'u.s.', 'u.s.a.', 'united states', 'united states of america']);

let foreignNames: { readonly countries: ReadonlySet<string>; readonly states: ReadonlySet<string>; readonly stateCodes: ReadonlySet<string> } | undefined;

/**
 * Country names (every ISO 3166 region, as ICU spells it in the languages feeds come in, long and
 * short: "Ireland", "España", "UK") and the other US states ("Delaware", "VA"): an address naming
 * one is elsewhere, whatever Bay Area city its locality shares a name with.
 */
function foreign(): NonNullable<typeof foreignNames> {
  if (!foreignNames) {
    const countries = new Set<string>();
    const A = 'A'.charCodeAt(0);
    for (const locale of ['en', 'es', 'fr', 'de', 'it', 'pt', 'nl']) {
      for (const style of ['long', 'short'] as const) {
        const names = new Intl.DisplayNames([locale], { type: 'region', style });
        for (let i = 0; i < 26 * 26; i++) {
          const code = String.fromCharCode(A + Math.floor(i / 26), A + (i % 26));
          if (code === 'US') continue;
          const name = names.of(code);
          if (name && name !== code) countries.add(fold(name));
        }
      }
    }
    const { full } = createRequire(import.meta.url)('zipcodes/lib/states.js') as { full: Record<string, string> };
    const other = Object.entries(full).filter(([, code]) => code !== 'CA');
    foreignNames = { countries, states: new Set(other.map(([name]) => fold(name))), stateCodes: new Set(other.map(([, code]) => code)) };
  }
  return foreignNames;
}

/** True when an address part names a place outside California: a country, another state, a non-California ZIP. */
function namesElsewhere(part: string): boolean {
  const zip = TRAILING_ZIP.exec(part);
  if (zip && !CALIFORNIA_ZIP.test(zip[1]!)) return true;
  const bare = zip ? part.slice(0, zip.index).trim() : part;
  const f = foreign();
  const folded = fold(bare).replace(/\.$/, '');
  if (US.has(folded)) return false;
  // Two-letter codes only as written in capitals ("Fairfax, VA"), so that a word like "in" never counts.
  return f.countries.has(folded) || f.states.has(folded) || f.stateCodes.has(bare);
}

interface ParsedAddress {
  readonly name: string | null;
  readonly street: string | null;
  readonly city: City | null;
  readonly zip: string | null;
  /** The text names a country, state or ZIP outside California. */
  readonly elsewhere: boolean;
}

/** Splits "Name, 123 Main St, Oakland, CA 94612" into its parts. */
function parseAddress(g: Gazetteer, text: string): ParsedAddress {
  const parts = text.split(/[,\n;]| - | – /).map((p) => p.trim()).filter((p) => p !== '');
  let zip: string | null = null;
  let city: City | null = null;
  let street: string | null = null;
  let elsewhere = false;
  const rest: string[] = [];
  for (const part of parts) {
    let p = part;
    if (namesElsewhere(p)) {
      elsewhere = true;
      continue;
    }
    const z = ZIP.exec(p);
    if (z) {
      zip = z[1] ?? null;
      p = p.replace(ZIP, '').trim();
    }
    const folded = fold(p).replace(STATE, '').trim();
    if (folded === '' || US.has(folded)) continue;
    const c = g.cityByName.get(folded);
    if (c && !city) {
      city = c;
      continue;
    }
    if (!street && /^(?:\d{1,6}[a-z]?\s|pier\s)/i.test(p)) {
      street = p;
      continue;
    }
    rest.push(p);
  }
  // "Olympia Theatre, 72 Dame Street, Dublin, Ireland" is not in Dublin, CA.
  return elsewhere ? { name: rest[0] ?? null, street: null, city: null, zip: null, elsewhere } : { name: rest[0] ?? null, street, city, zip, elsewhere };
}

export interface LocationInput {
  readonly location: string | null;
  readonly lat: number | null;
  readonly lng: number | null;
  readonly organizer: string | null;
}

const NEAR_KM = 0.15;

const nearestKnown = (g: Gazetteer, lat: number, lng: number): KnownVenue | undefined => nearestWithin(g.venues, lat, lng, NEAR_KM);

const validCoord = (lat: number | null, lng: number | null): boolean =>
  lat !== null && lng !== null && Number.isFinite(lat) && Number.isFinite(lng) && Math.abs(lat) <= 90 && Math.abs(lng) <= 180 && !(lat === 0 && lng === 0);

const memos = new WeakMap<Gazetteer, (key: string) => Venue | 'outside_area' | null>();

/**
 * Resolves an event's place; null when nothing locates it (the caller falls back to the source's
 * default venue), 'outside_area' when its coordinates or its address put it outside every destination.
 */
export function resolveVenue(g: Gazetteer, input: LocationInput): Venue | 'outside_area' | null {
  let memo = memos.get(g);
  if (!memo) {
    memo = memoize((key: string) => {
      const [location, lat, lng, organizer] = JSON.parse(key) as [string | null, number | null, number | null, string | null];
      return resolveUncached(g, { location, lat, lng, organizer });
    });
    memos.set(g, memo);
  }
  return memo(JSON.stringify([input.location, input.lat, input.lng, input.organizer]));
}

// A text city this close to the upstream coordinates agrees with them even with no ZIP of its own
// near them (a registry's own places have none).
const AGREE_KM = 5;

/** Centroids cannot settle a boundary, so a city any nearby ZIP is addressed to agrees with the point. */
function agrees(g: Gazetteer, c: City, lat: number, lng: number): boolean {
  // The centre test first: it spares loading the ZIP table for nearly every event.
  if (kmBetween(c.lat, c.lng, lat, lng) <= AGREE_KM) return true;
  const here = placeAt(g, lat, lng);
  return here !== null && (here.city === c.name || here.nearby.has(fold(c.name)));
}

function adhocKey(street: string | null, name: string, city: string): string {
  return `adhoc:${street ? streetKey(street, city) : `${fold(name)}|${fold(city)}`}`;
}

function resolveUncached(g: Gazetteer, input: LocationInput): Venue | 'outside_area' | null {
  const text = input.location?.replace(/\s+/g, ' ').trim() ?? '';
  const hasCoord = validCoord(input.lat, input.lng);
  // Upstream coordinates are the most exact thing a feed says about a place: outside every
  // destination's area the event is not ours, whatever Bay Area city its text shares a name with.
  if (hasCoord && !areaCity(g, input.lat!, input.lng!)) return 'outside_area';
  let parsed: ParsedAddress | null = null;
  if (text !== '') {
    const whole = pick(g.venuesByName.get(fold(text)), input.organizer);
    if (whole) return fromKnown(g, whole);
    parsed = parseAddress(g, text);
    const byName = parsed.name ? pick(g.venuesByName.get(fold(parsed.name)), input.organizer) : undefined;
    if (byName) return fromKnown(g, byName);
    // Some streets carry no house number ("Central Park Dr", "Dolores St & 19th St"), so an
    // unparsed leading part may be the street line itself.
    const streetLine = parsed.street ?? parsed.name;
    if (streetLine && parsed.city) {
      const byStreet = g.venueByStreet.get(streetKey(streetLine, parsed.city.name));
      if (byStreet) return fromKnown(g, byStreet);
    }
    const c = parsed.city;
    if (c && (!hasCoord || agrees(g, c, input.lat!, input.lng!))) {
      const name = parsed.name ?? parsed.street ?? c.name;
      const key = adhocKey(parsed.street, name, c.name);
      const base = { key, name, street: parsed.street, city: c.name, zip: parsed.zip, destination: c.destination };
      if (hasCoord) return { ...base, lat: input.lat!, lng: input.lng! };
      // Without coordinates the ZIP's centroid is nearer the place than the city's centre, when the
      // ZIP is addressed to that city (a mistyped ZIP must not move the venue to another town).
      const z = parsed.zip ? californiaZips().byZip.get(parsed.zip) : undefined;
      const atZip = z && g.cityByName.get(fold(z.city)) === c;
      return { ...base, lat: atZip ? z.lat : c.lat, lng: atZip ? z.lng : c.lng };
    }
    if (!hasCoord && parsed.elsewhere) return 'outside_area';
  }
  if (hasCoord) {
    const near = nearestKnown(g, input.lat!, input.lng!);
    if (near) return fromKnown(g, near);
    const here = placeAt(g, input.lat!, input.lng!)!;
    // The text's city disagrees with the coordinates, or it has none: the coordinates say which
    // city's address this is, and a street the text placed elsewhere is not kept.
    const street = parsed?.city ? null : (parsed?.street ?? null);
    const name = parsed?.name ?? street ?? here.city;
    return { key: adhocKey(street, name, here.city), name, street, city: here.city, zip: null, lat: input.lat!, lng: input.lng!, destination: here.destination };
  }
  return null;
}

export function defaultVenue(g: Gazetteer, key: string | undefined): Venue | null {
  const k = key ? g.venueByKey.get(key) : undefined;
  return k ? fromKnown(g, k) : null;
}
