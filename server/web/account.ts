// The account routes of the website (issue 16): sign-in by e-mail link or with the identity
// provider (OpenID Connect), the dashboard, keys (create, roll, revoke), members and invitations,
// and sign-out. Every state change is a POST from our own forms, checked for its origin and its
// CSRF token (bound to the pre-session cookie before sign-in, to the session once signed in).
//
// Two clocks, on purpose. Everything that expires for security (links, sessions, a rolled key's
// grace) runs on the wall clock, `wallNow`, as the accounts store and the API's key checks do: a
// pinned FAMILY_EVENTS_NOW must never keep a link alive. Usage runs on the configured clock,
// config.now(), exactly as /v1/usage does, so the dashboard and the API agree on the month.
import * as v from 'valibot';
import type { Config } from '../config.ts';
import type { Reply, Request } from '../http.ts';
import type { Logger } from '../log.ts';
import type { Meter, MeterFailure } from '../meter.ts';
import { RateLimiter } from '../ratelimit.ts';
import type { AccountRefusal, LoginPurpose, LoginTokenRefusal, MailLimit, OrgOfUser } from '../../workers/protocol.ts';
import { SECURITY_HEADERS, securityHeaders, type Site } from './layout.ts';
import type { Mailer } from './mail.ts';
import { OidcError, type OidcClient, type OidcTransaction } from './oidc.ts';
import {
  confirmFailedPage,
  confirmPage,
  dashboardPage,
  forbiddenPage,
  formErrorPage,
  inviteFailedPage,
  inviteLimitMessage,
  invitePage,
  keyLimitPage,
  newKeyPage,
  providerFailedPage,
  ROLL_GRACES,
  sentPage,
  signInPage,
  switchAccountPage,
  tooManyPage,
  wrongLinkPage,
  type DashboardInput,
  type DashboardNotice,
  type InviteLimit,
  type ProviderFailure,
} from './pages/account.ts';
import { unavailablePage } from './pages/errors.ts';
import { clearCookie, cookieNames, Csrf, formFields, PreSessions, readCookies, sameOrigin, setCookie, tokenHash } from './session.ts';

/** Where the identity provider sends the browser back: register `${WEB_BASE_URL}${OIDC_CALLBACK_PATH}` with it. */
export const OIDC_CALLBACK_PATH = '/account/oidc/callback';

/** The identity provider, when one is configured: its button's name and its client, discovered on first use. */
export interface Provider {
  readonly name: string;
  client(): Promise<OidcClient>;
  /** The origins its button's redirect leads to (the sign-in page's form-action). */
  formTargets(): readonly string[];
}

export interface AccountDeps {
  readonly config: Pick<Config, 'webBaseUrl' | 'now'>;
  readonly site: Site;
  readonly meter: Pick<Meter, 'accounts'>;
  readonly mailer: Pick<Mailer, 'send'>;
  /** Null: e-mail sign-in only. */
  readonly provider: Provider | null;
  /** The key of CSRF tokens and signed cookies, as the ledger has it now (Meter.webSecret). */
  readonly secret: () => Buffer;
  readonly log: Logger;
}

type Headers = (readonly [string, string])[];

const LOGIN_TTL_MS = 15 * 60_000;
const INVITE_TTL_MS = 7 * 24 * 3_600_000;
/** Long enough to sign in at the provider (a password manager, a second factor), short enough to be stale soon. */
const OIDC_TTL_S = 10 * 60;
const SESSION_ABSOLUTE_MS = 30 * 24 * 3_600_000;
const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
/** The pre-session cookie outlives a sign-in link comfortably; it is replaced at every sign-in. */
const PRE_MAX_AGE_S = 24 * 3600;
const SIGN_INS_PER_ADDRESS_PER_MINUTE = 10;
/** Links mailed to one address (sign-in and invitation alike), counted in the ledger: exact across nodes. */
const MAIL_LIMIT: MailLimit = { max: 3, windowMs: 10 * 60_000 };
/** An invitation mail quotes the inviter's address up to this long (an RFC 5321 local part is at most 64). */
const INVITER_MAX_CHARS = 100;

