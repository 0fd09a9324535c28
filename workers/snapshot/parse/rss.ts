// RSS 2.0 / Atom / RSS 1.0 via @extractus/feed-extractor (fast-xml-parser underneath). Event times
// come from the RSS event module (ev:startdate/ev:enddate, also xCal-style x:dtstart) — pubDate is
// when the item was posted, not when the event happens, so an item without event times is skipped.
import { extractFromXml } from '@extractus/feed-extractor';
import { parseUpstreamTime } from '../normalize/times.ts';
import type { RawEvent } from '../types.ts';
import { emptyRaw, FeedFormatError, toNumber, type ParseOptions, type ParseOutput } from './types.ts';

type Node = Record<string, unknown>;

/** fast-xml-parser gives a string, a number, {'#text': …}, or an array of those. */
function str(x: unknown): string | null {
  if (x == null) return null;
  if (Array.isArray(x)) return str(x[0]);
  if (typeof x === 'string') return x.trim() === '' ? null : x;
  if (typeof x === 'number' || typeof x === 'boolean') return String(x);
  if (typeof x === 'object') return str((x as Node)['#text']);
  return null;
}
const list = (x: unknown): unknown[] => (x == null ? [] : Array.isArray(x) ? x : [x]);
const attr = (x: unknown, name: string): string | null => (x && typeof x === 'object' && !Array.isArray(x) ? str((x as Node)[`@_${name}`]) : null);

/** First present field among namespaced spellings feeds use in the wild. */
function field(e: Node, ...names: string[]): string | null {
  for (const n of names) {
    const v = str(e[n]);
    if (v) return v;
  }
  return null;
}

type Extra = Record<string, unknown> & { raw: Node };

export function parseRss(input: string, opts: ParseOptions): ParseOutput {
  const head = input.slice(0, 2048).toLowerCase();
  if (!head.includes('<rss') && !head.includes('<feed') && !head.includes('<rdf')) {
    throw new FeedFormatError('not an RSS or Atom document (no <rss>, <feed> or <rdf:RDF> root)');
  }
  let feed: ReturnType<typeof extractFromXml>;
  try {
    feed = extractFromXml(input, {
      normalization: true,
      useISODateFormat: false,
      descriptionMaxLen: 0,
      ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      getExtraEntryFields: (raw: Node): Extra => ({ raw }),
      // Text stays text: "000123" is a guid, not the number 123; "5.00" is a price as written.
      xmlParserOptions: { parseTagValue: false, parseAttributeValue: false },
    });
  } catch (err) {
    // feed-extractor recognizes Atom by its entries, so a valid Atom feed that is empty today is
    // "unrecognized"; it is an empty calendar, not a broken one.
    if (/<feed[\s>]/.test(head) && !/<entry[\s>]/i.test(input) && /unrecognized feed format/i.test((err as Error).message)) return { events: [], noStart: 0 };
    throw new FeedFormatError(`feed syntax error: ${(err as Error).message}`);
  }
  const entries = (feed.entries ?? []) as unknown as (Extra & { link?: string; title?: string })[];
  const events: RawEvent[] = [];
  let noStart = 0;
  for (const entry of entries) {
    const e = entry.raw;
    const start = parseUpstreamTime(field(e, 'ev:startdate', 'event:startdate', 'x:dtstart', 'xcal:dtstart', 'startdate'));
    if (!start) {
      noStart++;
      continue;
    }
    const enclosure = list(e['enclosure']).find((x) => /^image\//.test(attr(x, 'type') ?? ''));
    const media = list(e['media:content']).find((x) => (attr(x, 'medium') ?? 'image') === 'image' || /^image\//.test(attr(x, 'type') ?? ''));
    const point = field(e, 'georss:point')?.trim().split(/\s+/).map(toNumber);
    const categories = list(e['category']).map((c) => str(c) ?? attr(c, 'term')).filter((c): c is string => c !== null);
    for (const t of list(e['ev:type'])) {
      const s = str(t);
      if (s) categories.push(...s.split(/[,;]/).map((c) => c.trim()).filter((c) => c !== ''));
    }
    events.push({
      ...emptyRaw(),
      // The publisher's own id only (RSS guid, Atom id). feed-extractor's synthetic id for a guid-less
      // item hashes the pubDate, which changes on every edit; without one the normalizer falls
      // back to the item's link, which does not.
      uid: str(e['guid']) ?? str(e['id']),
      title: str(e['title']) ?? entry.title ?? '',
      description: field(e, 'content:encoded', 'content', 'description', 'summary'),
      summary: field(e, 'ev:summary'),
      start,
      end: parseUpstreamTime(field(e, 'ev:enddate', 'event:enddate', 'x:dtend', 'xcal:dtend', 'enddate')),
      location: field(e, 'ev:location', 'event:location', 'x:location', 'location'),
      lat: point?.[0] ?? toNumber(field(e, 'geo:lat')),
      lng: point?.[1] ?? toNumber(field(e, 'geo:long', 'geo:lng')),
      categories,
      url: entry.link ?? str(e['link']),
      ticketUrl: field(e, 'ev:registration', 'ev:ticketurl'),
      imageUrl: attr(enclosure, 'url') ?? attr(media, 'url'),
      organizerName: field(e, 'ev:organizer', 'event:organizer'),
      organizerUrl: field(e, 'ev:organizerurl'),
      priceText: field(e, 'ev:price', 'ev:cost'),
      ages: field(e, 'ev:ages', 'ev:agerange'),
      cancelled: /^(?:cancel+ed|eventcancelled)$/i.test(field(e, 'ev:status') ?? ''),
    });
  }
  return { events, noStart };
}
