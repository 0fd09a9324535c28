// The home page: what the service is, a search box, the ways into browsing (cities, categories),
// the way into the API docs, and how to credit us, with the snippet to paste.
import { fullDate } from '../format.ts';
import { html, type Html } from '../html.ts';
import { renderPage, type Site } from '../layout.ts';
import { attribution } from '../../terms.ts';

/**
 * Every count here is the total of the listing it links to (site/home.ts asks the listings for
 * them): upcoming events, in the categories keyless browsing lists.
 */
export interface HomeInput {
  /** Every city of the snapshot, with the events its page lists now (0: nothing coming up). */
  readonly cities: readonly { readonly name: string; readonly events: number }[];
  readonly categories: readonly { readonly slug: string; readonly name: string; readonly events: number }[];
  /** The events /events lists now. */
  readonly totalEvents: number;
  /** When the snapshot was built (ISO). */
  readonly updatedAt: string;
}

const COMBINING_MARKS = /\p{M}/gu;
const NOT_SLUG = /[^a-z0-9]+/g;
const EDGE_DASHES = /^-|-$/g;

/**
 * A city's path segment: "San José" → "san-jose". Accents are stripped (NFD, then the marks
 * dropped), and every run of anything but a-z and 0-9 (spaces, dots, apostrophes) becomes one dash,
 * so the segment never needs percent-encoding.
 */
export function citySlug(name: string): string {
  return name.normalize('NFD').replace(COMBINING_MARKS, '').toLowerCase().replace(NOT_SLUG, '-').replace(EDGE_DASHES, '');
}

/**
 * The HTML we ask publishers to paste: a link to the website with the same words the API's
 * `attribution` carries, so the credit reads the same wherever our data shows up.
 */
export function attributionSnippet(site: Site): string {
  const a = attribution(site.webBaseUrl);
  return html`<a href="${a.url}">${a.text}</a>`.text;
}

/**
 * A block of code under a caption. site.js adds a copy button after every [data-copy] element,
 * copying its text and naming itself after the attribute's value; without JS the text is still
 * there to select. The <pre> takes focus so a block wider than the screen scrolls from the keyboard.
 */
export function codeBlock(code: string, caption: string): Html {
  return html`<figure class="code-block">
<figcaption>${caption}</figcaption>
<pre tabindex="0" data-copy="${caption}"><code>${code}</code></pre>
</figure>`;
}

const plural = (n: number, one: string, many: string): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function searchForm(cities: readonly string[]): Html {
  const options = cities.map((c) => html`<option value="${c}">${c}</option>`);
  return html`<form class="search-form" action="/events" method="get" role="search" aria-label="Search events">
<div class="field">
<label for="home-q">What are you looking for?</label>
<input id="home-q" name="q" type="search" maxlength="200" placeholder="storytime, science, puppets…">
</div>
<div class="field">
<label for="home-city">City</label>
<select id="home-city" name="city">
<option value="">Any city</option>
${options}
</select>
</div>
<button type="submit">Search events</button>
</form>`;
}

/**
 * Links to the places (cities, categories) that have something coming up, each with its count, and
 * the others named once, unlinked: a link is a promise of events, and a person looking for Camps
 * learns from that line that there are none right now instead of wondering whether the site has
 * them at all.
 */
function countedList(
  kind: 'cities' | 'categories',
  items: readonly { readonly name: string; readonly href: string; readonly events: number }[],
  nothing: string,
): Html {
  const some = items.filter((i) => i.events > 0);
  const none = items.filter((i) => i.events === 0).map((i) => i.name);
  if (some.length === 0) return html`<p>${nothing}</p>`;
  const links = some.map((i) => html`<li><a href="${i.href}">${i.name}</a> <span class="count">(${plural(i.events, 'event', 'events')})</span></li>`);
  return html`<ul class="link-list ${kind}">${links}</ul>
${none.length === 0 ? '' : html`<p class="hint">No upcoming events right now in ${listText(none)}.</p>`}`;
}

/** "A", "A and B", "A, B and C" */
const listText = (names: readonly string[]): string =>
  names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;

