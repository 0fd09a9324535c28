// Nothing lost: every upstream item ends as a record, a drop with its reason, or merged into
// another (counted), and the counts add up to the feed's items. Items that share an upstream id
// but differ in start or place are distinct events; a title's date stands in for a missing start.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { bundledGazetteer } from '../../../snapshot/gazetteer.ts';
import { normalizeAll, sourceContext, type Normalized } from '../../../snapshot/normalize/event.ts';
import { mergeRows } from '../../../snapshot/normalize/merge.ts';
import { parseCsv } from '../../../snapshot/parse/csv.ts';
import { parseICal } from '../../../snapshot/parse/ical.ts';
import { parseJsonLd } from '../../../snapshot/parse/jsonld.ts';
import { parseRss } from '../../../snapshot/parse/rss.ts';
import { itemCount, type ParseOutput } from '../../../snapshot/parse/types.ts';
import { parseRegistry } from '../../../snapshot/registry.ts';
import { wall, WINDOW } from './helpers.ts';
import { eventId } from '../../../core/ids.ts';
import { ZONE } from '../../../core/zone.ts';

const registry = parseRegistry(
  {
    sources: [
      {
        id: 'county-lib',
        url: 'lib.ics',
        format: 'ical',
        organizer: { name: 'County Library', url: 'https://library.example.org' },
        default_venue: 'sfpl-main',
        destination: 'san-francisco',
        attribution: 'County Library',
      },
    ],
  },
  '(test)',
);
const ctx = sourceContext(registry, registry.sources[0]!, bundledGazetteer(), WINDOW);

const cal = (...lines: string[]): string => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Test//Feed//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');

interface Ev {
  uid?: string | undefined;
  start?: string | undefined;
  summary: string;
  location?: string | undefined;
  seq?: number | undefined;
  rid?: string | undefined;
  rrule?: string | undefined;
  stamp?: string | undefined;
}

function vevent(e: Ev): string[] {
  return [
    'BEGIN:VEVENT',
    ...(e.uid ? [`UID:${e.uid}`] : []),
    ...(e.stamp ? [`DTSTAMP:${e.stamp}`] : []),
    ...(e.start ? [`DTSTART;TZID=America/Los_Angeles:${e.start}`, `DURATION:PT45M`] : []),
    ...(e.rid ? [`RECURRENCE-ID;TZID=America/Los_Angeles:${e.rid}`] : []),
    ...(e.rrule ? [`RRULE:${e.rrule}`] : []),
    ...(e.seq !== undefined ? [`SEQUENCE:${e.seq}`] : []),
    `SUMMARY:${e.summary}`,
    ...(e.location ? [`LOCATION:${e.location.replace(/,/g, '\\,')}`] : []),
    'END:VEVENT',
  ];
}

const MISSION = 'Mission Branch Library, 300 Bartlett St, San Francisco, CA 94110';
const EXCELSIOR = 'Excelsior Branch Library, 4400 Mission St, San Francisco, CA 94112';
const sum = (d: Normalized['dropped']): number => Object.values(d).reduce((a, b) => a + (b ?? 0), 0);

/** items = records + dropped + merged, with the parser's own drops and merges in. */
function accounting(parsed: ParseOutput, n: Normalized): { items: number; records: number; dropped: number; merged: number } {
  const m = mergeRows([...n.rows]);
  return {
    items: itemCount(parsed),
    records: m.rows.length,
    dropped: parsed.noStart + (parsed.outsideWindow ?? 0) + sum(n.dropped),
    merged: (parsed.merged ?? 0) + n.merged + (n.rows.length - m.rows.length),
  };
}

