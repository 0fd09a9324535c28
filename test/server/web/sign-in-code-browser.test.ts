// The sign-in code in a real browser (issue 28 item 15): two browser contexts are a laptop and a
// phone. The laptop asks for a sign-in; the phone opens the mailed link and is told that the link
// was opened in another browser than the one that asked, shown the code to type there, and offered
// a new sign-in of its own; the laptop types a wrong code (told how many tries are left), then the
// right one, and is signed in. At 390×844 and 1366×900, each page axe-clean and no wider than the
// screen; full-page screenshots item15-*-phone / item15-*-desktop.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { sampleFixture } from '../helpers.ts';
import { assertAccessible, browserSkip, siteBesideBrowser, screenshot, type TestBrowser } from './browser.ts';
import { Outbox } from './outbox.ts';
import { simpleParser } from 'mailparser';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;

let chrome: TestBrowser | undefined;
let web: string;
let outbox: Outbox;

const squash = (s: string | null): string => (s ?? '').replace(/\s+/g, ' ').trim();
const text = async (page: Page, selector: string): Promise<string> => squash(await page.locator(selector).first().textContent());

siteBesideBrowser(
  () => sampleFixture(),
  (s) => {
    ({ chrome, web } = s);
  },
  {
    ready: async ({ fx }) => {
      outbox = new Outbox(fx.dataDir);
    },
  },
);

async function device(size: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  assert.ok(chrome);
  const context = await chrome.browser.newContext({ viewport: size, locale: 'en-US' });
  context.setDefaultTimeout(90_000);
  return { context, page: await context.newPage() };
}

/** Nothing wider than the screen, and the page's controls at least 24 px tall (WCAG 2.2 target size). */
async function fitsAndReachable(page: Page, what: string): Promise<void> {
  const r = await page.evaluate<{ scrollWidth: number; innerWidth: number; small: string[] }>(`(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    small: [...document.querySelectorAll('main a.button, main button, main input:not([type=hidden])')]
      .filter((e) => e.getBoundingClientRect().height < 24)
      .map((e) => e.outerHTML.slice(0, 80)),
  }))()`);
  assert.ok(r.scrollWidth <= r.innerWidth, `${what}: ${r.scrollWidth} px wide in a ${r.innerWidth} px window`);
  assert.deepEqual(r.small, [], `${what}: controls under 24 px tall`);
}

describe('a sign-in asked on a laptop, its mail opened on a phone', { skip: browserSkip() }, () => {
  for (const size of WIDTHS) {
    test(`${size.width}×${size.height}: the phone is told what to do and shown the code; the laptop types it and is signed in`, async () => {
      const email = `two-devices-${size.name}@example.org`;
      const laptop = await device(size);
      const phone = await device(size);
      try {
        // The laptop asks.
        const seen = await outbox.names();
        await laptop.page.goto(`${web}/account/sign-in`);
        await laptop.page.locator('#email').fill(email);
        await Promise.all([laptop.page.waitForURL(`${web}/account/sign-in/sent`), laptop.page.getByRole('button', { name: 'Send me a sign-in link' }).click()]);
        assert.equal(await text(laptop.page, 'h1'), 'Check your mail');
        assert.ok(await laptop.page.getByLabel(/Type its code here/).isVisible());
        await assertAccessible(laptop.page, 'the sent page with its code form');
        await fitsAndReachable(laptop.page, 'the sent page');
        await screenshot(laptop.page, `item15-check-mail-${size.name}`);

        const mail = await outbox.next(seen, 15_000, (m) => m.to === email);
        const mailText = (await simpleParser(mail.raw)).text ?? '';
        const code = mailText
          .split('\n')
          .map((l) => l.trim())
          .find((l) => /^[A-Z0-9]{4}-[A-Z0-9]{4}$/.test(l));
        assert.ok(code, 'the mail carries a code');

        // The phone opens the link: no dead end.
        const opened = await phone.page.goto(mail.link);
        assert.equal(opened?.status(), 400);
        assert.equal(await text(phone.page, 'h1'), 'Finish signing in where you asked');
        assert.match(await text(phone.page, 'main'), /opened in a different browser than the one that asked for it/);
        assert.equal(await text(phone.page, '.sign-in-code code'), code);
        await assertAccessible(phone.page, 'the link opened in another browser');
        await fitsAndReachable(phone.page, 'the link opened in another browser');
        await screenshot(phone.page, `item15-other-browser-${size.name}`);
        assert.equal((await phone.context.cookies()).filter((c) => c.name.includes('session')).length, 0, 'the phone is not signed in');

        // The laptop types a wrong code first, then the right one.
        const wrong = code.startsWith('2') ? `3${code.slice(1)}` : `2${code.slice(1)}`;
        await laptop.page.locator('#code').fill(wrong);
        await Promise.all([laptop.page.waitForURL(`${web}/account/sign-in/code`), laptop.page.getByRole('button', { name: 'Sign in with the code' }).click()]);
        assert.match(await text(laptop.page, '#code-error'), /That code is not right\. .*4 tries left\./);
        assert.equal(await laptop.page.locator('#code').getAttribute('aria-invalid'), 'true');
        await assertAccessible(laptop.page, 'the code form with its error');
        await fitsAndReachable(laptop.page, 'the code form with its error');
        await screenshot(laptop.page, `item15-wrong-code-${size.name}`);

        await laptop.page.locator('#code').fill(code.toLowerCase());
        await Promise.all([laptop.page.waitForURL(`${web}/account`), laptop.page.getByRole('button', { name: 'Sign in with the code' }).click()]);
        assert.match(await text(laptop.page, 'main'), new RegExp(`Signed in as ${email.replace(/\./g, '\\.')}`));

        // The phone's way to a sign-in of its own.
        await Promise.all([phone.page.waitForURL(`${web}/account/sign-in`), phone.page.getByRole('link', { name: 'Start a new sign-in here' }).click()]);
        assert.equal(await text(phone.page, 'h1'), 'Sign in or create an account');
      } finally {
        await laptop.context.close();
        await phone.context.close();
      }
    });
  }
});
