// Upstream location text (+ optional coordinates) → one canonical venue per place.
// Known venues come from the gazetteer; unknown ones are parsed from "name, street, City, CA ZIP"
// and located at the upstream coordinates or, failing those, the city's centre.
import { streetKey, type City, type Gazetteer, type KnownVenue } from '../gazetteer.ts';
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

/** Splits "Name, 123 Main St, Oakland, CA 94612" into its parts. */
function parseAddress(g: Gazetteer, text: string): { name: string | null; street: string | null; city: City | null; zip: string | null } {
  const parts = text.split(/[,\n;]| - | – /).map((p) => p.trim()).filter((p) => p !== '');
  let zip: string | null = null;
  let city: City | null = null;
  let street: string | null = null;
  const rest: string[] = [];
  for (const part of parts) {
    let p = part;
    const z = ZIP.exec(p);
    if (z) {
      zip = z[1] ?? null;
      p = p.replace(ZIP, '').trim();
    }
    const folded = fold(p).replace(STATE, '').trim();
    if (folded === '' || folded === 'usa' || folded === 'united states') continue;
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
  return { name: rest[0] ?? null, street, city, zip };
}

export interface LocationInput {
  readonly location: string | null;
  readonly lat: number | null;
  readonly lng: number | null;
  readonly organizer: string | null;
}

const NEAR_KM = 0.15;

function nearestKnown(g: Gazetteer, lat: number, lng: number): KnownVenue | undefined {
  let best: KnownVenue | undefined;
  let bestKm = NEAR_KM;
  for (const k of g.venues) {
    const dLat = (k.lat - lat) * 111.2;
    const dLng = (k.lng - lng) * 111.2 * Math.cos((lat * Math.PI) / 180);
    const km = Math.hypot(dLat, dLng);
    if (km < bestKm) {
      best = k;
      bestKm = km;
    }
  }
  return best;
}

const validCoord = (lat: number | null, lng: number | null): boolean =>
  lat !== null && lng !== null && Number.isFinite(lat) && Number.isFinite(lng) && Math.abs(lat) <= 90 && Math.abs(lng) <= 180 && !(lat === 0 && lng === 0);

const memos = new WeakMap<Gazetteer, (key: string) => Venue | null>();

/** Resolves an event's place; null when nothing locates it (the caller falls back to the source's default venue). */
export function resolveVenue(g: Gazetteer, input: LocationInput): Venue | null {
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

function resolveUncached(g: Gazetteer, input: LocationInput): Venue | null {
  const text = input.location?.replace(/\s+/g, ' ').trim() ?? '';
  const hasCoord = validCoord(input.lat, input.lng);
  if (text !== '') {
    const whole = pick(g.venuesByName.get(fold(text)), input.organizer);
    if (whole) return fromKnown(g, whole);
    const parsed = parseAddress(g, text);
    const byName = parsed.name ? pick(g.venuesByName.get(fold(parsed.name)), input.organizer) : undefined;
    if (byName) return fromKnown(g, byName);
    // Some streets carry no house number ("Central Park Dr", "Dolores St & 19th St"), so an
    // unparsed leading part may be the street line itself.
    const streetLine = parsed.street ?? parsed.name;
    if (streetLine && parsed.city) {
      const byStreet = g.venueByStreet.get(streetKey(streetLine, parsed.city.name));
      if (byStreet) return fromKnown(g, byStreet);
    }
    if (parsed.city) {
      const c = parsed.city;
      const lat = hasCoord ? input.lat! : c.lat;
      const lng = hasCoord ? input.lng! : c.lng;
      const name = parsed.name ?? parsed.street ?? c.name;
      const key = `adhoc:${parsed.street ? streetKey(parsed.street, c.name) : `${fold(name)}|${fold(c.name)}`}`;
      return { key, name, street: parsed.street, city: c.name, zip: parsed.zip, lat, lng, destination: c.destination };
    }
  }
  if (hasCoord) {
    const near = nearestKnown(g, input.lat!, input.lng!);
    if (near) return fromKnown(g, near);
  }
  return null;
}

export function defaultVenue(g: Gazetteer, key: string | undefined): Venue | null {
  const k = key ? g.venueByKey.get(key) : undefined;
  return k ? fromKnown(g, k) : null;
}