describe('a county library feed: one program at several branches and times under one UID', () => {
  const feed = cal(
    // The same storytime at two branches the same morning, and at one of them a week later.
    ...vevent({ uid: 'storytime-88@lib', start: '20261124T103000', summary: 'Baby Storytime', location: MISSION }),
    ...vevent({ uid: 'storytime-88@lib', start: '20261124T103000', summary: 'Baby Storytime', location: EXCELSIOR }),
    ...vevent({ uid: 'storytime-88@lib', start: '20261201T103000', summary: 'Baby Storytime', location: MISSION }),
    // Listed twice, verbatim.
    ...vevent({ uid: 'lego@lib', start: '20261125T150000', summary: 'Lego Club', location: EXCELSIOR }),
    ...vevent({ uid: 'lego@lib', start: '20261125T150000', summary: 'Lego Club', location: EXCELSIOR }),
    // A revision of the same occurrence, the newer one first.
    ...vevent({ uid: 'craft@lib', start: '20261126T160000', summary: 'Craft Hour (Room B)', location: MISSION, seq: 3 }),
    ...vevent({ uid: 'craft@lib', start: '20261126T160000', summary: 'Craft Hour', location: MISSION, seq: 1 }),
    // A weekly series whose second Tuesday moved to Wednesday, revised twice.
    ...vevent({ uid: 'chess@lib', start: '20261110T170000', rrule: 'FREQ=WEEKLY;COUNT=3', summary: 'Chess Club', location: MISSION }),
    ...vevent({ uid: 'chess@lib', rid: '20261117T170000', start: '20261118T170000', summary: 'Chess Club (Wednesday)', location: MISSION, seq: 1 }),
    ...vevent({ uid: 'chess@lib', rid: '20261117T170000', start: '20261118T173000', summary: 'Chess Club (Wednesday, 5:30)', location: MISSION, seq: 2 }),
    // An override whose series the feed does not carry.
    ...vevent({ uid: 'gone@lib', rid: '20261203T110000', start: '20261203T113000', summary: 'Puppet Show (moved)', location: EXCELSIOR }),
    // A series that ended before the window.
    ...vevent({ uid: 'old@lib', start: '20250105T100000', rrule: 'FREQ=WEEKLY;COUNT=2', summary: 'Winter Reading', location: MISSION }),
    ...vevent({ uid: 'solo@lib', start: '20261205T140000', summary: 'Author Talk', location: EXCELSIOR }),
  );
  const parsed = parseICal(feed, { window: WINDOW });
  const outcomes: [string, boolean][] = [];
  const n = normalizeAll(parsed.events, ctx, (_i, o, merged) => outcomes.push([typeof o === 'string' ? o : o.id, merged]));

  test('13 VEVENTs, the series counting as its 3 occurrences: 15 items = 10 records + 1 dropped + 4 merged', () => {
    assert.deepEqual(accounting(parsed, n), { items: 15, records: 10, dropped: 1, merged: 4 });
    const a = accounting(parsed, n);
    assert.equal(a.items, a.records + a.dropped + a.merged);
  });

  test('the storytime at two branches and on two days is three events with three ids', () => {
    const story = n.rows.filter((r) => r.title === 'Baby Storytime');
    assert.equal(story.length, 3);
    assert.equal(new Set(story.map((r) => r.id)).size, 3);
    assert.deepEqual(story.map((r) => r.start_datetime).sort(), ['2026-11-24T10:30:00-08:00', '2026-11-24T10:30:00-08:00', '2026-12-01T10:30:00-08:00']);
    // The id takes start and place: the same feed read again gives the same ids.
    const again = normalizeAll(parseICal(feed, { window: WINDOW }).events, ctx);
    assert.deepEqual(
      again.rows.map((r) => r.id),
      n.rows.map((r) => r.id),
    );
  });

  test('a UID that does not repeat keeps the id it always had; an occurrence keeps its series uid + recurrence id', () => {
    assert.ok(n.rows.some((r) => r.id === eventId('county-lib', 'solo@lib') && r.title === 'Author Talk'));
    const moved = n.rows.find((r) => r.title.startsWith('Chess Club ('));
    assert.equal(moved?.id, eventId('county-lib', `chess@lib#${new Date(wall('2026-11-17T17:00')).toISOString().replace('.000Z', 'Z')}`));
  });

  test('a verbatim copy is merged; of two revisions of one occurrence the higher SEQUENCE stands, wherever it is listed', () => {
    assert.equal(n.rows.filter((r) => r.title === 'Lego Club').length, 1);
    assert.deepEqual(
      n.rows.filter((r) => r.title.startsWith('Craft Hour')).map((r) => r.title),
      ['Craft Hour (Room B)'],
    );
    assert.equal(n.merged, 2);
    assert.equal(outcomes.filter(([, merged]) => merged).length, 2);
  });

  test('RECURRENCE-ID keeps its meaning: the override, at its latest SEQUENCE, replaces its occurrence', () => {
    const chess = n.rows.filter((r) => r.title.startsWith('Chess Club')).map((r) => [r.title, r.start_datetime]);
    assert.deepEqual(chess, [
      ['Chess Club', '2026-11-10T17:00:00-08:00'],
      ['Chess Club (Wednesday, 5:30)', '2026-11-18T17:30:00-08:00'],
      ['Chess Club', '2026-11-24T17:00:00-08:00'],
    ]);
  });

  test('an override without its series is served on its own; a series outside the window is counted there', () => {
    assert.ok(n.rows.some((r) => r.title === 'Puppet Show (moved)' && r.start_datetime === '2026-12-03T11:30:00-08:00'));
    assert.equal(parsed.outsideWindow, 1);
  });
});

