// The main thread's side of the metering thread (ledger/sqlite/thread.ts): requests are gathered
// for one turn of the event loop and posted as one message, replies are matched back by id, and
// the thread's view of keys and plans is mirrored here so that most requests authenticate
// without leaving this thread. Never rejects: a dead thread answers `unavailable`.
import { Worker } from 'node:worker_threads';
import { loadSecret } from '../ledger/web-secret.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';
import {
  ACCOUNT_CALLS,
  type AccountCall,
  type AccountCalls,
  type MeterMessage,
  type MeterReply,
  type MeterRequest,
  type MeterWorkerData,
  type PgMeterWorkerData,
} from '../ledger/protocol.ts';
import type { KeyInfo, Plan, QuotaState, UsageBody } from '../ledger/accounts.ts';
import { threadEntry } from '../core/thread-entry.ts';

const THREAD = threadEntry('../ledger/sqlite/thread', import.meta.url);
const PG_THREAD = threadEntry('../ledger/postgres/thread', import.meta.url);

export type MeterFailure = { readonly ok: false; readonly code: 'invalid_api_key' | 'unavailable'; readonly detail: string };
export type Reserved = { readonly ok: true; readonly granted: number; readonly reservation: number | null; readonly quota: QuotaState };
export type Committed = { readonly ok: true; readonly quota: QuotaState };
export type Usage = { readonly ok: true; readonly usage: UsageBody; readonly quota: QuotaState };

/**
 * The website's account operations (see AccountCalls in query/protocol.ts), run by the metering
 * thread: each resolves with the operation's result, or `unavailable` when the thread cannot answer.
 */
export type AccountClient = {
  readonly [K in AccountCall]: (...args: Parameters<AccountCalls[K]>) => Promise<ReturnType<AccountCalls[K]> | MeterFailure>;
};

type Pending = (reply: MeterReply) => void;

/** What a request that left while waiting for records is told (nobody reads it: the client is gone). */
const CANCELLED: MeterFailure = { ok: false, code: 'unavailable', detail: 'The request was cancelled.' };

/** How often the head of a line asks again anyway: holds of other nodes settle without a word here. */
const POLL_MS = 100;

/** The client a request answers: whether it left, and a signal for when it leaves (made on demand). */
export interface Client {
  readonly aborted: boolean;
  readonly signal: AbortSignal;
}

/** A request waiting for its organization's records; `poked` keeps a wake-up that came while it was asking. */
interface Waiter {
  poked: boolean;
  wake: (() => void) | null;
}

/** The requests of one organization waiting for records others hold, first come first served. */
interface Line {
  readonly waiters: Waiter[];
}

function poke(line: Line): void {
  const head = line.waiters[0];
  if (!head) return;
  head.poked = true;
  head.wake?.();
}

/** Resolves when `me` may try: it is the head and was poked, or POLL_MS passed, or the deadline came, or the client left. */
function chance(me: Waiter, line: Line, deadline: number, client: Client | undefined): Promise<void> {
  if (client?.aborted || (me.poked && line.waiters[0] === me)) return Promise.resolve();
  // Only a request that waits makes its AbortSignal.
  const signal = client?.signal;
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      me.wake = null;
      resolve();
    };
    const arm = (): void => {
      clearTimeout(timer);
      const left = deadline - performance.now();
      // Behind others: only the deadline; at the head: the next poll too.
      timer = setTimeout(tick, Math.max(0, line.waiters[0] === me ? Math.min(POLL_MS, left) : left));
    };
    const tick = (): void => {
      if (line.waiters[0] === me || performance.now() >= deadline) done();
      else arm();
    };
    me.wake = () => (line.waiters[0] === me ? done() : arm());
    signal?.addEventListener('abort', done, { once: true });
    arm();
  });
}

/**
 * Whether a capped grant fell short only because other requests in flight hold the rest: the
 * month is not spent and someone else holds records. Then waiting beats a false quota_exhausted
 * (or a page cut to what the others happen to hold back for a moment).
 */
function mustWait(r: Reserved | MeterFailure, want: number): boolean {
  if (!r.ok || r.granted >= want) return false;
  const q = r.quota;
  if (q.limit === null || q.remaining === null || q.used >= q.limit) return false;
  const held = q.limit - q.used - q.remaining;
  const mine = r.reservation !== null ? r.granted : 0;
  return held - mine > 0;
}

