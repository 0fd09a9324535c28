// Writes the sample model out as real upstream documents, each format the way its publishers
// write it: iCal (ical.js), RSS 2.0 with the RSS event module (fast-xml-parser's builder),
// HTML pages with schema.org JSON-LD, and CSV spreadsheet exports (fast-csv). The build then reads
// them back through the same fetch and parse path as any other source.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeToString } from 'fast-csv';
import { XMLBuilder } from 'fast-xml-parser';
import ICAL from 'ical.js';
import type { DateTime } from 'luxon';
import type { Gazetteer, KnownVenue } from '../gazetteer.ts';
import type { ParseWindow } from '../parse/types.ts';
import type { Source } from '../registry.ts';
import { buildModels, hash, siteRoot, type Occurrence, type Series, type SourceModel } from './model.ts';
import type { Program } from './programs.ts';

export const SAMPLE_SCHEME = 'sample://';
const EXT = { ical: 'ics', rss: 'xml', jsonld: 'html', csv: 'csv' } as const;

const address = (v: KnownVenue): string => `${v.street}, ${v.city}, CA ${v.zip}`;
/** Calendars spell places many ways; all of these must resolve to the same venue. */
function locationText(v: KnownVenue, h: number): string {
  switch (h % 4) {
    case 0:
      return `${v.name}, ${address(v)}`;
    case 1:
      return `${v.aliases[0] ?? v.name} - ${v.street}, ${v.city}, CA ${v.zip}`;
    case 2:
      return v.name;
    default:
      return address(v);
  }
}

