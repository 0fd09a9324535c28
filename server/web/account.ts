// The account routes of the website (issue 16): e-mail sign-in by magic link, the dashboard, keys
// and sign-out. Every state change is a POST from our own forms, checked for its origin and its
// CSRF token (bound to the pre-session cookie before sign-in, to the session once signed in).
// Sessions and sign-in tokens run on the wall clock, as the accounts store does; usage runs on the
// configured clock, as /v1/usage does.
import * as v from 'valibot';
import type { Config } from '../config.ts';
import type { Reply, Request } from '../http.ts';
import type { Logger } from '../log.ts';
import type { Meter, MeterFailure } from '../meter.ts';
import { RateLimiter } from '../ratelimit.ts';
import type { OrgOfUser } from '../../workers/protocol.ts';
import { SECURITY_HEADERS, type Site } from './layout.ts';
import type { Mailer } from './mail.ts';
import { confirmFailedPage, confirmPage, dashboardPage, forbiddenPage, formErrorPage, newKeyPage, sentPage, signInPage, tooManyPage, type DashboardInput } from './pages/account.ts';
import { unavailablePage } from './pages/errors.ts';
import { clearCookie, cookieNames, Csrf, formFields, newToken, readCookies, sameOrigin, setCookie, tokenHash } from './session.ts';

export interface AccountDeps {
  readonly config: Pick<Config, 'webBaseUrl' | 'now'>;
  readonly site: Site;
  readonly meter: Pick<Meter, 'accounts' | 'usage' | 'plan'>;
  readonly mailer: Pick<Mailer, 'send'>;
  /** The key of CSRF tokens (session.ts loadSecret). */
  readonly secret: Buffer;
  readonly log: Logger;
}

type Headers = (readonly [string, string])[];

const LOGIN_TTL_MS = 15 * 60_000;
const SESSION_ABSOLUTE_MS = 30 * 24 * 3_600_000;
const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
/** The pre-session cookie outlives a sign-in link comfortably; it is replaced at every sign-in. */
const PRE_MAX_AGE_S = 24 * 3600;
const SIGN_INS_PER_ADDRESS_PER_MINUTE = 10;
const MAILS_PER_EMAIL = 3;
const MAIL_WINDOW_MS = 10 * 60_000;

const emailSchema = v.pipe(
  v.string(),
  v.trim(),
  v.nonEmpty('Enter your e-mail address.'),
  v.maxLength(254, 'An e-mail address is at most 254 characters.'),
  v.email('Enter an e-mail address like name@example.com.'),
);

const isFailure = (r: unknown): r is MeterFailure => typeof r === 'object' && r !== null && (r as { ok?: unknown }).ok === false && 'code' in r;

/** Thrown inside a route when the metering thread cannot answer: the page says "busy". */
class Unavailable extends Error {}

/** The result of an account call, or Unavailable when the thread could not run it. */
async function must<T>(p: Promise<T | MeterFailure>): Promise<T> {
  const r = await p;
  if (isFailure(r)) throw new Unavailable(r.detail);
  return r;
}

/**
 * At most `max` events per key in a sliding window: the per-address mail limit (3 in 10 minutes
 * does not fit a token bucket whose burst equals its per-minute rate). Keys idle for a whole window
 * are dropped as calls arrive, so the map holds recent senders only.
 */
class SlidingWindow {
  private readonly seen = new Map<string, number[]>();
  private sweptAt = 0;

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  take(key: string, nowMs = performance.now()): boolean {
    if (nowMs - this.sweptAt > this.windowMs) {
      for (const [k, times] of this.seen) if ((times.at(-1) ?? 0) <= nowMs - this.windowMs) this.seen.delete(k);
      this.sweptAt = nowMs;
    }
    const recent = (this.seen.get(key) ?? []).filter((t) => t > nowMs - this.windowMs);
    const allowed = recent.length < this.max;
    if (allowed) recent.push(nowMs);
    this.seen.set(key, recent);
    return allowed;
  }
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
  const mailLimiter = new SlidingWindow(MAILS_PER_EMAIL, MAIL_WINDOW_MS);
  const preBinding = (pre: string): string => `pre\0${pre}`;
  const sessionBinding = (s: Live): string => `session\0${s.sessionId}`;

