// Start-up and shutdown: builds the services once from the frozen config, opens the public
// listener and the admin (metrics) listener, and on stop drains: stop accepting, let in-flight
// requests finish (up to DRAIN_TIMEOUT_MS), then release the pool.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createHandler } from '../app.ts';
import { AccessLog } from '../access.ts';
import { ResponseCache } from '../cache.ts';
import { REPO_ROOT, type Config } from '../../core/config.ts';
import { listen, type Finished, type HttpServer, type Reply } from '../http.ts';
import { createLogger, type Logger } from '../log.ts';
import { Meter } from '../meter.ts';
import { Metrics } from '../metrics.ts';
import { openApiDocument } from '../openapi.ts';
import { QueryPool } from '../pool.ts';
import { RateLimiter } from '../ratelimit.ts';
import { problemReply } from '../reply.ts';
import { categoriesRoute, citiesRoute } from '../routes/catalog.ts';
import { csvRoute, demoRoute, eventRoute, eventsRoute, icsFeedRoute, jsonFeedRoute, rssRoute } from '../routes/events.ts';
import { changesCsvRoute, changesJsonRoute } from '../routes/changes.ts';
import { exportRoute } from '../routes/export.ts';
import { healthzRoute, openapiRoute, readyzRoute } from '../routes/operations.ts';
import { usageRoute } from '../routes/usage.ts';
import type { AnyRoute, Services } from '../route.ts';
import { Snapshots } from '../snapshots.ts';
import { createMailer } from '../web/mail.ts';
import { createSite } from '../web/site/index.ts';
import { AfterAnswer } from '../after-answer.ts';

export const ROUTES: readonly AnyRoute[] = [
  eventsRoute,
  eventRoute,
  csvRoute,
  exportRoute,
  rssRoute,
  jsonFeedRoute,
  icsFeedRoute,
  demoRoute,
  changesJsonRoute,
  changesCsvRoute,
  usageRoute,
  categoriesRoute,
  citiesRoute,
  openapiRoute,
  healthzRoute,
  readyzRoute,
];

export interface RunningServer {
  readonly port: number;
  readonly adminPort: number;
  readonly logger: Logger;
  readonly snapshots: Snapshots;
  /** Stop accepting, drain in-flight requests, release everything. Resolves when done. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Where log lines go instead of stdout (tests capture them). */
  readonly logStream?: NodeJS.WritableStream;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const { logger, flush, close: closeLog, infoLines } = createLogger(config.logLevel, opts.logStream);
  const version = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  // Batch sizes go to the metrics made below: only reported once requests flow.
  const pool = new QueryPool(config, { observe: (n) => metrics.searchBatch(n) });
  const cache = new ResponseCache(config.cacheMaxBytes);
  const snapshots = new Snapshots(config.dataDir, pool, logger, config.snapshotPollMs, (id) => cache.retainSnapshot(id));
  const demoLimiter = new RateLimiter(config.demoRatePerMinute);
  const keyLimiter = new RateLimiter(1);
  let inFlight = 0;
  let draining = false;
  const metrics = new Metrics({
    queueDepth: () => pool.queueDepth,
    snapshotId: () => snapshots.current?.ref.id ?? null,
    snapshotEvents: () => snapshots.current?.manifest.counts.events ?? 0,
    cacheBytes: () => cache.bytes,
    inFlight: () => inFlight,
    snapshotPending: () => snapshots.pending?.id ?? null,
  });
  // The ledger opens before anything listens: a server that cannot meter must not serve keys.
  let meter: Meter;
  try {
    meter = await Meter.start(config, logger, metrics);
    meter.followSnapshots((id) => snapshots.follow(id));
  } catch (err) {
    await pool.close();
    demoLimiter.close();
    keyLimiter.close();
    closeLog();
    throw err;
  }
  let openapi: Buffer | null = null;
  const svc: Services = {
    config,
    snapshots,
    pool,
    cache,
    demoLimiter,
    keyLimiter,
    meter,
    metrics,
    openapi: () => (openapi ??= Buffer.from(JSON.stringify(openApiDocument(ROUTES, config, version)))),
  };
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, log: logger });
  const afterAnswer = new AfterAnswer((err) => logger.warn({ err: (err as Error).message }, 'work after an answer failed'));
  const site = createSite({ ...svc, mailer, afterAnswer, webSecret: () => meter.webSecret }, logger);
  const handle = createHandler(ROUTES, svc, logger, site);

  let drained: (() => void) | null = null;
  const access = new AccessLog(infoLines, metrics);
  const onFinished = (f: Finished): void => {
    inFlight--;
    // Never the query string or Authorization: either may carry a key.
    access.add({
      method: f.request.method,
      route: f.reply?.route ?? 'unmatched',
      status: f.status,
      bytes: f.bytes,
      seconds: (performance.now() - f.request.receivedAt) / 1000,
      cache: f.reply?.cache ?? null,
      aborted: f.aborted,
    });
    if (draining && inFlight === 0) drained?.();
  };

  await snapshots.start();
  const http: HttpServer = await listen({
    host: config.host,
    port: config.port,
    trustProxy: config.trustProxy,
    onFinished,
    handler: (req) => {
      inFlight++;
      const reply = handle(req);
      // While draining, each answer closes its connection so keep-alive clients reconnect elsewhere.
      if (!draining) return reply;
      const closing = (r: Reply): Reply => ({ ...r, close: true });
      return reply instanceof Promise ? reply.then(closing) : closing(reply);
    },
  });
  const admin: HttpServer = await listen({
    host: config.adminHost,
    port: config.adminPort,
    trustProxy: false,
    handler: async (req) => {
      if (req.path !== '/metrics') return problemReply(config.webBaseUrl, 'not_found', 'The admin listener serves /metrics only.');
      // Requests finished in this turn are counted too.
      access.flush();
      return { status: 200, headers: [['Content-Type', metrics.contentType]], body: await metrics.text() };
    },
  });
  logger.info(
    { port: http.port, admin_port: admin.port, snapshot: snapshots.current?.ref.id ?? null, workers: config.poolThreads },
    `listening on http://${config.host}:${http.port} (metrics on http://${config.adminHost}:${admin.port}/metrics)`,
  );
  flush();

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      draining = true;
      http.stopListening();
      logger.info({ in_flight: inFlight }, 'draining');
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, config.drainTimeoutMs).unref();
        });
      }
      // What answered requests left to do (a sign-in mail) still needs the ledger and the mailer.
      const unfinished = await afterAnswer.settle(config.drainTimeoutMs);
      if (unfinished > 0) logger.warn({ unfinished }, 'stopped with work after answers unfinished');
      admin.stopListening();
      snapshots.stop();
      demoLimiter.close();
      keyLimiter.close();
      mailer.close();
      await meter.close();
      await pool.close();
      access.flush();
      logger.info({ in_flight: inFlight }, 'stopped');
      closeLog();
    })());

  return { port: http.port, adminPort: admin.port, logger, snapshots, stop };
}
