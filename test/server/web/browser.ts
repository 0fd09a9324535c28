// The real browser the website's tests drive: Debian's chromium through playwright-core, headless,
// on a fresh profile, with everything that would reach out to the network on its own turned off
// (the test machines have no internet, and a background fetch would only add noise and time).
// Where chromium is missing, a developer's `npm test` skips the browser tests with one line; CI
// installs it (.ci/run), so there a missing chromium fails the tests instead of hiding them.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

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

/**
 * Launches chromium once per test file. playwright-core's launch() gives the browser a new,
 * temporary user-data directory of its own (removed on close), so no state carries over from any
 * other run or from a person's profile.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (outside CI the browser tests skip themselves instead)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
  try {
    return { browser, context: await freshContext(browser), newContext: () => freshContext(browser), close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
