// Browsing: the API's search filters as a GET form (the API's own parameter names, so a page URL
// and an API URL say the same thing), and a page of results grouped by day. /events, /cities/<city>
// and /categories/<slug> are all this page with a different heading and starting values.
import type { EventRecord } from '../../../core/record.ts';
import type { ParamError } from '../../errors.ts';
import { agesText, dateHeading, pacificDay, priceText, whenText } from '../format.ts';
import { html, type Html } from '../html.ts';
import { renderPage, type Site } from '../layout.ts';
import { categoryNames } from './errors.ts';

export interface BrowseInput {
  /** "Events", "Events in Berkeley", "Storytime events" */
  readonly heading: string;
  readonly intro?: string;
  /** The canonical path of this listing, e.g. "/events" or "/cities/berkeley". */
  readonly path: string;
  readonly form: {
    readonly action: string;
    /** The request's parameters by name, as given (they refill the form). */
    readonly values: Readonly<Record<string, string>>;
    readonly cities: readonly string[];
    readonly categories: readonly { readonly slug: string; readonly name: string }[];
  };
  /** Shown at the top (linked to their fields) and next to each field. */
  readonly errors: readonly ParamError[];
  /** Null when the search could not run (errors). */
  readonly results: null | {
    readonly records: readonly EventRecord[];
    readonly total: number;
    readonly offset: number;
    readonly limit: number;
    readonly prevHref: string | null;
    readonly nextHref: string | null;
    /** When q found nothing: the q the snapshot's own words suggest (the API's did_you_mean) and the same search with it. */
    readonly suggestion?: { readonly q: string; readonly href: string } | null;
  };
  /** webcal:// URL of the same search as iCalendar. */
  readonly subscribeHref: string | null;
  /** https URL of the same search as an .ics file. */
  readonly icsHref: string | null;
  /** How many events the calendar of this search holds (the next ones, from the first). */
  readonly calendarEvents?: number;
  /**
   * The categories this search asked for that keyless browsing does not list (their labels), and
   * the plan it browses under: the page says so, and where they are listed.
   */
  readonly unlisted?: { readonly categories: readonly string[]; readonly planName: string };
  /**
   * What a page without results says: whether the visitor set filters beyond the one the page's
   * path fixes (only then is "try fewer filters" advice), and that fixed city or category's name.
   */
  readonly empty?: { readonly filtered: boolean; readonly scope: string | null };
  readonly nowMs: number;
  /** Where a near search is centred, as the page names it ("94110 (San Francisco)", "your location"). */
  readonly near?: string | null;
  /** Results nearest first: listed as one list rather than by day. */
  readonly byDistance?: boolean;
}

// The website's own date and distance filters (server/web/site/filters.ts reads them): their values
// are here because the form lists them.
export const WHEN_CHOICES = [
  { value: 'today', label: 'Today' },
  { value: 'tomorrow', label: 'Tomorrow' },
  { value: 'weekend', label: 'This weekend' },
  { value: 'week', label: 'This week' },
  { value: 'next-week', label: 'Next week' },
  { value: 'dates', label: 'Specific dates' },
] as const;
export const KM_PER_MILE = 1.609344;
/** The distances the form offers; the default one is the empty value, so it never shows in a URL. */
export const MILE_CHOICES: readonly number[] = [1, 3, 5, 10, 25, 50];
export const DEFAULT_MILES = 10;
/** The API's largest radius (500 km) in whole miles. */
export const MAX_MILES = 310;

/** The miles a radius in km (a link's radius_km) shows as in the form: one of its choices when it is one. */
export function milesOf(radiusKmText: string): string {
  const miles = Number(radiusKmText) / KM_PER_MILE;
  if (!Number.isFinite(miles)) return '';
  const choice = MILE_CHOICES.find((m) => Math.abs(m - miles) < 0.05);
  if (choice === DEFAULT_MILES) return '';
  return choice !== undefined ? String(choice) : String(Math.round(miles * 10) / 10);
}

/** The form's fields by parameter name, with the label an error summary names them by. */
const FIELD_LABELS: Readonly<Record<string, string>> = {
  q: 'Search',
  city: 'City',
  category: 'Category',
  is_free: 'Free events only',
  age_min: 'From age',
  age_max: 'To age',
  when: 'When',
  week: 'Week',
  start_date: 'From date',
  end_date: 'To date',
  near: 'ZIP code or town',
  miles: 'Within',
  lat: 'Latitude',
  lng: 'Longitude',
  radius_km: 'Within (km)',
};

