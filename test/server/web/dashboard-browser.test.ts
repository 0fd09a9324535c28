// The dashboard in a real browser (issue 28, item 12), on a phone (390×844) and a desktop
// (1366×900): a new account sees "Create a key" in its first screen; an invalid invitation
// address (and an invalid organization name) is reported where the page lands after the submit,
// inside the window, with the typed value kept; removing a member asks first in a dialog, with
// JavaScript off; nothing is wider than the screen; axe finds nothing. Screenshots:
// item12-*-phone / item12-*-desktop under the screenshots directory (browser.ts SCREENSHOTS).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { sampleFixture, type TestServer } from '../helpers.ts';
import { assertAccessible, browserSkip, dashboardAs, siteBesideBrowser, screenshot, SCREENSHOTS, type TestBrowser } from './browser.ts';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;
const DAY = 24 * 3_600_000;

let chrome: TestBrowser | undefined;
let srv: TestServer;
let web: string;

function withStore<T>(fn: (store: AccountsDb) => T): T {
  const store = AccountsDb.open(srv.config.ledgerDir);
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** A new account's owner: its session token, user and organization. */
function newAccount(email: string): { token: string; userId: string; orgId: string } {
  return withStore((store) => {
    const user = store.signInByEmail(email).user;
    const org = store.organizationsOf(user.id)[0];
    assert.ok(org);
    const session = store.createSession(user.id, 3_600_000);
    assert.ok(session.ok);
    return { token: session.token, userId: user.id, orgId: org.id };
  });
}

/** An organization as it is after a while: two keys, two members, two invitations waiting. */
function busyAccount(email: string): { token: string; userId: string; orgId: string; memberEmail: string } {
  const a = newAccount(email);
  const memberEmail = `member-of-${email}`;
  withStore((store) => {
    assert.ok(store.createKeyFor(a.orgId, a.userId).ok);
    assert.ok(store.createKeyFor(a.orgId, a.userId).ok);
    assert.ok('user' in store.joinByInvite(memberEmail, a.orgId));
    assert.ok('user' in store.joinByInvite(`second-${memberEmail}`, a.orgId));
    for (const guest of ['a-rather-long-address.for-a-guest@example.org', 'guest@example.org'])
      assert.ok(store.issueLoginToken(guest, 'invite', a.orgId, '', 7 * DAY, Date.now(), null, a.userId).ok);
  });
  return { ...a, memberEmail };
}

/** The dashboard at `size`, signed in with `token`. */
const signedIn = (token: string, size: { width: number; height: number }, javaScriptEnabled = true): Promise<Page> =>
  dashboardAs(chrome, web, token, size, javaScriptEnabled);

/** The element's box against the window: where it is, and the window's height and the page's width. */
const placeOf = (
  page: Page,
  selector: string,
): Promise<{ top: number; bottom: number; innerHeight: number; scrollWidth: number; innerWidth: number; scrollY: number }> =>
  page.evaluate(`(() => {
    const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, innerHeight: window.innerHeight, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, scrollY: window.scrollY };
  })()`);

/** The window as the person sees it, as SCREENSHOTS/<name>.png (screenshot() takes the whole page). */
const windowShot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });

siteBesideBrowser(
  () => sampleFixture(),
  (s) => {
    ({ chrome, srv, web } = s);
  },
);