/** An invitation refused by one of the ledger's sending limits, as its message needs it; null for any other refusal. */
function inviteLimitOf(r: AccountRefusal): InviteLimit | null {
  if (r.reason === 'invite_limited') {
    const windowMs = r.windowMs ?? 24 * 3_600_000;
    return { reason: 'invite_limited', per: r.per ?? 'organization', max: r.max ?? 0, windowMs, retryAfterMs: r.retryAfterMs ?? windowMs };
  }
  if (r.reason === 'too_many_pending') return { reason: 'too_many_pending', max: r.max ?? 0 };
  // The mailbox's limit: its window is the most there is to wait.
  if (r.reason === 'limited') return { reason: 'limited', retryAfterMs: MAIL_LIMIT.windowMs };
  return null;
}

/** An e-mail address as a form gives it; `empty` is what to say when the field is left blank. */
const emailField = (empty: string) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.nonEmpty(empty),
    v.maxLength(254, 'An e-mail address is at most 254 characters.'),
    v.email('Enter an e-mail address like name@example.com.'),
  );
const emailSchema = emailField('Enter your e-mail address.');
const inviteSchema = emailField('Enter the e-mail address to invite.');
const graceSchema = v.picklist(ROLL_GRACES.map(([s]) => s));
const NOTICES: ReadonlySet<string> = new Set<DashboardNotice>(['invited', 'revoked', 'joined']);

/** What the OIDC cookie holds between the redirect to the provider and its callback (signed, not secret from its browser). */
const oidcCookieSchema = v.object({
  state: v.string(),
  nonce: v.string(),
  codeVerifier: v.string(),
  /** The pre-session it was started from: the callback must come back to the same browser. */
  pre: v.string(),
});

/** The wall clock of everything that expires for security (see the head of this file). */
const wallNow = (): number => Date.now();

const isFailure = (r: unknown): r is MeterFailure => typeof r === 'object' && r !== null && (r as { ok?: unknown }).ok === false && 'code' in r;

/** Thrown inside a route when the metering thread cannot answer: the page says "busy". */
class Unavailable extends Error {}

/** The result of an account call, or Unavailable when the thread could not run it. */
async function must<T>(p: Promise<T | MeterFailure>): Promise<T> {
  const r = await p;
  if (isFailure(r)) throw new Unavailable(r.detail);
  return r;
}

interface Live {
  readonly token: string;
  readonly userId: string;
  readonly sessionId: string;
}

