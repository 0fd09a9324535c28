// The website host over real HTTP, on the same listener as the API: every event_url the API
// returns resolves to its page; pages are cached and conditional; every HTML answer carries the
// security headers; browsing follows the same filters as the API, needs no key, and its pages list
// exactly what a test-local oracle over the snapshot's rows says; add-to-calendar files read back in
// ical.js; a gone event is 410; errors are HTML pages. Pages are read with htmlparser2.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseDocument } from 'htmlparser2';
import { findAll, findOne, getAttributeValue, textContent } from 'domutils';
import type { Document, Element } from 'domhandler';
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { get, provisionKey, startTestServer, NOW, WEB, type TestServer, type OracleRow } from '../helpers.ts';
import { checkIcs } from '../readers.ts';
import { ERRORS } from '../../../server/errors.ts';
import { HOSTILE_ORGANIZER, webFixture, type WebFixture } from './fixture.ts';

let fx: WebFixture;
let srv: TestServer;
let partnerKey: string;

before(async () => {
  fx = await webFixture();
  // Behind a proxy, as deployed: the listing walks below come from many client addresses (the
  // per-address limits of browsing are tested in browsing-limits.test.ts).
  srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
  partnerKey = provisionKey(srv.config.ledgerDir, { plan: 'partner' }).key;
  const community = provisionKey(srv.config.ledgerDir, { plan: 'community', org: 'Oracle plan' });
  unlisted = (await get(srv.base, `/v1/usage?api_key=${community.key}`)).json.plan.excluded_categories as string[];
  assert.ok(unlisted.includes('festivals'), `Community excludes festivals: ${unlisted.join(',')}`);
});
after(async () => {
  await srv?.stop();
  await fx?.cleanup();
});

const html = (text: string): Document => parseDocument(text);
const all = (doc: Document, test: (e: Element) => boolean): Element[] => findAll(test, doc.children);
const one = (doc: Document, test: (e: Element) => boolean): Element | null => findOne(test, doc.children);
const byTag = (name: string) => (e: Element) => e.name === name;
const text = (e: Element | null): string => (e ? textContent(e).replace(/\s+/g, ' ').trim() : '');

/** The security headers every HTML answer carries, whatever its status. */
function assertSecurityHeaders(h: Headers, what: string): void {
  const csp = h.get('content-security-policy') ?? '';
  for (const directive of ["object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"])
    assert.ok(csp.includes(directive), `${what}: CSP has ${directive}: ${csp}`);
  const script = /script-src ([^;]*)/.exec(csp)?.[1] ?? /default-src ([^;]*)/.exec(csp)?.[1] ?? '';
  assert.ok(!script.includes("'unsafe-inline'") && !script.includes("'unsafe-eval'") && !script.includes('*'), `${what}: script-src is strict: ${script}`);
  assert.equal(h.get('x-content-type-options'), 'nosniff', what);
  assert.ok(h.get('referrer-policy'), `${what}: Referrer-Policy`);
  assert.match(h.get('content-type') ?? '', /^text\/html; charset=utf-8$/, what);
}

/** No script runs from a page but our own file; JSON-LD blocks are data. */
function assertNoForeignScript(doc: Document, what: string): void {
  for (const s of all(doc, byTag('script'))) {
    const type = getAttributeValue(s, 'type');
    const src = getAttributeValue(s, 'src');
    // Our own site.js, under its content-hashed name (static.test.ts checks the hash).
    const ours = src !== undefined && /^\/static\/site\.[0-9a-f]{16}\.js$/.test(src);
    assert.ok(type === 'application/ld+json' || ours, `${what}: unexpected script ${type ?? ''} ${src ?? ''}: ${text(s).slice(0, 80)}`);
  }
  for (const e of all(doc, () => true)) {
    for (const name of Object.keys(e.attribs)) assert.ok(!/^on/i.test(name), `${what}: event handler attribute ${name} on <${e.name}>`);
    for (const name of ['href', 'src', 'action']) {
      const val = e.attribs[name];
      if (val !== undefined) assert.ok(!/^\s*(?:javascript|data|vbscript):/i.test(val), `${what}: ${name}=${val}`);
    }
  }
}

const localPath = (eventUrl: string): string => {
  assert.ok(eventUrl.startsWith(`${WEB}/events/`), eventUrl);
  return eventUrl.slice(WEB.length);
};

