// What every account route shares, made once per website (server/web/account/index.ts): the
// dependencies, the cookie names and CSRF tokens, the page and redirect answers, and the
// pre-session and session helpers every form goes through. Handlers get it as one object.
//
// Two clocks, on purpose. Everything that expires for security (links, sessions, a rolled key's
// grace) runs on the wall clock, `wallNow`, as the accounts store and the API's key checks do: a
// pinned FAMILY_EVENTS_NOW must never keep a link alive. Usage runs on the configured clock,
// config.now(), exactly as /v1/usage does, so the dashboard and the API agree on the month.
import * as v from 'valibot';
import type { Config } from '../../../core/config.ts';
import type { AfterAnswer } from '../../after-answer.ts';
import type { Reply, Request } from '../../http.ts';
import type { Logger } from '../../log.ts';
import type { Meter, MeterFailure } from '../../meter.ts';
import { SECURITY_HEADERS, type Site } from '../layout.ts';
import type { Mailer } from '../mail.ts';
import type { OidcClient } from '../oidc.ts';
import { forbiddenPage } from '../pages/account.ts';
import { cookieNames, Csrf, formFields, PreSessions, readCookies, sameOrigin, setCookie } from '../session.ts';
import type { MailLimit, OrgOfUser } from '../../../ledger/accounts.ts';

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
  /** Work done after an answer has left (a sign-in mail), finished before the server stops. */
  readonly afterAnswer: Pick<AfterAnswer, 'run'>;
  /** Null: e-mail sign-in only. */
  readonly provider: Provider | null;
  /** The key of CSRF tokens and signed cookies, as the ledger has it now (Meter.webSecret). */
  readonly secret: () => Buffer;
  readonly log: Logger;
}

export type Headers = (readonly [string, string])[];

const SESSION_ABSOLUTE_MS = 30 * 24 * 3_600_000;
const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
/** The pre-session cookie outlives a sign-in link comfortably; it is replaced at every sign-in. */
const PRE_MAX_AGE_S = 24 * 3600;
/** Links mailed to one address (sign-in and invitation alike), counted in the ledger: exact across nodes. */
export const MAIL_LIMIT: MailLimit = { max: 3, windowMs: 10 * 60_000 };

/** An e-mail address as a form gives it; `empty` is what to say when the field is left blank. */
export const emailField = (empty: string) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.nonEmpty(empty),
    v.maxLength(254, 'An e-mail address is at most 254 characters.'),
    v.email('Enter an e-mail address like name@example.com.'),
  );

/** The wall clock of everything that expires for security (see the head of this file). */
export const wallNow = (): number => Date.now();

const isFailure = (r: unknown): r is MeterFailure => typeof r === 'object' && r !== null && (r as { ok?: unknown }).ok === false && 'code' in r;

/** Thrown inside a route when the metering thread cannot answer: the page says "busy". */
export class Unavailable extends Error {}

/** The result of an account call, or Unavailable when the thread could not run it. */
export async function must<T>(p: Promise<T | MeterFailure>): Promise<T> {
  const r = await p;
  if (isFailure(r)) throw new Unavailable(r.detail);
  return r;
}

export interface Live {
  readonly token: string;
  readonly userId: string;
  readonly sessionId: string;
}

/** The organization of a signed-in account that has none: a member of nothing, which no ledger call knows. */
const NO_ORGANIZATION: OrgOfUser = { id: '', name: '', plan: '', role: 'member' };

/** The context of the account routes: made once by createAccount, handed to each route module. */
export function accountContext(deps: AccountDeps) {
  const { site, log, config } = deps;
  const accounts = deps.meter.accounts;
  const names = cookieNames(config.webBaseUrl);
  const csrf = new Csrf(deps.secret);
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

  /** The organization a request names (`org`) among the user's, else their first; null when they have none. */
  const orgOf = async (userId: string, wanted: string | null): Promise<{ org: OrgOfUser; orgs: readonly OrgOfUser[] } | null> => {
    const orgs = await must(accounts.organizationsOf(userId));
    const org = orgs.find((o) => o.id === wanted) ?? orgs[0];
    return org === undefined ? null : { org, orgs };
  };

  /** A POST of the signed-in: its session, organization and checked form, or the answer refusing it. */
  const signedInPost = async (req: Request, route: string): Promise<{ s: Live; org: OrgOfUser; form: URLSearchParams } | Reply> => {
    if (!sameOrigin(req, config.webBaseUrl)) return forbidden(route);
    const s = await liveSession(req);
    if (s === null) return redirect('/account/sign-in', route);
    const form = checkedForm(req, sessionBinding(s));
    if (form === null) return forbidden(route);
    const found = await orgOf(s.userId, form.get('org'));
    if (found === null) {
      // In no organization (removed from the last one): a form about none (sign-out) still works,
      // under a stand-in no ledger call accepts; a form naming one is not theirs to send.
      return form.has('org') ? forbidden(route) : { s, org: NO_ORGANIZATION, form };
    }
    // A form naming an organization the user is not in is not theirs to send.
    if (form.has('org') && found.org.id !== form.get('org')) return forbidden(route);
    return { s, org: found.org, form };
  };

  return {
    deps,
    site,
    log,
    config,
    accounts,
    names,
    csrf,
    preBinding,
    sessionBinding,
    page,
    redirect,
    forbidden,
    validPre,
    newPreCookie,
    preOf,
    liveSession,
    startSession,
    checkedForm,
    prePost,
    orgOf,
    signedInPost,
  };
}

export type AccountContext = ReturnType<typeof accountContext>;
