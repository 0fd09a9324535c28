// The account pages (issue 16): sign-in by e-mail, its confirmation, the dashboard and the page
// that shows a new key once. Every form carries its CSRF token as a hidden field; none of these
// pages is indexed, and the routes answer them with Cache-Control: no-store.
import type { KeySummary } from '../../../workers/protocol.ts';
import { fullDate } from '../format.ts';
import { html, type Html } from '../html.ts';
import { renderPage, type Site } from '../layout.ts';
import { attributionSnippet, codeBlock } from './home.ts';

function accountPage(site: Site, title: string, main: Html, script = false): string {
  return renderPage(site, { title: `${title} – ${site.name}`, description: title, canonicalPath: null, noindex: true, script }, main);
}

const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** A form of one button: sign out, revoke. */
function buttonForm(action: string, csrf: string, label: string, fields: Html | string = '', secondary = false): Html {
  return html`<form method="post" action="${action}">
${csrfField(csrf)}${fields}
<button type="submit"${secondary ? html` class="secondary"` : ''}>${label}</button>
</form>`;
}

export function signInPage(site: Site, input: { readonly csrf: string; readonly email?: string; readonly error?: string }): string {
  const invalid = input.error !== undefined;
  return accountPage(
    site,
    'Sign in',
    html`<h1>Sign in or create an account</h1>
<p>We’ll e-mail you a link that signs you in. The first sign-in creates your account and an organization on the Community plan.</p>
<form method="post" action="/account/sign-in" novalidate>
${csrfField(input.csrf)}
<div class="field${invalid ? ' field-invalid' : ''}">
<label for="email">E-mail address</label>
${invalid ? html`<p class="field-error" id="email-error"><span class="visually-hidden">Error: </span>${input.error}</p>\n` : ''}<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${input.email ?? ''}"${invalid ? html` aria-invalid="true" aria-describedby="email-error"` : ''}>
</div>
<button type="submit">Send me a sign-in link</button>
</form>`,
  );
}

export function sentPage(site: Site): string {
  return accountPage(
    site,
    'Check your mail',
    html`<h1>Check your mail</h1>
<p>If that address can receive mail, a sign-in link is on its way. It works once, for 15 minutes, in this browser.</p>
<p>Nothing arrived? Check your spam folder, or <a href="/account/sign-in">ask for another link</a>.</p>`,
  );
}

export function confirmPage(site: Site, input: { readonly token: string; readonly csrf: string }): string {
  return accountPage(
    site,
    'Continue signing in',
    html`<h1>Continue signing in</h1>
<p>Press the button to finish signing in to ${site.name}.</p>
<form method="post" action="/account/confirm">
${csrfField(input.csrf)}
<input type="hidden" name="token" value="${input.token}">
<button type="submit">Continue signing in</button>
</form>`,
  );
}

export function confirmFailedPage(site: Site): string {
  return accountPage(
    site,
    'This sign-in link does not work',
    html`<h1>This sign-in link does not work</h1>
<p>It may have expired (links last 15 minutes), been used already, or been opened in another browser than the one that asked for it.</p>
<p><a class="button" href="/account/sign-in">Send me a new link</a></p>`,
  );
}

export function forbiddenPage(site: Site): string {
  return accountPage(
    site,
    'Request refused',
    html`<h1>We refused this request</h1>
<p>It did not come from a page of this website, or the page was too old. Go back, reload the page and try again.</p>
<p><a href="/account">Go to your account</a></p>`,
  );
}

export function tooManyPage(site: Site): string {
  return accountPage(
    site,
    'Too many requests',
    html`<h1>Too many sign-in requests</h1>
<p>Please wait a minute before asking for another link.</p>`,
  );
}

export function formErrorPage(site: Site): string {
  return accountPage(site, 'Form not understood', html`<h1>We could not read this form</h1>
<p>Go back, reload the page and try again.</p>`);
}

export interface DashboardInput {
  readonly csrf: string;
  readonly email: string | null;
  readonly org: { readonly name: string; readonly plan: string };
  /** Null: the ledger could not say right now. */
  readonly usage: { readonly used: number; readonly limit: number | null; readonly remaining: number | null; readonly resetsAt: string | null } | null;
  readonly keys: readonly KeySummary[];
}

const keyState = (k: KeySummary): string => (k.revoked_at !== null ? 'Revoked' : k.revoke_at !== null ? `Revoked from ${fullDate(k.revoke_at)}` : 'Active');

function keysSection(input: DashboardInput): Html {
  const rows = input.keys.map(
    (k) => html`<tr>
<td><code>${k.hint}</code></td>
<td>${fullDate(k.created_at)}</td>
<td>${k.last_used ?? 'Never'}</td>
<td>${keyState(k)}</td>
<td>${k.revoked_at === null ? buttonForm('/account/keys/revoke', input.csrf, 'Revoke', html`<input type="hidden" name="key_id" value="${k.id}">`, true) : ''}</td>
</tr>`,
  );
  return html`<section aria-labelledby="keys-h">
<h2 id="keys-h">API keys</h2>
${rows.length === 0
    ? html`<p>You have no keys yet.</p>`
    : html`<table class="keys">
<thead><tr><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody>
</table>`}
${buttonForm('/account/keys', input.csrf, 'Create a key')}
</section>`;
}

const count = (n: number | null): string => (n === null ? 'unlimited' : n.toLocaleString('en-US'));

function usageSection(input: DashboardInput): Html {
  const u = input.usage;
  const body =
    u === null
      ? html`<p>Usage is not available right now; reload in a moment.</p>`
      : html`<dl class="usage">
<dt>Records used</dt><dd data-usage="used">${count(u.used)}</dd>
<dt>Monthly limit</dt><dd>${count(u.limit)}</dd>
<dt>Remaining</dt><dd>${count(u.remaining)}</dd>
${u.resetsAt === null ? '' : html`<dt>Resets</dt><dd><time datetime="${u.resetsAt}">${fullDate(u.resetsAt)}</time> (Pacific time)</dd>\n`}</dl>`;
  return html`<section aria-labelledby="usage-h">
<h2 id="usage-h">This month</h2>
${body}
</section>`;
}

export function dashboardPage(site: Site, input: DashboardInput): string {
  return accountPage(
    site,
    'Your account',
    html`<h1>Your account</h1>
<p>Signed in${input.email === null ? '' : html` as <strong>${input.email}</strong>`}. Organization <strong>${input.org.name}</strong>, on the <strong>${input.org.plan}</strong> plan.</p>
${usageSection(input)}
${keysSection(input)}
<section aria-labelledby="attr-h">
<h2 id="attr-h">Attribution</h2>
<p>Show this link wherever you display our events:</p>
${codeBlock(attributionSnippet(site), 'Attribution HTML')}
</section>
<section aria-labelledby="out-h">
<h2 id="out-h">Sign out</h2>
<div class="actions">
${buttonForm('/account/sign-out', input.csrf, 'Sign out', '', true)}
${buttonForm('/account/sign-out-everywhere', input.csrf, 'Sign out everywhere', '', true)}
</div>
</section>`,
    true,
  );
}

export function newKeyPage(site: Site, input: { readonly key: string }): string {
  return accountPage(
    site,
    'Your new API key',
    html`<h1>Your new API key</h1>
<p class="notice" role="alert"><strong>Copy it now.</strong> This is the only time we show the whole key; afterwards you’ll see only its last characters. Keep it secret, like a password.</p>
${codeBlock(input.key, 'API key')}
<p><a class="button" href="/account">Back to your account</a></p>`,
    true,
  );
}