/**
 * Parameters a link can carry that the form has no field for: named in an error by what they do.
 * Not linked from the summary (there is no field to go to).
 */
const ADDRESS_LABELS: Readonly<Record<string, string>> = {
  sort: 'Sort order',
  limit: 'Events per page',
  offset: 'Page',
  query: 'Search',
};

const labelOf = (param: string): string => FIELD_LABELS[param] ?? ADDRESS_LABELS[param] ?? 'The address';

/**
 * The API's messages (server/params.ts, server/query.ts, server/querystring.ts), which speak of
 * parameters and API paths, as the form says them: first the messages that point at something
 * the form does differently (a list to choose from instead of /v1/cities), then every parameter
 * name still in the text replaced by its field's label. The API keeps its own wording (its
 * problem+json names parameters, as a developer needs).
 */
const REWRITES: readonly (readonly [RegExp, string])[] = [
  [/^unknown city (.*); the accepted names are listed at \/v1\/cities$/, 'we have no events in $1; choose a city from the list'],
  [/^names an unknown category (.*); the slugs are listed at \/v1\/categories$/, 'we have no category $1; choose a category from the list'],
  [/^must be a date YYYY-MM-DD or an RFC 3339 date-time.*$/, 'must be a date, such as 2026-12-05'],
  [/^(.*) could not be read as a date; use YYYY-MM-DD.*$/, '$1 is not a date we can read; choose a date such as 2026-12-05'],
  [/^must be current, next, or an ISO week.*$/, 'must be This week, Next week or Any week'],
  [/^must be true, false, 1 or 0$/, 'must be ticked or left empty'],
  [/^is given more than once.*$/, 'is given more than once in the page address; search again with the form'],
  [/^is not valid percent-encoding.*$/, 'could not be read from the page address; search again with the form'],
  [/^must not be less than (\w+)$/, 'must not be less than $1; change one of the two'],
  [/^must not be before (\w+)$/, 'must not be before $1; change one of the two dates'],
];

// Names with an underscore, and the two short ones no English sentence uses; "sort", "limit" and
// "offset" are also words, and no message names them as parameters.
const PARAM_NAME = /\b[a-z]+(?:_[a-z]+)+\b|\b(?:lat|lng)\b/g;

/** An error as the website shows it: the field's label and a message in the form's own words. */
export function websiteError(e: ParamError): { readonly param: string; readonly label: string; readonly message: string } {
  // The rule that two fields come together, said of the one given: the other is missing.
  const pair = /^needs its partner: (\w+) and (\w+) are given together or not at all$/.exec(e.message);
  let message = pair ? `needs ${pair[1] === e.param ? pair[2]! : pair[1]!} as well; fill in both, or neither` : e.message;
  for (const [pattern, replacement] of REWRITES) {
    if (pattern.test(message)) {
      message = message.replace(pattern, replacement);
      break;
    }
  }
  // Whatever parameter names are left (rules between parameters name their partners), as labels.
  message = message.replace(PARAM_NAME, (name) => ((FIELD_LABELS[name] ?? ADDRESS_LABELS[name]) === undefined ? name : `“${labelOf(name)}”`));
  return { param: e.param, label: labelOf(e.param), message };
}

const fieldId = (param: string): string => `f-${param}`;

/** Each field's error messages, looked up as the form renders. */
type ErrorsByParam = ReadonlyMap<string, readonly string[]>;

function errorsByParam(errors: readonly ParamError[]): ErrorsByParam {
  const m = new Map<string, string[]>();
  for (const e of errors.map(websiteError)) {
    const list = m.get(e.param);
    if (list) list.push(e.message);
    else m.set(e.param, [e.message]);
  }
  return m;
}

interface Field {
  readonly param: string;
  readonly values: Readonly<Record<string, string>>;
  readonly errors: ErrorsByParam;
  readonly hint?: string;
}

/**
 * The label, hint and error of a field, and the attributes its control needs to point at them.
 * The error comes after the control, so that fields side by side keep their controls on one line
 * whichever of them has an error (their labels and hints are alike; their errors are not).
 */
