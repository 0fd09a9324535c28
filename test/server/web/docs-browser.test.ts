// The developer docs in a real browser (issue 28, item 14), on a phone (390×844) and a desktop
// (1366×900): the overview and a route's page are each a fraction of the one 38,000 px page they
// replace (heights printed), nothing is wider than the window and a parameter's Constraints and
// Description are on screen; the try-it console asks the test server with a real key and shows a
// 200 JSON answer without the key ever reaching the page's address; without JavaScript the same
// form answers from the API; old /docs#<operation> links still reach their section; and each
// page's Python sample runs against the server as printed. axe-clean; screenshots item14-*.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { DomUtils, parseDocument } from 'htmlparser2';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { sampleFixture, type TestServer } from '../helpers.ts';
import { assertAccessible, browserSkip, siteBesideBrowser, screenshot, type TestBrowser } from './browser.ts';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;

/** The one-page docs were 38,000 px tall on a phone (the issue); each page now must be well under half of it. */
const OLD_HEIGHT_PX = 38_000;

let chrome: TestBrowser | undefined;
let srv: TestServer;
let web: string;

/** A real key of a new organization (the sign-up plan), made in the server's own ledger. */
function newKey(email: string): string {
  const store = AccountsDb.open(srv.config.ledgerDir);
  try {
    const user = store.signInByEmail(email).user;
    const org = store.organizationsOf(user.id)[0];
    assert.ok(org);
    const made = store.createKeyFor(org.id, user.id);
    assert.ok(made.ok);
    return made.key;
  } finally {
    store.close();
  }
}