export function createAccount(deps: AccountDeps): (req: Request) => Reply | Promise<Reply> | null {
  const { site, log, config } = deps;
  const accounts = deps.meter.accounts;
  const names = cookieNames(config.webBaseUrl);
  const csrf = new Csrf(deps.secret);
  const addressLimiter = new RateLimiter(SIGN_INS_PER_ADDRESS_PER_MINUTE);
  const pres = new PreSessions(csrf, names, PRE_MAX_AGE_S);
  const preBinding = (pre: string): string => `pre\0${pre}`;
  const sessionBinding = (s: Live): string => `session\0${s.sessionId}`;

  const page = (status: number, body: string, route: string, headers: Headers = [], security = SECURITY_HEADERS): Reply => ({
    status,
    headers: [['Content-Type', 'text/html; charset=utf-8'], ['Cache-Control', 'no-store'], ...security, ...headers],
    body,
    route,
  });
  const redirect = (to: string, route: string, headers: Headers = []): Reply => ({
    status: 303,
    headers: [['Location', to], ['Cache-Control', 'no-store'], ...headers],
    body: '',
    route,
  });
  const forbidden = (route: string): Reply => page(403, forbiddenPage(site), route);

  /** The browser's pre-session id when it is one this server gave it (over http: at this client address, see PreSessions). */
  const validPre = (req: Request): string | undefined => {
    const have = readCookies(req)[names.pre];
    return have !== undefined && pres.valid(have, req.remoteAddress, wallNow()) ? have : undefined;
  };
  const newPreCookie = (req: Request): { pre: string; header: readonly [string, string] } => {
    const pre = pres.issue(req.remoteAddress, wallNow());
    return { pre, header: ['Set-Cookie', setCookie(names, names.pre, pre, PRE_MAX_AGE_S)] };
  };

  /** The pre-session id, and the Set-Cookie that gives one to a browser that has none (or one planted, or stale). */
  const preOf = (req: Request): { pre: string; headers: Headers } => {
    const have = validPre(req);
    if (have !== undefined) return { pre: have, headers: [] };
    const { pre, header } = newPreCookie(req);
    return { pre, headers: [header] };
  };

  const liveSession = async (req: Request): Promise<Live | null> => {
    const token = readCookies(req)[names.session];
    if (!token) return null;
    const s = await must(accounts.touchSession(token, wallNow(), SESSION_IDLE_MS));
    return s === null ? null : { token, ...s };
  };

  /** A new session for `userId`: the cookies that carry it, with a fresh pre-session id (fixation). */
  const startSession = async (userId: string, req: Request): Promise<Headers | null> => {
    const session = await must(accounts.createSession(userId, SESSION_ABSOLUTE_MS));
    if (!session.ok) return null;
    return [
      ['Set-Cookie', setCookie(names, names.session, session.token, SESSION_ABSOLUTE_MS / 1000)],
      // Whatever was bound to the old pre-session id (a planted cookie, a pending link) is void.
      newPreCookie(req).header,
    ];
  };

  /** The form of a POST whose origin and CSRF token check out against `binding`, else null. */
  const checkedForm = (req: Request, binding: string | null): URLSearchParams | null => {
    if (!sameOrigin(req, config.webBaseUrl) || binding === null) return null;
    const form = formFields(req);
    if (form === null || !csrf.check(binding, form.get('csrf'))) return null;
    return form;
  };

  /**
   * A POST of a browser not (necessarily) signed in: its pre-session id and its form, whose origin
   * and CSRF token check out against that pre-session; else the answer refusing it.
   */
  const prePost = (req: Request, route: string): { pre: string; form: URLSearchParams } | Reply => {
    // A planted (or stale) pre-session id is no pre-session: its form is refused, and reloading gives a real one.
    const pre = validPre(req);
    const form = checkedForm(req, pre === undefined ? null : preBinding(pre));
    return form === null || pre === undefined ? forbidden(route) : { pre, form };
  };

  const providerName = deps.provider?.name ?? null;
  /** The sign-in page's headers: its provider button leads off our origin. */
  const signInSecurity = (): ReturnType<typeof securityHeaders> => (deps.provider === null ? SECURITY_HEADERS : securityHeaders(deps.provider.formTargets()));

  const signInForm = (req: Request): Reply => {
    const { pre, headers } = preOf(req);
    return page(200, signInPage(site, { csrf: csrf.token(preBinding(pre)), provider: providerName }), 'web:/account/sign-in', headers, signInSecurity());
  };

  /** Issues a sign-in link bound to the asking browser and mails it. */
  const mailLink = async (email: string, bindingHash: string): Promise<void> => {
    const issued = await must(accounts.issueLoginToken(email, 'sign_in', null, bindingHash, LOGIN_TTL_MS, Date.now(), MAIL_LIMIT));
    // Past the address's mail limit: nothing is sent, and the answer (already gone) said the same.
    if (!issued.ok) return;
    const link = `${config.webBaseUrl}/account/confirm?token=${encodeURIComponent(issued.token)}`;
    await deps.mailer.send({
      to: email,
      subject: `Your sign-in link – ${site.name}`,
      text: `Open this link to sign in to ${site.name}:\n\n${link}\n\nIt works once, for 15 minutes, in the browser that asked for it. If you did not ask for it, ignore this mail.\n`,
      kind: 'sign_in',
    });
  };

  const sendLink = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/sign-in';
    const posted = prePost(req, route);
    if ('status' in posted) return posted;
    const { pre, form } = posted;
    if (!addressLimiter.take(req.remoteAddress).allowed) return page(429, tooManyPage(site), route, [['Retry-After', '60']]);
    const parsed = v.safeParse(emailSchema, form.get('email') ?? '');
    if (!parsed.success) {
      const error = parsed.issues[0].message;
      return page(400, signInPage(site, { csrf: csrf.token(preBinding(pre)), email: (form.get('email') ?? '').slice(0, 254), error, provider: providerName }), route, [], signInSecurity());
    }
    const email = parsed.output;
    // The answer leaves before anything that depends on the address happens: whether a link is
    // issued (the address's mail limit, counted in the ledger), the token's committed write and
    // the mail all come after it, so neither its bytes nor its timing tell one address from
    // another. setImmediate, not a direct call: the message to the metering thread would otherwise
    // go out before the answer, and its commit would compete with the answer for a busy CPU.
    setImmediate(() => {
      void mailLink(email, tokenHash(pre)).catch((err: unknown) => log.warn({ mail: 'sign_in', err: (err as Error).message }, 'sign-in mail failed'));
    });
    return redirect('/account/sign-in/sent', route);
  };

  /** A link that does not work here, said for its page: another kind of link, or used, expired, another browser's. */
  const linkFailed = (purpose: LoginPurpose, why: LoginTokenRefusal, route: string, headers: Headers = []): Reply => {
    if (why.reason === 'purpose') return page(400, wrongLinkPage(site, purpose), route, headers);
    return page(400, purpose === 'sign_in' ? confirmFailedPage(site) : inviteFailedPage(site), route, headers);
  };

  /** The token a link's page or form carries (a real one is 43 characters). */
  const tokenIn = (value: string | null): string => (value ?? '').slice(0, 200);

  /**
   * The page a mailed link opens: whom the link is for (an invitation: who invited them, to what),
   * and a form whose POST spends it. The look spends nothing, so a mail scanner's GET does not
   * either; a link of the other kind, used, expired, or a sign-in link of another browser gets the
   * page saying so at once. The form's CSRF token is bound to the pre-session.
   */
  const linkForm =
    (purpose: LoginPurpose, route: string) =>
    async (req: Request): Promise<Reply> => {
      const token = tokenIn(new URLSearchParams(req.rawQuery).get('token'));
      const { pre, headers } = preOf(req);
      const seen = await must(accounts.peekLoginToken(token, purpose, tokenHash(pre), wallNow()));
      if (!seen.ok) return linkFailed(purpose, seen, route, headers);
      const input = { token, csrf: csrf.token(preBinding(pre)), email: seen.email };
      const body =
        purpose === 'sign_in' ? confirmPage(site, input) : invitePage(site, { ...input, inviter: seen.inviter, orgName: seen.orgName ?? 'an organization' });
      return page(200, body, route, headers);
    };

  const confirm = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/confirm';
    const posted = prePost(req, route);
    if ('status' in posted) return posted;
    // Spent only as a sign-in link: an invitation posted here stays unspent for its own page.
    const spent = await must(accounts.spendLoginToken(tokenIn(posted.form.get('token')), 'sign_in', tokenHash(posted.pre), wallNow()));
    if (!spent.ok) return linkFailed('sign_in', spent, route);
    const signedIn = await must(accounts.signInByEmail(spent.email));
    const cookies = await startSession(signedIn.user.id, req);
    if (cookies === null) return page(400, confirmFailedPage(site), route);
    log.info({ user: signedIn.user.id, created: signedIn.created }, 'signed in by e-mail');
    return redirect('/account', route, cookies);
  };

  /** The organization a request names (`org`) among the user's, else their first; null when they have none. */
  const orgOf = async (userId: string, wanted: string | null): Promise<{ org: OrgOfUser; orgs: readonly OrgOfUser[] } | null> => {
    const orgs = await must(accounts.organizationsOf(userId));
    const org = orgs.find((o) => o.id === wanted) ?? orgs[0];
    return org === undefined ? null : { org, orgs };
  };

  const dashboardReply = async (s: Live, wanted: string | null, notice: DashboardNotice | null, invite?: DashboardInput['invite'], status = invite === undefined ? 200 : 400): Promise<Reply> => {
    const route = 'web:/account';
    const found = await orgOf(s.userId, wanted);
    if (found === null) return page(503, unavailablePage(site), route);
    const { org, orgs } = found;
    const [keys, members, usage] = await Promise.all([must(accounts.keysOf(org.id)), must(accounts.members(org.id)), must(accounts.orgUsage(org.id, config.now().getTime()))]);
    const input: DashboardInput = {
      csrf: csrf.token(sessionBinding(s)),
      email: members.find((m) => m.user_id === s.userId)?.email ?? null,
      org,
      orgs,
      usage: 'ok' in usage ? null : usage,
      keys,
      members,
      notice,
      ...(invite === undefined ? {} : { invite }),
      nowMs: wallNow(),
    };
    return page(status, dashboardPage(site, input), route, status === 503 ? [['Retry-After', '60']] : []);
  };

  const dashboard = async (req: Request): Promise<Reply> => {
    const s = await liveSession(req);
    if (s === null) return redirect('/account/sign-in', 'web:/account');
    const q = new URLSearchParams(req.rawQuery);
    const notice = q.get('notice');
    return dashboardReply(s, q.get('org'), notice !== null && NOTICES.has(notice) ? (notice as DashboardNotice) : null);
  };

  /** Where a form of the dashboard returns to: the organization it was about. */
  const backTo = (orgId: string, notice?: DashboardNotice): string => `/account?${new URLSearchParams({ org: orgId, ...(notice ? { notice } : {}) }).toString()}`;

  /** A POST of the signed-in: its session, organization and checked form, or the answer refusing it. */
  const signedInPost = async (req: Request, route: string): Promise<{ s: Live; org: OrgOfUser; form: URLSearchParams } | Reply> => {
    if (!sameOrigin(req, config.webBaseUrl)) return forbidden(route);
    const s = await liveSession(req);
    if (s === null) return redirect('/account/sign-in', route);
    const form = checkedForm(req, sessionBinding(s));
    if (form === null) return forbidden(route);
    const found = await orgOf(s.userId, form.get('org'));
    if (found === null) return page(503, unavailablePage(site), route);
    // A form naming an organization the user is not in is not theirs to send.
    if (form.has('org') && found.org.id !== form.get('org')) return forbidden(route);
    return { s, org: found.org, form };
  };

  /** The organization has its limit of live keys (workers/meter/rules.ts): nothing was made. */
  const keyLimited = (r: AccountRefusal, orgId: string, roll: boolean, route: string): Reply => {
    log.info({ org: orgId, limit: 'live_keys', max: r.max }, 'key refused: the organization has its limit of live keys');
    return page(409, keyLimitPage(site, { live: r.live ?? r.max ?? 0, max: r.max ?? 0, orgId, roll }), route);
  };

  const createKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    const made = await must(accounts.createKeyFor(ok.org.id, ok.s.userId));
    if (!made.ok) return made.reason === 'too_many_keys' ? keyLimited(made, ok.org.id, false, route) : forbidden(route);
    log.info({ org: ok.org.id, key_id: made.keyId }, 'key created on the website');
    return page(200, newKeyPage(site, { key: made.key, nowMs: wallNow() }), route);
  };

  const rollKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys/roll';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    const keyId = ok.form.get('key_id') ?? '';
    const grace = v.safeParse(graceSchema, ok.form.get('grace'));
    if (!grace.success) return page(400, formErrorPage(site), route);
    const old = (await must(accounts.keysOf(ok.org.id))).find((k) => k.id === keyId);
    const made = await must(accounts.rollKey(ok.org.id, ok.s.userId, keyId, Number(grace.output) * 1000));
    if (!made.ok && made.reason === 'too_many_keys') return keyLimited(made, ok.org.id, true, route);
    // Unknown, another organization's, or no longer active: the list shows how things stand.
    if (!made.ok || old === undefined) return redirect(backTo(ok.org.id), route);
    log.info({ org: ok.org.id, key_id: made.keyId, replaces: keyId, revoke_at: made.revokeAt }, 'key rolled on the website');
    return page(200, newKeyPage(site, { key: made.key, replaces: { hint: old.hint, revokeAt: made.revokeAt }, nowMs: wallNow() }), route);
  };

  const revokeKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys/revoke';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    const keyId = ok.form.get('key_id') ?? '';
    const r = await must(accounts.revokeKey(ok.org.id, keyId));
    if (r.ok) log.info({ org: ok.org.id, key_id: keyId.slice(0, 64) }, 'key revoked on the website');
    return redirect(backTo(ok.org.id, r.ok ? 'revoked' : undefined), route);
  };

  const invite = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/members/invite';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    if (ok.org.role !== 'owner') return forbidden(route);
    const raw = ok.form.get('email') ?? '';
    const parsed = v.safeParse(inviteSchema, raw);
    const again = (error: string): Promise<Reply> => dashboardReply(ok.s, ok.org.id, null, { email: raw.slice(0, 254), error });
    if (!parsed.success) return again(parsed.issues[0].message);
    const email = parsed.output;
    const members = await must(accounts.members(ok.org.id));
    if (members.some((m) => m.email !== null && m.email.toLowerCase() === email.toLowerCase())) return again(`${email} is already a member of ${ok.org.name}.`);
    // Bound to no browser: the invitee opens it in theirs (the store does not check an invitation's binding).
    // The ledger counts it against the sender's, the organization's and the mailbox's limits first.
    const issued = await must(accounts.issueLoginToken(email, 'invite', ok.org.id, '', INVITE_TTL_MS, Date.now(), MAIL_LIMIT, ok.s.userId));
    if (!issued.ok) {
      const limit = inviteLimitOf(issued);
      if (limit === null) return forbidden(route);
      log.info({ org: ok.org.id, limit: issued.reason, per: issued.per }, 'invitation refused: a sending limit');
      // Too many sent recently: 429 with when to try again. Too many pending: waiting will not do
      // (an invitation leaves the count when accepted or expired), so it is a 409 with what to do.
      const status = limit.reason === 'too_many_pending' ? 409 : 429;
      const reply = await dashboardReply(ok.s, ok.org.id, null, { email, error: inviteLimitMessage(limit, ok.org.name) }, status);
      return 'retryAfterMs' in limit ? { ...reply, headers: [...reply.headers, ['Retry-After', String(Math.max(1, Math.ceil(limit.retryAfterMs / 1000)))]] } : reply;
    }
    // The mail quotes nothing the inviting account chose but its own address, which it proved it
    // receives mail at (bounded): no organization name, no free text, so an account cannot make the
    // service's sender say "claim your prize at …". The page the link opens names the organization.
    const inviterAddress = members.find((m) => m.user_id === ok.s.userId)?.email ?? null;
    const inviter = inviterAddress === null ? 'A member of an organization' : inviterAddress.length <= INVITER_MAX_CHARS ? inviterAddress : `${inviterAddress.slice(0, INVITER_MAX_CHARS - 1)}…`;
    const link = `${config.webBaseUrl}/account/invite?token=${encodeURIComponent(issued.token)}`;
    try {
      // Awaited, unlike a sign-in link's: the inviter is told whether the invitation went out.
      await deps.mailer.send({
        to: email,
        subject: `An invitation to ${site.name}`,
        text: `${inviter} invited you to join their organization on ${site.name}, to share its API keys and usage.\n\nOpen this link to see the invitation and accept it:\n\n${link}\n\nIt works once, for 7 days. If you did not expect it, ignore this mail.\n`,
        kind: 'invite',
      });
    } catch (err) {
      log.warn({ mail: 'invite', err: (err as Error).message }, 'invitation mail failed');
      return dashboardReply(ok.s, ok.org.id, null, { email, error: 'The invitation could not be sent just now. Please try again in a minute.' }, 503);
    }
    log.info({ org: ok.org.id }, 'invitation sent');
    return redirect(backTo(ok.org.id, 'invited'), route);
  };

  /** What the question page's "continue" carries: worth nothing but for this browser, this session and this invitation. */
  const switchBinding = (pre: string, s: Live, token: string): string => `switch\0${pre}\0${s.sessionId}\0${tokenHash(token)}`;

  /**
   * An invitation's POST. Spending it proves the mailbox, as a sign-in link does: the browser ends
   * up signed in as its addressee. A browser signed in as someone else is asked first (a page naming
   * both), and only the explicit "continue" of that page, checked against this session, spends the
   * link and switches; signed in as the addressee already (same address, any case), it just joins.
   */
  const acceptInvite = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/invite';
    const posted = prePost(req, route);
    if ('status' in posted) return posted;
    const { pre, form } = posted;
    const token = tokenIn(form.get('token'));
    const s = await liveSession(req);
    let replacing: Live | null = null;
    if (s !== null) {
      const seen = await must(accounts.peekLoginToken(token, 'invite', tokenHash(pre), wallNow()));
      if (!seen.ok) return linkFailed('invite', seen, route);
      const me = await must(accounts.userOf(s.userId));
      const isAddressee = me?.email != null && me.email.toLowerCase() === seen.email.toLowerCase();
      if (!isAddressee) {
        if (!csrf.check(switchBinding(pre, s, token), form.get('confirm'))) {
          const question = { token, csrf: csrf.token(preBinding(pre)), confirm: csrf.token(switchBinding(pre, s, token)), signedInAs: me?.email ?? null, email: seen.email, orgName: seen.orgName ?? 'an organization', inviter: seen.inviter };
          return page(200, switchAccountPage(site, question), route);
        }
        replacing = s;
      }
    }
    const spent = await must(accounts.spendLoginToken(token, 'invite', tokenHash(pre), wallNow()));
    if (!spent.ok) return linkFailed('invite', spent, route);
    if (spent.orgId === null) return page(400, inviteFailedPage(site), route);
    const joined = await must(accounts.joinByInvite(spent.email, spent.orgId));
    if (!('user' in joined)) return page(400, inviteFailedPage(site), route);
    log.info({ user: joined.user.id, org: spent.orgId, created: joined.created }, 'invitation accepted');
    // Already signed in as the addressee: the session goes on.
    if (s !== null && replacing === null && joined.user.id === s.userId) return redirect(backTo(spent.orgId, 'joined'), route);
    // "Continue as B (signs you out of A)": A's session ends here, not only its cookie.
    if (replacing !== null) {
      await must(accounts.endSession(replacing.token, wallNow()));
      log.info({ user: joined.user.id, replaced_user: replacing.userId }, 'invitation accepted in a browser signed in as another account');
    }
    const cookies = await startSession(joined.user.id, req);
    if (cookies === null) return page(400, inviteFailedPage(site), route);
    return redirect(backTo(spent.orgId, 'joined'), route, cookies);
  };

  // --- OpenID Connect ------------------------------------------------------------------------

  const providerFailed = (why: ProviderFailure, status: number, headers: Headers = []): Reply => page(status, providerFailedPage(site, why), 'web:/account/oidc', headers);

  const oidcStart = (provider: Provider) => async (req: Request): Promise<Reply> => {
    const route = 'web:/account/oidc/start';
    const posted = prePost(req, route);
    if ('status' in posted) return posted;
    let client: OidcClient;
    try {
      client = await provider.client();
    } catch (err) {
      log.warn({ oidc: 'discovery', err: (err as Error).message }, 'identity provider unreachable');
      return providerFailed('unreachable', 503, [['Retry-After', '30']]);
    }
    const { url, transaction } = await client.start();
    const value = csrf.sign(Buffer.from(JSON.stringify({ ...transaction, pre: tokenHash(posted.pre) })).toString('base64url'));
    return redirect(url, route, [['Set-Cookie', setCookie(names, names.oidc, value, OIDC_TTL_S)]]);
  };

  const oidcCallback = (provider: Provider) => async (req: Request): Promise<Reply> => {
    const route = 'web:/account/oidc/callback';
    const cookies = readCookies(req);
    const clear: Headers = [['Set-Cookie', clearCookie(names, names.oidc)]];
    const txn = readTransaction(csrf.unsign(cookies[names.oidc]));
    const pre = validPre(req);
    // No transaction, or one this browser's pre-session did not start: a stale tab, another browser, or a forged callback.
    if (txn === null || pre === undefined || txn.pre !== tokenHash(pre)) return providerFailed('expired', 400, clear);
    let identity;
    try {
      const client = await provider.client();
      identity = await client.finish(new URL(`${config.webBaseUrl}${req.path}?${req.rawQuery}`), txn);
    } catch (err) {
      const reason = err instanceof OidcError ? err.reason : 'discovery';
      // The reason, never the code or tokens of the callback.
      log.warn({ oidc: reason, provider_error: err instanceof OidcError ? err.providerError : undefined }, 'sign-in with the identity provider failed');
      if (reason === 'state_mismatch') return providerFailed('expired', 400, clear);
      if (reason === 'provider_error') return providerFailed(err instanceof OidcError && err.providerError === 'access_denied' ? 'cancelled' : 'failed', 400, clear);
      if (reason === 'discovery') return providerFailed('unreachable', 503, [...clear, ['Retry-After', '30']]);
      return providerFailed('failed', 400, clear);
    }
    const signedIn = await must(accounts.signInByIdentity(identity.issuer, identity.subject, identity.email, identity.emailVerified));
    const session = await startSession(signedIn.user.id, req);
    if (session === null) return providerFailed('failed', 400, clear);
    log.info({ user: signedIn.user.id, created: signedIn.created }, 'signed in with the identity provider');
    return redirect('/account', route, [...clear, ...session]);
  };

  const signOut = async (req: Request, everywhere: boolean): Promise<Reply> => {
    const route = everywhere ? 'web:/account/sign-out-everywhere' : 'web:/account/sign-out';
    const ok = await signedInPost(req, route);
    const clear: Headers = [['Set-Cookie', clearCookie(names, names.session)]];
    // No live session: there is nothing to end; forget the cookie.
    if ('status' in ok) return ok.status === 303 ? redirect('/', route, clear) : ok;
    if (everywhere) await must(accounts.endAllSessions(ok.s.userId, wallNow()));
    else await must(accounts.endSession(ok.s.token, wallNow()));
    return redirect('/', route, clear);
  };

  const GETS: Readonly<Record<string, (req: Request) => Reply | Promise<Reply>>> = {
    '/account': dashboard,
    '/account/sign-in': signInForm,
    '/account/sign-in/sent': () => page(200, sentPage(site), 'web:/account/sign-in/sent'),
    '/account/confirm': linkForm('sign_in', 'web:/account/confirm'),
    '/account/invite': linkForm('invite', 'web:/account/invite'),
    ...(deps.provider === null ? {} : { [OIDC_CALLBACK_PATH]: oidcCallback(deps.provider) }),
  };
  const POSTS: Readonly<Record<string, (req: Request) => Promise<Reply>>> = {
    '/account/sign-in': sendLink,
    '/account/confirm': confirm,
    '/account/invite': acceptInvite,
    '/account/keys': createKey,
    '/account/keys/roll': rollKey,
    '/account/keys/revoke': revokeKey,
    '/account/members/invite': invite,
    ...(deps.provider === null ? {} : { '/account/oidc/start': oidcStart(deps.provider) }),
    '/account/sign-out': (req) => signOut(req, false),
    '/account/sign-out-everywhere': (req) => signOut(req, true),
  };

  const busy = (err: unknown): Reply => {
    if (err instanceof Unavailable) return page(503, unavailablePage(site, { retryAfterS: 5 }), 'web:/account', [['Retry-After', '5']]);
    throw err;
  };

  return (req) => {
    const p = req.path;
    const get = Object.hasOwn(GETS, p) ? GETS[p] : undefined;
    const post = Object.hasOwn(POSTS, p) ? POSTS[p] : undefined;
    if (get === undefined && post === undefined) return null;
    let handler: ((req: Request) => Reply | Promise<Reply>) | undefined;
    if (req.method === 'GET' || req.method === 'HEAD') handler = get;
    else if (req.method === 'POST') {
      if (req.bodyTooLarge) return page(413, formErrorPage(site), `web:${p}`);
      handler = post;
    }
    if (handler === undefined) {
      const allow = [get ? 'GET, HEAD' : null, post ? 'POST' : null].filter((x) => x !== null).join(', ');
      return page(405, formErrorPage(site), `web:${p}`, [['Allow', allow]]);
    }
    try {
      const out = handler(req);
      return out instanceof Promise ? out.catch(busy) : out;
    } catch (err) {
      return busy(err);
    }
  };
}

/** The OIDC cookie's transaction, or null when it is missing, altered or not one. */
function readTransaction(unsigned: string | null): (OidcTransaction & { readonly pre: string }) | null {
  if (unsigned === null) return null;
  try {
    const parsed = v.safeParse(oidcCookieSchema, JSON.parse(Buffer.from(unsigned, 'base64url').toString('utf8')));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}
