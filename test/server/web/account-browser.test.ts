// The developer account in a real browser (Debian's chromium through playwright-core): sign-up by
// e-mail link from the home page to the dashboard, a key created, shown once, used on the API,
// counted on the dashboard and its chart, and revoked (refused within a second); a key rolled with a
// grace period, then signed out; sign-out everywhere reaching another browser; an invitation accepted
// in a second browser; sign-in with an OpenID provider on loopback; and, on every account page, the security headers and a console free of errors and CSP
// reports. Every account page a person sees is checked by axe-core against WCAG 2.2 A/AA.
//
// Every page, form and API call goes through the shipped nginx site (deploy/nginx/family-events.conf)
// over TLS, as it is deployed: its TLS lines uncommented with a test certificate made by openssl for
// this file, which chromium trusts by its key alone (--ignore-certificate-errors-spki-list). The
// account pages refuse POSTs from any origin but the website's own, so each server's WEB_BASE_URL is
// its nginx's https://127.0.0.1:PORT: the origin chromium really sends, with __Host- (Secure) cookies.
// One browser for the file; without chromium or nginx (outside CI) the whole file is one skipped line.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { keyHint } from '../../../core/keys.ts';
import { Agent, fetch as fetchThrough, type Response as ApiResponse } from 'undici';
import { behindNginx, findNginx, nginxSkip, requireNginx, testCertificate, type Nginx, type TestCertificate } from '../../deploy/nginx.ts';
import { NOW, sampleFixture, startTestServer, type Fixture, type TestServer } from '../helpers.ts';
import { Outbox } from './outbox.ts';
import { assertAccessible, browserSkip, fixtureBesideBrowser, screenshot, type TestBrowser } from './browser.ts';
import { startIdp, type Idp } from './idp.ts';
import type { UsageBody } from '../../../ledger/accounts.ts';

/** The server's pinned clock as the Pacific calendar day its usage is counted on (YYYY-MM-DD). */
const TODAY = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Los_Angeles', year: 'numeric', month: '2-digit', day: '2-digit' }).format(NOW);
const USAGE_FIELDS = ['used', 'limit', 'remaining', 'requests'] as const;
/** How long mail may take to reach the outbox (the sign-in mail is sent after the answer). */
const MAIL_WAIT_MS = 15_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const squash = (s: string | null): string => (s ?? '').replace(/\s+/g, ' ').trim();
const text = async (page: Page, selector: string): Promise<string> => squash(await page.locator(selector).first().textContent());

const NGINX = findNginx();

/** A server behind the shipped nginx site over TLS; its website (and API) is nginx's https origin. */
async function startBehindNginx(
  cert: TestCertificate,
  dataDir: string,
  env: (web: string) => Record<string, string> | Promise<Record<string, string>> = () => ({}),
): Promise<{ srv: TestServer; front: Nginx }> {
  return behindNginx(requireNginx(NGINX), cert, async (web, port) => {
    const srv = await startTestServer(dataDir, { PORT: String(port), TRUST_PROXY: 'true', WEB_BASE_URL: web, PUBLIC_BASE_URL: web, ...(await env(web)) });
    assert.equal(srv.server.port, port, 'the server listens on the port nginx forwards to');
    return srv;
  });
}

/**
 * What a context's pages did that they should not have, on the website's origin: console errors,
 * uncaught exceptions and CSP violations (reported by a listener installed before any page content
 * runs). The main document's own 4xx answer is the one console error expected (chromium logs
 * "Failed to load resource" for it); any other failed resource counts.
 */
interface Watch {
  /** Every HTML document the website answered in this context (redirects excluded), in order. */
  readonly documents: { readonly method: string; readonly url: URL; readonly status: number; readonly headers: Record<string, string> }[];
  /** What went wrong so far, once every open page has delivered its pending events. */
  problems(): Promise<string[]>;
}

