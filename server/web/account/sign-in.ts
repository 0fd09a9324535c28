// Signing in by e-mail link (the form, the mail, the link's confirmation), or by the code the same
// mail carries typed where the sign-in began (code.ts), and signing out. The answer to the form
// leaves before anything that depends on the address happens (see sendLink).
import * as v from 'valibot';
import type { Reply, Request } from '../../http.ts';
import { RateLimiter } from '../../ratelimit.ts';
import { SECURITY_HEADERS, securityHeaders } from '../layout.ts';
import { confirmFailedPage, sentPage, signInPage, tooManyPage } from '../pages/account.ts';
import { clearCookie, tokenHash } from '../session.ts';
import { emailField, MAIL_LIMIT, must, wallNow, type AccountContext, type Headers } from './context.ts';
import type { MailedLinks } from './links.ts';
import { codeHash, codeOf, noCode, typedCode } from './code.ts';
import type { SpentLoginCode } from '../../../ledger/accounts.ts';

const LOGIN_TTL_MS = 15 * 60_000;
const SIGN_INS_PER_ADDRESS_PER_MINUTE = 10;
/** Codes typed per client address: each costs a slow hash; the ledger's 5 wrong tries per code bound guessing. */
const CODES_PER_ADDRESS_PER_MINUTE = 10;
const emailSchema = emailField('Enter your e-mail address.');

export function signInRoutes(ctx: AccountContext, links: MailedLinks) {
  const { deps, site, log, config, accounts, names, csrf, preBinding, page, redirect, preOf, prePost, startSession, signedInPost } = ctx;
  const { linkFailed, tokenIn } = links;
  const addressLimiter = new RateLimiter(SIGN_INS_PER_ADDRESS_PER_MINUTE);
  const codeLimiter = new RateLimiter(CODES_PER_ADDRESS_PER_MINUTE);

  const providerName = deps.provider?.name ?? null;
  /** The sign-in page's headers: its provider button leads off our origin. */
  const signInSecurity = (): ReturnType<typeof securityHeaders> => (deps.provider === null ? SECURITY_HEADERS : securityHeaders(deps.provider.formTargets()));

  const signInForm = (req: Request): Reply => {
    const { pre, headers } = preOf(req);
    return page(200, signInPage(site, { csrf: csrf.token(preBinding(pre)), provider: providerName }), 'web:/account/sign-in', headers, signInSecurity());
  };

  /** Issues a sign-in link bound to the asking browser, with its code, and mails both. */
  const mailLink = async (email: string, bindingHash: string): Promise<void> => {
    const issued = await must(accounts.issueLoginToken(email, 'sign_in', null, bindingHash, LOGIN_TTL_MS, Date.now(), MAIL_LIMIT));
    // The slow hash is made whether a link was issued or not: the work after the answer is alike.
    const code = issued.ok ? codeOf(issued.token) : noCode();
    const hash = await codeHash(code, bindingHash);
    // Past the address's mail limit: nothing is sent, and the answer (already gone) said the same.
    if (!issued.ok) return;
    // No code kept (the thread busy): the mail still goes, and its link still works.
    const kept = await accounts.attachLoginCode(issued.token, hash);
    const withCode = 'attached' in kept && kept.attached;
    const link = `${config.webBaseUrl}/account/confirm?token=${encodeURIComponent(issued.token)}`;
    await deps.mailer.send({
      to: email,
      subject: `Your sign-in link – ${site.name}`,
      text: withCode
        ? `Open this link to sign in to ${site.name}:\n\n${link}\n\nReading this on another device? Type this code on the "Check your mail" page where you asked:\n\n    ${code}\n\nThe link and the code work once, for 15 minutes, in the browser that asked for them. If you did not ask, ignore this mail.\n`
        : `Open this link to sign in to ${site.name}:\n\n${link}\n\nIt works once, for 15 minutes, in the browser that asked for it. If you did not ask for it, ignore this mail.\n`,
      kind: 'sign_in',
    });
  };

  /** The "Check your mail" page, with the code form bound to this browser's pre-session. */
  const sentForm = (req: Request): Reply => {
    const { pre, headers } = preOf(req);
    return page(200, sentPage(site, { csrf: csrf.token(preBinding(pre)) }), 'web:/account/sign-in/sent', headers);
  };

  /** What the code form says when a code did not sign in, in the words its user needs. */
  const codeError = (why: Exclude<SpentLoginCode, { ok: true }>): string => {
    const again = 'Ask for a new sign-in link (below) to get a new code.';
    switch (why.reason) {
      case 'wrong':
        return why.attemptsLeft > 0
          ? `That code is not right. Check the mail and type it again: ${why.attemptsLeft} ${why.attemptsLeft === 1 ? 'try' : 'tries'} left.`
          : `That code is not right, and that was the last try: the code no longer works. ${again}`;
      case 'too_many':
        return `Too many wrong codes were typed here: the code no longer works. ${again}`;
      case 'expired':
        return `That code has expired (codes last 15 minutes). ${again}`;
      case 'used':
        return `That code was already used (a code and its link sign in once). ${again}`;
      case 'none':
        return `No sign-in is waiting for a code in this browser. Type the code in the browser where you asked for the link, or ask for a new one here.`;
    }
  };

  /** The code from the mail, typed where the sign-in began: signs this browser in, as its link would. */
  const signInWithCode = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/sign-in/code';
    const posted = prePost(req, route);
    if ('status' in posted) return posted;
    const { pre, form } = posted;
    const typed = (form.get('code') ?? '').slice(0, 20);
    const again = (status: number, error: string, headers: Headers = []): Reply =>
      page(status, sentPage(site, { csrf: csrf.token(preBinding(pre)), code: typed, error }), route, headers);
    if (!codeLimiter.take(req.remoteAddress).allowed)
      return again(429, 'Too many codes were typed from your network. Wait a minute, then try again.', [['Retry-After', '60']]);
    if (typed.trim() === '') return again(400, 'Enter the code from the sign-in mail.');
    const code = typedCode(typed);
    if (code === null) return again(400, 'A code is 8 letters and digits, like K7QM-3XPD. Check the mail and type it again.');
    const bindingHash = tokenHash(pre);
    const spent = await must(accounts.spendLoginCode(bindingHash, await codeHash(code, bindingHash), wallNow()));
    if (!spent.ok) return again(400, codeError(spent));
    const signedIn = await must(accounts.signInByEmail(spent.email));
    const cookies = await startSession(signedIn.user.id, req);
    if (cookies === null) return page(400, confirmFailedPage(site), route);
    log.info({ user: signedIn.user.id, created: signedIn.created }, 'signed in by e-mail code');
    return redirect('/account', route, cookies);
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
    // another.
    // Tracked (server/after-answer.ts): a stopping server sends it before it closes the ledger.
    deps.afterAnswer.run(() =>
      mailLink(email, tokenHash(pre)).catch((err: unknown) => log.warn({ mail: 'sign_in', err: (err as Error).message }, 'sign-in mail failed')),
    );
    return redirect('/account/sign-in/sent', route);
  };

  const confirm = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/confirm';
    const posted = prePost(req, route);
    if ('status' in posted) return posted;
    // Spent only as a sign-in link: an invitation posted here stays unspent for its own page.
    const spent = await must(accounts.spendLoginToken(tokenIn(posted.form.get('token')), 'sign_in', tokenHash(posted.pre), wallNow()));
    if (!spent.ok) return linkFailed('sign_in', spent, route, [], posted.form.get('token'));
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

  return { signInForm, sendLink, sentForm, signInWithCode, confirm, signOut };
}
