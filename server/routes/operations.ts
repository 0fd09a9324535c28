// Liveness, readiness and the API description.
import * as v from 'valibot';
import { unavailable } from '../errors.ts';
import { FixedAnswer } from '../fixed-answer.ts';
import { withListedValues } from '../openapi.ts';
import { jsonReply } from '../reply.ts';
import { defineRoute, type Services } from '../route.ts';

const noParams = v.object({});

export const healthzRoute = defineRoute({
  path: '/healthz',
  summary: 'Liveness',
  description: '200 while the process is up.',
  tag: 'operations',
  access: 'public',
  params: noParams,
  produces: [{ type: 'application/json', schema: 'Health' }],
  errors: [],
  handle: () => ({ ...jsonReply({ status: 'ok' }, [['Cache-Control', 'no-store']]), route: '/healthz' }),
});

export const readyzRoute = defineRoute({
  path: '/readyz',
  summary: 'Readiness',
  description:
    '200 once a snapshot is loaded and the usage ledger is open, so the server can answer searches; 503 before, and while a shared (PostgreSQL) ledger cannot be reached. `snapshot_pending` names a snapshot the shared ledger asked for that this node could not load: it keeps serving `snapshot`.',
  tag: 'operations',
  access: 'public',
  params: noParams,
  produces: [{ type: 'application/json', schema: 'Health' }],
  errors: ['unavailable'],
  handle: (_req, _p, svc) => {
    const snap = svc.snapshots.require();
    if (!svc.meter.ready) throw unavailable(`The usage ledger is not available (${svc.meter.status}); live routes cannot be metered.`);
    const pending = svc.snapshots.pending;
    return {
      ...jsonReply({ status: 'ready', snapshot: snap.ref.id, ...(pending ? { snapshot_pending: pending } : {}) }, [['Cache-Control', 'no-store']]),
      route: '/readyz',
    };
  },
});

/**
 * The document as served: the one built at start-up (svc.openapi) with the values of the current
 * snapshot where the document says a route lists them, rendered once per snapshot and server.
 */
const served = new WeakMap<Buffer, { readonly snapshot: string | null; readonly answer: FixedAnswer }>();

function openapiAnswer(svc: Services): FixedAnswer {
  const base = svc.openapi();
  const snap = svc.snapshots.current;
  const id = snap?.ref.id ?? null;
  let memo = served.get(base);
  if (memo === undefined || memo.snapshot !== id) {
    // Before the first snapshot the lists are unknown: the markers stay, without an enum.
    const body = snap ? Buffer.from(JSON.stringify(withListedValues(JSON.parse(base.toString('utf8')), { '/v1/cities': snap.manifest.cities }))) : base;
    memo = { snapshot: id, answer: new FixedAnswer(body) };
    served.set(base, memo);
  }
  return memo.answer;
}

export const openapiRoute = defineRoute({
  path: '/v1/openapi.json',
  summary: 'OpenAPI description',
  description: 'This document: OpenAPI 3.1, generated from the same schemas that validate requests.',
  tag: 'reference',
  access: 'public',
  params: noParams,
  produces: [{ type: 'application/json', schema: 'OpenApi' }],
  errors: [],
  handle: (req, _p, svc) => openapiAnswer(svc).reply(req.http, 'public, max-age=300', '/v1/openapi.json'),
});