async function watch(context: BrowserContext, origin: string): Promise<Watch> {
  const raw: { page: string; resource: string; text: string }[] = [];
  const documents: Watch['documents'][number][] = [];
  const ours = (u: string): boolean => {
    try {
      return new URL(u).origin === origin;
    } catch {
      return false;
    }
  };
  await context.exposeBinding('__reportCsp', ({ page }, violation: string) => {
    raw.push({ page: page.url(), resource: '', text: `CSP violation: ${violation}` });
  });
  // A string: these tests' types have no DOM.
  await context.addInitScript(
    'document.addEventListener("securitypolicyviolation", (e) => window.__reportCsp(e.violatedDirective + " blocked " + e.blockedURI + " at " + e.documentURI));',
  );
  const attach = (page: Page): void => {
    page.on('console', (m) => {
      if (m.type() === 'error') raw.push({ page: page.url(), resource: m.location().url, text: m.text() });
    });
    page.on('pageerror', (e) => raw.push({ page: page.url(), resource: '', text: `uncaught: ${e.message}` }));
    page.on('response', (res: Response) => {
      const req = res.request();
      if (req.resourceType() !== 'document' || !ours(res.url()) || (res.status() >= 300 && res.status() < 400)) return;
      documents.push({ method: req.method(), url: new URL(res.url()), status: res.status(), headers: res.headers() });
    });
  };
  context.pages().forEach(attach);
  context.on('page', attach);
  return {
    documents,
    problems: async () => {
      // A round trip to each renderer: console messages it sent before are in by its answer.
      for (const p of context.pages()) await p.evaluate('0').catch(() => undefined);
      return raw
        .filter((p) => ours(p.page) || ours(p.resource))
        .filter((p) => {
          const failed = /^Failed to load resource: the server responded with a status of (\d{3})/.exec(p.text);
          // Chromium names the resource with the fragment its form posted to (/account/members/invite#invite); the response's URL has none.
          const hash = p.resource.indexOf('#');
          const resource = hash < 0 ? p.resource : p.resource.slice(0, hash);
          return !(failed && documents.some((d) => d.url.href === resource && String(d.status) === failed[1] && d.status >= 400));
        })
        .map((p) => `${p.page}: ${p.text}${p.resource ? ` (${p.resource})` : ''}`);
    },
  };
}

