// The event page over HTTP (issue 28, item 5), on the web fixture's real records and clock: the
// upstream's picture when there is one (http(s) only, a fixed box, no referrer), a real map of the
// place with links to the visitor's map apps, no calendar offer for a canceled or an ended event but
// a status beside the title and where to look instead, the source as a link, and ways to share.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { EventRecord } from '../../../core/record.ts';
import { eventPage } from '../../../server/web/pages/event.ts';
import type { Site } from '../../../server/web/layout.ts';
import { get, NOW, startTestServer, WEB, type TestServer } from '../helpers.ts';
import { webFixture, type WebFixture } from './fixture.ts';

type Doc = ReturnType<typeof parseDocument>;
type El = ReturnType<typeof DomUtils.findAll>[number];

const all = (doc: Doc | El, pred: (e: El) => boolean): El[] => DomUtils.findAll(pred, 'children' in doc ? doc.children : []);
const byTag = (doc: Doc | El, name: string): El[] => all(doc, (e) => e.name === name);
const attr = (e: El, name: string): string | undefined => DomUtils.getAttributeValue(e, name);
const text = (e: El | Doc): string => DomUtils.textContent(e).replace(/\s+/g, ' ').trim();
const main = (doc: Doc): El => byTag(doc, 'main')[0]!;
const linksByText = (doc: Doc, label: string): El[] => byTag(doc, 'a').filter((a) => text(a).startsWith(label));

/** What the page must not offer for an event one can no longer go to. */
function calendarOffer(doc: Doc): string[] {
  const found: string[] = [];
  if (text(main(doc)).includes('Add to your calendar')) found.push('"Add to your calendar"');
  for (const a of byTag(doc, 'a')) {
    const href = attr(a, 'href') ?? '';
    if (href.endsWith('.ics')) found.push(`a link to ${href}`);
    if (href.startsWith('https://calendar.google.com/')) found.push('a Google Calendar link');
  }
  return found;
}

/** The element right after the h1 (the status must be beside the title, not at the foot of the page). */
function afterTitle(doc: Doc): El {
  const h1 = byTag(doc, 'h1')[0]!;
  const next = DomUtils.nextElementSibling(h1);
  assert.ok(next, 'something follows the title');
  return next;
}

/** A record made here, for what the snapshot's records do not show (a picture's URL, an approximate place). */
const madeRecord = (over: Partial<EventRecord>): EventRecord => ({
  id: 'bsc_evt_00000000000000000000',
  title: 'Storytime',
  description: null,
  summary: null,
  start_datetime: '2026-12-05T10:30:00-08:00',
  end_datetime: '2026-12-05T11:30:00-08:00',
  venue: { name: 'Central Library', address: '2090 Kittredge St, Berkeley, CA 94704', city: 'Berkeley', lat: 37.868, lng: -122.2686, geo_precision: 'venue' },
  organizer: null,
  organizer_url: null,
  categories: [],
  tags: [],
  image_url: null,
  is_free: true,
  price: null,
  ticket_url: null,
  source: null,
  source_url: null,
  destination: 'east-bay',
  age_range: null,
  age_range_years: null,
  is_canceled: false,
  all_day: false,
  created_at: '2026-11-01T09:00:00.000-07:00',
  updated_at: '2026-11-02T09:00:00.000-08:00',
  event_url: `${WEB}/events/bsc_evt_00000000000000000000`,
  ...over,
});
const SITE: Site = { webBaseUrl: WEB, apiBaseUrl: `${WEB}/api`, name: 'Family Events' };
/** The page's HTML for a record made here, at the fixture's clock. */
const rendered = (r: EventRecord): string => eventPage(SITE, r, { nowMs: NOW.getTime(), icsPath: '/x.ics', similarPath: '/events' }).html;

let fx: WebFixture | undefined;
let srv: TestServer;

/** What these tests read of a record, straight from the snapshot (the API serves no ended event). */
interface Picked {
  readonly id: string;
  readonly title: string;
  readonly image_url: string | null;
  readonly source: string | null;
  readonly venue: { readonly name: string; readonly city: string; readonly lat: number; readonly lng: number };
}
const picked: Record<'withImage' | 'withoutImage' | 'canceled' | 'ended', Picked> = {} as never;

