// Signing in by e-mail link (the form, the mail, the link's confirmation) and signing out. The
// answer to the form leaves before anything that depends on the address happens (see sendLink).
import * as v from 'valibot';
import type { Reply, Request } from '../../http.ts';
import { RateLimiter } from '../../ratelimit.ts';
import { SECURITY_HEADERS, securityHeaders } from '../layout.ts';
import { confirmFailedPage, signInPage, tooManyPage } from '../pages/account.ts';
import { clearCookie, tokenHash } from '../session.ts';
import { emailField, MAIL_LIMIT, must, wallNow, type AccountContext, type Headers } from './context.ts';
import type { MailedLinks } from './links.ts';

const LOGIN_TTL_MS = 15 * 60_000;
const SIGN_INS_PER_ADDRESS_PER_MINUTE = 10;
const emailSchema = emailField('Enter your e-mail address.');

export function signInRoutes(ctx: AccountContext, links: MailedLinks) {
  const { deps, site, log, config, accounts, names, csrf, preBinding, page, redirect, preOf, prePost, startSession, signedInPost } = ctx;
  const { linkFailed, tokenIn } = links;
  const addressLimiter = new RateLimiter(SIGN_INS_PER_ADDRESS_PER_MINUTE);

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
      return page(
        400,
        signInPage(site, { csrf: csrf.token(preBinding(pre)), email: (form.get('email') ?? '').slice(0, 254), error, provider: providerName }),
        route,
        [],
        signInSecurity(),
      );
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

  return { signInForm, sendLink, confirm, signOut };
}
