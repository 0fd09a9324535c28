// Issue 28 item 6: every count the home page shows is the total of the page it links to (both
// are what keyless browsing lists now: upcoming events, in the categories the Community plan
// lists), no link on the home page opens an empty listing, and an empty city or category page
// with no filter of the visitor's says plainly there is nothing coming up rather than "Try fewer
// filters". Over real HTTP on the sample snapshot; the same pages in a real browser (axe, and
// screenshots at phone and desktop widths) where chromium is installed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomUtils, parseDocument } from 'htmlparser2';
import { get, startTestServer, type TestServer } from '../helpers.ts';
import { assertAccessible, browserSkip, launchBrowser, screenshot, type TestBrowser } from './browser.ts';
import { webFixture, type WebFixture } from './fixture.ts';

type Doc = ReturnType<typeof parseDocument>;
type El = ReturnType<typeof DomUtils.findAll>[number];

const all = (root: Doc | El, pred: (e: El) => boolean): El[] => DomUtils.findAll(pred, root.children);
const text = (e: El | Doc): string => DomUtils.textContent(e).replace(/\s+/g, ' ').trim();
const attr = (e: El, name: string): string | undefined => DomUtils.getAttributeValue(e, name);
const hasClass = (e: El, c: string): boolean => (attr(e, 'class') ?? '').split(/\s+/).includes(c);
const main = (doc: Doc): El => {
  const m = all(doc, (e) => e.name === 'main');
  assert.equal(m.length, 1, 'one <main>');
  return m[0]!;
};

/** "1,228" → 1228. */
const number = (s: string): number => Number(s.replaceAll(',', ''));
/** A count of events as the site writes it: "1,228 events", "5,100 upcoming family-friendly events", "(1 event)". */
const COUNT = /(?<![\d,])(\d[\d,]*) (?:[a-z-]+ ){0,2}events?\b/;

/** A link that states a count: the count in its own text, or in the `.count` right after it. */
interface CountedLink {
  readonly href: string;
  readonly label: string;
  readonly count: number;
}

function countedLinks(doc: Doc): CountedLink[] {
  const out: CountedLink[] = [];
  for (const a of all(main(doc), (e) => e.name === 'a')) {
    const href = attr(a, 'href') ?? '';
    if (!href.startsWith('/')) continue;
    let said = COUNT.exec(text(a));
    if (said === null) {
      const next = DomUtils.nextElementSibling(a);
      if (next !== null && hasClass(next, 'count')) said = COUNT.exec(text(next));
    }
    if (said !== null) out.push({ href, label: text(a), count: number(said[1]!) });
  }
  return out;
}

/** The total a listing page states: "1,228 events" or "Showing 1–20 of 1,228 events"; 0 when it lists none. */
function listedTotal(doc: Doc, what: string): number {
  const stated = all(doc, (e) => hasClass(e, 'result-count'));
  const cards = all(doc, (e) => e.name === 'li' && hasClass(e, 'card')).length;
  if (stated.length === 0) {
    assert.equal(cards, 0, `${what}: events listed without a count`);
    return 0;
  }
  const m = /(?<![\d,])(\d[\d,]*) events?$/.exec(text(stated[0]!));
  assert.ok(m, `${what}: a total in "${text(stated[0]!)}"`);
  assert.ok(cards > 0, `${what}: a total but no events listed`);
  return number(m[1]!);
}

let fx: WebFixture;
let srv: TestServer;
/** The same snapshot with the clock a year on: every event has ended, so every listing is empty. */
let later: TestServer;

before(async () => {
  fx = await webFixture();
  // The tests below read every page the home page links to, from one address.
  srv = await startTestServer(fx.dataDir, { WEB_LISTINGS_PER_MINUTE: '100000' });
  later = await startTestServer(fx.dataDir, { WEB_LISTINGS_PER_MINUTE: '100000', FAMILY_EVENTS_NOW: '2027-12-01T09:00:00-08:00' });
});
after(async () => {
  await later?.stop();
  await srv?.stop();
  await fx?.cleanup();
});

