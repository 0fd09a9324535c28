// The account pages (issue 16): sign-in by e-mail, its confirmation, the dashboard and the page
// that shows a new key once. Every form carries its CSRF token as a hidden field; none of these
// pages is indexed, and the routes answer them with Cache-Control: no-store.
import { fullDate, whenText } from '../format.ts';
import { html, type Html } from '../html.ts';
import { renderPage, type Site } from '../layout.ts';
import { attributionSnippet, codeBlock } from './home.ts';
import { usageChart } from './usage-chart.ts';
import { ORG_NAME_MAX_CHARS } from '../../../ledger/org-name.ts';
import type { KeySummary, Member, OrgOfUser, PendingInvite, UsageBody } from '../../../ledger/accounts.ts';

function accountPage(site: Site, title: string, main: Html, script = false): string {
  return renderPage(site, { title: `${title} – ${site.name}`, description: title, canonicalPath: null, noindex: true, script }, main);
}

const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** A form of one button: sign out, revoke. */
function buttonForm(action: string, csrf: string, label: Html | string, fields: Html | string = '', secondary = false): Html {
  return html`<form method="post" action="${action}">
${csrfField(csrf)}${fields}
<button type="submit"${secondary ? html` class="secondary"` : ''}>${label}</button>
</form>`;
}

export interface SignInInput {
  readonly csrf: string;
  readonly email?: string;
  readonly error?: string;
  /** The identity provider's name for its button; null: none is configured. */
  readonly provider: string | null;
}

export function signInPage(site: Site, input: SignInInput): string {
  const invalid = input.error !== undefined;
  const provider =
    input.provider === null
      ? ''
      : html`<form method="post" action="/account/oidc/start" class="provider">
${csrfField(input.csrf)}
<button type="submit">Sign in with ${input.provider}</button>
</form>
<p class="or">or get a link by e-mail:</p>
`;
  return accountPage(
    site,
    'Sign in',
    html`<h1>Sign in or create an account</h1>
<p>The first sign-in creates your account and an organization on the Community plan${input.provider === null ? html`; we’ll e-mail you a link that signs you in` : ''}.</p>
${provider}<form method="post" action="/account/sign-in" novalidate>
${csrfField(input.csrf)}
<div class="field${invalid ? ' field-invalid' : ''}">
<label for="email">E-mail address</label>
${invalid ? html`<p class="field-error" id="email-error"><span class="visually-hidden">Error: </span>${input.error}</p>\n` : ''}<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${input.email ?? ''}"${invalid ? html` aria-invalid="true" aria-describedby="email-error"` : ''}>
</div>
<button type="submit">Send me a sign-in link</button>
</form>`,
  );
}

export interface SentInput {
  readonly csrf: string;
  /** What to change in the code typed, when it did not sign in. */
  readonly error?: string;
  /** The code as typed (shown again after an error, so one typo is fixed, not the whole code). */
  readonly code?: string;
}

/**
 * "Check your mail", where the sign-in began: the link signs this browser in, and so does the code
 * from the same mail typed here (the mail read on another device). The form is bound to this
 * browser's pre-session, as the link is.
 */
export function sentPage(site: Site, input: SentInput): string {
  const invalid = input.error !== undefined;
  return accountPage(
    site,
    'Check your mail',
    html`<h1>Check your mail</h1>
<p>If that address can receive mail, a sign-in link and a code are on their way. They work once, for 15 minutes, in this browser.</p>
<form method="post" action="/account/sign-in/code" class="sign-in-code-form" novalidate>
${csrfField(input.csrf)}
<div class="field${invalid ? ' field-invalid' : ''}">
<label for="code">Reading the mail on another device? Type its code here</label>
<p class="hint" id="code-hint">8 letters and digits, like K7QM-3XPD.</p>
${invalid ? html`<p class="field-error" id="code-error"><span class="visually-hidden">Error: </span>${input.error}</p>\n` : ''}<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="20" required value="${input.code ?? ''}" aria-describedby="${invalid ? 'code-hint code-error' : 'code-hint'}"${invalid ? html` aria-invalid="true"` : ''}>
</div>
<button type="submit">Sign in with the code</button>
</form>
<p>Nothing arrived? Check your spam folder, or <a href="/account/sign-in">ask for another link</a>.</p>`,
  );
}

