import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { bundledGazetteer } from '../../../snapshot/gazetteer.ts';
import { normalizeAll, sourceContext, splitCancelMarker } from '../../../snapshot/normalize/event.ts';
import { parseCsv } from '../../../snapshot/parse/csv.ts';
import { parseICal } from '../../../snapshot/parse/ical.ts';
import { parseJsonLd } from '../../../snapshot/parse/jsonld.ts';
import { parseRss } from '../../../snapshot/parse/rss.ts';
import { parseRegistry } from '../../../snapshot/registry.ts';
import { WINDOW } from '../parse/helpers.ts';
import { eventId, ID_PREFIX } from '../../../core/ids.ts';

describe('eventId', () => {
  test('bsc_evt_ + 80 bits of sha256(source, uid): stable, and distinct per source', () => {
    const oracle = createHash('sha256').update('sfpl\u0000abc@x').digest('hex').slice(0, 20);
    assert.equal(eventId('sfpl', 'abc@x'), `${ID_PREFIX}${oracle}`);
    assert.equal(eventId('sfpl', 'abc@x'), eventId('sfpl', 'abc@x'));
    assert.notEqual(eventId('sfpl', 'abc@x'), eventId('oakland', 'abc@x'));
    assert.match(eventId('s', 'u'), /^bsc_evt_[0-9a-f]{20}$/);
  });
});

describe('cancellation markers', () => {
  const cases: [string, string, boolean][] = [
    ['Canceled: Toddler Time', 'Toddler Time', true],
    ['Cancelled - Toddler Time', 'Toddler Time', true],
    ['CANCELLED - Toddler Time', 'Toddler Time', true],
    ['[Canceled] Toddler Time', 'Toddler Time', true],
    ['Toddler Time (Cancelled)', 'Toddler Time', true],
    ['Toddler Time - CANCELED', 'Toddler Time', true],
    ['Toddler Time', 'Toddler Time', false],
    ['Canceled', 'Canceled', false],
    ['The Cancellation of Dinosaurs', 'The Cancellation of Dinosaurs', false],
  ];
  for (const [input, title, cancelled] of cases) test(input, () => assert.deepEqual(splitCancelMarker(input), [title, cancelled]));
});

describe('identity of an event with no upstream id', () => {
  const registry = parseRegistry(
    {
      sources: [
        {
          id: 'mapathons',
          url: 'mapathons.csv',
          format: 'csv',
          organizer: { name: 'Missing Maps', url: 'https://www.missingmaps.org' },
          default_venue: 'sfpl-main',
          destination: 'san-francisco',
          attribution: 'Missing Maps',
        },
      ],
    },
    '(test)',
  );
  const ctx = sourceContext(registry, registry.sources[0]!, bundledGazetteer(), WINDOW);
  const normalize = async (csv: string) => normalizeAll((await parseCsv(csv, { window: WINDOW })).events, ctx);

  test('missingmaps-mapathons.csv: the same title on the same day in two towns is two events', async () => {
    // The feed's header and its two Hampton Roads rows, moved into the window and the Bay Area (dates
    // and coordinates changed; a pipeline for the Bay Area drops events placed in Virginia).
    const csv = [
      'latitude,longitude,date,flag,title,place_name,place_url,time_string,signup_url',
      '37.7793,-122.4193,2026-11-16,us,"Hampton Roads Mapathon","Luter Hall , Newport News (Virginia), United States",https://www.openstreetmap.org/way/228539601,"10:00-15:00",https://forms.gle/2CG283qAa2k8Yfa2A',
      '37.8044,-122.2712,2026-11-16,us,"Hampton Roads Mapathon","Monarch Hall , Norfolk (Virginia), United States",https://www.openstreetmap.org/relation/6161309,"10:00-15:00",https://forms.gle/2CG283qAa2k8Yfa2A',
    ].join('\n');
    const { rows, dropped } = await normalize(csv);
    assert.equal(rows.length, 2);
    assert.deepEqual(dropped, {});
    assert.notEqual(rows[0]!.id, rows[1]!.id);
  });

  test('a row listed twice is still one event', async () => {
    // missingmaps-mapathons.csv lists "Portsmouth Mapathon" at the University of Portsmouth twice, verbatim
    // (here with a date in the window and Bay Area coordinates).
    const row =
      '37.7793,-122.4193,2026-11-25,gb,Portsmouth Mapathon,University of Portsmouth,http://osm.org/go/euoPfv8~?m=,6pm-9pm,https://www.eventbrite.co.uk/e/missing-maps-mapathon-portsmouth-tickets-15617027951';
    const { rows, dropped, merged } = await normalize(['latitude,longitude,date,flag,title,place_name,place_url,time_string,signup_url', row, row].join('\n'));
    assert.equal(rows.length, 1);
    assert.deepEqual(dropped, {});
    assert.equal(merged, 1);
  });

  test('coordinates tell apart two places with no name; a named place keeps the id it always had', async () => {
    const { rows } = await normalize(['title,date,lat,lng', 'Mapathon,2026-11-16,37.7793,-122.4193', 'Mapathon,2026-11-16,37.8044,-122.2712'].join('\n'));
    assert.equal(new Set(rows.map((r) => r.id)).size, 2);
    const [named] = (await normalize(['title,date,location,lat,lng', 'Mapathon,2026-11-16,Luter Hall,37.7793,-122.4193'].join('\n'))).rows;
    assert.equal(named!.id, eventId('mapathons', `Mapathon|${named!.start_datetime}|Luter Hall`));
  });
});