describe('the home page’s counts', () => {
  test('every count on the home page is the total the linked page shows', async () => {
    const home = await get(srv.base, '/');
    assert.equal(home.status, 200);
    const links = countedLinks(parseDocument(home.text));
    const hrefs = links.map((l) => l.href);
    assert.ok(hrefs.includes('/events'), `the count of all events links to /events: ${hrefs.join(' ')}`);
    assert.ok(
      hrefs.some((h) => h.startsWith('/categories/')),
      'categories show counts',
    );
    assert.ok(
      hrefs.some((h) => h.startsWith('/cities/')),
      'cities show counts',
    );
    const wrong: string[] = [];
    for (const l of links) {
      const page = await get(srv.base, l.href);
      assert.equal(page.status, 200, `GET ${l.href}`);
      const total = listedTotal(parseDocument(page.text), l.href);
      if (total !== l.count) wrong.push(`${l.label} (${l.href}): ${l.count.toLocaleString('en-US')} on home, ${total.toLocaleString('en-US')} on its page`);
    }
    assert.deepEqual(wrong, [], 'counts that disagree');
  });

  test('no link on the home page opens an empty listing', async () => {
    const doc = parseDocument((await get(srv.base, '/')).text);
    const listings = all(main(doc), (e) => e.name === 'a')
      .map((a) => attr(a, 'href') ?? '')
      .filter((h) => /^\/(?:events|cities\/[^/?#]+|categories\/[^/?#]+)$/.test(h));
    assert.ok(listings.length > 10, `the home page links listings: ${listings.length}`);
    const empty: string[] = [];
    for (const href of new Set(listings)) {
      const page = await get(srv.base, href);
      assert.equal(page.status, 200, `GET ${href}`);
      if (listedTotal(parseDocument(page.text), href) === 0) empty.push(href);
    }
    assert.deepEqual(empty, [], 'home links to pages that list nothing');
  });

  test('when nothing is coming up, the home page links no listing with a count and says so', async () => {
    const home = await get(later.base, '/');
    assert.equal(home.status, 200);
    const doc = parseDocument(home.text);
    const linked = all(main(doc), (e) => e.name === 'a').map((a) => attr(a, 'href') ?? '');
    assert.deepEqual(
      linked.filter((h) => /^\/(?:cities|categories)\//.test(h)),
      [],
      'no city or category linked',
    );
    assert.match(text(main(doc)), /no upcoming events/i);
  });
});

describe('an empty listing', () => {
  test('a category page with nothing coming up says so, not "Try fewer filters", and links somewhere useful', async () => {
    const r = await get(later.base, '/categories/storytime');
    assert.equal(r.status, 200);
    const doc = parseDocument(r.text);
    const body = text(main(doc));
    assert.doesNotMatch(body, /fewer filters/i);
    assert.match(body, /no upcoming events in Storytime/i);
    const empty = all(main(doc), (e) => hasClass(e, 'empty'));
    assert.equal(empty.length, 1, 'one empty-results message');
    const hrefs = all(empty[0]!, (e) => e.name === 'a').map((a) => attr(a, 'href'));
    assert.ok(hrefs.includes('/'), `links back to the home page's lists: ${hrefs.join(' ')}`);
  });

  test('a city page with nothing coming up says so in the city’s name', async () => {
    const r = await get(later.base, '/cities/berkeley');
    assert.equal(r.status, 200);
    const body = text(main(parseDocument(r.text)));
    assert.doesNotMatch(body, /fewer filters/i);
    assert.match(body, /no upcoming events in Berkeley/i);
  });

  test('with a filter of the visitor’s, an empty page still suggests fewer filters', async () => {
    const r = await get(srv.base, '/categories/storytime?q=zzzzqqqq');
    assert.equal(r.status, 200);
    assert.match(text(main(parseDocument(r.text))), /fewer filters/i);
  });
});

describe('the home page in a real browser', { skip: browserSkip() }, () => {
  let chrome: TestBrowser;
  before(async () => {
    chrome = await launchBrowser();
  });
  after(async () => {
    await chrome?.close();
  });

  for (const [name, width, height] of [
    ['phone', 390, 844],
    ['desktop', 1366, 900],
  ] as const) {
    test(`at ${width}×${height}: the counted links and an empty category page, axe-clean`, async () => {
      const page = await chrome.context.newPage();
      try {
        await page.setViewportSize({ width, height });
        await page.goto(`${srv.base}/`, { waitUntil: 'load' });
        const counts = await page.locator('main .count').count();
        assert.ok(counts > 5, `counts shown: ${counts}`);
        const wide = await page.evaluate('document.documentElement.scrollWidth');
        assert.ok(Number(wide) <= width, `no sideways scrolling: ${String(wide)} px wide`);
        await assertAccessible(page, 'home');
        await screenshot(page, `item6-home-${name}`);
        await page.goto(`${later.base}/categories/storytime`, { waitUntil: 'load' });
        assert.match((await page.locator('main .empty').textContent()) ?? '', /no upcoming events in Storytime/i);
        await assertAccessible(page, 'an empty category page');
        await screenshot(page, `item6-empty-category-${name}`);
      } finally {
        await page.close();
      }
    });
  }
});