function plainOf(html: string): string {
  return html
    .replace(/<[^>]{0,200}>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

// ---------- iCalendar ----------

function icalTime(d: DateTime, isDate = false): InstanceType<typeof ICAL.Time> {
  return ICAL.Time.fromData({ year: d.year, month: d.month, day: d.day, hour: isDate ? 0 : d.hour, minute: isDate ? 0 : d.minute, second: 0, isDate });
}

function addTime(c: InstanceType<typeof ICAL.Component>, name: string, d: DateTime, opts: { isDate?: boolean; utc?: boolean } = {}): void {
  const prop = new ICAL.Property(name);
  if (opts.utc) {
    const u = d.toUTC();
    const t = ICAL.Time.fromData({ year: u.year, month: u.month, day: u.day, hour: u.hour, minute: u.minute, second: 0 });
    t.zone = ICAL.Timezone.utcTimezone;
    prop.setValue(t);
  } else {
    if (!opts.isDate) prop.setParameter('tzid', 'America/Los_Angeles');
    prop.setValue(icalTime(d, opts.isDate ?? false));
  }
  c.addProperty(prop);
}

function commonProps(c: InstanceType<typeof ICAL.Component>, p: Program, title: string, venue: KnownVenue, h: number): void {
  c.addPropertyWithValue('summary', title);
  // Some CMSs put HTML straight into DESCRIPTION; better ones put text there and HTML in X-ALT-DESC.
  if (h % 2 === 0) c.addPropertyWithValue('description', p.html);
  else {
    c.addPropertyWithValue('description', plainOf(p.html));
    const alt = new ICAL.Property('x-alt-desc');
    alt.setParameter('fmttype', 'text/html');
    alt.setValue(p.html);
    c.addProperty(alt);
  }
  c.addPropertyWithValue('location', locationText(venue, h));
  const cats = new ICAL.Property('categories');
  cats.setValues([...p.categories]);
  c.addProperty(cats);
  if (h % 3 === 0) c.addPropertyWithValue('geo', [venue.lat, venue.lng]);
  if (p.price) c.addPropertyWithValue('x-price', p.price);
}

function renderICal(m: SourceModel, stamp: DateTime): string {
  const cal = new ICAL.Component(['vcalendar', [], []]);
  cal.addPropertyWithValue('prodid', `-//${m.source.organizer.name}//Events Calendar//EN`);
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('x-wr-calname', `${m.source.organizer.name} Events`);
  cal.addPropertyWithValue('x-wr-timezone', 'America/Los_Angeles');
  const dtstamp = (c: InstanceType<typeof ICAL.Component>): void => addTime(c, 'dtstamp', stamp, { utc: true });
  for (const s of m.series) addSeries(cal, s, dtstamp);
  for (const o of m.singles) {
    const h = hash(o.uid);
    const ve = new ICAL.Component('vevent');
    ve.addPropertyWithValue('uid', o.uid);
    dtstamp(ve);
    if (o.allDay) {
      addTime(ve, 'dtstart', o.start, { isDate: true });
      addTime(ve, 'dtend', o.start.plus({ days: 1 + (h % 2) }), { isDate: true });
    } else {
      addTime(ve, 'dtstart', o.start, { utc: h % 5 === 0 });
      addTime(ve, 'dtend', o.end, { utc: h % 5 === 0 });
    }
    commonProps(ve, o.program, o.title, o.venue, h);
    ve.addPropertyWithValue('url', o.url);
    if (o.cancelled) ve.addPropertyWithValue('status', 'CANCELLED');
    cal.addSubcomponent(ve);
  }
  return cal.toString();
}

function addSeries(cal: InstanceType<typeof ICAL.Component>, s: Series, dtstamp: (c: InstanceType<typeof ICAL.Component>) => void): void {
  const h = hash(s.uid);
  const master = new ICAL.Component('vevent');
  master.addPropertyWithValue('uid', s.uid);
  dtstamp(master);
  addTime(master, 'dtstart', s.dtstart);
  addTime(master, 'dtend', s.dtstart.plus({ minutes: s.program.minutes }));
  master.addPropertyWithValue('rrule', ICAL.Recur.fromString(`FREQ=WEEKLY;BYDAY=${['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'][s.dtstart.weekday - 1]}`));
  for (const x of s.exdates) addTime(master, 'exdate', x);
  commonProps(master, s.program, s.program.title, s.venue, h);
  master.addPropertyWithValue('url', s.url);
  cal.addSubcomponent(master);
  const override = (rid: DateTime, start: DateTime, cancelled: boolean): void => {
    const ve = new ICAL.Component('vevent');
    ve.addPropertyWithValue('uid', s.uid);
    dtstamp(ve);
    addTime(ve, 'recurrence-id', rid);
    addTime(ve, 'dtstart', start);
    addTime(ve, 'dtend', start.plus({ minutes: s.program.minutes }));
    commonProps(ve, s.program, s.program.title, s.venue, h);
    if (cancelled) ve.addPropertyWithValue('status', 'CANCELLED');
    cal.addSubcomponent(ve);
  };
  for (const mv of s.moved) override(mv.rid, mv.start, false);
  for (const c of s.cancelled) override(c, c, true);
}

// ---------- RSS 2.0 + event module ----------

function renderRss(m: SourceModel, stamp: DateTime): string {
  const site = m.source.organizer.url;
  const items = m.singles.map((o) => {
    const h = hash(o.uid);
    const isAgg = m.kind === 'aggregator';
    const item: Record<string, unknown> = {
      title: o.cancelled && h % 2 === 0 ? `Canceled: ${o.title}` : o.title,
      link: o.url,
      guid: { '#text': o.uid, '@_isPermaLink': 'false' },
      // Some CMSs double-encode their HTML; the normalizer must undo both layers.
      description: { __cdata: h % 7 === 0 ? o.program.html.replaceAll('&amp;', '&amp;amp;') : o.program.html },
      pubDate: stamp.minus({ days: 3 }).toRFC2822(),
      category: [...o.program.categories],
      'ev:startdate': o.allDay ? o.start.toISODate() : o.start.toISO({ suppressMilliseconds: true }),
      'ev:enddate': o.allDay ? o.start.toISODate() : o.end.toISO({ suppressMilliseconds: true }),
      'ev:location': locationText(o.venue, h),
      'ev:organizer': isAgg ? o.organizer.name : m.source.organizer.name,
    };
    if (isAgg) item['ev:organizerurl'] = `${siteRoot(o.organizer.url)}/events/feed.rss`;
    if (o.program.agesField) item['ev:ages'] = o.program.agesField;
    if (o.program.price) item['ev:price'] = o.program.price;
    if (o.cancelled && h % 2 === 1) item['ev:status'] = 'cancelled';
    if (o.ticketUrl) item['ev:registration'] = o.ticketUrl;
    if (h % 3 === 0) item['georss:point'] = `${o.venue.lat} ${o.venue.lng}`;
    if (o.imageUrl) item['enclosure'] = { '@_url': o.imageUrl, '@_type': 'image/jpeg', '@_length': '0' };
    return item;
  });
  const doc = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    rss: {
      '@_version': '2.0',
      '@_xmlns:ev': 'http://purl.org/rss/1.0/modules/event/',
      '@_xmlns:georss': 'http://www.georss.org/georss',
      '@_xmlns:content': 'http://purl.org/rss/1.0/modules/content/',
      channel: {
        title: `${m.source.organizer.name} — Events`,
        link: site,
        description: `Upcoming events at ${m.source.organizer.name}`,
        lastBuildDate: stamp.toRFC2822(),
        item: items,
      },
    },
  };
  return new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', cdataPropName: '__cdata', format: true, suppressEmptyNode: true }).build(doc);
}

// ---------- HTML + schema.org JSON-LD ----------

function ldEvent(o: Occurrence): Record<string, unknown> {
  const h = hash(o.uid);
  const ages = /^(\d{1,2})-(\d{1,2})$/.exec(o.program.agesField ?? '');
  const free = o.program.price === undefined || /^free$/i.test(o.program.price);
  const amount = /\$(\d+)/.exec(o.program.price ?? '')?.[1];
  const ev: Record<string, unknown> = {
    '@type': h % 2 === 0 ? 'Event' : 'ChildrensEvent',
    '@id': `${o.url}#event`,
    name: o.title,
    description: o.program.html,
    startDate: o.allDay ? o.start.toISODate() : o.start.toISO({ suppressMilliseconds: true }),
    endDate: o.allDay ? o.start.plus({ days: h % 2 }).toISODate() : o.end.toISO({ suppressMilliseconds: true }),
    eventStatus: o.cancelled ? 'https://schema.org/EventCancelled' : 'https://schema.org/EventScheduled',
    eventAttendanceMode: 'https://schema.org/OfflineEventAttendanceMode',
    location: {
      '@type': 'Place',
      name: h % 5 === 0 ? (o.venue.aliases[0] ?? o.venue.name) : o.venue.name,
      address: {
        '@type': 'PostalAddress',
        streetAddress: o.venue.street,
        addressLocality: o.venue.city,
        addressRegion: 'CA',
        postalCode: o.venue.zip,
        addressCountry: 'US',
      },
      ...(h % 3 === 0 ? { geo: { '@type': 'GeoCoordinates', latitude: o.venue.lat, longitude: o.venue.lng } } : {}),
    },
    organizer: { '@type': 'Organization', name: o.organizer.name, url: o.organizer.url },
    keywords: o.program.categories.join(', '),
    url: o.url,
    isAccessibleForFree: free,
  };
  if (o.imageUrl) ev['image'] = [o.imageUrl];
  if (ages) ev['audience'] = { '@type': 'PeopleAudience', suggestedMinAge: Number(ages[1]), suggestedMaxAge: Number(ages[2]) };
  if (o.program.price || o.ticketUrl) {
    ev['offers'] = {
      '@type': 'Offer',
      priceCurrency: 'USD',
      ...(amount ? { price: amount } : { price: '0' }),
      ...(o.program.price ? { description: o.program.price } : {}),
      ...(o.ticketUrl ? { url: o.ticketUrl } : {}),
    };
  }
  return ev;
}

const jsonForScript = (x: unknown): string => JSON.stringify(x).replaceAll('</', '<\\/');

function renderJsonLd(m: SourceModel): string {
  const name = m.source.organizer.name;
  const events = m.singles.map(ldEvent);
  // Half the sites publish one @graph; the others one <script> per event card.
  const scripts =
    hash(m.source.id) % 2 === 0
      ? `<script type="application/ld+json">${jsonForScript({ '@context': 'https://schema.org', '@graph': events })}</script>`
      : events.map((e) => `<script type="application/ld+json">${jsonForScript({ '@context': 'https://schema.org', ...e })}</script>`).join('\n');
  const cards = m.singles
    .slice(0, 50)
    .map(
      (o) =>
        `<article class="event-card"><h2>${o.title.replaceAll('&', '&amp;').replaceAll('<', '&lt;')}</h2><p>${o.start.toFormat('ccc, LLL d · h:mm a')}</p></article>`,
    )
    .join('\n');
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Events | ${name}</title>\n${scripts}\n</head>\n<body><h1>Upcoming events</h1>\n${cards}\n</body></html>\n`;
}

// ---------- CSV export ----------

async function renderCsv(m: SourceModel): Promise<string> {
  const spreadsheetStyle = hash(m.source.id) % 2 === 0;
  const rows = m.singles.map((o) => {
    const h = hash(o.uid);
    const title = o.cancelled ? `CANCELLED - ${o.title}` : o.title;
    if (spreadsheetStyle) {
      return {
        'Event ID': o.uid,
        'Event Name': title,
        Date: o.start.toFormat('M/d/yyyy'),
        Time: o.allDay ? '' : `${o.start.toFormat('h:mm a')} - ${o.end.toFormat('h:mm a')}`,
        Location: h % 2 === 0 ? o.venue.name : (o.venue.aliases[0] ?? o.venue.name),
        Address: o.venue.street,
        City: o.venue.city,
        Category: o.program.categories.join('; '),
        Ages: o.program.agesField ?? '',
        Cost: o.program.price ?? '',
        Description: h % 3 === 0 ? o.program.html : plainOf(o.program.html),
        Organizer: m.kind === 'aggregator' ? o.organizer.name : '',
        Registration: o.ticketUrl ?? '',
        Status: o.cancelled && h % 2 === 0 ? 'Cancelled' : '',
      };
    }
    return {
      id: o.uid,
      title,
      start: o.allDay ? o.start.toISODate() : o.start.toFormat('yyyy-MM-dd HH:mm'),
      end: o.allDay ? '' : o.end.toFormat('yyyy-MM-dd HH:mm'),
      venue: locationText(o.venue, h),
      lat: h % 2 === 0 ? String(o.venue.lat) : '',
      lng: h % 2 === 0 ? String(o.venue.lng) : '',
      categories: o.program.categories.join(','),
      ages: o.program.agesField ?? '',
      price: o.program.price ?? '',
      description: o.program.html,
      organizer: m.kind === 'aggregator' ? o.organizer.name : '',
      url: o.url,
      image: o.imageUrl ?? '',
    };
  });
  return writeToString(rows, { headers: true });
}

export async function renderFeed(m: SourceModel, stamp: DateTime): Promise<string> {
  switch (m.source.format) {
    case 'ical':
      return renderICal(m, stamp);
    case 'rss':
      return renderRss(m, stamp);
    case 'jsonld':
      return renderJsonLd(m);
    case 'csv':
      return renderCsv(m);
  }
}

export interface RenderOptions {
  readonly dataDir: string;
  readonly sources: readonly Source[];
  readonly now: Date;
  readonly window: ParseWindow;
  readonly gazetteer: Gazetteer;
  /** Defaults to DATA_DIR/sample-feeds/<build date>. */
  readonly outDir?: string;
}

/** Renders every sample:// source's feed file; returns source id → file path. */
export async function renderSampleFeeds(opts: RenderOptions): Promise<Map<string, string>> {
  const sample = opts.sources.filter((s) => s.url.startsWith(SAMPLE_SCHEME));
  const stamp = opts.window.start.plus({ days: 14 });
  const dir = opts.outDir ?? path.join(opts.dataDir, 'sample-feeds', stamp.toISODate()!);
  await mkdir(dir, { recursive: true });
  const files = new Map<string, string>();
  for (const m of buildModels(opts.gazetteer, sample, opts.window)) {
    const file = path.join(dir, `${m.source.id}.${EXT[m.source.format]}`);
    // Per process: a snapshot build run beside another (by hand, or a node without the ledger's lock) renders the same files.
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, await renderFeed(m, stamp));
    await rename(tmp, file);
    files.set(m.source.id, file);
  }
  return files;
}