describe('RSS, JSON-LD and CSV items that share an id', () => {
  test('CSV: the same id at two times is two events; the same id, time and place again is merged', async () => {
    const csv = [
      'id,title,start,location',
      `7,Toddler Time,2026-11-25 10:30,"${MISSION}"`,
      `7,Toddler Time,2026-11-26 10:30,"${MISSION}"`,
      `7,Toddler Time,2026-11-26 10:30,"${MISSION}"`,
      `8,Teen Night,2026-11-27 18:00,"${EXCELSIOR}"`,
    ].join('\n');
    const parsed = await parseCsv(csv, { window: WINDOW });
    const n = normalizeAll(parsed.events, ctx);
    assert.equal(n.rows.filter((r) => r.title === 'Toddler Time').length, 2);
    assert.equal(n.merged, 1);
    assert.equal(n.rows.find((r) => r.title === 'Teen Night')?.id, eventId('county-lib', '8'));
  });

  test('RSS: one guid for a program on two dates is two events', () => {
    const item = (date: string) =>
      `<item><title>Family Yoga</title><guid isPermaLink="false">yoga</guid><ev:startdate>${date}</ev:startdate><ev:location>${MISSION}</ev:location></item>`;
    const rss = `<?xml version="1.0"?><rss version="2.0" xmlns:ev="http://purl.org/rss/1.0/modules/event/"><channel><title>x</title>${item('2026-11-28T10:00:00-08:00')}${item('2026-12-05T10:00:00-08:00')}</channel></rss>`;
    const n = normalizeAll(parseRss(rss, { window: WINDOW }).events, ctx);
    assert.equal(n.rows.length, 2);
    assert.equal(n.merged, 0);
  });

  test('JSON-LD: an Event a page lists twice (in @graph and in an ItemList) is one event with its plain id', () => {
    const ev = {
      '@type': 'Event',
      '@id': 'https://library.example.org/e/42',
      name: 'Book Club',
      startDate: '2026-12-02T18:00:00-08:00',
      location: { '@type': 'Place', name: 'Mission Branch Library', address: '300 Bartlett St, San Francisco, CA 94110' },
    };
    const html = `<html><head><script type="application/ld+json">${JSON.stringify({ '@graph': [ev, { '@type': 'ItemList', itemListElement: [{ '@type': 'ListItem', item: ev }] }] })}</script></head></html>`;
    const parsed = parseJsonLd(html, { window: WINDOW });
    const n = normalizeAll(parsed.events, ctx);
    assert.equal(parsed.events.length, 2);
    assert.deepEqual(
      n.rows.map((r) => r.id),
      [eventId('county-lib', 'https://library.example.org/e/42')],
    );
    assert.equal(n.merged, 1);
  });
});

