// RSS 2.0 / Atom / RSS 1.0 via @extractus/feed-extractor (fast-xml-parser underneath). Event times
// come from the RSS event module (ev:startdate/ev:enddate, also xCal-style x:dtstart), else from a
// calendar plugin's own namespace (WordPress event_listing:start_date), else from Trumba's item
// text, else from a day its title states ("Sat, Nov 29"). pubDate is when the item was posted, not
// when the event happens: it only dates such a title; an item with no event time is skipped.
import { extractFromXml } from '@extractus/feed-extractor';
import { DateTime } from 'luxon';
import { parseUpstreamTime } from '../normalize/times.ts';
import { plainText } from '../normalize/text.ts';
import { atClock, parseClockRange } from './clock.ts';
import { referenceInstant, titleDate } from './title-date.ts';
import { type RawEvent, type UpstreamTime } from '../types.ts';
import { emptyRaw, FeedFormatError, toNumber, type ParseOptions, type ParseOutput, type SkippedItem } from './types.ts';
import { LA } from '../../core/zone.ts';

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

// Namespaced elements of plugins that do not use the event module, by local name.
const START_NAMES: ReadonlySet<string> = new Set(['start_date', 'startdate', 'event_start_date', 'dtstart']);
const END_NAMES: ReadonlySet<string> = new Set(['end_date', 'enddate', 'event_end_date', 'dtend']);
const LOCATION_NAMES: ReadonlySet<string> = new Set(['location', 'venue', 'event_location']);
const PRICE_NAMES: ReadonlySet<string> = new Set(['ticket_price', 'price', 'cost']);

/** First namespaced element (prefix:local) whose local name is listed; "-" is a blank form field. */
function localField(e: Node, names: ReadonlySet<string>): string | null {
  for (const [k, v] of Object.entries(e)) {
    const colon = k.indexOf(':');
    if (colon < 0 || !names.has(k.slice(colon + 1).toLowerCase())) continue;
    const s = str(v)?.trim();
    if (s && s !== '-') return s;
  }
  return null;
}

// A feed's build date and its items' pubDates come from clocks that may disagree by minutes.
const POSTED_SLACK_MS = 60 * 60 * 1000;

// Trumba RSS: the occurrence's day as a category, "2025/10/07 (Tue)", and in the description HTML
// the place, then a line "Tuesday, October 7, 2025, 6 – 8:30pm" (or "Friday, October 10, 3pm –
// Sunday, October 12, 2025, 1:30pm", or "Ongoing through Monday, December 24, 2029").
const TRUMBA_DAY = /^(\d{4})\/(\d{2})\/(\d{2}) \([A-Z][a-z]{2}\)$/;
const WEEKDAY = /^(?:mon|tues|wednes|thurs|fri|satur|sun)day$/i;
const ONGOING = /^ongoing through /i;

interface When {
  readonly day: DateTime;
  readonly time: string | null;
}

/** "[Weekday, ]Month D[, YYYY][, time]"; a missing year is `year`'s. */
function when(text: string, year: number): When | null {
  const parts = text.split(',').map((p) => p.trim());
  if (WEEKDAY.test(parts[0] ?? '')) parts.shift();
  const [monthDay, maybeYear, ...rest] = parts;
  if (!monthDay) return null;
  const hasYear = /^\d{4}$/.test(maybeYear ?? '');
  const day = DateTime.fromFormat(`${monthDay} ${hasYear ? maybeYear : year}`, 'MMMM d yyyy', { zone: LA, locale: 'en-US' });
  if (!day.isValid) return null;
  const time = (hasYear ? rest : [maybeYear, ...rest]).filter((p) => p !== undefined).join(', ');
  return { day, time: time === '' ? null : time };
}

const at = (day: DateTime, time: string | null): UpstreamTime | null => {
  if (time === null) return { at: day, dateOnly: true };
  const clock = parseClockRange(time);
  return clock ? { at: atClock(day, clock.start), dateOnly: false } : null;
};

/** Start and end from a Trumba date line; null when the line is not one. */
function trumbaLine(line: string, day: DateTime): { start: UpstreamTime; end: UpstreamTime | null } | null {
  if (ONGOING.test(line)) {
    const last = when(line.replace(ONGOING, ''), day.year);
    return last && last.time === null ? { start: { at: day, dateOnly: true }, end: { at: last.day, dateOnly: true } } : null;
  }
  const [left, right, ...more] = line.split('–').map((p) => p.trim());
  if (!left || more.length) return null;
  const second = right === undefined ? null : when(right, day.year);
  const first = when(left, second?.day.year ?? day.year);
  if (!first) return null;
  if (right === undefined || !second) {
    // One day: "…, 2025, 11am – 5pm" (the range splits at the dash) or "…, 2025, 4:30pm".
    const time = right === undefined ? first.time : `${first.time ?? ''} – ${right}`;
    if (time === null) return { start: { at: first.day, dateOnly: true }, end: null };
    const clock = parseClockRange(time);
    if (!clock) return null;
    return {
      start: { at: atClock(first.day, clock.start), dateOnly: false },
      end: clock.end === null ? null : { at: atClock(first.day, clock.end), dateOnly: false },
    };
  }
  const start = at(first.day, first.time);
  const end = at(second.day, second.time);
  return start && end ? { start, end } : null;
}

