// How quota state is told to clients: in headers only, so that the body of a poll never changes
// with the caller's running usage (identical polls, identical bodies and ETags).
//   X-Quota-Limit / X-Quota-Remaining: records this month, and those not charged yet ("unlimited"
//   on plans without a cap);
//   X-Quota-Reset: Unix seconds of the next reset (the first instant of next month, Pacific time);
//   RateLimit-Policy / RateLimit: the IETF httpapi-ratelimit-headers draft, for the monthly quota.
import { ApiError } from './errors.ts';
import { isoLocal } from '../ledger/period.ts';
import type { QuotaState } from '../ledger/accounts.ts';

type Headers = (readonly [string, string])[];

/** Seconds a request refused because its organization's other requests hold the records is told to wait. */
export const QUOTA_HELD_RETRY_S = 2;

/**
 * Records of the month not charged yet: what /v1/usage says remains. Records set aside for answers
 * still being computed are not subtracted (QuotaState.remaining, what the thread can grant now,
 * does): most of a hold comes back when its answer is shorter than its limit, so a header counting
 * it would tell a client the month is spent when it is not.
 */
function unspent(q: QuotaState): number | null {
  return q.limit === null ? null : Math.max(0, q.limit - q.used);
}

export function quotaHeaders(q: QuotaState, nowMs: number): Headers {
  const resetS = Math.floor(q.resetMs / 1000);
  const toReset = Math.max(0, Math.ceil((q.resetMs - nowMs) / 1000));
  const remaining = unspent(q);
  const headers: Headers = [
    ['X-Quota-Limit', q.limit === null ? 'unlimited' : String(q.limit)],
    ['X-Quota-Remaining', remaining === null ? 'unlimited' : String(remaining)],
    ['X-Quota-Reset', String(resetS)],
  ];
  if (q.limit !== null && remaining !== null) {
    const window = Math.round((q.resetMs - q.periodStartMs) / 1000);
    headers.push(['RateLimit-Policy', `"${q.plan}";q=${q.limit};w=${window}`], ['RateLimit', `"${q.plan}";r=${remaining};t=${toReset}`]);
  }
  return headers;
}

/**
 * Why nothing could be granted: the month is spent (429 quota_exhausted, Retry-After to the reset),
 * or, the month not spent, every record left is held by the organization's other requests in
 * flight past the wait (429 quota_held, Retry-After a few seconds: those answers settle by then).
 */
export function quotaRefused(q: QuotaState, nowMs: number): ApiError {
  const left = unspent(q);
  if (left !== null && left > 0) {
    return new ApiError(
      'quota_held',
      `The ${left} records left of this month's ${q.limit ?? 0} are all set aside for other requests of your organization still being answered; retry in ${QUOTA_HELD_RETRY_S} s, or send fewer requests at once.`,
      undefined,
      [['Retry-After', String(QUOTA_HELD_RETRY_S)], ...quotaHeaders(q, nowMs)],
    );
  }
  const retryAfter = Math.max(1, Math.ceil((q.resetMs - nowMs) / 1000));
  return new ApiError(
    'quota_exhausted',
    `The ${q.plan} plan's ${q.limit ?? 0} records for this month are used up; the quota resets at ${isoLocal(q.resetMs)}. Check /v1/usage, or move to a plan with more records.`,
    undefined,
    [['Retry-After', String(retryAfter)], ...quotaHeaders(q, nowMs)],
  );
}
