// A route is data: its path, its parameters as a valibot schema, what it answers, and a handler
// that receives the parsed parameters (types inferred from the schema, never written twice).
// server/app.ts dispatches to these; server/openapi.ts documents them from the same fields.
import type * as v from 'valibot';
import type { Config } from '../core/config.ts';
import type { ErrorCode } from './errors.ts';
import type { Reply, Request } from './http.ts';
import type { Account } from './auth.ts';
import type { ResponseCache } from './cache.ts';
import type { Meter } from './meter.ts';
import type { Metrics } from './metrics.ts';
import type { QueryPool } from './pool.ts';
import type { RateLimiter } from './ratelimit.ts';
import type { ParamRule } from './params.ts';
import type { Snapshots } from './snapshots.ts';

/** What handlers may use. Built once at start-up (server/start/main.ts). */
export interface Services {
  readonly config: Config;
  readonly snapshots: Snapshots;
  readonly pool: QueryPool;
  readonly cache: ResponseCache;
  readonly demoLimiter: RateLimiter;
  /** Per API key, at each plan's rate. */
  readonly keyLimiter: RateLimiter;
  /** The metering thread: keys, plans, quota. */
  readonly meter: Meter;
  readonly metrics: Metrics;
  /** The OpenAPI document's bytes (it is generated from the route table, so it is passed in). */
  readonly openapi: () => Buffer;
}

export interface RouteRequest {
  readonly http: Request;
  /** '' on the API host, '/api' on the website host's twin. */
  readonly prefix: '' | '/api';
  /** The authenticated caller on live routes; null elsewhere. */
  readonly account: Account | null;
  /** The path parameter's value on a templated route (e.g. the {id} of /v1/events/{id}); '' elsewhere. */
  readonly pathParam: string;
}

/** A route's one path parameter: the last segment of its path, as `{name}`. */
export interface PathParam {
  readonly name: string;
  readonly description: string;
  /** A value that cannot match is a 404 not_found (nothing by that name can exist), not a 400. */
  readonly schema: v.GenericSchema<string, string>;
}

export interface RouteDef<S extends v.GenericSchema<Partial<Record<string, string>>, unknown>> {
  /** The path; a templated one ends in /{name} and declares `pathParam`. */
  readonly path: string;
  readonly pathParam?: PathParam;
  readonly summary: string;
  readonly description: string;
  readonly tag: 'events' | 'account' | 'reference' | 'operations';
  /** public: no key; demo: no key, per-address rate limit; live: needs a key, metered. */
  readonly access: 'public' | 'demo' | 'live';
  readonly params: S;
  /** Content types of the 200 answer, and the component schema describing it. */
  readonly produces: readonly { readonly type: string; readonly schema: string }[];
  /** Problem codes this route can answer with, besides the ones every route can. */
  readonly errors: readonly ErrorCode[];
  /**
   * Where a 200's values feed another request (OpenAPI response links): a cursor is not a value a
   * schema can describe, only one a previous answer gave. Keyed by link name.
   */
  readonly links?: Readonly<Record<string, RouteLink>>;
  readonly handle: (req: RouteRequest, params: v.InferOutput<S>, svc: Services) => Reply | Promise<Reply>;
}

/** A response link: the GET of `path`, with these parameters set from this answer (runtime expressions). */
export interface RouteLink {
  readonly path: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, string>>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route table holds routes of different schemas
export type AnyRoute = RouteDef<any>;

export const defineRoute = <S extends v.GenericSchema<Partial<Record<string, string>>, unknown>>(r: RouteDef<S>): RouteDef<S> => r;

interface ObjectLike {
  readonly entries?: Record<string, v.GenericSchema>;
  readonly pipe?: readonly {
    readonly entries?: Record<string, v.GenericSchema>;
    readonly type?: string;
    readonly metadata?: { readonly rules?: readonly ParamRule[] };
  }[];
}

/** A route's parameters by name: the entries of its object schema, also at the head of a pipe (cross-field checks). */
export function paramEntries(route: AnyRoute): Record<string, v.GenericSchema> {
  const s = route.params as ObjectLike;
  return s.entries ?? s.pipe?.[0]?.entries ?? {};
}

/** The rules between a route's parameters, as its schema's pipe declares them (v.metadata({ rules })). */
export function paramRules(route: AnyRoute): readonly ParamRule[] {
  const s = route.params as ObjectLike;
  return (s.pipe ?? []).flatMap((item) => (item.type === 'metadata' ? (item.metadata?.rules ?? []) : []));
}
