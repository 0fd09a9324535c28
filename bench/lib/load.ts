// HTTP load on one target with wrk: one scenario of bench/scenarios.ts at a time, with what wrk
// alone cannot tell: every status the server answered (its /metrics), cache hits, the server's CPU
// per request and its peak resident memory, and a check that the generated requests answer 200.
import path from 'node:path';
import type { Scenario, ScenarioContext } from '../scenarios.ts';
import { BenchError, log, REPO_ROOT } from './common.ts';
import type { DatasetFacts } from './dataset.ts';
import { counterDelta, cpuTicks, headerObject, rssSampler, scrapeCounters, TICK_US, type Child, type CounterDelta } from './server.ts';
import { runWrk, type WrkResult } from './wrk.ts';

export interface LoadSettings {
  readonly durationS: number;
  readonly connections: number;
  readonly warmupS: number;
}

export interface CheckedUrl {
  readonly path: string;
  readonly status: number;
  readonly total: number | null;
  /** The page's event ids: the PostGIS peer is asked the same search and compared. */
  readonly ids: readonly string[];
}

export interface LoadResult {
  readonly name: string;
  /** Who answered: ours, the uWS hello-world, or a peer. */
  readonly target: string;
  readonly connections: number;
  readonly request: string;
  readonly rps: number;
  /** Rows per second, where a request returns a known number of rows (CSV pages). */
  readonly rows_per_s: number | null;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly max_ms: number | null;
  readonly requests: number;
  /** Every status answered during the measured run (server metrics; wrk's own count elsewhere). */
  readonly statuses: Record<string, number> | null;
  /** Answers that are not what the scenario expects (non-2xx; 304 expected for conditional ones), 499 aside. */
  readonly errors: number;
  /** 499s: requests in flight when wrk stopped and closed its connections. */
  readonly aborted_at_end: number;
  readonly socket_errors: WrkResult['socket_errors'];
  readonly cache_hits: number | null;
  readonly cache_misses: number | null;
  /**
   * CPU time per request in µs (/proc): the main thread (uWS, routing, cache, metering client) and
   * the whole process (query workers and the metering thread too).
   */
  readonly cpu_us_per_request: { readonly main: number; readonly process: number } | null;
  /** Resident memory of the server process at the start of the measured run and its peak during it, MiB. */
  readonly rss_mib: { readonly start: number; readonly peak: number } | null;
  /** Any unexpected answer or socket error: the figure is not a clean one. */
  readonly flagged: boolean;
  readonly sample_urls?: readonly CheckedUrl[];
  readonly wrk_command: string;
}

export async function getJson(target: Child, p: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(`${target.base}${p}`, { headers: headerObject(target.headers) });
  const text = await r.text();
  try {
    return { status: r.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: r.status, body: text };
  }
}

const totalOf = (body: unknown): number | null => (body && typeof body === 'object' && 'total' in body && typeof body.total === 'number' ? body.total : null);

const idsOf = (body: unknown): string[] =>
  body && typeof body === 'object' && 'events' in body && Array.isArray(body.events) ? body.events.map((e: { id?: unknown }) => String(e.id)) : [];

export async function checkUrl(target: Child, p: string): Promise<CheckedUrl> {
  const r = await getJson(target, p);
  return { path: p, status: r.status, total: totalOf(r.body), ids: idsOf(r.body) };
}

/** A target's catalogue must agree with what the scenarios were drawn from, or the run measures errors. */
export async function crossCheck(server: Child, facts: DatasetFacts, repeated: string, excluded: readonly string[]): Promise<CheckedUrl> {
  const cats = await getJson(server, '/v1/categories');
  const served = (cats.body as { categories?: { slug: string; excluded_from_plans: string[] }[] }).categories ?? [];
  const allowed = served.filter((c) => !c.excluded_from_plans.includes('community')).map((c) => c.slug);
  const missing = facts.categories.filter((c) => !allowed.includes(c));
  if (missing.length) throw new BenchError(`/v1/categories does not allow ${missing.join(', ')} (expected excluded: ${excluded.join(', ')})`);
  const cities = await getJson(server, '/v1/cities');
  const names = ((cities.body as { cities?: { name: string }[] }).cities ?? []).map((c) => c.name);
  if (!names.includes(facts.city)) throw new BenchError(`/v1/cities does not list ${facts.city}`);
  const r = await checkUrl(server, repeated);
  if (r.status !== 200 || !r.total) throw new BenchError(`${repeated} answered ${r.status} with total ${r.total}; the repeated scenario needs a non-empty 200`);
  return r;
}

/** Runs a scenario's generator for a second to capture the first 20 paths it makes, and asks each of them. */
export async function checkGenerator(target: Child, sc: Scenario, ctx: ScenarioContext): Promise<CheckedUrl[]> {
  if (!sc.lua) return [];
  // One connection per path wanted: wrk asks each connection's first request at once, so the 20
  // paths are printed however slow the target is (at 10M events a search takes 100 ms or more).
  const w = await runWrk({
    url: target.base,
    connections: 20,
    durationS: 1,
    script: sc.lua.script,
    scriptArgs: sc.lua.args(ctx, 'check'),
    headers: target.headers,
  });
  const paths = w.raw
    .split('\n')
    .filter((l) => l.startsWith('CHECK '))
    .map((l) => l.slice('CHECK '.length).trim());
  if (paths.length < 20) throw new BenchError(`the ${sc.name} generator printed ${paths.length} paths, expected 20:\n${w.raw}`);
  const checked: CheckedUrl[] = [];
  for (const p of paths) checked.push(await checkUrl(target, p));
  // A 4xx is the generator's fault; a 503 is the server shedding a search that outran
  // QUERY_TIMEOUT_MS (10M events, while wrk's abandoned checks still run), which the load
  // figures count as errors anyway.
  const bad = checked.filter((c) => c.status !== 200 && c.status !== 503);
  if (bad.length || !checked.some((c) => c.status === 200)) {
    throw new BenchError(
      `${sc.name}: generated URLs that do not answer 200:\n${checked
        .filter((c) => c.status !== 200)
        .map((b) => `  ${b.status} ${b.path}`)
        .join('\n')}`,
    );
  }
  return checked;
}

