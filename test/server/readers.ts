// Feeds as their readers take them, by code we did not write: saxes, a strict XML 1.0 parser (a
// raw & in an attribute, an unbound prefix or a forbidden character is an error, where the lenient
// parser paired with our serializer let them through); rss-parser, a widely used feed reader; and
// xmllint (libxml2) where it is installed. JSON Feed against the 1.1 spec's required members,
// written here from the spec rather than taken from our own schema. helpers.get() runs these on
// every feed a test fetches.
import ICAL from 'ical.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import Parser from 'rss-parser';
import { SaxesParser } from 'saxes';

/** What the strict parse saw: elements by name, and every URL the document carries. */
export interface XmlFacts {
  readonly counts: ReadonlyMap<string, number>;
  readonly urls: readonly { readonly where: string; readonly url: string }[];
}

/** Attributes and elements whose value is a URL in RSS 2.0 and its Atom/enclosure extensions. */
const URL_ATTRIBUTES = new Set(['href', 'url', 'src']);
const URL_ELEMENTS = new Set(['link', 'docs', 'comments', 'url']);

/** Parses strictly (namespaces on); throws on the first well-formedness error. */
export function strictXml(text: string): XmlFacts {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const counts = new Map<string, number>();
  const urls: { where: string; url: string }[] = [];
  const open: string[] = [];
  let textOf = '';
  let error: Error | null = null;
  parser.on('error', (e) => {
    error ??= e;
  });
  parser.on('opentag', (node) => {
    counts.set(node.name, (counts.get(node.name) ?? 0) + 1);
    for (const [name, attr] of Object.entries(node.attributes)) {
      if (URL_ATTRIBUTES.has(attr.local)) urls.push({ where: `${node.name}@${name}`, url: attr.value });
    }
    open.push(node.name);
    textOf = '';
  });
  parser.on('text', (t) => (textOf += t));
  parser.on('cdata', (t) => (textOf += t));
  parser.on('closetag', (node) => {
    // Plain <link> elements only: atom:link carries its URL in href.
    if (URL_ELEMENTS.has(node.name) && node.prefix === '') urls.push({ where: node.name, url: textOf.trim() });
    open.pop();
    textOf = '';
  });
  parser.write(text).close();
  if (error) throw error;
  return { counts, urls };
}

/** xmllint's verdict, or null where libxml2-utils is not installed. */
export function xmllint(text: string): { ok: boolean; stderr: string } | null {
  const r = spawnSync('xmllint', ['--noout', '--nonet', '-'], { input: text, encoding: 'utf8' });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  return { ok: r.status === 0, stderr: r.stderr };
}

export const hasXmllint = xmllint('<a/>') !== null;

const reader = new Parser();

export interface ReadItem {
  readonly title?: string;
  readonly link?: string;
  readonly guid?: string;
  readonly isoDate?: string;
  readonly categories?: string[];
}

/**
 * An RSS body as strict XML and as a feed reader sees it. Every URL in it must be absolute http(s),
 * and the reader must find every item with a title, a link and a guid.
 */
