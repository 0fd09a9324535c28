// The page a mailed link opens, sign-in and invitation alike: it looks the link up without
// spending it, and says so at once when the link does not work here.
import type { Reply, Request } from '../../http.ts';
import { confirmFailedPage, confirmPage, inviteFailedPage, invitePage, otherBrowserPage, wrongLinkPage } from '../pages/account.ts';
import { tokenHash } from '../session.ts';
import { codeOf } from './code.ts';
import { must, wallNow, type AccountContext, type Headers } from './context.ts';
import type { LoginPurpose, LoginTokenRefusal } from '../../../ledger/accounts.ts';

export function mailedLinks(ctx: AccountContext) {
  const { site, accounts, csrf, preBinding, page, preOf } = ctx;

  /**
   * A link that does not work here, said for its page: another kind of link, or used, expired, another
   * browser's. A live sign-in link of another browser (the mail read on a phone) gets the way forward:
   * its code, to type where the sign-in began (code.ts says why showing it is safe).
   */
  const linkFailed = (purpose: LoginPurpose, why: LoginTokenRefusal, route: string, headers: Headers = [], token: string | null = null): Reply => {
    if (why.reason === 'purpose') return page(400, wrongLinkPage(site, purpose), route, headers);
    if (why.reason === 'binding' && purpose === 'sign_in' && token !== null)
      return page(400, otherBrowserPage(site, { code: codeOf(tokenIn(token)) }), route, headers);
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
      if (!seen.ok) return linkFailed(purpose, seen, route, headers, token);
      const input = { token, csrf: csrf.token(preBinding(pre)), email: seen.email };
      const body =
        purpose === 'sign_in' ? confirmPage(site, input) : invitePage(site, { ...input, inviter: seen.inviter, orgName: seen.orgName ?? 'an organization' });
      return page(200, body, route, headers);
    };

  return { linkFailed, tokenIn, linkForm };
}

export type MailedLinks = ReturnType<typeof mailedLinks>;
