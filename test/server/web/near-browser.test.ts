// "When" and "Near" in a real browser (issue 28, item 4), on a phone (390×844) and a desktop
// (1366×900): a parent chooses This weekend, types a ZIP code and searches; the URL reads as the
// search (?near=94110&when=weekend), the results come nearest first with "mi away", and the form
// shows the choices again. "Use my location" (site.js, where navigator.geolocation exists) searches
// from the browser's position; without JavaScript the button is absent and the form still works.
// Full-page screenshots item4-*-phone and item4-*-desktop go to the directory browser.ts prints.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { sampleFixture } from '../helpers.ts';
import { assertAccessible, browserSkip, siteBesideBrowser, screenshot, type TestBrowser } from './browser.ts';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;

/** Where the browser says it is: downtown Berkeley. */
const HERE = { latitude: 37.8716, longitude: -122.2727 };

let chrome: TestBrowser | undefined;
let web: string;

siteBesideBrowser(
  () => sampleFixture(),
  (s) => {
    ({ chrome, web } = s);
  },
  { env: { WEB_LISTINGS_PER_MINUTE: '1000' } },
);

/** The form's filters are folded into a disclosure (item 2): opened as a person opens it, by its summary. */
async function openFilters(page: Page): Promise<void> {
  await page.locator('details.filter-panel > summary').click();
}

async function contextAt(size: { width: number; height: number }, javaScriptEnabled = true): Promise<BrowserContext> {
  assert.ok(chrome);
  const context = await chrome.browser.newContext({
    viewport: size,
    locale: 'en-US',
    javaScriptEnabled,
    geolocation: HERE,
    permissions: ['geolocation'],
    serviceWorkers: 'block',
  });
  context.setDefaultTimeout(90_000);
  return context;
}

/** The cards as a person reads them. */
const cards = (page: Page): Promise<string[]> =>
  page.locator('li.card').evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()));

/** "2.3 mi away" → 2.3, for each card. */
const milesOf = (texts: readonly string[]): number[] =>
  texts.map((t) => {
    const m = / ([0-9.]+) mi away/.exec(t);
    assert.ok(m, `a card says how far in miles: ${t}`);
    return Number(m[1]);
  });

const fitsWidth = async (page: Page, what: string): Promise<void> => {
  const [scroll, inner] = await page.evaluate<[number, number]>('[document.documentElement.scrollWidth, window.innerWidth]');
  assert.ok(scroll <= inner, `${what}: ${scroll} px wide on a ${inner} px screen`);
};