  const page = (status: number, body: string, route: string, headers: Headers = []): Reply => ({
    status,
    headers: [['Content-Type', 'text/html; charset=utf-8'], ['Cache-Control', 'no-store'], ...SECURITY_HEADERS, ...headers],
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

  /** The pre-session id, and the Set-Cookie that gives one to a browser that has none. */
  const preOf = (req: Request): { pre: string; headers: Headers } => {
    const have = readCookies(req)[names.pre];
    if (have) return { pre: have, headers: [] };
    const pre = newToken();
    return { pre, headers: [['Set-Cookie', setCookie(names, names.pre, pre, PRE_MAX_AGE_S)]] };
  };

  const liveSession = async (req: Request): Promise<Live | null> => {
    const token = readCookies(req)[names.session];
    if (!token) return null;
    const s = await must(accounts.touchSession(token, Date.now(), SESSION_IDLE_MS));
    return s === null ? null : { token, ...s };
  };

  /** The form of a POST whose origin and CSRF token check out against `binding`, else null. */
  const checkedForm = (req: Request, binding: string | null): URLSearchParams | null => {
    if (!sameOrigin(req, config.webBaseUrl) || binding === null) return null;
    const form = formFields(req);
    if (form === null || !csrf.check(binding, form.get('csrf'))) return null;
    return form;
  };

  const signInForm = (req: Request): Reply => {
    const { pre, headers } = preOf(req);
    return page(200, signInPage(site, { csrf: csrf.token(preBinding(pre)) }), 'web:/account/sign-in', headers);
  };

  const sendLink = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/sign-in';
    const pre = readCookies(req)[names.pre];
    const form = checkedForm(req, pre ? preBinding(pre) : null);
    if (form === null || pre === undefined) return forbidden(route);
    if (!addressLimiter.take(req.remoteAddress).allowed) return page(429, tooManyPage(site), route, [['Retry-After', '60']]);
    const parsed = v.safeParse(emailSchema, form.get('email') ?? '');
    if (!parsed.success) {
      const error = parsed.issues[0].message;
      return page(400, signInPage(site, { csrf: csrf.token(preBinding(pre)), email: (form.get('email') ?? '').slice(0, 254), error }), route);
    }
    const email = parsed.output;
    // Over the limit, nothing is sent, and the answer is the one every other request gets.
    if (mailLimiter.take(email.toLowerCase())) {
      const issued = await must(accounts.issueLoginToken(email, 'sign_in', null, tokenHash(pre), LOGIN_TTL_MS));
      if (issued.ok) {
        const link = `${config.webBaseUrl}/account/confirm?token=${encodeURIComponent(issued.token)}`;
        // Not awaited: the answer must not wait on a mail server, or its timing would tell addresses apart.
        deps.mailer
          .send({
            to: email,
            subject: `Your sign-in link – ${site.name}`,
            text: `Open this link to sign in to ${site.name}:\n\n${link}\n\nIt works once, for 15 minutes, in the browser that asked for it. If you did not ask for it, ignore this mail.\n`,
            kind: 'sign_in',
          })
          .catch((err: unknown) => log.warn({ mail: 'sign_in', err: (err as Error).message }, 'sign-in mail failed'));
      }
    }
    return redirect('/account/sign-in/sent', route);
  };

  const confirmForm = (req: Request): Reply => {
    const token = new URLSearchParams(req.rawQuery).get('token') ?? '';
    const { pre, headers } = preOf(req);
    return page(200, confirmPage(site, { token: token.slice(0, 200), csrf: csrf.token(preBinding(pre)) }), 'web:/account/confirm', headers);
  };

  const confirm = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/confirm';
    const pre = readCookies(req)[names.pre];
    const form = checkedForm(req, pre ? preBinding(pre) : null);
    if (form === null || pre === undefined) return forbidden(route);
    const spent = await must(accounts.spendLoginToken(form.get('token') ?? '', tokenHash(pre), Date.now()));
    if (!spent.ok || spent.purpose !== 'sign_in') return page(400, confirmFailedPage(site), route);
    const signedIn = await must(accounts.signInByEmail(spent.email));
    const session = await must(accounts.createSession(signedIn.user.id, SESSION_ABSOLUTE_MS));
    if (!session.ok) return page(400, confirmFailedPage(site), route);
    log.info({ user: signedIn.user.id, created: signedIn.created }, 'signed in by e-mail');
    return redirect('/account', route, [
      ['Set-Cookie', setCookie(names, names.session, session.token, SESSION_ABSOLUTE_MS / 1000)],
      // A new pre-session id: whatever was bound to the old one (a planted cookie, a pending link) is void.
      ['Set-Cookie', setCookie(names, names.pre, newToken(), PRE_MAX_AGE_S)],
    ]);
  };