describe('the dashboard on a phone and a desktop', { skip: browserSkip() }, () => {
  for (const size of WIDTHS) {
    test(`${size.width}×${size.height}: a new account sees "Create a key" in its first screen, and "No usage yet" rather than a table of zeros`, async () => {
      const { token } = newAccount(`first-screen-${size.name}@example.org`);
      const page = await signedIn(token, size);
      try {
        const create = page.getByRole('button', { name: 'Create a key', exact: true });
        assert.equal(await create.count(), 1);
        const box = await create.boundingBox();
        assert.ok(box, 'the button is laid out');
        assert.ok(box.y >= 0 && box.y + box.height <= size.height, `"Create a key" is within the first ${size.height} px (at ${box.y}–${box.y + box.height})`);
        assert.equal(await page.locator('#usage table').count(), 0, 'no table in the usage');
        assert.match((await page.locator('#usage').textContent()) ?? '', /No usage yet/);
        const place = await placeOf(page, 'main');
        assert.ok(place.scrollWidth <= place.innerWidth, `the page is ${place.scrollWidth} px wide in a ${place.innerWidth} px window`);
        await windowShot(page, `item12-new-account-${size.name}`);
        await assertAccessible(page, `a new account's dashboard at ${size.width} px`);
      } finally {
        await page.context().close();
      }
    });

    test(`${size.width}×${size.height}: an invalid invitation address is reported inside the window after the submit, the address kept`, async () => {
      const { token } = newAccount(`invite-typo-${size.name}@example.org`);
      const page = await signedIn(token, size);
      try {
        await page.getByLabel('Invite someone by e-mail').fill('grace@@example');
        await Promise.all([
          page.waitForURL((u) => u.pathname === '/account/members/invite'),
          page.getByRole('button', { name: 'Send the invitation' }).click(),
        ]);
        await page.waitForLoadState('load');
        const error = page.locator('#invite-email-error');
        assert.match((await error.textContent()) ?? '', /Enter an e-mail address like name@example\.com/);
        const place = await placeOf(page, '#invite-email-error');
        assert.ok(
          place.top >= 0 && place.bottom <= place.innerHeight,
          `the error is within the window (at ${place.top}–${place.bottom} of ${place.innerHeight}, scrolled ${place.scrollY})`,
        );
        const field = await placeOf(page, '#invite-email');
        assert.ok(field.top >= 0 && field.bottom <= field.innerHeight, 'and so is its field');
        assert.equal(await page.locator('#invite-email').inputValue(), 'grace@@example', 'as typed');
        assert.ok(field.scrollWidth <= field.innerWidth, 'nothing wider than the window');
        await windowShot(page, `item12-invite-error-${size.name}`);
        await assertAccessible(page, `the invitation error at ${size.width} px`);
      } finally {
        await page.context().close();
      }
    });

    test(`${size.width}×${size.height}: an invalid organization name is reported inside the window, the name kept`, async () => {
      const { token } = newAccount(`rename-typo-${size.name}@example.org`);
      const page = await signedIn(token, size);
      try {
        await page.getByLabel('Organization name').fill('x'.repeat(101));
        // maxlength keeps a person from typing more; a pasted tab is what gets through.
        await page.getByLabel('Organization name').fill('Tide\tPool');
        await Promise.all([page.waitForURL((u) => u.pathname === '/account/org/rename'), page.getByRole('button', { name: 'Rename' }).click()]);
        await page.waitForLoadState('load');
        const place = await placeOf(page, '#org-name-error');
        assert.ok(
          place.top >= 0 && place.bottom <= place.innerHeight,
          `the error is within the window (at ${place.top}–${place.bottom} of ${place.innerHeight})`,
        );
        assert.equal(await page.locator('#org-name').inputValue(), 'Tide\tPool');
        await windowShot(page, `item12-rename-error-${size.name}`);
      } finally {
        await page.context().close();
      }
    });

    test(`${size.width}×${size.height}: an organization with keys, members and pending invitations fits the window and is accessible`, async () => {
      const { token } = busyAccount(`busy-${size.name}@example.org`);
      const page = await signedIn(token, size);
      try {
        const place = await placeOf(page, 'main');
        assert.ok(place.scrollWidth <= place.innerWidth, `the page is ${place.scrollWidth} px wide in a ${place.innerWidth} px window`);
        assert.equal(await page.locator('table.invites tbody tr').count(), 2, 'both invitations listed');
        for (const b of await page.locator('#members button:not([popover] button)').all()) {
          const box = await b.boundingBox();
          assert.ok(box && box.x >= 0 && box.x + box.width <= size.width, `${await b.textContent()} is within the window's width`);
        }
        // Usage first once there are keys.
        const [usageTop, keysTop] = [await page.locator('#usage').boundingBox(), await page.locator('#keys').boundingBox()];
        assert.ok(usageTop && keysTop && usageTop.y < keysTop.y);
        await screenshot(page, `item12-dashboard-${size.name}`);
        await assertAccessible(page, `a busy organization's dashboard at ${size.width} px`);
      } finally {
        await page.context().close();
      }
    });

    test(`${size.width}×${size.height}: Remove asks first, without JavaScript; Cancel keeps the member, the dialog's Remove removes them`, async () => {
      const { token, memberEmail } = busyAccount(`remove-${size.name}@example.org`);
      const page = await signedIn(token, size, false);
      try {
        const opener = page.getByRole('button', { name: `Remove ${memberEmail}`, exact: true });
        const dialog = page.getByRole('dialog', { name: new RegExp(`^Remove ${memberEmail.replace(/[.@-]/g, '\\$&')} from `) });
        assert.equal(await dialog.isVisible(), false, 'no dialog before the click');
        await opener.click();
        await dialog.waitFor({ state: 'visible' });
        const box = await dialog.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= size.width && box.y >= 0 && box.y + box.height <= size.height, 'the dialog is within the window');
        await windowShot(page, `item12-remove-dialog-${size.name}`);
        await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
        await dialog.waitFor({ state: 'hidden' });
        assert.equal(page.url(), `${web}/account`, 'Cancel sends nothing');
        await opener.click();
        await Promise.all([
          page.waitForURL((u) => u.searchParams.get('notice') === 'removed'),
          dialog.getByRole('button', { name: 'Remove', exact: true }).click(),
        ]);
        assert.equal(await page.getByRole('button', { name: `Remove ${memberEmail}`, exact: true }).count(), 0, 'removed');
        const notice = await placeOf(page, '[role="status"]');
        assert.ok(notice.top >= 0 && notice.bottom <= notice.innerHeight, 'the notice is where the page lands');
      } finally {
        await page.context().close();
      }
    });
  }
});
