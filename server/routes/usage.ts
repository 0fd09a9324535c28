// /v1/usage: where the caller's organization stands this month. Answered by the metering thread
// from the ledger (after any charge queued before it), so it agrees with the quota headers.
// Consumes no quota and is not counted as a request.
import * as v from 'valibot';
import { meterError } from '../auth.ts';
import { quotaHeaders } from '../quota.ts';
import { jsonReply } from '../reply.ts';
import { defineRoute } from '../route.ts';

export const usageRoute = defineRoute({
  path: '/v1/usage',
  summary: 'Usage of your organization',
  description:
    'The organization of the key, its plan (monthly record limit, excluded categories, attribution), the current period (a calendar month in America/Los_Angeles) and when it resets, ' +
    'records used and remaining, requests counted, and records and requests per day of the period. Consumes no quota.',
  tag: 'account',
  access: 'live',
  params: v.object({}),
  produces: [{ type: 'application/json', schema: 'Usage' }],
  errors: ['unavailable'],
  handle: async (req, _params, svc) => {
    const account = req.account;
    if (!account) throw new Error('/v1/usage was reached without an account');
    const nowMs = svc.config.now().getTime();
    const r = await svc.meter.usage(account.keyId, nowMs);
    if (!r.ok) throw meterError(r);
    return { ...jsonReply(r.usage, [['Cache-Control', 'no-store'], ...quotaHeaders(r.quota, nowMs)]), route: '/v1/usage' };
  },
});