describe('vetted links stay vetted', () => {
  const registry = parseRegistry(
    {
      sources: [
        {
          id: 'sfpl',
          url: 'sfpl.html',
          format: 'jsonld',
          organizer: { name: 'San Francisco Public Library', url: 'https://sfpl.org' },
          default_venue: 'sfpl-main',
          destination: 'san-francisco',
          attribution: 'SFPL',
        },
        {
          id: 'kids',
          url: 'kids.html',
          format: 'jsonld',
          organizer: { name: 'Bay Area Kids Calendar', url: 'https://www.bayareakidscalendar.example' },
          default_venue: 'sfpl-main',
          destination: 'san-francisco',
          attribution: 'Kids',
        },
      ],
    },
    '(test)',
  );
  const page = (organizer: unknown, ticket: string) =>
    `<html><script type="application/ld+json">${JSON.stringify({
      '@context': 'https://schema.org',
      '@type': 'Event',
      '@id': 'https://example.org/e/1',
      name: 'Toddler Storytime',
      startDate: '2026-11-24T10:30:00-08:00',
      location: { '@type': 'Place', name: 'Main Library', address: '100 Larkin St, San Francisco, CA 94102' },
      organizer,
      offers: { '@type': 'Offer', price: '0', url: ticket },
    })}</script></html>`;
  const one = (sourceIndex: number, html: string) => {
    const ctx = sourceContext(registry, registry.sources[sourceIndex]!, bundledGazetteer(), WINDOW);
    const { rows } = normalizeAll(parseJsonLd(html, { window: WINDOW }).events, ctx);
    assert.equal(rows.length, 1);
    return rows[0]!;
  };

  test("an item naming SFPL with links on a look-alike host is served with the registry's links only", () => {
    const r = one(
      0,
      page({ '@type': 'Organization', name: 'San Francisco Public Library', url: 'https://sfpl-library.example/' }, 'https://sfpl-library.example/register'),
    );
    assert.equal(r.organizer, 'San Francisco Public Library');
    assert.equal(r.organizer_url, 'https://sfpl.org/');
    assert.equal(r.ticket_url, null);
  });

  test("an aggregator's item naming a registry organizer takes the registry's URL; an unknown one keeps its name, no link", () => {
    const known = one(
      1,
      page({ '@type': 'Organization', name: 'san francisco public library', url: 'https://sfpl-library.example/' }, 'https://sfpl.org/events/1/register'),
    );
    assert.deepEqual(
      [known.organizer, known.organizer_url, known.ticket_url],
      ['San Francisco Public Library', 'https://sfpl.org/', 'https://sfpl.org/events/1/register'],
    );
    const unknown = one(1, page({ '@type': 'Organization', name: 'Tiny Tots Music', url: 'https://tinytots.example/' }, 'https://tinytots.example/buy'));
    assert.deepEqual([unknown.organizer, unknown.organizer_url, unknown.ticket_url], ['Tiny Tots Music', null, null]);
  });
});

