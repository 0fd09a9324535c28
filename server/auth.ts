// API keys on live routes: which key was presented (Authorization: Bearer, or api_key), and whose
// it is. Keys are looked up by their SHA-256 in the metering thread's mirrored table, so a key is
// never compared as a string and never stored; a key this thread has not heard of is asked about
// once more before it is refused (it may have been created a moment ago).
import { KEY_FORMAT, keyHash } from '../workers/meter/keys.ts';
import type { KeyInfo, Plan } from '../workers/protocol.ts';
import { ApiError, unavailable } from './errors.ts';
import type { Request } from './http.ts';
import type { Meter, MeterFailure } from './meter.ts';

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
    throw new ApiError('missing_api_key', 'This route needs an API key: send "Authorization: Bearer <key>" or the api_key parameter. Get a key on the website\'s account page (/account), or on your own server with `family-events keys create`.');
  }
  return key;
}

/** The account of a key, or why the key is refused. */
function verdict(k: KeyInfo | null | undefined): Account {
  if (!k) throw invalid('This API key is not recognised. Check it was copied whole, or create one on the website\'s account page (/account).');
  if (k.revoked) throw invalid('This API key has been revoked; use another key of your organization, or create a new one.');
  return toAccount(k);
}

export function authenticate(meter: Meter, req: Request, apiKeyParam: string | undefined): Account | Promise<Account> {
  const key = presentedKey(req, apiKeyParam);
  if (!KEY_FORMAT.test(key)) throw invalid('That is not an API key: keys read bsc_live_ followed by at least 32 letters and digits. Check it was copied whole.');
  const hash = keyHash(key);
  const known = meter.key(hash);
  if (known !== undefined) return verdict(known);
  return meter.lookup(hash).then((r) => {
    if (r !== null && 'ok' in r) throw meterError(r);
    return verdict(r);
  });
}
