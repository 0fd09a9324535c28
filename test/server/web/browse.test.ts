// The browse pages over real HTTP (issue 28, items 1, 2, 3, 7 and 8), on a snapshot built, and a
// server clocked, on a Thursday: "this week" lists nothing that has ended; the filters are a
// disclosure whose summary counts them, closed unless one has an error, and the form leads to the
// results; the heading and <title> say what was searched, escaped, with the page number when paged;
// every kind of invalid value in every field of the form is reported in the form's words, never
// by a parameter name (the API's problem+json keeps its names). Pages are read with htmlparser2.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseDocument } from 'htmlparser2';
import { findAll, findOne, getAttributeValue, textContent } from 'domutils';
import type { Document, Element } from 'domhandler';
import { get, startTestServer, type TestServer } from '../helpers.ts';
import { webFixture, type WebFixture } from './fixture.ts';

/** Thursday, Nov 19, 2026, mid-morning in the Bay Area: Monday's to Wednesday's events have ended. */
const THURSDAY_ISO = '2026-11-19T10:00:00-08:00';
const THURSDAY = new Date(THURSDAY_ISO);
const MONDAY_MS = Date.parse('2026-11-16T00:00:00-08:00');

let fx: WebFixture;
let srv: TestServer;

before(
  async () => {
    fx = await webFixture(THURSDAY);
    srv = await startTestServer(fx.dataDir, { FAMILY_EVENTS_NOW: THURSDAY_ISO, WEB_LISTINGS_PER_MINUTE: '100000', WEB_CALENDARS_PER_MINUTE: '100000' });
  },
  { timeout: 180_000 },
);
after(async () => {
  await srv?.stop();
  await fx?.cleanup();
});

const parse = (text: string): Document => parseDocument(text);
const all = (doc: Document | Element, pred: (e: Element) => boolean): Element[] => findAll(pred, 'children' in doc ? doc.children : []);
const one = (doc: Document | Element, pred: (e: Element) => boolean): Element | null => findOne(pred, 'children' in doc ? doc.children : []);
const text = (e: Element | null): string => (e ? textContent(e).replace(/\s+/g, ' ').trim() : '');
const hasClass = (name: string) => (e: Element) => (getAttributeValue(e, 'class') ?? '').split(' ').includes(name);
const byTag = (name: string) => (e: Element) => e.name === name;

async function page(p: string, status = 200): Promise<{ doc: Document; raw: string }> {
  const r = await get(srv.base, p);
  assert.equal(r.status, status, `GET ${p}: ${r.text.slice(0, 300)}`);
  return { doc: parse(r.text), raw: r.text };
}

/** The event ids a listing shows, in order. */
const cardIds = (doc: Document): string[] =>
  all(doc, hasClass('card')).map((c) => {
    const a = one(c, byTag('a'));
    return (getAttributeValue(a!, 'href') ?? '').replace('/events/', '');
  });

describe('item 1: this week on a Thursday', () => {
  test('/events?week=current lists no event that has ended, and no "Already under way" group of ended ones', async () => {
    const now = THURSDAY.getTime();
    const ended = fx.rows.filter((r) => r.start_ms >= MONDAY_MS && r.end_ms < now);
    assert.ok(ended.length > 20, `the snapshot has events of this week that ended before Thursday (${ended.length})`);
    const byId = new Map(fx.rows.map((r) => [r.id, r]));
    const { doc } = await page('/events?week=current');
    const ids = cardIds(doc);
    assert.ok(ids.length > 0, 'events listed');
    for (const id of ids) {
      const r = byId.get(id);
      assert.ok(r, `${id} is in the snapshot`);
      assert.ok(r.end_ms >= now, `${r.title} (${r.start_datetime} – ${r.end_datetime ?? ''}) has ended and is listed`);
    }
    for (const day of all(doc, hasClass('day'))) {
      if (text(one(day, byTag('h2'))) !== 'Already under way') continue;
      for (const card of all(day, hasClass('card'))) {
        const id = (getAttributeValue(one(card, byTag('a'))!, 'href') ?? '').replace('/events/', '');
        assert.ok((byId.get(id)?.end_ms ?? 0) >= now, `"Already under way" holds only events still on: ${id}`);
      }
    }
  });
});

