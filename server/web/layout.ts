// The document around every website page: head (title, description, canonical, Open Graph,
// JSON-LD), skip link, header and navigation, main landmark, footer; and the headers every HTML
// answer carries. Pages hand in their <main> content as Html and never write a <head> of their own.
import { html, jsonScript, type Html } from './html.ts';

export interface Site {
  /** Absolute, without a trailing slash: https://example.org */
  readonly webBaseUrl: string;
  /** The API as the website serves it, e.g. `${webBaseUrl}/api`. */
  readonly apiBaseUrl: string;
  /** "Family Events" */
  readonly name: string;
  /**
   * Where the pages find the static files: their content-hashed URLs, cached for a year
   * (server/web/site/static.ts). Without it (a page rendered outside the server), the plain names.
   */
  readonly assets?: SiteAssets;
}

/** The URLs of server/web/static's files as pages link them. */
export interface SiteAssets {
  readonly css: string;
  readonly js: string;
  readonly icon: string;
}

const PLAIN_ASSETS: SiteAssets = { css: '/static/site.css', js: '/static/site.js', icon: '/static/favicon.svg' };

export interface PageMeta {
  /** The whole <title>; pages add " – <site name>" themselves where they want it. */
  readonly title: string;
  readonly description: string;
  /** The page's path ("/events"); the canonical link is webBaseUrl + path. Null: no canonical (error pages). */
  readonly canonicalPath: string | null;
  readonly og?: { readonly type: 'website' | 'article'; readonly image?: string | null };
  /** Rendered as <script type="application/ld+json">, escaped by jsonScript(). */
  readonly jsonLd?: unknown;
  readonly noindex?: boolean;
  /**
   * Load /static/site.js (copy buttons, leaner form submissions). Pages work without it; those
   * that gain nothing from it (event pages) leave it out, so they carry no script at all.
   */
  readonly script?: boolean;
  /**
   * Skip links before "Skip to content", for pages whose main content opens with something long
   * to get past (a listing's search form): each to an element of the page that can take focus.
   */
  readonly skipLinks?: readonly { readonly href: string; readonly label: string }[];
}

/**
 * Nothing inline: every script and stylesheet is a file we serve. The JSON-LD block is data, not
 * script, so script-src does not apply to it. Images may come from organizers' sites (og:image is
 * read by other sites, but a page may show one later).
 */
const csp = (formTargets: readonly string[]): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' https: data:",
    "font-src 'self'",
    "connect-src 'self'",
    // An event page's map, loaded into its frame only when the visitor asks for it.
    'frame-src https://www.openstreetmap.org',
    ["form-action 'self'", ...formTargets].join(' '),
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

/**
 * The headers of every HTML answer. `formTargets`: origins a form of the page may lead to besides
 * our own. Browsers apply form-action to the redirects after a submission too, so the sign-in page,
 * whose provider button is answered with a redirect to the identity provider, names its origins.
 * One policy, replaced rather than added to: two CSP headers are both enforced.
 */
export function securityHeaders(formTargets: readonly string[] = []): readonly (readonly [string, string])[] {
  return [
    ['Content-Security-Policy', csp(formTargets)],
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'strict-origin-when-cross-origin'],
    ['X-Frame-Options', 'DENY'],
    ['Permissions-Policy', 'camera=(), microphone=(), payment=(), usb=(), geolocation=(self)'],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
  ];
}

export const SECURITY_HEADERS = securityHeaders();

const NAV = [
  { href: '/events', label: 'Browse events', owns: ['/events', '/cities/', '/categories/'] },
  { href: '/docs', label: 'Developers', owns: ['/docs'] },
  { href: '/account', label: 'Your account', owns: ['/account'] },
] as const;

/**
 * What a nav link says of the page: "page" on the section's own page, "true" inside the section
 * (an event page is inside browsing), nothing elsewhere.
 */
function navCurrent(owns: readonly string[], path: string | null): 'page' | 'true' | null {
  if (path === null) return null;
  if (path === owns[0]) return 'page';
  return owns.some((p) => path.startsWith(p.endsWith('/') ? p : `${p}/`)) ? 'true' : null;
}

function head(site: Site, meta: PageMeta): Html {
  const canonical = meta.canonicalPath === null ? null : site.webBaseUrl + meta.canonicalPath;
  const image = meta.og?.image ?? null;
  const assets = site.assets ?? PLAIN_ASSETS;
  return html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${meta.title}</title>
<meta name="description" content="${meta.description}">
${meta.noindex ? html`<meta name="robots" content="noindex">\n` : ''}${canonical === null ? '' : html`<link rel="canonical" href="${canonical}">\n`}<meta property="og:title" content="${meta.title}">
<meta property="og:description" content="${meta.description}">
${canonical === null ? '' : html`<meta property="og:url" content="${canonical}">\n`}<meta property="og:type" content="${meta.og?.type ?? 'website'}">
<meta property="og:site_name" content="${site.name}">
${image === null ? '' : html`<meta property="og:image" content="${image}">\n`}<meta name="twitter:card" content="${image === null ? 'summary' : 'summary_large_image'}">
<link rel="stylesheet" href="${assets.css}">
<link rel="icon" href="${assets.icon}" type="image/svg+xml">
${meta.script ? html`<script src="${assets.js}" defer></script>\n` : ''}${meta.jsonLd === undefined ? '' : html`<script type="application/ld+json">${jsonScript(meta.jsonLd)}</script>\n`}`;
}

function header(site: Site, path: string | null): Html {
  const items = NAV.map((item) => {
    const current = navCurrent(item.owns, path);
    return html`<li><a href="${item.href}"${current === null ? '' : html` aria-current="${current}"`}>${item.label}</a></li>`;
  });
  return html`<header class="site-header">
<div class="wrap header-inner">
<a class="brand" href="/">${site.name}</a>
<nav class="site-nav" aria-label="Main"><ul>${items}</ul></nav>
</div>
</header>`;
}

function footer(site: Site): Html {
  return html`<footer class="site-footer">
<div class="wrap">
<p>${site.name} lists family-friendly events from the public calendars of Bay Area libraries, museums, parks and city organizations. Each listing names its source; times and details can change, so check with the organizer before you go.</p>
<p>Building an app, a newsletter or a library calendar? <a href="/docs">Read the developer docs for the ${site.name} API</a>.</p>
</div>
</footer>`;
}

/** A whole HTML document. */
export function renderPage(site: Site, meta: PageMeta, main: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
${head(site, meta)}</head>
<body>
${(meta.skipLinks ?? []).map(
  (l) => html`<a class="skip-link" href="${l.href}">${l.label}</a>
`,
)}<a class="skip-link" href="#main">Skip to content</a>
${header(site, meta.canonicalPath)}
<main id="main" class="wrap" tabindex="-1">
${main}
</main>
${footer(site)}
</body>
</html>
`.text;
}
