// Building replies: JSON bodies and RFC 9457 problems, with the headers every answer of a kind carries.
import { problem, type ApiError, type ErrorCode, type ParamError } from './errors.ts';
import type { Reply } from './http.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json';

type Headers = readonly (readonly [string, string])[];

export function jsonReply(body: Uint8Array | string | object, headers: Headers = [], status = 200): Reply {
  const bytes = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  return { status, headers: [['Content-Type', JSON_TYPE], ...headers], body: bytes };
}

export function problemReply(
  webBaseUrl: string,
  code: ErrorCode,
  detail: string,
  errors?: readonly ParamError[],
  headers: Headers = [],
  status?: number,
): Reply {
  const p = problem(webBaseUrl, code, detail, errors, status);
  const extra: (readonly [string, string])[] = [...headers];
  // RFC 6750: a 401 names the scheme, and says when the token itself was refused.
  if (code === 'missing_api_key') extra.push(['WWW-Authenticate', 'Bearer']);
  if (code === 'invalid_api_key') extra.push(['WWW-Authenticate', 'Bearer error="invalid_token"']);
  return { status: p.status, headers: [['Content-Type', PROBLEM_TYPE], ['Cache-Control', 'no-store'], ...extra], body: JSON.stringify(p) };
}

export function errorReply(webBaseUrl: string, err: ApiError): Reply {
  return problemReply(webBaseUrl, err.code, err.detail, err.errors, err.headers);
}