describe('item 2: the filters fold into a disclosure', () => {
  test('the search box stays out of it, every other field is in it; its summary counts the filters set; closed unless a filter has an error', async () => {
    const plain = (await page('/events')).doc;
    const form = one(plain, (e) => e.name === 'form' && hasClass('filters')(e));
    assert.ok(form);
    const details = one(form, byTag('details'));
    assert.ok(details, 'a disclosure');
    assert.equal(text(one(details, byTag('summary'))), 'Filters');
    assert.equal(getAttributeValue(details, 'open'), undefined, 'closed');
    const inside = new Set(all(details, (e) => (e.name === 'input' || e.name === 'select') && e.attribs.name !== undefined).map((e) => e.attribs.name));
    const outside = all(form, (e) => (e.name === 'input' || e.name === 'select') && e.attribs.name !== undefined && !inside.has(e.attribs.name)).map(
      (e) => e.attribs.name,
    );
    assert.deepEqual(outside, ['q'], 'only the search box outside');
    for (const p of ['city', 'category', 'is_free', 'age_min', 'age_max', 'when', 'start_date', 'end_date', 'near', 'miles', 'lat', 'lng'])
      assert.ok(inside.has(p), `${p} inside`);

    for (const [query, summary] of [
      ['city=Berkeley', 'Filters (1 active)'],
      ['city=Berkeley&is_free=true&age_min=3&age_max=5&q=storytime', 'Filters (3 active)'],
      ['q=storytime', 'Filters'],
      ['week=next&category=music', 'Filters (2 active)'],
    ] as const) {
      const d = one((await page(`/events?${query}`)).doc, byTag('details'));
      assert.equal(text(one(d!, byTag('summary'))), summary, query);
      assert.equal(getAttributeValue(d!, 'open'), undefined, `${query}: closed`);
    }
    const city = one((await page('/cities/berkeley')).doc, byTag('summary'));
    assert.equal(text(city), 'Filters (1 active)', 'a city page has its city set');
    const bad = one((await page('/events?age_min=abc', 400)).doc, byTag('details'));
    assert.equal(getAttributeValue(bad!, 'open'), '', 'open when a filter has an error');
  });
});

