// Micro-benchmarks (tinybench) of a search request's parts, each through the module the server
// runs: parameter validation, one DuckDB search, body serialization, CSV cells, ETags, metering.
//   node --import tsx bench/micro.ts [--quick] [--snapshot-dir DIR]
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread } from 'node:worker_threads';
import { DuckDBInstance } from '@duckdb/node-api';
import * as v from 'valibot';
import { parseQuery } from '../server/querystring.ts';
import { loadConfig, type Config } from '../core/config.ts';
import { noneMatchHits } from '../server/conditional.ts';
import { createLogger } from '../server/log.ts';
import { Meter } from '../server/meter.ts';
import { MAX_OFFSET, type SearchParams } from '../server/params.ts';
import { canonicalQuery, queryKey, type QueryContext } from '../server/query.ts';
import { eventsRoute } from '../server/routes/events.ts';
import { paramEntries } from '../server/route.ts';
import { AccountsDb } from '../ledger/sqlite/store.ts';
import { csvBatch, csvRow, textCell } from '../core/csv.ts';
import { bodyTag } from '../query/etag.ts';
import { SnapshotDb } from '../query/db.ts';
import { jsonEnvelope, nextOffset, readRecord } from '../query/envelope.ts';
import { jsonFeedBody, rssBody, type FeedPage } from '../query/feeds.ts';
import type { FeedLinks, OutputFormat, SearchQuery, SearchTask, SnapshotRef } from '../query/protocol.ts';
import type { EventRecord } from '../core/record.ts';
import { rng } from '../snapshot/sample/synthetic.ts';
import { pathLiteral } from '../core/sql.ts';
import { currentSnapshotId, SNAPSHOT_SCHEMA_VERSION, snapshotsDir, type Manifest } from '../snapshot/store.ts';
import {
  BenchError,
  describeMachine,
  exitOnError,
  fmt,
  log,
  machineInfo,
  NOW_ISO,
  NOW_MS,
  REPO_ROOT,
  SCRATCH_DIR,
  stamp,
  table,
  writeResult,
} from './lib/common.ts';
import { prepareDataset } from './lib/dataset.ts';
import { asyncTask, batchTask, budget, measure, syncTask, type MicroTask } from './lib/micro-fixtures.ts';
import { BENCH_PLAN } from './lib/server.ts';
import { fold, words } from '../core/text.ts';
import type { Plan } from '../ledger/accounts.ts';
import { attribution } from '../server/terms.ts';

export interface MicroResult {
  readonly group: string;
  readonly name: string;
  readonly ops_per_s: number;
  readonly mean_us: number;
  /** Not in the brief's list: bench/run.ts's table shows it. */
  readonly p50_us: number;
  readonly p99_us: number;
  /** tinybench's relative margin of error of the mean latency. */
  readonly rme_pct: number;
  readonly samples: number;
  /** What one op is, when the name does not say. */
  readonly note?: string;
}

export interface MicroOptions {
  readonly quick: boolean;
  /** A published snapshot's directory (events.parquet, records.*, manifest.json), or a DATA_DIR: its `current` snapshot. */
  readonly snapshotDir: string;
  /** The metering benchmark's ledger goes in a temporary directory under it (removed at the end). */
  readonly scratchDir: string;
}

/** What the bench key's plan leaves out (BENCH_PLAN: Community's exclusions, no cap). */
const PLAN: Plan = BENCH_PLAN;
const EXCLUDED = PLAN.excludedCategories;
const GEO_RADIUS_KM = 5;

interface Snapshot {
  readonly ref: SnapshotRef;
  readonly manifest: Manifest;
}

async function resolveSnapshot(dir: string): Promise<Snapshot> {
  const abs = path.resolve(dir);
  let snapDir = abs;
  const isSnapshot = await stat(path.join(abs, 'events.parquet')).then(
    () => true,
    () => false,
  );
  if (!isSnapshot) {
    const id = await currentSnapshotId(abs);
    if (id === null) throw new BenchError(`${dir} is neither a snapshot directory (events.parquet, manifest.json) nor a DATA_DIR with a current snapshot`);
    snapDir = path.join(snapshotsDir(abs), id);
  }
  const manifest = JSON.parse(await readFile(path.join(snapDir, 'manifest.json'), 'utf8')) as Manifest;
  if (manifest.schema_version !== SNAPSHOT_SCHEMA_VERSION) {
    throw new BenchError(`${snapDir} has layout ${manifest.schema_version}; the server reads ${SNAPSHOT_SCHEMA_VERSION}: rebuild it`);
  }
  return { ref: { id: manifest.id, dir: snapDir }, manifest };
}