function fieldParts(f: Field): { top: Html; bottom: Html; aria: Html } {
  const id = fieldId(f.param);
  const messages = f.errors.get(f.param);
  const describedBy = [messages === undefined ? null : `${id}-error`, f.hint === undefined ? null : `${id}-hint`].filter((x) => x !== null);
  const top = html`<label for="${id}">${FIELD_LABELS[f.param] ?? f.param}</label>
${f.hint === undefined ? '' : html`<p class="hint" id="${id}-hint">${f.hint}</p>\n`}`;
  const bottom =
    messages === undefined ? html`` : html`\n<p class="field-error" id="${id}-error"><span class="visually-hidden">Error: </span>${messages.join(' ')}</p>`;
  const aria = html`${messages === undefined ? '' : html` aria-invalid="true"`}${describedBy.length === 0 ? '' : html` aria-describedby="${describedBy.join(' ')}"`}`;
  return { top, bottom, aria };
}

const fieldClass = (f: Field, extra = ''): string => `field${extra}${f.errors.has(f.param) ? ' field-invalid' : ''}`;

function textInput(f: Field, type: string, attrs: Html | '' = ''): Html {
  const { top, bottom, aria } = fieldParts(f);
  return html`<div class="${fieldClass(f)}">
${top}<input id="${fieldId(f.param)}" name="${f.param}" type="${type}" value="${f.values[f.param] ?? ''}"${attrs}${aria}>${bottom}
</div>`;
}

interface Option {
  readonly value: string;
  readonly label: string;
}

/** A select whose current value is kept even when it is not one of the options (a list of cities, an ISO week). */
function select(f: Field, options: readonly Option[]): Html {
  const { top, bottom, aria } = fieldParts(f);
  const current = f.values[f.param] ?? '';
  const known = options.some((o) => o.value.toLowerCase() === current.toLowerCase());
  const all = known ? options : [...options, { value: current, label: current }];
  const opts = all.map((o) => html`<option value="${o.value}"${o.value.toLowerCase() === current.toLowerCase() ? html` selected` : ''}>${o.label}</option>`);
  return html`<div class="${fieldClass(f)}">
${top}<select id="${fieldId(f.param)}" name="${f.param}"${aria}>${opts}</select>${bottom}
</div>`;
}

function checkbox(f: Field): Html {
  const { top, bottom, aria } = fieldParts(f);
  const v = f.values[f.param];
  const checked = v === 'true' || v === '1';
  return html`<div class="${fieldClass(f, ' field-checkbox')}">
<input id="${fieldId(f.param)}" name="${f.param}" type="checkbox" value="true"${checked ? html` checked` : ''}${aria}>
${top}${bottom}</div>`;
}

const AGE = html` min="0" max="18" step="1" inputmode="numeric"`;

/**
 * When: today, tomorrow, this weekend, this week, next week, or the From and To dates. A link's
 * week=current or next shows as its choice; an ISO week, which the form does not offer, is kept as is.
 */
function datesFieldset(values: Readonly<Record<string, string>>, errors: ErrorsByParam): Html {
  const week = values.week;
  const when = values.when ?? (week === 'current' ? 'week' : week === 'next' ? 'next-week' : values.start_date || values.end_date ? 'dates' : '');
  const shown = { ...values, when };
  const keptWeek = values.when === undefined && week !== undefined && week !== 'current' && week !== 'next';
  return html`<fieldset class="when-fields">
<legend>Dates</legend>
<div class="filter-row">
${select({ param: 'when', values: shown, errors }, [{ value: '', label: 'Any time' }, ...WHEN_CHOICES])}
${textInput({ param: 'start_date', values, errors }, 'date')}
${textInput({ param: 'end_date', values, errors }, 'date')}
</div>
${keptWeek ? html`<input type="hidden" name="week" value="${week}">\n` : ''}${errors.has('week') ? html`<p class="field-error" id="${fieldId('week')}"><span class="visually-hidden">Error: </span>Week: ${errors.get('week')!.join(' ')}</p>\n` : ''}</fieldset>`;
}

/**
 * Near: a ZIP code or a town, and a distance in miles (the API's radius_km). A point (lat, lng) from
 * a link or from "Use my location" (site.js adds the button where the browser can tell) is kept in
 * hidden fields, and the page says a search is centred on it.
 */