describe('item 3: the heading and the title say what was searched', () => {
  const cases: readonly (readonly [string, string, string?])[] = [
    ['/events', 'Family events in the Bay Area'],
    ['/events?q=puppets', 'Events matching “puppets”'],
    ['/events?city=berkeley&category=storytime&is_free=true&age_min=3&age_max=5&week=current', 'Free storytime events in Berkeley for ages 3–5, this week'],
    ['/events?city=Berkeley,Oakland', 'Events in Berkeley or Oakland'],
    ['/events?is_free=false&age_min=6', 'Paid events for ages 6 and up'],
    ['/events?category=music,dance&age_max=5', 'Music or dance events for ages 5 and under'],
    ['/events?age_min=4&age_max=4&week=next', 'Events for age 4, next week'],
    ['/events?start_date=2026-12-05&end_date=2026-12-07', 'Events from Dec 5 to Dec 7'],
    ['/events?start_date=2026-12-05&end_date=2026-12-05&city=Oakland', 'Events in Oakland, on Sat, Dec 5'],
    ['/events?week=2026-W49', 'Events in the week of Nov 30'],
    ['/events?lat=37.8716&lng=-122.2727&radius_km=5', 'Events within 3.1 miles of 37.8716, -122.2727'],
    ['/events?q=%3Cb%3Ebold%3C%2Fb%3E%20%26%20%22quoted%22', 'Events matching “<b>bold</b> & "quoted"”'],
    ['/cities/berkeley', 'Family events in Berkeley'],
    ['/cities/berkeley?is_free=true', 'Free events in Berkeley'],
    ['/categories/storytime', 'Storytime for families'],
    ['/categories/storytime?city=Oakland&age_max=5', 'Storytime events in Oakland for ages 5 and under'],
    ['/events?q=storytime&offset=20', 'Events matching “storytime”', ' (page 2)'],
    ['/events?offset=20', 'Family events in the Bay Area', ' (page 2)'],
    ['/cities/berkeley?category=storytime&offset=40&limit=20', 'Storytime events in Berkeley', ' (page 3)'],
  ];
  for (const [p, heading, paged] of cases) {
    test(`${p}: “${heading}”`, async () => {
      const { doc, raw } = await page(p);
      assert.equal(text(one(doc, byTag('h1'))), heading);
      assert.equal(text(one(doc, byTag('title'))), `${heading}${paged ?? ''} – Family Events`);
      assert.equal(
        getAttributeValue(
          one(doc, (e) => e.name === 'meta' && e.attribs.property === 'og:title')!,
          'content',
        ),
        `${heading}${paged ?? ''} – Family Events`,
      );
      // Escaped: the text of a search never becomes markup.
      assert.ok(!raw.includes('<b>bold'), 'no markup from the search text');
    });
  }
  test('a search that could not run keeps the page heading; its title starts "Error:"', async () => {
    const { doc } = await page('/events?age_min=abc&city=Berkeley', 400);
    assert.equal(text(one(doc, byTag('h1'))), 'Family events in the Bay Area');
    assert.equal(text(one(doc, byTag('title'))), 'Error: Family events in the Bay Area – Family Events');
  });
});

