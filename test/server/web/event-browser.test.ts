// The event page in a real browser (issue 28, item 5), on a phone (390×844) and a desktop (1366×900):
// axe clean, no console error or CSP violation, nothing wider than the screen; the upstream picture
// in its box; "Back to results" returns to the very search the visitor came from; Share hands the
// page's link to the share sheet where there is one and copies it (saying so) where there is not;
// "Show map" loads OpenStreetMap's map of the place into its frame; a canceled event says so under
// its title and offers no calendar. The machines running the tests have no internet: the upstream
// pictures and OpenStreetMap are answered by stand-ins routed in the browser, so what is checked is
// our page, and a request that was never meant to leave still fails the test as a console error.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import type { BrowserContext, Page } from 'playwright-core';
import { NOW } from '../helpers.ts';
import { assertAccessible, browserSkip, siteBesideBrowser, screenshot, type TestBrowser } from './browser.ts';
import { webFixture } from './fixture.ts';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;

/** A 2:1 picture, as an upstream's event image would be (an SVG: no binary in the test). */
const PICTURE = `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="600" viewBox="0 0 1200 600"><rect width="1200" height="600" fill="#7fb3d5"/><circle cx="600" cy="300" r="160" fill="#f4d03f"/></svg>`;
const MAP_STAND_IN = '<!doctype html><html lang="en"><title>Map stand-in</title><body><p>OpenStreetMap stand-in</p></body></html>';

let chrome: TestBrowser | undefined;
let web: string;

interface Picked {
  readonly id: string;
  readonly title: string;
  readonly city: string;
  readonly lat: number;
  readonly lng: number;
}
let withImage: Picked;
let canceled: Picked;

/** What a page did that it should not have: console errors, uncaught exceptions, CSP violations. */
interface Visit {
  readonly page: Page;
  readonly problems: string[];
  /** Every request that left for another origin (each answered by a stand-in). */
  readonly outside: string[];
}

async function visitor(size: { width: number; height: number }, init: string[] = []): Promise<{ context: BrowserContext; visit: Visit }> {
  assert.ok(chrome);
  const context = await chrome.browser.newContext({ viewport: size, locale: 'en-US' });
  context.setDefaultTimeout(90_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: web });
  const problems: string[] = [];
  const outside: string[] = [];
  await context.exposeBinding('__reportCsp', (_source, v: string) => problems.push(`CSP violation: ${v}`));
  // Strings: these tests' types have no DOM.
  await context.addInitScript('document.addEventListener("securitypolicyviolation", (e) => window.__reportCsp(e.violatedDirective + " " + e.blockedURI));');
  for (const s of init) await context.addInitScript(s);
  await context.route(
    (u) => u.origin !== web,
    async (route) => {
      const u = new URL(route.request().url());
      outside.push(u.href);
      if (u.origin === 'https://www.openstreetmap.org') return route.fulfill({ status: 200, contentType: 'text/html', body: MAP_STAND_IN });
      if (route.request().resourceType() === 'image') return route.fulfill({ status: 200, contentType: 'image/svg+xml', body: PICTURE });
      return route.abort();
    },
  );
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  return { context, visit: { page, problems, outside } };
}

const overflow = (page: Page): Promise<[number, number]> => page.evaluate<[number, number]>('[document.documentElement.scrollWidth, window.innerWidth]');

async function assertSound(v: Visit, what: string): Promise<void> {
  const [scroll, inner] = await overflow(v.page);
  assert.ok(scroll <= inner, `${what}: the page is ${scroll} px wide in a ${inner} px window`);
  await assertAccessible(v.page, what);
  await v.page.evaluate('0');
  assert.deepEqual(v.problems, [], `${what}: no console errors or CSP violations`);
}

siteBesideBrowser(
  () => webFixture(),
  (s) => {
    ({ chrome, web } = s);
  },
  {
    ready: async ({ fx }) => {
      const db = await DuckDBInstance.create(':memory:');
      const c = await db.connect();
      const parquet = path.join(fx.build.dir, 'events.parquet').replaceAll("'", "''");
      // Keyless browsing leaves out festivals and seasonal events: the picks are ones its searches list.
      const one = async (where: string): Promise<Picked> => {
        const rows = (
          await c.runAndReadAll(
            `SELECT id, title, venue_city AS city, venue_lat AS lat, venue_lng AS lng FROM read_parquet('${parquet}')
    WHERE ${where} AND NOT list_has_any(categories, ['festivals', 'seasonal']) ORDER BY start_ms, id LIMIT 1`,
          )
        ).getRowObjectsJson() as unknown as Picked[];
        assert.ok(rows[0], `the fixture has an event where ${where}`);
        return rows[0];
      };
      withImage = await one(`image_url IS NOT NULL AND NOT is_canceled AND start_ms > ${NOW.getTime()}`);
      canceled = await one(`is_canceled AND end_ms > ${NOW.getTime()}`);
      c.closeSync();
      db.closeSync();
    },
  },
);

