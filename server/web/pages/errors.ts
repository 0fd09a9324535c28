// The website's error pages: the same layout as every page (so a lost visitor can still navigate),
// never indexed, each saying what happened and where to go next.
import type { ParamError } from '../../errors.ts';
import { fullDate } from '../format.ts';
import { html, type Html } from '../html.ts';
import { renderPage, type Site } from '../layout.ts';
import type { GoneEvent } from '../../../snapshot/gone.ts';

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

/** What a client address asked too often: listing pages, or calendar downloads of a search. */
export interface TooManyInput {
  readonly what: 'listing' | 'calendar';
  readonly perMinute: number;
  readonly retryAfterS: number;
}

/**
 * 429 on a listing or a search's calendar: the website is for people, and a person who meets the
 * limit is told when to come back; a program is shown the way that is meant for it (the API, with
 * a key and its plan's quota).
 */
export function tooManyRequestsPage(site: Site, input: TooManyInput): string {
  const what = input.what === 'listing' ? 'event listings' : 'calendar downloads of a search';
  return errorPage(
    site,
    'Too many requests',
    html`<h1>Please slow down</h1>
<p>This address has asked for more than ${input.perMinute} ${what} a minute. This website is made for people browsing; please try again in ${waitText(input.retryAfterS)}. Single event pages and their calendar files are not limited.</p>
<p>Reading events from a program, a newsletter or an app? Use the <a href="/docs">${site.name} API</a> with a key: <a href="/account/sign-in">create a free account</a> and a key, and every search, calendar and export is yours within your plan.</p>
${onwards}`,
  );
}

/**
 * 403 on a search's calendar that asks for categories keyless browsing does not list (the plan a
 * key-less visitor browses under excludes them). Each such event keeps its own page.
 */
export function categoryNotListedPage(site: Site, input: { readonly categories: readonly string[]; readonly planName: string }): string {
  const names = categoryNames(input.categories);
  const verb = input.categories.length > 1 ? 'are' : 'is';
  return errorPage(
    site,
    'Category not listed on the website',
    html`<h1>${names} ${verb} not listed on the website</h1>
<p>The website lists the categories of the free ${input.planName} plan, which leaves out ${names}. Each of those events still has its own page; lists and calendars of them come from the <a href="/docs#plans">API with a plan that includes them</a>.</p>
<p><a class="button" href="/events">Browse the other events</a></p>`,
  );
}

/** “Fairs & festivals” and “Seasonal”: category labels as a sentence names them. */
export const categoryNames = (labels: readonly string[]): string => labels.map((l) => `“${l}”`).join(' and ');
