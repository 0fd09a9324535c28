// The main thread's side of the metering thread (workers/meter/thread.ts): requests are gathered
// for one turn of the event loop and posted as one message, replies are matched back by id, and
// the thread's view of keys and plans is mirrored here so that most requests authenticate
// without leaving this thread. Never rejects: a dead thread answers `unavailable`.
import type { Worker } from 'node:worker_threads';
import { ACCOUNT_CALLS, type AccountCall, type AccountCalls, type KeyInfo, type MeterMessage, type MeterReply, type MeterRequest, type MeterWorkerData, type PgMeterWorkerData, type Plan, type QuotaState, type UsageBody } from '../workers/protocol.ts';
import { loadSecret } from '../workers/meter/web-secret.ts';
import { tsWorker } from '../workers/threads.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

const THREAD = new URL('../workers/meter/thread.ts', import.meta.url);
const PG_THREAD = new URL('../workers/meter/pg-thread.ts', import.meta.url);

export type MeterFailure = { readonly ok: false; readonly code: 'invalid_api_key' | 'unavailable'; readonly detail: string };
export type Reserved = { readonly ok: true; readonly granted: number; readonly reservation: number | null; readonly quota: QuotaState };
export type Committed = { readonly ok: true; readonly quota: QuotaState };
export type Usage = { readonly ok: true; readonly usage: UsageBody; readonly quota: QuotaState };

/**
 * The website's account operations (see AccountCalls in workers/protocol.ts), run by the metering
 * thread: each resolves with the operation's result, or `unavailable` when the thread cannot answer.
 */
export type AccountClient = {
  readonly [K in AccountCall]: (...args: Parameters<AccountCalls[K]>) => Promise<ReturnType<AccountCalls[K]> | MeterFailure>;
};

type Pending = (reply: MeterReply) => void;
type WithoutId<T> = T extends { id: number } ? Omit<T, 'id'> : T;

export class Meter {
  private readonly pending = new Map<number, Pending>();
  private outbox: MeterRequest[] = [];
  private flushing = false;
  private seq = 0;
  private keys = new Map<string, KeyInfo>();
  private plansByName = new Map<string, Plan>();
  private readonly quotas = new Map<string, QuotaState>();
  private alive = false;
  /** The shared ledger answers (always true for the embedded one, which fails at start instead). */
  private healthy = true;
  private healthDetail = 'ok';
  private closed: Promise<void> | null = null;
  private snapshotId: string | null = null;
  private onSnapshot: (id: string) => void = () => undefined;
  readonly accounts: AccountClient = this.accountClient();

  private constructor(
    private readonly worker: Worker,
    private readonly logger: Logger,
    private readonly metrics: Metrics | null,
    private secret: Buffer,
  ) {}

  /**
   * The website's signing key: LEDGER_DIR/web-secret, or on the shared ledger the cluster's, once
   * the thread has read it (before that the ledger is not ready and account pages answer 503).
   */
  get webSecret(): Buffer {
    return this.secret;
  }

  /**
   * Starts the thread; resolves once the ledger is open and the accounts are read. On the shared
   * ledger it also resolves when PostgreSQL cannot be reached yet: the server starts, answers live
   * routes `unavailable`, and the thread keeps reconnecting.
   */
  static start(config: Config, logger: Logger, metrics: Metrics | null = null): Promise<Meter> {
    const ownSecret = loadSecret(config.ledgerDir);
    let worker: Worker;
    if (config.database) {
      const data: PgMeterWorkerData = {
        database: config.database,
        nodeName: config.nodeName,
        holdTtlMs: config.ledgerHoldMs,
        webSecret: ownSecret.toString('base64url'),
      };
      worker = tsWorker(PG_THREAD, { workerData: data });
    } else {
      const data: MeterWorkerData = { ledgerDir: config.ledgerDir, accountsPollMs: Math.min(1000, config.snapshotPollMs) };
      worker = tsWorker(THREAD, { workerData: data });
    }
    const meter = new Meter(worker, logger, metrics, ownSecret);
    // The shared ledger's thread posts the accounts before it has finished connecting (LISTEN, the
    // current snapshot) and answers `unavailable` until then: it has started once it says how it is.
    const startedBy: MeterMessage['type'] = config.database ? 'health' : 'accounts';
    return new Promise((resolve, reject) => {
      let started = false;
      worker.on('message', (m: MeterMessage) => {
        if (m.type === 'failed') {
          reject(new Error(m.detail));
          return;
        }
        meter.receive(m);
        if (!started && m.type === startedBy) {
          started = true;
          meter.alive = true;
          resolve(meter);
        }
      });
      worker.on('error', (err) => {
        logger.error({ err: err.message }, 'metering thread failed');
        if (!started) reject(err);
      });
      worker.on('exit', () => meter.died());
    });
  }

  /** Calls `fn` with the snapshot the shared ledger names, now if it has named one, and on every change. */
  followSnapshots(fn: (id: string) => void): void {
    this.onSnapshot = fn;
    if (this.snapshotId !== null) fn(this.snapshotId);
  }

  /** The ledger is open and answering. */
  get ready(): boolean {
    return this.alive && this.healthy;
  }

