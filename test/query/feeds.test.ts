// The RSS serializer against any text the upstream feeds or a client's query can bring: every body is
// well-formed to a strict parser, and every link in it reads back as exactly the URL we meant
// (escaped once, never twice). Properties with fast-check, on a time budget; xmllint on a sample.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SaxesParser } from 'saxes';
import { feedUrl, jsonFeedBody, rssBody } from '../../query/feeds.ts';
import type { EventRecord } from '../../core/record.ts';
import type { FeedLinks, SearchTask } from '../../query/protocol.ts';
import { hasXmllint, strictXml, xmllint } from '../server/readers.ts';

const BUDGET_MS = 4000;
const WEB = 'https://web.example';
const TASK = { webBaseUrl: WEB, attribution: { text: 'Family events data by Family Events API (web.example)', url: WEB } } as SearchTask;

/** Any UTF-16 text: controls, lone surrogates, markup and CDATA terminators included. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('a & b', '<b>x</b>', ']]>', 'x]]>y', '"quoted" \'single\'', '&amp;', '\u0000\u0001\u001f', '\uD800', 'x\uDC00y', 'é ñ 漢字 👪'),
);
const nonEmpty = anyText.filter((s) => s.trim() !== '');

const recordArb = fc.record({
  n: fc.nat(99_999),
  title: nonEmpty,
  description: fc.option(anyText),
  venue: anyText,
  city: anyText,
  categories: fc.array(nonEmpty, { maxLength: 3 }),
  tags: fc.array(nonEmpty, { maxLength: 3 }),
  canceled: fc.boolean(),
});

type RowSpec = typeof recordArb extends fc.Arbitrary<infer T> ? T : never;

function record(r: RowSpec): EventRecord {
  const id = `bsc_evt_${r.n.toString(16).padStart(8, '0')}`;
  return {
    id,
    title: r.title,
    description: r.description,
    summary: null,
    start_datetime: '2026-11-28T10:00:00-08:00',
    end_datetime: '2026-11-28T11:00:00-08:00',
    venue: { name: r.venue, address: '1 Main St, Oakland, CA 94612', city: r.city, lat: 37.8, lng: -122.27, geo_precision: 'venue' },
    organizer: null,
    organizer_url: null,
    categories: r.categories,
    tags: r.tags,
    image_url: null,
    is_free: true,
    price: null,
    ticket_url: null,
    source: null,
    source_url: null,
    destination: 'sf-bay-area',
    age_range: null,
    age_range_years: null,
    is_canceled: r.canceled,
    all_day: false,
    created_at: '2026-11-01T09:00:00.000-07:00',
    updated_at: '2026-11-02T09:00:00.000-08:00',
    event_url: `${WEB}/events/${id}`,
  };
}

/** The query a client sent: any names and values (the server sorts and encodes them into links). */
const paramsArb = fc.uniqueArray(fc.tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }), anyText), { maxLength: 5, selector: ([k]) => k });

interface Read {
  /** The href of every atom:link, by rel. */
  readonly links: Map<string, string>;
  /** Each item's title and categories, as a strict parser decodes them. */
  readonly items: { title: string; description: string; categories: string[] }[];
}

function read(xml: string): Read {
  const links = new Map<string, string>();
  const items: { title: string; description: string; categories: string[] }[] = [];
  let text = '';
  const p = new SaxesParser({ xmlns: true });
  p.on('opentag', (n) => {
    text = '';
    if (n.name === 'atom:link') links.set(n.attributes.rel?.value ?? '', n.attributes.href?.value ?? '');
    if (n.name === 'item') items.push({ title: '', description: '', categories: [] });
  });
  p.on('text', (t) => (text += t));
  p.on('cdata', (t) => (text += t));
  p.on('closetag', (n) => {
    const it = items.at(-1);
    if (it && n.name === 'title') it.title = text;
    if (it && n.name === 'description') it.description = text;
    if (it && n.name === 'category') it.categories.push(text);
  });
  p.write(xml).close();
  return { links, items };
}

/** What XML 1.0 can carry of a text: its Char production, line ends as a parser normalizes them. */
const asXmlReads = (s: string): string =>
  [...s]
    .filter((c) => {
      const cp = c.codePointAt(0)!;
      return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || cp >= 0x10000;
    })
    .join('')
    .replace(/\r\n?/g, '\n');