/**
 * Where the queries point, drawn from the events the plan may see so that any data set gives
 * answers: the busiest city and venue, the first words of the commonest title (for q), the bounding box.
 */
interface Facts {
  readonly city: string;
  readonly qWords: string;
  readonly venue: { readonly name: string; readonly lat: number; readonly lng: number };
  readonly bbox: { readonly latLo: number; readonly latHi: number; readonly lngLo: number; readonly lngHi: number };
}

async function facts(parquet: string): Promise<Facts> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const excluded = EXCLUDED.map((s) => pathLiteral(s)).join(', ');
    await c.run(
      `CREATE VIEW ev AS SELECT * FROM read_parquet(${pathLiteral(parquet)})
       WHERE end_ms >= ${NOW_MS} AND NOT list_has_any(categories, [${excluded}]::VARCHAR[])`,
    );
    const first = async <T>(sql: string): Promise<T> => {
      const row = (await c.runAndReadAll(sql)).getRowObjectsJson()[0];
      if (row === undefined) throw new BenchError(`${parquet} has no upcoming events at ${NOW_ISO}`);
      return row as T;
    };
    const city = await first<{ city: string }>('SELECT venue_city AS city FROM ev GROUP BY ALL ORDER BY count(*) DESC, city LIMIT 1');
    const venue = await first<{ name: string; lat: number; lng: number }>(
      'SELECT venue_name AS name, venue_lat AS lat, venue_lng AS lng FROM ev GROUP BY ALL ORDER BY count(*) DESC, name LIMIT 1',
    );
    const title = await first<{ title: string }>('SELECT title FROM ev GROUP BY ALL ORDER BY count(*) DESC, title LIMIT 1');
    const box = await first<{ lat_lo: number; lat_hi: number; lng_lo: number; lng_hi: number }>(
      'SELECT min(venue_lat) AS lat_lo, max(venue_lat) AS lat_hi, min(venue_lng) AS lng_lo, max(venue_lng) AS lng_hi FROM ev',
    );
    return {
      city: city.city,
      qWords: words(title.title).slice(0, 2).join(' '),
      venue,
      bbox: { latLo: box.lat_lo, latHi: box.lat_hi, lngLo: box.lng_lo, lngHi: box.lng_hi },
    };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

const qs = (params: Record<string, string>): string => new URLSearchParams(params).toString();

/** The search parameters of /v1/events as server/app.ts's handler checks them (without its memo of known query strings). */
function validate(raw: string): SearchParams {
  const known = paramEntries(eventsRoute);
  const { values, errors } = parseQuery(raw);
  const unknown = Object.keys(values).filter((k) => !Object.hasOwn(known, k));
  if (unknown.length || errors.length) throw new Error(`${raw}: ${[...unknown, ...errors.map((e) => e.param)].join(', ')} rejected`);
  const parsed = v.safeParse(eventsRoute.params, values);
  if (!parsed.success) throw new Error(`${raw}: ${parsed.issues.map((i) => i.message).join('; ')}`);
  return parsed.output;
}

function validationTasks(ctx: QueryContext, queries: readonly (readonly [string, string])[]): MicroTask[] {
  return queries.flatMap(([label, raw]) => [
    syncTask('validation', `parse + valibot, ${label}`, () => Object.keys(validate(raw)).length, raw),
    syncTask('validation', `+ canonicalQuery + queryKey, ${label}`, () => queryKey(canonicalQuery(validate(raw), ctx)).length),
  ]);
}

/** A search task as server/routes/search.ts hands it to a query worker. */
function searchTask(snap: Snapshot, config: Config, query: SearchQuery, format: OutputFormat, links: FeedLinks | null): SearchTask {
  return {
    kind: 'search',
    snapshot: snap.ref,
    query,
    format,
    excludedCategories: EXCLUDED,
    nowMs: NOW_MS,
    webBaseUrl: config.webBaseUrl,
    attribution: attribution(config.webBaseUrl),
    maxOffset: MAX_OFFSET,
    cut: null,
    links,
    stream: null,
    deadlineMs: Number.POSITIVE_INFINITY,
    cancel: new SharedArrayBuffer(4),
  };
}

/** A feed's links as the events route builds them: its URL, and the parameters sorted, without api_key and offset. */
function feedLinks(config: Config, snap: Snapshot, route: string, raw: string): FeedLinks {
  const params = [...new URLSearchParams(raw)].filter(([k]) => k !== 'api_key' && k !== 'offset');
  params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { url: `${config.publicBaseUrl}${route}`, params, updated: snap.manifest.built_at };
}