  /** Why the ledger is not ready ('ok' when it is). */
  get status(): string {
    return !this.alive ? 'the metering thread is not running' : this.healthDetail;
  }

  /** An active or revoked key by the SHA-256 of the presented key, as last read. */
  key(hash: string): KeyInfo | undefined {
    return this.keys.get(hash);
  }

  plan(name: string): Plan | undefined {
    return this.plansByName.get(name);
  }

  get plans(): readonly Plan[] {
    return [...this.plansByName.values()];
  }

  /** The organization's quota as of the latest answer about it (for headers on refusals). */
  lastQuota(orgId: string): QuotaState | undefined {
    return this.quotas.get(orgId);
  }

  /** Asks the thread about a key this thread has not heard of (it may have just been created). */
  lookup(hash: string): Promise<KeyInfo | null | MeterFailure> {
    return this.call({ op: 'lookup', hash }).then((r) => (r.ok ? ('key' in r ? r.key : null) : r));
  }

  reserve(keyId: string, want: number, settle: boolean, atMs: number): Promise<Reserved | MeterFailure> {
    return this.call({ op: 'reserve', keyId, want, settle, atMs }) as Promise<Reserved | MeterFailure>;
  }

  commit(reservation: number, delivered: number, atMs: number): Promise<Committed | MeterFailure> {
    return this.call({ op: 'commit', reservation, delivered, atMs }) as Promise<Committed | MeterFailure>;
  }

  release(reservation: number): void {
    this.send({ op: 'release', reservation });
  }

  peek(keyId: string, atMs: number): Promise<Committed | MeterFailure> {
    return this.call({ op: 'peek', keyId, atMs }) as Promise<Committed | MeterFailure>;
  }

  usage(keyId: string, atMs: number): Promise<Usage | MeterFailure> {
    return this.call({ op: 'usage', keyId, atMs }) as Promise<Usage | MeterFailure>;
  }

  private accountClient(): AccountClient {
    const call = (name: AccountCall) => (...args: unknown[]) =>
      this.call({ op: 'account', call: name, args } as WithoutId<MeterRequest>).then((r) => (r.ok ? ('account' in r ? r.account : r) : r));
    return Object.fromEntries(ACCOUNT_CALLS.map((name) => [name, call(name)])) as unknown as AccountClient;
  }

  /** Lets the thread finish its batch, close the ledger and release the writer lock. */
  close(): Promise<void> {
    return (this.closed ??= new Promise<void>((resolve) => {
      if (!this.alive) {
        resolve();
        return;
      }
      this.flush();
      this.worker.once('exit', () => resolve());
      this.worker.postMessage({ op: 'close' });
    }));
  }

  private call(req: WithoutId<MeterRequest>): Promise<MeterReply> {
    const id = ++this.seq;
    return new Promise<MeterReply>((resolve) => {
      if (!this.alive) {
        resolve({ id, ok: false, code: 'unavailable', detail: 'The usage ledger is not available; retry shortly.' });
        return;
      }
      this.pending.set(id, resolve);
      this.send({ ...req, id } as MeterRequest);
    });
  }

  private send(req: MeterRequest): void {
    if (!this.alive) return;
    this.outbox.push(req);
    if (!this.flushing) {
      this.flushing = true;
      // Everything asked during this turn of the event loop travels as one message.
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushing = false;
    if (this.outbox.length === 0) return;
    const batch = this.outbox;
    this.outbox = [];
    this.worker.postMessage(batch);
  }

  private receive(m: MeterMessage): void {
    switch (m.type) {
      case 'accounts':
        this.keys = new Map(m.keys.map((k) => [k.hash, k]));
        this.plansByName = new Map(m.plans.map((p) => [p.name, p]));
        return;
      case 'replies':
        if (m.batch.ops > 0) this.metrics?.meterBatch(m.batch.ops, m.batch.charges, m.batch.commitMs / 1000);
        for (const r of m.replies) {
          if (r.ok && 'quota' in r) this.quotas.set(r.quota.orgId, r.quota);
          const done = this.pending.get(r.id);
          this.pending.delete(r.id);
          done?.(r);
        }
        return;
      case 'health':
        if (m.ok !== this.healthy) {
          if (m.ok) this.logger.info('usage ledger reachable again');
          else this.logger.error({ err: m.detail }, 'usage ledger unreachable; live routes answer 503 until it is back');
        }
        this.healthy = m.ok;
        this.healthDetail = m.detail;
        this.metrics?.ledgerHealth(m.ok);
        return;
      case 'web_secret':
        this.secret = Buffer.from(m.secret, 'base64url');
        return;
      case 'snapshot':
        this.snapshotId = m.id;
        this.onSnapshot(m.id);
        return;
      case 'closed':
        this.alive = false;
        return;
      case 'failed':
        return;
    }
  }

  private died(): void {
    const unexpected = this.alive;
    this.alive = false;
    if (unexpected) this.logger.error('metering thread exited; live requests answer 503 until restart');
    for (const [id, done] of this.pending) done({ id, ok: false, code: 'unavailable', detail: 'The usage ledger is not available; retry shortly.' });
    this.pending.clear();
  }
}