describe('a date given only in the title', () => {
  const rss = (items: string, channelDate = '') =>
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Library news</title>${channelDate}${items}</channel></rss>`;
  const at = (iso: string): number => DateTime.fromISO(iso, { zone: ZONE }).toMillis();

  test('RSS: "Sat, Nov 28 – Storytime" takes the year of the item\'s pubDate; the weekday agrees', () => {
    const out = parseRss(rss(`<item><title>Sat, Nov 28 – Storytime</title><guid>a</guid><pubDate>Tue, 10 Nov 2026 09:00:00 -0800</pubDate></item>`), {
      window: WINDOW,
    });
    assert.equal(out.noStart, 0);
    assert.equal(out.events[0]!.start.at.toMillis(), at('2026-11-28T00:00'));
    assert.equal(out.events[0]!.start.dateOnly, true);
  });

  test('RSS: "Saturday, January 9th" posted in December is next January; a time beside it is kept', () => {
    const out = parseRss(
      rss(`<item><title>Saturday, January 9th, 10:30am: Lunar New Year Crafts</title><guid>b</guid><pubDate>Mon, 14 Dec 2026 09:00:00 -0800</pubDate></item>`),
      { window: WINDOW },
    );
    assert.equal(out.events[0]!.start.at.toMillis(), at('2027-01-09T10:30'));
    assert.equal(out.events[0]!.start.dateOnly, false);
  });

  test("RSS: an item with no date of its own takes the year from the feed's date", () => {
    const out = parseRss(
      rss(`<item><title>Nov 29 – Family Movie</title><guid>c</guid></item>`, '<lastBuildDate>Sun, 01 Nov 2026 08:00:00 -0800</lastBuildDate>'),
      { window: WINDOW },
    );
    assert.equal(out.events[0]!.start.at.toMillis(), at('2026-11-29T00:00'));
  });

  test('a title with no day of a month ("Friday Night Jazz", "Grades 3/4") is still no start', () => {
    const out = parseRss(
      rss(
        `<item><title>Friday Night Jazz</title><guid>d</guid><pubDate>Tue, 10 Nov 2026 09:00:00 -0800</pubDate></item><item><title>Grades 3/4 Science</title><guid>e</guid><pubDate>Tue, 10 Nov 2026 09:00:00 -0800</pubDate></item>`,
      ),
      { window: WINDOW },
    );
    assert.equal(out.events.length, 0);
    assert.deepEqual(
      out.noStartItems?.map((s) => s.title),
      ['Friday Night Jazz', 'Grades 3/4 Science'],
    );
  });

  test("iCalendar: a VEVENT without DTSTART takes the title's day, the year from its DTSTAMP", () => {
    const out = parseICal(cal(...vevent({ uid: 'tbd@lib', summary: 'Dec 3 – Puppet Show', stamp: '20261120T120000Z', location: MISSION })), { window: WINDOW });
    assert.equal(out.noStart, 0);
    assert.equal(out.events[0]!.start.at.toMillis(), at('2026-12-03T00:00'));
  });

  test("JSON-LD: an Event without startDate takes the name's day, the year from the page's date", () => {
    const html = `<html><head><meta property="article:published_time" content="2026-11-02T09:00:00-08:00"><script type="application/ld+json">${JSON.stringify({ '@type': 'Event', name: 'Sat, Dec 12: Gingerbread Workshop', location: MISSION })}</script></head></html>`;
    const out = parseJsonLd(html, { window: WINDOW });
    assert.equal(out.events[0]!.start.at.toMillis(), at('2026-12-12T00:00'));
  });
});

describe('property: for any feed, items = records + dropped + merged', () => {
  // Times inside and outside the window, branches, uids from small pools so that they collide.
  const TIMES = ['20261124T103000', '20261124T150000', '20261201T103000', '20250105T100000', '20271001T100000'];
  const PLACES = [MISSION, EXCELSIOR, undefined];
  const UIDS = ['a@x', 'b@x', 'c@x', undefined];
  const TITLES = ['Storytime', 'Lego Club', 'Dec 3 – Puppet Show'];
  const arbEv = fc.record({
    uid: fc.constantFrom(...UIDS),
    start: fc.option(fc.constantFrom(...TIMES), { nil: undefined, freq: 6 }),
    summary: fc.constantFrom(...TITLES),
    location: fc.constantFrom(...PLACES),
    seq: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    rid: fc.option(fc.constantFrom(...TIMES), { nil: undefined, freq: 3 }),
    rrule: fc.option(fc.constantFrom('FREQ=WEEKLY;COUNT=3', 'FREQ=DAILY;COUNT=2'), { nil: undefined, freq: 3 }),
    stamp: fc.option(fc.constant('20261120T120000Z'), { nil: undefined }),
  });

  /** Occurrences of a series in the window by the window's own rule (luxon, not ical.js). */
  function inWindow(e: Ev): number {
    const start = DateTime.fromFormat(e.start!, "yyyyMMdd'T'HHmmss", { zone: ZONE });
    const [freq, count] = [/WEEKLY/.test(e.rrule!) ? 7 : 1, Number(/COUNT=(\d+)/.exec(e.rrule!)![1])];
    let n = 0;
    for (let i = 0; i < count; i++) {
      const s = start.plus({ days: i * freq });
      if (s.plus({ minutes: 45 }) >= WINDOW.start && s <= WINDOW.end) n++;
    }
    return n;
  }

  test('iCalendar: the items are the VEVENTs, a series counting as its occurrences in the window (at least one)', () => {
    fc.assert(
      fc.property(fc.array(arbEv, { maxLength: 12 }), (evs) => {
        // An override is one with a uid; a series is a master with a start; neither without the other.
        const shaped: Ev[] = evs.map((e) => ({
          ...e,
          ...(e.uid ? {} : { rid: undefined }),
          ...(e.rid || !e.start ? { rrule: undefined } : {}),
          ...(e.rid && !e.start ? { start: e.rid } : {}),
        }));
        const parsed = parseICal(cal(...shaped.flatMap(vevent)), { window: WINDOW });
        const n = normalizeAll(parsed.events, ctx);
        const a = accounting(parsed, n);
        const expected = shaped.reduce((k, e) => k + (e.rrule ? Math.max(1, inWindow(e)) : 1), 0);
        assert.equal(a.items, expected);
        assert.equal(a.items, a.records + a.dropped + a.merged);
        // Nothing lost: every distinct in-window single VEVENT (no series, no override) is a record's.
        const singles = new Set(
          shaped
            .filter((e) => !e.rrule && !e.rid && e.start && !shaped.some((o) => o.rid && o.uid === e.uid) && e.start.startsWith('2026'))
            .map((e) => `${e.uid ?? e.summary}|${e.start}|${e.location}`),
        );
        assert.ok(n.rows.length >= singles.size, `${n.rows.length} rows for ${singles.size} distinct events`);
      }),
      { interruptAfterTimeLimit: 4000, markInterruptAsFailure: false, numRuns: 2000 },
    );
  });

  test('CSV: the items are the data rows', async () => {
    const arbRow = fc.record({
      id: fc.constantFrom('1', '2', ''),
      title: fc.constantFrom('Storytime', 'Sat, Nov 28 – Craft', ''),
      start: fc.constantFrom('2026-11-25 10:30', '2026-11-26 10:30', '2025-01-01 10:00', 'TBD', ''),
      location: fc.constantFrom(MISSION, EXCELSIOR, ''),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(arbRow, { maxLength: 12 }), async (rows) => {
        const csv = ['id,title,start,location', ...rows.map((r) => `${r.id},${r.title},${r.start},"${r.location}"`)].join('\n');
        const parsed = await parseCsv(csv, { window: WINDOW });
        const a = accounting(parsed, normalizeAll(parsed.events, ctx));
        assert.equal(a.items, rows.length);
        assert.equal(a.items, a.records + a.dropped + a.merged);
      }),
      { interruptAfterTimeLimit: 3000, markInterruptAsFailure: false, numRuns: 1000 },
    );
  });
});
