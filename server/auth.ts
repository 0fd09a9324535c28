// API keys on live routes: which key was presented (Authorization: Bearer, or api_key), and whose
// it is. Keys are looked up by their SHA-256 in the metering thread's mirrored table, so a key is
// never compared as a string and never stored; a key this thread has not heard of is asked about
// once more before it is refused (it may have been created a moment ago).
import { KEY_FORMAT, keyHash } from '../core/keys.ts';
import { ApiError, unavailable } from './errors.ts';
import type { Request } from './http.ts';
import type { Meter, MeterFailure } from './meter.ts';
import { RateLimiter } from './ratelimit.ts';
import type { KeyInfo, Plan } from '../ledger/accounts.ts';

/** Who is calling: the key and the organization it belongs to. */
export interface Account {
  readonly keyId: string;
  readonly orgId: string;
  readonly orgName: string;
  readonly plan: Plan;
}

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** The query parameter that may carry the key instead of the header: the document's apiKey scheme, not a parameter of any route. */
export const API_KEY_PARAM = 'api_key';

const toAccount = (k: KeyInfo): Account => ({ keyId: k.keyId, orgId: k.orgId, orgName: k.orgName, plan: k.plan });

function invalid(detail: string): ApiError {
  return new ApiError('invalid_api_key', detail);
}

/** What the metering thread refused, as the problem the client gets. */
export function meterError(f: MeterFailure): ApiError {
  return f.code === 'invalid_api_key' ? invalid(f.detail) : unavailable(f.detail);
}

/** The key the request carries, from the Authorization header or the api_key parameter. */
export function presentedKey(req: Request, apiKeyParam: string | undefined): string {
  const header = req.headers.authorization;
  let fromHeader: string | undefined;
  if (header !== undefined && header !== '') {
    const m = BEARER.exec(header);
    if (!m) throw invalid('The Authorization header must read "Bearer <API key>".');
    fromHeader = m[1];
  }
  if (fromHeader !== undefined && apiKeyParam !== undefined && apiKeyParam !== fromHeader) {
    throw new ApiError('invalid_parameter', 'The api_key parameter and the Authorization header carry different keys; send one key, in one of them.', [
      { param: 'api_key', message: 'differs from the key in the Authorization header; send one key' },
    ]);
  }
  const key = fromHeader ?? apiKeyParam;
  if (key === undefined || key === '') {
    throw new ApiError(
      'missing_api_key',
      'This route needs an API key: send "Authorization: Bearer <key>" or the api_key parameter. Get a key on the website\'s account page (/account), or on your own server with `family-events keys create`.',
    );
  }
  return key;
}

const KEY_REFUSED_REVOKED = 'This API key has been revoked; use another key of your organization, or create a new one.';

/** The account of a key, or why the key is refused. */
function verdict(k: KeyInfo | null | undefined): Account {
  if (!k) throw invalid("This API key is not recognised. Check it was copied whole, or create one on the website's account page (/account).");
  if (k.revoked) throw invalid(KEY_REFUSED_REVOKED);
  return toAccount(k);
}

/** Failed key checks one client address may cause a minute (a token bucket: one back every 3 s). */
export const FAILED_KEY_CHECKS_PER_MINUTE = 20;

/**
 * Failed key checks per client address (as server/http.ts resolves it, X-Forwarded-For's last hop
 * with TRUST_PROXY). Past FAILED_KEY_CHECKS_PER_MINUTE, the address's keys are checked only
 * against this thread's mirror of the keys: a valid key still passes (a neighbour behind the same
 * NAT who mistypes a key must not lock the office out), anything else is 429
 * too_many_invalid_keys with Retry-After, without the metering thread's lookup or a 401. Guessing
 * a key was never the risk (40 base62 characters, 238 bits); the flood is: thousands of failed
 * checks a second, each a lookup in the metering thread and a 401, and a client looping on a
 * revoked key is told to stop. Requests without a key are not checks and never count. Per
 * process: behind several nodes each throttles on its own (nginx's limit_req adds a cluster-wide bound).
 */
export class FailedKeyChecks {
  private readonly buckets = new RateLimiter(FAILED_KEY_CHECKS_PER_MINUTE);
  /** Per address, the unknown keys being looked up: each may turn out a failure, so each counts until it is known. */
  private readonly pending = new Map<string, Set<string>>();
  /** Per key hash, the lookup in flight: a burst of one new key asks the thread once. */
  private readonly inflight = new Map<string, Promise<KeyInfo | null | MeterFailure>>();

  /** The refusal for an address past its failures (lookups in flight included), or null while it may have its keys checked. */
  refusal(req: Request): ApiError | null {
    const v = this.buckets.peek(req.remoteAddress);
    if (v.allowed && v.remaining > (this.pending.get(req.remoteAddress)?.size ?? 0)) return null;
    return new ApiError(
      'too_many_invalid_keys',
      `This address presented ${v.limit} keys that failed in the last minute; check the key you send (a valid key still works), then retry in ${Math.max(1, v.retryAfterS)} s.`,
      undefined,
      [['Retry-After', String(Math.max(1, v.retryAfterS))]],
    );
  }

  /** Counts `err` against the address when it is a failed key check; returns it to be thrown. */
  counted(req: Request, err: unknown): unknown {
    if (err instanceof ApiError && err.code === 'invalid_api_key') this.buckets.take(req.remoteAddress);
    return err;
  }

  /**
   * The thread's answer for a key this node has not mirrored. Counted as pending against the
   * address while it is out: counted only after, a burst of different unknown keys all in flight at
   * once would pass the limit by as many; counted before, a burst of one valid new key would lock
   * its own address out. Requests for the same key share one lookup and count once.
   */
  lookup(meter: Meter, req: Request, hash: string): Promise<KeyInfo | null | MeterFailure> {
    const address = req.remoteAddress;
    let p = this.inflight.get(hash);
    if (p === undefined) {
      p = meter.lookup(hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, p);
    }
    let keys = this.pending.get(address);
    if (keys === undefined) this.pending.set(address, (keys = new Set()));
    keys.add(hash);
    return p.finally(() => {
      keys.delete(hash);
      if (keys.size === 0 && this.pending.get(address) === keys) this.pending.delete(address);
    });
  }

  close(): void {
    this.buckets.close();
  }
}

/** The account of the key `req` presents; throws the problem (401, or 429 for an address past its failed checks). */
export function authenticate(meter: Meter, req: Request, apiKeyParam: string | undefined, failures: FailedKeyChecks): Account | Promise<Account> {
  let key: string;
  try {
    key = presentedKey(req, apiKeyParam);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'invalid_api_key') throw failures.refusal(req) ?? failures.counted(req, err);
    throw err;
  }
  const hash = KEY_FORMAT.test(key) ? keyHash(key) : null;
  const known = hash === null ? undefined : meter.key(hash);
  // The hot path: a key this thread knows as valid passes without looking at the address.
  if (known !== undefined && !known.revoked) return toAccount(known);
  const refused = failures.refusal(req);
  if (refused) throw refused;
  if (hash === null)
    throw failures.counted(req, invalid('That is not an API key: keys read bsc_live_ followed by at least 32 letters and digits. Check it was copied whole.'));
  if (known !== undefined) throw failures.counted(req, invalid(KEY_REFUSED_REVOKED));
  return failures.lookup(meter, req, hash).then((r) => {
    if (r !== null && 'ok' in r) throw meterError(r);
    try {
      return verdict(r);
    } catch (err) {
      throw failures.counted(req, err);
    }
  });
}
