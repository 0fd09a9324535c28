// The real browser the website's tests drive: Debian's chromium through playwright-core, headless,
// on a fresh profile, with everything that would reach out to the network on its own turned off
// (the test machines have no internet, and a background fetch would only add noise and time).
// Where chromium is missing, a developer's `npm test` skips the browser tests with one line; CI
// installs it (.ci/run), so there a missing chromium fails the tests instead of hiding them.
// Also here: the page checks every browser suite shares (axe-core against WCAG 2.2 A/AA, full-page
// screenshots to the system's temp directory).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { cookieNames } from '../../../server/web/session.ts';
import { freePort } from '../../ports.ts';
import { startTestServer, type TestServer } from '../helpers.ts';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS: readonly string[] = [
  // CI runs as root, where chromium's sandbox cannot start.
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export const SKIP_LINE = 'chromium not installed: browser tests skipped; apt-get install chromium';

/** CI sets CI=true (GitHub, GitLab and most others do); any non-empty value but "false" and "0" counts. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI;
  return v !== undefined && v !== '' && v !== 'false' && v !== '0';
}

/**
 * The `skip` option for the browser suites: the one-line reason outside CI when chromium is
 * missing, else false (in CI the launch then fails, loudly, with launchBrowser's message).
 */
export function browserSkip(env: NodeJS.ProcessEnv = process.env, exists: (p: string) => boolean = existsSync): string | false {
  return !exists(CHROMIUM) && !inCi(env) ? SKIP_LINE : false;
}

export interface TestBrowser {
  readonly browser: Browser;
  /** The file's context: a fresh profile, downloads accepted, no service workers. */
  readonly context: BrowserContext;
  /** Another context on the same browser: a visitor with an empty cache. */
  newContext(): Promise<BrowserContext>;
  close(): Promise<void>;
}

async function freshContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: 'block', viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  // `npm test` runs two test files at once on two cores: a long page can take longer than
  // Playwright's 30 s default to lay out there, which is slowness, not a failure of the page.
  context.setDefaultTimeout(90_000);
  return context;
}

export interface BrowserOptions {
  /**
   * base64 of the SHA-256 of a certificate's SubjectPublicKeyInfo (TestCertificate.spki in
   * test/deploy/nginx.ts): the website behind nginx over TLS, with a test certificate.
   */
  readonly trustSpki?: string;
}

/**
 * Launches chromium once per test file. playwright-core's launch() gives the browser a new,
 * temporary user-data directory of its own (removed on close), so no state carries over from any
 * other run or from a person's profile.
 */
