// HTML pages carrying schema.org Event JSON-LD. htmlparser2 finds the <script type="application/ld+json">
// blocks (a forgiving parser: real pages are rarely valid HTML); each block may hold one object, an
// array, or an @graph, and an Event may nest inside an ItemList.
import { parseDocument } from 'htmlparser2';
import { findAll, textContent } from 'domutils';
import { parseUpstreamTime } from '../normalize/times.ts';
import type { RawEvent } from '../types.ts';
import { emptyRaw, FeedFormatError, toNumber, type ParseOptions, type ParseOutput } from './types.ts';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const arr = (x: unknown): unknown[] => (x == null ? [] : Array.isArray(x) ? x : [x]);
const s = (x: unknown): string | null => (typeof x === 'string' && x.trim() !== '' ? x : typeof x === 'number' ? String(x) : null);

function types(o: Obj): string[] {
  return arr(o['@type']).map((t) => String(t).replace(/^https?:\/\/schema\.org\//, ''));
}

const EVENT_TYPES = new Set(['Event', 'ChildrensEvent', 'EducationEvent', 'Festival', 'LiteraryEvent', 'MusicEvent', 'TheaterEvent', 'ScreeningEvent', 'ExhibitionEvent', 'SocialEvent', 'SportsEvent', 'DanceEvent', 'ComedyEvent', 'VisualArtsEvent', 'FoodEvent']);

function collectEvents(node: unknown, out: Obj[], depth = 0): void {
  if (depth > 6) return;
  for (const item of arr(node)) {
    if (!isObj(item)) continue;
    if (types(item).some((t) => EVENT_TYPES.has(t))) out.push(item);
    for (const key of ['@graph', 'itemListElement', 'item', 'subEvent']) if (key in item) collectEvents(item[key], out, depth + 1);
  }
}

function place(loc: unknown): { text: string | null; lat: number | null; lng: number | null } {
  const p = arr(loc).find(isObj) ?? null;
  if (!p) return { text: s(arr(loc)[0]), lat: null, lng: null };
  const addr = p['address'];
  const a = isObj(addr)
    ? [addr['streetAddress'], addr['addressLocality'], [addr['addressRegion'], addr['postalCode']].filter(Boolean).join(' ')].map(s).filter(Boolean).join(', ')
    : s(addr);
  const geo = isObj(p['geo']) ? p['geo'] : {};
  return { text: [s(p['name']), a].filter(Boolean).join(', ') || null, lat: toNumber(geo['latitude']), lng: toNumber(geo['longitude']) };
}

/** schema.org Booleans arrive as true/false, "true"/"false", or the URLs https://schema.org/True|False. */
function flag(x: unknown): boolean | null {
  if (typeof x === 'boolean') return x;
  const v = typeof x === 'string' ? x.trim().replace(/^https?:\/\/schema\.org\//i, '').toLowerCase() : '';
  return v === 'true' ? true : v === 'false' ? false : null;
}

function toRaw(e: Obj): RawEvent | null {
  const start = parseUpstreamTime(s(e['startDate']));
  if (!start) return null;
  const loc = place(e['location']);
  const offers = arr(e['offers']).filter(isObj);
  const prices = offers.flatMap((o) => [toNumber(o['price']), toNumber(o['lowPrice']), toNumber(o['highPrice'])]).filter((n): n is number => n !== null);
  const org = arr(e['organizer']).find(isObj);
  const image = arr(e['image']).map((i) => (isObj(i) ? s(i['url']) : s(i))).find(Boolean) ?? null;
  const audience = arr(e['audience']).filter(isObj);
  const ageText =
    audience.map((a) => {
      const lo = toNumber(a['suggestedMinAge']);
      const hi = toNumber(a['suggestedMaxAge']);
      return lo !== null || hi !== null ? `ages ${lo ?? 0}-${hi ?? 18}` : s(a['audienceType']);
    }).find(Boolean) ?? s(e['typicalAgeRange']);
  const status = s(e['eventStatus']) ?? (isObj(e['eventStatus']) ? s(e['eventStatus']['@id']) : null) ?? '';
  return {
    ...emptyRaw(),
    uid: s(e['@id']) ?? s(e['identifier']) ?? s(e['url']),
    title: s(e['name']) ?? '',
    description: s(e['description']),
    summary: s(e['disambiguatingDescription']),
    start,
    end: parseUpstreamTime(s(e['endDate'])),
    location: loc.text,
    lat: loc.lat,
    lng: loc.lng,
    categories: [...arr(e['keywords']).flatMap((k) => String(k).split(',')), ...arr(e['about']).map((a) => (isObj(a) ? s(a['name']) : s(a)) ?? '')]
      .map((k) => k.trim())
      .filter((k) => k !== ''),
    url: s(e['url']),
    ticketUrl: offers.map((o) => s(o['url'])).find(Boolean) ?? null,
    imageUrl: image,
    organizerName: org ? s(org['name']) : null,
    organizerUrl: org ? s(org['url']) : null,
    priceText: offers.map((o) => s(o['description']) ?? s(o['name'])).find(Boolean) ?? null,
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
  const events: RawEvent[] = [];
  let noStart = 0;
  for (const e of found) {
    const r = toRaw(e);
    if (r) events.push(r);
    else noStart++;
  }
  return { events, noStart };
}
