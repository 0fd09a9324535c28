// The spec's privacy rules for links: `source` is a bare host domain, `source_url` is always null,
// `organizer_url` is never an upstream feed address, `ticket_url` only on the host's own site.
import { getDomain, getHostname } from 'tldts';
import { words } from '../../core/text.ts';

/** "https://www.sfpl.org/x" → "sfpl.org" (www. dropped; other subdomains kept). */
export function bareHost(url: string | null | undefined): string | null {
  if (!url) return null;
  const host = getHostname(url);
  return host ? host.replace(/^www\./, '') : null;
}

/**
 * Registrable domain by the Public Suffix List: "events.sjpl.org" → "sjpl.org", and "ca.us" aware.
 * Private suffixes count too: on github.io or netlify.app each site is its own owner's, so
 * "someone.github.io" is not the vetted "bsapack149.github.io".
 */
export function siteOf(url: string | null | undefined): string | null {
  return url ? getDomain(url, { allowPrivateDomains: true }) : null;
}

/** Whether `url` is on the same registrable domain as `site`. */
function onSite(url: URL, site: string | null): boolean {
  const s = siteOf(site);
  return s !== null && siteOf(url.href) === s;
}

function httpUrl(u: string | null | undefined): URL | null {
  if (!u) return null;
  try {
    const url = new URL(u.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

const FEED_PATH = /\.(?:ics|ical|ifb|rss|xml|atom|rdf|csv|json)$|\/(?:feed|feeds|rss|atom|ical|ics|webcal)(?:\/|$)|\/calendar\/export/i;
const FEED_QUERY = /(?:^|&)(?:format|output|outputformat|type)=(?:ical|ics|rss|atom|xml|json|csv)(?:&|$)/i;

/** True for addresses that look like machine feeds rather than a site a person visits. */
export function isFeedAddress(u: string, knownFeeds: ReadonlySet<string> = new Set()): boolean {
  const url = httpUrl(u);
  if (!url) return true;
  if (knownFeeds.has(url.href) || knownFeeds.has(u.trim())) return true;
  return FEED_PATH.test(url.pathname) || FEED_QUERY.test(url.search.slice(1));
}

/** A registration link, kept only when it is on the host organizer's own site. */
export function ticketUrl(upstream: string | null, hostSite: string | null): string | null {
  const u = httpUrl(upstream);
  return u && onSite(u, hostSite) ? u.href : null;
}

/** An organizer as the registry vets it: its name and its site. */
export interface VettedOrganizer {
  readonly name: string;
  readonly url: string;
}

/** How an organizer's name is looked up in the registry: case, accents and punctuation aside. */
export function organizerKey(name: string): string {
  return words(name).join(' ');
}

export interface OrganizerLinks {
  readonly organizer: string;
  readonly organizerUrl: string | null;
  readonly ticketUrl: string | null;
}

/**
 * Who hosts an event and the links we publish for it. The registry's word is final: an item that
 * names a registry organizer gets that organizer's name and site whatever the item says its site is
 * (an upstream item that calls itself "San Francisco Public Library" with links on a look-alike host
 * must not put those links on our pages), and an item that names no one is the source's own.
 *
 * An organizer the registry does not know (an aggregator or a venue republishing someone else's
 * event) keeps its name: it is text a parent reads, and crediting the feed with another's event would
 * be false. It gets no link of its own, though: we cannot vouch for its site, so its URL is kept only
 * when it is on the source's own vetted site, and null otherwise.
 *
 * A more specific page on the vetted site ("https://sfpl.org/locations/mission") is kept as the
 * organizer's URL; a ticket link only on that same vetted site.
 */
export function resolveOrganizer(
  upstream: { readonly name: string | null; readonly url: string | null; readonly ticketUrl: string | null },
  source: VettedOrganizer,
  known: ReadonlyMap<string, VettedOrganizer>,
  knownFeeds: ReadonlySet<string>,
): OrganizerLinks {
  const named = upstream.name === null ? source : known.get(organizerKey(upstream.name));
  const vetted = named?.url ?? source.url;
  const own = httpUrl(upstream.url);
  const ownOk = own !== null && onSite(own, vetted) && !isFeedAddress(own.href, knownFeeds);
  const registryUrl = named && !isFeedAddress(named.url, knownFeeds) ? (httpUrl(named.url)?.href ?? null) : null;
  return {
    organizer: named?.name ?? upstream.name ?? source.name,
    organizerUrl: ownOk ? own.href : registryUrl,
    ticketUrl: ticketUrl(upstream.ticketUrl, vetted),
  };
}

/** Images are republished only over https. */
export function imageUrl(upstream: string | null): string | null {
  const u = httpUrl(upstream);
  return u && u.protocol === 'https:' ? u.href : null;
}
