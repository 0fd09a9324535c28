// The website in a real browser (Debian's chromium through playwright-core): every page template
// checked by axe-core against WCAG 2.2 A/AA; a person's path from an event_url in a live API answer
// to its page, its calendar file, and a filtered search paged to the end (the same ids, in the same
// order, as the API's own JSON); a hostile upstream that must stay text; and, last, an event that
// a newer snapshot dropped (410). Full-page screenshots go to the system's temp directory.
// The browser reaches the website through the shipped nginx site over TLS, as it is deployed (a test
// certificate made by openssl for this file, trusted by chromium by its key alone); the test's own
// API calls, the oracle, go to the server directly.
// One browser for the file; without chromium or nginx (outside CI) the whole file is one skipped line.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { findNginx, nginxSkip, requireNginx, startNginx, testCertificate, type Nginx, type TestCertificate } from '../../deploy/nginx.ts';
import { get, NOW, provisionKey, startTestServer, WEB, type TestServer } from '../helpers.ts';
import { checkIcs } from '../readers.ts';
import { assertAccessible, browserSkip, fixtureBesideBrowser, screenshot, type TestBrowser } from './browser.ts';
import { HOSTILE_ORGANIZER, webFixture, type WebFixture } from './fixture.ts';

const ZONE = 'America/Los_Angeles';
const EVENT_HREF = /^\/events\/(bsc_evt_[0-9a-f]{20})$/;
const EVENT_PAGE_URL = /\/events\/bsc_evt_[0-9a-f]{20}$/;

/** What these tests read of an API record. */
interface ApiRecord {
  readonly id: string;
  readonly title: string;
  readonly start_datetime: string;
  readonly end_datetime: string | null;
  readonly event_url: string;
  readonly is_canceled: boolean;
  readonly all_day: boolean;
  readonly organizer: string | null;
}

/** Pacific-time words by Intl (not the site's own formatter): "Sat, Dec 6", "Saturday, December 6", "10:30". */
const pacific = {
  shortDay: (iso: string): string =>
    new Intl.DateTimeFormat('en-US', { timeZone: ZONE, weekday: 'short', month: 'short', day: 'numeric' }).format(new Date(iso)),
  longDay: (iso: string): string => new Intl.DateTimeFormat('en-US', { timeZone: ZONE, weekday: 'long', month: 'long', day: 'numeric' }).format(new Date(iso)),
  /** "10:30" or "10" (the hour alone on the hour), without AM/PM. */
  clock: (iso: string): string => {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: ZONE, hour: 'numeric', minute: '2-digit' }).formatToParts(new Date(iso));
    const hour = parts.find((p) => p.type === 'hour')?.value ?? '?';
    const minute = parts.find((p) => p.type === 'minute')?.value ?? '?';
    return minute === '00' ? hour : `${hour}:${minute}`;
  },
};

const text = async (page: Page, selector: string): Promise<string> => ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

/** The record's JSON-LD block, parsed as a search engine reads it. */
async function jsonLd(page: Page): Promise<{ name: string; eventStatus: string; organizer?: { name: string } }> {
  const blocks = page.locator('script[type="application/ld+json"]');
  assert.equal(await blocks.count(), 1, 'one JSON-LD block');
  return JSON.parse((await blocks.textContent()) ?? '') as { name: string; eventStatus: string; organizer?: { name: string } };
}

/** A city's path segment as the brief defines it: lowercase, accents stripped, spaces (and other non-alphanumerics) to dashes. */
const citySlug = (name: string): string =>
  name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const NGINX = findNginx();

