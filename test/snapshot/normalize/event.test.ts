import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { bundledGazetteer } from '../../../snapshot/gazetteer.ts';
import { normalizeAll, sourceContext, splitCancelMarker } from '../../../snapshot/normalize/event.ts';
import { parseCsv } from '../../../snapshot/parse/csv.ts';
import { parseJsonLd } from '../../../snapshot/parse/jsonld.ts';
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
