// HTML pages carrying schema.org Event JSON-LD. htmlparser2 finds the <script type="application/ld+json">
// blocks (a forgiving parser: real pages are rarely valid HTML); each block may hold one object, an
// array, or an @graph, and an Event may nest inside an ItemList.
import { parseDocument } from 'htmlparser2';
import { findAll, textContent } from 'domutils';
import { Duration, type DateTime } from 'luxon';
import { parseUpstreamTime } from '../normalize/times.ts';
import { type RawEvent, type UpstreamTime } from '../types.ts';
import { referenceInstant, titleDate } from './title-date.ts';
import { emptyRaw, FeedFormatError, toNumber, type ParseOptions, type ParseOutput } from './types.ts';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const arr = (x: unknown): unknown[] => (x == null ? [] : Array.isArray(x) ? x : [x]);
// Some CMSs add slashes (PHP addslashes) before JSON-encoding: Hidden Hall's "Mo\\' Jam Mondays" parses
// to Mo\' Jam. A backslash before a quote is that escaping, never the upstream's own text.
const SLASHED_QUOTE = /\\(['"])/g;
const s = (x: unknown): string | null => (typeof x === 'string' && x.trim() !== '' ? x.replace(SLASHED_QUOTE, '$1') : typeof x === 'number' ? String(x) : null);

function types(o: Obj): string[] {
  return arr(o['@type']).map((t) => String(t).replace(/^https?:\/\/schema\.org\//, ''));
}

const EVENT_TYPES = new Set([
  'Event',
  'ChildrensEvent',
  'EducationEvent',
  'Festival',
  'LiteraryEvent',
  'MusicEvent',
  'TheaterEvent',
  'ScreeningEvent',
  'ExhibitionEvent',
  'SocialEvent',
  'SportsEvent',
  'DanceEvent',
  'ComedyEvent',
  'VisualArtsEvent',
  'FoodEvent',
]);

function collectEvents(node: unknown, out: Obj[], depth = 0): void {
  if (depth > 6) return;
  for (const item of arr(node)) {
    if (!isObj(item)) continue;
    if (types(item).some((t) => EVENT_TYPES.has(t))) out.push(item);
    for (const key of ['@graph', 'itemListElement', 'item', 'subEvent']) if (key in item) collectEvents(item[key], out, depth + 1);
  }
}

/** schema.org addressCountry is a name or code, or a Country with a name. */
const countryName = (c: unknown): unknown => (isObj(c) ? c['name'] : c);

function place(loc: unknown): { text: string | null; lat: number | null; lng: number | null } {
  const p = arr(loc).find(isObj) ?? null;
  if (!p) return { text: s(arr(loc)[0]), lat: null, lng: null };
  const addr = p['address'];
  const a = isObj(addr)
    ? // The country stays in the text: "Dublin, Dublin 2, Ireland" must not read as Dublin, CA.
      [
        addr['streetAddress'],
        addr['addressLocality'],
        [addr['addressRegion'], addr['postalCode']].filter(Boolean).join(' '),
        countryName(addr['addressCountry']),
      ]
        .map(s)
        .filter(Boolean)
        .join(', ')
    : s(addr);
  const geo = isObj(p['geo']) ? p['geo'] : {};
  return { text: [s(p['name']), a].filter(Boolean).join(', ') || null, lat: toNumber(geo['latitude']), lng: toNumber(geo['longitude']) };
}

/** schema.org Booleans arrive as true/false, "true"/"false", or the URLs https://schema.org/True|False. */
function flag(x: unknown): boolean | null {
  if (typeof x === 'boolean') return x;
  const v =
    typeof x === 'string'
      ? x
          .trim()
          .replace(/^https?:\/\/schema\.org\//i, '')
          .toLowerCase()
      : '';
  return v === 'true' ? true : v === 'false' ? false : null;
}

// A zero-priced "Donate to Support the Arts" or "Sliding Scale" ticket beside $17 ones is not a free
// way in: it asks what you can pay. Its 0 is no price.
const PAY_WHAT_YOU_CAN = /donat|sliding|pay what/i;
// Offer names are mostly ticket labels ("Day of Show", an event title); one is price text only when
// it states a price.
const STATES_PRICE = /\$\s?\d|\bfree\b/i;

function offerPrices(o: Obj): number[] {
  const ns = [toNumber(o['price']), toNumber(o['lowPrice']), toNumber(o['highPrice'])].filter((n): n is number => n !== null);
  return ns.every((n) => n === 0) && PAY_WHAT_YOU_CAN.test(s(o['name']) ?? '') ? [] : ns;
}

function offerText(o: Obj): string | null {
  const name = s(o['name']);
  return s(o['description']) ?? (name !== null && STATES_PRICE.test(name) ? name : null);
}

// Cinemas give screenings a running time ("duration": "PT1H45M") instead of an endDate.
function endAfter(start: UpstreamTime, duration: string | null): UpstreamTime | null {
  if (duration === null || start.dateOnly) return null;
  const d = Duration.fromISO(duration.trim());
  return d.isValid && d.toMillis() > 0 ? { at: start.at.plus(d), dateOnly: false } : null;
}

function toRaw(e: Obj, pageDate: DateTime | null): RawEvent | null {
  // Without a startDate, a day the name states ("Sat, Nov 29") is the Nov 29 nearest the item's or page's date.
  const start = parseUpstreamTime(s(e['startDate'])) ?? titleDate(s(e['name']), referenceInstant(s(e['datePublished']) ?? s(e['dateModified'])) ?? pageDate);
  if (!start) return null;
  const loc = place(e['location']);
  const offers = arr(e['offers']).filter(isObj);
  const prices = offers.flatMap(offerPrices);
  const org = arr(e['organizer']).find(isObj);
  const image =
    arr(e['image'])
      .map((i) => (isObj(i) ? s(i['url']) : s(i)))
      .find(Boolean) ?? null;
  const audience = arr(e['audience']).filter(isObj);
  const ageText =
    audience
      .map((a) => {
        const lo = toNumber(a['suggestedMinAge']);
        const hi = toNumber(a['suggestedMaxAge']);
        return lo !== null || hi !== null ? `ages ${lo ?? 0}-${hi ?? 18}` : s(a['audienceType']);
      })
      .find(Boolean) ?? s(e['typicalAgeRange']);
  const status = s(e['eventStatus']) ?? (isObj(e['eventStatus']) ? s(e['eventStatus']['@id']) : null) ?? '';
  return {
    ...emptyRaw(),
    uid: s(e['@id']) ?? s(e['identifier']) ?? s(e['url']),
    title: s(e['name']) ?? '',
    description: s(e['description']),
    summary: s(e['disambiguatingDescription']),
    start,
    end: parseUpstreamTime(s(e['endDate'])) ?? endAfter(start, s(e['duration'])),
    location: loc.text,
    lat: loc.lat,
    lng: loc.lng,
    categories: [...arr(e['keywords']).flatMap((k) => String(k).split(',')), ...arr(e['about']).map((a) => (isObj(a) ? s(a['name']) : s(a)) ?? '')]
      .map((k) => k.trim())
      .filter((k) => k !== ''),
    schemaTypes: types(e),
    url: s(e['url']),
    ticketUrl: offers.map((o) => s(o['url'])).find(Boolean) ?? null,
    imageUrl: image,
    organizerName: org ? s(org['name']) : null,
    organizerUrl: org ? s(org['url']) : null,
    priceText: offers.map(offerText).find(Boolean) ?? null,
    priceMin: prices.length ? Math.min(...prices) : null,
    priceMax: prices.length ? Math.max(...prices) : null,
    isFree: flag(e['isAccessibleForFree']),
    ages: ageText ?? null,
    cancelled: /EventCancelled$/.test(status),
  };
}

export function parseJsonLd(input: string, _opts: ParseOptions): ParseOutput {
  if (!/<(?:html|head|body|script|!doctype)/i.test(input.slice(0, 8192))) throw new FeedFormatError('not an HTML page');
  const doc = parseDocument(input);
  const scripts = findAll((el) => el.name === 'script' && (el.attribs['type'] ?? '').toLowerCase().trim() === 'application/ld+json', doc.children);
  const found: Obj[] = [];
  let broken = 0;
  for (const el of scripts) {
    try {
      collectEvents(JSON.parse(textContent(el)), found);
    } catch {
      broken++;
    }
  }
  if (found.length === 0 && broken > 0) throw new FeedFormatError(`no readable JSON-LD (${broken} block(s) failed to parse)`);
  const meta = findAll(
    (el) => el.name === 'meta' && /^(?:article:(?:published|modified)_time|og:updated_time|date)$/i.test(el.attribs['property'] ?? el.attribs['name'] ?? ''),
    doc.children,
  );
  const pageDate = meta.map((el) => referenceInstant(el.attribs['content'])).find((d) => d !== null) ?? null;
  const events: RawEvent[] = [];
  let noStart = 0;
  for (const e of found) {
    const r = toRaw(e, pageDate);
    if (r) events.push(r);
    else noStart++;
  }
  return { events, noStart };
}