describe('the website in a real browser, through nginx over TLS', { skip: browserSkip() || nginxSkip(NGINX) }, () => {
  let fx: WebFixture;
  let srv: TestServer;
  let cert: TestCertificate;
  let front: Nginx;
  /** Where the browser goes: nginx's https origin in front of `srv`. */
  let site: string;
  let chrome: TestBrowser;
  let partnerKey: string;
  /** Berkeley's events as a Community key's live search returns them. */
  let berkeley: ApiRecord[];

  /** An event_url from the API, on this test server (the server links to WEB_BASE_URL=https://web.example). */
  const local = (eventUrl: string): string => {
    assert.ok(eventUrl.startsWith(`${WEB}/events/`), `event_url ${eventUrl} is on ${WEB}`);
    return site + eventUrl.slice(WEB.length);
  };

  /** A fresh tab at a path; asserts the status (and that it is an HTML page). */
  async function open(p: string, status = 200, context: BrowserContext = chrome.context): Promise<{ page: Page; res: Response }> {
    const page = await context.newPage();
    const res = await page.goto(p.startsWith('http') ? p : site + p, { waitUntil: 'load' });
    assert.ok(res, `no response for ${p}`);
    assert.equal(res.status(), status, `GET ${p}`);
    assert.match(res.headers()['content-type'] ?? '', /^text\/html/, `GET ${p} is HTML`);
    assert.ok(res.url().startsWith(`${site}/`), `${res.url()} is on nginx's https origin`);
    return { page, res };
  }

  async function withPage(p: string, status: number, fn: (page: Page) => Promise<void>): Promise<void> {
    const { page } = await open(p, status);
    try {
      await fn(page);
    } finally {
      await page.close();
    }
  }

  const row = (pred: (r: WebFixture['rows'][number]) => boolean, what: string): WebFixture['rows'][number] => {
    const found = fx.rows.find(pred);
    assert.ok(found, `the fixture has ${what}`);
    return found;
  };
  const hostile = (): WebFixture['rows'][number] => row((r) => r.organizer === HOSTILE_ORGANIZER && r.title.startsWith('Storytime'), 'the hostile storytime');
  const canceled = (): WebFixture['rows'][number] =>
    row((r) => r.organizer === HOSTILE_ORGANIZER && r.title === 'Puppet Show for Families', 'the canceled puppet show');

  before(async () => {
    cert = await testCertificate();
    await fixtureBesideBrowser(
      webFixture,
      (made) => {
        if (made.fx) fx = made.fx;
        if (made.chrome) chrome = made.chrome;
      },
      { trustSpki: cert.spki },
    );
    srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
    front = await startNginx(requireNginx(NGINX), srv.server.port, { tls: cert });
    site = front.base;
    partnerKey = provisionKey(srv.config.ledgerDir, { plan: 'partner', org: 'Browser oracle' }).key;
    const r = await get(srv.base, '/v1/events?city=Berkeley&limit=50');
    assert.equal(r.status, 200, r.text);
    berkeley = r.json.events as ApiRecord[];
    assert.ok(berkeley.length > 0, 'Berkeley has events');
  });

  after(async () => {
    await chrome?.close();
    await front?.stop();
    await srv?.stop();
    await fx?.cleanup();
    await cert?.cleanup();
  });

  // Two pages at a time: axe runs in each page's renderer, one core each; the long docs page goes first.
  describe('every page template passes axe-core (WCAG 2.2 A/AA)', { concurrency: 2 }, () => {
    test('the developer docs', () =>
      withPage('/docs', 200, async (page) => {
        await assertAccessible(page, '/docs');
        await screenshot(page, 'docs');
      }));

    test('home', () =>
      withPage('/', 200, async (page) => {
        await assertAccessible(page, 'the home page');
        await screenshot(page, 'home');
      }));

    test('browse with results', () =>
      withPage('/events', 200, async (page) => {
        assert.ok((await page.locator('.event-list li').count()) > 0, 'results listed');
        await assertAccessible(page, 'browse');
        await screenshot(page, 'browse');
      }));

    test('browse with an invalid filter: 400, the form again with the error', () =>
      withPage('/events?age_min=abc', 400, async (page) => {
        assert.equal(await page.locator('#f-age_min').getAttribute('aria-invalid'), 'true');
        assert.equal(await page.locator('#f-age_min').inputValue(), '', 'a number input cannot hold "abc"');
        assert.ok(await page.locator('[role="alert"]').first().isVisible(), 'an error summary');
        await assertAccessible(page, 'browse with errors');
      }));

    test('browse with no results', () =>
      withPage('/events?q=zzzzzz', 200, async (page) => {
        assert.equal(await page.locator('.event-list li').count(), 0);
        assert.match(await text(page, 'main'), /No events match/);
        await assertAccessible(page, 'browse with no results');
      }));

    test('an event page', async () => {
      const rec = berkeley.find((r) => !r.is_canceled);
      assert.ok(rec);
      await withPage(local(rec.event_url), 200, async (page) => {
        await assertAccessible(page, 'an event page');
        await screenshot(page, 'event');
      });
    });

    test('a canceled event: its page stays, with a banner', () =>
      withPage(`/events/${canceled().id}`, 200, async (page) => {
        assert.match(await text(page, '[role="alert"]'), /canceled/i);
        assert.equal((await jsonLd(page)).eventStatus, 'https://schema.org/EventCancelled');
        await assertAccessible(page, 'the canceled event');
        await screenshot(page, 'event-canceled');
      }));

    test('the hostile event', () =>
      withPage(`/events/${hostile().id}`, 200, async (page) => {
        await assertAccessible(page, 'the hostile event');
      }));

    test('an ended event', async () => {
      // The latest to end before the pinned clock: the kind of link an old newsletter still carries.
      const ended = fx.rows.filter((r) => r.end_ms < NOW.getTime()).sort((a, b) => b.end_ms - a.end_ms)[0];
      assert.ok(ended, 'the fixture has an event that ended before the pinned clock');
      await withPage(`/events/${ended.id}`, 200, async (page) => {
        assert.match(await text(page, 'main'), /has ended/);
        await assertAccessible(page, 'an ended event');
      });
    });

    test('a city page (its slug folded from the name)', async () => {
      const cities = ((await get(srv.base, '/v1/cities')).json as { cities: { name: string }[] }).cities.map((c) => c.name);
      const city = cities.find((c) => c.includes(' ')) ?? cities[0];
      assert.ok(city);
      await withPage(`/cities/${citySlug(city)}`, 200, async (page) => {
        assert.match(await text(page, 'h1'), new RegExp(city));
        await assertAccessible(page, `the city page of ${city}`);
      });
    });

    test('a category page', () =>
      withPage('/categories/storytime', 200, async (page) => {
        assert.match(await text(page, 'h1'), /storytime/i);
        await assertAccessible(page, 'the storytime category page');
      }));

    test('the error reference', () =>
      withPage('/docs/errors', 200, async (page) => {
        await assertAccessible(page, '/docs/errors');
      }));

    test('404: an unknown path and an unknown event id, each with a search box', async () => {
      await withPage('/events/bsc_evt_00000000000000000000', 404, async (page) => {
        assert.equal(await page.locator('form[role="search"] input[name="q"]').count(), 1);
      });
      await withPage('/no/such/page', 404, async (page) => {
        const box = page.locator('form[role="search"] input[name="q"]');
        assert.equal(await box.count(), 1, 'a search box');
        await assertAccessible(page, 'the 404 page');
        // The box works: it searches the browse page.
        await box.fill('storytime');
        await Promise.all([page.waitForURL(/\/events\?q=storytime$/), box.press('Enter')]);
        assert.ok((await page.locator('.event-list li').count()) > 0);
      });
    });
  });

  describe('a person following an event_url from the API', () => {
    test('the event page: title, when, and its .ics download read by ical.js', async () => {
      // A timed event (an all-day one reads "All day" rather than a clock).
      const rec = berkeley.find((r) => !r.is_canceled && !r.all_day);
      assert.ok(rec, 'a timed Berkeley event');
      const { page } = await open(local(rec.event_url));
      try {
        assert.equal(await text(page, 'h1'), rec.title);
        const when = page.locator('.facts time').first();
        assert.equal(await when.getAttribute('datetime'), rec.start_datetime);
        const whenText = ((await when.textContent()) ?? '').trim();
        const day = `${pacific.shortDay(rec.start_datetime)}, `;
        assert.ok(whenText.startsWith(day), `"${whenText}" starts with "${day}"`);
        assert.ok(
          whenText.slice(day.length).startsWith(pacific.clock(rec.start_datetime)),
          `"${whenText}" gives the start, ${pacific.clock(rec.start_datetime)}`,
        );
        if (rec.end_datetime !== null)
          assert.ok(whenText.includes(pacific.clock(rec.end_datetime)), `"${whenText}" gives the end, ${pacific.clock(rec.end_datetime)}`);

        const [download] = await Promise.all([page.waitForEvent('download'), page.locator('a[download]').first().click()]);
        assert.equal(download.suggestedFilename(), `${rec.id}.ics`);
        const body = await readFile(await download.path(), 'utf8');
        const [vevent, ...more] = checkIcs(body, 'the downloaded .ics');
        assert.ok(vevent);
        assert.equal(more.length, 0, 'one event');
        ICAL.TimezoneService.reset();
        const cal = new ICAL.Component(ICAL.parse(body) as unknown[]);
        for (const z of cal.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(new ICAL.Timezone(z));
        const ev = new ICAL.Event(vevent);
        assert.equal(ev.uid, rec.id);
        assert.equal(ev.summary, rec.title);
        assert.equal(ev.startDate.toJSDate().getTime(), Date.parse(rec.start_datetime));
      } finally {
        await page.close();
      }
    });

    test('browse with filters, every listed event opens, paging to the end matches the API', async () => {
      // A search of three pages (about 50 events), the hostile storytime among them.
      const search = 'city=Berkeley&category=storytime&age_min=3&age_max=6';
      // The oracle: the API's JSON for the same search, with a partner key (the website shows every
      // category; a Community key's plan leaves festivals and seasonal events out).
      const want: ApiRecord[] = [];
      let total = -1;
      for (let offset = 0; total < 0 || offset < total; offset += 100) {
        const r = await get(srv.base, `/v1/events?${search}&limit=100&offset=${offset}`, { headers: { authorization: `Bearer ${partnerKey}` } });
        assert.equal(r.status, 200, r.text);
        total = r.json.total as number;
        want.push(...(r.json.events as ApiRecord[]));
        if ((r.json.events as unknown[]).length === 0) break;
      }
      assert.equal(want.length, total);
      assert.ok(total > 40, `the search spans more than two pages (${total} events)`);
      assert.ok(
        want.some((r) => r.organizer === HOSTILE_ORGANIZER),
        'the hostile storytime is among them',
      );

      const { page } = await open('/events');
      const tab = await chrome.context.newPage();
      try {
        // The filters are folded under the search box (issue 28 item 2).
        await page.locator('details.filter-panel > summary').click();
        await page.locator('#f-city').selectOption('Berkeley');
        await page.locator('#f-category').selectOption('storytime');
        await page.locator('#f-age_min').fill('3');
        await page.locator('#f-age_max').fill('6');
        await Promise.all([page.waitForURL(/\/events\?/), page.getByRole('button', { name: 'Search events' }).click()]);
        const asked = new URL(page.url()).searchParams;
        assert.deepEqual(
          [...asked.entries()].sort(),
          [
            ['age_max', '6'],
            ['age_min', '3'],
            ['category', 'storytime'],
            ['city', 'Berkeley'],
          ],
          `empty fields left out of ${page.url()}`,
        );
        assert.ok((await text(page, 'h1')).length > 0);

        const seen: { id: string; title: string }[] = [];
        let firstPage: { id: string; title: string }[] = [];
        for (let n = 1; ; n++) {
          const count = await text(page, '.result-count');
          const first = seen.length + 1;
          const cards = page.locator('.event-list > li');
          const shown = await cards.count();
          assert.equal(count, `Showing ${first}–${seen.length + shown} of ${total} events`, `page ${n}`);
          for (const link of await cards.locator('h3 a').all()) {
            const id = EVENT_HREF.exec((await link.getAttribute('href')) ?? '')?.[1];
            assert.ok(id, `a card links to an event page (${await link.getAttribute('href')})`);
            seen.push({ id, title: ((await link.textContent()) ?? '').trim() });
          }
          // Each day's heading is the day its events start (or they began before today).
          for (const section of await page.locator('section.day').all()) {
            const heading = ((await section.locator('h2').textContent()) ?? '').trim();
            for (const time of await section.locator('.card-when time').all()) {
              const start = (await time.getAttribute('datetime')) ?? '';
              if (heading !== 'Already under way') assert.ok(heading.startsWith(pacific.longDay(start)), `"${heading}" heads an event starting ${start}`);
            }
          }
          if (n === 1) firstPage = [...seen];
          const next = page.locator('a[rel="next"]');
          if ((await next.count()) === 0) break;
          const href = new URL((await next.getAttribute('href')) ?? '', page.url()).href;
          await Promise.all([page.waitForURL(href), next.click()]);
        }
        assert.deepEqual(
          seen.map((s) => s.id),
          want.map((r) => r.id),
          'the website pages through the same events, in the same order, as the API',
        );
        assert.deepEqual(
          seen.map((s) => s.title),
          want.map((r) => r.title),
        );

        // Every event the search listed first opens its page.
        assert.equal(firstPage.length, 20);
        for (const s of firstPage) {
          const res = await tab.goto(`${site}/events/${s.id}`, { waitUntil: 'domcontentloaded' });
          assert.equal(res?.status(), 200, `/events/${s.id}`);
          assert.equal(await text(tab, 'h1'), s.title);
        }
        // And as a click does, from the last page's first card.
        const firstCard = page.locator('.event-list > li h3 a').first();
        const title = ((await firstCard.textContent()) ?? '').trim();
        await Promise.all([page.waitForURL(EVENT_PAGE_URL), firstCard.click()]);
        assert.equal(await text(page, 'h1'), title);
      } finally {
        await tab.close();
        await page.close();
      }
    });
  });

  describe('a hostile upstream in the browser', () => {
    test('no dialog, no script error, no CSP report; the organizer reads back exactly, in the page and in JSON-LD', async () => {
      const page = await chrome.context.newPage();
      const dialogs: string[] = [];
      const consoleErrors: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      page.on('pageerror', (e) => consoleErrors.push(e.message));
      // Installed before any of the page's own content runs (a string: these tests' types have no DOM).
      await page.addInitScript(
        'window.__csp = []; document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));',
      );
      const cspReports = (): Promise<string[]> => page.evaluate<string[]>('window.__csp');
      try {
        const rec = hostile();
        const api = await get(srv.base, `/v1/events/${rec.id}`, { headers: { authorization: `Bearer ${partnerKey}` } });
        assert.equal(api.status, 200, api.text);
        const fromApi = api.json as ApiRecord;
        assert.equal(fromApi.organizer, HOSTILE_ORGANIZER);
        const res = await page.goto(local(fromApi.event_url), { waitUntil: 'load' });
        assert.equal(res?.status(), 200);

        assert.equal(await text(page, 'h1'), fromApi.title);
        const organizer = page
          .locator('.facts > div')
          .filter({ has: page.locator('dt', { hasText: /^Organizer$/ }) })
          .locator('dd');
        assert.equal(((await organizer.textContent()) ?? '').trim(), HOSTILE_ORGANIZER);
        assert.equal((await jsonLd(page)).organizer?.name, HOSTILE_ORGANIZER);
        // The script elements are the JSON-LD data block and our own site.js: nothing upstream became one.
        const scripts = await page.evaluate<string[]>('[...document.scripts].map((s) => s.getAttribute("src") ?? s.type)');
        assert.equal(scripts.length, 2, scripts.join(', '));
        assert.ok(scripts.includes('application/ld+json'), scripts.join(', '));
        assert.ok(
          scripts.some((s) => /^\/static\/site\.(?:[\w-]+\.)?js$/.test(s)),
          scripts.join(', '),
        );
        assert.equal(await page.locator('a[href^="javascript:" i]').count(), 0, 'the javascript: URL is not a link');

        assert.deepEqual(dialogs, [], 'no dialog opened');
        assert.deepEqual(consoleErrors, [], 'no console errors');
        assert.deepEqual(await cspReports(), [], 'no CSP violations');

        // The listeners above do hear: a script written into the page now is refused by the CSP and reported.
        await page.evaluate('{ const s = document.createElement("script"); s.textContent = "window.__ran = 1"; document.body.append(s); }');
        await page.waitForFunction('window.__csp.length > 0');
        assert.equal(await page.evaluate('window.__ran'), undefined, 'the inline script did not run');
        assert.match((await cspReports())[0] ?? '', /^script-src/);
        assert.ok(
          consoleErrors.some((e) => /Content Security Policy/.test(e)),
          'the refusal reached the console',
        );
        assert.deepEqual(dialogs, []);
      } finally {
        await page.close();
      }
    });
  });

  // Last: it moves the server to a newer snapshot without the hostile upstream.
  describe('an event a newer snapshot dropped', () => {
    test('410 with a link to similar events; passes axe', async () => {
      const before = (await get(srv.base, '/readyz')).json as { snapshot: string };
      const gone = hostile();
      const next = await fx.rebuildWithoutHostile();
      assert.notEqual(next.manifest.id, before.snapshot);
      const deadline = Date.now() + 15_000;
      while (((await get(srv.base, '/readyz')).json as { snapshot: string }).snapshot !== next.manifest.id) {
        assert.ok(Date.now() < deadline, `the server did not load snapshot ${next.manifest.id} within 15 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal((await get(srv.base, `/events/${gone.id}`)).status, 410);
      // A browser that saw the page within its max-age would show its copy: this is a new visitor.
      const context = await chrome.newContext();
      const { page } = await open(`/events/${gone.id}`, 410, context);
      try {
        assert.match(await text(page, 'h1'), /no longer listed/);
        await assertAccessible(page, 'the 410 page');
        await screenshot(page, 'event-gone-410');
        const similar = page.getByRole('link', { name: 'See similar events' });
        await Promise.all([page.waitForURL(/\/events\?/), similar.click()]);
        assert.equal(new URL(page.url()).searchParams.get('city'), 'Berkeley');
        assert.ok((await page.locator('.event-list li').count()) > 0, 'similar events are listed');
      } finally {
        await context.close();
      }
    });
  });
});
