// The OpenID Connect relying party: authorization code flow with PKCE (S256), state and nonce.
// It knows nothing of sessions, cookies or pages: start() hands back a URL and the transaction
// secrets, the caller keeps those somewhere short-lived and bound to the browser, and finish() gets
// them back with the callback URL. Protocol validation (ID token signature, iss, aud, exp, nonce,
// the RFC 9207 `iss` response parameter) is openid-client's; this module names the failures.
import { createHash, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The exact redirect URI registered with the provider, as the public sees it. */
  redirectUri: string;
  /** Plain-http issuers are refused unless this is set; only tests set it (loopback provider). */
  allowHttp?: boolean;
}

export interface OidcTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface OidcIdentity {
  /** The issuer as discovered, which together with `subject` keys the account. */
  issuer: string;
  subject: string;
  email: string | null;
  /** True only when the provider asserted `email_verified: true` for that e-mail. */
  emailVerified: boolean;
}

export type OidcFailure =
  | 'discovery' // the provider's metadata could not be fetched or is not for this issuer
  | 'state_mismatch' // the callback is not the answer to this browser's request (CSRF, stale tab)
  | 'provider_error' // the provider said no: error=access_denied, login_required, ...
  | 'token_exchange' // the token endpoint refused the code (spent, wrong verifier) or was unreachable
  | 'id_token_invalid' // the ID token failed validation (nonce, signature, audience, expiry)
  | 'invalid_response' // any other protocol violation in the callback or token response
  | 'userinfo' // the e-mail had to come from UserInfo and that call failed
  | 'missing_subject';

export class OidcError extends Error {
  override readonly name = 'OidcError';
  /** The provider's OAuth error code when it sent one (`access_denied`, `invalid_grant`, ...). */
  readonly providerError: string | undefined;

  readonly reason: OidcFailure;
  constructor(reason: OidcFailure, message: string, options: { cause?: unknown; providerError?: string | undefined } = {}) {
    super(message, { cause: options.cause });
    this.reason = reason;
    this.providerError = options.providerError;
  }
}

const SCOPE = 'openid email';

export class OidcClient {
  private readonly cfg: OidcConfig;
  private readonly config: oidc.Configuration;
  private constructor(cfg: OidcConfig, config: oidc.Configuration) {
    this.cfg = cfg;
    this.config = config;
  }

  static async discover(cfg: OidcConfig): Promise<OidcClient> {
    try {
      const config = await oidc.discovery(
        new URL(cfg.issuer),
        cfg.clientId,
        undefined,
        // client_secret_basic is the OIDC default every provider must accept.
        oidc.ClientSecretBasic(cfg.clientSecret),
        cfg.allowHttp ? { execute: [oidc.allowInsecureRequests] } : undefined,
      );
      return new OidcClient(cfg, config);
    } catch (err) {
      throw new OidcError('discovery', `OpenID discovery failed for ${cfg.issuer}`, { cause: err });
    }
  }

  get issuer(): string {
    return this.config.serverMetadata().issuer;
  }

  /** Where start()'s URL leads: the origin of the provider's authorization endpoint. */
  get authorizationOrigin(): string | null {
    const endpoint = this.config.serverMetadata().authorization_endpoint;
    return endpoint === undefined ? null : new URL(endpoint).origin;
  }