describe('the event page in a real browser (issue 28 item 5)', { skip: browserSkip() }, () => {
  for (const size of WIDTHS) {
    test(`${size.width}×${size.height}: from a search to the event and back to that very search; the picture, the map`, async () => {
      const { context, visit } = await visitor(size);
      const { page } = visit;
      try {
        const search = `/events?${new URLSearchParams({ q: withImage.title, city: withImage.city }).toString()}`;
        assert.equal((await page.goto(web + search))?.status(), 200);
        const link = page.locator(`a[href="/events/${withImage.id}"]`).first();
        assert.equal(await link.count(), 1, `the search ${search} lists ${withImage.id}`);
        await Promise.all([page.waitForURL(`${web}/events/${withImage.id}`), link.click()]);

        // The picture: shown, in its 2:1 box across the content's width.
        const img = page.locator('main img').first();
        await img.waitFor({ state: 'visible' });
        await page.waitForFunction('document.querySelector("main img").complete');
        const box = await img.boundingBox();
        assert.ok(box && box.width > 0 && Math.abs(box.width / box.height - 2) < 0.02, `a 2:1 box (${JSON.stringify(box)})`);
        assert.ok(box.x >= 0 && box.x + box.width <= size.width, 'the picture fits the window');
        assert.equal(await page.evaluate<number>('document.querySelector("main img").naturalWidth'), 1200, 'the upstream picture arrived');

        await assertSound(visit, `the event page at ${size.width} px`);
        assert.equal(
          visit.outside.filter((u) => !u.startsWith('https://') || !/\.(?:jpe?g|png|gif|webp)$/i.test(new URL(u).pathname)).length,
          0,
          `nothing but the picture left the site at load: ${visit.outside.join(', ')}`,
        );
        await screenshot(page, `item5-event-${size.name}`);

        // "Show map": OpenStreetMap's map of the venue, in its frame.
        const frame = page.frame({ name: 'event-map' });
        assert.ok(frame, 'the map frame');
        await Promise.all([frame.waitForURL(/^https:\/\/www\.openstreetmap\.org\/export\/embed\.html/), page.getByRole('link', { name: 'Show map' }).click()]);
        const marker = new URL(frame.url()).searchParams.get('marker')!.split(',').map(Number);
        assert.ok(Math.abs(marker[0]! - withImage.lat) < 1e-5 && Math.abs(marker[1]! - withImage.lng) < 1e-5, 'pinned on the venue');
        assert.equal(page.url(), `${web}/events/${withImage.id}`, 'the page itself stays');

        // Back to the search, exactly as it was asked.
        const back = page.getByRole('link', { name: 'Back to results' });
        assert.equal(await back.getAttribute('href'), search);
        await Promise.all([page.waitForURL(web + search), back.click()]);
        assert.equal(page.url(), web + search);
      } finally {
        await context.close();
      }
    });

    test(`${size.width}×${size.height}: Share copies the link and says so where there is no share sheet`, async () => {
      // Chromium on Linux has no share sheet; it is taken away in case a build has one.
      const { context, visit } = await visitor(size, ['delete Navigator.prototype.share;']);
      const { page } = visit;
      try {
        await page.goto(`${web}/events/${withImage.id}`);
        const button = page.getByRole('button', { name: 'Copy link' });
        await button.click();
        const status = page.getByRole('status').filter({ hasText: 'Link copied' });
        await status.waitFor({ state: 'visible' });
        assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), `${web}/events/${withImage.id}`);
        await assertSound(visit, `the event page after copying its link at ${size.width} px`);
      } finally {
        await context.close();
      }
    });

    test(`${size.width}×${size.height}: Share opens the share sheet with the page's title and link where there is one`, async () => {
      const { context, visit } = await visitor(size, [
        'Navigator.prototype.share = function (data) { window.__shared = JSON.stringify(data); return Promise.resolve(); };',
      ]);
      const { page } = visit;
      try {
        await page.goto(`${web}/events/${withImage.id}`);
        await page.getByRole('button', { name: 'Share', exact: true }).click();
        await page.waitForFunction('window.__shared !== undefined');
        const shared = JSON.parse(await page.evaluate<string>('window.__shared')) as { title: string; url: string };
        assert.deepEqual(shared, { title: withImage.title, url: `${web}/events/${withImage.id}` });
        assert.deepEqual(visit.problems, []);
      } finally {
        await context.close();
      }
    });

    test(`${size.width}×${size.height}: a canceled event says so under its title and offers no calendar`, async () => {
      const { context, visit } = await visitor(size);
      const { page } = visit;
      try {
        assert.equal((await page.goto(`${web}/events/${canceled.id}`))?.status(), 200);
        const title = await page.locator('h1').boundingBox();
        const alert = page.getByRole('alert');
        assert.match((await alert.textContent()) ?? '', /^Canceled\./);
        const status = await alert.boundingBox();
        assert.ok(title && status && status.y >= title.y + title.height && status.y - (title.y + title.height) < 48, 'the status is right under the title');
        assert.equal(await page.getByRole('heading', { name: 'Add to your calendar' }).count(), 0);
        assert.equal(await page.locator('a[href$=".ics"], a[href^="https://calendar.google.com/"]').count(), 0);
        await assertSound(visit, `a canceled event at ${size.width} px`);
        await screenshot(page, `item5-canceled-${size.name}`);
      } finally {
        await context.close();
      }
    });
  }

  test('without JavaScript the way back goes to all events', async () => {
    assert.ok(chrome);
    const context = await chrome.browser.newContext({ javaScriptEnabled: false, viewport: WIDTHS[0] });
    try {
      const page = await context.newPage();
      await page.goto(`${web}/events?city=${encodeURIComponent(withImage.city)}`);
      await Promise.all([page.waitForURL(/\/events\/bsc_evt_/), page.locator('a[href^="/events/bsc_evt_"]').first().click()]);
      assert.equal(await page.getByRole('link', { name: 'All events' }).first().getAttribute('href'), '/events');
      assert.equal(await page.getByRole('button', { name: /Share|Copy link/ }).count(), 0, 'no button that would do nothing');
    } finally {
      await context.close();
    }
  });
});