export async function launchBrowser(o: BrowserOptions = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (outside CI the browser tests skip themselves instead)`);
  // Exactly the test certificate's key is trusted; any other certificate error still fails the page
  // (playwright's launch() passes a --user-data-dir, without which chromium ignores this switch).
  const trust = o.trustSpki === undefined ? [] : [`--ignore-certificate-errors-spki-list=${o.trustSpki}`];
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...trust] });
  try {
    return { browser, context: await freshContext(browser), newContext: () => freshContext(browser), close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** The axe-core tags the website is held to: WCAG 2.0, 2.1 and 2.2, levels A and AA. */
export const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
export const SCREENSHOTS = path.join(os.tmpdir(), 'family-events-screenshots');

type Violation = Awaited<ReturnType<AxeBuilder['analyze']>>['violations'][number];

/** Each violation as the page's author needs it: rule, impact, what to fix, and where. */
export function describeViolations(vs: readonly Violation[]): string {
  return vs
    .map((v) => {
      const nodes = v.nodes.map((n) => `    ${n.target.join(' ')}\n      ${n.failureSummary?.replaceAll('\n', '\n      ') ?? ''}`).join('\n');
      return `  ${v.id} (${v.impact ?? 'no impact'}): ${v.help}\n  ${v.helpUrl}\n${nodes}`;
    })
    .join('\n');
}

export async function assertAccessible(page: Page, what: string): Promise<void> {
  // Details of violations only: on the long docs page, collecting every passing node doubles axe's time.
  const r = await new AxeBuilder({ page })
    .withTags(WCAG)
    .options({ resultTypes: ['violations'] })
    .analyze();
  assert.equal(
    r.violations.length,
    0,
    `axe: ${r.violations.length} WCAG 2.2 A/AA violation(s) on ${what} (${page.url()}):\n${describeViolations(r.violations)}`,
  );
  // A page axe could not read at all would pass with no violations: it must have checked something.
  assert.ok(r.passes.length > 10, `axe checked ${r.passes.length} rules on ${what}`);
}

let announced = false;
/** A full-page PNG of `page` as SCREENSHOTS/<name>.png; the directory is printed once per file. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  if (!announced) {
    console.log(`screenshots: ${SCREENSHOTS}`);
    announced = true;
  }
  // Straight through CDP for optimizeForSpeed (fast PNG compression): the docs page is tens of
  // thousands of pixels tall, and page.screenshot() spends most of its time compressing.
  const size = await page.evaluate<[number, number]>('[document.documentElement.scrollWidth, document.documentElement.scrollHeight]');
  const cdp = await page.context().newCDPSession(page);
  try {
    const shot = await cdp.send('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: true,
      optimizeForSpeed: true,
      clip: { x: 0, y: 0, width: size[0], height: size[1], scale: 1 },
    });
    await writeFile(path.join(SCREENSHOTS, `${name}.png`), Buffer.from(shot.data, 'base64'));
  } finally {
    await cdp.detach();
  }
}

/**
 * A test file's fixture and browser, made side by side. `keep` hears of each as soon as both have
 * settled, before a failure of either is thrown, so the file's after() cleans up whatever was made.
 */
export async function fixtureBesideBrowser<F>(
  make: () => Promise<F>,
  keep: (made: { readonly fx?: F; readonly chrome?: TestBrowser }) => void,
  o: BrowserOptions = {},
): Promise<void> {
  const [built, launched] = await Promise.allSettled([make(), launchBrowser(o)]);
  keep({ ...(built.status === 'fulfilled' ? { fx: built.value } : {}), ...(launched.status === 'fulfilled' ? { chrome: launched.value } : {}) });
  if (launched.status === 'rejected') throw launched.reason;
  if (built.status === 'rejected') throw built.reason;
}

/** The two widths issue 28's pages are walked at: a phone's and a desktop's. */
export const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;

export interface SiteInBrowser<F> {
  readonly fx: F;
  readonly chrome: TestBrowser;
  readonly srv: TestServer;
  /** The website's origin, as WEB_BASE_URL and PUBLIC_BASE_URL (links on its pages point here). */
  readonly web: string;
}

/**
 * A browser test file's website: a fixture made beside the browser, the server started on it on a
 * port of its own that is also its base URL (plus `env`), in before(); all of it undone in after(),
 * whatever was made. `keep` hears of each as soon as the server is up, then `ready` runs (picking
 * records, opening an outbox).
 */
export function siteBesideBrowser<F extends { readonly dataDir: string; cleanup(): Promise<void> }>(
  make: () => Promise<F>,
  keep: (site: SiteInBrowser<F>) => void,
  o: { readonly env?: Readonly<Record<string, string>>; readonly ready?: (site: SiteInBrowser<F>) => Promise<void> } = {},
): void {
  let made: { fx?: F; chrome?: TestBrowser } = {};
  let srv: TestServer | undefined;
  before(
    async () => {
      await fixtureBesideBrowser(make, (m) => {
        made = m;
      });
      assert.ok(made.fx && made.chrome);
      const port = await freePort();
      const web = `http://127.0.0.1:${port}`;
      srv = await startTestServer(made.fx.dataDir, { PORT: String(port), WEB_BASE_URL: web, PUBLIC_BASE_URL: web, ...o.env });
      const site = { fx: made.fx, chrome: made.chrome, srv, web };
      keep(site);
      await o.ready?.(site);
    },
    { timeout: 180_000 },
  );
  after(async () => {
    await srv?.stop();
    await made.chrome?.close();
    await made.fx?.cleanup();
  });
}

/**
 * The dashboard in a new context at `size`, signed in with a session token made in the ledger
 * (keys-browser and dashboard-browser tests).
 */
export async function dashboardAs(
  chrome: TestBrowser | undefined,
  web: string,
  token: string,
  size: { width: number; height: number },
  javaScriptEnabled = true,
): Promise<Page> {
  assert.ok(chrome);
  const context = await chrome.browser.newContext({ viewport: size, locale: 'en-US', javaScriptEnabled });
  context.setDefaultTimeout(90_000);
  await context.addCookies([{ name: cookieNames(web).session, value: token, url: web }]);
  const page = await context.newPage();
  const res = await page.goto(`${web}/account`);
  assert.equal(res?.status(), 200);
  return page;
}
