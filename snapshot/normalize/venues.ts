// Upstream location text (+ optional coordinates) → one canonical venue per place.
// Known venues come from the gazetteer, when the upstream names them; any other place keeps the
// upstream's name, its street line read by a US address parser (parse-address), its city or ZIP
// looked up among the nine counties' places (sources/bayarea.json), and the best coordinates
// present: the upstream's, a known venue's, the ZIP's centroid, the place's point.
// Coordinates or an address outside the nine counties mean the event is not ours.
import { createRequire } from 'node:module';
import { areaCity, bundledBayArea, californiaZips, kmBetween, placeAt, streetKey, type City, type Gazetteer, type KnownVenue } from '../gazetteer.ts';
import { memoize } from '../../core/memo.ts';
import { fold, words } from '../../core/text.ts';
import type { GeoPrecision } from '../../core/record.ts';

/** How the coordinates were found: the upstream's own, a known venue's, the ZIP's centroid, the place's point. */

export interface Venue {
  readonly key: string;
  readonly name: string;
  readonly street: string | null;
  readonly city: string;
  readonly zip: string | null;
  readonly lat: number;
  readonly lng: number;
  readonly destination: string;
  readonly precision: GeoPrecision;
}

export function formatAddress(v: Pick<Venue, 'street' | 'city' | 'zip'>): string {
  const tail = v.zip ? `CA ${v.zip}` : 'CA';
  return v.street ? `${v.street}, ${v.city}, ${tail}` : `${v.city}, ${tail}`;
}

function fromKnown(g: Gazetteer, k: KnownVenue): Venue {
  const city = g.cityByName.get(fold(k.city))!;
  return { key: k.key, name: k.name, street: k.street, city: city.name, zip: k.zip, lat: k.lat, lng: k.lng, destination: city.destination, precision: 'venue' };
}

function pick(candidates: readonly KnownVenue[] | undefined, organizer: string | null): KnownVenue | undefined {
  if (!candidates || candidates.length === 0) return undefined;
  if (candidates.length === 1) return candidates[0];
  const org = organizer ? fold(organizer) : null;
  return candidates.find((c) => fold(c.organizer) === org) ?? undefined;
}

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

// Codes that are also words or abbreviations ("Library OR online", "Acme Co", "Main St NE", "Ms"):
// after a town with no comma between they count only with a ZIP, which names the state by itself.
const WORDLIKE_CODES = new Set([
  'IN',
  'OR',
  'ME',
  'OK',
  'HI',
  'OH',
  'DE',
  'LA',
  'AL',
  'PA',
  'ID',
  'MS',
  'MD',
  'CO',
  'NE',
  'FL',
  'CT',
  'AR',
  'MT',
  'VA',
  'GA',
  'DC',
  'ON',
  'PE',
  'AB',
  'SK',
  'NT',
  'MB',
  'NB',
  'AS',
]);
// A state's name after one of these is a name of its own ("Lake Washington", "Booker T. Washington").
const STATE_NAME_LEADS = /(?:^|\s)(?:mount|mt\.?|lake|fort|ft\.?|port|george|t\.)$/i;

/** "Concord MA", "Concord Massachusetts", "Concord, MA": a town followed by another state, no comma needed. */
function endsInState(text: string): boolean {
  const f = foreign();
  const w = text.split(/\s+/).filter((x) => x !== '');
  if (w.length < 2 || !/\p{L}$/u.test(w.at(-2)!)) return false;
  const code = w.at(-1)!.replace(/\.$/, '');
  if (/^\p{Lu}{2}$/u.test(code) && f.stateCodes.has(code) && !WORDLIKE_CODES.has(code)) return true;
  for (let n = Math.min(3, w.length - 1); n >= 1; n--) {
    const before = w.slice(0, -n).join(' ');
    if (f.states.has(fold(w.slice(-n).join(' '))) && /^\p{Lu}/u.test(w.at(-n)!) && /\p{L}$/u.test(before) && !STATE_NAME_LEADS.test(before)) return true;
  }
  return false;
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
  if (f.countries.has(folded) || f.states.has(folded) || f.stateCodes.has(bare)) return true;
  // The state may end any stretch of the part, not only its end ("Concord MA: Concord Conservatory").
  return bare.split(/[:/]/).some((s) => endsInState(trimTail(s.trim())));
}

interface ParsedStreet {
  readonly number?: string;
  readonly street?: string;
  readonly type?: string;
  readonly city?: string;
  readonly state?: string;
  readonly zip?: string;
}

