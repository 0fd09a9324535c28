// The one error table. Every non-2xx/3xx answer is RFC 9457 problem+json built from a row here;
// routes, the HTTP adapter and the OpenAPI document all read it, and a test checks that each code
// is documented. Codes are stable API: a retired code keeps its row (marked retired) and is never reused.

export const ERRORS = {
  invalid_parameter: { status: 400, title: 'Invalid parameter' },
  unknown_parameter: { status: 400, title: 'Unknown parameter' },
  missing_api_key: { status: 401, title: 'Missing API key' },
  invalid_api_key: { status: 401, title: 'Invalid API key' },
  category_not_in_plan: { status: 403, title: 'Category not in plan' },
  not_found: { status: 404, title: 'Not found' },
  // A change-feed cursor older than the deletions the server keeps (/v1/changes): sync again from the start.
  cursor_expired: { status: 410, title: 'Cursor expired' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  // 414 for a URL over the limit; 431 (Request Header Fields Too Large) for headers over it.
  request_too_large: { status: 414, title: 'Request too large', otherStatuses: [431] },
  quota_exhausted: { status: 429, title: 'Quota exhausted' },
  // The month is not spent: the records left are held by the organization's other requests in flight.
  quota_held: { status: 429, title: 'Quota held by requests in flight' },
  rate_limited: { status: 429, title: 'Rate limited' },
  // One client address presented too many keys that failed (unknown, revoked, malformed) in a minute.
  too_many_invalid_keys: { status: 429, title: 'Too many invalid keys' },
  internal: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string; otherStatuses?: readonly number[] }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ParamError {
  readonly param: string;
  readonly message: string;
}

export interface Problem {
  /** `${WEB_BASE_URL}/docs/errors#${code}`: where the website documents the code. */
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ErrorCode;
  readonly errors?: readonly ParamError[];
}

/** A code's statuses: its own and, for a few, the alternatives its table row names. */
export function statusesOf(code: ErrorCode): readonly number[] {
  const row: { status: number; otherStatuses?: readonly number[] } = ERRORS[code];
  return [row.status, ...(row.otherStatuses ?? [])];
}

export function problem(webBaseUrl: string, code: ErrorCode, detail: string, errors?: readonly ParamError[], status?: number): Problem {
  const row = ERRORS[code];
  if (status !== undefined && !statusesOf(code).includes(status)) throw new Error(`${code} is never answered with ${status}`);
  return {
    type: `${webBaseUrl}/docs/errors#${code}`,
    title: row.title,
    status: status ?? row.status,
    detail,
    code,
    ...(errors && errors.length ? { errors } : {}),
  };
}

/**
 * A failure that a handler raises to end the request with a problem. Anything else thrown inside a
 * handler becomes a logged 500 `internal` whose body says nothing about the cause.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors?: readonly ParamError[] | undefined;
  /** Extra response headers, e.g. Retry-After or Allow. */
  readonly headers: readonly (readonly [string, string])[];
  constructor(code: ErrorCode, detail: string, errors?: readonly ParamError[], headers: readonly (readonly [string, string])[] = []) {
    // An ApiError is an answer (a 4xx, or a 503 to retry), never logged with a stack: capturing one
    // cost a fifth of the main thread's time while a flood of over-rate requests was refused.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    this.code = code;
    this.detail = detail;
    this.errors = errors;
    this.headers = headers;
    Error.stackTraceLimit = limit;
  }

  toProblem(webBaseUrl: string): Problem {
    return problem(webBaseUrl, this.code, this.detail, this.errors);
  }
}

/** 503 for a passing condition (busy pool, ledger not answering): retry in a second. */
export function unavailable(detail: string): ApiError {
  return new ApiError('unavailable', detail, undefined, [['Retry-After', '1']]);
}
