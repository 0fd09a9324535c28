import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseRss } from '../../../snapshot/parse/rss.ts';
import { FeedFormatError } from '../../../snapshot/parse/types.ts';
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
    assert.deepEqual(out, { events: [], noStart: 1, noStartItems: [{ position: 0, uid: 'news-1', title: 'Storytime is back!' }] });
  });

  // An event listing (a show radar, a venue's feed) that writes each show's time as its pubDate:
  // nothing is posted after the feed was built, so a pubDate past lastBuildDate is the show's time.
  const listing = (build: string, posted: string): string =>
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Shows</title><link>https://shows.example.org</link>
      <lastBuildDate>${build}</lastBuildDate>
      <item><title>Band @ Fox Theater - Oakland</title><guid>s-1</guid><pubDate>${posted}</pubDate></item></channel></rss>`;

  test("a pubDate later than the feed's own build date is the time the item is about", () => {
    const out = parseRss(listing('Mon, 23 Nov 2026 16:26:11 +0000', 'Thu, 03 Dec 2026 04:30:00 +0000'), { window: WINDOW });
    assert.equal(out.noStart, 0);
    assert.equal(out.events[0]!.start.at.toMillis(), wall('2026-12-02T20:30'));
    assert.equal(out.events[0]!.start.dateOnly, false);
  });

  test('a pubDate before (or within an hour of) the build date is when it was posted, never a start', () => {
    for (const posted of ['Sun, 22 Nov 2026 18:30:00 +0000', 'Mon, 23 Nov 2026 16:56:11 +0000']) {
      assert.equal(parseRss(listing('Mon, 23 Nov 2026 16:26:11 +0000', posted), { window: WINDOW }).noStart, 1, posted);
    }
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

// Trumba's RSS (knco-nevada-county.trumba-rss.xml, the KNCO community calendar of Nevada County,
// CA) has no event-module elements: the day is a <category>, the place and times are the first
// lines of the description.
const trumba = (items: string): string =>
  `<?xml version="1.0" encoding="utf-8"?>
<rss xmlns:x-trumba="http://schemas.trumba.com/rss/x-trumba" version="2.0"><channel><title>Tourism KNCO</title>
<link>https://knco.com/community/community-calendar/</link><description />
${items}
</channel></rss>`;

describe('parseRss: Trumba RSS (date in <category>, place and times in the description)', () => {
  const { events, noStart } = parseRss(
    trumba(`
<item>
  <title>A Visual Journey Through Nevada County</title>
  <description>Seven Stars Gallery 210 Spring Street &lt;br/&gt;Tuesday, October 7, 2025, 11am&amp;nbsp;&amp;ndash;&amp;nbsp;5pm &lt;br/&gt;&lt;br/&gt;&lt;b&gt;Type of Event&lt;/b&gt;:&amp;nbsp;Children / Family, Community, Visual Art / Gallery &lt;br/&gt;&lt;b&gt;Price&lt;/b&gt;:&amp;nbsp;free - donations welcome</description>
  <link>https://knco.com/community/community-calendar/?trumbaEmbed=view%3devent%26eventid%3d191100094</link>
  <category>2025/10/07 (Tue)</category>
  <guid isPermaLink="false">http://uid.trumba.com/event/191100094</guid>
</item>
<item>
  <title>The Rise &#38; Speak Experience</title>
  <description>119 Florence Ave.&lt;br /&gt;Grass Valley, CA 95945 &lt;br/&gt;Tuesday, October 7, 2025, 6&amp;nbsp;&amp;ndash;&amp;nbsp;8:30pm &lt;br/&gt;&lt;br/&gt;A night of stories.</description>
  <category>2025/10/07 (Tue)</category>
  <guid isPermaLink="false">http://uid.trumba.com/event/1</guid>
</item>
<item>
  <title>Oktoberfest!</title>
  <description>Grass Valley Moose Lodge&lt;br /&gt;15694 Allison Ranch Rd.&lt;br /&gt;Grass Valley, CA&lt;br /&gt;95949 &lt;br/&gt;Saturday, October 11, 2025, 4&amp;nbsp;&amp;ndash;&amp;nbsp;8pm &lt;br/&gt;&lt;br/&gt;&lt;b&gt;Type of Event&lt;/b&gt;:&amp;nbsp;Beer / Wine / Food, Children / Family</description>
  <category>2025/10/11 (Sat)</category>
  <guid isPermaLink="false">http://uid.trumba.com/event/2</guid>
