// Sign-in with the identity provider (OpenID Connect): the redirect to it, with the transaction in
// a signed cookie bound to this browser's pre-session, and its callback.
import * as v from 'valibot';
import type { Reply, Request } from '../../http.ts';
import { OidcError, type OidcClient, type OidcTransaction } from '../oidc.ts';
import { providerFailedPage, type ProviderFailure } from '../pages/account.ts';
import { clearCookie, readCookies, setCookie, tokenHash } from '../session.ts';
import { must, type AccountContext, type Headers, type Provider } from './context.ts';

/** Where the identity provider sends the browser back: register `${WEB_BASE_URL}${OIDC_CALLBACK_PATH}` with it. */
export const OIDC_CALLBACK_PATH = '/account/oidc/callback';

/** Long enough to sign in at the provider (a password manager, a second factor), short enough to be stale soon. */
const OIDC_TTL_S = 10 * 60;

/** What the OIDC cookie holds between the redirect to the provider and its callback (signed, not secret from its browser). */
const oidcCookieSchema = v.object({
  state: v.string(),
  nonce: v.string(),
  codeVerifier: v.string(),
  /** The pre-session it was started from: the callback must come back to the same browser. */
  pre: v.string(),
});

export function providerRoutes(ctx: AccountContext) {
  const { site, log, config, accounts, names, csrf, page, redirect, validPre, prePost, startSession } = ctx;

  const providerFailed = (why: ProviderFailure, status: number, headers: Headers = []): Reply =>
    page(status, providerFailedPage(site, why), 'web:/account/oidc', headers);

  const oidcStart =
    (provider: Provider) =>
    async (req: Request): Promise<Reply> => {
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

  const oidcCallback =
    (provider: Provider) =>
    async (req: Request): Promise<Reply> => {
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
        if (reason === 'provider_error')
          return providerFailed(err instanceof OidcError && err.providerError === 'access_denied' ? 'cancelled' : 'failed', 400, clear);
        if (reason === 'discovery') return providerFailed('unreachable', 503, [...clear, ['Retry-After', '30']]);
        return providerFailed('failed', 400, clear);
      }
      const signedIn = await must(accounts.signInByIdentity(identity.issuer, identity.subject, identity.email, identity.emailVerified));
      const session = await startSession(signedIn.user.id, req);
      if (session === null) return providerFailed('failed', 400, clear);
      log.info({ user: signedIn.user.id, created: signedIn.created }, 'signed in with the identity provider');
      return redirect('/account', route, [...clear, ...session]);
    };

  return { oidcStart, oidcCallback };
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