describe('item 7: errors in the form’s words', () => {
  /** The search's parameter names, as the API knows them; city, category and week are also plain words, and the form's labels. */
  const NAMES = /\b(?:age_min|age_max|radius_km|start_date|end_date|is_free|lat|lng|sort|limit|offset|q|query)\b|\/v1\//;

  /** Every kind of invalid value the fields can be sent (some are valid for some fields; only the 400s are read). */
  const BAD = [
    'abc',
    '!!!',
    '-1',
    '19',
    '1.5',
    '999999',
    '1e999',
    'x'.repeat(300),
    '9'.repeat(70),
    '2026-13-01',
    '2026-02-30',
    'a,,b',
    ',',
    'Atlantis',
    '2026-W60',
    'maybe',
  ];

  /** The error text a person reads: the summary and each field's message. */
  const errorText = (doc: Document): string => [...all(doc, hasClass('error-summary')), ...all(doc, hasClass('field-error'))].map((e) => text(e)).join(' | ');

  async function check(query: string, seen: Set<string>): Promise<void> {
    const r = await get(srv.base, `/events?${query}`);
    if (r.status === 200) return;
    assert.equal(r.status, 400, `${query}: ${r.status}`);
    const doc = parse(r.text);
    const shown = errorText(doc);
    assert.ok(shown.length > 0, `${query}: errors shown`);
    assert.doesNotMatch(shown, NAMES, `${query}: ${shown}`);
    assert.doesNotMatch(text(one(doc, byTag('title'))), NAMES, `${query}: title`);
    seen.add(query.split('=')[0]!);
  }

  test('every kind of invalid value in every field of the form', async () => {
    const form = one((await page('/events')).doc, hasClass('filters'))!;
    const fields = [...new Set(all(form, (e) => (e.name === 'input' || e.name === 'select') && e.attribs.name !== undefined).map((e) => e.attribs.name!))];
    assert.ok(fields.length >= 12, fields.join(','));
    const refused = new Set<string>();
    for (const field of fields) {
      for (const value of BAD) await check(`${field}=${encodeURIComponent(value)}`, refused);
      // Broken percent-encoding and a field given twice: a hand-edited address.
      await check(`${field}=%ZZ`, refused);
      await check(`${field}=1&${field}=2`, refused);
    }
    assert.deepEqual(
      fields.filter((f) => !refused.has(f)),
      [],
      'every field was refused at least once',
    );
  });

  test('the rules between fields, and what only an address can carry', async () => {
    const seen = new Set<string>();
    for (const query of [
      'age_min=9&age_max=3',
      'start_date=2026-12-07&end_date=2026-12-05',
      'week=current&start_date=2026-12-01',
      'week=next&end_date=2026-12-01',
      'lat=37.8',
      'lng=-122.2',
      'radius_km=5',
      'radius_km=0&lat=37.8&lng=-122.2',
      'sort=distance',
      'sort=nearest',
      'limit=0',
      'limit=51',
      'offset=-1',
      'offset=abc',
      'city=Atlantis,Berkeley',
      'category=festivals,nonsense',
    ])
      await check(query, seen);
    assert.deepEqual(
      [...seen].sort(),
      ['age_min', 'category', 'city', 'lat', 'limit', 'lng', 'offset', 'radius_km', 'sort', 'start_date', 'week'],
      'each was refused',
    );
    // As a person reads the commonest ones.
    const { doc } = await page('/events?age_min=9&age_max=3', 400);
    assert.equal(text(one(doc, (e) => e.attribs.id === 'f-age_max-error')), 'Error: must not be less than “From age”; change one of the two');
    const lat = (await page('/events?lat=37.8', 400)).doc;
    // A link's point has no field of its own since the Near fieldset (item 4): said at the place field.
    assert.equal(
      text(one(lat, (e) => e.attribs.id === 'f-near-error')),
      'Error: The link’s latitude needs its partner: “Latitude” and “Longitude” are given together or not at all; or type a ZIP code or a town instead.',
    );
    const city = (await page('/events?city=Atlantis', 400)).doc;
    assert.equal(text(one(city, (e) => e.attribs.id === 'f-city-error')), 'Error: we have no events in "Atlantis"; choose a city from the list');
  });

  test('the calendar link’s error page too; the API keeps its parameter names', async () => {
    for (const q of ['age_min=9&age_max=3', 'city=Atlantis', 'lat=37.8']) {
      const r = await get(srv.base, `/events.ics?${q}`);
      assert.equal(r.status, 400, q);
      const main = text(one(parse(r.text), byTag('main')));
      assert.doesNotMatch(main, NAMES, `${q}: ${main}`);
    }
    const problem = await get(srv.base, '/v1/events?age_min=9&age_max=3');
    assert.equal(problem.status, 400);
    assert.deepEqual(problem.json.errors, [{ param: 'age_max', message: 'must not be less than age_min' }]);
  });
});

describe('item 8: the form leads to the results', () => {
  test('the form submits to #results, a focusable region named by its count; a skip link leads there first', async () => {
    const { doc } = await page('/events?city=Berkeley');
    const form = one(doc, hasClass('filters'))!;
    assert.equal(getAttributeValue(form, 'method'), 'get');
    assert.equal(getAttributeValue(form, 'action'), '/events#results');
    const region = one(doc, (e) => e.attribs.id === 'results')!;
    assert.ok(region);
    assert.equal(getAttributeValue(region, 'tabindex'), '-1');
    const label = one(doc, (e) => e.attribs.id === getAttributeValue(region, 'aria-labelledby'));
    assert.match(text(label), /^Showing 1–20 of [0-9,]+ events$/);
    const skips = all(doc, hasClass('skip-link')).map((a) => [text(a), getAttributeValue(a, 'href')]);
    assert.deepEqual(skips, [
      ['Skip to results', '#results'],
      ['Skip to content', '#main'],
    ]);
    const empty = (await page('/events?q=zzzzqqqq')).doc;
    assert.ok(
      one(empty, (e) => e.attribs.id === 'results'),
      'no results is still the results region',
    );
    const bad = (await page('/events?age_min=abc', 400)).doc;
    assert.deepEqual(
      all(bad, hasClass('skip-link')).map((a) => getAttributeValue(a, 'href')),
      ['#main'],
      'no skip link to results a search that could not run does not have',
    );
  });
});