</item>
<item>
  <title>Thriving Amidst Chaos</title>
  <description>Expanding Light Retreat, Ananda Village, 13930 Expanding Light Drive, Nevada City, CA. &lt;br/&gt;Friday, October 10, 3pm&amp;nbsp;&amp;ndash; Sunday, October 12, 2025, 1:30pm &lt;br/&gt;&lt;br/&gt;Retreat.</description>
  <category>2025/10/10 (Fri)</category>
  <guid isPermaLink="false">http://uid.trumba.com/event/3</guid>
</item>
<item>
  <title>Playwrights Group</title>
  <description>Private residence in Grass Valley. &lt;br/&gt;Wednesday, October 15, 2025, 4:30pm &lt;br/&gt;&lt;br/&gt;Meet with fellow playwrights twice a month.</description>
  <category>2025/10/15 (Wed)</category>
  <guid isPermaLink="false">http://uid.trumba.com/event/4</guid>
</item>
<item>
  <title>Yoga Teacher Training in Rishikesh India @699 USD</title>
  <description>rishikesh nirmal block b 249204 &lt;br/&gt;Ongoing through Monday, December 24, 2029 &lt;br/&gt;&lt;br/&gt;Rishikesh is renowned as the "Yoga Capital of the World".</description>
  <category>2024/10/02 (Wed)</category>
  <guid isPermaLink="false">http://uid.trumba.com/event/177609910</guid>
</item>
<item>
  <title>Lines that do not read</title>
  <description>Somewhere &lt;br/&gt;Sometime soon &lt;br/&gt;&lt;br/&gt;Details.</description>
  <category>2025/10/20 (Mon)</category>
  <guid isPermaLink="false">http://uid.trumba.com/event/5</guid>
</item>`),
    { window: WINDOW },
  );

  test('every item has a start: none is skipped', () => {
    assert.equal(noStart, 0);
    assert.equal(events.length, 7);
  });

  test('"Tuesday, October 7, 2025, 11am – 5pm" and "6 – 8:30pm" (the start shares the end\'s pm)', () => {
    const visual = byTitle(events, 'A Visual Journey Through Nevada County');
    assert.equal(visual.start.at.toMillis(), wall('2025-10-07T11:00'));
    assert.equal(visual.end?.at.toMillis(), wall('2025-10-07T17:00'));
    const rise = byTitle(events, 'The Rise &#38; Speak Experience');
    assert.equal(rise.start.at.toMillis(), wall('2025-10-07T18:00'));
    assert.equal(rise.end?.at.toMillis(), wall('2025-10-07T20:30'));
  });

  test('the lines before the date line are the place; the date category is not a category', () => {
    assert.equal(byTitle(events, 'A Visual Journey Through Nevada County').location, 'Seven Stars Gallery 210 Spring Street');
    assert.equal(byTitle(events, 'The Rise &#38; Speak Experience').location, '119 Florence Ave., Grass Valley, CA 95945');
    const ok = byTitle(events, 'Oktoberfest!');
    assert.equal(ok.location, 'Grass Valley Moose Lodge, 15694 Allison Ranch Rd., Grass Valley, CA, 95949');
    assert.equal(ok.start.at.toMillis(), wall('2025-10-11T16:00'));
    assert.ok(events.every((e) => e.categories.length === 0));
  });

  test('"Friday, October 10, 3pm – Sunday, October 12, 2025, 1:30pm": several days, the year from the end', () => {
    const retreat = byTitle(events, 'Thriving Amidst Chaos');
    assert.equal(retreat.start.at.toMillis(), wall('2025-10-10T15:00'));
    assert.equal(retreat.end?.at.toMillis(), wall('2025-10-12T13:30'));
  });

  test('"Wednesday, October 15, 2025, 4:30pm": a start and no end', () => {
    const p = byTitle(events, 'Playwrights Group');
    assert.equal(p.start.at.toMillis(), wall('2025-10-15T16:30'));
    assert.equal(p.end, null);
  });

  test('"Ongoing through Monday, December 24, 2029": all days from the category\'s day to that one', () => {
    const yoga = byTitle(events, 'Yoga Teacher Training in Rishikesh India @699 USD');
    assert.equal(yoga.start.dateOnly, true);
    assert.equal(yoga.start.at.toMillis(), wall('2024-10-02T00:00'));
    assert.equal(yoga.end?.dateOnly, true);
    assert.equal(yoga.end?.at.toMillis(), wall('2029-12-24T00:00'));
  });

  test("a date line that does not read leaves the category's day, all day", () => {
    const e = byTitle(events, 'Lines that do not read');
    assert.equal(e.start.dateOnly, true);
    assert.equal(e.start.at.toMillis(), wall('2025-10-20T00:00'));
    assert.equal(e.location, null);
  });

  test('a category that merely looks like a date in another shape is a category, and no start', () => {
    const out = parseRss(trumba(`<item><title>News</title><description>x</description><category>2025-10-07</category><guid>n1</guid></item>`), {
      window: WINDOW,
    });
    assert.equal(out.noStart, 1);
  });
});

// WordPress "event_listing" posts (royal-room.wp-rss.xml, The Royal Room, Seattle) keep the event's
// time in the plugin's own namespace; pubDate is still only when the post was written.
describe('parseRss: WordPress event_listing namespace', () => {
  const wp = (item: string): string => `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"
    xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:event_listing="https://theroyalroomseattle.com"><channel>${item}</channel></rss>`;

  test('event_listing:start_date "2026-05-10 19:30:00" is the start; location "-" is no place; ticket_price "Free" is the price', () => {
    const { events, noStart } = parseRss(
      wp(`<item>
	<title>Sh&#8217;ma presents Meeting Worlds: Jazz, Folk, &#038; Indian Classical</title>
	<link>https://theroyalroomseattle.com/event/sh-ma/</link>
	<pubDate>Wed, 22 Apr 2026 06:35:25 +0000</pubDate>
	<guid isPermaLink="false">https://theroyalroomseattle.com/?post_type=event_listing&#038;p=8386</guid>
	<description><![CDATA[Doors: 6:30pm ⎮ Show: 7:30pm Tickets: $20 advance, $25 doors]]></description>
	<event_listing:location><![CDATA[-]]></event_listing:location>
