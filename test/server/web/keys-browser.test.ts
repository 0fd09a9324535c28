// The dashboard's keys in a real browser (issue 28, items 10 and 11), on a desktop (1366×900) and a
// phone (390×844): nothing wider than the screen, every row's Roll and Revoke within reach and inside
// its row, each key's hint on one line; Revoke opens a dialog naming the key, Cancel leaves it
// working, and only the dialog's Revoke revokes, with JavaScript turned off. Full-page screenshots
// of both widths go to a temporary directory the test prints.
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { sampleFixture, type TestServer } from '../helpers.ts';
import { assertAccessible, browserSkip, dashboardAs, siteBesideBrowser, type TestBrowser } from './browser.ts';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;

let chrome: TestBrowser | undefined;
let srv: TestServer;
let web: string;
let shots: string;

/** An account with four keys, one of each kind a row can show: active, rolling, revoked, and the roll's new key. */
function accountWithKeys(email: string): { token: string; hints: string[] } {
  const store = AccountsDb.open(srv.config.ledgerDir);
  try {
    const user = store.signInByEmail(email).user;
    const org = store.organizationsOf(user.id)[0];
    assert.ok(org);
    const made = [store.createKeyFor(org.id, user.id), store.createKeyFor(org.id, user.id), store.createKeyFor(org.id, user.id)];
    const [a, b, c] = made.map((m) => {
      assert.ok(m.ok);
      return m;
    });
    assert.ok(a && b && c);
    assert.ok(store.rollKey(org.id, user.id, b.keyId, 86_400_000).ok);
    store.revokeKey(org.id, c.keyId);
    const session = store.createSession(user.id, 3_600_000);
    assert.ok(session.ok);
    return { token: session.token, hints: store.keysOf(org.id).map((k) => k.hint) };
  } finally {
    store.close();
  }
}

/** The dashboard at `size`, signed in with `token`. */
const signedIn = (token: string, size: { width: number; height: number }, javaScriptEnabled = true): Promise<Page> =>
  dashboardAs(chrome, web, token, size, javaScriptEnabled);

interface Layout {
  readonly scrollWidth: number;
  readonly innerWidth: number;
  readonly rows: {
    readonly row: { top: number; bottom: number; left: number; right: number };
    readonly cells: { top: number; bottom: number; left: number; right: number }[];
    readonly hintLines: number;
    readonly buttons: { name: string; left: number; right: number; top: number; bottom: number; visible: boolean }[];
  }[];
}

/** The keys table as laid out, read in the page (a string: these tests' types have no DOM). */
const layoutOf = (page: Page): Promise<Layout> =>
  page.evaluate(`(() => {
    const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
    const rows = [...document.querySelectorAll('table.keys tbody tr')].map((tr) => ({
      row: box(tr),
      cells: [...tr.children].map(box),
      hintLines: tr.querySelector('td:first-child code').getClientRects().length,
      buttons: [...tr.querySelectorAll('button')].filter((b) => !b.closest('[popover]')).map((b) => ({
        name: b.textContent.replace(/\\s+/g, ' ').trim(),
        ...box(b),
        visible: b.checkVisibility(),
      })),
    }));
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, rows };
  })()`);

siteBesideBrowser(
  () => sampleFixture(),
  (s) => {
    ({ chrome, srv, web } = s);
  },
  {
    ready: async () => {
      shots = await mkdtemp(path.join(os.tmpdir(), 'keys-browser-'));
    },
  },
);

describe('the keys table on a phone and a desktop', { skip: browserSkip() }, () => {
  for (const size of WIDTHS) {
    test(`${size.width}×${size.height}: no sideways scroll, Roll and Revoke on screen and inside their rows, hints on one line`, async (t) => {
      const { token, hints } = accountWithKeys(`layout-${size.name}@example.org`);
      const page = await signedIn(token, size);
      try {
        const shot = path.join(shots, `keys-${size.width}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        t.diagnostic(`screenshot: ${shot}`);
        const l = await layoutOf(page);
        assert.ok(l.scrollWidth <= l.innerWidth, `the page is ${l.scrollWidth} px wide in a ${l.innerWidth} px window`);
        assert.equal(l.rows.length, 4);
        const named = l.rows.flatMap((r) => r.buttons.map((b) => b.name));
        // The active keys (the roll's new key and the one never rolled) can be rolled; the rolling one only revoked.
        assert.equal(named.filter((n) => n.startsWith('Roll key')).length, 2);
        assert.equal(named.filter((n) => n.startsWith('Revoke key')).length, 3);
        for (const [i, r] of l.rows.entries()) {
          assert.equal(r.hintLines, 1, `row ${i}: the hint ${hints[i]} is on one line`);
          for (const [j, c] of r.cells.entries()) {
            if (c.bottom === c.top) continue; // an empty action cell, hidden on the phone
            assert.ok(
              c.top >= r.row.top - 0.5 && c.bottom <= r.row.bottom + 0.5,
              `row ${i}, cell ${j}: within its row vertically (${JSON.stringify([c, r.row])})`,
            );
            assert.ok(c.left >= r.row.left - 0.5 && c.right <= r.row.right + 0.5, `row ${i}, cell ${j}: within its row horizontally`);
          }
          for (const b of r.buttons) {
            assert.ok(b.visible, `${b.name} is shown`);
            assert.ok(b.left >= 0 && b.right <= l.innerWidth, `${b.name} is within the window's width (${b.left}–${b.right} of ${l.innerWidth})`);
            assert.ok(b.top >= r.row.top && b.bottom <= r.row.bottom, `${b.name} is inside its row`);
          }
        }
        if (size.name === 'phone') await assertAccessible(page, 'the dashboard with keys, on a phone');
      } finally {
        await page.context().close();
      }
    });
  }

  test('Revoke asks first, without JavaScript: the dialog names the key, Cancel keeps it, the dialog’s Revoke revokes', async (t) => {
    const { token } = accountWithKeys('revoke-dialog@example.org');
    const page = await signedIn(token, WIDTHS[0], false);
    try {
      const opener = page.getByRole('button', { name: /^Revoke key / }).first();
      const name = (await opener.textContent())?.replace(/\s+/g, ' ').trim() ?? '';
      const hint = name.replace(/^Revoke key /, '');
      assert.match(hint, /^bsc_live_…/);
      const dialog = page.getByRole('dialog', { name: `Revoke key ${hint}?` });
      assert.equal(await dialog.isVisible(), false, 'no dialog before the click');
      await opener.click();
      await dialog.waitFor({ state: 'visible' });
      const box = await dialog.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= WIDTHS[0].width, 'the dialog fits the phone');
      const shot = path.join(shots, 'revoke-dialog-390.png');
      await page.screenshot({ path: shot });
      t.diagnostic(`screenshot: ${shot}`);

      await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal(page.url(), `${web}/account`, 'Cancel sends nothing');
      assert.equal(await page.getByRole('button', { name: `Revoke key ${hint}` }).count(), 1, 'the key is still there to revoke');

      await opener.click();
      await Promise.all([
        page.waitForURL((u) => u.searchParams.get('notice') === 'revoked'),
        dialog.getByRole('button', { name: 'Revoke', exact: true }).click(),
      ]);
      assert.equal(await page.getByRole('button', { name: `Revoke key ${hint}` }).count(), 0, 'revoked: nothing left to revoke on it');
    } finally {
      await page.context().close();
    }
  });
});