async function page(id: string): Promise<{ doc: Doc; status: number; headers: Headers }> {
  const r = await get(srv.base, `/events/${id}`);
  return { doc: parseDocument(r.text), status: r.status, headers: r.headers };
}

const record = (id: string): Picked => {
  const found = Object.values(picked).find((p) => p.id === id);
  assert.ok(found);
  return found;
};

before(
  async () => {
    fx = await webFixture();
    srv = await startTestServer(fx.dataDir);
    // The records are chosen from the snapshot itself, against the fixture's clock.
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const parquet = path.join(fx.build.dir, 'events.parquet').replaceAll("'", "''");
    const one = async (where: string): Promise<Picked> => {
      const rows = (
        await c.runAndReadAll(
          `SELECT id, title, image_url, source, venue_name, venue_city, venue_lat, venue_lng FROM read_parquet('${parquet}') WHERE ${where} ORDER BY start_ms, id LIMIT 1`,
        )
      ).getRowObjectsJson() as unknown as (Omit<Picked, 'venue'> & { venue_name: string; venue_city: string; venue_lat: number; venue_lng: number })[];
      const r = rows[0];
      assert.ok(r, `the fixture has an event where ${where}`);
      return {
        id: r.id,
        title: r.title,
        image_url: r.image_url,
        source: r.source,
        venue: { name: r.venue_name, city: r.venue_city, lat: r.venue_lat, lng: r.venue_lng },
      };
    };
    const now = NOW.getTime();
    picked.withImage = await one(`image_url IS NOT NULL AND NOT is_canceled AND end_ms > ${now}`);
    picked.withoutImage = await one(`image_url IS NULL AND NOT is_canceled AND end_ms > ${now}`);
    picked.canceled = await one(`is_canceled AND end_ms > ${now}`);
    picked.ended = await one(`NOT is_canceled AND end_ms < ${now}`);
    c.closeSync();
    db.closeSync();
  },
  { timeout: 180_000 },
);
after(async () => {
  await srv?.stop();
  await fx?.cleanup();
});

