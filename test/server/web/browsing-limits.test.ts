// The website is for people (issue 26, item 3): without a key it had been a bulk feed, with every
// category and no limit (`/events.ics?category=festivals` gave 82 events, 20 rapid calls all 200).
// Over real HTTP against real servers, from distinct loopback addresses (127.0.0.x, the socket's
// own address) and, behind TRUST_PROXY, from X-Forwarded-For: listings and a search's calendar
// are limited per client address (429 pages with Retry-After that point programs at the API);
// keyless listings and calendars hold only what the Community plan includes, read from the
// ledger's plan row (a plan change reaches them); a calendar is one page of events; an event's own
// page and .ics stay free. Calendars are read with ical.js (the project's iCalendar reader).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { findAll, getAttributeValue, textContent } from 'domutils';
import type { Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import type ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { get, NOW, provisionKey, startTestServer, type OracleRow, type TestServer } from '../helpers.ts';
import { checkIcs } from '../readers.ts';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { loadConfig } from '../../../core/config.ts';
import { CATEGORY_LABELS, type CategorySlug } from '../../../core/taxonomy.ts';
import { webFixture, type WebFixture } from './fixture.ts';

// The limits the test server runs with: the defaults (its environment sets neither).
const { webListingsPerMinute: LISTING_PAGES_PER_MINUTE, webCalendarsPerMinute: CALENDARS_PER_MINUTE } = loadConfig({});

let fx: WebFixture;
/** As the server runs alone: the client address is the socket's. */
let direct: TestServer;
/** As it runs behind nginx: the client address is X-Forwarded-For's last hop. */
let proxied: TestServer;
let partnerKey: string;
let excluded: readonly string[];

before(async () => {
  fx = await webFixture();
  direct = await startTestServer(fx.dataDir);
  proxied = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
  partnerKey = provisionKey(direct.config.ledgerDir, { plan: 'partner' }).key;
  const community = provisionKey(direct.config.ledgerDir, { plan: 'community' });
  // What a Community key is refused, as the API reports its plan: the ledger's row, not a list of ours.
  excluded = (await get(direct.base, `/v1/usage?api_key=${community.key}`)).json.plan.excluded_categories as string[];
  assert.ok(excluded.includes('festivals') && excluded.includes('seasonal'), `Community excludes festivals and seasonal: ${excluded.join(',')}`);
});
after(async () => {
  await direct?.stop();
  await proxied?.stop();
  await fx?.cleanup();
});

interface Got {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

/** GET on a connection of its own from `from` (a loopback address: 127.0.0.1 … 127.255.255.254). */
function getFrom(base: string, path: string, from: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, localAddress: from, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const links = (page: string): string[] => findAll((e: Element) => e.name === 'a', parseDocument(page).children).map((a) => getAttributeValue(a, 'href') ?? '');
const pageText = (page: string): string => textContent(parseDocument(page)).replace(/\s+/g, ' ');
/** The event ids a listing page shows, in order. */
const listed = (page: string): string[] => [
  ...new Set(
    links(page)
      .filter((h) => /^\/events\/bsc_evt_[0-9a-f]{20}$/.test(h))
      .map((h) => h.slice('/events/'.length)),
  ),
];
const uids = (events: ICAL.Component[]): string[] => events.map((e) => String(e.getFirstPropertyValue('uid')));
const icsCategories = (e: ICAL.Component): string[] => e.getAllProperties('categories').flatMap((p) => p.getValues().map(String));

/** A 429 of the website: an HTML page, Retry-After in whole seconds, and the way for programs. */
function assertTooMany(r: Got, what: string): number {
  assert.equal(r.status, 429, what);
  assert.match(String(r.headers['content-type']), /^text\/html/, what);
  assert.equal(r.headers['x-content-type-options'], 'nosniff', what);
  const retry = Number(r.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1, `${what}: Retry-After ${String(r.headers['retry-after'])}`);
  const hrefs = links(r.text);
  assert.ok(hrefs.includes('/docs') && hrefs.includes('/account/sign-in'), `${what}: the page points at the API and its sign-up: ${hrefs.join(' ')}`);
  assert.match(pageText(r.text), /try again in about \d+ seconds?/, `${what}: says when`);
  return retry;
}

describe('per client address', () => {
  test('20 rapid calendar downloads from one address: the first ones served, then 429 with Retry-After; another address is unaffected', async () => {
    const got: Got[] = [];
    for (let i = 0; i < 20; i++) got.push(await getFrom(direct.base, '/events.ics?city=Berkeley', '127.0.0.2'));
    const served = got.filter((r) => r.status === 200).length;
    assert.ok(served >= CALENDARS_PER_MINUTE && served < 20, `served ${served} of 20 (${CALENDARS_PER_MINUTE} a minute)`);
    assert.deepEqual(
      got.slice(0, CALENDARS_PER_MINUTE).map((r) => r.status),
      Array<number>(CALENDARS_PER_MINUTE).fill(200),
      'the first ones are served whole',
    );
    const retry = assertTooMany(got.at(-1)!, 'calendar 20');
    assert.ok(retry <= Math.ceil(60 / CALENDARS_PER_MINUTE), `one download comes back within ${60 / CALENDARS_PER_MINUTE} s: Retry-After ${retry}`);
    // Another address, and X-Forwarded-For from the first one without TRUST_PROXY (a header anyone can send).
    assert.equal((await getFrom(direct.base, '/events.ics?city=Berkeley', '127.0.0.3')).status, 200, 'another address');
    assert.equal(
      (await getFrom(direct.base, '/events.ics?city=Berkeley', '127.0.0.2', { 'x-forwarded-for': '203.0.113.77' })).status,
      429,
      'a forged X-Forwarded-For changes nothing',
    );
    // A person's other pages from the limited address: listings are counted apart, event pages never.
    assert.equal((await getFrom(direct.base, '/events?city=Berkeley', '127.0.0.2')).status, 200, 'listing pages count apart');
  });

  test(`listing pages: ${LISTING_PAGES_PER_MINUTE} a minute per address, then 429 (HEAD and every listing route alike); event pages and their .ics stay free`, async () => {
    const from = '127.0.0.4';
    const paths = ['/events', '/events?city=Oakland', '/cities/berkeley', '/categories/storytime'];
    const statuses: number[] = [];
    for (let i = 0; i < LISTING_PAGES_PER_MINUTE + 15; i++)
      statuses.push((await getFrom(direct.base, paths[i % paths.length]!, from, {}, i % 5 === 4 ? 'HEAD' : 'GET')).status);
    const served = statuses.filter((s) => s === 200).length;
    assert.ok(served >= LISTING_PAGES_PER_MINUTE && served < LISTING_PAGES_PER_MINUTE + 15, `served ${served} of ${statuses.length}`);
    assert.ok(
      statuses.slice(-5).every((s) => s === 429),
      `the last ones refused: ${statuses.slice(-5).join(',')}`,
    );
    assertTooMany(await getFrom(direct.base, '/cities/oakland', from), 'a city page');
    // Every record's event_url keeps working for that address, page and calendar file.
    const ids = fx.rows
      .filter((r) => r.end_ms >= NOW.getTime())
      .slice(0, 40)
      .map((r) => r.id);
    for (const id of ids) {
      assert.equal((await getFrom(direct.base, `/events/${id}`, from)).status, 200, `/events/${id}`);
      const ics = await getFrom(direct.base, `/events/${id}.ics`, from);
      assert.equal(ics.status, 200, `/events/${id}.ics`);
      assert.deepEqual(uids(checkIcs(ics.text, id)), [id]);
    }
  });

  test('behind a proxy: X-Forwarded-For’s last hop is the client; an IPv6 client counts by its /64', async () => {
    const calendar = (xff: string): Promise<Got> => getFrom(proxied.base, '/events.ics?city=Oakland', '127.0.0.1', { 'x-forwarded-for': xff });
    for (let i = 0; i < CALENDARS_PER_MINUTE; i++) assert.equal((await calendar(`192.0.2.${i}, 198.51.100.7`)).status, 200, `download ${i + 1}`);
    // A first hop the client wrote itself does not make it someone else.
    assertTooMany(await calendar('192.0.2.200, 198.51.100.7'), 'same last hop');
    assert.equal((await calendar('198.51.100.8')).status, 200, 'another client');
    for (let i = 0; i < CALENDARS_PER_MINUTE; i++)
      assert.equal((await calendar(`2001:db8:1:2::${(i + 1).toString(16)}`)).status, 200, `IPv6 download ${i + 1}`);
    assertTooMany(await calendar('2001:db8:1:2:ffff:ffff:ffff:fffe'), 'another address of the same /64');
    assert.equal((await calendar('2001:db8:1:3::1')).status, 200, 'another /64');
    assert.equal((await calendar('::ffff:198.51.100.9')).status, 200, 'an IPv4-mapped address is its IPv4 address, not one /64 for all');
  });
});

describe('what no key gets: the Community plan’s categories, a page at a time', () => {
  /** An upcoming event in an excluded category, and the search of its city and day. */
  const excludedEvent = (): { row: OracleRow; search: string } => {
    const row = fx.rows.filter((r) => r.start_ms >= NOW.getTime() && r.categories.some((c) => excluded.includes(c))).sort((a, b) => a.start_ms - b.start_ms)[0];
    assert.ok(row, 'the fixture has an upcoming festival or seasonal event');
    const day = DateTime.fromMillis(row.start_ms, { zone: 'America/Los_Angeles' }).toISODate()!;
    return { row, search: new URLSearchParams({ city: row.venue_city, start_date: day, end_date: day }).toString() };
  };

  test('an excluded category is absent from keyless listings and calendars, while the API with a Partner key gives it', async () => {
    const { row, search } = excludedEvent();
    const api = await get(direct.base, `/v1/events?${search}&limit=100`, { headers: { authorization: `Bearer ${partnerKey}` } });
    assert.equal(api.status, 200);
    const all = api.json.events as { id: string; categories: string[] }[];
    assert.ok(
      all.some((e) => e.id === row.id),
      'the Partner key gets the event',
    );
    const want = all.filter((e) => !e.categories.some((c) => excluded.includes(c))).map((e) => e.id);
    assert.ok(want.length < all.length && want.length <= 50, `${all.length - want.length} of ${all.length} left out`);

    const page = await getFrom(direct.base, `/events?${search}&limit=50`, '127.0.1.1');
    assert.equal(page.status, 200);
    assert.deepEqual(listed(page.text), want, 'the listing: the same search without the excluded categories');
    const cal = await getFrom(direct.base, `/events.ics?${search}&limit=50`, '127.0.1.1');
    assert.equal(cal.status, 200);
    const events = checkIcs(cal.text, '/events.ics');
    assert.deepEqual(uids(events), want, 'the calendar: the same');
    for (const e of events)
      assert.ok(!icsCategories(e).some((c) => excluded.includes(c)), `${String(e.getFirstPropertyValue('uid'))}: ${icsCategories(e).join(',')}`);
    // Nor anywhere in the default listing and calendar.
    const rows = new Map(fx.rows.map((r) => [r.id, r]));
    const first = await getFrom(direct.base, '/events', '127.0.1.1');
    for (const id of listed(first.text)) assert.ok(!rows.get(id)!.categories.some((c) => excluded.includes(c)), `/events lists ${id}`);
    for (const e of checkIcs((await getFrom(direct.base, '/events.ics', '127.0.1.1')).text, '/events.ics')) {
      assert.ok(!icsCategories(e).some((c) => excluded.includes(c)), String(e.getFirstPropertyValue('uid')));
    }
  });

  test('asking for an excluded category is a 403 page that says where those events are (the issue’s /events.ics?category=festivals)', async () => {
    for (const path of [
      '/events.ics?category=festivals',
      '/events?category=festivals',
      '/categories/festivals',
      '/events?category=storytime,seasonal',
      '/events.ics?city=Berkeley&category=seasonal',
    ]) {
      const r = await getFrom(direct.base, path, '127.0.1.2');
      assert.equal(r.status, 403, path);
      assert.match(String(r.headers['content-type']), /^text\/html/, path);
      const names = excluded
        .filter((c) => path.includes(c))
        .map((c) => `“${CATEGORY_LABELS[c as CategorySlug]}”`)
        .join(' and ');
      assert.ok(pageText(r.text).includes(`${names} is not listed on the website`), `${path}: says ${names} is not listed`);
      assert.ok(links(r.text).includes('/docs#plans'), `${path}: links the plans`);
      assert.ok(!r.text.includes('BEGIN:VCALENDAR'), path);
    }
    // The browse form offers only what it lists, and home links only those categories.
    const browse = await getFrom(direct.base, '/events', '127.0.1.2');
    const options = findAll(
      (e: Element) => e.name === 'option' && e.parent !== null && getAttributeValue(e.parent as Element, 'name') === 'category',
      parseDocument(browse.text).children,
    ).map((o) => getAttributeValue(o, 'value'));
    assert.ok(options.includes('storytime') && !options.some((o) => excluded.includes(o ?? '')), `category options: ${options.join(',')}`);
    const home = await getFrom(direct.base, '/', '127.0.1.2');
    const categoryLinks = links(home.text).filter((h) => h.startsWith('/categories/'));
    assert.ok(
      categoryLinks.includes('/categories/storytime') && !categoryLinks.some((h) => excluded.includes(h.slice('/categories/'.length))),
      categoryLinks.join(' '),
    );
  });

  test('an excluded category’s event keeps its page and .ics; the page names the category without linking a listing that refuses it', async () => {
    const { row } = excludedEvent();
    const page = await getFrom(direct.base, `/events/${row.id}`, '127.0.1.3');
    assert.equal(page.status, 200);
    for (const c of row.categories.filter((x) => excluded.includes(x)))
      assert.ok(pageText(page.text).includes(CATEGORY_LABELS[c as CategorySlug]), `names ${c}`);
    const hrefs = links(page.text);
    assert.ok(
      !hrefs.some((h) => excluded.some((c) => h === `/categories/${c}` || new URLSearchParams(h.split('?')[1] ?? '').get('category') === c)),
      hrefs.join(' '),
    );
    for (const h of hrefs.filter((x) => x.startsWith('/events?') || x.startsWith('/categories/')))
      assert.equal((await getFrom(direct.base, h, '127.0.1.3')).status, 200, h);
    const ics = await getFrom(direct.base, `/events/${row.id}.ics`, '127.0.1.3');
    assert.equal(ics.status, 200);
    assert.deepEqual(uids(checkIcs(ics.text, row.id)), [row.id]);
  });

  test('a calendar is one page of the search: the next 20 events (limit up to 50), never another page', async () => {
    const from = '127.0.1.4';
    const api = await get(direct.base, '/v1/events?limit=100', { headers: { authorization: `Bearer ${partnerKey}` } });
    assert.ok((api.json.total as number) > 100, 'far more events than a page');
    const first = uids(checkIcs((await getFrom(direct.base, '/events.ics', from)).text, 'default'));
    assert.equal(first.length, 20);
    const listing = listed((await getFrom(direct.base, '/events', from)).text);
    assert.deepEqual(first, listing, 'the events of the listing’s first page');
    assert.equal(uids(checkIcs((await getFrom(direct.base, '/events.ics?limit=50', from)).text, 'limit=50')).length, 50);
    assert.deepEqual(
      uids(checkIcs((await getFrom(direct.base, '/events.ics?offset=20', from)).text, 'offset=20')),
      first,
      'offset is not a way to page through',
    );
    const big = await getFrom(direct.base, '/events.ics?limit=100', from);
    assert.equal(big.status, 400, 'more than a page is a bad request');
    // In the website's words, not the parameter's name (issue 28 item 7).
    assert.match(pageText(big.text), /Events per page: must be a whole number from 1 to 50/);
  });

  test('the categories come from the ledger’s plan: a change to Community reaches the website', { timeout: 30_000 }, async () => {
    // On a server of its own: the change would otherwise reach the other tests.
    const own = await startTestServer(fx.dataDir);
    try {
      const from = '127.0.1.5';
      assert.equal((await getFrom(own.base, '/events?category=music', from)).status, 200);
      const accounts = AccountsDb.open(own.config.ledgerDir);
      try {
        const community = accounts.plans().find((p) => p.name === 'community');
        assert.ok(community);
        accounts.setPlan({ ...community, excludedCategories: [...community.excludedCategories, 'music'].sort() });
      } finally {
        accounts.close();
      }
      let status = 200;
      for (let i = 0; i < 100 && status === 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await getFrom(own.base, '/events?category=music', `127.0.2.${i + 1}`)).status;
      }
      assert.equal(status, 403, 'music is refused once the plan excludes it');
      const home = await getFrom(own.base, '/', from);
      assert.ok(!links(home.text).includes('/categories/music'), 'and home no longer links it');
    } finally {
      await own.stop();
    }
  });
});
