// Liveness, readiness and the API description.
import * as v from 'valibot';
import { unavailable } from '../errors.ts';
import { jsonReply } from '../reply.ts';
import { defineRoute } from './types.ts';

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
  description: '200 once a snapshot is loaded and the usage ledger is open, so the server can answer searches; 503 before.',
  tag: 'operations',
  access: 'public',
  params: noParams,
  produces: [{ type: 'application/json', schema: 'Health' }],
  errors: ['unavailable'],
  handle: (_req, _p, svc) => {
    const snap = svc.snapshots.require();
    if (!svc.meter.ready) throw unavailable('The usage ledger is not open; live routes cannot be metered yet.');
    return { ...jsonReply({ status: 'ready', snapshot: snap.ref.id }, [['Cache-Control', 'no-store']]), route: '/readyz' };
  },
});

export const openapiRoute = defineRoute({
  path: '/v1/openapi.json',
  summary: 'OpenAPI description',
  description: 'This document: OpenAPI 3.1, generated from the same schemas that validate requests.',
  tag: 'reference',
  access: 'public',
  params: noParams,
  produces: [{ type: 'application/json', schema: 'OpenApi' }],
  errors: [],
  handle: (_req, _p, svc) => ({ ...jsonReply(svc.openapi(), [['Cache-Control', 'public, max-age=300']]), route: '/v1/openapi.json' }),
});
