// A real OpenID provider (oidc-provider 8.x) on loopback, for testing our relying party end to end.
//
// How a test signs in without a browser: the provider's built-in development interactions
// (`features.devInteractions`) are left on. They are a login form (any login name is accepted and
// becomes the subject) followed by a consent form, both posted to /interaction/:uid, and an
// /interaction/:uid/abort link that ends the request with error=access_denied. `authorize()` walks
// the redirects with plain fetch and a tiny cookie jar (the provider binds each interaction to
// signed cookies), reads which form the provider rendered, posts it, and stops at the first
// redirect that leaves the provider: that is the callback URL a browser would have been sent to.
// Writing our own interaction routes would be more code exercising the same provider API.
import http from 'node:http';
import type net from 'node:net';
import { generateKeyPairSync, randomBytes } from 'node:crypto';

export interface IdpAccount {
  email?: string;
  email_verified?: boolean;
}

export interface IdpOptions {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  accounts: Record<string, IdpAccount>;
  /** true puts the e-mail claims in the ID token; false (the provider's default) leaves them to UserInfo. */
  claimsInIdToken?: boolean;
}

export interface Idp {
  issuer: string;
  /** Follow an authorization URL through the provider; return the callback URL it redirects to. */
  authorize(url: string, as: { login: string } | { abort: true }): Promise<URL>;
  close(): Promise<void>;
}

// oidc-provider ships no types; this is the slice of its surface the test uses.
type ProviderCtor = new (
  issuer: string,
  config: Record<string, unknown>,
) => {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => void;
};

export async function startIdp(opts: IdpOptions): Promise<Idp> {
  // A specifier typed as string, not a literal, so the compiler does not look for its missing types.
  const specifier: string = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as { default: ProviderCtor };
  // The issuer must name the port, so listen first and attach the provider once it exists (nobody
  // knows the port before then, so no request can arrive unanswered).
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  // ES256 rather than the default RS256: an RSA key takes a noticeable fraction of a second to make.
  const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: opts.clientId,
        client_secret: opts.clientSecret,
        redirect_uris: [opts.redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        id_token_signed_response_alg: 'ES256',
      },
    ],
    pkce: { methods: ['S256'], required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    conformIdTokenClaims: !(opts.claimsInIdToken ?? false),
    findAccount: (_ctx: unknown, sub: string) => {
      const account = opts.accounts[sub];
      return account && { accountId: sub, claims: () => ({ sub, ...account }) };
    },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    jwks: { keys: [{ ...signingKey, use: 'sig', kid: 'test' }] },
    // Explicit lifetimes only to keep the provider from printing a notice per artifact kind.
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    features: { devInteractions: { enabled: true } },
  });
  server.on('request', provider.callback());

  return {
    issuer,
    authorize: (url, as) => walk(new URL(url), new URL(issuer).origin, as),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function walk(start: URL, origin: string, as: { login: string } | { abort: true }): Promise<URL> {
  const jar = new Map<string, string>();
  let next = start;
  for (let hop = 0; hop < 12; hop++) {
    if (next.origin !== origin) return next;
    const res = /^\/interaction\/[^/]+$/.test(next.pathname) ? await interact(next, jar, as) : await send(next, jar);
    const location = res.headers.get('location');
    if (!location) throw new Error(`provider answered ${res.status} at ${next.pathname}: ${(await res.text()).slice(0, 500)}`);
    next = new URL(location, next);
  }
  throw new Error('too many redirects inside the provider');
}

async function interact(at: URL, jar: Map<string, string>, as: { login: string } | { abort: true }): Promise<Response> {
  if ('abort' in as) return send(new URL(`${at.pathname}/abort`, at), jar);
  const page = await (await send(at, jar)).text();
  const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
  if (prompt !== 'login' && prompt !== 'consent') throw new Error(`unexpected interaction page: ${page.slice(0, 300)}`);
  const form = new URLSearchParams(prompt === 'login' ? { prompt, login: as.login, password: 'any' } : { prompt });
  return send(at, jar, form);
}

async function send(url: URL, jar: Map<string, string>, form?: URLSearchParams): Promise<Response> {
  const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
  const res = await fetch(url, form ? { method: 'POST', body: form, headers, redirect: 'manual' } : { headers, redirect: 'manual' });
  for (const line of res.headers.getSetCookie()) remember(jar, line);
  return res;
}

// Paths are ignored (every cookie goes everywhere on the provider's origin); the provider tolerates
// extra cookies, and clearing is the only attribute that matters to it.
function remember(jar: Map<string, string>, line: string): void {
  const [pair = '', ...attrs] = line.split(';');
  const eq = pair.indexOf('=');
  const name = pair.slice(0, eq).trim();
  const value = pair.slice(eq + 1).trim();
  const expires = attrs.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith('expires='));
  const expired = expires !== undefined && Date.parse(expires.slice('expires='.length)) <= Date.now();
  if (!value || expired) jar.delete(name);
  else jar.set(name, value);
}
