// RSS 2.0 and JSON Feed 1.1 bodies, built with the `feed` package. One item per event: guid/id is
// the event id (never reused), link is event_url, the text is plain, categories and tags become
// categories/tags, the date is the event's start. Canceled events say so in the title and carry the
// "canceled" category. The JSON Feed carries each structured record under `_family_events`.
// Nothing here depends on the clock or the caller: the same page always gives the same bytes.
import { DateTime } from 'luxon';
import { Feed, type Item } from 'feed';
import { pageUrl } from './links.ts';
import type { EventRecord } from '../core/record.ts';
import type { FeedLinks, SearchTask } from './protocol.ts';

const TITLE = 'Family events in the San Francisco Bay Area';
const GENERATOR = 'Family Events API';
export const CANCELED_CATEGORY = 'canceled';

// XML 1.0 forbids these characters outright (escaping does not help): C0 controls but tab, LF and
// CR, and the non-characters U+FFFE/U+FFFF. Unpaired surrogates cannot be encoded in UTF-8 at all.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NOT_XML = /[\u0000-\u0008\v\f\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const xmlSafe = (s: string): string => s.replace(NOT_XML, '');

// xml-js, under the feed package, writes each kind of node its own way, and each is given what makes
// it come out right (checked by reading the XML back, test/query/feeds.test.ts):
// - CDATA (titles, descriptions): it splits the first "]]>" only (a string replace), so a second
//   would end the section early. Each one is marked with a NUL, which xmlSafe has removed from every
//   text, and the marks become section breaks in the finished XML.
// - Text (categories): it first turns "&amp;" into "&", then escapes, so a literal "&amp;" would read
//   back as "&"; escaping & beforehand (as the package does for its own texts) undoes that.
// - Attributes: it writes them as given but for " → &quot;; the package escapes the ones it makes,
//   so the ones we add (atom:link href, whose URL has an & once it has two parameters) come escaped.
const CDATA_BREAK = '\u0000';
const cdataSafe = (s: string): string => xmlSafe(s).replaceAll(']]>', `]]${CDATA_BREAK}>`);
const breakCdata = (xml: string): string => xml.replaceAll(CDATA_BREAK, ']]><![CDATA[');
const textSafe = (s: string): string => xmlSafe(s).replaceAll('&', '&amp;');
const XML_ATTR: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const attributes = (attrs: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(attrs).map(([k, value]) => [k, xmlSafe(value).replace(/[&<>]/g, (c) => XML_ATTR[c]!)]));

/** The page's figures a feed states besides its items. */
export interface FeedPage {
  readonly total: number;
  readonly limit: number;
  readonly offset: number;
  readonly nextOffset: number | null;
  readonly truncated: boolean;
}

const itemTitle = (r: EventRecord): string => (r.is_canceled ? `Canceled: ${r.title}` : r.title);

/**
 * "Sat, Nov 22, 2026, 10:00 AM – 11:30 AM · Main Library, Oakland": when and where, in Pacific time.
 * An all-day event has no clock to give: "Sat, Nov 22, 2026, All day", or its first and last days.
 */
function whenWhere(r: EventRecord): string {
  const start = DateTime.fromISO(r.start_datetime, { setZone: true });
  if (r.all_day) {
    const last = r.end_datetime === null ? start : DateTime.fromISO(r.end_datetime, { setZone: true });
    const day = (d: DateTime): string => d.toFormat('ccc, LLL d, yyyy');
    const when = last.hasSame(start, 'day') || last < start ? `${day(start)}, All day` : `${day(start)} – ${day(last)}, All day`;
    return `${when} · ${r.venue.name}, ${r.venue.city}`;
  }
  let when = start.toFormat('ccc, LLL d, yyyy, h:mm a');
  if (r.end_datetime) {
    const end = DateTime.fromISO(r.end_datetime, { setZone: true });
    when += end.hasSame(start, 'day') ? ` – ${end.toFormat('h:mm a')}` : ` – ${end.toFormat('ccc, LLL d, yyyy, h:mm a')}`;
  }
  return `${when} · ${r.venue.name}, ${r.venue.city}`;
}

/** The item's plain text: when and where, then the description (or the summary). */
export function itemText(r: EventRecord): string {
  const about = r.description ?? r.summary;
  return `${r.is_canceled ? 'CANCELED. ' : ''}${whenWhere(r)}${about ? `\n\n${about}` : ''}`;
}

