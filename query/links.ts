// One URL per page: a route's URL with the request's own parameters and the page's position,
// sorted by name. The Link header (server/routes/formats.ts), a feed's atom:link and next_url
// (feeds.ts) and the change feed's `next` (changes.ts) all write their links here, so the same
// page has the same URL wherever a client finds it, and a cache keyed by URL sees it once.

/** `url` with `params` and `set` (which replace any of the same name), sorted by name (stable for repeats). */
export function pageUrl(url: string, params: readonly (readonly [string, string])[], set: readonly (readonly [string, string])[] = []): string {
  const replaced = new Set(set.map(([k]) => k));
  const pairs = [...params.filter(([k]) => !replaced.has(k)), ...set].map(([k, v]): [string, string] => [k, v]);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const q = new URLSearchParams(pairs).toString();
  return q ? `${url}?${q}` : url;
}
