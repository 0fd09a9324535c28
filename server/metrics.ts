// Prometheus metrics (prom-client), served as text on the admin listener only. Labels are route
// templates and status codes, never anything a client typed.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsSources {
  readonly queueDepth: () => number;
  readonly snapshotId: () => string | null;
  readonly snapshotEvents: () => number;
  readonly cacheBytes: () => number;
  readonly inFlight: () => number;
  /** A snapshot this node was told to serve and could not load (null: none). */
  readonly snapshotPending: () => string | null;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'status'>;
  private readonly duration: Histogram<'route'>;
  private readonly cache: Counter<'route' | 'result'>;
  private readonly meterOps: Histogram;
  private readonly searchBatches: Histogram;
  private readonly meterCommit: Histogram;
  private readonly meterCharges: Counter;
  private readonly meterFsyncs: Counter;
  private readonly streams: Counter<'outcome'>;
  private readonly streamRows: Counter;
  private readonly streamBytes: Counter;
  private readonly ledgerUp: Gauge;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'Requests answered, by route template and status.',
      labelNames: ['route', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request to reply written, by route template.',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.cache = new Counter({
      name: 'response_cache_total',
      help: 'Searches answered from the response cache (hit) or by a worker (miss).',
      labelNames: ['route', 'result'],
      registers,
    });
    this.meterOps = new Histogram({
      name: 'meter_batch_requests',
      help: 'Requests the metering thread handled per batch (one transaction each).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
      registers,
    });
    this.searchBatches = new Histogram({
      name: 'query_batch_searches',
      help: 'Searches a query worker answered together in one statement (1: a search alone, when a worker was free).',
      buckets: [1, 2, 4, 8, 16],
      registers,
    });
    this.meterCommit = new Histogram({
      name: 'meter_commit_seconds',
      help: 'Time to commit (and fsync) one batch of charges.',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers,
    });
    this.meterCharges = new Counter({ name: 'meter_charges_total', help: 'Responses charged to the usage ledger.', registers });
    this.meterFsyncs = new Counter({ name: 'meter_commits_total', help: 'Ledger transactions that held at least one charge (one fsync each).', registers });
    this.streams = new Counter({
      name: 'csv_streams_total',
      help: 'Streamed CSV bodies, by how they ended (completed, cancelled: client gone or body not wanted, failed).',
      labelNames: ['outcome'],
      registers,
    });
    this.streamRows = new Counter({ name: 'csv_stream_rows_total', help: 'CSV rows the query workers streamed.', registers });
    this.streamBytes = new Counter({ name: 'csv_stream_bytes_total', help: 'Uncompressed CSV bytes the query workers streamed.', registers });
    new Gauge({
      name: 'query_pool_queue_depth',
      help: 'Searches waiting for a query worker.',
      registers,
      collect() {
        this.set(sources.queueDepth());
      },
    });
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'Requests received and not yet answered.',
      registers,
      collect() {
        this.set(sources.inFlight());
      },
    });
    new Gauge({
      name: 'response_cache_bytes',
      help: 'Bytes held by the response cache.',
      registers,
      collect() {
        this.set(sources.cacheBytes());
      },
    });
    new Gauge({
      name: 'snapshot_info',
      help: 'The snapshot being served (value 1, id as label).',
      labelNames: ['id'],
      registers,
      collect() {
        this.reset();
        const id = sources.snapshotId();
        if (id) this.set({ id }, 1);
      },
    });
    this.ledgerUp = new Gauge({ name: 'ledger_up', help: 'The usage ledger answers (0: live routes answer 503 until it does).', registers });
    this.ledgerUp.set(1);
    new Gauge({
      name: 'snapshot_behind',
      help: 'The shared ledger names a snapshot this node could not load: it serves the previous one (value 1, the wanted id as label).',
      labelNames: ['wanted'],
      registers,
      collect() {
        this.reset();
        const wanted = sources.snapshotPending();
        if (wanted !== null) this.set({ wanted }, 1);
      },
    });
    new Gauge({
      name: 'snapshot_events',
      help: 'Events in the snapshot being served.',
      registers,
      collect() {
        this.set(sources.snapshotEvents());
      },
    });
  }

  // Label children are looked up once per label set: hashing label objects on every request shows
  // up in profiles of the cached path.
  private readonly requestChildren = new Map<string, { inc(n?: number): void }>();
  private readonly durationChildren = new Map<string, { observe(v: number): void }>();
  private readonly cacheChildren = new Map<string, { inc(): void }>();

  /** A turn's finished requests at once (server/access.ts): one counter step per route and status. */
  observeMany(finished: readonly { readonly route: string; readonly status: number; readonly seconds: number }[]): void {
    const counts = new Map<string, number>();
    for (const { route, status, seconds } of finished) {
      const key = `${route} ${status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      let dur = this.durationChildren.get(route);
      if (!dur) this.durationChildren.set(route, (dur = this.duration.labels({ route })));
      dur.observe(seconds);
    }
    for (const [key, n] of counts) {
      let req = this.requestChildren.get(key);
      if (!req) {
        const cut = key.lastIndexOf(' ');
        this.requestChildren.set(key, (req = this.requests.labels({ route: key.slice(0, cut), status: key.slice(cut + 1) })));
      }
      req.inc(n);
    }
  }

  cacheResult(route: string, hit: boolean): void {
    const key = `${route} ${hit}`;
    let c = this.cacheChildren.get(key);
    if (!c) this.cacheChildren.set(key, (c = this.cache.labels({ route, result: hit ? 'hit' : 'miss' })));
    c.inc();
  }

  searchBatch(searches: number): void {
    this.searchBatches.observe(searches);
  }

  meterBatch(ops: number, charges: number, commitSeconds: number): void {
    this.meterOps.observe(ops);
    if (charges > 0) {
      this.meterCharges.inc(charges);
      this.meterFsyncs.inc();
      this.meterCommit.observe(commitSeconds);
    }
  }

  ledgerHealth(up: boolean): void {
    this.ledgerUp.set(up ? 1 : 0);
  }

  streamEnded(outcome: 'completed' | 'cancelled' | 'failed', rows: number, bytes: number): void {
    this.streams.labels({ outcome }).inc();
    this.streamRows.inc(rows);
    this.streamBytes.inc(bytes);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
