import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseRss } from '../../../../workers/snapshot/parse/rss.ts';
import { FeedFormatError } from '../../../../workers/snapshot/parse/types.ts';
import { byTitle, fixture, wall, WINDOW } from './helpers.ts';

const drupal = fixture('drupal-events.rss');
const atom = fixture('parks-events.atom');

const rss = (items: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:ev="http://purl.org/rss/1.0/modules/event/" xmlns:georss="http://www.georss.org/georss">
<channel><title>Test feed</title><link>https://events.example.org/</link><description>x</description>
${items}
</channel></rss>`;

describe('parseRss: RSS 2.0 with the event module (Drupal Views export)', () => {
  const { events, noStart } = parseRss(drupal, { window: WINDOW });

  test('ev:startdate/ev:enddate with an offset are read as instants', () => {
    const e = byTitle(events, 'Pumpkin Patch &amp; Hay Rides at Krusi Park');
    assert.equal(e.start.at.toMillis(), wall('2026-11-28T10:00'));
    assert.equal(e.end?.at.toMillis(), wall('2026-11-28T14:00'));
    assert.equal(e.start.dateOnly, false);
  });

  test('guid, link, ev:location, ev:organizer, categories + ev:type, georss:point and the image enclosure are mapped', () => {
    const e = byTitle(events, 'Pumpkin Patch &amp; Hay Rides at Krusi Park');
    assert.equal(e.uid, '4412 at https://www.cityofalameda.example.gov');
    assert.equal(e.url, 'https://www.cityofalameda.example.gov/recreation/events/pumpkin-patch-hay-rides');
    assert.equal(e.location, 'Krusi Park, 2900 Otis Dr, Alameda, CA 94501');
    assert.equal(e.organizerName, 'Alameda Recreation & Parks', 'an XML entity outside CDATA is decoded');
    assert.deepEqual(e.categories, ['Family', 'Seasonal', 'Festival']);
    assert.equal(e.lat, 37.7577);
    assert.equal(e.lng, -122.2478);
    assert.equal(e.imageUrl, 'https://www.cityofalameda.example.gov/sites/default/files/styles/large/public/pumpkins.jpg');
    assert.equal(e.cancelled, false);
  });

  test('a CDATA description keeps its HTML and entities verbatim, untruncated (normalize decodes them)', () => {
    const e = byTitle(events, 'Pumpkin Patch &amp; Hay Rides at Krusi Park');
    assert.match(e.description ?? '', /^<div class="field field--name-body"><p>Pick a pumpkin/);
    assert.match(e.description ?? '', /cookies&nbsp;&mdash; fun/);
    assert.match(e.description ?? '', /<strong>Free<\/strong> admission; pumpkins \$5&ndash;\$10\.<\/p>/);
    assert.match(e.description ?? '', /<\/div>$/);
  });

  test('an entity-escaped (non-CDATA) description arrives as HTML', () => {
    assert.equal(byTitle(events, 'Toddler Open Gym').description, '<p>Balls, mats and ride-on toys for walkers up to age 4. Parent/caregiver must attend.</p>');
  });

  test('a start without an offset, wrapped in whitespace, is Los Angeles wall-clock time', () => {
    const e = byTitle(events, 'Toddler Open Gym');
    assert.equal(e.start.at.toMillis(), wall('2026-12-05T09:30'));
    assert.equal(e.end?.at.toMillis(), wall('2026-12-05T11:00'));
    assert.match(e.location ?? '', /^Mastick Senior Center Gym,\s+1155 Santa Clara Ave$/);
  });

  test('ev:status cancelled → cancelled: true', () => {
    assert.equal(byTitle(events, 'Toddler Open Gym').cancelled, true);
  });

  test('an item without ev:startdate is counted in noStart; its pubDate is not an event time', () => {
    assert.equal(noStart, 1);
    assert.equal(events.length, 2);
    assert.ok(!events.some((e) => e.title.startsWith('Registration for Winter Camps')));
  });

  test('pubDate alone, even inside the window, never becomes a start', () => {
    const out = parseRss(
      rss(`<item><title>Storytime is back!</title><link>https://events.example.org/news/1</link><guid>news-1</guid>
        <pubDate>Tue, 24 Nov 2026 18:30:00 GMT</pubDate></item>`),
      { window: WINDOW },
    );
    assert.deepEqual(out, { events: [], noStart: 1 });
  });
});

describe('parseRss: Atom with the event module', () => {
  const { events, noStart } = parseRss(atom, { window: WINDOW });

  test('entries carrying ev: elements parse with id, alternate link, category terms, times, place and point', () => {
    assert.equal(events.length, 1);
    const e = events[0]!;
    assert.equal(e.uid, 'tag:parks.example.org,2026:program/7781');
    assert.equal(e.url, 'https://parks.example.org/programs/7781-newts-salamanders');
    assert.equal(e.title, 'Newts &amp; Salamanders Family Walk', 'type="html" title stays HTML');
    assert.equal(e.description, '<p>Search for newts along the creek with a naturalist. Ages 5 and up.</p>');
    assert.deepEqual(e.categories, ['Nature', 'Outdoors']);
    assert.equal(e.start.at.toMillis(), wall('2026-12-12T10:00'));
    assert.equal(e.end?.at.toMillis(), wall('2026-12-12T11:30'));
    assert.equal(e.location, 'Tilden Nature Area, Environmental Education Center');
    assert.equal(e.organizerName, 'East Bay Regional Park District');
    assert.equal(e.lat, 37.9074);
    assert.equal(e.lng, -122.2634);
  });

  test('an Atom entry without ev:startdate is counted in noStart (its <updated> is not an event time)', () => {
    assert.equal(noStart, 1);
  });
});

describe('parseRss: documents that are not feeds', () => {
  test('malformed XML (an unclosed tag) throws FeedFormatError', () => {
    const broken = drupal.replace('<ev:organizer>Alameda Recreation &amp; Parks</ev:organizer>', '<ev:organizer>Alameda Recreation &amp; Parks');
    assert.notEqual(broken, drupal);
    assert.throws(() => parseRss(broken, { window: WINDOW }), FeedFormatError);
  });

  test('a feed cut off mid-document throws FeedFormatError', () => {
    assert.throws(() => parseRss(drupal.slice(0, drupal.indexOf('<item>', drupal.indexOf('<item>') + 1)), { window: WINDOW }), FeedFormatError);
  });

  test('an iCalendar body throws FeedFormatError', () => {
    assert.throws(() => parseRss(fixture('google-calendar-library.ics'), { window: WINDOW }), FeedFormatError);
  });

  test('an HTML page throws FeedFormatError', () => {
    assert.throws(() => parseRss(fixture('tec-graph-page.html'), { window: WINDOW }), FeedFormatError);
  });
});

describe('parseRss: malformed and unusual input', () => {
  test('comma-separated ev:type values are trimmed like every other category', () => {
    const { events } = parseRss(
      rss(`<item><title>Baby Bounce</title><guid>bb-1</guid><ev:startdate>2026-12-01T10:00:00-08:00</ev:startdate>
        <ev:type>Storytime, Family; Babies</ev:type></item>`),
      { window: WINDOW },
    );
    assert.deepEqual(events[0]!.categories, ['Storytime', 'Family', 'Babies']);
  });

  test('an item without <guid> keeps the same uid when only its pubDate changes', () => {
    const item = (pub: string): string =>
      rss(`<item><title>Lego Free Build</title><link>https://events.example.org/lego-free-build</link>
        <pubDate>${pub}</pubDate><ev:startdate>2026-12-03T15:30:00-08:00</ev:startdate></item>`);
    const first = parseRss(item('Mon, 02 Nov 2026 17:00:00 GMT'), { window: WINDOW }).events[0]!;
    const edited = parseRss(item('Thu, 19 Nov 2026 09:12:00 GMT'), { window: WINDOW }).events[0]!;
    assert.equal(edited.uid, first.uid);
  });

  test('numeric-looking text (guid "000123", ev:price "5.00") is kept as written', () => {
    const { events } = parseRss(
      rss(`<item><title>Puppet Show</title><guid isPermaLink="false">000123</guid><ev:startdate>2026-12-06T11:00:00-08:00</ev:startdate>
        <ev:price>5.00</ev:price></item>`),
      { window: WINDOW },
    );
    assert.equal(events[0]!.uid, '000123');
    assert.equal(events[0]!.priceText, '5.00');
  });

  test('a well-formed Atom feed with no entries is an empty result, not an unreadable document', () => {
    const empty = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ev="http://purl.org/rss/1.0/modules/event/">
  <title>Naturalist Programs</title><id>tag:parks.example.org,2026:programs</id><updated>2026-11-15T08:00:00Z</updated>
</feed>`;
    assert.deepEqual(parseRss(empty, { window: WINDOW }), { events: [], noStart: 0 });
  });
});