describe('all_day, read by each parser from real-shaped items', () => {
  const registry = parseRegistry(
    {
      sources: [
        {
          id: 'lib',
          url: 'feed',
          format: 'ical',
          organizer: { name: 'Test Library', url: 'https://library.example' },
          default_venue: 'sfpl-main',
          destination: 'san-francisco',
          attribution: 'Test Library',
        },
      ],
    },
    '(test)',
  );
  const ctx = sourceContext(registry, registry.sources[0]!, bundledGazetteer(), WINDOW);
  /** Each row's title → [all_day, start_datetime, end_datetime]. */
  const read = (events: Parameters<typeof normalizeAll>[0]): Record<string, [boolean, string, string | null]> => {
    const n = normalizeAll(events, ctx);
    assert.deepEqual(n.dropped, {}, 'nothing dropped');
    return Object.fromEntries(n.rows.map((r) => [r.title, [r.all_day, r.start_datetime, r.end_datetime]]));
  };

  test('iCalendar: VALUE=DATE (and the dashed form some exporters write), Trumba midnight to 23:30; a timed event at its time', async () => {
    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//Trumba Corporation//Trumba Calendar Services 0.11.7620//EN',
      'BEGIN:VEVENT',
      'UID:fair@x',
      'SUMMARY:Holiday Craft Fair',
      'DTSTART;VALUE=DATE:20261205',
      'DTEND;VALUE=DATE:20261207',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:dashed@x',
      'SUMMARY:Book Sale',
      'DTSTART;VALUE=DATE:2026-12-09',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:closed@x',
      'SUMMARY:Winter Reading Kickoff Day',
      'DTSTART;TZID=America/Los_Angeles:20261212T000000',
      'DTEND;TZID=America/Los_Angeles:20261212T233000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:story@x',
      'SUMMARY:Preschool Storytime',
      'DTSTART;TZID=America/Los_Angeles:20261205T103000',
      'DTEND;TZID=America/Los_Angeles:20261205T111500',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    assert.deepEqual(read(parseICal(ics, { window: WINDOW }).events), {
      'Holiday Craft Fair': [true, '2026-12-05T00:00:00-08:00', '2026-12-06T23:59:59-08:00'],
      'Book Sale': [true, '2026-12-09T00:00:00-08:00', '2026-12-09T23:59:59-08:00'],
      'Winter Reading Kickoff Day': [true, '2026-12-12T00:00:00-08:00', '2026-12-12T23:59:59-08:00'],
      'Preschool Storytime': [false, '2026-12-05T10:30:00-08:00', '2026-12-05T11:15:00-08:00'],
    });
  });

  test('JSON-LD: a date-only startDate (Pike Place Market, Songkick festivals) is all-day; a datetime is not', () => {
    const ld = [
      {
        '@context': 'https://schema.org',
        '@type': 'Festival',
        name: 'Winter Music Festival',
        startDate: '2026-12-12',
        endDate: '2026-12-13',
        location: 'Main Library',
      },
      { '@context': 'https://schema.org', '@type': 'Event', name: 'Lego Club', startDate: '2026-12-12T15:00:00-08:00', location: 'Main Library' },
    ];
    const html = `<!doctype html><html><head>${ld.map((o) => `<script type="application/ld+json">${JSON.stringify(o)}</script>`).join('')}</head><body></body></html>`;
    assert.deepEqual(read(parseJsonLd(html, { window: WINDOW }).events), {
      'Winter Music Festival': [true, '2026-12-12T00:00:00-08:00', '2026-12-13T23:59:59-08:00'],
      'Lego Club': [false, '2026-12-12T15:00:00-08:00', null],
    });
  });

  test('RSS: a date-only ev:startdate, a WordPress start_date at 00:00:00 with no end, a Trumba line without a time; timed ones at their times', () => {
    const rss = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:ev="http://purl.org/rss/1.0/modules/event/" xmlns:event_listing="https://wpjobmanager.com/">
<channel><title>Events</title><link>https://library.example</link><description>x</description>
<item><title>Seed Library Open Day</title><guid>a</guid><ev:startdate>2026-12-10</ev:startdate><ev:location>Main Library</ev:location></item>
<item><title>Toddler Time</title><guid>b</guid><ev:startdate>2026-12-10T10:00:00-08:00</ev:startdate><ev:enddate>2026-12-10T10:30:00-08:00</ev:enddate><ev:location>Main Library</ev:location></item>
<item><title>Holiday Open House</title><guid>c</guid><event_listing:start_date><![CDATA[2026-12-24 00:00:00]]></event_listing:start_date></item>
<item><title>Jazz Brunch</title><guid>d</guid><event_listing:start_date><![CDATA[2026-12-24 19:30:00]]></event_listing:start_date></item>
<item><title>Gingerbread Display</title><guid>e</guid><category>2026/12/15 (Tue)</category><description>Main Library&lt;br/&gt;Tuesday, December 15, 2026&lt;br/&gt;&lt;br/&gt;Come see it.</description></item>
</channel></rss>`;
    assert.deepEqual(read(parseRss(rss, { window: WINDOW }).events), {
      'Seed Library Open Day': [true, '2026-12-10T00:00:00-08:00', '2026-12-10T23:59:59-08:00'],
      'Toddler Time': [false, '2026-12-10T10:00:00-08:00', '2026-12-10T10:30:00-08:00'],
      'Holiday Open House': [true, '2026-12-24T00:00:00-08:00', '2026-12-24T23:59:59-08:00'],
      'Jazz Brunch': [false, '2026-12-24T19:30:00-08:00', null],
      'Gingerbread Display': [true, '2026-12-15T00:00:00-08:00', '2026-12-15T23:59:59-08:00'],
    });
  });

  test('CSV: a date with an empty, "All Day", "TBD" or "00:00-00:00" time cell is all-day; a time range is not', async () => {
    const csv = [
      'Event Name,Date,Time,Location',
      'Holiday Lights Walk,12/5/2026,All Day,Main Library',
      'Poetry Open Mic,12/6/2026,,Main Library',
      'Mapathon,12/7/2026,TBD,Main Library',
      'Global Mapathon,12/8/2026,00:00-00:00,Main Library',
      'Chess Club,12/9/2026,3:30 PM - 5:00 PM,Main Library',
      '',
    ].join('\r\n');
    assert.deepEqual(read((await parseCsv(csv, { window: WINDOW })).events), {
      'Holiday Lights Walk': [true, '2026-12-05T00:00:00-08:00', '2026-12-05T23:59:59-08:00'],
      'Poetry Open Mic': [true, '2026-12-06T00:00:00-08:00', '2026-12-06T23:59:59-08:00'],
      Mapathon: [true, '2026-12-07T00:00:00-08:00', '2026-12-07T23:59:59-08:00'],
      'Global Mapathon': [true, '2026-12-08T00:00:00-08:00', '2026-12-08T23:59:59-08:00'],
      'Chess Club': [false, '2026-12-09T15:30:00-08:00', '2026-12-09T17:00:00-08:00'],
    });
  });
});
