// How quota state is told to clients: in headers only, so that the body of a poll never changes
// with the caller's running usage (identical polls, identical bodies and ETags).
//   X-Quota-Limit / X-Quota-Remaining: records this month ("unlimited" on plans without a cap);
//   X-Quota-Reset: Unix seconds of the next reset (the first instant of next month, Pacific time);
//   RateLimit-Policy / RateLimit: the IETF httpapi-ratelimit-headers draft, for the monthly quota.
import type { QuotaState } from '../workers/protocol.ts';
import { ApiError } from './errors.ts';
import { isoLocal } from '../workers/meter/period.ts';

type Headers = (readonly [string, string])[];

export function quotaHeaders(q: QuotaState, nowMs: number): Headers {
  const resetS = Math.floor(q.resetMs / 1000);
  const toReset = Math.max(0, Math.ceil((q.resetMs - nowMs) / 1000));
  const headers: Headers = [
    ['X-Quota-Limit', q.limit === null ? 'unlimited' : String(q.limit)],
    ['X-Quota-Remaining', q.remaining === null ? 'unlimited' : String(q.remaining)],
    ['X-Quota-Reset', String(resetS)],
  ];
  if (q.limit !== null && q.remaining !== null) {
    const window = Math.round((q.resetMs - q.periodStartMs) / 1000);
    headers.push(['RateLimit-Policy', `"${q.plan}";q=${q.limit};w=${window}`], ['RateLimit', `"${q.plan}";r=${q.remaining};t=${toReset}`]);
  }
  return headers;
}

export function quotaExhausted(q: QuotaState, nowMs: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil((q.resetMs - nowMs) / 1000));
  return new ApiError(
    'quota_exhausted',
    `The ${q.plan} plan's ${q.limit ?? 0} records for this month are used up; the quota resets at ${isoLocal(q.resetMs)}. Check /v1/usage, or move to a plan with more records.`,
    undefined,
    [['Retry-After', String(retryAfter)], ...quotaHeaders(q, nowMs)],
  );
}
