// The page at every record's event_url: what, when, where (with a map), for whom, for how much, the
// ways to keep it (calendar file, Google Calendar, tickets) and to pass it on (share). A canceled or
// past event keeps its page, with its status beside the title and no offer to add it to a calendar,
// because links to it live on in newsletters and calendars.
import type { EventRecord } from '../../../core/record.ts';
import { CATEGORY_LABELS } from '../../../core/taxonomy.ts';
import { agesText, clip, googleCalendarUrl, osmUrl, pacificDay, priceText, whenText } from '../format.ts';
import { html, httpUrl, type Html } from '../html.ts';
import { eventJsonLd } from '../jsonld.ts';
import { renderPage, type Site } from '../layout.ts';

export interface EventPageContext {
  readonly nowMs: number;
  /** This event as an iCalendar file, e.g. /events/<id>.ics */
  readonly icsPath: string;
  /** A browse search for events like this one. */
  readonly similarPath: string;
  /** Categories keyless browsing does not list: named on the page, not linked (their listing is a 403). */
  readonly unlistedCategories?: readonly string[];
}

const LABELS: Readonly<Record<string, string>> = CATEGORY_LABELS;
export const categoryLabel = (slug: string): string => LABELS[slug] ?? slug;

// Blank lines separate paragraphs; single line breaks inside one are kept by the stylesheet (pre-line).
const PARAGRAPH_BREAK = /\r?\n[ \t]*\r?\n\s*/;

function paragraphs(text: string): Html[] {
  return text
    .trim()
    .split(PARAGRAPH_BREAK)
    .map((p) => html`<p>${p}</p>`);
}

const META_DESCRIPTION_SUMMARY = 160;

function metaDescription(r: EventRecord, when: string): string {
  const where = `${when} at ${r.venue.name}, ${r.venue.city}.`;
  const about = r.summary ?? r.description;
  return about === null ? where : `${clip(about, META_DESCRIPTION_SUMMARY)} ${where}`;
}

/** Whether the event is over at `nowMs`: its end, or its start when it gives no end, has passed. */
export function hasEnded(r: Pick<EventRecord, 'start_datetime' | 'end_datetime'>, nowMs: number): boolean {
  return Date.parse(r.end_datetime ?? r.start_datetime) < nowMs;
}

/**
 * The way back to the listing the visitor came from. The page is cached for everyone, so it cannot
 * know that listing: it links to all events, and site.js, reading a same-origin document.referrer
 * that is a listing, points it at that exact search (query and page included) and says so.
 */
function backLink(): Html {
  return html`<p class="event-back"><a href="/events" data-back-to-results>All events</a></p>`;
}

/**
 * The upstream's picture. It has no description of its own, and the one truthful text we could give
 * it, the title, is the heading right under it: read twice it tells a screen reader user nothing, so
 * the picture is decorative (alt=""). The box is fixed (width/height and a CSS aspect ratio, the
 * picture cropped to fit), so nothing moves when it arrives; it is usually the largest thing in the
 * first screen, so it loads at once and first. Our address is nobody's business upstream.
 */
function picture(r: EventRecord): Html {
  const src = httpUrl(r.image_url);
  // https only: our pages are served over TLS and their CSP lets pictures in from https: alone, so
  // an http picture would be refused (a console error, and a grey box where nothing can arrive).
  if (src === null || !src.startsWith('https:')) return html``;
  return html`<div class="event-image"><img src="${src}" alt="" width="1200" height="600" loading="eager" fetchpriority="high" decoding="async" referrerpolicy="no-referrer"></div>\n`;
}

/** Canceled, or over: said right under the title, with where to look instead. */
function status(r: EventRecord, ended: boolean, similarPath: string): Html {
  const instead = html`<a href="${similarPath}">See upcoming events like this</a>`;
  if (r.is_canceled) {
    return html`<div class="banner banner-canceled event-status" role="alert"><p><strong>Canceled.</strong> This event will not take place; check with the organizer before making plans. ${instead}.</p></div>\n`;
  }
  if (ended) return html`<div class="notice event-status"><p><strong>This event has ended.</strong> ${instead}.</p></div>\n`;
  return html``;
}

const coord = (n: number): string => String(Math.round(n * 1e6) / 1e6);

