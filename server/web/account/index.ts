// The account routes of the website (issue 16): sign-in by e-mail link or with the identity
// provider (OpenID Connect), the dashboard, keys (create, roll, revoke), members and invitations
// (invite, cancel, remove), renaming the organization, and sign-out. Every state change is a POST
// from our own forms, checked for its origin and its CSRF token (bound to the pre-session cookie
// before sign-in, to the session once signed in).
// Each concern has its module (sign-in by mail, the identity provider, the dashboard and keys,
// members and invitations); this one holds the route table and what every route answers alike.
import type { Reply, Request } from '../../http.ts';
import { formErrorPage } from '../pages/account.ts';
import { unavailablePage } from '../pages/errors.ts';
import { accountContext, Unavailable, type AccountDeps } from './context.ts';
import { dashboardRoutes } from './dashboard.ts';
import { mailedLinks } from './links.ts';
import { memberRoutes } from './members.ts';
import { OIDC_CALLBACK_PATH, providerRoutes } from './provider.ts';
import { signInRoutes } from './sign-in.ts';

export type { AccountDeps, Provider } from './context.ts';
export { OIDC_CALLBACK_PATH } from './provider.ts';

export function createAccount(deps: AccountDeps): (req: Request) => Reply | Promise<Reply> | null {
  const ctx = accountContext(deps);
  const { site, page } = ctx;
  const links = mailedLinks(ctx);
  const { linkForm } = links;
  const { signInForm, sendLink, sentForm, signInWithCode, confirm, signOut } = signInRoutes(ctx, links);
  const dash = dashboardRoutes(ctx);
  const { dashboard, createKey, rollKey, revokeKey, renameOrg } = dash;
  const { invite, acceptInvite, cancelInvite, removeMember } = memberRoutes(ctx, links, dash);
  const { oidcStart, oidcCallback } = providerRoutes(ctx);

  const GETS: Readonly<Record<string, (req: Request) => Reply | Promise<Reply>>> = {
    '/account': dashboard,
    '/account/sign-in': signInForm,
    '/account/sign-in/sent': sentForm,
    '/account/confirm': linkForm('sign_in', 'web:/account/confirm'),
    '/account/invite': linkForm('invite', 'web:/account/invite'),
    ...(deps.provider === null ? {} : { [OIDC_CALLBACK_PATH]: oidcCallback(deps.provider) }),
  };
  const POSTS: Readonly<Record<string, (req: Request) => Promise<Reply>>> = {
    '/account/sign-in': sendLink,
    '/account/sign-in/code': signInWithCode,
    '/account/confirm': confirm,
    '/account/invite': acceptInvite,
    '/account/keys': createKey,
    '/account/keys/roll': rollKey,
    '/account/keys/revoke': revokeKey,
    '/account/members/invite': invite,
    '/account/members/remove': removeMember,
    '/account/invitations/cancel': cancelInvite,
    '/account/org/rename': renameOrg,
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
