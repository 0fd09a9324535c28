// The website's browser-side security primitives for the account pages (issue 16): its cookies,
// opaque tokens, CSRF tokens and the same-origin check of a POST. Sessions themselves live in the
// accounts store (hashed); this module never sees a database. The API host reads no cookie at all:
// server/http.ts copies the Cookie header, and only server/web/ looks at it.
import { createHmac, createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse, serialize } from 'cookie';
import type { Request } from '../http.ts';

/** 256 bits from the CSPRNG, base64url: session tokens, pre-session ids, sign-in tokens. */
export const newToken = (): string => randomBytes(32).toString('base64url');

/** What the store keeps of a token: its SHA-256, hex. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

export interface CookieNames {
  /** The signed-in session. */
  readonly session: string;
  /** A random id given before sign-in: what a sign-in link and the CSRF token are bound to. */
  readonly pre: string;
  /** The OpenID Connect transaction between the redirect to the provider and its callback. */
  readonly oidc: string;
  /** Whether cookies get Secure (and the __Host- prefix): whenever the website is https. */
  readonly secure: boolean;
}

export function cookieNames(webBaseUrl: string): CookieNames {
  // __Host- cookies must be Secure, Path=/ and carry no Domain: the browser then refuses them from
  // any other host or over http, so a sibling subdomain cannot plant a session (fixation).
  const secure = new URL(webBaseUrl).protocol === 'https:';
  const prefix = secure ? '__Host-' : '';
  return { session: `${prefix}fe_session`, pre: `${prefix}fe_pre`, oidc: `${prefix}fe_oidc`, secure };
}

export function readCookies(req: Request): Record<string, string | undefined> {
  const header = req.headers.cookie;
  return header ? parse(header) : {};
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/, Secure on https; a session cookie when maxAgeS is null. */
export function setCookie(names: CookieNames, name: string, value: string, maxAgeS: number | null): string {
  return serialize(name, value, { httpOnly: true, sameSite: 'lax', path: '/', secure: names.secure, ...(maxAgeS === null ? {} : { maxAge: maxAgeS }) });
}

export function clearCookie(names: CookieNames, name: string): string {
  return serialize(name, '', { httpOnly: true, sameSite: 'lax', path: '/', secure: names.secure, maxAge: 0 });
}

/**
 * Synchronizer tokens without server state: the HMAC of what the form is bound to (the session's
 * id, or before sign-in the pre-session id), so a token is worthless to any other browser.
 */
export class Csrf {
  private readonly key: () => Buffer;
  /** `secret` is asked at every use: on the shared ledger the cluster's key replaces the node's own once PostgreSQL answers. */
  constructor(key: () => Buffer) {
    this.key = key;
  }

  private get secret(): Buffer {
    return this.key();
  }

  token(binding: string): string {
    return createHmac('sha256', this.secret).update('csrf\0').update(binding).digest('base64url');
  }

  check(binding: string, presented: string | null | undefined): boolean {
    if (!presented) return false;
    const want = Buffer.from(this.token(binding));
    const got = Buffer.from(presented);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** A signed value (the OIDC transaction in its cookie): value.mac, refused if altered. */
  sign(value: string): string {
    return `${value}.${createHmac('sha256', this.secret).update('signed\0').update(value).digest('base64url')}`;
  }

  unsign(signed: string | undefined): string | null {
    return this.verified(signed, (value) => this.sign(value));
  }

  /**
   * A signed value whose MAC also covers `context`, which the value does not carry (a client
   * address): it verifies only where the context is the same again.
   */
  signFor(value: string, context: string): string {
    return `${value}.${createHmac('sha256', this.secret).update('bound\0').update(value).update('\0').update(context).digest('base64url')}`;
  }

  unsignFor(signed: string | undefined, context: string): string | null {
    return this.verified(signed, (value) => this.signFor(value, context));
  }

  private verified(signed: string | undefined, sign: (value: string) => string): string | null {
    if (!signed) return null;
    const dot = signed.lastIndexOf('.');
    if (dot <= 0) return null;
    const value = signed.slice(0, dot);
    const want = Buffer.from(sign(value));
    const got = Buffer.from(signed);
    return got.length === want.length && timingSafeEqual(got, want) ? value : null;
  }
}

/**
 * The pre-session id (what a sign-in link, the OIDC transaction and the forms before sign-in are
 * bound to), as its cookie carries it. Over https the __Host- prefix already keeps anyone but this
 * origin from setting the cookie, and the id is plain random. Over plain http anyone who can make
 * the browser store a cookie for the host (a sibling subdomain, a page on the same host name served
 * elsewhere, an injected Set-Cookie) could plant an id they know, after asking for a sign-in link
 * to their own address with it: the victim's browser would then finish the attacker's sign-in
 * (login CSRF). So over http the id is `random.issuedS.mac`, the MAC also covering the client
 * address that was given it: an id planted from anywhere else, or older than `maxAgeS`, does not
 * verify here, and is ignored and replaced. What is left is an attacker behind the same address
 * (one NAT) as the victim; README says so.
 */
export class PreSessions {
  private readonly csrf: Csrf;
  private readonly names: CookieNames;
  private readonly maxAgeS: number;
  constructor(csrf: Csrf, names: CookieNames, maxAgeS: number) {
    this.csrf = csrf;
    this.names = names;
    this.maxAgeS = maxAgeS;
  }

  private context = (clientAddress: string): string => `pre\0${clientAddress}`;

  /** A new id for a browser at `clientAddress`. */
  issue(clientAddress: string, nowMs: number): string {
    if (this.names.secure) return newToken();
    return this.csrf.signFor(`${newToken()}.${Math.floor(nowMs / 1000)}`, this.context(clientAddress));
  }

  /** Whether `value` is an id this server gave a browser at `clientAddress`, and not stale (over http). */
  valid(value: string | undefined, clientAddress: string, nowMs: number): boolean {
    if (!value) return false;
    if (this.names.secure) return true;
    const unsigned = this.csrf.unsignFor(value, this.context(clientAddress));
    if (unsigned === null) return false;
    const ageS = nowMs / 1000 - Number(unsigned.slice(unsigned.lastIndexOf('.') + 1));
    // A minute's grace below zero: another node of the cluster, whose clock runs a little ahead.
    return ageS >= -60 && ageS < this.maxAgeS;
  }
}

/**
 * A state-changing request must come from our own pages: its Origin is the website's, or, from a
 * browser that sends no Origin, Sec-Fetch-Site says same-origin. Neither header → refused too: every
 * browser that runs our pages sends at least one of them on a form POST.
 */
export function sameOrigin(req: Request, webBaseUrl: string): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null') return origin === new URL(webBaseUrl).origin;
  return req.headers['sec-fetch-site'] === 'same-origin';
}

/** The fields of an application/x-www-form-urlencoded body; null when the body is not a form. */
export function formFields(req: Request): URLSearchParams | null {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded' || req.body === null) return null;
  return new URLSearchParams(Buffer.from(req.body).toString('utf8'));
}