  const firstOrg = async (userId: string): Promise<OrgOfUser | null> => (await must(accounts.organizationsOf(userId)))[0] ?? null;

  const usageOf = async (org: OrgOfUser, keys: DashboardInput['keys']): Promise<DashboardInput['usage']> => {
    const key = keys.find((k) => k.revoked_at === null) ?? keys[0];
    if (key === undefined) {
      const limit = deps.meter.plan(org.plan)?.monthlyRecordLimit ?? null;
      return { used: 0, limit, remaining: limit, resetsAt: null };
    }
    const r = await deps.meter.usage(key.id, config.now().getTime());
    if (!r.ok) return null;
    const rec = r.usage.records;
    return { used: rec.used, limit: rec.limit, remaining: rec.remaining, resetsAt: r.usage.period.resets_at };
  };

  const dashboard = async (req: Request): Promise<Reply> => {
    const route = 'web:/account';
    const s = await liveSession(req);
    if (s === null) return redirect('/account/sign-in', route);
    const org = await firstOrg(s.userId);
    if (org === null) return page(503, unavailablePage(site), route);
    const keys = await must(accounts.keysOf(org.id));
    const email = (await must(accounts.members(org.id))).find((m) => m.user_id === s.userId)?.email ?? null;
    const input: DashboardInput = { csrf: csrf.token(sessionBinding(s)), email, org, usage: await usageOf(org, keys), keys };
    return page(200, dashboardPage(site, input), route);
  };

  /** A POST of the signed-in: its session, organization and checked form, or the answer refusing it. */
  const signedInPost = async (req: Request, route: string): Promise<{ s: Live; org: OrgOfUser; form: URLSearchParams } | Reply> => {
    if (!sameOrigin(req, config.webBaseUrl)) return forbidden(route);
    const s = await liveSession(req);
    if (s === null) return redirect('/account/sign-in', route);
    const form = checkedForm(req, sessionBinding(s));
    if (form === null) return forbidden(route);
    const org = await firstOrg(s.userId);
    if (org === null) return page(503, unavailablePage(site), route);
    return { s, org, form };
  };

  const createKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    const made = await must(accounts.createKeyFor(ok.org.id, ok.s.userId));
    if (!made.ok) return forbidden(route);
    log.info({ org: ok.org.id, key_id: made.keyId }, 'key created on the website');
    return page(200, newKeyPage(site, { key: made.key }), route);
  };

  const revokeKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys/revoke';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    const keyId = ok.form.get('key_id') ?? '';
    const r = await must(accounts.revokeKey(ok.org.id, keyId));
    if (r.ok) log.info({ org: ok.org.id, key_id: keyId.slice(0, 64) }, 'key revoked on the website');
    return redirect('/account', route);
  };

  const signOut = async (req: Request, everywhere: boolean): Promise<Reply> => {
    const route = everywhere ? 'web:/account/sign-out-everywhere' : 'web:/account/sign-out';
    const ok = await signedInPost(req, route);
    const clear: Headers = [['Set-Cookie', clearCookie(names, names.session)]];
    // No live session: there is nothing to end; forget the cookie.
    if ('status' in ok) return ok.status === 303 ? redirect('/', route, clear) : ok;
    if (everywhere) await must(accounts.endAllSessions(ok.s.userId));
    else await must(accounts.endSession(ok.s.token));
    return redirect('/', route, clear);
  };

  const GETS: Readonly<Record<string, (req: Request) => Reply | Promise<Reply>>> = {
    '/account': dashboard,
    '/account/sign-in': signInForm,
    '/account/sign-in/sent': () => page(200, sentPage(site), 'web:/account/sign-in/sent'),
    '/account/confirm': confirmForm,
  };
  const POSTS: Readonly<Record<string, (req: Request) => Promise<Reply>>> = {
    '/account/sign-in': sendLink,
    '/account/confirm': confirm,
    '/account/keys': createKey,
    '/account/keys/revoke': revokeKey,
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