/** OpenStreetMap's embeddable map around a point: a pin on a street-level view, or an unpinned area. */
export function osmEmbedUrl(lat: number, lng: number, approximate: boolean): string {
  // Half the view's width and height in degrees: a few blocks around a pin, a town around an area.
  const [dLat, dLng] = approximate ? [0.03, 0.045] : [0.0025, 0.004];
  const bbox = [lng - dLng, lat - dLat, lng + dLng, lat + dLat].map(coord).join(',');
  const q = new URLSearchParams({ bbox, layer: 'mapnik' });
  if (!approximate) q.set('marker', `${coord(lat)},${coord(lng)}`);
  return `https://www.openstreetmap.org/export/embed.html?${q.toString()}`;
}

/** The place in Google Maps and Apple Maps: by its point, or by its address when the point is only an area's. */
function mapLinks(r: EventRecord, approximate: boolean): { google: string; apple: string } {
  const point = `${coord(r.venue.lat)},${coord(r.venue.lng)}`;
  const place = `${r.venue.name}, ${r.venue.address}`;
  const google = new URLSearchParams({ api: '1', query: approximate ? place : point });
  const apple = approximate ? new URLSearchParams({ q: place }) : new URLSearchParams({ ll: point, q: r.venue.name });
  return { google: `https://www.google.com/maps/search/?${google.toString()}`, apple: `https://maps.apple.com/?${apple.toString()}` };
}

/**
 * A real map, loaded only when asked for: "Show map" is a link whose target is the empty frame, so
 * it works without JavaScript, and no visitor's address goes to OpenStreetMap (nor does a page wait
 * on it, or log an error when it cannot be reached) for a map nobody looked at. The frame's box is
 * reserved, so the map appears in place. The links open the place in the visitor's own map app.
 */
function map(r: EventRecord): Html {
  // A ZIP's centroid or a town's point is not where the event is: the map shows the area, unpinned.
  const approximate = r.venue.geo_precision === 'zip' || r.venue.geo_precision === 'place';
  const links = mapLinks(r, approximate);
  return html`<figure class="event-map">
<div class="map-frame"><iframe name="event-map" src="about:blank" title="Map of ${approximate ? `the area around ${r.venue.name}` : r.venue.name} (OpenStreetMap)" sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox"></iframe></div>
<figcaption>${approximate ? html`<p class="map-approximate"><strong>Approximate location:</strong> the map shows the area of ${r.venue.city}, not the exact place. Check the address.</p>\n` : ''}<ul class="actions map-links">
<li><a class="button secondary" href="${osmEmbedUrl(r.venue.lat, r.venue.lng, approximate)}" target="event-map" data-map-load>Show map</a></li>
<li><a href="${osmUrl(r.venue.lat, r.venue.lng, approximate)}">OpenStreetMap<span class="visually-hidden">: ${r.venue.name}${approximate ? ' (approximate location)' : ''}</span></a></li>
<li><a href="${links.google}">Google Maps<span class="visually-hidden">: ${r.venue.name}</span></a></li>
<li><a href="${links.apple}">Apple Maps<span class="visually-hidden">: ${r.venue.name}</span></a></li>
</ul></figcaption>
</figure>`;
}

function where(r: EventRecord): Html {
  return html`<p class="venue-name">${r.venue.name}</p>
<p class="venue-address">${r.venue.address}</p>`;
}

function organizer(r: EventRecord): Html | null {
  if (r.organizer === null) return null;
  const url = httpUrl(r.organizer_url);
  return url === null ? html`${r.organizer}` : html`<a href="${url}">${r.organizer}</a>`;
}

function facts(r: EventRecord, when: string, unlisted: readonly string[]): Html {
  const host = organizer(r);
  const categories = r.categories.map((slug) =>
    unlisted.includes(slug)
      ? html`<li>${categoryLabel(slug)}</li>`
      : html`<li><a href="/categories/${encodeURIComponent(slug)}">${categoryLabel(slug)}</a></li>`,
  );
  return html`<dl class="facts">
<div><dt>When</dt><dd><time datetime="${r.all_day ? pacificDay(r.start_datetime) : r.start_datetime}">${when}</time></dd></div>
<div><dt>Where</dt><dd>${where(r)}</dd></div>
<div><dt>Ages</dt><dd>${agesText(r.age_range)}</dd></div>
<div><dt>Price</dt><dd>${priceText(r.is_free, r.price)}</dd></div>
${categories.length === 0 ? '' : html`<div><dt>Categories</dt><dd><ul class="tags">${categories}</ul></dd></div>\n`}${host === null ? '' : html`<div><dt>Organizer</dt><dd>${host}</dd></div>\n`}</dl>`;
}