/** The JSON-LD blocks of a page, parsed. */
const jsonLd = (doc: Document): Record<string, unknown>[] =>
  all(doc, (e) => e.name === 'script' && getAttributeValue(e, 'type') === 'application/ld+json').map(
    (s) => JSON.parse(textContent(s)) as Record<string, unknown>,
  );

const upcoming = (): OracleRow[] => fx.rows.filter((r) => r.end_ms >= NOW.getTime());

describe('event pages', () => {
  test('every event_url of live API answers resolves to its page on the same server', async () => {
    let seen = 0;
    for (let offset = 0; offset !== null && seen < 300;) {
      const page = await get(srv.base, `/v1/events?limit=100&offset=${offset}`, { headers: { authorization: `Bearer ${partnerKey}` } });
      assert.equal(page.status, 200);
      for (const rec of page.json.events as {
        id: string;
        title: string;
        event_url: string;
        start_datetime: string;
        all_day: boolean;
        venue: { name: string };
      }[]) {
        const r = await get(srv.base, localPath(rec.event_url));
        assert.equal(r.status, 200, rec.event_url);
        assertSecurityHeaders(r.headers, rec.event_url);
        const doc = html(r.text);
        assert.equal(text(one(doc, byTag('h1'))), rec.title.replace(/\s+/g, ' ').trim(), rec.id);
        const canonical = one(doc, (e) => e.name === 'link' && getAttributeValue(e, 'rel') === 'canonical');
        assert.equal(canonical && getAttributeValue(canonical, 'href'), rec.event_url);
        const [ld] = jsonLd(doc);
        assert.ok(ld, `${rec.id}: JSON-LD`);
        assert.equal(ld['@type'], 'Event');
        assert.equal(ld.name, rec.title);
        // An all-day event's startDate is its Pacific day (schema.org Date), a timed one's the record's datetime.
        assert.equal(ld.startDate, rec.all_day ? DateTime.fromISO(rec.start_datetime).setZone('America/Los_Angeles').toISODate() : rec.start_datetime, rec.id);
        assertNoForeignScript(doc, rec.id);
        seen++;
      }
      offset = page.json.next_offset;
    }
    assert.ok(seen >= 100, `checked ${seen} pages`);
  });

  test('conditional and cached like the API: strong ETag, 304, HEAD without a body, gzip', async () => {
    const id = upcoming()[0]!.id;
    const a = await get(srv.base, `/events/${id}`, { headers: { 'accept-encoding': 'identity' } });
    const etag = a.headers.get('etag');
    assert.match(etag ?? '', /^"[\w-]+"$/);
    assert.ok(a.headers.get('last-modified'));
    const b = await get(srv.base, `/events/${id}`, { headers: { 'if-none-match': etag ?? '' } });
    assert.equal(b.status, 304);
    assert.equal(b.text, '');
    // fetch asks for gzip unless told otherwise: the identity form's length is the page's.
    const head = await fetch(`${srv.base}/events/${id}`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('etag'), etag);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(a.text)));
    assert.equal(await head.text(), '');
    const gz = await fetch(`${srv.base}/events/${id}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.equal(await gz.text(), a.text);
  });

  test('the hostile upstream renders as text: page, JSON-LD and .ics', async () => {
    const hostile = fx.rows.filter((r) => r.organizer === HOSTILE_ORGANIZER);
    assert.equal(hostile.length, 3, 'the hostile events are in the snapshot');
    for (const row of hostile) {
      const r = await get(srv.base, `/events/${row.id}`);
      assert.equal(r.status, 200);
      const doc = html(r.text);
      assertNoForeignScript(doc, row.id);
      assert.ok(text(doc as unknown as Element).includes(HOSTILE_ORGANIZER), 'the organizer reads back as text');
      assert.equal(text(one(doc, byTag('h1'))), row.title);
      const [ld] = jsonLd(doc);
      assert.equal((ld!.organizer as { name: string }).name, HOSTILE_ORGANIZER);
      assert.equal(ld!.name, row.title);
      const ics = await get(srv.base, `/events/${row.id}.ics`);
      assert.equal(ics.status, 200);
      const [ev] = checkIcs(ics.text, row.id);
      assert.equal(new ICAL.Event(ev).summary, row.title);
    }
  });

  test('a canceled event keeps its page, with a banner, EventCancelled and STATUS:CANCELLED', async () => {
    const canceled = fx.rows.find((r) => r.title === 'Puppet Show for Families');
    assert.ok(canceled);
    const r = await get(srv.base, `/events/${canceled.id}`);
    assert.equal(r.status, 200);
    assert.match(r.text, /<strong>Canceled\.<\/strong> This event will not take place/);
    const [ld] = jsonLd(html(r.text));
    assert.equal(ld!.eventStatus, 'https://schema.org/EventCancelled');
    const ics = await get(srv.base, `/events/${canceled.id}.ics`);
    assert.equal(ics.headers.get('content-type'), 'text/calendar; charset=utf-8');
    assert.match(ics.headers.get('content-disposition') ?? '', new RegExp(`attachment; filename="${canceled.id}.ics"`));
    const [ev] = checkIcs(ics.text, canceled.id);
    assert.equal(ev!.getFirstPropertyValue('uid'), canceled.id);
    assert.equal(ev!.getFirstPropertyValue('status'), 'CANCELLED');
  });

  test('unknown ids and paths are HTML 404 pages with a search box; other methods 405', async () => {
    for (const p of [
      '/events/bsc_evt_00000000000000000000',
      '/events/nope',
      '/no/such/page',
      '/events/bsc_evt_00000000000000000000.ics',
      '/cities/atlantis',
      '/categories/nope',
    ]) {
      const r = await get(srv.base, p);
      assert.equal(r.status, 404, p);
      assertSecurityHeaders(r.headers, p);
      const doc = html(r.text);
      const form = one(doc, (e) => e.name === 'form' && getAttributeValue(e, 'action') === '/events');
      assert.ok(form, `${p}: a search form`);
      assert.ok(
        one(doc, (e) => e.name === 'input' && getAttributeValue(e, 'name') === 'q'),
        `${p}: a q box`,
      );
    }
    const post = await fetch(`${srv.base}/events`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assertSecurityHeaders(post.headers, 'POST');
    // API paths stay problem+json.
    const api = await get(srv.base, '/v1/nope');
    assert.equal(api.headers.get('content-type'), 'application/problem+json');
  });
});

/**
 * The categories keyless browsing leaves out: the Community plan's, as the API reports that plan
 * to one of its keys (the ledger is the one place they are written).
 */
let unlisted: readonly string[] = [];

/** The browse oracle: upcoming events in the categories keyless browsing lists, by start then id. */
function oracle(filter: (r: OracleRow) => boolean): string[] {
  return upcoming()
    .filter((r) => !r.categories.some((c) => unlisted.includes(c)))
    .filter(filter)
    .sort((a, b) => a.start_ms - b.start_ms || (a.id < b.id ? -1 : 1))
    .map((r) => r.id);
}

let walker = 0;

/**
 * Follows a listing's Next links from `start`, collecting the event ids in order. Each page is
 * asked from a client address of its own: a walk of a thousand events is more pages than one
 * person reads in a minute, and this test is about what the pages list.
 */
async function follow(start: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pages = 0;
  for (let next: string | null = start; next !== null; pages++) {
    walker++;
    const r = await get(srv.base, next, { headers: { 'x-forwarded-for': `198.51.${walker >> 8}.${walker & 255}` } });
    assert.equal(r.status, 200, next);
    assertSecurityHeaders(r.headers, next);
    const doc = html(r.text);
    assertNoForeignScript(doc, next);
    const links = all(doc, (e) => e.name === 'a' && /^\/events\/bsc_evt_[0-9a-f]{20}$/.test(getAttributeValue(e, 'href') ?? ''));
    for (const a of links) {
      const id = (getAttributeValue(a, 'href') ?? '').slice('/events/'.length);
      if (ids.at(-1) !== id) ids.push(id);
    }
    const nav = one(doc, (e) => e.name === 'nav' && /pagination/i.test(getAttributeValue(e, 'aria-label') ?? ''));
    const nextLink = nav ? findOne((e) => e.name === 'a' && /next/i.test(text(e)), nav.children) : null;
    next = nextLink ? (getAttributeValue(nextLink, 'href') ?? null) : null;
    assert.ok(pages < 200, 'paging ends');
  }
  return { ids, pages };
}

describe('browse', () => {
  test('filters and paging list exactly what the oracle says, in order', async () => {
    const berkeley = await follow('/events?city=Berkeley&age_min=3&age_max=5');
    const want = oracle(
      (r) => r.venue_city === 'Berkeley' && (r.age_min_months === null || (r.age_min_months <= 5 * 12 + 11 && (r.age_max_months ?? 0) >= 36)),
    );
    assert.deepEqual(berkeley.ids, want);
    assert.ok(berkeley.pages > 1, 'more than one page');

    const free = await follow('/events?is_free=true&category=storytime&city=');
    assert.deepEqual(
      free.ids,
      oracle((r) => r.is_free && r.categories.includes('storytime')),
    );
  });

  test('city and category landing pages are the same listings', async () => {
    const city = await follow('/cities/berkeley');
    assert.deepEqual(
      city.ids,
      oracle((r) => r.venue_city === 'Berkeley'),
    );
    const cat = await follow('/categories/storytime');
    assert.deepEqual(
      cat.ids,
      oracle((r) => r.categories.includes('storytime')),
    );
  });

  test('the form carries every filter of the API; empty fields and tracking parameters are ignored', async () => {
    const r = await get(srv.base, '/events?city=&q=&utm_source=newsletter&week=');
    assert.equal(r.status, 200);
    const doc = html(r.text);
    const form = one(doc, (e) => e.name === 'form' && getAttributeValue(e, 'action') === '/events#results');
    assert.ok(form);
    const names = new Set(
      findAll((e) => (e.name === 'input' || e.name === 'select') && getAttributeValue(e, 'name') !== undefined, form.children).map((e) =>
        getAttributeValue(e, 'name'),
      ),
    );
    // week and radius_km are reached through the website's when and miles (issue 28 item 4).
    for (const p of ['city', 'lat', 'lng', 'near', 'miles', 'age_min', 'age_max', 'category', 'is_free', 'when', 'start_date', 'end_date', 'q'])
      assert.ok(names.has(p), `the form has ${p}`);
    const subscribe = one(doc, (e) => e.name === 'a' && (getAttributeValue(e, 'href') ?? '').startsWith('webcal://'));
    assert.ok(subscribe, 'a subscribe link');
  });

  test('bad filters are a 400 page that says what to change, with the form', async () => {
    // Named by the form's labels, not the API's parameter names (issue 28 item 7; browse.test.ts tries every field).
    for (const [q, label] of [
      ['age_min=abc', 'From age:'],
      ['city=Atlantis', 'City: we have no events in "Atlantis"'],
      ['age_min=9&age_max=3', 'To age: must not be less than “From age”'],
      ['start_date=2026-13-01', 'From date:'],
    ] as const) {
      const r = await get(srv.base, `/events?${q}`);
      assert.equal(r.status, 400, q);
      assertSecurityHeaders(r.headers, q);
      assert.ok(text(one(html(r.text), (e) => getAttributeValue(e, 'class') === 'error-summary')).includes(label), `${q}: says ${label}`);
      assert.ok(
        one(html(r.text), (e) => e.name === 'form' && getAttributeValue(e, 'action') === '/events#results'),
        `${q}: the form is there`,
      );
    }
  });

  test('the subscription calendar is the same search, read by ical.js', async () => {
    const r = await get(srv.base, '/events.ics?city=Berkeley');
    assert.equal(r.status, 200);
    const events = checkIcs(r.text, '/events.ics');
    // One page of the search: the next 20 events, as the listing shows them.
    assert.deepEqual(
      events.map((e) => e.getFirstPropertyValue('uid')),
      oracle((x) => x.venue_city === 'Berkeley').slice(0, 20),
    );
    const again = await get(srv.base, '/events.ics?city=Berkeley', { headers: { 'if-none-match': r.headers.get('etag') ?? '' } });
    assert.equal(again.status, 304);
  });

  test('browsing needs no key and never touches a quota', async () => {
    const community = provisionKey(srv.config.ledgerDir, { plan: 'community' });
    await get(srv.base, '/events?city=Oakland');
    await get(srv.base, `/events/${upcoming()[0]!.id}`);
    const usage = await get(srv.base, `/v1/usage?api_key=${community.key}`);
    assert.equal(usage.json.records.used, 0);
  });
});

describe('home and docs', () => {
  test('home links to browse, docs, cities and categories', async () => {
    const r = await get(srv.base, '/');
    assert.equal(r.status, 200);
    assertSecurityHeaders(r.headers, '/');
    const hrefs = new Set(all(html(r.text), byTag('a')).map((a) => getAttributeValue(a, 'href')));
    for (const h of ['/events', '/docs', '/cities/berkeley', '/categories/storytime']) assert.ok(hrefs.has(h), `home links ${h}`);
  });

  test('docs document every OpenAPI path; every problem type URL resolves to its anchor', async () => {
    const doc = await get(srv.base, '/docs');
    assert.equal(doc.status, 200);
    const openapi = (await get(srv.base, '/v1/openapi.json')).json as { paths: Record<string, unknown> };
    for (const p of Object.keys(openapi.paths)) assert.ok(doc.text.includes(p.replaceAll('{', '{')), `docs mention ${p}`);
    const errors = await get(srv.base, '/docs/errors');
    assert.equal(errors.status, 200);
    const ids = new Set(all(html(errors.text), (e) => e.attribs.id !== undefined).map((e) => e.attribs.id));
    for (const code of Object.keys(ERRORS)) assert.ok(ids.has(code), `/docs/errors#${code}`);
    // A problem's type points there.
    const problem = await get(srv.base, '/v1/events?age_min=abc');
    const type = new URL(problem.json.type as string);
    assert.equal(`${type.origin}${type.pathname}`, `${WEB}/docs/errors`);
    assert.ok(ids.has(type.hash.slice(1)));
  });

  test('docs: a page per route, /v1/usage listing where its key goes; an unknown page is a 404 page', async () => {
    const usage = await get(srv.base, '/docs/usage');
    assert.equal(usage.status, 200);
    assertSecurityHeaders(usage.headers, '/docs/usage');
    assert.match(usage.text, /<code>api_key<\/code><\/th><td data-label="In">query<\/td>/);
    assert.match(usage.text, /<code>Authorization<\/code><\/th><td data-label="In">header<\/td>/);
    const missing = await get(srv.base, '/docs/no-such-route');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /^text\/html/);
  });

  test('static assets: long-lived, conditional, typed', async () => {
    for (const [p, type] of [
      ['/static/site.css', 'text/css'],
      ['/static/site.js', 'text/javascript'],
      ['/static/favicon.svg', 'image/svg+xml'],
    ] as const) {
      const r = await get(srv.base, p);
      assert.equal(r.status, 200, p);
      assert.ok((r.headers.get('content-type') ?? '').startsWith(type), p);
      const again = await get(srv.base, p, { headers: { 'if-none-match': r.headers.get('etag') ?? '' } });
      assert.equal(again.status, 304, p);
    }
  });
});

