import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseJsonLd } from '../../../snapshot/parse/jsonld.ts';
import { FeedFormatError } from '../../../snapshot/parse/types.ts';
import { byTitle, fixture, wall, WINDOW } from './helpers.ts';

const page = (...blocks: string[]): string =>
  `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Events</title>
${blocks.map((b) => `<script type="application/ld+json">${b}</script>`).join('\n')}
</head><body><div class="events"></div></body></html>`;

const GOOD = JSON.stringify({
  '@context': 'https://schema.org',
  '@type': 'Event',
  name: 'Gingerbread House Workshop',
  startDate: '2026-12-13T13:00:00-08:00',
  location: { '@type': 'Place', name: 'Piedmont Center for the Arts', address: '801 Magnolia Ave, Piedmont, CA' },
});

describe('parseJsonLd: WordPress page with a Yoast/The Events Calendar @graph', () => {
  const { events, noStart } = parseJsonLd(fixture('tec-graph-page.html'), { window: WINDOW });

  test('every Event-typed node of the @graph is read (Event, [Event, ChildrensEvent], EducationEvent); page nodes are not', () => {
    assert.deepEqual(events.map((e) => e.title).sort(), [
      'Junior Naturalists: Owl Pellets',
      'Little Chefs: Cookie Decorating',
      'Winter Wonderland Family Festival',
    ]);
    assert.equal(noStart, 0);
    assert.equal(byTitle(events, 'Winter Wonderland Family Festival').uid, 'https://lafayettecc.example.org/event/winter-wonderland-family-festival/#event');
  });

  test('start and end with offsets are the instants they name', () => {
    const fest = byTitle(events, 'Winter Wonderland Family Festival');
    assert.equal(fest.start.at.toMillis(), wall('2026-12-12T10:00'));
    assert.equal(fest.end?.at.toMillis(), wall('2026-12-12T15:00'));
    assert.equal(fest.start.dateOnly, false);
  });

  test('a Place with PostalAddress and GeoCoordinates gives name + street in location and numeric lat/lng', () => {
    const fest = byTitle(events, 'Winter Wonderland Family Festival');
    assert.match(fest.location ?? '', /^Lafayette Community Center, /);
    assert.match(fest.location ?? '', /500 St\. Mary&#8217;s Rd/);
    assert.match(fest.location ?? '', /Lafayette, CA 94549/);
    assert.equal(fest.lat, 37.8737);
    assert.equal(fest.lng, -122.1029);
    // The same coordinates published as strings are numbers too.
    const chefs = byTitle(events, 'Little Chefs: Cookie Decorating');
    assert.equal(chefs.lat, 37.8737);
    assert.equal(chefs.lng, -122.1029);
    assert.match(chefs.location ?? '', /^Community Center Kitchen, 500 St\. Mary's Rd/);
  });

  test('an address given as plain text is kept after the place name', () => {
    assert.equal(byTitle(events, 'Junior Naturalists: Owl Pellets').location, "Nature Room, 500 St. Mary's Rd, Lafayette, CA 94549");
  });

  test('offers: price "0" → 0–0, AggregateOffer lowPrice/highPrice → min/max, several Offers → their min/max', () => {
    const fest = byTitle(events, 'Winter Wonderland Family Festival');
    assert.deepEqual([fest.priceMin, fest.priceMax], [0, 0]);
    const chefs = byTitle(events, 'Little Chefs: Cookie Decorating');
    assert.deepEqual([chefs.priceMin, chefs.priceMax], [18, 25]);
    assert.equal(chefs.ticketUrl, 'https://lafayettecc.example.org/register/little-chefs');
    const owls = byTitle(events, 'Junior Naturalists: Owl Pellets');
    assert.deepEqual([owls.priceMin, owls.priceMax], [12, 15]);
  });

  test('isAccessibleForFree true/false/absent → isFree true/false/null', () => {
    assert.equal(byTitle(events, 'Winter Wonderland Family Festival').isFree, true);
    assert.equal(byTitle(events, 'Little Chefs: Cookie Decorating').isFree, false);
    assert.equal(byTitle(events, 'Junior Naturalists: Owl Pellets').isFree, null);
  });

  test('eventStatus EventCancelled → cancelled; EventScheduled → not', () => {
    assert.equal(byTitle(events, 'Junior Naturalists: Owl Pellets').cancelled, true);
    assert.equal(byTitle(events, 'Winter Wonderland Family Festival').cancelled, false);
    assert.equal(byTitle(events, 'Little Chefs: Cookie Decorating').cancelled, false);
  });

  test('audience suggestedMinAge/suggestedMaxAge (numbers or strings) → "ages A-B"', () => {
    assert.equal(byTitle(events, 'Little Chefs: Cookie Decorating').ages, 'ages 4-7');
    assert.equal(byTitle(events, 'Junior Naturalists: Owl Pellets').ages, 'ages 8-12');
    assert.equal(byTitle(events, 'Winter Wonderland Family Festival').ages, null);
  });

  test('image, organizer and HTML description come through', () => {
    const fest = byTitle(events, 'Winter Wonderland Family Festival');
    assert.equal(fest.imageUrl, 'https://lafayettecc.example.org/wp-content/uploads/2026/10/winter-wonderland.jpg');
    assert.equal(fest.organizerUrl, 'https://lafayettecc.example.org/organizer/parks-rec/');
    assert.match(fest.organizerName ?? '', /^Lafayette Parks, Trails/);
    assert.match(fest.description ?? '', /^<p>Snow play, cocoa/);
  });
});

describe('parseJsonLd: Drupal listing with one <script> per event', () => {
  const { events, noStart } = parseJsonLd(fixture('per-event-scripts.html'), { window: WINDOW });

  test('each script’s event is read; the BreadcrumbList (with its ListItems) is not an event', () => {
    assert.deepEqual(
      events.map((e) => e.uid),
      ['node-8812', 'node-8813'],
    );
  });

  test('an event with an empty startDate is counted in noStart', () => {
    assert.equal(noStart, 1);
    assert.ok(!events.some((e) => e.title === 'Winter Reading Kickoff'));
  });

  test('a startDate without an offset is Los Angeles wall-clock time', () => {
    assert.equal(byTitle(events, 'Baby Sign Language').start.at.toMillis(), wall('2027-01-09T10:30'));
    assert.equal(byTitle(events, 'Family Movie Matinee').start.at.toMillis(), wall('2026-12-19T14:00'));
  });

  test('keywords become categories; "true" as a string is free; audienceType is the ages text', () => {
    const movie = byTitle(events, 'Family Movie Matinee');
    assert.deepEqual(movie.categories, ['Movies', 'Family']);
    assert.equal(movie.isFree, true);
    assert.equal(movie.location, 'Albany Library Community Room, 1247 Marin Ave, Albany, CA 94706');
    assert.equal(movie.organizerName, 'Albany Library');
    assert.equal(byTitle(events, 'Baby Sign Language').ages, 'Babies 6-18 months with a caregiver');
  });
});

describe('parseJsonLd: ItemList of ListItem → Event', () => {
  const { events } = parseJsonLd(fixture('itemlist-page.html'), { window: WINDOW });

  test('events nested in itemListElement[].item are found, including a full-URL @type', () => {
    assert.deepEqual(
      events.map((e) => e.uid),
      ['https://cdm.example.org/events/bubble-day-2026', 'https://cdm.example.org/events/new-years-noon-2026'],
    );
  });

  test('fields of the nested events: place, geo, "$17" price, date-only start', () => {
    const bubbles = byTitle(events, 'Bubble Day');
    assert.equal(bubbles.start.at.toMillis(), wall('2026-12-27T10:00'));
    assert.match(bubbles.location ?? '', /^Children's Discovery Museum, 180 Woz Way, San Jose/);
    assert.equal(bubbles.lat, 37.327);
    assert.equal(bubbles.lng, -121.8925);
    assert.deepEqual([bubbles.priceMin, bubbles.priceMax], [17, 17]);
    assert.equal(bubbles.priceText, 'Included with museum admission ($17; members free)');
    const noon = byTitle(events, "Noon Year's Eve Countdown");
    assert.equal(noon.start.dateOnly, true);
    assert.equal(noon.start.at.toMillis(), wall('2026-12-31T00:00'));
    assert.equal(noon.location, "Children's Discovery Museum, 180 Woz Way, San Jose");
  });
});

describe('parseJsonLd: broken and missing JSON-LD', () => {
  // A theme template that interpolated a title with quotes, and a trailing comma: both real-world breakage.
  const BROKEN_QUOTES = '{"@context":"https://schema.org","@type":"Event","name":"Teen "Open Mic" Night","startDate":"2026-12-04T18:00:00-08:00"}';
  const BROKEN_COMMA = '{"@context":"https://schema.org","@type":"Event","name":"Teen Open Mic","startDate":"2026-12-04T18:00:00-08:00",}';

  test('a broken JSON block beside a good one: the good one’s events still parse', () => {
    const { events } = parseJsonLd(page(BROKEN_QUOTES, GOOD, BROKEN_COMMA), { window: WINDOW });
    assert.deepEqual(
      events.map((e) => e.title),
      ['Gingerbread House Workshop'],
    );
    assert.equal(events[0]!.start.at.toMillis(), wall('2026-12-13T13:00'));
    assert.equal(events[0]!.location, 'Piedmont Center for the Arts, 801 Magnolia Ave, Piedmont, CA');
  });

  test('a page whose only JSON-LD blocks are broken throws FeedFormatError', () => {
    assert.throws(() => parseJsonLd(page(BROKEN_QUOTES, BROKEN_COMMA), { window: WINDOW }), FeedFormatError);
  });

  test('a page with no JSON-LD returns zero events', () => {
    const html =
      '<!DOCTYPE html><html><head><title>Calendar</title><script>window.dataLayer=[];</script></head><body><ul><li>Storytime – Tue 10:30</li></ul></body></html>';
    assert.deepEqual(parseJsonLd(html, { window: WINDOW }), { events: [], noStart: 0 });
  });

  test('JSON-LD with no events (only Organization/WebSite) returns zero events', () => {
    const org = JSON.stringify({ '@context': 'https://schema.org', '@type': 'Organization', name: 'Piedmont Recreation' });
    assert.deepEqual(parseJsonLd(page(org), { window: WINDOW }), { events: [], noStart: 0 });
  });

  test('a body that is not HTML (bare JSON, iCalendar) throws FeedFormatError', () => {
    assert.throws(() => parseJsonLd(GOOD, { window: WINDOW }), FeedFormatError);
    assert.throws(() => parseJsonLd(fixture('libcal-events.ics'), { window: WINDOW }), FeedFormatError);
  });
});

describe('parseJsonLd: malformed and unusual input', () => {
  test('isAccessibleForFree "false" (a string) → isFree false, as "true" → true', () => {
    const ev = JSON.stringify({
      '@context': 'https://schema.org',
      '@type': 'Event',
      name: 'Robotics Camp',
      startDate: '2026-12-28T09:00:00-08:00',
      isAccessibleForFree: 'false',
    });
    assert.equal(parseJsonLd(page(ev), { window: WINDOW }).events[0]!.isFree, false);
  });
});

describe('parseJsonLd: duration and offers of real pages', () => {
  test('majestic-bay.jsonld.html: a screening with "duration" and no endDate ends start + duration', () => {
    // Verbatim from the page, one of its 55 VisualArtsEvent screenings.
    const hamnet =
      '{"@type": "VisualArtsEvent", "startDate": "2026-02-15T12:30:00-08:00", "duration": "PT2H6M", "location": {"@type": "Place", "address": "2044 NW Market St., Seattle, WA, 98107, USA", "name": "Majestic Bay Theatres"}, "name": "Hamnet", "url": "https://ticketing.useast.veezi.com/purchase/34125?siteToken=qnxpcc571jey8whdwrczs2c7g8", "@context": "http://schema.org"}';
    const [ev] = parseJsonLd(page(hamnet), { window: WINDOW }).events;
    assert.equal(ev!.end?.at.toISO(), '2026-02-15T14:36:00.000-08:00');
    assert.equal(ev!.end?.dateOnly, false);
  });
  test('an endDate wins over a duration; a date-only start or an unreadable duration gives no end', () => {
    const ev = (extra: object) =>
      parseJsonLd(page(JSON.stringify({ '@type': 'Event', name: 'Film', startDate: '2026-12-13T13:00:00-08:00', ...extra })), { window: WINDOW }).events[0]!;
    assert.equal(ev({ duration: 'PT2H', endDate: '2026-12-13T14:00:00-08:00' }).end?.at.toISO(), '2026-12-13T14:00:00.000-08:00');
    assert.equal(ev({ duration: 'two hours' }).end, null);
    assert.equal(ev({ startDate: '2026-12-13', duration: 'PT2H' }).end, null);
  });
  test('fremont-abbey.jsonld.html: a zero-priced "Donate to Support the Arts" ticket is no price; ticket labels are no price text', () => {
    const offers = [
      { '@type': 'AggregateOffer', offerCount: 3, priceCurrency: 'USD' },
      { '@type': 'Offer', name: 'Donate to Support the Arts', price: 0 },
      { '@type': 'Offer', name: 'Day of Show', price: 17 },
      { '@type': 'Offer', name: 'General Admission', price: 17 },
    ];
    const [moth] = parseJsonLd(
      page(
        JSON.stringify({ '@type': 'Event', name: "5/15 The Moth StorySLAM @ BLOEDEL HALL, ST. MARK'S Seattle", startDate: '2026-05-15T19:00:00-0700', offers }),
      ),
      { window: WINDOW },
    ).events;
    assert.deepEqual([moth!.priceMin, moth!.priceMax, moth!.priceText], [17, 17, null]);
    // All tickets pay-what-you-can: no price, and nothing says free.
    const sliding = [
      { '@type': 'Offer', name: 'Donate to Support the Arts', price: 0 },
      { '@type': 'Offer', name: 'Sliding Scale', price: 0 },
    ];
    const [gathering] = parseJsonLd(
      page(JSON.stringify({ '@type': 'Event', name: '5/24 The Not-Creepy Gathering', startDate: '2026-05-24T19:00:00-0700', offers: sliding })),
      { window: WINDOW },
    ).events;
    assert.deepEqual([gathering!.priceMin, gathering!.priceMax, gathering!.isFree], [null, null, null]);
    // Volunteer shifts, all priced 0 and named for their shift: free, and the shift name is no price text.
    const shifts = [{ '@type': 'Offer', name: '5/7 Poranguí and Andy Fischer-Price - 1-4p @ WASHINGTON HALL', price: 0 }];
    const [volunteer] = parseJsonLd(
      page(
        JSON.stringify({
          '@type': 'Event',
          name: 'Volunteer to support live music & arts in Seattle [2026 Events]',
          startDate: '2026-05-07T13:00:00-0700',
          offers: shifts,
        }),
      ),
      { window: WINDOW },
    ).events;
    assert.deepEqual([volunteer!.priceMin, volunteer!.priceMax, volunteer!.priceText], [0, 0, null]);
  });
});

describe('parseJsonLd: slashed quotes (PHP addslashes before JSON-encoding)', () => {
  test('hidden-hall.jsonld.html: "Mo\\\\\' Jam Mondays" is Mo\' Jam Mondays, in the title and the description', () => {
    // Verbatim from the page: the JSON string holds an escaped backslash before the apostrophe.
    const moJam = String.raw`{"@context":"http://schema.org","@type":"Event","name":"Mo\\' Jam Mondays","description":"&lt;p&gt;&lt;strong&gt;3.2 Monday (Mo\\' Jam)&lt;/strong&gt;&lt;/p&gt;","startDate":"2026-12-07T19:30:00-08:00"}`;
    const [ev] = parseJsonLd(page(moJam), { window: WINDOW }).events;
    assert.equal(ev!.title, "Mo' Jam Mondays");
    assert.ok(!ev!.description!.includes('\\'), ev!.description!);
  });
});