describe('the developer account in a real browser, through nginx over TLS', { skip: browserSkip() || nginxSkip(NGINX) }, () => {
  let fx: Fixture;
  let cert: TestCertificate;
  let srv: TestServer;
  let front: Nginx;
  let chrome: TestBrowser;
  /** The website of `srv`: its nginx's https origin. */
  let web: string;
  let outbox: Outbox;
  /** The test's own API calls, through nginx, trusting the test certificate only. */
  let tlsClient: Agent;

  before(async () => {
    cert = await testCertificate();
    tlsClient = new Agent({ connect: { ca: cert.pem } });
    await fixtureBesideBrowser(
      sampleFixture,
      (made) => {
        if (made.fx) fx = made.fx;
        if (made.chrome) chrome = made.chrome;
      },
      { trustSpki: cert.spki },
    );
    outbox = new Outbox(fx.dataDir);
    ({ srv, front } = await startBehindNginx(cert, fx.dataDir));
    web = front.base;
    assert.match(web, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(srv.config.webBaseUrl, web);
  });

  after(async () => {
    await chrome?.close();
    await front?.stop();
    await srv?.stop();
    await tlsClient?.close();
    await fx?.cleanup();
    await cert?.cleanup();
  });

  /** A fresh context (an empty profile: another person, or the same one on another device), watched. */
  async function person(): Promise<{ context: BrowserContext; page: Page; watched: Watch }> {
    const context = await chrome.newContext();
    try {
      const watched = await watch(context, web);
      return { context, page: await context.newPage(), watched };
    } catch (err) {
      await context.close();
      throw err;
    }
  }

  /** page.goto on the website; asserts the status and that the answer is an HTML page. */
  async function open(page: Page, url: string, status = 200, base = web): Promise<Response> {
    const res = await page.goto(url.startsWith('http') ? url : base + url, { waitUntil: 'load' });
    assert.ok(res, `no response for ${url}`);
    assert.equal(res.status(), status, `GET ${url}`);
    assert.match(res.headers()['content-type'] ?? '', /^text\/html/, `GET ${url} is HTML`);
    return res;
  }

  /** Clicks and waits for the navigation it causes to reach `url` (a form's POST, then any redirect). */
  async function clickTo(page: Page, url: string | RegExp | ((u: URL) => boolean), click: () => Promise<void>): Promise<void> {
    await Promise.all([page.waitForURL(url, { waitUntil: 'load' }), click()]);
  }

  const button = (page: Page, name: string | RegExp) => page.getByRole('button', { name });

  const mailNames = (): Promise<string[]> => outbox.names();

  /** The link of the first mail to `to` among those that arrived after `seen`, read by mailparser. */
  const linkMailedTo = async (to: string, seen: readonly string[]): Promise<URL> => new URL((await outbox.next(seen, MAIL_WAIT_MS, (m) => m.to === to)).link);

  /**
   * Sign-up (or sign-in) by e-mail link, in the browser, from the sign-in page to the dashboard.
   * With `check`, axe runs on the sign-in, sent and confirmation pages and the sign-in page is photographed.
   */
  async function signInByMail(page: Page, email: string, check = false): Promise<void> {
    if (!page.url().startsWith(`${web}/account/sign-in`)) await open(page, '/account/sign-in');
    assert.equal(await text(page, 'h1'), 'Sign in or create an account');
    assert.equal(await button(page, /^Sign in with/).count(), 0, 'no identity provider is configured on this server');
    if (check) {
      await assertAccessible(page, 'the sign-in page');
      await screenshot(page, 'account-sign-in');
    }
    const seen = await mailNames();
    await page.locator('#email').fill(email);
    await clickTo(page, `${web}/account/sign-in/sent`, () => button(page, 'Send me a sign-in link').click());
    assert.equal(await text(page, 'h1'), 'Check your mail');
    if (check) await assertAccessible(page, 'the “check your mail” page');

    const link = await linkMailedTo(email, seen);
    assert.equal(link.origin, web, 'the link is on the website');
    assert.equal(link.pathname, '/account/confirm');
    await open(page, link.href);
    assert.equal(await text(page, 'h1'), 'Continue signing in');
    if (check) await assertAccessible(page, 'the confirmation page');
    await clickTo(page, `${web}/account`, () => button(page, 'Continue signing in').click());
    assert.equal(await text(page, 'h1'), 'Your account');
    assert.match(await text(page, 'main'), new RegExp(`Signed in as ${email.replaceAll('.', '\\.')}\\.`));
  }

  /** The website a page is on (the OIDC test runs a server of its own). */
  const siteOf = (page: Page): string => new URL(page.url()).origin;

  /** On the dashboard: "Create a key"; returns the key from the page that shows it (once). */
  async function createKey(page: Page): Promise<string> {
    await clickTo(page, `${siteOf(page)}/account/keys`, () => button(page, 'Create a key').click());
    assert.equal(await text(page, 'h1'), 'Your new API key');
    return keyOnPage(page);
  }

  async function keyOnPage(page: Page): Promise<string> {
    const blocks = page.locator('pre[data-copy="API key"]');
    assert.equal(await blocks.count(), 1, 'the key in one copyable block');
    const key = squash(await blocks.textContent());
    assert.match(key, /^\S{20,}$/, 'a key');
    return key;
  }

  async function backToAccount(page: Page): Promise<void> {
    const site = siteOf(page);
    await clickTo(
      page,
      (u) => u.origin === site && u.pathname === '/account',
      () => page.getByRole('link', { name: 'Back to your account' }).click(),
    );
  }

  /** The dashboard's key table: hint → state, in order. */
  async function keyRows(page: Page): Promise<{ hint: string; state: string }[]> {
    const rows: { hint: string; state: string }[] = [];
    for (const tr of await page.locator('table.keys tbody tr').all()) {
      rows.push({ hint: squash(await tr.locator('td').nth(0).textContent()), state: squash(await tr.locator('td').nth(3).textContent()) });
    }
    return rows;
  }

  /** The dashboard's "This month" figures, as numbers (null: "unlimited"). */
  async function usage(page: Page): Promise<Record<(typeof USAGE_FIELDS)[number], number | null>> {
    const out = {} as Record<(typeof USAGE_FIELDS)[number], number | null>;
    for (const f of USAGE_FIELDS) {
      const t = await text(page, `dd[data-usage="${f}"]`);
      out[f] = t === 'unlimited' ? null : Number(t.replaceAll(',', ''));
      assert.ok(out[f] === null || Number.isInteger(out[f]), `${f}: "${t}" is a count`);
    }
    return out;
  }

  /** Today's row of the usage chart's table (records, requests), and today's bars in the SVG. */
  async function today(page: Page): Promise<{ records: number; requests: number; bars: { records: number; requests: number } }> {
    const figure = page.locator('figure.usage-chart');
    assert.equal(await figure.count(), 1, 'the usage chart');
    assert.equal(await figure.locator('svg[role="img"]').count(), 1, 'the chart is one labelled image');
    const row = page.locator('table.usage-table tbody tr').filter({ has: page.locator(`th time[datetime="${TODAY}"]`) });
    assert.equal(await row.count(), 1, `the chart's table has a row for ${TODAY}`);
    const cells = (await row.locator('td').allTextContents()).map((c) => Number(squash(c).replaceAll(',', '')));
    const bar = (kind: string) => figure.locator(`g[data-date="${TODAY}"] rect.usage-chart-${kind}`).getAttribute('data-value');
    return { records: cells[0] ?? NaN, requests: cells[1] ?? NaN, bars: { records: Number(await bar('records')), requests: Number(await bar('requests')) } };
  }

  const api = (base: string, key: string, p = '/v1/events?limit=3'): Promise<ApiResponse> =>
    fetchThrough(`${base}${p}`, { headers: { authorization: `Bearer ${key}` }, dispatcher: tlsClient });

  async function eventsServed(base: string, key: string): Promise<number> {
    const res = await api(base, key);
    assert.equal(res.status, 200, `the key works on the API: ${await res.clone().text()}`);
    const n = ((await res.json()) as { events: unknown[] }).events.length;
    assert.ok(n > 0, 'events served');
    return n;
  }

  /** The dashboard's figures, today's row and bar, and /v1/usage all say `served` records. */
  async function usageShows(page: Page, base: string, key: string, served: number): Promise<void> {
    const shown = await usage(page);
    assert.equal(shown.used, served, 'Records used counts the events served');
    const fromApi = (await (await api(base, key, '/v1/usage')).json()) as UsageBody;
    assert.equal(fromApi.records.used, served, '/v1/usage agrees');
    assert.equal(shown.used, fromApi.records.used);
    assert.equal(shown.limit, fromApi.records.limit);
    const day = await today(page);
    assert.equal(day.records, served, `today (${TODAY}, the server's clock) has the records served`);
    assert.equal(day.bars.records, served, "today's bar has the same number");
    assert.ok(day.requests >= 1, "today's requests");
  }

  /** Revoke by clicking; from the moment the server answers, the API refuses the key within a second. */
  async function revokeByClick(page: Page, base: string, key: string): Promise<void> {
    const site = siteOf(page);
    const revoked = page.waitForResponse((r) => r.url() === `${site}/account/keys/revoke` && r.request().method() === 'POST');
    await clickTo(
      page,
      (u) => u.pathname === '/account' && u.searchParams.get('notice') === 'revoked',
      async () => {
        // Revoke asks first: a dialog naming the key, whose own Revoke sends the form.
        await button(page, `Revoke key ${keyHint(key)}`).click();
        await page
          .getByRole('dialog', { name: `Revoke key ${keyHint(key)}?` })
          .getByRole('button', { name: 'Revoke', exact: true })
          .click();
        assert.equal((await revoked).status(), 303);
        const t0 = performance.now();
        let status = 200;
        while (performance.now() - t0 < 1000) {
          status = (await api(base, key)).status;
          if (status === 401) break;
          await sleep(25);
        }
        assert.equal(status, 401, `the revoked key is refused within a second (still ${status} after ${Math.round(performance.now() - t0)} ms)`);
      },
    );
  }

  test('sign-up by e-mail from the home page: a key shown once, used, counted, revoked (401 within a second)', async () => {
    const { context, page, watched } = await person();
    try {
      const email = 'ada@example.org';
      await open(page, '/');
      // /account sends a visitor who is not signed in to the sign-in page.
      await clickTo(page, `${web}/account/sign-in`, () => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Your account' }).click());
      await signInByMail(page, email, true);
      assert.match(await text(page, 'main'), /no keys yet/);
      // Over TLS through nginx: the server's cookies came back through it, __Host- and Secure.
      const cookies = await context.cookies(web);
      assert.ok(cookies.length > 0, 'the session cookie');
      for (const c of cookies) assert.ok(c.name.startsWith('__Host-') && c.secure && c.httpOnly, `${c.name}: __Host-, Secure, HttpOnly`);

      const key = await createKey(page);
      await assertAccessible(page, 'the new key page');
      await screenshot(page, 'account-new-key');

      // Shown once: the dashboard names the key by its hint only.
      await backToAccount(page);
      assert.ok(!(await page.content()).includes(key), 'the dashboard does not show the key');
      assert.ok(!(await page.locator('body').innerText()).includes(key));
      assert.deepEqual(await keyRows(page), [{ hint: keyHint(key), state: 'Active' }]);

      const served = await eventsServed(web, key);
      await page.reload({ waitUntil: 'load' });
      await usageShows(page, web, key, served);
      await assertAccessible(page, 'the dashboard with a key and usage');
      await screenshot(page, 'account-dashboard');

      await revokeByClick(page, web, key);
      assert.match(await text(page, '[role="status"]'), /revoked/);
      assert.deepEqual(await keyRows(page), [{ hint: keyHint(key), state: 'Revoked' }]);
      assert.equal(await button(page, /^Revoke/).count(), 0, 'a revoked key has no actions');
      await assertAccessible(page, 'the dashboard after revoking');
      assert.deepEqual(await watched.problems(), [], 'no console errors or CSP violations');
    } finally {
      await context.close();
    }
  });

  test('roll in the browser: the old key keeps working for the hour picked, beside the new one', async () => {
    const { context, page, watched } = await person();
    try {
      await signInByMail(page, 'roll@example.org');
      const oldKey = await createKey(page);
      await backToAccount(page);

      await page.getByLabel(`When the old key ${keyHint(oldKey)} stops`).selectOption({ label: 'Old key works 1 more hour' });
      await clickTo(page, `${web}/account/keys/roll`, () => button(page, `Roll key ${keyHint(oldKey)}`).click());
      assert.equal(await text(page, 'h1'), 'Your new API key');
      const newKey = await keyOnPage(page);
      assert.notEqual(newKey, oldKey);
      const replaces = page.locator('main p').filter({ hasText: 'It replaces' });
      assert.equal(squash(await replaces.locator('code').textContent()), keyHint(oldKey), 'the page names the key it replaces');
      assert.match(squash(await replaces.textContent()), /keeps working until/);
      // Until the wall clock plus the hour picked (the server's own clock is pinned elsewhere; a grace is real time).
      const until = Date.parse((await replaces.locator('time').getAttribute('datetime')) ?? '');
      const ahead = until - Date.now();
      assert.ok(ahead > 3_400_000 && ahead <= 3_600_000, `the old key works until about an hour from now (${Math.round(ahead / 1000)} s)`);
      await assertAccessible(page, 'the new key page of a roll');
      await screenshot(page, 'account-rolled-key');

      for (const [name, key] of [
        ['the old key', oldKey],
        ['the new key', newKey],
      ] as const) {
        assert.equal((await api(web, key)).status, 200, `${name} answers on the API`);
      }

      await backToAccount(page);
      const rows = await keyRows(page);
      assert.equal(rows.length, 2);
      const oldRow = rows.find((r) => r.hint === keyHint(oldKey));
      assert.ok(oldRow, 'the old key is listed');
      assert.match(oldRow.state, /^Rolled: works until \S/);
      assert.deepEqual(rows.find((r) => r.hint === keyHint(newKey))?.state, 'Active');

      // Sign out: home, the session cookie gone, and the dashboard asks for a sign-in again.
      await clickTo(page, `${web}/`, () => button(page, /^Sign out$/).click());
      assert.deepEqual(
        (await context.cookies(web)).filter((c) => c.name.includes('session')),
        [],
        'the session cookie is cleared',
      );
      await open(page, '/account');
      assert.equal(new URL(page.url()).pathname, '/account/sign-in', 'signed out: /account leads to the sign-in page');
      assert.deepEqual(await watched.problems(), [], 'no console errors or CSP violations');
    } finally {
      await context.close();
    }
  });

  test('sign out everywhere ends the sessions of the other browsers too', async () => {
    const here = await person();
    const there = await person();
    try {
      await signInByMail(here.page, 'leaver@example.org');
      await signInByMail(there.page, 'leaver@example.org');
      await clickTo(here.page, `${web}/`, () => button(here.page, 'Sign out everywhere').click());
      await open(there.page, '/account');
      assert.equal(new URL(there.page.url()).pathname, '/account/sign-in', 'the other browser is signed out too');
      assert.deepEqual(await here.watched.problems(), [], 'no console errors or CSP violations');
      assert.deepEqual(await there.watched.problems(), [], 'no console errors or CSP violations');
    } finally {
      await here.context.close();
      await there.context.close();
    }
  });

  test('an invitation accepted in a second browser joins the same organization: same keys, same usage', async () => {
    const owner = await person();
    const invitee = await person();
    try {
      const page = owner.page;
      await signInByMail(page, 'owner@example.org');
      const key = await createKey(page);
      await backToAccount(page);
      await eventsServed(web, key);
      await page.reload({ waitUntil: 'load' });

      // An address the form cannot take: 400, the dashboard again with the error at the field.
      await page.locator('#invite-email').fill('not-an-address');
      const refused = page.waitForResponse((r) => r.url() === `${web}/account/members/invite` && r.request().method() === 'POST');
      await clickTo(page, `${web}/account/members/invite#invite`, () => button(page, 'Send the invitation').click());
      assert.equal((await refused).status(), 400);
      const field = page.locator('#invite-email');
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      assert.equal(await field.getAttribute('aria-describedby'), 'invite-email-error');
      assert.equal(await field.inputValue(), 'not-an-address', 'what was typed is kept');
      assert.match(await text(page, '#invite-email-error'), /e-mail address/);
      await assertAccessible(page, 'the dashboard with an invalid invitation address');

      const seen = await mailNames();
      await field.fill('grace@example.org');
      await clickTo(
        page,
        (u) => u.pathname === '/account' && u.searchParams.get('notice') === 'invited',
        () => button(page, 'Send the invitation').click(),
      );
      const orgId = new URL(page.url()).searchParams.get('org');
      assert.match(orgId ?? '', /^org_/);
      assert.match(await text(page, '[role="status"]'), /Invitation sent/);
      const ownerSees = {
        org: await text(page, 'main > p strong:nth-of-type(2)'),
        keys: await keyRows(page),
        usage: await usage(page),
        today: await today(page),
      };
      assert.deepEqual(ownerSees.keys, [{ hint: keyHint(key), state: 'Active' }]);

      const link = await linkMailedTo('grace@example.org', seen);
      assert.equal(link.origin, web);
      assert.equal(link.pathname, '/account/invite');
      const other = invitee.page;
      await open(other, link.href);
      assert.equal(await text(other, 'h1'), 'Accept your invitation');
      await assertAccessible(other, 'the invitation page');
      await clickTo(
        other,
        (u) => u.pathname === '/account' && u.searchParams.get('notice') === 'joined',
        () => button(other, 'Accept the invitation').click(),
      );
      assert.equal(new URL(other.url()).searchParams.get('org'), orgId, 'the organization invited to');
      assert.match(await text(other, '[role="status"]'), /You joined the organization/);
      assert.match(await text(other, 'main'), /Signed in as grace@example\.org\./);
      assert.deepEqual(
        { org: await text(other, 'main > p strong:nth-of-type(2)'), keys: await keyRows(other), usage: await usage(other), today: await today(other) },
        ownerSees,
        'the invitee sees the organization, its keys and its usage as the owner does',
      );
      // The viewer's own row says so: "(you)".
      const members = (await other.locator('table.members tbody tr td:first-child').allTextContents()).map((t) => squash(t).replace(/ \(you\)$/, '')).sort();
      assert.deepEqual(members, ['grace@example.org', 'owner@example.org']);
      assert.equal(await other.locator('#invite-email').count(), 0, 'only the owner invites');
      await assertAccessible(other, "the invitee's dashboard");
      assert.deepEqual(await owner.watched.problems(), [], "no console errors or CSP violations in the owner's browser");
      assert.deepEqual(await invitee.watched.problems(), [], "no console errors or CSP violations in the invitee's browser");
    } finally {
      await owner.context.close();
      await invitee.context.close();
    }
  });

  test('sign-in with the identity provider (OpenID Connect on loopback): a key that works, counted, revoked (401 within a second)', async () => {
    const client = { clientId: 'family-events-web', clientSecret: 'a-browser-test-secret-that-is-long-enough-0123' };
    const accounts = { ada: { email: 'ada.oidc@example.org', email_verified: true } };
    let idp: Idp | undefined;
    let oidcSrv: TestServer | undefined;
    let oidcFront: Nginx | undefined;
    let context: BrowserContext | undefined;
    try {
      // The callback URL names the server's port, and the provider must know it first.
      ({ srv: oidcSrv, front: oidcFront } = await startBehindNginx(cert, fx.dataDir, async (site) => {
        await idp?.close();
        idp = await startIdp({ ...client, redirectUri: `${site}/account/oidc/callback`, accounts });
        return { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: client.clientId, OIDC_CLIENT_SECRET: client.clientSecret };
      }));
      assert.ok(idp);
      const provider = idp;
      const site = oidcFront.base;
      assert.equal(oidcSrv.config.webBaseUrl, site);
      context = await chrome.newContext();
      const watched = await watch(context, site);
      const page = await context.newPage();

      await open(page, '/account/sign-in', 200, site);
      const start = button(page, `Sign in with ${new URL(provider.issuer).host}`);
      assert.equal(await start.count(), 1, 'the provider button');
      await assertAccessible(page, 'the sign-in page with the provider button');
      await screenshot(page, 'account-sign-in-oidc');

      // The provider's own development pages (not ours: no axe here): any login, any password, then consent.
      await clickTo(
        page,
        (u) => u.origin === provider.issuer && u.pathname.startsWith('/interaction/'),
        () => start.click(),
      ).catch(async (err: unknown) => {
        // A refused navigation reads as net::ERR_ABORTED; the page's console says why.
        assert.fail(
          `the button did not reach the provider (${(err as Error).message.split('\n')[0]}); our page reported:\n${(await watched.problems()).join('\n')}`,
        );
      });
      await page.locator('input[name="login"]').fill('ada');
      await page.locator('input[name="password"]').fill('any password');
      await Promise.all([page.locator('input[name="prompt"][value="consent"]').waitFor({ state: 'attached' }), page.locator('button[type="submit"]').click()]);
      await clickTo(page, `${site}/account`, () => page.locator('button[type="submit"]').click());

      assert.equal(await text(page, 'h1'), 'Your account');
      assert.match(await text(page, 'main'), /Signed in as ada\.oidc@example\.org\./);
      const key = await createKey(page);
      const served = await eventsServed(site, key);
      await backToAccount(page);
      await usageShows(page, site, key, served);
      await revokeByClick(page, site, key);
      assert.deepEqual(await watched.problems(), [], 'no console errors or CSP violations on our pages');
    } finally {
      await context?.close();
      await oidcFront?.stop();
      await oidcSrv?.stop();
      await idp?.close();
    }
  });

  test('every account page: security headers, no console errors, no CSP violations', async () => {
    const { context, page, watched } = await person();
    try {
      const headersOf = (res: Response, what: string): void => {
        const h = res.headers();
        assert.match(h['content-security-policy'] ?? '', /(?:^|;\s*)default-src 'none'(?:;|$)/, `${what}: CSP with default-src 'none'`);
        assert.equal(h['x-content-type-options'], 'nosniff', `${what}: nosniff`);
      };
      headersOf(await open(page, '/account/sign-in'), 'the sign-in page');
      // An address the form cannot take: 400, the page again with the error at its field.
      await page.locator('#email').fill('nobody');
      // The same URL as before: wait for the POST's answer and the new document's load instead.
      const refused = page.waitForResponse((r) => r.url() === `${web}/account/sign-in` && r.request().method() === 'POST');
      await Promise.all([page.waitForEvent('load'), button(page, 'Send me a sign-in link').click()]);
      assert.equal((await refused).status(), 400);
      assert.equal(await page.locator('#email').getAttribute('aria-invalid'), 'true');
      await signInByMail(page, 'walker@example.org');
      const key = await createKey(page);
      await backToAccount(page);
      await clickTo(page, `${web}/account/keys/roll`, () => button(page, `Roll key ${keyHint(key)}`).click());
      headersOf(await open(page, '/account'), 'the dashboard');
      await page.locator('#invite-email').fill('@');
      await clickTo(page, `${web}/account/members/invite#invite`, () => button(page, 'Send the invitation').click());
      const seen = await mailNames();
      await page.locator('#invite-email').fill('walker.two@example.org');
      await clickTo(
        page,
        (u) => u.searchParams.get('notice') === 'invited',
        () => button(page, 'Send the invitation').click(),
      );
      const invitation = await linkMailedTo('walker.two@example.org', seen);
      headersOf(await open(page, '/account/sign-in/sent'), 'the sent page');
      // A link that does not work: the confirmation page says so at once (the link is looked up, not spent).
      headersOf(await open(page, '/account/confirm?token=not-a-token', 400), 'the failed confirmation page');
      assert.equal(await text(page, 'h1'), 'This sign-in link does not work');
      headersOf(await open(page, invitation.href), 'the invitation page');
      // Signed in as walker: the invitation for walker.two asks before it switches accounts.
      const asked = page.waitForResponse((r) => r.url() === `${web}/account/invite` && r.request().method() === 'POST');
      await clickTo(page, `${web}/account/invite`, () => button(page, 'Accept the invitation').click());
      assert.equal((await asked).status(), 200);
      assert.equal(await text(page, 'h1'), 'Switch accounts?');
      await clickTo(
        page,
        (u) => u.searchParams.get('notice') === 'joined',
        () => button(page, /^Continue as walker\.two@example\.org/).click(),
      );
      assert.match(await text(page, 'main'), /Signed in as walker\.two@example\.org\./);

      // Every page the website answered in this browser, GET or POST, carried the headers.
      const seenPages = new Set<string>();
      for (const d of watched.documents) {
        headersOf({ headers: () => d.headers } as Response, `${d.method} ${d.url.pathname} (${d.status})`);
        seenPages.add(`${d.method} ${d.url.pathname} ${d.status}`);
      }
      const expected = [
        'GET /account/sign-in 200',
        'POST /account/sign-in 400',
        'GET /account/sign-in/sent 200',
        'GET /account/confirm 200',
        'GET /account/confirm 400',
        'GET /account 200',
        'POST /account/keys 200',
        'POST /account/keys/roll 200',
        'POST /account/members/invite 400',
        'GET /account/invite 200',
        'POST /account/invite 200',
      ];
      assert.deepEqual(
        expected.filter((e) => !seenPages.has(e)),
        [],
        `every account page was seen (${[...seenPages].join(', ')})`,
      );
      assert.deepEqual(await watched.problems(), [], 'no console errors or CSP violations');
    } finally {
      await context.close();
    }
  });
});
