// What the API promises every client, in one place: the request size limits, the plan the keyless
// demo answers under and the attribution line. The dispatcher and the routes enforce them; the
// website's docs and pages quote them, reading them here rather than from the API's routes.

/** The longest request target (path and query) accepted; longer is 414 request_too_large. */
export const MAX_TARGET_BYTES = 8 * 1024;
/** The most header bytes accepted (names and values); more is 431 request_too_large. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** The keyless demo answers under this plan's rules (and its own per-call and per-address limits). */
export const DEMO_PLAN = 'community';

/** The attribution a plan that requires it asks for: in the API's answers and on the website. */
export function attribution(webBaseUrl: string): { text: string; url: string } {
  return { text: `Family events data by Family Events API (${new URL(webBaseUrl).host})`, url: webBaseUrl };
}