function cityList(cities: HomeInput['cities']): Html {
  return countedList(
    'cities',
    cities.map((c) => ({ name: c.name, href: `/cities/${citySlug(c.name)}`, events: c.events })),
    'No city has upcoming events right now.',
  );
}

function categoryList(categories: HomeInput['categories']): Html {
  return countedList(
    'categories',
    categories.map((c) => ({ name: c.name, href: `/categories/${encodeURIComponent(c.slug)}`, events: c.events })),
    'No category has upcoming events right now.',
  );
}

function attributionSection(site: Site): Html {
  const a = attribution(site.webBaseUrl);
  return html`<section id="attribution" aria-labelledby="attribution-heading">
<h2 id="attribution-heading">Credit ${site.name}</h2>
<p>If you publish our listings in a newsletter, on a website or in an app, link back to us where the events appear. The free Community plan of the API requires it; the link is all it takes:</p>
${codeBlock(attributionSnippet(site), 'HTML to paste')}
<p>It looks like this: <a href="${a.url}">${a.text}</a></p>
</section>`;
}

function websiteJsonLd(site: Site, description: string): object {
  return {
    '@context': 'https://schema.org',
    '@type': 'WebSite',
    name: site.name,
    url: `${site.webBaseUrl}/`,
    description,
    potentialAction: {
      '@type': 'SearchAction',
      target: { '@type': 'EntryPoint', urlTemplate: `${site.webBaseUrl}/events?q={search_term_string}` },
      'query-input': 'required name=search_term_string',
    },
  };
}

export function homePage(site: Site, input: HomeInput): string {
  const description =
    `Family-friendly events in the San Francisco Bay Area: storytimes, museum days, nature walks and more from libraries, museums and parks, ` +
    `searchable by city, age and date, and an API for newsletters, media and apps.`;
  const places = input.cities.filter((c) => c.events > 0).map((c) => c.name);
  const browse =
    input.totalEvents === 0
      ? html`<p>There are no upcoming events right now.</p>`
      : html`<p><a href="/events">See all ${plural(input.totalEvents, 'upcoming event', 'upcoming events')}</a>, soonest first, and narrow them by age, date, price or place.</p>`;
  const main = html`<h1>Family events around the San Francisco Bay Area</h1>
<p class="lede">${site.name} gathers ${plural(input.totalEvents, 'upcoming family-friendly event', 'upcoming family-friendly events')} from the public calendars of libraries, museums, zoos, parks and city programs in ${plural(places.length, 'city', 'cities')}, in one place you can search by city, age, category and date. Listings were last updated on <time datetime="${input.updatedAt}">${fullDate(input.updatedAt)}</time>.</p>
${searchForm(places)}
<section aria-labelledby="browse-heading">
<h2 id="browse-heading">Browse</h2>
${browse}
</section>
<section aria-labelledby="cities-heading">
<h2 id="cities-heading">Events by city</h2>
${cityList(input.cities)}
</section>
<section aria-labelledby="categories-heading">
<h2 id="categories-heading">Events by category</h2>
${categoryList(input.categories)}
</section>
<section aria-labelledby="developers-heading">
<h2 id="developers-heading">For newsletters, media and apps</h2>
<p>The same listings are available through the ${site.name} API: JSON, CSV, RSS, JSON Feed and iCalendar, with the filters this site has. Try it without a key, then get one for your newsletter, publication or app.</p>
<ul class="link-list">
<li><a href="/account/sign-in">Get a free API key</a> (sign in with your e-mail: the Community plan, 25 events a month)</li>
<li><a href="/docs#quick-start">API quick start</a></li>
<li><a href="/docs">API reference and developer docs</a></li>
</ul>
</section>
${attributionSection(site)}`;
  return renderPage(
    site,
    {
      title: `${site.name}: family-friendly events in the San Francisco Bay Area`,
      description,
      canonicalPath: '/',
      og: { type: 'website' },
      jsonLd: websiteJsonLd(site, description),
      script: true,
    },
    main,
  );
}