const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);

/** One scenario against one target: warm-up, then the measured wrk run with counters, CPU and memory around it. */
export async function measure(
  sc: Scenario,
  target: Child,
  targetName: string,
  ctx: ScenarioContext,
  s: LoadSettings,
  sample: readonly CheckedUrl[] = [],
): Promise<LoadResult> {
  const request = sc.path ? sc.path(ctx) : `${path.relative(REPO_ROOT, sc.lua?.script ?? '')} ${(sc.lua?.args(ctx, 'measure') ?? []).join(' ')}`;
  const conns = sc.connections ?? s.connections;
  const headers = [...target.headers, ...(sc.acceptEncoding ? [`Accept-Encoding: ${sc.acceptEncoding}`] : [])];
  if (sc.conditional && sc.path) {
    const r = await fetch(`${target.base}${request}`, { headers: headerObject(headers) });
    await r.arrayBuffer();
    const etag = r.headers.get('etag');
    if (r.status !== 200 || !etag) throw new BenchError(`${sc.name}: ${request} answered ${r.status} without an ETag`);
    headers.push(`If-None-Match: ${etag}`);
  }
  const wrkOpts = sc.path
    ? { url: `${target.base}${request}`, connections: conns, durationS: s.durationS, headers }
    : { url: target.base, connections: conns, durationS: s.durationS, script: sc.lua?.script ?? '', scriptArgs: sc.lua?.args(ctx, 'measure') ?? [], headers };
  if (s.warmupS > 0) {
    // Another part of the list for the warm-up, or its searches would be cache hits in the measured run.
    const warm = sc.lua ? { ...wrkOpts, durationS: s.warmupS, scriptArgs: sc.lua.args(ctx, 'warmup') } : { ...wrkOpts, durationS: s.warmupS };
    await runWrk(warm);
  }
  const before = target.adminBase ? await scrapeCounters(target.adminBase) : null;
  log(`${targetName} ${sc.name}: ${s.durationS} s, ${conns} connections`);
  const cpu0 = cpuTicks(target.pid);
  const rss = rssSampler(target.pid);
  const w = await runWrk(wrkOpts);
  const mem = rss.stop();
  const cpu1 = cpuTicks(target.pid);
  const delta: CounterDelta | null = before && target.adminBase ? counterDelta(before, await scrapeCounters(target.adminBase)) : null;
  // 499 is the server's record of a client that went away before its answer: wrk closes its
  // connections when the time is up, so up to one request per connection ends that way, and a
  // streamed body abandoned by the warm-up's wrk may be noticed only once this run has begun:
  // up to two per connection. More than that means something else closed them, and is flagged.
  const aborted = delta?.statuses['499'] ?? 0;
  // A conditional scenario's answers are 304s by design: those count as successes there.
  const fine = (status: string): boolean => status.startsWith('2') || status === '499' || (sc.conditional === true && status === '304');
  const serverErrors = delta ? Object.entries(delta.statuses).reduce((n, [st, c]) => (fine(st) ? n : n + c), 0) : null;
  // wrk counts 304s among its "non-2xx or 3xx": on conditional scenarios only the server's count is meaningful.
  const errors = serverErrors === null ? w.non2xx_or_3xx : sc.conditional ? serverErrors : Math.max(serverErrors, w.non2xx_or_3xx);
  const sockErrors = Object.values(w.socket_errors).reduce((a, b) => a + b, 0);
  const rows = sc.rowsPerRequest?.(ctx) ?? null;
  return {
    name: sc.name,
    target: targetName,
    connections: conns,
    request,
    rps: w.rps,
    rows_per_s: rows === null ? null : Math.round(w.rps * rows),
    p50_ms: w.p50_ms,
    p99_ms: w.p99_ms,
    max_ms: w.max_ms,
    requests: w.requests,
    statuses: delta?.statuses ?? null,
    errors,
    aborted_at_end: aborted,
    socket_errors: w.socket_errors,
    cache_hits: delta?.cache_hits ?? null,
    cache_misses: delta?.cache_misses ?? null,
    cpu_us_per_request:
      cpu0 && cpu1 && w.requests > 0
        ? { main: Math.round(((cpu1.main - cpu0.main) * TICK_US) / w.requests), process: Math.round(((cpu1.process - cpu0.process) * TICK_US) / w.requests) }
        : null,
    rss_mib: { start: mib(mem.start), peak: mib(mem.peak) },
    flagged: errors > 0 || sockErrors > 0 || aborted > 2 * conns,
    ...(sample.length ? { sample_urls: sample } : {}),
    wrk_command: w.command,
  };
}