type WithoutId<T> = T extends { id: number } ? Omit<T, 'id'> : T;

export class Meter {
  private readonly pending = new Map<number, Pending>();
  private outbox: MeterRequest[] = [];
  private flushing = false;
  private seq = 0;
  private keys = new Map<string, KeyInfo>();
  private plansByName = new Map<string, Plan>();
  private readonly quotas = new Map<string, QuotaState>();
  /** Key id → organization id, from the mirrored keys: which line a request joins. */
  private orgOfKey = new Map<string, string>();
  /** This node's open holds → their organization, so that settling one wakes that organization's line. */
  private readonly holding = new Map<number, string>();
  /** Per organization, the requests waiting for records its other requests hold. */
  private readonly lines = new Map<string, Line>();
  /** Holds settled per organization (one number per organization): tells a waiter whether one settled while it asked. */
  private readonly settles = new Map<string, number>();
  private alive = false;
  /** The shared ledger answers (always true for the embedded one, which fails at start instead). */
  private healthy = true;
  private healthDetail = 'ok';
  private closed: Promise<void> | null = null;
  private snapshotId: string | null = null;
  private onSnapshot: (id: string) => void = () => undefined;
  readonly accounts: AccountClient = this.accountClient();

  private readonly worker: Worker;
  private readonly logger: Logger;
  private readonly metrics: Metrics | null;
  private secret: Buffer;
  /** How long a request waits for records its organization's other requests hold (QUERY_TIMEOUT_MS). */
  private readonly waitMs: number;
  private constructor(worker: Worker, logger: Logger, metrics: Metrics | null, secret: Buffer, waitMs: number) {
    this.worker = worker;
    this.logger = logger;
    this.metrics = metrics;
    this.secret = secret;
    this.waitMs = waitMs;
  }

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
      worker = new Worker(PG_THREAD, { workerData: data });
    } else {
      const data: MeterWorkerData = { ledgerDir: config.ledgerDir, accountsPollMs: Math.min(1000, config.snapshotPollMs) };
      worker = new Worker(THREAD, { workerData: data });
    }
    const meter = new Meter(worker, logger, metrics, ownSecret, config.queryTimeoutMs);
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

  /**
   * Holds up to `want` records for an answer (or, with `settle`, charges them at once when all are
   * granted). A capped organization whose records are short only because its other requests in
   * flight hold them waits for those to settle instead of being refused or cut: see Line below.
   * `client`: one that leaves while waiting gives up its place and holds nothing.
   */
  async reserve(keyId: string, want: number, settle: boolean, atMs: number, client?: Client): Promise<Reserved | MeterFailure> {
    let orgId = this.orgOfKey.get(keyId);
    // FIFO: while others of the organization wait, a newcomer queues behind them without trying.
    if (orgId === undefined || !this.lines.has(orgId)) {
      const seen = orgId === undefined ? 0 : this.settleCount(orgId);
      const r = await this.tryReserve(keyId, want, settle, atMs);
      if (!r.ok || !mustWait(r, want)) return this.unlessCancelled(r, client);
      this.giveBack(r);
      orgId = r.quota.orgId;
      return this.waitInLine(orgId, keyId, want, settle, atMs, client, orgId === this.orgOfKey.get(keyId) && seen !== this.settleCount(orgId));
    }
    return this.waitInLine(orgId, keyId, want, settle, atMs, client, false);
  }

  commit(reservation: number, delivered: number, atMs: number): Promise<Committed | MeterFailure> {
    const orgId = this.holding.get(reservation);
    this.holding.delete(reservation);
    const done = this.call({ op: 'commit', reservation, delivered, atMs }) as Promise<Committed | MeterFailure>;
    // The hold is gone once the thread has answered: whoever waits for the organization's records may try.
    // (call() answers failures as data and never rejects, so this chain loses nothing.)
    if (orgId !== undefined) void done.then(() => this.settled(orgId));
    return done;
  }

  release(reservation: number): void {
    const orgId = this.holding.get(reservation);
    this.holding.delete(reservation);
    this.send({ op: 'release', reservation });
    // The thread reads its messages in order: a reserve sent after this one sees the records freed.
    if (orgId !== undefined) this.settled(orgId);
  }

  /**
   * One try, no waiting in line: exactly what the ledger grants now (up to what is neither charged
   * nor held). `reserve` builds its wait on it; the ledger's model test checks it alone.
   */
  tryReserve(keyId: string, want: number, settle: boolean, atMs: number): Promise<Reserved | MeterFailure> {
    return (this.call({ op: 'reserve', keyId, want, settle, atMs }) as Promise<Reserved | MeterFailure>).then((r) => {
      if (r.ok && r.reservation !== null) this.holding.set(r.reservation, r.quota.orgId);
      return r;
    });
  }

  /** Frees a partial hold taken while others held the rest, without waking anyone: it was free before. */
  private giveBack(r: Reserved | MeterFailure): void {
    if (!r.ok || r.reservation === null) return;
    this.holding.delete(r.reservation);
    this.send({ op: 'release', reservation: r.reservation });
  }

  private unlessCancelled(r: Reserved | MeterFailure, client: Client | undefined): Reserved | MeterFailure {
    if (!client?.aborted || !r.ok) return r;
    if (r.reservation !== null) this.release(r.reservation);
    return CANCELLED;
  }

  /**
   * Waits in the organization's line, then tries again, until the records are granted, the month
   * is spent, nobody else holds any, or the wait is over (QUERY_TIMEOUT_MS: a request holds records
   * no longer than its answer takes); then the grant is whatever is left, possibly nothing (the
   * route answers 429 quota_held then, never quota_exhausted while the month is not spent).
   * Only the head of the line tries, so the first to wait is the first served and a partial hold
   * never hides records from the one behind it. The head is woken when a hold of this node
   * settles, when the one before it leaves, and every POLL_MS, since on the shared ledger other
   * nodes' holds settle unseen. `settledMeanwhile`: a hold settled while the first try was out.
   */
  private async waitInLine(
    orgId: string,
    keyId: string,
    want: number,
    settle: boolean,
    atMs: number,
    client: Client | undefined,
    settledMeanwhile: boolean,
  ): Promise<Reserved | MeterFailure> {
    let line = this.lines.get(orgId);
    if (line === undefined) {
      line = { waiters: [] };
      this.lines.set(orgId, line);
    }
    const me: Waiter = { poked: settledMeanwhile, wake: null };
    line.waiters.push(me);
    const deadline = performance.now() + this.waitMs;
    try {
      for (;;) {
        await chance(me, line, deadline, client);
        if (client?.aborted) return CANCELLED;
        me.poked = false;
        const last = performance.now() >= deadline;
        const seen = this.settleCount(orgId);
        const r = await this.tryReserve(keyId, want, settle, atMs);
        if (!mustWait(r, want) || last) return this.unlessCancelled(r, client);
        this.giveBack(r);
        if (seen !== this.settleCount(orgId)) me.poked = true;
      }
    } finally {
      const at = line.waiters.indexOf(me);
      if (at >= 0) line.waiters.splice(at, 1);
      if (line.waiters.length === 0) this.lines.delete(orgId);
      else if (at === 0) poke(line);
    }
  }

  private settleCount(orgId: string): number {
    return this.settles.get(orgId) ?? 0;
  }

  /** A hold of the organization settled on this node: the head of its line may try now. */
  private settled(orgId: string): void {
    this.settles.set(orgId, this.settleCount(orgId) + 1);
    const line = this.lines.get(orgId);
    if (line) poke(line);
  }

  peek(keyId: string, atMs: number): Promise<Committed | MeterFailure> {
    return this.call({ op: 'peek', keyId, atMs }) as Promise<Committed | MeterFailure>;
  }

  usage(keyId: string, atMs: number): Promise<Usage | MeterFailure> {
    return this.call({ op: 'usage', keyId, atMs }) as Promise<Usage | MeterFailure>;
  }

  private accountClient(): AccountClient {
    const call =
      (name: AccountCall) =>
      (...args: unknown[]) =>
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
        this.orgOfKey = new Map(m.keys.map((k) => [k.keyId, k.orgId]));
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
      case 'warning':
        this.logger.warn({ err: m.detail, call: m.call }, m.msg);
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