let streetParser: ((text: string) => ParsedStreet | null) | undefined;
/** parse-address's US parser (a port of Perl's Geo::StreetAddress::US): ~20 µs a call. */
function parseStreet(text: string): ParsedStreet | null {
  streetParser ??= (createRequire(import.meta.url)('parse-address') as { parseLocation(t: string): ParsedStreet | null }).parseLocation;
  return streetParser(text);
}

interface ParsedAddress {
  /** The upstream's names for the place, building first (rooms last). */
  readonly names: readonly string[];
  readonly street: string | null;
  readonly city: City | null;
  readonly zip: string | null;
  /** The text names a country, state, California city or ZIP outside the nine counties. */
  readonly elsewhere: boolean;
  /** …and that place is in another state or country, not California. */
  readonly foreign: boolean;
  /** The text names California ("CA", "California"). */
  readonly state: boolean;
}

const COUNTRY_TAIL = /(?:^|[,\s])(?:united states(?: of america)?|u\.s\.a\.?|u\.s\.|usa|us)\.?$/i;
const STATE_TAIL = /(?:^|[\s,])(?:ca|calif\.?|california)\.?$/i;
const ZIP_TAIL = /(?:^|\s)(\d{5})(?:-\d{4})?$/;
// A house number ("2825 Diamond Street", "1985 Louis Road") or a pier, starting a street line.
const HOUSE = /(?:^|\s)(?:\d{1,6}[a-z]?(?:-\d{1,5})?\s+(?=[a-z0-9])|pier\s+\d+\b)/gi;
// A number that belongs to a room, suite or floor is no house number.
const UNIT_BEFORE = /\b(?:room|rm|suite|ste|unit|apt|bldg|building|floor|fl|no|number|studio|gallery|gate)\.?(?: ?#)?$|#$/i;
// "Room 213", "Meeting Room B", "Children's Room", "Suite 200", "2nd Floor".
const ROOM = /^(?:(?:[\w'’-]+\s+){0,3}(?:room|rm\.?)(?:\s+#?[\w-]{1,6})?|(?:suite|ste\.?|unit|floor|fl\.?|#)\s*[\w-]{1,6}|\d+(?:st|nd|rd|th)\s+floor)$/i;
// A building a place name may lead ("Petaluma Regional Library", "Guerneville Library").
const FACILITY =
  /\b(?:library|center|centre|park|museum|school|church|hall|theat(?:er|re)|community|recreation|pool|zoo|gardens?|plaza|farm|beach|marina|preserve|club|college|university|academy|ymca|playground|commons|campus|fairgrounds|auditorium|arena|stadium|branch)\b/i;

/** Trailing spaces and commas off. */
function trimTail(s: string): string {
  let t = s.trimEnd();
  while (t.endsWith(',')) t = t.slice(0, -1).trimEnd();
  return t;
}

/** "1 Main St Suite 200" → "1 Main St": the suite is a room of the place, not its street line. */
function withoutUnit(street: string): string {
  const w = street.split(' ');
  if (w.length >= 4 && /^(?:suite|ste\.?|unit|apt\.?|room|rm\.?|#)$/i.test(w.at(-2)!) && /^#?[\w-]{1,6}$/.test(w.at(-1)!)) return w.slice(0, -2).join(' ');
  if (w.length >= 3 && /^#[\w-]{1,6}$/.test(w.at(-1)!)) return w.slice(0, -1).join(' ');
  return street;
}

function isStreetLine(part: string): boolean {
  return /^(?:\d{1,6}[a-z]?(?:-\d{1,5})?\s+[a-z0-9]|pier\s+\d+\b)/i.test(part);
}

/** Strips a trailing "CA 94131" / "California" / "94131" from a part. */
function stripTail(part: string): { rest: string; zip: string | null; state: boolean } {
  let rest = part.trim();
  let zip: string | null = null;
  let state = false;
  const z = ZIP_TAIL.exec(rest);
  if (z) {
    zip = z[1]!;
    rest = rest.slice(0, z.index).trim();
  }
  const st = STATE_TAIL.exec(rest);
  if (st) {
    state = true;
    rest = rest.slice(0, st.index).replace(/,\s*$/, '').trim();
  }
  return { rest, zip, state };
}

/** A place the gazetteer names, spelled exactly as `text` (folded). CDPs need more than a bare name. */
function placeNamed(g: Gazetteer, text: string, corroborated: boolean): City | null {
  const c = g.cityByName.get(fold(text)) ?? g.cityByName.get(fold(text).replace(/\.$/, ''));
  if (!c) return null;
  return c.kind === 'cdp' || c.kind === 'postal' ? (corroborated ? c : null) : c;
}

/** "630 Summerfield Road Santa Rosa" → the place its last words name, and the words before it. */
function placeEnding(g: Gazetteer, text: string, corroborated: boolean): { city: City; before: string } | null {
  const words = text.split(/\s+/);
  for (let n = Math.min(5, words.length - 1); n >= 1; n--) {
    const city = placeNamed(g, words.slice(-n).join(' '), corroborated);
    if (city) return { city, before: words.slice(0, -n).join(' ') };
  }
  return null;
}

/** A place named inside a building's name ("Northwest Santa Rosa Library", "Occidental Community Center"). */
function placeInName(g: Gazetteer, name: string): City | null {
  if (!FACILITY.test(name)) return null;
  const words = name
    .replace(/[^\p{L}\p{N}.' -]/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    for (let n = Math.min(4, words.length - i); n >= 1; n--) {
      const c = g.cityByName.get(fold(words.slice(i, i + n).join(' ')));
      // A whole-word place, not the facility word itself ("Library" is no town).
      if (c && !FACILITY.test(words.slice(i, i + n).join(' '))) return c;
    }
  }
  return null;
}

/**
 * Reads "Name, Room, 123 Main St[,] City[,] CA ZIP[, USA]" — commas or none — into its parts. The
 * street line and the city after it come from parse-address; the city must be a place of the nine
 * counties (or a registry's own), else the address is elsewhere.
 */
function parseAddress(g: Gazetteer, text0: string): ParsedAddress {
  let text = text0;
  while (COUNTRY_TAIL.test(text) && trimTail(text.replace(COUNTRY_TAIL, '')) !== '') text = trimTail(text.replace(COUNTRY_TAIL, ''));
  // "SAP Center at San Jose", "Concord Pavilion at Concord": a town after " at " is the place's town.
  const parts = text
    .split(/[,\n;|()]| - | – | — /)
    .flatMap((p) => {
      const at = p.lastIndexOf(' at ');
      return at > 0 && g.cityByName.has(fold(p.slice(at + 4))) ? [p.slice(0, at), p.slice(at + 4)] : [p];
    })
    .map((p) => p.trim())
    .filter((p) => p !== '');
  let elsewhere = false;
  let foreignPlace = false;
  const kept: string[] = [];
  for (const part of parts) {
    // "St. Helena" is an island and a Napa town: a place of ours is ours.
    if (namesElsewhere(part) && !g.cityByName.has(fold(part))) elsewhere = foreignPlace = true;
    else kept.push(part);
  }
  const hasState = kept.some((p) => stripTail(p).state);
  const zips = kept.map((p) => stripTail(p).zip).filter((z): z is string => z !== null);
  const zip = zips.at(-1) ?? null;

  // The street line: the rightmost house number whose parse gives a street.
  let street: string | null = null;
  let city: City | null = null;
  let streetAt = -1;
  let before = '';
  let unknownCity = false;
  outer: for (let i = kept.length - 1; i >= 0; i--) {
    const part = kept[i]!;
    for (const m of part.matchAll(HOUSE)) {
      const at = m.index + (m[0].startsWith(' ') ? 1 : 0);
      if (UNIT_BEFORE.test(part.slice(0, at).trimEnd())) continue;
      const line = part.slice(at);
      const rest = kept.slice(i + 1);
      const parsed = /^pier\s/i.test(line) ? null : parseStreet([line, ...rest].join(', '));
      if (!/^pier\s/i.test(line) && !(parsed?.number && parsed.street)) continue;
      // The city may follow the street in the same part ("100 Larkin Street San Francisco").
      const { rest: lineRest, zip: lineZip, state: lineState } = stripTail(line);
      const corroborated = true;
      // The parser splits street from city at the street type ("Street", "Rd"); the longest place
      // name ending the line settles which words are the city ("… St North Richmond").
      const named = parsed?.city ? placeNamed(g, parsed.city, corroborated) : null;
      // Only when nothing but a state or ZIP follows the line: "1170 The Alameda, Berkeley" ends in no town.
      const cityInLine = lineZip !== null || lineState || rest.length === 0 || stripTail(rest[0]!).rest === '';
      const ending = cityInLine ? placeEnding(g, lineRest, corroborated) : null;
      if (ending && /\s/.test(ending.before) && isStreetLine(ending.before)) {
        street = ending.before;
        city = ending.city;
      } else street = lineRest;
      if (!city && !named && parsed?.city && parsed.state && /^ca/i.test(parsed.state))
        unknownCity = californiaZips().all.some((z) => fold(z.city) === fold(parsed.city!));
      if (parsed?.state && !/^(?:ca|calif|california)\.?$/i.test(parsed.state)) elsewhere = foreignPlace = true;
      // "1 Main St Suite 200": the suite is a room of the place, not its street line.
      street = withoutUnit(trimTail(street));
      streetAt = i;
      before = part.slice(0, at).trim();
      break outer;
    }
  }

  // The city: a part (after the street) that is a place, with its state and ZIP stripped.
  const corroborated = street !== null || hasState || zip !== null;
  const consumed = new Set<number>();
  if (streetAt >= 0) consumed.add(streetAt);
  for (let i = kept.length - 1; i >= 0 && !city; i--) {
    if (i === streetAt) continue;
    const { rest } = stripTail(kept[i]!);
    const c = rest === '' ? null : placeNamed(g, rest, corroborated);
    if (c) {
      city = c;
      consumed.add(i);
    }
  }
  for (let i = 0; i < kept.length; i++) if (stripTail(kept[i]!).rest === '') consumed.add(i);
  for (let i = 0; i < kept.length; i++) if (!consumed.has(i) && placeNamed(g, stripTail(kept[i]!).rest, true) === city && city) consumed.add(i);

  // A ZIP of the nine counties names its city when the text names none.
  const bayZip = zip ? bundledBayArea().zips.get(zip) : undefined;
  if (!city && bayZip) city = g.cityByName.get(fold(bayZip.city)) ?? null;
  // A California ZIP or postal city outside the nine counties, with no Bay Area place named.
  if (!city && ((zip && !bayZip) || unknownCity)) elsewhere = true;

  // The upstream's names: what is left, building before room; "… at Petaluma Regional Library" names the place after "at".
  const names: string[] = [];
  const rooms: string[] = [];
  const candidates = [before, ...kept.filter((_, i) => !consumed.has(i))].filter((p) => p !== '' && !isStreetLine(p) && !US.has(fold(p)));
  for (const c of candidates) {
    const after = c
      .split(/ at (?:the )?/)
      .slice(1)
      .at(-1);
    const named = after && /^\p{Lu}/u.test(after) && (g.venuesByName.has(fold(after)) || placeInName(g, after) || g.cityByName.has(fold(after)));
    const name = named ? after : c;
    (ROOM.test(name) ? rooms : names).push(name);
  }
  if (!city) for (const n of names) city ??= placeInName(g, n);
  // "Olympia Theatre, 72 Dame Street, Dublin, Ireland" is not in Dublin, CA.
  if (elsewhere) return { names: [...names, ...rooms], street: null, city: null, zip: null, elsewhere, foreign: foreignPlace, state: hasState };
  return { names: [...names, ...rooms], street, city, zip, elsewhere, foreign: foreignPlace, state: hasState };
}

export interface LocationInput {
  readonly location: string | null;
  readonly lat: number | null;
  readonly lng: number | null;
  readonly organizer: string | null;
  /**
   * The item's feed places its items in another state or country (feedIsElsewhere): a bare town
   * name, with no street, ZIP, state or coordinates beside it, is that region's town of the name.
   */
  readonly feedElsewhere?: boolean;
}

const validCoord = (lat: number | null, lng: number | null): boolean =>
  lat !== null && lng !== null && Number.isFinite(lat) && Number.isFinite(lng) && Math.abs(lat) <= 90 && Math.abs(lng) <= 180 && !(lat === 0 && lng === 0);

interface Resolution {
  readonly venue: Venue | 'outside_area' | null;
  /** The place rests on a town's name alone: no street, ZIP, state, coordinates or known venue. */
  readonly bare: boolean;
  /** The text or the coordinates put it in another state or country. */
  readonly foreign: boolean;
}

const memos = new WeakMap<Gazetteer, (key: string) => Resolution>();

function resolution(g: Gazetteer, input: LocationInput): Resolution {
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

/**
 * Resolves an event's place; null when nothing locates it (the caller falls back to the source's
 * default venue), 'outside_area' when its coordinates or its address put it outside every destination.
 */
export function resolveVenue(g: Gazetteer, input: LocationInput): Venue | 'outside_area' | null {
  const r = resolution(g, input);
  // Boston's jazz calendar writes "Concord Conservatory of Music, Concord" beside "…, Boston, MA 02134".
  return r.bare && input.feedElsewhere ? 'outside_area' : r.venue;
}

/**
 * Whether a feed's items, by what they state of their place, are in another state or country: two
 * or more say so (an address naming the state, a ZIP, a country, or coordinates far from
 * California), and they outnumber three to one those whose street, ZIP, state, coordinates or
 * known venue put them in the nine counties. Items out of area in California do not count: a
 * Sacramento or Santa Cruz calendar's "Concord" is still Concord, CA.
 */
export function feedIsElsewhere(g: Gazetteer, inputs: Iterable<LocationInput>): boolean {
  let away = 0;
  let here = 0;
  for (const input of inputs) {
    const r = resolution(g, input);
    if (r.foreign) away++;
    else if (r.venue !== null && r.venue !== 'outside_area' && !r.bare) here++;
  }
  return away >= 2 && away > 3 * here;
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

// Words that say what kind of place a building is, not which: a name made of nothing else
// ("Central Library", "Main Library", "City Hall", "Community Center") is a building of every town.
const GENERIC_WORDS = new Set(
  (
    'the s main central public city town county civic community recreation rec center centre library libraries branch hall ' +
    'park downtown north south east west children childrens kids teen youth family senior museum plaza auditorium ' +
    'theater theatre gym pool garden gardens school high middle elementary campus building annex cultural arts art ' +
    'visitor visitors nature regional memorial municipal headquarters main room meeting event events and of'
  ).split(' '),
);
const isGeneric = (name: string): boolean => words(name).length > 0 && words(name).every((w) => GENERIC_WORDS.has(w));

/** The text says which town's: it names the venue's city or street. */
function namesItsPlace(text: string, parsed: ParsedAddress, v: KnownVenue): boolean {
  if (parsed.street && streetKey(parsed.street, v.city) === streetKey(v.street, v.city)) return true;
  if (parsed.city) return fold(parsed.city.name) === fold(v.city);
  return ` ${words(text).join(' ')} `.includes(` ${words(v.city).join(' ')} `);
}

/**
 * The known venue the upstream names, by its whole text or one of its names. A generic name is
 * some other town's building as often as ours (the Seattle Public Library's "Central Library" is
 * not Berkeley's): it is the known venue only for that venue's organizer, or when the text names
 * the venue's city or street, and never when it names another city.
 */
function namedVenue(
  g: Gazetteer,
  text: string,
  parsed: ParsedAddress,
  organizer: string | null,
): { readonly venue: KnownVenue; readonly name: string } | undefined {
  const org = organizer ? fold(organizer) : null;
  for (const n of [text, ...parsed.names]) {
    let candidates = g.venuesByName.get(fold(n));
    if (candidates && isGeneric(n)) {
      candidates = candidates.filter((v) =>
        parsed.city && fold(parsed.city.name) !== fold(v.city) ? namesItsPlace(text, parsed, v) : fold(v.organizer) === org || namesItsPlace(text, parsed, v),
      );
    }
    const v = pick(candidates, organizer);
    if (v) return { venue: v, name: n };
  }
  return undefined;
}

/** "Concord Library" is its town's name and a kind of building: no more than the town's name, to another organizer. */
function townAndKind(name: string, v: KnownVenue, organizer: string | null): boolean {
  if (organizer !== null && fold(organizer) === fold(v.organizer)) return false;
  const rest = ` ${words(name).join(' ')} `.replace(` ${words(v.city).join(' ')} `, ' ').trim();
  return rest === '' || isGeneric(rest);
}

// Far enough from California (its bounding box) that coordinates there are another state's or country's.
const inCaliforniaBox = (lat: number, lng: number): boolean => lat >= 32.5 && lat <= 42.1 && lng >= -124.5 && lng <= -114.1;

function resolveUncached(g: Gazetteer, input: LocationInput): Resolution {
  const text = input.location?.replace(/\s+/g, ' ').trim() ?? '';
  const hasCoord = validCoord(input.lat, input.lng);
  // Upstream coordinates are the most exact thing a feed says about a place: outside the nine
  // counties the event is not ours, whatever Bay Area city its text shares a name with.
  if (hasCoord && !areaCity(g, input.lat!, input.lng!)) return { venue: 'outside_area', bare: false, foreign: !inCaliforniaBox(input.lat!, input.lng!) };
  const parsed = text === '' ? null : parseAddress(g, text);
  const unanchored = !hasCoord && parsed !== null && !parsed.street && !parsed.zip && !parsed.state;
  // A known venue only when the upstream names it: never for coordinates near it, nor for its
  // street under another name (two businesses share an address); never one the text puts in another state.
  const named = parsed && !parsed.foreign ? namedVenue(g, text, parsed, input.organizer) : undefined;
  if (named) return { venue: fromKnown(g, named.venue), bare: unanchored && townAndKind(named.name, named.venue, input.organizer), foreign: false };
  const venue = resolveParsed(g, input, hasCoord, parsed);
  const bare = unanchored && venue !== null && venue !== 'outside_area' && venue.precision === 'place';
  return { venue, bare, foreign: parsed?.foreign ?? false };
}

function resolveParsed(g: Gazetteer, input: LocationInput, hasCoord: boolean, parsed: ParsedAddress | null): Venue | 'outside_area' | null {
  if (parsed) {
    let atStreet = parsed.street && parsed.city ? g.venueByStreet.get(streetKey(parsed.street, parsed.city.name)) : undefined;
    let building = parsed.names.find((n) => !ROOM.test(n));
    // Some streets carry no house number ("Central Park Dr", "Dolores St & 19th St"): the part
    // read as a name may be the street line itself.
    if (!parsed.street && parsed.city && building) {
      const line = building;
      atStreet = g.venueByStreet.get(streetKey(line, parsed.city.name));
      if (atStreet) building = parsed.names.find((n) => n !== line && !ROOM.test(n));
    }
    if (atStreet && !building) return fromKnown(g, atStreet);
    const c = parsed.city;
    if (c && (!hasCoord || agrees(g, c, input.lat!, input.lng!))) {
      // A room is no venue: the street line names the place when the text names no building.
      const name = building ?? parsed.street ?? parsed.names[0] ?? c.name;
      const key = adhocKey(parsed.street, name, c.name);
      const base = { key, name, street: parsed.street, city: c.name, zip: parsed.zip, destination: c.destination };
      if (hasCoord) return { ...base, lat: input.lat!, lng: input.lng!, precision: 'exact' };
      // A known venue at the same street address stands where this place does.
      if (atStreet) return { ...base, lat: atStreet.lat, lng: atStreet.lng, precision: 'venue' };
      // Without coordinates the ZIP's centroid is nearer the place than the city's point, when the
      // ZIP is addressed to that city (a mistyped ZIP must not move the venue to another town).
      const z = parsed.zip ? (bundledBayArea().zips.get(parsed.zip) ?? californiaZips().byZip.get(parsed.zip)) : undefined;
      const atZip = z && g.cityByName.get(fold(z.city)) === c;
      return atZip ? { ...base, lat: z.lat, lng: z.lng, precision: 'zip' } : { ...base, lat: c.lat, lng: c.lng, precision: 'place' };
    }
    if (!hasCoord && parsed.elsewhere) return 'outside_area';
  }
  if (hasCoord) {
    const here = placeAt(g, input.lat!, input.lng!)!;
    // The text's city disagrees with the coordinates, or it has none: the coordinates say which
    // city's address this is, and a street the text placed elsewhere is not kept.
    const street = parsed?.city ? null : (parsed?.street ?? null);
    const name = parsed?.names.find((n) => !ROOM.test(n)) ?? street ?? parsed?.names[0] ?? here.city;
    return {
      key: adhocKey(street, name, here.city),
      name,
      street,
      city: here.city,
      zip: null,
      lat: input.lat!,
      lng: input.lng!,
      destination: here.destination,
      precision: 'exact',
    };
  }
  return null;
}

// "Passion Pit @ Fox Theater - Oakland", "Storytime at Rockridge Branch": a listing that gives no
// place of its own often names it at the end of its title. " at " only before a capitalized word,
// so that "fun at home" or "meet at noon" name nothing.
const TITLE_PLACE = /(?:\s@\s?|\sat\s(?=[\p{Lu}\d]))([^@]{2,80})$/u;

/** The place a title names at its end, for an item that gives none: text for resolveVenue, or null. */
export function placeInTitle(title: string): string | null {
  const m = TITLE_PLACE.exec(title.trim());
  return m ? m[1]!.trim() : null;
}

export function defaultVenue(g: Gazetteer, key: string | undefined): Venue | null {
  const k = key ? g.venueByKey.get(key) : undefined;
  return k ? fromKnown(g, k) : null;
}