const itemCategories = (r: EventRecord): string[] => [...new Set([...(r.is_canceled ? [CANCELED_CATEGORY] : []), ...r.categories, ...r.tags])];

/** The feed's URL at `offset` (left out at 0), its parameters sorted by name: one URL per page. */
export function feedUrl(links: FeedLinks, offset: number): string {
  return pageUrl(links.url, links.params, offset > 0 ? [['offset', String(offset)]] : []);
}

function newFeed(task: SearchTask, self: string, updated: string, kind: 'rss' | 'json'): Feed {
  return new Feed({
    title: TITLE,
    id: self,
    // Attribution: the channel links to the website (Community plan terms).
    link: task.webBaseUrl,
    description: `Family-friendly events matching this query. ${task.attribution.text}.`,
    updated: new Date(updated),
    generator: GENERATOR,
    language: 'en-us',
    copyright: task.attribution.text,
    feedLinks: kind === 'rss' ? { rss: self } : { json: self },
  });
}

/** How the item's texts are made safe: as CDATA (title, description) and as text nodes (categories). */
interface Safe {
  readonly cdata: (s: string) => string;
  readonly text: (s: string) => string;
}
const AS_IS: Safe = { cdata: (s) => s, text: (s) => s };
const FOR_XML: Safe = { cdata: cdataSafe, text: textSafe };

function item(r: EventRecord, safe: Safe): Item {
  return {
    title: safe.cdata(itemTitle(r)),
    id: r.id,
    guid: r.id,
    link: r.event_url,
    date: new Date(r.start_datetime),
    description: safe.cdata(itemText(r)),
    category: itemCategories(r).map((name) => ({ name: safe.text(name) })),
  };
}

export function rssBody(task: SearchTask, links: FeedLinks, records: readonly EventRecord[], page: FeedPage): Buffer {
  const self = feedUrl(links, page.offset);
  const feed = newFeed(task, self, links.updated, 'rss');
  for (const r of records) feed.addItem(item(r, FOR_XML));
  if (page.nextOffset !== null) {
    // RFC 5005 paging: the library writes only rel="self", so both links are given here.
    feed.addExtension({
      name: 'atom:link',
      objects: [
        { _attributes: attributes({ href: self, rel: 'self', type: 'application/rss+xml' }) },
        { _attributes: attributes({ href: feedUrl(links, page.nextOffset), rel: 'next', type: 'application/rss+xml' }) },
      ] as unknown as Record<string, unknown>,
    });
  }
  return Buffer.from(breakCdata(feed.rss2()));
}

interface JsonFeedItem {
  id: string;
  url?: string;
  title?: string;
  content_html?: string;
  tags?: string[];
}

/**
 * The library writes JSON Feed 1.0 with the text as content_html; this is 1.1 with the text as
 * content_text (it is plain text), the event's start as date_published (with its Pacific offset),
 * paging in next_url, and the records and page figures under `_family_events`.
 */
export function jsonFeedBody(task: SearchTask, links: FeedLinks, records: readonly EventRecord[], page: FeedPage): Buffer {
  const feed = newFeed(task, feedUrl(links, page.offset), links.updated, 'json');
  for (const r of records) feed.addItem(item(r, AS_IS));
  const doc = JSON.parse(feed.json1()) as { title: string; home_page_url?: string; feed_url?: string; description?: string; items: JsonFeedItem[] };
  const out = {
    version: 'https://jsonfeed.org/version/1.1',
    title: doc.title,
    home_page_url: doc.home_page_url,
    feed_url: doc.feed_url,
    ...(page.nextOffset !== null ? { next_url: feedUrl(links, page.nextOffset) } : {}),
    description: doc.description,
    authors: [{ name: GENERATOR, url: task.webBaseUrl }],
    language: 'en-US',
    _family_events: {
      about: 'Extension: the page figures as in the JSON envelope of /v1/events; each item carries its full event record.',
      total: page.total,
      limit: page.limit,
      offset: page.offset,
      next_offset: page.nextOffset,
      truncated: page.truncated,
      attribution: task.attribution,
    },
    items: doc.items.map((it, i) => {
      const r = records[i]!;
      return {
        id: it.id,
        url: it.url,
        title: it.title,
        content_text: it.content_html,
        ...(r.summary ? { summary: r.summary } : {}),
        ...(r.image_url ? { image: r.image_url } : {}),
        date_published: r.start_datetime,
        tags: it.tags ?? [],
        _family_events: r,
      };
    }),
  };
  return Buffer.from(JSON.stringify(out));
}