function nearFieldset(values: Readonly<Record<string, string>>, errors: ErrorsByParam, place: string | null, byDistance: boolean): Html {
  const miles = values.miles ?? (values.radius_km === undefined ? '' : milesOf(values.radius_km));
  const options = MILE_CHOICES.map((m) => ({ value: m === DEFAULT_MILES ? '' : String(m), label: `${m} mi` }));
  const all = miles === '' || options.some((o) => o.value === miles) ? options : [...options, { value: miles, label: `${miles} mi` }];
  const point = values.near === undefined && values.lat !== undefined && values.lng !== undefined;
  return html`<fieldset class="near-fields" data-locate>
<legend>Near</legend>
<div class="filter-row">
${textInput({ param: 'near', values, errors, hint: 'For example 94110, Berkeley or Walnut Creek' }, 'text', html` maxlength="100" autocomplete="postal-code" spellcheck="false"`)}
${select({ param: 'miles', values: { ...values, miles }, errors }, all)}
</div>
<input type="hidden" name="lat" value="${point ? values.lat : ''}">
<input type="hidden" name="lng" value="${point ? values.lng : ''}">
${place === null ? '' : html`<p class="hint near-place">${byDistance ? 'Nearest first, from' : 'Distances from'} ${place}.</p>\n`}</fieldset>`;
}

/**
 * Parameters that together make one filter, as a person counts them ("ages 3 to 5" is one filter).
 * Any other parameter the form carries, but for the search box, counts as one filter of its own.
 */
const FILTER_GROUPS: readonly (readonly string[])[] = [
  ['age_min', 'age_max'],
  ['when', 'week', 'start_date', 'end_date'],
  ['near', 'miles', 'lat', 'lng', 'radius_km'],
];
const NOT_FILTERS: ReadonlySet<string> = new Set(['q', 'sort', 'limit', 'offset']);

/** How many filters of the panel a search sets: what its closed summary says. */
export function activeFilters(values: Readonly<Record<string, string>>): number {
  const set = Object.keys(values).filter((k) => !NOT_FILTERS.has(k) && values[k] !== '');
  const grouped = FILTER_GROUPS.filter((g) => g.some((k) => set.includes(k))).length;
  return grouped + set.filter((k) => !FILTER_GROUPS.some((g) => g.includes(k))).length;
}

/** The id of the results region: the skip link's and the form's destination. */
export const RESULTS_ID = 'results';

/**
 * The search box stays in view; the other filters are a disclosure, closed unless one of them has
 * an error, so that on a phone the results start on the first screen and a keyboard reaches them in
 * a few steps. Its summary says how many are set. Fields of a closed disclosure are still submitted.
 * The form leads to the results (#results): the browser scrolls to them and focuses them.
 */
function filterForm(input: BrowseInput, errors: ErrorsByParam): Html {
  const { values, cities, categories, action } = input.form;
  const f = (param: string, hint?: string): Field => (hint === undefined ? { param, values, errors } : { param, values, errors, hint });
  const active = activeFilters(values);
  const open = [...errors.keys()].some((p) => p !== 'q');
  return html`<form class="filters" method="get" action="${action}#${RESULTS_ID}" role="search" aria-label="Filter events" data-strip-empty>
<div class="search-row">
${textInput(f('q'), 'search', html` maxlength="200"`)}
<button type="submit">Search events</button>
</div>
<details class="filter-panel"${open ? html` open` : ''}>
<summary>Filters${active === 0 ? '' : html` <span class="filter-count">(${active} active)</span>`}</summary>
<div class="filter-row">
${select(f('city'), [{ value: '', label: 'Any city' }, ...cities.map((c) => ({ value: c, label: c }))])}
${select(f('category'), [{ value: '', label: 'Any category' }, ...categories.map((c) => ({ value: c.slug, label: c.name }))])}
${checkbox(f('is_free'))}
</div>
<fieldset>
<legend>Child’s age</legend>
<div class="filter-row">
${textInput(f('age_min', 'In years, 0 to 18'), 'number', AGE)}
${textInput(f('age_max', 'In years, 0 to 18'), 'number', AGE)}
</div>
</fieldset>
${datesFieldset(values, errors)}
${nearFieldset(values, errors, input.near ?? null, input.byDistance === true)}
<div class="form-actions">
<button type="submit">Apply filters</button>
<a href="${action}">Clear all filters</a>
</div>
</details>
</form>`;
}

