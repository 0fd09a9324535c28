// The spec's privacy rules for links: `source` is a bare host domain, `source_url` is always null,
// `organizer_url` is never an upstream feed address, `ticket_url` only on the host's own site.
import { getDomain, getHostname } from 'tldts';

/** "https://www.sfpl.org/x" → "sfpl.org" (www. dropped; other subdomains kept). */
export function bareHost(url: string | null | undefined): string | null {
  if (!url) return null;
  const host = getHostname(url);
  return host ? host.replace(/^www\./, '') : null;
}

/** Registrable domain by the Public Suffix List: "events.sjpl.org" → "sjpl.org", "x.ci.berkeley.ca.us" → "berkeley.ca.us"-aware. */
export function siteOf(url: string | null | undefined): string | null {
  return url ? getDomain(url) : null;
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

/** An organizer's site to publish: the upstream one when it is a safe page, else the registry's vetted one. */
export function organizerUrl(upstream: string | null, vetted: string | null, knownFeeds: ReadonlySet<string>): string | null {
  const u = httpUrl(upstream);
  if (u && !isFeedAddress(u.href, knownFeeds)) return u.href;
  return vetted && !isFeedAddress(vetted, knownFeeds) ? (httpUrl(vetted)?.href ?? null) : null;
}

/** A registration link, kept only when it is on the host organizer's own site. */
export function ticketUrl(upstream: string | null, hostSite: string | null): string | null {
  const u = httpUrl(upstream);
  if (!u || !hostSite) return null;
  const site = siteOf(hostSite);
  return site !== null && siteOf(u.href) === site ? u.href : null;
}

/** Images are republished only over https. */
export function imageUrl(upstream: string | null): string | null {
  const u = httpUrl(upstream);
  return u && u.protocol === 'https:' ? u.href : null;
}