/** Text cells of every kind textCell sees: plain, with quotes and commas (fast-csv's to quote), and formula-leading. */
function cellMix(records: readonly EventRecord[]): string[] {
  return [
    'Family Story Time',
    'Crafts, "glitter" and glue',
    'Bilingual storytime · Cuentos en español',
    '=HYPERLINK("https://example.org","click")',
    '+1 (510) 555-0100',
    '-5% for members',
    '@library on social',
    '\tindented note',
    ...records.flatMap((r) => [r.title, r.summary ?? r.venue.address]),
  ];
}

export async function runMicro(o: MicroOptions): Promise<MicroResult[]> {
  const snap = await resolveSnapshot(o.snapshotDir);
  const f = await facts(path.join(snap.ref.dir, 'events.parquet'));
  // The server's defaults, for the hosts that records and feeds link to.
  const config = loadConfig({});
  const results: MicroResult[] = [];
  const group = async (name: string, tasks: readonly MicroTask[]): Promise<void> => {
    log(`micro: ${name} (${tasks.length} tasks)`);
    results.push(...(await measure(tasks, o.quick)));
  };

  // 1. validation: what a first-seen query string costs the main thread (repeats hit the memos).
  const ctx: QueryContext = {
    cities: new Map(snap.manifest.cities.map((c) => [fold(c), c])),
    excludedCategories: PLAN.excludedCategories,
    planName: PLAN.name,
    now: new Date(NOW_MS),
    defaultLimit: 20,
  };
  const ll = { lat: String(f.venue.lat), lng: String(f.venue.lng) };
  await group(
    'validation',
    validationTasks(ctx, [
      ['city+ages', qs({ city: f.city, age_min: '3', age_max: '5' })],
      ['geo+ages+category', qs({ ...ll, radius_km: String(GEO_RADIUS_KM), age_min: '2', age_max: '8', category: 'storytime,arts-crafts', sort: 'distance' })],
      ['q words+week', qs({ q: f.qWords, week: 'next' })],
    ]),
  );

  const canonical = (raw: string): SearchQuery => canonicalQuery(validate(raw), ctx);
  const cityRaw = qs({ city: f.city });
  const cityQ = canonical(cityRaw);
  const geoQ = canonical(qs({ ...ll, radius_km: String(GEO_RADIUS_KM), sort: 'distance' }));
  const wordsQ = canonical(qs({ q: f.qWords }));

  let opened: SnapshotDb | null = null;
  let ledgerDir: string | null = null;
  let meter: Meter | null = null;
  const { logger, flush } = createLogger('warn');
  try {
    const db = await SnapshotDb.open(snap.ref);
    opened = db;
    // 2. sql: one statement per search, planned once per filter combination and then reused.
    const page = (q: SearchQuery) => db.page(q, EXCLUDED, NOW_MS);
    // Names stay the same whatever the data set (results are compared across runs); notes say what was searched.
    const checked = async (what: string, q: SearchQuery): Promise<string> => {
      const p = await page(q);
      if (p.total === 0 || p.rows.length === 0)
        throw new BenchError(`the search ${what} finds nothing in ${snap.ref.id}: the benchmark would measure an empty answer`);
      return `${what}: ${p.total} matches, ${p.rows.length} rows`;
    };
    const rnd = rng(1);
    const distinct = (): SearchQuery => ({
      ...geoQ,
      geo: { lat: f.bbox.latLo + rnd() * (f.bbox.latHi - f.bbox.latLo), lng: f.bbox.lngLo + rnd() * (f.bbox.lngHi - f.bbox.lngLo), radiusKm: GEO_RADIUS_KM },
    });
    const searched = async (q: SearchQuery): Promise<number> => {
      const p = await page(q);
      return 1 + p.rows.length;
    };
    await group('sql', [
      asyncTask('sql', 'db.page, busiest city', () => searched(cityQ), await checked(`city=${f.city}`, cityQ)),
      asyncTask('sql', `db.page, ${GEO_RADIUS_KM} km around the busiest venue, by distance`, () => searched(geoQ), await checked(f.venue.name, geoQ)),
      asyncTask('sql', 'db.page, q of two words', () => searched(wordsQ), await checked(`q=${f.qWords}`, wordsQ)),
      asyncTask('sql', `db.page, ${GEO_RADIUS_KM} km around a random centre`, () => searched(distinct()), "a new centre in the data's bounding box every call"),
      // The same searches one statement at a time and as one batch (what a busy worker gets): the
      // ratio of the two is what batching saves; ops/s of both rows count batches of 8.
      asyncTask(
        'sql',
        'db.page ×8, random centres, one at a time',
        async () => {
          let n = 0;
          for (let i = 0; i < 8; i++) n += await searched(distinct());
          return n;
        },
        'eight searches, eight statements',
      ),
      asyncTask(
        'sql',
        'db.pages, the same 8 as one batch',
        async () => {
          const pages = await db.pages(Array.from({ length: 8 }, () => ({ query: distinct(), excluded: EXCLUDED, nowMs: NOW_MS })));
          return pages.reduce((n, p) => n + 1 + p.rows.length, 0);
        },
        'eight searches, one UNION ALL statement',
      ),
    ]);

    // 3. serialize: one 20-record page in each format, as the query worker builds it.
    const p20 = await page(cityQ);
    if (p20.rows.length !== 20) throw new BenchError(`the city search gives ${p20.rows.length} rows, not a page of 20`);
    const next = nextOffset(p20.total, cityQ.limit, cityQ.offset, MAX_OFFSET);
    const records = p20.rows.map((r) => readRecord(db.records, r, config.webBaseUrl));
    const figures: FeedPage = { total: p20.total, limit: cityQ.limit, offset: cityQ.offset, nextOffset: next, truncated: false };
    const jsonTask = searchTask(snap, config, cityQ, 'json', null);
    const rssLinks = feedLinks(config, snap, '/v1/feed.rss', cityRaw);
    const rssTask = searchTask(snap, config, cityQ, 'rss', rssLinks);
    const feedJsonLinks = feedLinks(config, snap, '/v1/feed.json', cityRaw);
    const feedJsonTask = searchTask(snap, config, cityQ, 'jsonfeed', feedJsonLinks);
    const envelope = jsonEnvelope(jsonTask, p20, db.records, next, false);
    await group('serialize', [
      syncTask('serialize', 'json envelope, 20 records', () => jsonEnvelope(jsonTask, p20, db.records, next, false).length, 'includes the 20 record preads'),
      asyncTask('serialize', 'csv, 20 records + header', async () => (await csvBatch(records, true)).length, 'csvBatch over records already read'),
      syncTask('serialize', 'rss 2.0, 20 items', () => rssBody(rssTask, rssLinks, records, figures).length, 'over records already read'),
      syncTask('serialize', 'json feed 1.1, 20 items', () => jsonFeedBody(feedJsonTask, feedJsonLinks, records, figures).length, 'over records already read'),
      syncTask(
        'serialize',
        'readRecord, 20 rows',
        () => p20.rows.reduce((n, r) => n + readRecord(db.records, r, config.webBaseUrl).title.length, 0),
        'pread + JSON.parse + event_url, ×20',
      ),
    ]);

    // 4. csv: the cell escaping alone, and an export's batch.
    const mix = cellMix(records);
    const upcoming = { ...canonical(''), limit: 500 };
    const p500 = await page(upcoming);
    if (p500.rows.length !== 500) throw new BenchError(`only ${p500.rows.length} upcoming events: a 500-row batch needs 500`);
    const records500 = p500.rows.map((r) => readRecord(db.records, r, config.webBaseUrl));
    await group('csv', [
      batchTask(
        'csv',
        'textCell, mixed cells',
        1000,
        (i) => textCell(mix[i % mix.length] ?? null).length,
        `one call; ${mix.length} cells: plain, quoted, formula-leading, real titles and summaries`,
      ),
      batchTask('csv', 'csvRow, one record', 100, (i) => csvRow(records[i % records.length] as EventRecord).length, 'one record to 31 cells'),
      asyncTask('csv', 'csvBatch, 500 records + header', async () => (await csvBatch(records500, true)).length, '500 rows'),
    ]);

    // 5. etag: whole-body tags (a hash of the bytes) and If-None-Match matching.
    const sized = (bytes: number): Uint8Array => {
      const copies = Math.ceil(bytes / envelope.length);
      return new Uint8Array(Buffer.concat(Array.from({ length: copies }, () => envelope)).subarray(0, bytes));
    };
    log('micro: etag');
    const bodies = [
      { name: '10 KiB body', bytes: sized(10 * 1024) },
      { name: '100 KiB body', bytes: sized(100 * 1024) },
    ];
    results.push(
      ...(await measure(
        bodies.map((b) => syncTask('etag', `bodyTag, ${b.name}`, () => bodyTag(b.bytes).length, `SHA-256 of ${b.bytes.length} bytes, base64url`)),
        o.quick,
      )),
    );
    const tag = 'q3Jd9xQ0bT1mZ8vW2yR5aA';
    const ifNoneMatch = `"Zt0fH2kLr8pWq4sNv6xYbC-gzip", W/"mE1aQ7cJ3uT9oK5dG2hRwS", "${tag}-br"`;
    await group('etag', [
      batchTask(
        'etag',
        'noneMatchHits, 3-entry If-None-Match',
        1000,
        () => (noneMatchHits(ifNoneMatch, tag) ? 1 : 0),
        'the match is the last entry (every entry parsed)',
      ),
    ]);

    // 6. metering: through the real thread and ledger, one request at a time, so every charge is a commit of its own.
    const ledger = await mkdtemp(path.join(o.scratchDir, 'micro-ledger-'));
    ledgerDir = ledger;
    const accounts = AccountsDb.open(ledger);
    const capped: Plan = { ...PLAN, name: `${PLAN.name}-capped`, monthlyRecordLimit: 1_000_000_000 };
    let liveKey: string;
    let cappedKey: string;
    try {
      accounts.setPlan(PLAN);
      accounts.setPlan(capped);
      liveKey = accounts.createKey('Benchmarks', 'bench@localhost', PLAN.name).keyId;
      cappedKey = accounts.createKey('Benchmarks (capped)', 'bench@localhost', capped.name).keyId;
    } finally {
      accounts.close();
    }
    const m = await Meter.start(loadConfig({ DATA_DIR: ledger, LEDGER_DIR: ledger, LOG_LEVEL: 'warn' }), logger);
    meter = m;
    await group('metering', [
      asyncTask(
        'metering',
        'charge (reserve, settle), uncapped plan',
        async () => {
          const r = await m.reserve(liveKey, 20, true, NOW_MS);
          if (!r.ok || r.reservation !== null) throw new Error(`expected a settled charge, got ${JSON.stringify(r)}`);
          return r.granted;
        },
        'the one call a live search on the bench plan makes; answered after its fsync',
      ),
      asyncTask(
        'metering',
        'reserve → commit, capped plan',
        async () => {
          const r = await m.reserve(cappedKey, 20, false, NOW_MS);
          if (!r.ok || r.reservation === null) throw new Error(`expected a reservation, got ${JSON.stringify(r)}`);
          const c = await m.commit(r.reservation, 20, NOW_MS);
          if (!c.ok) throw new Error(c.detail);
          return r.granted;
        },
        "a capped plan's cache miss: two round trips, the commit after its fsync",
      ),
    ]);
  } finally {
    opened?.close();
    if (meter) await meter.close();
    flush();
    if (ledgerDir !== null) await rm(ledgerDir, { recursive: true, force: true });
  }
  return results;
}