export async function checkRss(text: string, what: string): Promise<{ facts: XmlFacts; items: readonly ReadItem[] }> {
  let facts: XmlFacts;
  try {
    facts = strictXml(text);
  } catch (err) {
    assert.fail(`${what}: not well-formed XML: ${(err as Error).message}`);
  }
  assert.equal(facts.counts.get('rss'), 1, `${what}: one rss element`);
  assert.equal(facts.counts.get('channel'), 1, `${what}: one channel`);
  for (const { where, url } of facts.urls) {
    assert.ok(URL.canParse(url), `${what}: ${where} is not a URL: ${url}`);
    assert.match(new URL(url).protocol, /^https?:$/, `${what}: ${where} is not http(s): ${url}`);
    // A link carries a key only when the request put that same key in its URL (a reader given only the URL must follow it).
    const key = new URL(url).searchParams.get('api_key');
    if (key !== null) assert.ok(what.includes(`api_key=${key}`), `${what}: ${where} carries a key the request did not`);
  }
  const feed = await reader.parseString(text);
  assert.equal(feed.items.length, facts.counts.get('item') ?? 0, `${what}: rss-parser read another number of items`);
  for (const it of feed.items) {
    assert.ok(it.title, `${what}: rss-parser found an item without a title`);
    assert.ok(it.link && URL.canParse(it.link), `${what}: rss-parser found an item without a link`);
    assert.ok(it.guid, `${what}: rss-parser found an item without a guid`);
  }
  return { facts, items: feed.items };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;
const isString = (x: unknown): x is string => typeof x === 'string';
const isUrl = (x: unknown): boolean => isString(x) && URL.canParse(x);

/** A JSON Feed 1.1 document, by the spec (jsonfeed.org/version/1.1): required members and their types. */
export function checkJsonFeed(doc: unknown, what: string): void {
  assert.ok(doc !== null && typeof doc === 'object' && !Array.isArray(doc), `${what}: not a JSON object`);
  const d = doc as Record<string, unknown>;
  assert.equal(d.version, 'https://jsonfeed.org/version/1.1', `${what}: version`);
  assert.ok(isString(d.title) && d.title !== '', `${what}: title is required`);
  for (const k of ['home_page_url', 'feed_url', 'next_url', 'icon', 'favicon'] as const) {
    if (d[k] !== undefined) assert.ok(isUrl(d[k]), `${what}: ${k} is not a URL`);
  }
  if (d.authors !== undefined) {
    assert.ok(Array.isArray(d.authors), `${what}: authors is not an array`);
    for (const a of d.authors as Record<string, unknown>[])
      assert.ok(isString(a.name) || isUrl(a.url) || isUrl(a.avatar), `${what}: an author has no name, url or avatar`);
  }
  assert.ok(Array.isArray(d.items), `${what}: items is required`);
  const ids = new Set<string>();
  for (const it of d.items as Record<string, unknown>[]) {
    assert.ok(isString(it.id) && it.id !== '', `${what}: an item without an id`);
    assert.ok(!ids.has(it.id), `${what}: item id ${it.id} twice`);
    ids.add(it.id);
    assert.ok(isString(it.content_text) || isString(it.content_html), `${what}: item ${it.id} has neither content_text nor content_html`);
    for (const k of ['url', 'external_url', 'image', 'banner_image'] as const)
      if (it[k] !== undefined) assert.ok(isUrl(it[k]), `${what}: item ${it.id} ${k} is not a URL`);
    for (const k of ['date_published', 'date_modified'] as const) if (it[k] !== undefined) assert.match(String(it[k]), RFC3339, `${what}: item ${it.id} ${k}`);
    if (it.tags !== undefined) assert.ok(Array.isArray(it.tags) && it.tags.every(isString), `${what}: item ${it.id} tags`);
  }
}

/** Runs the readers on a fetched body when it is a feed; anything else passes untouched. */
export async function checkIfFeed(status: number, contentType: string, text: string, what: string): Promise<void> {
  if (status !== 200) return;
  if (contentType.startsWith('application/rss+xml')) await checkRss(text, what);
  else if (contentType.startsWith('application/feed+json')) checkJsonFeed(JSON.parse(text), what);
  else if (contentType.startsWith('text/calendar')) checkIcs(text, what);
}

/**
 * An iCalendar body as a calendar app reads it (ical.js, Mozilla's parser): RFC 5545 line syntax
 * (CRLF, lines folded at 75 octets), one VCALENDAR with the VTIMEZONE its events' TZIDs name, and
 * every VEVENT with a UID that is an event id, a DTSTAMP and a zoned DTSTART (or, all day, DATE
 * values). Returns the events.
 */
export function checkIcs(text: string, what: string): ICAL.Component[] {
  const lines = text.split('\r\n');
  assert.equal(lines.at(-1), '', `${what}: the body ends with CRLF`);
  for (const line of lines) {
    assert.ok(!line.includes('\n') && !line.includes('\r'), `${what}: a bare LF or CR in ${JSON.stringify(line.slice(0, 80))}`);
    assert.ok(Buffer.byteLength(line) <= 75, `${what}: a line over 75 octets: ${JSON.stringify(line.slice(0, 80))}`);
  }
  const cal = new ICAL.Component(ICAL.parse(text) as unknown[]);
  assert.equal(cal.name, 'vcalendar', what);
  const zones = cal.getAllSubcomponents('vtimezone').map((z) => String(z.getFirstPropertyValue('tzid')));
  const events = cal.getAllSubcomponents('vevent');
  // RFC 5545 §3.6.5: a VTIMEZONE for each TZID the calendar uses; an empty calendar uses none.
  if (events.length) assert.deepEqual(zones, ['America/Los_Angeles'], `${what}: one VTIMEZONE, for America/Los_Angeles`);
  else
    assert.ok(
      zones.every((z) => z === 'America/Los_Angeles'),
      `${what}: no VTIMEZONE but Los Angeles: ${zones.join(', ')}`,
    );
  for (const e of events) {
    assert.match(String(e.getFirstPropertyValue('uid')), /^bsc_evt_[0-9a-f]{20}$/, `${what}: UID is the event id`);
    assert.ok(e.getFirstPropertyValue('dtstamp'), `${what}: DTSTAMP`);
    const start = e.getFirstProperty('dtstart');
    // An all-day event is its days (VALUE=DATE, no zone), with a DATE DTEND after them (exclusive); a timed one a Pacific time.
    if (start?.type === 'date') {
      const end = e.getFirstProperty('dtend');
      assert.equal(end?.type, 'date', `${what}: an all-day DTSTART has a DATE DTEND`);
      assert.ok(String(end.getFirstValue()) > String(start.getFirstValue()), `${what}: DTEND is after DTSTART's day`);
    } else assert.equal(start?.getParameter('tzid'), 'America/Los_Angeles', `${what}: DTSTART in Pacific time`);
  }
  return events;
}