async function open(path: string, size: { width: number; height: number }, javaScriptEnabled = true): Promise<Page> {
  assert.ok(chrome);
  const context = await chrome.browser.newContext({ viewport: size, locale: 'en-US', javaScriptEnabled });
  context.setDefaultTimeout(90_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  (page as Page & { errors?: string[] }).errors = errors;
  const res = await page.goto(`${web}${path}`);
  assert.equal(res?.status(), 200, path);
  return page;
}

interface Box {
  readonly left: number;
  readonly right: number;
  readonly width: number;
}

interface Measure {
  readonly height: number;
  readonly scrollWidth: number;
  readonly innerWidth: number;
  /** The first parameter row's cells by their column (data-label), as laid out. */
  readonly cells: Record<string, Box>;
}

/** Height, width and one parameter row's cells, read in the page (a string: these tests' types have no DOM). */
const measure = (page: Page, rowName: string): Promise<Measure> =>
  page.evaluate(`(() => {
    const row = [...document.querySelectorAll('tr')].find((tr) => (tr.querySelector('th code') ?? tr.querySelector('th'))?.textContent.trim() === ${JSON.stringify(rowName)});
    const cells = {};
    if (row) for (const td of row.querySelectorAll('td[data-label]')) {
      const r = td.getBoundingClientRect();
      cells[td.getAttribute('data-label')] = { left: r.left, right: r.right, width: r.width };
    }
    return { height: document.documentElement.scrollHeight, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, cells };
  })()`);

siteBesideBrowser(
  () => sampleFixture(),
  (s) => {
    ({ chrome, srv, web } = s);
  },
  { env: { PLANS_CONTACT: 'partners@example.org' } },
);

describe('the developer docs on a phone and a desktop', { skip: browserSkip() }, () => {
  for (const size of WIDTHS) {
    test(`${size.width}×${size.height}: the overview, short and no wider than the window, says how to get each plan`, async (t) => {
      const page = await open('/docs', size);
      try {
        const m = await measure(page, 'partner');
        t.diagnostic(`/docs at ${size.width}: ${m.height} px tall`);
        assert.ok(m.height < OLD_HEIGHT_PX / 2, `/docs is ${m.height} px tall`);
        assert.ok(m.scrollWidth <= m.innerWidth, `the page is ${m.scrollWidth} px wide in a ${m.innerWidth} px window`);
        const how = m.cells['How to get it'];
        assert.ok(
          how && how.width > 0 && how.left >= 0 && how.right <= m.innerWidth,
          `the partner plan's "How to get it" is on screen: ${JSON.stringify(how)}`,
        );
        assert.match((await page.locator('#plan-partner').textContent()) ?? '', /partners@example\.org/);
        await assertAccessible(page, `/docs at ${size.width}`);
        await screenshot(page, `item14-overview-${size.name}`);
        assert.deepEqual((page as Page & { errors?: string[] }).errors, []);
      } finally {
        await page.context().close();
      }
    });

    test(`${size.width}×${size.height}: a route's page: short, its parameters' Constraints and Description within the window's width`, async (t) => {
      const page = await open('/docs/events', size);
      try {
        const m = await measure(page, 'city');
        t.diagnostic(`/docs/events at ${size.width}: ${m.height} px tall`);
        assert.ok(m.height < OLD_HEIGHT_PX / 2, `/docs/events is ${m.height} px tall`);
        assert.ok(m.scrollWidth <= m.innerWidth, `the page is ${m.scrollWidth} px wide in a ${m.innerWidth} px window`);
        for (const column of ['In', 'Type', 'Constraints', 'Description']) {
          const c = m.cells[column];
          assert.ok(c && c.width > 0, `city's ${column} is shown`);
          assert.ok(c.left >= 0 && c.right <= m.innerWidth, `city's ${column} is within the window (${c.left}–${c.right} of ${m.innerWidth})`);
        }
        const nav = size.name === 'phone' ? page.locator('details.docs-menu') : page.locator('nav.docs-sidebar');
        assert.ok(await nav.isVisible(), 'the docs navigation is shown');
        assert.ok(await page.locator('a[rel="next"]').isVisible(), 'a link to the next page');
        await assertAccessible(page, `/docs/events at ${size.width}`);
        await screenshot(page, `item14-events-${size.name}`);
      } finally {
        await page.context().close();
      }
    });

    test(`${size.width}×${size.height}: try it: a real key, a 200 JSON answer shown in the page, the key never in the address`, async () => {
      const key = newKey(`docs-try-${size.name}@example.org`);
      const page = await open('/docs/events', size);
      try {
        const form = page.locator('form[data-result="get-v1-events-try-result"]');
        await form.locator('input[data-api-key]').fill(key);
        await form.locator('button[type="submit"]').click();
        const result = page.locator('#get-v1-events-try-result');
        await result.locator('.try-status').filter({ hasText: /^200 / }).waitFor();
        const status = (await result.locator('.try-status').textContent()) ?? '';
        assert.match(status, /^200 OK: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/events\?/);
        assert.ok(!status.includes(key), 'the key is not in the shown request');
        const headers = (await result.locator('pre').nth(0).textContent()) ?? '';
        assert.match(headers, /^content-type: application\/json/m);
        assert.match(headers, /^x-quota-limit: 25$/m);
        const body = JSON.parse((await result.locator('pre').nth(1).textContent()) ?? '') as { events: unknown[]; total: number };
        assert.ok(Array.isArray(body.events) && body.events.length > 0, 'events came back');
        assert.ok(!page.url().includes(key) && !page.url().includes('api_key'), `the page's address stays ${page.url()}`);
        assert.equal(new URL(page.url()).pathname, '/docs/events');
        await result.scrollIntoViewIfNeeded();
        const m = await measure(page, 'city');
        assert.ok(m.scrollWidth <= m.innerWidth, `after the answer, the page is ${m.scrollWidth} px wide in a ${m.innerWidth} px window`);
        await assertAccessible(page, `/docs/events with an answer at ${size.width}`);
        await screenshot(page, `item14-tryit-${size.name}`);
      } finally {
        await page.context().close();
      }
    });
  }

  test('try it without JavaScript: the form is a GET to the API with the key as api_key, answered 200 JSON', async () => {
    const key = newKey('docs-try-nojs@example.org');
    const page = await open('/docs/usage', WIDTHS[0], false);
    try {
      await page.locator('input[data-api-key]').fill(key);
      const [response] = await Promise.all([page.waitForNavigation(), page.locator('form[data-try-it] button[type="submit"]').click()]);
      assert.equal(response?.status(), 200);
      const u = new URL(page.url());
      assert.equal(u.pathname, '/api/v1/usage');
      assert.equal(response?.headers()['content-type']?.split(';')[0], 'application/json');
      const usage = JSON.parse((await response?.text()) ?? '') as { plan?: unknown };
      assert.ok(usage.plan, 'the usage body');
    } finally {
      await page.context().close();
    }
  });

  test('an old /docs#<operation> link reaches its section: followed by site.js, and a link there without JavaScript', async () => {
    const page = await open('/docs#get-v1-usage', WIDTHS[1]);
    try {
      await page.waitForURL(/\/docs\/usage#get-v1-usage$/);
      assert.ok(await page.locator('#get-v1-usage h2').isVisible());
    } finally {
      await page.context().close();
    }
    // A section of the overview that holds moved entries is not one of them: it stays.
    const index = await open('/docs#reference', WIDTHS[1]);
    try {
      await index.waitForLoadState('load');
      assert.equal(new URL(index.url()).pathname, '/docs');
    } finally {
      await index.context().close();
    }
    const still = await open('/docs#head-v1-events', WIDTHS[0], false);
    try {
      const link = still.locator('#head-v1-events');
      assert.equal(await link.getAttribute('href'), '/docs/events#head-v1-events');
      assert.ok(await link.isVisible());
    } finally {
      await still.context().close();
    }
  });
});

const hasRequests = spawnSync('python3', ['-c', 'import requests'], { encoding: 'utf8' }).status === 0;

describe('the Python samples as printed', () => {
  test(
    'the search page’s Python sample runs against the server with a real key and gets its events',
    { skip: hasRequests ? false : 'python3 without requests' },
    async () => {
      const res = await fetch(`${web}/docs/events`);
      assert.equal(res.status, 200);
      const doc = parseDocument(await res.text());
      const block = DomUtils.findAll((e) => DomUtils.getAttributeValue(e, 'data-copy') === 'Python (requests)', doc.children)[0];
      assert.ok(block, 'a Python sample');
      const code = `${DomUtils.textContent(block)}\nprint(len(body["events"]))\n`;
      assert.ok(code.includes(`${web}/api/v1/events?`), 'the sample asks this server');
      // Asynchronously: the server answers on this process's event loop.
      const python = spawn('python3', ['-'], { env: { ...process.env, FAMILY_EVENTS_KEY: newKey('docs-python@example.org') }, timeout: 60_000 });
      let stdout = '';
      let stderr = '';
      python.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      python.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      python.stdin.end(code);
      const [status] = (await once(python, 'close')) as [number | null];
      assert.equal(status, 0, stderr);
      assert.ok(Number(stdout.trim()) > 0, `events: ${stdout}`);
    },
  );
});