describe('When and Near on a phone and a desktop', { skip: browserSkip() }, () => {
  for (const size of WIDTHS) {
    test(`${size.name}: This weekend near a ZIP code`, async () => {
      const context = await contextAt(size);
      try {
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('console', (m) => {
          if (m.type() === 'error') errors.push(m.text());
        });
        assert.equal((await page.goto(`${web}/events`))?.status(), 200);
        assert.equal(await page.locator('select#f-when').count(), 1, 'a When choice');
        assert.equal(await page.locator('input#f-near').count(), 1, 'a ZIP code or town field');
        assert.equal(await page.locator('input[name="lat"]:not([type="hidden"])').count(), 0, 'latitude is not a field to type');
        await openFilters(page);
        await page.getByLabel('When').selectOption({ label: 'This weekend' });
        await page.getByLabel('ZIP code or town').fill('94110');
        await page.getByLabel('Within').selectOption({ label: '5 mi' });
        await Promise.all([page.waitForURL(/near=/), page.getByRole('button', { name: 'Search events' }).click()]);
        const url = new URL(page.url());
        assert.deepEqual([...url.searchParams].sort(), [
          ['miles', '5'],
          ['near', '94110'],
          ['when', 'weekend'],
        ]);
        const texts = await cards(page);
        assert.ok(texts.length > 0, 'events this weekend near 94110');
        const miles = milesOf(texts);
        assert.ok(
          miles.every((m, i) => m <= 5.05 && (i === 0 || m >= miles[i - 1]!)),
          `within 5 mi, nearest first: ${miles.join(', ')}`,
        );
        assert.ok(!texts.some((t) => / km away/.test(t)));
        // Saturday and Sunday only (the fixture's clock is Saturday, November 21).
        assert.ok(
          texts.every((t) => /Sat, Nov 21|Sun, Nov 22/.test(t)),
          texts.find((t) => !/Sat, Nov 21|Sun, Nov 22/.test(t)),
        );
        assert.equal(await page.locator('#f-when').inputValue(), 'weekend', 'the form shows the choice again');
        assert.equal(await page.locator('#f-near').inputValue(), '94110');
        assert.ok((await page.locator('.near-place').textContent())?.includes('94110 (San Francisco)'));
        await fitsWidth(page, 'results');
        await assertAccessible(page, `weekend near 94110 (${size.name})`);
        await screenshot(page, `item4-weekend-zip-${size.name}`);

        // A place we do not know: the page says what to type.
        await openFilters(page);
        await page.getByLabel('ZIP code or town').fill('Berkly');
        const [res] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Search events' }).click()]);
        assert.equal(res?.status(), 400);
        const error = (await page.locator('#f-near-error').textContent()) ?? '';
        assert.ok(error.includes('Did you mean Berkeley?'), error);
        assert.ok(error.includes('94110'), error);
        await fitsWidth(page, 'error');
        await assertAccessible(page, `unknown place (${size.name})`);
        await screenshot(page, `item4-unknown-place-${size.name}`);
        assert.deepEqual(
          errors.filter((e) => !e.includes('400')),
          [],
          'no console errors',
        );
      } finally {
        await context.close();
      }
    });

    test(`${size.name}: Use my location`, async () => {
      const context = await contextAt(size);
      try {
        const page = await context.newPage();
        await page.goto(`${web}/events?when=today`);
        await openFilters(page);
        const button = page.getByRole('button', { name: 'Use my location' });
        assert.equal(await button.count(), 1, 'site.js adds the button where the browser can locate');
        const box = await button.boundingBox();
        assert.ok(box && box.height >= 24 && box.width >= 24, 'a tap target of 24 px at least');
        await fitsWidth(page, 'the form with the button');
        await screenshot(page, `item4-locate-button-${size.name}`);
        await Promise.all([page.waitForURL(/lat=/), button.click()]);
        const url = new URL(page.url());
        assert.equal(url.searchParams.get('lat'), HERE.latitude.toFixed(4));
        assert.equal(url.searchParams.get('lng'), HERE.longitude.toFixed(4));
        assert.equal(url.searchParams.get('when'), 'today', 'the other filters stay');
        assert.equal(url.searchParams.get('near'), null);
        const texts = await cards(page);
        assert.ok(texts.length > 0, 'events today near downtown Berkeley');
        const miles = milesOf(texts);
        assert.ok(
          miles.every((m, i) => m <= 10.05 && (i === 0 || m >= miles[i - 1]!)),
          `within 10 mi, nearest first: ${miles.join(', ')}`,
        );
        assert.ok((await page.locator('.near-place').textContent())?.includes('the location 37.8716, -122.2727'));
        await assertAccessible(page, `near my location (${size.name})`);
        await screenshot(page, `item4-my-location-${size.name}`);
      } finally {
        await context.close();
      }
    });
  }

  test('without JavaScript: no "Use my location", and the form still searches', async () => {
    const context = await contextAt(WIDTHS[0], false);
    try {
      const page = await context.newPage();
      await page.goto(`${web}/events`);
      assert.equal(await page.getByRole('button', { name: 'Use my location' }).count(), 0);
      await openFilters(page);
      await page.getByLabel('When').selectOption('tomorrow');
      await page.getByLabel('ZIP code or town').fill('Oakland');
      await Promise.all([page.waitForURL(/near=Oakland/), page.getByRole('button', { name: 'Search events' }).click()]);
      assert.equal(new URL(page.url()).searchParams.get('when'), 'tomorrow');
      assert.ok((await page.locator('.near-place').textContent())?.includes('Oakland'));
    } finally {
      await context.close();
    }
  });
});