function errorSummary(errors: readonly ParamError[]): Html {
  if (errors.length === 0) return html``;
  const items = errors
    .map(websiteError)
    .map((e) =>
      FIELD_LABELS[e.param] === undefined
        ? html`<li>${e.label}: ${e.message}</li>`
        : html`<li><a href="#${fieldId(e.param)}">${e.label}: ${e.message}</a></li>`,
    );
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-heading">
<h2 id="error-summary-heading">Please check your search</h2>
<ul>${items}</ul>
</div>
`;
}

const COUNT = new Intl.NumberFormat('en-US');
const events = (n: number): string => `${COUNT.format(n)} ${n === 1 ? 'event' : 'events'}`;

function countText(total: number, offset: number, shown: number): string {
  if (offset === 0 && shown === total) return events(total);
  if (shown === 0) return `No events on this page, of ${events(total)}`;
  return `Showing ${COUNT.format(offset + 1)}–${COUNT.format(offset + shown)} of ${events(total)}`;
}

/** Miles, to a tenth under ten. */
function milesAway(km: number): string {
  const mi = km / KM_PER_MILE;
  return `${mi < 10 ? mi.toFixed(1) : Math.round(mi)} mi away`;
}

function card(r: EventRecord, nowMs: number): Html {
  const distance = r.distance_km === undefined ? '' : ` · ${milesAway(r.distance_km)}`;
  return html`<li class="card">
<h3><a href="/events/${encodeURIComponent(r.id)}">${r.title}</a>${r.is_canceled ? html` <span class="badge badge-canceled">Canceled</span>` : ''}</h3>
<p class="card-when"><time datetime="${r.all_day ? pacificDay(r.start_datetime) : r.start_datetime}">${whenText(r.start_datetime, r.end_datetime, nowMs, r.all_day)}</time></p>
<p class="card-where">${r.venue.name}, ${r.venue.city}${distance}</p>
<p class="card-meta">${agesText(r.age_range)} · ${priceText(r.is_free, r.price)}</p>
</li>`;
}

/**
 * Consecutive records that start on the same Pacific day, in the order given (sorted by start,
 * each day is one group). Events that began before today and are still on come first, together.
 */
function dayGroups(records: readonly EventRecord[], nowMs: number): { heading: string; records: EventRecord[] }[] {
  const today = pacificDay(nowMs);
  const groups: { key: string; heading: string; records: EventRecord[] }[] = [];
  for (const r of records) {
    const day = pacificDay(r.start_datetime);
    const key = day < today ? 'ongoing' : day;
    const last = groups[groups.length - 1];
    if (last !== undefined && last.key === key) last.records.push(r);
    else groups.push({ key, heading: key === 'ongoing' ? 'Already under way' : dateHeading(r.start_datetime, nowMs), records: [r] });
  }
  return groups;
}

function pagination(prev: string | null, next: string | null): Html {
  if (prev === null && next === null) return html``;
  return html`<nav class="pagination" aria-label="Pagination"><ul>
${prev === null ? '' : html`<li><a href="${prev}" rel="prev">Previous page</a></li>\n`}${next === null ? '' : html`<li><a href="${next}" rel="next">Next page</a></li>\n`}</ul></nav>
`;
}

function feedLinks(subscribe: string | null, ics: string | null, events: number | undefined): Html {
  if (subscribe === null && ics === null) return html``;
  return html`<ul class="feed-links">
${subscribe === null ? '' : html`<li><a href="${subscribe}">Subscribe in your calendar</a></li>\n`}${ics === null ? '' : html`<li><a href="${ics}">Download .ics<span class="visually-hidden"> file of these events</span></a></li>\n`}</ul>
${events === undefined ? '' : html`<p class="hint">The calendar holds the next ${events} events of this search, and moves on as they pass.</p>\n`}`;
}

/** Why a category asked for is not listed, and where it is. */
function unlistedNotice(u: NonNullable<BrowseInput['unlisted']>): Html {
  const names = categoryNames(u.categories);
  return html`<div class="notice" role="status"><p><strong>${names} ${u.categories.length > 1 ? 'are' : 'is'} not listed on the website.</strong> The website lists the categories of the free ${u.planName} plan, which leaves out ${names}. Each of those events still has its own page; lists and calendars of them come from the <a href="/docs#plans">API with a plan that includes them</a>.</p></div>
`;
}

/**
 * Why a page lists nothing, and where to go instead. Only filters the visitor set can be relaxed:
 * a city's or a category's own page with none set has simply nothing coming up, and says so.
 */
function emptyMessage(input: BrowseInput, total: number): Html {
  const empty = input.empty ?? { filtered: true, scope: null };
  // Paged past the end of results that exist.
  if (total > 0) return html`<p class="empty" id="result-count">No events on this page, of ${events(total)}.</p>`;
  if (empty.filtered)
    return html`<p class="empty" id="result-count">No events match this search. Try fewer filters, or <a href="/events">see all upcoming events</a>.</p>`;
  if (empty.scope === null) return html`<p class="empty" id="result-count">There are no upcoming events right now. <a href="/">Back to the home page</a>.</p>`;
  return html`<p class="empty" id="result-count">There are no upcoming events in ${empty.scope} right now. <a href="/events">See all upcoming events</a>, or <a href="/">pick another city or category</a>.</p>`;
}

function results(input: BrowseInput): Html {
  const res = input.results;
  if (res === null) return html``;
  if (res.records.length === 0) {
    const hint = res.suggestion
      ? html`<p class="suggestion">Did you mean <a href="${res.suggestion.href}">${res.suggestion.q}</a>?</p>
`
      : '';
    return region(html`${hint}${emptyMessage(input, res.total)}
${pagination(res.prevHref, null)}`);
  }
  // Nearest first: one list, each card with its day and time (grouped by day, Saturday and Sunday would alternate).
  const byDistance = input.byDistance === true;
  const grouped = byDistance ? [{ heading: 'Nearest first', records: [...res.records] }] : dayGroups(res.records, input.nowMs);
  const groups = grouped.map(
    // Not labelled regions: with results sorted by distance a day can come twice, and landmarks
    // must be unique; the headings already give the list its structure.
    (g) => html`<section class="day">
<h2>${g.heading}</h2>
<ul class="event-list">
${g.records.map((r) => card(r, input.nowMs))}
</ul>
</section>
`,
  );
  return region(html`<p class="result-count" id="result-count">${countText(res.total, res.offset, res.records.length)}</p>
${feedLinks(input.subscribeHref, input.icsHref, input.calendarEvents)}${groups}${pagination(res.prevHref, res.nextHref)}`);
}

/**
 * The results as a region named by their count, focusable from script only (tabindex -1): the
 * skip link and the form's #results land here, and the next Tab goes on into the results.
 */
const region = (content: Html): Html => html`<section class="results" id="${RESULTS_ID}" tabindex="-1" aria-labelledby="result-count">
${content}</section>`;

const DEFAULT_DESCRIPTION =
  'Family-friendly events around the San Francisco Bay Area: storytimes, classes, nature walks, music and more, by city, age, date and category.';

export function browsePage(site: Site, input: BrowseInput): string {
  const page = input.results === null || input.results.offset === 0 ? null : Math.floor(input.results.offset / input.results.limit) + 1;
  const main = html`<h1 class="search-heading">${input.heading}</h1>
${input.intro === undefined ? '' : html`<p class="intro">${input.intro}</p>\n`}${input.unlisted === undefined ? '' : unlistedNotice(input.unlisted)}${errorSummary(input.errors)}${filterForm(input, errorsByParam(input.errors))}
${results(input)}`;
  return renderPage(
    site,
    {
      // "Error: " first, so that a screen reader's first words on arrival say the search needs changing.
      title: `${input.errors.length > 0 ? 'Error: ' : ''}${input.heading}${page === null ? '' : ` (page ${page})`} – ${site.name}`,
      description: input.intro ?? DEFAULT_DESCRIPTION,
      canonicalPath: input.path,
      og: { type: 'website' },
      noindex: input.errors.length > 0 || input.unlisted !== undefined,
      script: true,
      ...(input.results === null ? {} : { skipLinks: [{ href: `#${RESULTS_ID}`, label: 'Skip to results' }] }),
    },
    main,
  );
}