/**
 * A sign-in link opened in a browser other than the one that asked (the mail read on a phone):
 * it does not sign this browser in, which is what keeps a link seen by someone else harmless. The
 * way forward is the code, typed where the sign-in began, or a new sign-in here. The code is shown:
 * it is the mail's own, and only whoever has the link (so the mail) reaches this page.
 */
export function otherBrowserPage(site: Site, input: { readonly code: string }): string {
  return accountPage(
    site,
    'Finish signing in where you asked',
    html`<h1>Finish signing in where you asked</h1>
<p>This link was opened in a different browser than the one that asked for it, so it does not sign you in here. That keeps a link that reaches someone else from signing them in.</p>
<h2>On the device where you asked</h2>
<p>Type this code on its “Check your mail” page (it is in the mail, too):</p>
<p class="sign-in-code"><code>${input.code}</code></p>
<p>It works once, within 15 minutes of asking.</p>
<h2>Or sign in on this device</h2>
<p><a class="button secondary" href="/account/sign-in">Start a new sign-in here</a></p>`,
  );
}

export function confirmPage(site: Site, input: { readonly token: string; readonly csrf: string; readonly email: string }): string {
  return accountPage(
    site,
    'Continue signing in',
    html`<h1>Continue signing in</h1>
<p class="signing-in-as">Sign in to ${site.name} as <strong>${input.email}</strong>? If that is not your address, close this page: someone else asked for this link.</p>
<form method="post" action="/account/confirm">
${csrfField(input.csrf)}
<input type="hidden" name="token" value="${input.token}">
<button type="submit">Continue signing in</button>
</form>`,
  );
}

/** An invitation as its page shows it: every name in it was chosen by a user, and the template escapes it. */
export interface InvitationInput {
  readonly token: string;
  readonly csrf: string;
  /** The invited address. */
  readonly email: string;
  readonly orgName: string;
  /** The inviter's address; null when the ledger knows none. */
  readonly inviter: string | null;
}

const invitedLine = (input: Pick<InvitationInput, 'email' | 'orgName' | 'inviter'>): Html =>
  html`<strong>${input.inviter ?? 'A member'}</strong> invited <strong>${input.email}</strong> to join <strong>${input.orgName}</strong>`;

export function invitePage(site: Site, input: InvitationInput): string {
  return accountPage(
    site,
    'Accept your invitation',
    html`<h1>Accept your invitation</h1>
<p class="invitation">${invitedLine(input)} on ${site.name}.</p>
<p>Accepting signs you in as ${input.email} and shows you the organization’s keys and usage.</p>
<form method="post" action="/account/invite">
${csrfField(input.csrf)}
<input type="hidden" name="token" value="${input.token}">
<button type="submit">Accept the invitation</button>
</form>`,
  );
}

/**
 * The question before an invitation switches a browser signed in as someone else: both accounts
 * named, and only its "continue" (a form with its own token) spends the invitation.
 */
export function switchAccountPage(site: Site, input: InvitationInput & { readonly confirm: string; readonly signedInAs: string | null }): string {
  const current = input.signedInAs === null ? html`with another account` : html`as <strong>${input.signedInAs}</strong>`;
  return accountPage(
    site,
    'Switch accounts?',
    html`<h1>Switch accounts?</h1>
<p>You are signed in ${current}. This invitation is for <strong>${input.email}</strong> to join <strong>${input.orgName}</strong> (${invitedLine(input)}).</p>
<div class="actions">
<form method="post" action="/account/invite">
${csrfField(input.csrf)}
<input type="hidden" name="token" value="${input.token}">
<input type="hidden" name="confirm" value="${input.confirm}">
<button type="submit">Continue as ${input.email} (signs you out ${input.signedInAs === null ? 'of that account' : html`of ${input.signedInAs}`})</button>
</form>
<a class="button secondary" href="/account">Cancel</a>
</div>`,
  );
}

