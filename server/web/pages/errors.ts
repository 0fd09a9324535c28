// The website's error pages: the same layout as every page (so a lost visitor can still navigate),
// never indexed, each saying what happened and where to go next.
import type { GoneEvent } from '../../../workers/protocol.ts';
import type { ParamError } from '../../errors.ts';
import { fullDate } from '../format.ts';
import { html, type Html } from '../html.ts';
import { renderPage, type Site } from '../layout.ts';

function errorPage(site: Site, title: string, main: Html): string {
  return renderPage(site, { title: `${title} – ${site.name}`, description: title, canonicalPath: null, noindex: true }, main);
}

const onwards = html`<ul class="actions">
<li><a href="/">Go to the home page</a></li>
<li><a href="/events">Browse all events</a></li>
</ul>`;

const searchBox = html`<form class="search-box" method="get" action="/events" role="search" aria-label="Search events">
<label for="error-q">Search events</label>
<div class="search-row">
<input id="error-q" name="q" type="search" maxlength="200">
<button type="submit">Search</button>
</div>
</form>`;

export function notFoundPage(site: Site, input: { readonly path: string }): string {
  return errorPage(
    site,
    'Page not found',
    html`<h1>We couldn’t find that page</h1>
<p>Nothing lives at <code>${input.path}</code>. The link may be mistyped, or the event may have been taken down by its organizer.</p>
${searchBox}
${onwards}`,
  );
}

export function gonePage(site: Site, input: { readonly gone: GoneEvent; readonly similarHref: string }): string {
  const { gone } = input;
  return errorPage(
    site,
    `${gone.title} is no longer listed`,
    html`<h1>${gone.title} on ${fullDate(gone.start_datetime)} is no longer listed</h1>
<p>It may have been taken off the organizer’s calendar, or it has already happened.</p>
<p><a class="button" href="${input.similarHref}">See similar events</a></p>
${onwards}`,
  );
}

export function badRequestPage(site: Site, input: { readonly detail: string; readonly errors: readonly ParamError[] }): string {
  const items = input.errors.map((e) => html`<li><code>${e.param}</code>: ${e.message}</li>`);
  return errorPage(
    site,
    'This address doesn’t work',
    html`<h1>This address doesn’t work</h1>
<p>${input.detail}</p>
${items.length === 0 ? '' : html`<ul>${items}</ul>\n`}${onwards}`,
  );
}

export function methodNotAllowedPage(site: Site): string {
  return errorPage(
    site,
    'Request not allowed',
    html`<h1>Request not allowed</h1>
<p>This website only answers requests to read its pages (GET and HEAD).</p>
${onwards}`,
  );
}

/** "about a minute", "about 5 minutes", "about 30 seconds". */
function waitText(s: number): string {
  if (s < 60) return `about ${Math.max(1, Math.round(s))} seconds`;
  const m = Math.round(s / 60);
  return m === 1 ? 'about a minute' : `about ${m} minutes`;
}

export function unavailablePage(site: Site, input: { readonly retryAfterS?: number } = {}): string {
  const when = input.retryAfterS === undefined ? 'in a little while' : `in ${waitText(input.retryAfterS)}`;
  return errorPage(
    site,
    'Temporarily unavailable',
    html`<h1>We’re busy right now</h1>
<p>The site can’t answer this request at the moment. Please try again ${when}.</p>`,
  );
}

export function internalErrorPage(site: Site): string {
  return errorPage(
    site,
    'Something went wrong',
    html`<h1>Something went wrong</h1>
<p>We couldn’t show this page because of a problem on our side. Please try again later.</p>
${onwards}`,
  );
}
