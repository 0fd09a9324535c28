// The HTTP load scenarios as data: what each one asks and why. bench/run.ts runs them in this
// order (the repeat of "repeated" comes last, so the noise floor spans the whole run).
import path from 'node:path';
import { REPO_ROOT } from './lib/common.ts';
import type { DatasetFacts } from './lib/dataset.ts';

export interface ScenarioContext {
  readonly facts: DatasetFacts;
  /** Seed of the mix and of the Lua generator: a run can be replayed with --seed. */
  readonly seed: number;
  /** The distinct mix's request paths, one per line (bench/mix.ts). */
  readonly mixFile: string;
  /**
   * A list of its own for each further distinct scenario (another seed; `q`: word searches only),
   * so that no run meets a search another run already put in the response cache.
   */
  readonly mixFiles: Readonly<Record<MixList, string>>;
}

/** The further lists of the distinct mix: by concurrency, and the word searches alone. */
export const MIX_LISTS = ['c16', 'c32', 'q'] as const;
export type MixList = (typeof MIX_LISTS)[number];

export interface Scenario {
  readonly name: string;
  readonly description: string;
  /** "hello": the bare uWS server; "server": family-events serve. */
  readonly target: 'hello' | 'server';
  /** One fixed request path... */
  readonly path?: (ctx: ScenarioContext) => string;
  /** ...or a wrk Lua script generating every request, with the arguments its init() gets in each phase of a run. */
  readonly lua?: { readonly script: string; readonly args: (ctx: ScenarioContext, phase: 'measure' | 'warmup' | 'check') => string[] };
  /** wrk connections, when not the run's --connections. */
  readonly connections?: number;
  /** Accept-Encoding to send (wrk sends none): pollers that take compressed bodies get the cached compressed form. */
  readonly acceptEncoding?: string;
  /** Send If-None-Match with the path's current ETag: the poller whose copy is current (304, no body, no charge). */
  readonly conditional?: boolean;
  /** This run repeats the named scenario; the ratio of the two is the run's noise floor. */
  readonly repeats?: string;
  /**
   * Scenarios of the same run this one is reported against (req/s and p99 ratios), e.g. a website
   * page against the API's cached JSON; the table's ratio column shows the first.
   */
  readonly versus?: readonly string[];
  /** Rows each request returns, where fixed (CSV pages): rows/s = req/s × rows. */
  readonly rowsPerRequest?: (ctx: ScenarioContext) => number;
  /** Part of `--quick` (otherwise full runs only). */
  readonly quick: boolean;
  /** Also run on every dataset of the scale section (otherwise on the main dataset only). */
  readonly scale: boolean;
  /** Also asked of the Fastify + pg peer (same path or generator, same connections). */
  readonly peer: boolean;
}

/** Scenario (1): a parent's everyday search, in the city with the most events. */
export const repeatedPath = (f: DatasetFacts, limit = 20, route = '/v1/events'): string =>
  `${route}?city=${encodeURIComponent(f.city)}&age_min=3&age_max=6&limit=${limit}`;

/** The website's browse page for the same search, as its form submits it (no limit: the page's own 20). */
export const browsePath = (f: DatasetFacts): string => `/events?city=${encodeURIComponent(f.city)}&age_min=3&age_max=6`;

export const MIX_LUA = path.join(REPO_ROOT, 'bench', 'wrk', 'mix.lua');

/**
 * Concurrency of the distinct mix, ours and every peer's (pgbench clients too): enough to keep two
 * query threads busy, few enough that p99 is the search's own latency rather than a queue's (at 32
 * connections and 2 cores, every system's p99 is mostly waiting).
 */
