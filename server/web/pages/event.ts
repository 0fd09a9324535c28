// The page at every record's event_url: what, when, where, for whom, for how much, and the ways to
// keep it (calendar file, Google Calendar, tickets). A canceled or past event keeps its page, with
// a notice saying so, because links to it live on in newsletters and calendars.
import type { EventRecord } from '../../../core/record.ts';
import { CATEGORY_LABELS } from '../../../core/taxonomy.ts';
import { agesText, clip, googleCalendarUrl, osmUrl, priceText, whenText } from '../format.ts';
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

function notices(r: EventRecord, nowMs: number): Html {
  const ended = Date.parse(r.end_datetime ?? r.start_datetime) < nowMs;
  return html`${
    r.is_canceled
      ? html`<div class="banner banner-canceled" role="alert"><p><strong>This event has been canceled.</strong> Check with the organizer before making plans.</p></div>\n`
      : ''
  }${ended ? html`<p class="notice">This event has ended.</p>\n` : ''}`;
}

function where(r: EventRecord): Html {
  // A ZIP's centroid or a town's point is not where the event is: the map shows the area, unpinned.
  const approximate = r.venue.geo_precision === 'zip' || r.venue.geo_precision === 'place';
  return html`<p class="venue-name">${r.venue.name}</p>
<p class="venue-address">${r.venue.address}</p>
<p><a href="${osmUrl(r.venue.lat, r.venue.lng, approximate)}">${approximate ? 'Map (approximate location)' : 'Map'}<span class="visually-hidden"> of ${r.venue.name} on OpenStreetMap</span></a></p>`;
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
<div><dt>When</dt><dd><time datetime="${r.start_datetime}">${when}</time></dd></div>
<div><dt>Where</dt><dd>${where(r)}</dd></div>
<div><dt>Ages</dt><dd>${agesText(r.age_range)}</dd></div>
<div><dt>Price</dt><dd>${priceText(r.is_free, r.price)}</dd></div>
${categories.length === 0 ? '' : html`<div><dt>Categories</dt><dd><ul class="tags">${categories}</ul></dd></div>\n`}${host === null ? '' : html`<div><dt>Organizer</dt><dd>${host}</dd></div>\n`}</dl>`;
}

function actions(r: EventRecord, ctx: EventPageContext): Html {
  const tickets = httpUrl(r.ticket_url);
  return html`${tickets === null ? '' : html`<p><a class="button" href="${tickets}">Tickets / register<span class="visually-hidden"> on the organizer’s site</span></a></p>\n`}<section class="add-to-calendar" aria-labelledby="calendar-heading">
<h2 id="calendar-heading">Add to your calendar</h2>
<ul class="actions">
<li><a href="${ctx.icsPath}" download>Download .ics<span class="visually-hidden"> calendar file</span></a></li>
<li><a href="${googleCalendarUrl(r)}">Google Calendar</a></li>
</ul>
</section>`;
}

function attribution(r: EventRecord): Html {
  return r.source === null
    ? html`<p class="attribution">Listing from the organizer’s public calendar.</p>`
    : html`<p class="attribution">Listing from ${r.source}.</p>`;
}

export function eventPage(site: Site, r: EventRecord, ctx: EventPageContext): { html: string } {
  const when = whenText(r.start_datetime, r.end_datetime, ctx.nowMs);
  const about = r.description ?? r.summary;
  const main = html`<article class="event">
${notices(r, ctx.nowMs)}<h1>${r.title}</h1>
${facts(r, when, ctx.unlistedCategories ?? [])}
${actions(r, ctx)}
${
  about === null
    ? ''
    : html`<section class="description" aria-labelledby="about-heading">
<h2 id="about-heading">About this event</h2>
${paragraphs(about)}
</section>
`
}<p><a href="${ctx.similarPath}">More events like this</a></p>
${attribution(r)}
</article>`;
  const image = httpUrl(r.image_url);
  return {
    html: renderPage(
      site,
      {
        title: `${r.title} – ${site.name}`,
        description: metaDescription(r, when),
        canonicalPath: `/events/${encodeURIComponent(r.id)}`,
        og: { type: 'article', image },
        jsonLd: eventJsonLd(r),
      },
      main,
    ),
  };
}