/** A link posted to (or opened at) the page of the other kind: it was not spent, and still works where it belongs. */
export function wrongLinkPage(site: Site, page: 'sign_in' | 'invite'): string {
  const here = page === 'sign_in' ? 'sign-in' : 'invitation';
  return accountPage(
    site,
    'This link is not for this page',
    html`<h1>This link is not for this page</h1>
<p>This is the ${here} page, and the link is not a ${here} link. Nothing was used up: open the link exactly as it appears in its mail.</p>
<p><a class="button" href="/account/sign-in">Go to sign-in</a></p>`,
  );
}

export function inviteFailedPage(site: Site): string {
  return accountPage(
    site,
    'This invitation does not work',
    html`<h1>This invitation does not work</h1>
<p>It may have expired (invitations last 7 days) or been accepted already. Ask whoever invited you to send a new one, or <a href="/account/sign-in">sign in</a>.</p>`,
  );
}

/** Why a sign-in with the identity provider did not finish, in the words its user needs. */
export type ProviderFailure = 'cancelled' | 'expired' | 'failed' | 'unreachable';

export function providerFailedPage(site: Site, why: ProviderFailure): string {
  const says: Record<ProviderFailure, string> = {
    cancelled: 'The sign-in was cancelled at the identity provider, so you are not signed in.',
    expired: 'This sign-in took too long or was started in another browser or tab. Please start again.',
    failed: 'The identity provider’s answer could not be verified, so you are not signed in. Please try again.',
    unreachable: 'The identity provider cannot be reached right now. Please try again in a moment, or get a sign-in link by e-mail.',
  };
  return accountPage(
    site,
    'Sign-in did not finish',
    html`<h1>Sign-in did not finish</h1>
<p>${says[why]}</p>
<p><a class="button" href="/account/sign-in">Back to sign-in</a></p>`,
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
  return accountPage(
    site,
    'Form not understood',
    html`<h1>We could not read this form</h1>
<p>Go back, reload the page and try again.</p>`,
  );
}

/** How long a rolled key keeps working, as the roll form offers it: seconds → words. */
export const ROLL_GRACES: readonly (readonly [string, string])[] = [
  ['0', 'Stop the old key now'],
  ['3600', 'Old key works 1 more hour'],
  ['86400', 'Old key works 1 more day'],
  ['604800', 'Old key works 7 more days'],
];

/** A notice the dashboard shows after a redirect (the `notice` query parameter). */
export type DashboardNotice = 'invited' | 'revoked' | 'joined' | 'renamed' | 'invite_cancelled' | 'removed';

export interface DashboardInput {
  readonly csrf: string;
  readonly email: string | null;
  readonly org: OrgOfUser;
  /** Every organization the user belongs to; a switcher appears when there are several. */
  readonly orgs: readonly OrgOfUser[];
  /** Null: the ledger could not say right now. */
  readonly usage: UsageBody | null;
  readonly keys: readonly KeySummary[];
  readonly members: readonly Member[];
  /** The signed-in user: their own row of the members table. */
  readonly userId: string;
  /** Invitations sent and still waiting. */
  readonly invites: readonly PendingInvite[];
  readonly notice: DashboardNotice | null;
  /** The invitation form as sent back with an error at its field. */
  readonly invite?: { readonly email: string; readonly error: string };
  /** The rename form as sent back with an error at its field. */
  readonly rename?: { readonly name: string; readonly error: string };
  /** The wall clock: a scheduled revocation that has come reads "Revoked". */
  readonly nowMs: number;
  /** A new one-time token for each form that makes a key (server/web/account/key-forms.ts). */
  readonly formToken: () => string;
}

/** A Pacific day (YYYY-MM-DD) as an instant inside it: its noon is within the day under either offset. */
const middayOf = (day: string): string => `${day}T12:00:00-08:00`;

const orgField = (org: OrgOfUser): Html => html`<input type="hidden" name="org" value="${org.id}">`;
const onceField = (input: DashboardInput): Html => html`<input type="hidden" name="once" value="${input.formToken()}">`;

/** Where a key stands at `nowMs`: revoked, past a roll's grace, rolling (still working), or active. */
function keyPhase(k: KeySummary, nowMs: number): 'revoked' | 'rolled' | 'rolling' | 'active' {
  if (k.revoked_at !== null) return 'revoked';
  if (k.revoke_at === null) return 'active';
  return Date.parse(k.revoke_at) <= nowMs ? 'rolled' : 'rolling';
}

function keyState(k: KeySummary, nowMs: number): Html | string {
  switch (keyPhase(k, nowMs)) {
    case 'revoked':
      return 'Revoked';
    case 'rolled':
      return 'Revoked (rolled)';
    case 'active':
      return 'Active';
    case 'rolling':
      return html`Rolled: works until <time datetime="${k.revoke_at}">${whenText(k.revoke_at ?? '', null, nowMs)}</time>`;
  }
}

function rollForm(input: DashboardInput, k: KeySummary): Html {
  const id = `grace-${k.id}`;
  const options = ROLL_GRACES.map(([value, label]) => html`<option value="${value}"${value === '86400' ? ' selected' : ''}>${label}</option>`);
  return html`<form method="post" action="/account/keys/roll" class="roll">
${csrfField(input.csrf)}${orgField(input.org)}${onceField(input)}<input type="hidden" name="key_id" value="${k.id}">
<label for="${id}" class="visually-hidden">When the old key ${k.hint} stops</label>
<select id="${id}" name="grace">${options}</select>
<button type="submit" class="secondary">Roll<span class="visually-hidden"> key ${k.hint}</span></button>
</form>`;
}

/**
 * Revoke asks first: the button opens a dialog naming the key (a declarative popover, no script),
 * and only its form revokes. A browser without popovers shows the dialog in place instead.
 */
function revokeStep(input: DashboardInput, k: KeySummary): Html {
  const id = `revoke-${k.id}`;
  return html`<button type="button" class="secondary" popovertarget="${id}">Revoke<span class="visually-hidden"> key ${k.hint}</span></button>
<div id="${id}" popover class="confirm" role="dialog" aria-labelledby="${id}-h">
<h3 id="${id}-h">Revoke key <code class="key-hint">${k.hint}</code>?</h3>
<p>The API refuses it at once, wherever it is used. This cannot be undone; to replace a key without downtime, roll it instead.</p>
<form method="post" action="/account/keys/revoke">
${csrfField(input.csrf)}${orgField(input.org)}<input type="hidden" name="key_id" value="${k.id}">
<button type="submit" class="danger">Revoke</button>
<button type="button" class="secondary" popovertarget="${id}" popovertargetaction="hide">Cancel</button>
</form>
</div>`;
}

function keysSection(input: DashboardInput): Html {
  const rows = input.keys.map((k) => {
    const phase = keyPhase(k, input.nowMs);
    // A working key can be revoked; only one not already rolling can be rolled.
    const actions =
      phase === 'active' || phase === 'rolling'
        ? html`<div class="key-actions">${phase === 'active' ? rollForm(input, k) : ''}${revokeStep(input, k)}</div>`
        : '';
    // On a narrow screen each row is a card: data-label names the cell its header named.
    return html`<tr>
<td data-label="Key"><code class="key-hint">${k.hint}</code></td>
<td data-label="Created">${fullDate(k.created_at)}</td>
<td data-label="Last used">${k.last_used === null ? 'Never' : fullDate(middayOf(k.last_used))}</td>
<td data-label="State">${keyState(k, input.nowMs)}</td>
<td class="key-actions-cell">${actions}</td>
</tr>`;
  });
  return html`<section aria-labelledby="keys-h" id="keys">
<h2 id="keys-h">API keys</h2>
${
  rows.length === 0
    ? html`<p>You have no keys yet. A key lets your app call the API; create one to start.</p>`
    : html`<table class="keys cards">
<thead><tr><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}
${buttonForm('/account/keys', input.csrf, 'Create a key', html`${orgField(input.org)}${onceField(input)}`)}
${rows.length === 0 ? '' : html`<p class="hint">Rolling makes a new key and stops the old one after the time you pick, so your deployments can switch without downtime.</p>`}
</section>`;
}

const count = (n: number | null): string => (n === null ? 'unlimited' : n.toLocaleString('en-US'));

function usageSection(input: DashboardInput): Html {
  const u = input.usage;
  // A month with nothing in it says so, and what to do, instead of a chart and a table of zeros.
  const unused = u !== null && u.records.used === 0 && u.requests.count === 0;
  const empty =
    input.keys.length === 0
      ? html`<div class="empty-state">
<p><strong>No usage yet.</strong> Your requests and the records they return show here, day by day.</p>
<p><a class="button" href="#keys">Create a key</a> <a href="/docs">Read the API docs</a></p>
</div>`
      : html`<div class="empty-state">
<p><strong>No usage yet</strong> this month. Make a request with one of your keys and it shows here, day by day.</p>
<p><a href="/docs">Read the API docs</a></p>
</div>`;
  const body =
    u === null
      ? html`<p>Usage is not available right now; reload in a moment.</p>`
      : html`<dl class="usage">
<div><dt>Records used</dt><dd data-usage="used">${count(u.records.used)}</dd></div>
<div><dt>Monthly limit</dt><dd data-usage="limit">${count(u.records.limit)}</dd></div>
<div><dt>Remaining</dt><dd data-usage="remaining">${count(u.records.remaining)}</dd></div>
<div><dt>Requests</dt><dd data-usage="requests">${count(u.requests.count)}</dd></div>
<div><dt>Resets (Pacific time)</dt><dd><time datetime="${u.period.resets_at}">${whenText(u.period.resets_at, null)}</time></dd></div>
</dl>
${
  unused
    ? empty
    : usageChart({
        days: u.by_day,
        periodStart: u.period.start.slice(0, 10),
        periodEnd: u.period.end.slice(0, 10),
        limit: u.records.limit,
        ...(u.by_day.length ? { through: u.by_day[u.by_day.length - 1]!.date } : {}),
      })
}`;
  return html`<section aria-labelledby="usage-h" id="usage">
<h2 id="usage-h">This month</h2>
${body}
</section>`;
}

/** Owners there are: the last one can be neither removed nor leave. */
const ownerCount = (input: DashboardInput): number => input.members.filter((m) => m.role === 'owner').length;

/**
 * Remove asks first, as Revoke does: a declarative popover naming the member and the
 * organization, whose form alone removes. Without popover support the dialog shows in place.
 */
function removeStep(input: DashboardInput, m: Member): Html {
  const id = `remove-${m.user_id}`;
  const self = m.user_id === input.userId;
  const who = m.email ?? 'this member';
  return html`<button type="button" class="secondary" popovertarget="${id}">${self ? 'Leave' : 'Remove'}<span class="visually-hidden"> ${who}</span></button>
<div id="${id}" popover class="confirm" role="dialog" aria-labelledby="${id}-h">
<h3 id="${id}-h">${self ? html`Leave ${input.org.name}?` : html`Remove ${who} from ${input.org.name}?`}</h3>
<p>${self ? 'You lose access to its keys and usage at once.' : 'They lose access to its keys and usage at once.'} Keys made by ${self ? 'you' : 'them'} keep working until revoked. To come back, ${self ? 'you need' : 'they need'} a new invitation.</p>
<form method="post" action="/account/members/remove#members">
${csrfField(input.csrf)}${orgField(input.org)}<input type="hidden" name="member" value="${m.user_id}">
<button type="submit" class="danger">${self ? 'Leave' : 'Remove'}</button>
<button type="button" class="secondary" popovertarget="${id}" popovertargetaction="hide">Cancel</button>
</form>
</div>`;
}

function invitesTable(input: DashboardInput): Html | string {
  if (input.invites.length === 0) return '';
  const owner = input.org.role === 'owner';
  const rows = input.invites.map(
    (i) => html`<tr>
<td data-label="E-mail">${i.email}</td>
<td data-label="Invited"><time datetime="${i.created_at}">${fullDate(i.created_at)}</time></td>
<td data-label="By">${i.invited_by ?? html`<em>unknown</em>`}</td>
<td data-label="Expires"><time datetime="${i.expires_at}">${fullDate(i.expires_at)}</time></td>
${
  owner
    ? html`<td class="row-actions"><form method="post" action="/account/invitations/cancel#members">
${csrfField(input.csrf)}${orgField(input.org)}<input type="hidden" name="invite" value="${i.id}">
<button type="submit" class="secondary">Cancel<span class="visually-hidden"> the invitation to ${i.email}</span></button>
</form></td>`
    : ''
}
</tr>`,
  );
  return html`<h3 id="invites-h">Pending invitations</h3>
<table class="invites cards" aria-labelledby="invites-h">
<thead><tr><th scope="col">E-mail</th><th scope="col">Invited</th><th scope="col">By</th><th scope="col">Expires</th>${owner ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

function membersSection(input: DashboardInput): Html {
  const owner = input.org.role === 'owner';
  const owners = ownerCount(input);
  const rows = input.members.map((m) => {
    // Never the last owner: the organization would have nobody to manage it.
    const removable = owner && (m.role !== 'owner' || owners > 1);
    return html`<tr>
<td data-label="E-mail">${m.email ?? html`<em>no e-mail (identity provider)</em>`}${m.user_id === input.userId ? html` <span class="you">(you)</span>` : ''}</td>
<td data-label="Role">${m.role === 'owner' ? 'Owner' : 'Member'}</td>
<td data-label="Since">${fullDate(m.created_at)}</td>
${owner ? html`<td class="row-actions">${removable ? removeStep(input, m) : ''}</td>` : ''}
</tr>`;
  });
  const invalid = input.invite !== undefined;
  const inviteForm = !owner
    ? html`<p>The organization’s owner can invite more people.</p>`
    : html`<form method="post" action="/account/members/invite#invite" id="invite" class="anchored" novalidate>
${csrfField(input.csrf)}${orgField(input.org)}
<div class="field${invalid ? ' field-invalid' : ''}">
<label for="invite-email">Invite someone by e-mail</label>
${invalid ? html`<p class="field-error" id="invite-email-error"><span class="visually-hidden">Error: </span>${input.invite?.error}</p>\n` : ''}<input id="invite-email" name="email" type="email" autocomplete="off" required maxlength="254" value="${input.invite?.email ?? ''}"${invalid ? html` aria-invalid="true" aria-describedby="invite-email-error"` : ''}>
</div>
<button type="submit">Send the invitation</button>
</form>`;
  return html`<section aria-labelledby="members-h" id="members" class="anchored">
<h2 id="members-h">Members</h2>
${noticeAt(input, 'members')}<table class="members cards">
<thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Since</th>${owner ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
<tbody>${rows}</tbody>
</table>
${invitesTable(input)}
${inviteForm}
</section>`;
}

function organizationSection(input: DashboardInput): Html {
  const invalid = input.rename !== undefined;
  const body =
    input.org.role !== 'owner'
      ? html`<p>Its name is <strong>${input.org.name}</strong>. Only its owner can rename it.</p>`
      : html`<form method="post" action="/account/org/rename#organization" novalidate>
${csrfField(input.csrf)}${orgField(input.org)}
<div class="field${invalid ? ' field-invalid' : ''}">
<label for="org-name">Organization name</label>
<p class="hint" id="org-name-hint">Its members see it, and /v1/usage returns it. Up to ${ORG_NAME_MAX_CHARS} characters.</p>
${invalid ? html`<p class="field-error" id="org-name-error"><span class="visually-hidden">Error: </span>${input.rename?.error}</p>\n` : ''}<input id="org-name" name="name" type="text" autocomplete="organization" required maxlength="${String(ORG_NAME_MAX_CHARS)}" value="${input.rename?.name ?? input.org.name}" aria-describedby="${invalid ? 'org-name-error org-name-hint' : 'org-name-hint'}"${invalid ? html` aria-invalid="true"` : ''}>
</div>
<button type="submit">Rename</button>
</form>`;
  return html`<section aria-labelledby="org-h" id="organization" class="anchored">
<h2 id="org-h">Organization</h2>
${noticeAt(input, 'organization')}${body}
</section>`;
}

/** Where each notice shows: beside what it is about, which is where its redirect's fragment lands. */
const NOTICE_AT: Record<DashboardNotice, 'top' | 'members' | 'organization'> = {
  invited: 'members',
  revoked: 'top',
  joined: 'top',
  renamed: 'organization',
  invite_cancelled: 'members',
  removed: 'members',
};

function noticeAt(input: DashboardInput, place: 'top' | 'members' | 'organization'): Html | string {
  return input.notice === null || NOTICE_AT[input.notice] !== place ? '' : html`<p class="notice" role="status">${NOTICES[input.notice]}</p>\n`;
}

const NOTICES: Record<DashboardNotice, string> = {
  invited: 'Invitation sent. It works once, for 7 days.',
  revoked: 'The key is revoked: the API refuses it from now on.',
  joined: 'You joined the organization.',
  renamed: 'The organization is renamed.',
  invite_cancelled: 'The invitation is cancelled: its link no longer works.',
  removed: 'The member is removed: they no longer see this organization.',
};

function orgSwitcher(input: DashboardInput): Html | string {
  if (input.orgs.length < 2) return '';
  const options = input.orgs.map((o) => html`<option value="${o.id}"${o.id === input.org.id ? ' selected' : ''}>${o.name}</option>`);
  return html`<form method="get" action="/account" class="org-switcher">
<label for="org">Organization</label>
<select id="org" name="org">${options}</select>
<button type="submit" class="secondary">Show</button>
</form>`;
}

/**
 * The dashboard. A new account's first task is a key, so with none its keys come first and the
 * usage says there is none yet; once it has keys, what they did comes first, with the keys below.
 */
export function dashboardPage(site: Site, input: DashboardInput): string {
  const noKeys = input.keys.length === 0;
  return accountPage(
    site,
    'Your account',
    html`<h1>Your account</h1>
${noticeAt(input, 'top')}<p>Signed in${input.email === null ? '' : html` as <strong>${input.email}</strong>`}. Organization <strong>${input.org.name}</strong>, on the <strong>${input.org.plan}</strong> plan.</p>
${orgSwitcher(input)}
<nav aria-label="On this page" class="page-nav">
<ul>${noKeys ? html`<li><a href="#keys">API keys</a></li><li><a href="#usage">Usage</a></li>` : html`<li><a href="#usage">Usage</a></li><li><a href="#keys">API keys</a></li>`}<li><a href="#members">Members</a></li><li><a href="#organization">Organization</a></li></ul>
</nav>
${noKeys ? html`${keysSection(input)}\n${usageSection(input)}` : html`${usageSection(input)}\n${keysSection(input)}`}
${membersSection(input)}
${organizationSection(input)}
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

/** A signed-in account in no organization (removed from its last one): what it can still do. */
export function noOrganizationPage(site: Site, input: { readonly csrf: string; readonly email: string | null }): string {
  return accountPage(
    site,
    'Your account',
    html`<h1>Your account</h1>
<p>Signed in${input.email === null ? '' : html` as <strong>${input.email}</strong>`}. You are not a member of any organization any more, so there are no keys or usage to show.</p>
<p>To join one again, ask one of its owners for a new invitation.</p>
<div class="actions">
${buttonForm('/account/sign-out', input.csrf, 'Sign out', '', true)}
</div>`,
  );
}

/** A change to the organization that its rules refuse (the last owner stays). */
export function lastOwnerPage(site: Site, orgId: string): string {
  return accountPage(
    site,
    'The last owner stays',
    html`<h1>The organization’s last owner cannot be removed</h1>
<p>Nothing changed. An organization always keeps an owner, who manages its keys and members.</p>
<p><a class="button" href="/account?org=${orgId}#members">Back to your account</a></p>`,
  );
}

export interface NewKeyInput {
  readonly key: string;
  /** A roll: the key this one replaces, and when that one stops working. */
  readonly replaces?: { readonly hint: string; readonly revokeAt: string };
  readonly nowMs: number;
}

export function newKeyPage(site: Site, input: NewKeyInput): string {
  const r = input.replaces;
  const replaced =
    r === undefined
      ? ''
      : Date.parse(r.revokeAt) <= input.nowMs
        ? html`<p>It replaces <code>${r.hint}</code>, which the API refuses from now on.</p>\n`
        : html`<p>It replaces <code>${r.hint}</code>, which keeps working until <time datetime="${r.revokeAt}">${whenText(r.revokeAt, null, input.nowMs)}</time> (Pacific time): switch your deployments before then.</p>\n`;
  return accountPage(
    site,
    'Your new API key',
    html`<h1>Your new API key</h1>
<p class="notice" role="alert"><strong>Copy it now.</strong> This is the only time we show the whole key; afterwards you’ll see only its last characters. Keep it secret, like a password.</p>
${codeBlock(input.key, 'API key')}
${replaced}
<p><a class="button" href="/account">Back to your account</a></p>`,
    true,
  );
}

/** A form that makes a key, sent again (a reload, Back and resubmit): nothing new was made. */
export function keyAlreadyMadePage(site: Site, input: { readonly orgId: string; readonly hint: string | null; readonly roll: boolean }): string {
  const made =
    input.hint === null
      ? html`<p>This form was sent a moment ago and its key is being made; your dashboard lists it.</p>`
      : html`<p>This form was already sent: it made the key ending <code class="key-hint">${input.hint}</code>, which was shown once, on the page that answered it. We keep only its last characters, so it cannot be shown again.</p>`;
  return accountPage(
    site,
    input.roll ? 'Key already rolled' : 'Key already created',
    html`<h1>${input.roll ? 'This key was already rolled' : 'This key was already created'}</h1>
${made}
<p>No other key was made. If you did not copy the key, roll it or revoke it on your dashboard, where it is listed by its last characters.</p>
<p><a class="button" href="/account?org=${input.orgId}">Back to your account</a></p>`,
  );
}

/** A key form this server can no longer tell apart from one already sent (see key-forms.ts). */
export function staleKeyFormPage(site: Site, orgId: string): string {
  return accountPage(
    site,
    'Form expired',
    html`<h1>This form has expired</h1>
<p>No key was made. Open your dashboard again and use the form there.</p>
<p><a class="button" href="/account?org=${orgId}">Back to your account</a></p>`,
  );
}

/** "about 40 minutes", "about 3 hours": how long until a limit lets one more through. */
function waitWords(ms: number): string {
  const min = Math.max(1, Math.ceil(ms / 60_000));
  if (min < 90) return min === 1 ? 'about a minute' : `about ${min} minutes`;
  return `about ${Math.round(min / 60)} hours`;
}

/** A limit on invitations (ledger/rules.ts), as the invitation form's error says it. */
export type InviteLimit =
  | {
      readonly reason: 'invite_limited';
      readonly per: 'sender' | 'organization';
      readonly max: number;
      readonly windowMs: number;
      readonly retryAfterMs: number;
    }
  | { readonly reason: 'too_many_pending'; readonly max: number }
  | { readonly reason: 'limited'; readonly retryAfterMs: number };

export function inviteLimitMessage(limit: InviteLimit, orgName: string): string {
  switch (limit.reason) {
    case 'invite_limited': {
      const span = limit.windowMs <= 3_600_000 ? 'an hour' : 'a day';
      const who = limit.per === 'sender' ? 'You have sent' : `${orgName} has sent`;
      const may = limit.per === 'sender' ? 'one account may send' : 'one organization may send';
      return `${who} ${limit.max} invitations in the last ${limit.windowMs <= 3_600_000 ? 'hour' : '24 hours'}, the most ${may} in ${span}. You can send the next one in ${waitWords(limit.retryAfterMs)}.`;
    }
    case 'too_many_pending':
      return `${orgName} has ${limit.max} invitations waiting to be accepted, the most it may have. You can invite someone else once one of them is accepted, or expires (7 days after it was sent).`;
    case 'limited':
      return `This address was sent several mails in the last minutes. Try again in ${waitWords(limit.retryAfterMs)}.`;
  }
}

/** 409 when the organization has its limit of live keys: what counts, and what to do. */
export function keyLimitPage(site: Site, input: { readonly live: number; readonly max: number; readonly orgId: string; readonly roll: boolean }): string {
  return accountPage(
    site,
    'Too many keys',
    html`<h1>Your organization has ${input.max} working keys</h1>
<p>An organization may have at most ${input.max} keys that the API accepts (each key has its own request rate); it has ${input.live}. A rolled key counts until its grace period ends.</p>
<p>${input.roll ? html`To roll a key now, choose “Stop the old key now”, or revoke a key you no longer use first.` : html`Revoke a key you no longer use, then create the new one. To replace a key, roll it instead.`}</p>
<p><a class="button" href="/account?org=${input.orgId}">Back to your account</a></p>`,
  );
}