const us = (n: number): string => fmt(n, n < 1 ? 3 : n < 100 ? 2 : 0);

async function main(): Promise<void> {
  exitOnError();
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, 'snapshot-dir': { type: 'string' } } });
  const quick = values.quick;
  const runDir = path.join(SCRATCH_DIR, `bench-micro-${stamp()}`);
  await mkdir(runDir, { recursive: true });
  try {
    const snapshotDir = values['snapshot-dir'] ?? (await prepareDataset('sample', runDir)).dataDir;
    const snap = await resolveSnapshot(snapshotDir);
    const machine = machineInfo();
    log(describeMachine(machine));
    const t0 = performance.now();
    const results = await runMicro({ quick, snapshotDir, scratchDir: runDir });
    const seconds = (performance.now() - t0) / 1000;
    const b = budget(quick);
    console.log(
      `\n${describeMachine(machine)}; snapshot ${snap.ref.id} (${snap.manifest.counts.events} events); ${b.time} ms + ${b.warmupTime} ms warm-up per task; ${seconds.toFixed(1)} s`,
    );
    console.log(
      table(
        ['task', 'ops/s', 'mean µs', 'p50 µs', 'p99 µs', '± %', 'samples', 'note'],
        results.map((r) => [
          `${r.group}: ${r.name}`,
          fmt(r.ops_per_s, 0),
          us(r.mean_us),
          us(r.p50_us),
          us(r.p99_us),
          fmt(r.rme_pct, 1),
          String(r.samples),
          r.note ?? '',
        ]),
      ),
    );
    const settings = {
      quick,
      time_ms: b.time,
      warmup_ms: b.warmupTime,
      min_iterations: b.iterations,
      snapshot: snap.ref.id,
      events: snap.manifest.counts.events,
      now: NOW_ISO,
      at: new Date().toISOString(),
      seconds: +seconds.toFixed(1),
    };
    const out = await writeResult('micro', { ...machine, settings, results });
    console.log(`written ${path.relative(REPO_ROOT, out)}`);
  } finally {
    await rm(runDir, { recursive: true, force: true });
  }
}

if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