/** Tickets and the calendar: only for an event one can still go to. */
function actions(r: EventRecord, ctx: EventPageContext, ended: boolean): Html {
  if (r.is_canceled || ended) return html``;
  const tickets = httpUrl(r.ticket_url);
  return html`${tickets === null ? '' : html`<p><a class="button" href="${tickets}">Tickets / register<span class="visually-hidden"> on the organizer’s site</span></a></p>\n`}<section class="add-to-calendar" aria-labelledby="calendar-heading">
<h2 id="calendar-heading">Add to your calendar</h2>
<ul class="actions">
<li><a href="${ctx.icsPath}" download>Download .ics<span class="visually-hidden"> calendar file</span></a></li>
<li><a href="${googleCalendarUrl(r)}">Google Calendar</a></li>
</ul>
</section>\n`;
}

/**
 * Passing the page on. Without JavaScript: an email with the title and link, and the link itself to
 * copy. site.js adds a Share button after the email link (the phone's share sheet where there is
 * one, else it copies the link and says so), at the end of the row so nothing moves.
 */
function share(r: EventRecord, canonical: string, when: string): Html {
  const mail = `mailto:?${new URLSearchParams({ subject: r.title, body: `${r.title}\n${when}, ${r.venue.name}, ${r.venue.city}\n\n${canonical}` })
    .toString()
    .replaceAll('+', '%20')}`;
  return html`<section class="share" aria-labelledby="share-heading">
<h2 id="share-heading">Share this event</h2>
<div class="share-actions" data-share-url="${canonical}" data-share-title="${r.title}"><a class="button secondary" href="${mail}">Email<span class="visually-hidden"> this event</span></a></div>
<p class="share-link">Link to this page: <a href="${canonical}">${canonical}</a></p>
</section>\n`;
}

// The record's source is the bare host of the calendar it came from (the spec keeps the upstream
// item's own address private: source_url is always null); a host name and nothing else is linked.
const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i;

/**
 * Where the listing comes from, as a link to that site. The registry vets every source, so the link
 * is no user content (no ugc); it is external, and a new window would not get our page (noopener).
 */
function attribution(r: EventRecord): Html {
  if (r.source === null || !HOST.test(r.source)) {
    return r.source === null
      ? html`<p class="attribution">Listing from the organizer’s public calendar.</p>`
      : html`<p class="attribution">Listing from ${r.source}.</p>`;
  }
  return html`<p class="attribution">Listing from <a href="https://${r.source.toLowerCase()}/" rel="external noopener">${r.source}</a>.</p>`;
}

export function eventPage(site: Site, r: EventRecord, ctx: EventPageContext): { html: string } {
  const when = whenText(r.start_datetime, r.end_datetime, ctx.nowMs, r.all_day);
  const ended = hasEnded(r, ctx.nowMs);
  const about = r.description ?? r.summary;
  const canonicalPath = `/events/${encodeURIComponent(r.id)}`;
  const main = html`<article class="event">
${backLink()}
${picture(r)}<h1>${r.title}</h1>
${status(r, ended, ctx.similarPath)}<div class="event-overview">
${facts(r, when, ctx.unlistedCategories ?? [])}
${map(r)}
</div>
${actions(r, ctx, ended)}${
    about === null
      ? ''
      : html`<section class="description" aria-labelledby="about-heading">
<h2 id="about-heading">About this event</h2>
${paragraphs(about)}
</section>
`
  }${share(r, site.webBaseUrl + canonicalPath, when)}<p><a href="${ctx.similarPath}">More events like this</a></p>
${attribution(r)}
</article>`;
  const image = httpUrl(r.image_url);
  return {
    html: renderPage(
      site,
      {
        title: `${r.title} – ${site.name}`,
        description: metaDescription(r, when),
        canonicalPath,
        og: { type: 'article', image },
        jsonLd: eventJsonLd(r),
        script: true,
      },
      main,
    ),
  };
}