export const DISTINCT_CONNECTIONS = 4;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'baseline',
    quick: true,
    scale: true,
    peer: false,
    description: 'bare uWS hello-world on one thread: the ceiling "repeated" is measured against (target: repeated >= 50% of it)',
    target: 'hello',
    path: () => '/',
  },
  {
    name: 'baseline-c256',
    quick: true,
    scale: false,
    peer: false,
    description: 'the hello-world with 256 connections: what repeated-c256 is measured against',
    target: 'hello',
    connections: 256,
    path: () => '/',
  },
  {
    name: 'baseline-body',
    quick: true,
    scale: false,
    peer: false,
    description:
      "the bare uWS server answering a body as large as repeated's (the same bytes, synchronously): the most a server that sends that answer could do here, with no key, no metering, no cache lookup; context for the repeated ratio",
    target: 'hello',
    path: () => '/body',
  },
  {
    name: 'repeated',
    quick: true,
    scale: true,
    peer: true,
    description: 'one fixed search (city, ages 3-6, limit 20) repeated: every request after the first is a response-cache hit',
    target: 'server',
    path: (ctx) => repeatedPath(ctx.facts),
  },
  {
    name: 'repeated-c256',
    quick: true,
    scale: false,
    peer: false,
    description:
      'repeated with 256 connections: the same keyed, metered, durably charged cache hit, with enough clients that the fsync of each charge batch is no longer the limit',
    target: 'server',
    connections: 256,
    path: (ctx) => repeatedPath(ctx.facts),
  },
  {
    name: 'repeated-demo-10',
    // In --quick too: the cached JSON path without metering, which the website's pages skip as well.
    quick: true,
    scale: false,
    peer: false,
    description: 'the fixed search with limit 10 on the keyless demo route: the same cached answer with no key lookup and no metering',
    target: 'server',
    path: (ctx) => repeatedPath(ctx.facts, 10, '/v1/demo/events'),
  },
  {
    name: 'event-page',
    quick: true,
    scale: false,
    peer: false,
    description:
      "the website's page of one event (GET /events/<id>, no key, no metering): rendered once per snapshot, then a response-cache hit; reported against the API's cached JSON paths, keyed and metered (repeated) and keyless (repeated-demo-10)",
    target: 'server',
    versus: ['repeated', 'repeated-demo-10'],
    path: (ctx) => `/events/${ctx.facts.eventId}`,
  },
  {
    name: 'browse-page',
    quick: true,
    scale: false,
    peer: false,
    description:
      "the website's browse page for the repeated search (city, ages 3-6; 20 results as HTML, the filter form and paging links), no key: a response-cache hit after the first; reported against repeated and repeated-demo-10",
    target: 'server',
    versus: ['repeated', 'repeated-demo-10'],
    path: (ctx) => browsePath(ctx.facts),
  },
  {
    name: 'repeated-10',
    quick: false,
    scale: false,
    peer: false,
    description:
      'the same limit-10 search on the live route: key lookup, rate limit and a durable charge per request; its ratio to repeated-demo-10 is the cost of metering',
    target: 'server',
    path: (ctx) => repeatedPath(ctx.facts, 10),
  },
  {
    name: 'repeated-demo-10-c256',
    quick: false,
    scale: false,
    peer: false,
    description: 'repeated-demo-10 with 256 connections',
    target: 'server',
    connections: 256,
    path: (ctx) => repeatedPath(ctx.facts, 10, '/v1/demo/events'),
  },
  {
    name: 'repeated-10-c256',
    quick: false,
    scale: false,
    peer: false,
    description:
      'repeated-10 with 256 connections: a charge waits for the fsync of its batch, so throughput is connections / commit latency until the main thread is the limit; more connections, larger batches',
    target: 'server',
    connections: 256,
    path: (ctx) => repeatedPath(ctx.facts, 10),
  },
  {
    name: 'repeated-br',
    quick: false,
    scale: false,
    peer: false,
    description: 'the fixed search with Accept-Encoding: br, gzip: the cache hands out its kept brotli form (compressed once)',
    target: 'server',
    acceptEncoding: 'br, gzip',
    path: (ctx) => repeatedPath(ctx.facts),
  },
  {
    name: 'poll-304',
    quick: true,
    scale: false,
    peer: false,
    description: 'the fixed search with If-None-Match of its current ETag: a poller whose copy is current gets 304 (no body, no charge)',
    target: 'server',
    conditional: true,
    path: (ctx) => repeatedPath(ctx.facts),
  },
  {
    name: 'feed-rss-304',
    quick: true,
    scale: false,
    peer: false,
    description: 'an RSS feed poll (city, limit 50) with If-None-Match and Accept-Encoding gzip: the aggregator path',
    target: 'server',
    conditional: true,
    acceptEncoding: 'gzip',
    path: (ctx) => `/v1/feed.rss?city=${encodeURIComponent(ctx.facts.city)}&limit=50`,
  },
  {
    name: 'feed-json-200',
    quick: false,
    scale: false,
    peer: false,
    description: 'a JSON Feed (city, limit 50) fetched whole each time with Accept-Encoding gzip: a poller without a validator',
    target: 'server',
    acceptEncoding: 'gzip',
    path: (ctx) => `/v1/feed.json?city=${encodeURIComponent(ctx.facts.city)}&limit=50`,
  },
  {
    name: 'export-whole',
    quick: true,
    scale: true,
    peer: false,
    description:
      'the whole snapshot as one CSV body (/v1/export.csv: every event the key may see, stored CSV rows streamed); rows/s = req/s x rows, against COPY of the same rows',
    target: 'server',
    connections: 1,
    path: () => '/v1/export.csv',
    rowsPerRequest: (ctx) => ctx.facts.exportable,
  },
  {
    name: 'csv-10k',
    quick: true,
    scale: true,
    peer: false,
    description: 'CSV pages of 10,000 rows (too big to cache: every request streams from a query worker); rows/s = req/s x rows per page',
    target: 'server',
    connections: 4,
    path: () => '/v1/events.csv?limit=10000',
    rowsPerRequest: (ctx) => Math.min(10_000, ctx.facts.upcoming),
  },
  {
    name: 'distinct',
    quick: true,
    scale: true,
    peer: true,
    description:
      'a different search per request, drawn from a seeded mix (bench/mix.ts): near a busy venue (radius 2-15 km, ages, sometimes a category), in a city (ages, often this or next week), a word or word prefix (q), a word within a city; offsets 0-40. Every request runs a query',
    target: 'server',
    connections: DISTINCT_CONNECTIONS,
    lua: {
      script: MIX_LUA,
      args: ({ mixFile }, phase) => [mixFile, phase],
    },
  },
  {
    name: 'distinct-c16',
    quick: true,
    scale: false,
    peer: false,
    description:
      'the distinct mix (a list of its own) with 16 connections, against pgbench with 16 clients: searches that wait for a worker are answered together',
    target: 'server',
    connections: 16,
    lua: { script: MIX_LUA, args: ({ mixFiles }, phase) => [mixFiles.c16, phase] },
  },
  {
    name: 'distinct-c32',
    quick: true,
    scale: false,
    peer: false,
    description: 'the distinct mix (a list of its own) with 32 connections, against pgbench with 32 clients',
    target: 'server',
    connections: 32,
    lua: { script: MIX_LUA, args: ({ mixFiles }, phase) => [mixFiles.c32, phase] },
  },
  {
    name: 'distinct-q',
    quick: false,
    scale: true,
    peer: false,
    description: 'the word searches (q) of the distinct mix alone, 4 connections: their own p99 (target at 10M events: < 100 ms)',
    target: 'server',
    connections: DISTINCT_CONNECTIONS,
    lua: { script: MIX_LUA, args: ({ mixFiles }, phase) => [mixFiles.q, phase] },
  },
  {
    name: 'same-vs-same',
    quick: true,
    scale: false,
    peer: false,
    description: '"repeated" run again at the end: its ratio to the first run is the noise floor of this machine and run',
    target: 'server',
    path: (ctx) => repeatedPath(ctx.facts),
    repeats: 'repeated',
  },
];