test('any titles, texts, categories and query values give a well-formed feed whose links read back exactly', async () => {
  const samples: string[] = [];
  fc.assert(
    fc.property(fc.array(recordArb, { maxLength: 4 }), paramsArb, fc.nat(500), fc.boolean(), (rows, params, offset, hasNext) => {
      const links: FeedLinks = {
        url: 'https://api.example/v1/feed.rss',
        params: [...params].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
        updated: '2026-11-21T08:00:00.000Z',
      };
      const next = hasNext ? offset + 20 : null;
      const xml = rssBody(TASK, links, rows.map(record), { total: 1000, limit: 20, offset, nextOffset: next, truncated: false }).toString('utf8');
      strictXml(xml);
      const got = read(xml);
      assert.equal(got.links.get('self'), feedUrl(links, offset));
      if (next !== null) assert.equal(got.links.get('next'), feedUrl(links, next));
      assert.deepEqual(
        got.items.map((it) => it.title),
        rows.map((r) => asXmlReads(r.canceled ? `Canceled: ${r.title}` : r.title)),
        'titles read back as sent, less what XML cannot carry',
      );
      for (const [i, it] of got.items.entries()) {
        const r = rows[i]!;
        if (r.description)
          assert.ok(it.description.endsWith(`\n\n${asXmlReads(r.description)}`), `description ${JSON.stringify(r.description)} did not read back`);
        for (const c of [...r.categories, ...r.tags]) assert.ok(it.categories.includes(asXmlReads(c)), `category ${JSON.stringify(c)} did not read back`);
      }
      if (samples.length < 50) samples.push(xml);
    }),
    { interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false, numRuns: 100_000 },
  );
  assert.ok(samples.length > 0);
  if (hasXmllint) {
    for (const xml of samples) {
      const verdict = xmllint(xml);
      assert.ok(verdict?.ok, verdict?.stderr);
    }
  }
});

test('an all-day event says "All day" and its days in the RSS and JSON Feed text, a timed one its clock', () => {
  const base = {
    n: 1,
    title: 'Holiday Lights Walk',
    description: null,
    venue: 'Jack London Square',
    city: 'Oakland',
    categories: [],
    tags: [],
    canceled: false,
  };
  const rows: EventRecord[] = [
    { ...record(base), all_day: true, start_datetime: '2026-12-05T00:00:00-08:00', end_datetime: '2026-12-05T23:59:59-08:00' },
    { ...record({ ...base, n: 2 }), all_day: true, start_datetime: '2026-03-07T00:00:00-08:00', end_datetime: '2026-03-08T23:59:59-07:00' },
    { ...record({ ...base, n: 3 }), all_day: true, start_datetime: '2026-12-05T00:00:00-08:00', end_datetime: null },
    // The same times without the flag: a timed event from midnight, as its record says.
    { ...record({ ...base, n: 4 }), start_datetime: '2026-12-05T00:00:00-08:00', end_datetime: '2026-12-05T23:59:59-08:00' },
  ];
  const links: FeedLinks = { url: 'https://api.example/v1/feed.rss', params: [], updated: '2026-11-21T08:00:00.000Z' };
  const page = { total: rows.length, limit: 20, offset: 0, nextOffset: null, truncated: false };
  const want = [
    'Sat, Dec 5, 2026, All day · Jack London Square, Oakland',
    'Sat, Mar 7, 2026 – Sun, Mar 8, 2026, All day · Jack London Square, Oakland',
    'Sat, Dec 5, 2026, All day · Jack London Square, Oakland',
    'Sat, Dec 5, 2026, 12:00 AM – 11:59 PM · Jack London Square, Oakland',
  ];
  const xml = rssBody(TASK, links, rows, page).toString('utf8');
  strictXml(xml);
  assert.deepEqual(
    read(xml).items.map((it) => it.description),
    want,
  );
  const json = JSON.parse(jsonFeedBody(TASK, { ...links, url: 'https://api.example/v1/feed.json' }, rows, page).toString('utf8')) as {
    items: { content_text: string; _family_events: EventRecord }[];
  };
  assert.deepEqual(
    json.items.map((it) => it.content_text),
    want,
  );
  assert.deepEqual(
    json.items.map((it) => it._family_events.all_day),
    [true, true, true, false],
    'each item carries its record, the flag included',
  );
});