describe('the event page (issue 28 item 5)', () => {
  test('the picture when the record has one: its http(s) URL, alt, a fixed size, loaded first, no referrer', async () => {
    const { doc, status } = await page(picked.withImage.id);
    assert.equal(status, 200);
    const imgs = byTag(main(doc), 'img');
    assert.equal(imgs.length, 1, 'one picture');
    const img = imgs[0]!;
    assert.equal(attr(img, 'src'), new URL(picked.withImage.image_url!).href);
    assert.equal(attr(img, 'alt'), '', 'decorative: its only text would repeat the title right under it');
    assert.ok(Number(attr(img, 'width')) > 0 && Number(attr(img, 'height')) > 0, 'width and height reserve its box');
    assert.equal(attr(img, 'loading'), 'eager');
    assert.equal(attr(img, 'fetchpriority'), 'high');
    assert.equal(attr(img, 'referrerpolicy'), 'no-referrer');

    const without = await page(picked.withoutImage.id);
    assert.equal(byTag(main(without.doc), 'img').length, 0, 'no picture, no empty frame');
  });

  test('only an https picture reaches the page (the CSP allows no other), escaped', () => {
    const imgs = (image_url: string): El[] => byTag(main(parseDocument(rendered(madeRecord({ image_url })))), 'img');
    for (const bad of [
      'javascript:alert(1)',
      'data:image/png;base64,iVBORw0KGgo=',
      'ftp://img.example/a.jpg',
      'http://img.example/a.jpg',
      '//img.example/a.jpg',
      'not a url',
    ]) {
      assert.equal(imgs(bad).length, 0, bad);
    }
    const tricky = imgs('https://img.example/a.jpg?x="><script>alert(1)</script>');
    assert.equal(tricky.length, 1);
    assert.equal(attr(tricky[0]!, 'src'), new URL('https://img.example/a.jpg?x="><script>alert(1)</script>').href);
    assert.equal(
      byTag(
        main(parseDocument(eventPage(SITE, madeRecord({ image_url: 'https://img.example/"><script>' }), { nowMs: 0, icsPath: '', similarPath: '' }).html)),
        'script',
      ).length,
      0,
    );
  });

  test('a canceled event: "Canceled" right under the title, a way to similar events, no calendar offer (the .ics stays)', async () => {
    const { doc, status } = await page(picked.canceled.id);
    assert.equal(status, 200);
    const s = afterTitle(doc);
    assert.match(text(s), /^Canceled\./);
    assert.equal(attr(s, 'role'), 'alert');
    assert.ok(
      byTag(s, 'a').some((a) => attr(a, 'href')!.startsWith('/events?')),
      'links to events like it',
    );
    assert.deepEqual(calendarOffer(doc), []);
    assert.equal(linksByText(doc, 'Tickets').length, 0);
    assert.equal((await get(srv.base, `/events/${picked.canceled.id}.ics`)).status, 200, 'the calendar file itself is still served');
  });

  test('an ended event: "This event has ended" right under the title, a link to upcoming events like it, no calendar offer', async () => {
    const { doc, status } = await page(picked.ended.id);
    assert.equal(status, 200);
    const s = afterTitle(doc);
    assert.match(text(s), /^This event has ended\./);
    const rec = record(picked.ended.id);
    const similar = byTag(s, 'a').find((a) => text(a) === 'See upcoming events like this');
    assert.ok(similar, 'a link to upcoming events like it');
    const u = new URL(attr(similar, 'href')!, WEB);
    assert.equal(u.pathname, '/events');
    assert.equal(u.searchParams.get('city'), rec.venue.city);
    assert.deepEqual(calendarOffer(doc), []);
  });

  test('an event still to come keeps its calendar offer and has no status', async () => {
    const { doc } = await page(picked.withoutImage.id);
    assert.ok(calendarOffer(doc).length >= 2, 'Download .ics and Google Calendar');
    assert.equal(all(main(doc), (e) => (attr(e, 'class') ?? '').includes('event-status')).length, 0);
  });

  test('the source as a link to its site, named', async () => {
    const rec = record(picked.withImage.id);
    assert.ok(rec.source);
    const { doc } = await page(rec.id);
    const p = all(main(doc), (e) => attr(e, 'class') === 'attribution')[0]!;
    const a = byTag(p, 'a')[0];
    assert.ok(a, `the source ${rec.source} is a link`);
    assert.equal(text(a), rec.source);
    assert.equal(attr(a, 'href'), `https://${rec.source}/`);
    assert.deepEqual(attr(a, 'rel')!.split(' ').sort(), ['external', 'noopener']);
  });

  test("a map of the place, by its coordinates, loaded on request; links to OpenStreetMap, Google Maps, Apple Maps; the CSP lets exactly OpenStreetMap's frame in", async () => {
    const rec = record(picked.withImage.id);
    const { doc, headers } = await page(rec.id);
    const frame = byTag(main(doc), 'iframe')[0];
    assert.ok(frame, 'a map frame');
    assert.match(attr(frame, 'title')!, new RegExp(`^Map of ${rec.venue.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const load = all(main(doc), (e) => e.name === 'a' && attr(e, 'target') === attr(frame, 'name'))[0];
    assert.ok(load, 'a link that loads the map into the frame');
    assert.equal(text(load), 'Show map');
    const embed = new URL(attr(load, 'href')!);
    assert.equal(embed.origin + embed.pathname, 'https://www.openstreetmap.org/export/embed.html');
    const [lat, lng] = embed.searchParams.get('marker')!.split(',').map(Number);
    assert.ok(Math.abs(lat! - rec.venue.lat) < 1e-5 && Math.abs(lng! - rec.venue.lng) < 1e-5, 'the pin is on the venue');
    const [w, s, e, n] = embed.searchParams.get('bbox')!.split(',').map(Number);
    assert.ok(w! < rec.venue.lng && rec.venue.lng < e! && s! < rec.venue.lat && rec.venue.lat < n!, 'the view holds the venue');

    const osm = new URL(attr(linksByText(doc, 'OpenStreetMap')[0]!, 'href')!);
    assert.equal(Number(osm.searchParams.get('mlat')), Math.round(rec.venue.lat * 1e6) / 1e6);
    const google = new URL(attr(linksByText(doc, 'Google Maps')[0]!, 'href')!);
    assert.equal(google.hostname, 'www.google.com');
    assert.deepEqual(
      google.searchParams.get('query')!.split(',').map(Number),
      [rec.venue.lat, rec.venue.lng].map((x) => Math.round(x * 1e6) / 1e6),
    );
    const apple = new URL(attr(linksByText(doc, 'Apple Maps')[0]!, 'href')!);
    assert.equal(apple.hostname, 'maps.apple.com');
    assert.ok(apple.searchParams.get('ll'));

    const csp = headers.get('content-security-policy')!;
    const frameSrc = csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .find((d) => d[0] === 'frame-src');
    assert.deepEqual(frameSrc, ['frame-src', 'https://www.openstreetmap.org']);
  });

  test('an approximate location says so: no pin, the area, and the address to check', () => {
    for (const geo_precision of ['zip', 'place'] as const) {
      const r = madeRecord({
        id: 'bsc_evt_00000000000000000001',
        end_datetime: null,
        venue: { name: 'Some Hall', address: 'Concord, CA', city: 'Concord', lat: 37.978, lng: -122.031, geo_precision },
        event_url: `${WEB}/events/bsc_evt_00000000000000000001`,
      });
      const doc = parseDocument(rendered(r));
      const embed = new URL(attr(linksByText(doc, 'Show map')[0]!, 'href')!);
      assert.equal(embed.searchParams.has('marker'), false, geo_precision);
      assert.match(text(main(doc)), /Approximate location: the map shows the area of Concord, not the exact place/, geo_precision);
      assert.match(attr(byTag(doc, 'iframe')[0]!, 'title')!, /the area around Some Hall/);
    }
  });

  test('a way back to the results: to all events without JavaScript, marked for site.js to point at the search the visitor came from', async () => {
    const { doc } = await page(picked.withImage.id);
    const back = all(main(doc), (e) => e.name === 'a' && attr(e, 'data-back-to-results') !== undefined);
    assert.equal(back.length, 1);
    assert.equal(attr(back[0]!, 'href'), '/events');
    assert.equal(text(back[0]!), 'All events');
    const article = byTag(main(doc), 'article')[0]!;
    const first = DomUtils.getChildren(article).find((e) => e.type === 'tag');
    assert.ok(DomUtils.getParent(back[0]!) === first, 'the first thing on the page');
  });

  test('share without JavaScript: an email with the title and the link, and the canonical link shown', async () => {
    const rec = record(picked.withImage.id);
    const { doc } = await page(rec.id);
    const canonical = attr(all(doc, (e) => e.name === 'link' && attr(e, 'rel') === 'canonical')[0]!, 'href')!;
    assert.equal(canonical, `${WEB}/events/${rec.id}`);
    const share = all(main(doc), (e) => e.name === 'section' && attr(e, 'class') === 'share')[0];
    assert.ok(share, 'a share section');
    const mail = byTag(share, 'a').find((a) => attr(a, 'href')!.startsWith('mailto:'));
    assert.ok(mail, 'an email link');
    const q = new URLSearchParams(attr(mail, 'href')!.slice('mailto:?'.length));
    assert.equal(q.get('subject'), rec.title);
    assert.ok(q.get('body')!.includes(canonical), 'the body carries the link');
    assert.ok(text(share).includes(canonical), 'the link is shown to copy');
    assert.equal(all(share, (e) => attr(e, 'data-share-url') === canonical).length, 1, 'site.js finds the link to share');
    assert.equal(all(doc, (e) => e.name === 'script' && (attr(e, 'src') ?? '').includes('site')).length, 1, 'the page loads site.js');
  });
});