  async start(): Promise<{ url: string; transaction: OidcTransaction }> {
    const transaction: OidcTransaction = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
    };
    const url = oidc.buildAuthorizationUrl(this.config, {
      redirect_uri: this.cfg.redirectUri,
      response_type: 'code',
      scope: SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(transaction.codeVerifier),
      code_challenge_method: 'S256',
      state: transaction.state,
      nonce: transaction.nonce,
    });
    return { url: url.href, transaction };
  }

  async finish(callbackUrl: URL, transaction: OidcTransaction): Promise<OidcIdentity> {
    const params = callbackUrl.searchParams;
    // State first: an answer meant for another request must not even reveal what the provider said.
    if (!sameSecret(params.get('state'), transaction.state)) {
      throw new OidcError('state_mismatch', 'the callback state does not match this sign-in');
    }
    const error = params.get('error');
    if (error !== null) {
      const description = params.get('error_description');
      throw new OidcError('provider_error', `the provider refused the sign-in: ${error}${description ? ` (${description})` : ''}`, { providerError: error });
    }
    // Only the query is taken from the caller's URL: behind a proxy the request URL the server sees
    // is not the registered redirect URI, and the token request must repeat the latter exactly.
    const current = new URL(this.cfg.redirectUri);
    current.search = callbackUrl.search;

    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(this.config, current, {
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        pkceCodeVerifier: transaction.codeVerifier,
        idTokenExpected: true,
      });
    } catch (err) {
      throw classify(err, 'token_exchange');
    }
    const claims = tokens.claims();
    if (typeof claims?.sub !== 'string' || claims.sub === '') {
      throw new OidcError('missing_subject', 'the ID token carries no subject');
    }
    const email = 'email' in claims ? claims : await this.userInfo(tokens.access_token, claims.sub);
    return {
      issuer: this.issuer,
      subject: claims.sub,
      email: typeof email.email === 'string' && email.email !== '' ? email.email : null,
      // Strictly boolean: a string "true" or an absent claim is not a verification.
      emailVerified: typeof email.email === 'string' && email.email_verified === true,
    };
  }

  // Many providers put only `sub` in the ID token of a code flow and the scope's claims in UserInfo.
  private async userInfo(accessToken: string, subject: string): Promise<Record<string, unknown>> {
    if (this.config.serverMetadata().userinfo_endpoint === undefined) return {};
    try {
      return await oidc.fetchUserInfo(this.config, accessToken, subject);
    } catch (err) {
      throw classify(err, 'userinfo');
    }
  }
}

const ID_TOKEN_CODES = new Set<string>(['OAUTH_JWT_CLAIM_COMPARISON_FAILED', 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED', 'OAUTH_KEY_SELECTION_FAILED']);

function classify(err: unknown, phase: 'token_exchange' | 'userinfo'): OidcError {
  if (err instanceof oidc.ResponseBodyError) {
    return new OidcError(phase, `${phase === 'userinfo' ? 'UserInfo' : 'the token endpoint'} refused: ${err.error}`, { cause: err, providerError: err.error });
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return new OidcError('provider_error', `the provider refused the sign-in: ${err.error}`, { cause: err, providerError: err.error });
  }
  if (err instanceof oidc.ClientError && err.code !== undefined) {
    // openid-client wraps oauth4webapi's error, whose message names the offending claim or parameter.
    const detail = err.cause instanceof Error ? err.cause.message : err.message;
    if (ID_TOKEN_CODES.has(err.code)) return new OidcError('id_token_invalid', `ID token rejected: ${detail}`, { cause: err });
    return new OidcError(phase === 'userinfo' ? 'userinfo' : 'invalid_response', `unexpected response from the provider: ${detail}`, { cause: err });
  }
  return new OidcError(phase, `${phase === 'userinfo' ? 'UserInfo' : 'the token request'} failed: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
  });
}

// Hashing first gives equal lengths, so the comparison time says nothing about the expected value.
function sameSecret(got: string | null, expected: string): boolean {
  if (got === null) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(got), digest(expected));
}

/**
 * The provider as the website uses it: a name for its button, and a client discovered on first
 * use rather than at start-up, so a provider that is down when the server starts costs its users
 * a retry, not the server its start. A failed discovery is forgotten, so the next sign-in retries.
 */
export function lazyClient(cfg: OidcConfig & { readonly name: string }): {
  readonly name: string;
  client(): Promise<OidcClient>;
  formTargets(): readonly string[];
} {
  let pending: Promise<OidcClient> | null = null;
  let discovered: OidcClient | null = null;
  const issuerOrigin = new URL(cfg.issuer).origin;
  const client = (): Promise<OidcClient> => {
    pending ??= OidcClient.discover(cfg).then(
      (c) => (discovered = c),
      (err: unknown) => {
        pending = null;
        throw err;
      },
    );
    return pending;
  };
  return {
    name: cfg.name,
    client,
    /**
     * The origins the sign-in button's redirect leads to: the issuer's, and once discovered the
     * authorization endpoint's (almost always the same). Asking starts discovery, so the next page
     * knows the endpoint too.
     */
    formTargets() {
      if (discovered === null) client().catch(() => undefined);
      const auth = discovered?.authorizationOrigin ?? null;
      return auth === null || auth === issuerOrigin ? [issuerOrigin] : [issuerOrigin, auth];
    },
  };
}