<event_listing:start_date><![CDATA[2026-05-10 19:30:00]]></event_listing:start_date>
<event_listing:ticket_price><![CDATA[Free]]></event_listing:ticket_price>
</item>`),
      { window: WINDOW },
    );
    assert.equal(noStart, 0);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.start.at.toMillis(), wall('2026-05-10T19:30'));
    assert.equal(events[0]!.start.dateOnly, false);
    assert.equal(events[0]!.end, null);
    assert.equal(events[0]!.location, null);
    assert.equal(events[0]!.priceText, 'Free');
  });

  test('event_listing:end_date is the end', () => {
    const { events } = parseRss(
      wp(`<item><title>Nicholas Krolak – PAST LIVES Album Release Concert</title><guid>p7969</guid>
<event_listing:start_date><![CDATA[2026-06-05 19:30:00]]></event_listing:start_date>
<event_listing:end_date><![CDATA[2026-06-05 22:00:00]]></event_listing:end_date></item>`),
      { window: WINDOW },
    );
    assert.equal(events[0]!.end?.at.toMillis(), wall('2026-06-05T22:00'));
  });

  test('a post with only its pubDate is still skipped', () => {
    const out = parseRss(wp(`<item><title>Closed for Memorial Day</title><guid>p1</guid><pubDate>Wed, 22 Apr 2026 06:35:25 +0000</pubDate></item>`), {
      window: WINDOW,
    });
    assert.equal(out.noStart, 1);
  });
});

describe('parseRss: feed-level dates that are not text', () => {
  // Found by test/fuzzing (seed 1331518938): a feed date element with attributes and no text
  // reached the date reader as an object and threw instead of being ignored.
  test('an Atom <updated> with attributes and no text is ignored, the entries still read', () => {
    const atom =
      '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ev="http://purl.org/rss/1.0/modules/event/">' +
      '<title>Parks</title><id>tag:parks.example.org,2026:programs</id><updated href="https://parks.example.org/feed.atom" />' +
      '<entry><title>Newts Family Walk</title><id>tag:parks.example.org,2026:program/7781</id>' +
      '<link rel="alternate" type="text/html" href="https://parks.example.org/programs/7781" /><updated>2026-11-10T21:15:00Z</updated>' +
      '<ev:startdate>2026-12-12T10:00:00-08:00</ev:startdate><ev:location>Tilden Nature Area</ev:location></entry></feed>';
    const out = parseRss(atom, { window: WINDOW });
    assert.deepEqual(
      out.events.map((e) => e.title),
      ['Newts Family Walk'],
    );
  });
});