describe('gone events', () => {
  test('an id that an earlier snapshot served is 410 with a link to similar events (API: 404 that says so)', { timeout: 60_000 }, async () => {
    const hostile = fx.rows.find((r) => r.organizer === HOSTILE_ORGANIZER && r.title.startsWith('Storytime'));
    const festival = fx.rows.find((r) => r.organizer === HOSTILE_ORGANIZER && r.title === 'Winter Lights Festival');
    assert.ok(hostile && festival);
    assert.ok(festival.categories.includes('festivals'), `the festival is in festivals: ${festival.categories.join(',')}`);
    const next = await fx.rebuildWithoutHostile();
    // Wait for the server to switch to the new snapshot.
    for (let i = 0; i < 300; i++) {
      if (srv.server.snapshots.current?.ref.id === next.manifest.id) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(srv.server.snapshots.current?.ref.id, next.manifest.id);
    const r = await get(srv.base, `/events/${hostile.id}`);
    assert.equal(r.status, 410);
    assertSecurityHeaders(r.headers, '410');
    const doc = html(r.text);
    assert.ok(text(doc as unknown as Element).includes(hostile.title), 'says which event it was');
    const similar = all(doc, (e) => e.name === 'a' && (getAttributeValue(e, 'href') ?? '').startsWith('/events?'));
    assert.ok(similar.length > 0, 'links to similar events');
    const href = getAttributeValue(similar[0]!, 'href') ?? '';
    assert.equal((await get(srv.base, href)).status, 200);
    const api = await get(srv.base, `/v1/events/${hostile.id}`, { headers: { authorization: `Bearer ${partnerKey}` } });
    assert.equal(api.status, 404);
    assert.match(api.json.detail, /no longer listed/);
    // A plan that never received festivals learns nothing of a gone festival, not even its title.
    const told = await get(srv.base, `/v1/events/${festival.id}`, { headers: { authorization: `Bearer ${partnerKey}` } });
    assert.match(told.json.detail, /Winter Lights Festival.*no longer listed/);
    const untold = await get(srv.base, `/v1/events/${festival.id}`);
    assert.equal(untold.status, 404);
    assert.ok(!untold.json.detail.includes('Winter Lights') && !untold.json.detail.includes('no longer listed'), untold.json.detail);
    assert.equal((await get(srv.base, `/events/${festival.id}`)).status, 410, 'the website shows every category');
  });
});