/** Trumba's item text, or null. The date line is among the description's lines before its first blank one. */
function trumba(e: Node, dayCategory: string): { start: UpstreamTime; end: UpstreamTime | null; location: string | null } | null {
  const m = TRUMBA_DAY.exec(dayCategory);
  const day = m ? DateTime.fromObject({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) }, { zone: LA }) : null;
  if (!day?.isValid) return null;
  const lines: string[] = [];
  for (const segment of (str(e['description']) ?? '').split(/<br\s?\/?>/i)) {
    const line = plainText(segment)?.trim();
    if (!line) break;
    lines.push(line);
  }
  for (const [i, line] of lines.entries()) {
    const read = trumbaLine(line, day);
    if (read) return { ...read, location: lines.slice(0, i).join(', ') || null };
  }
  // The category's day is the occurrence even when its line does not read: an all-day event.
  return { start: { at: day, dateOnly: true }, end: null, location: null };
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
      getExtraFeedFields: (raw: Node) => ({ feedDate: str(raw['lastBuildDate']) ?? str(raw['pubDate']) ?? str(raw['dc:date']) ?? str(raw['updated']) }),
      // Text stays text: "000123" is a guid, not the number 123; "5.00" is a price as written.
      xmlParserOptions: { parseTagValue: false, parseAttributeValue: false },
    });
  } catch (err) {
    // feed-extractor recognizes Atom by its entries, so a valid Atom feed that is empty today is
    // "unrecognized"; it is an empty calendar, not a broken one.
    if (/<feed[\s>]/.test(head) && !/<entry[\s>]/i.test(input) && /unrecognized feed format/i.test((err as Error).message)) return { events: [], noStart: 0 };
    throw new FeedFormatError(`feed syntax error: ${(err as Error).message}`);
  }
  const entries = (feed.entries ?? []) as unknown as (Extra & { link?: string; title?: string; published?: string })[];
  // The feed's own date, for items that state their day only in the title and carry no date of their own.
  // rss-parser copies a feed's date element as it found it: an Atom <updated> with attributes is an object, not text.
  const feedDate = referenceInstant((feed as { feedDate?: string | null }).feedDate) ?? referenceInstant(str(feed.published));
  const events: RawEvent[] = [];
  const noStartItems: SkippedItem[] = [];
  for (const [position, entry] of entries.entries()) {
    const e = entry.raw;
    const categories = list(e['category'])
      .map((c) => str(c) ?? attr(c, 'term'))
      .filter((c): c is string => c !== null);
    let start = parseUpstreamTime(field(e, 'ev:startdate', 'event:startdate', 'x:dtstart', 'xcal:dtstart', 'startdate'));
    let end: UpstreamTime | null = null;
    let location: string | null = null;
    if (start) end = parseUpstreamTime(field(e, 'ev:enddate', 'event:enddate', 'x:dtend', 'xcal:dtend', 'enddate'));
    else if ((start = parseUpstreamTime(localField(e, START_NAMES)))) end = parseUpstreamTime(localField(e, END_NAMES));
    else {
      const dayCategory = categories.findIndex((c) => TRUMBA_DAY.test(c));
      const read = dayCategory >= 0 ? trumba(e, categories[dayCategory]!) : null;
      if (read) {
        // A date is not a category.
        categories.splice(dayCategory, 1);
        ({ start, end, location } = read);
      }
    }
    // pubDate is not the event's time, but it dates the item: "Sat, Nov 29" in its title is the Nov 29 nearest it.
    const posted = referenceInstant(str(e['pubDate']) ?? str(e['published']) ?? str(e['updated']) ?? str(e['dc:date']));
    start ??= titleDate(str(e['title']) ?? entry.title, posted ?? feedDate);
    // Nothing is posted after the feed was built: a pubDate later than the feed's own date is the
    // time the item is about (event listings that put the show's time there), not when it was posted.
    if (!start && posted && feedDate && posted.toMillis() > feedDate.toMillis() + POSTED_SLACK_MS) start = { at: posted.setZone(LA), dateOnly: false };
    if (!start) {
      noStartItems.push({ position, uid: str(e['guid']) ?? str(e['id']), title: str(e['title']) ?? entry.title ?? null });
      continue;
    }
    const enclosure = list(e['enclosure']).find((x) => /^image\//.test(attr(x, 'type') ?? ''));
    const media = list(e['media:content']).find((x) => (attr(x, 'medium') ?? 'image') === 'image' || /^image\//.test(attr(x, 'type') ?? ''));
    const point = field(e, 'georss:point')?.trim().split(/\s+/).map(toNumber);
    for (const t of list(e['ev:type'])) {
      const s = str(t);
      if (s)
        categories.push(
          ...s
            .split(/[,;]/)
            .map((c) => c.trim())
            .filter((c) => c !== ''),
        );
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
      end,
      location: field(e, 'ev:location', 'event:location', 'x:location', 'location') ?? location ?? localField(e, LOCATION_NAMES),
      lat: point?.[0] ?? toNumber(field(e, 'geo:lat')),
      lng: point?.[1] ?? toNumber(field(e, 'geo:long', 'geo:lng')),
      categories,
      url: entry.link ?? str(e['link']),
      ticketUrl: field(e, 'ev:registration', 'ev:ticketurl'),
      imageUrl: attr(enclosure, 'url') ?? attr(media, 'url'),
      organizerName: field(e, 'ev:organizer', 'event:organizer'),
      organizerUrl: field(e, 'ev:organizerurl'),
      priceText: field(e, 'ev:price', 'ev:cost') ?? localField(e, PRICE_NAMES),
      ages: field(e, 'ev:ages', 'ev:agerange'),
      cancelled: /^(?:cancel+ed|eventcancelled)$/i.test(field(e, 'ev:status') ?? ''),
    });
  }
  return { events, noStart: noStartItems.length, ...(noStartItems.length ? { noStartItems } : {}) };
}
