// Response cache keyed by (snapshot, plan, format, canonical query), bounded in bytes (lru-cache),
// with single-flight: concurrent misses for one key share one worker task, so the hot path never
// waits on DuckDB twice for the same answer. An entry for a not-ended-yet search carries the
// instant it stops being exact (the earliest end among its matches) and is not served after it.
import { LRUCache } from 'lru-cache';
import type { SearchOk, TaskFailure } from '../workers/protocol.ts';

export type Answer = Omit<SearchOk, 'ok'>;
export type Outcome = { readonly hit: boolean; readonly answer: Answer } | { readonly hit: false; readonly failure: TaskFailure };

/** Bodies larger than this are answered but not kept: one huge export must not evict everything. */
const MAX_ENTRY_BYTES = 8 * 1024 * 1024;

const toAnswer = (r: SearchOk): Answer => ({ body: r.body, total: r.total, count: r.count, nextOffset: r.nextOffset, truncated: r.truncated, validUntilMs: r.validUntilMs });

interface Flight {
  readonly promise: Promise<SearchOk | TaskFailure>;
  readonly controller: AbortController;
  waiters: number;
}

export class ResponseCache {
  private readonly lru: LRUCache<string, Answer> | null;
  private readonly flights = new Map<string, Flight>();

  constructor(maxBytes: number) {
    this.lru = maxBytes > 0 ? new LRUCache<string, Answer>({ maxSize: maxBytes, sizeCalculation: (a) => a.body.length + 200 }) : null;
  }

  /** The cached answer if it is still exact at `nowMs`. Synchronous: a hit never leaves this tick. */
  peek(key: string, nowMs: number): Answer | undefined {
    const a = this.lru?.get(key);
    if (a === undefined) return undefined;
    if (a.validUntilMs !== null && nowMs > a.validUntilMs) {
      this.lru?.delete(key);
      return undefined;
    }
    return a;
  }

  /**
   * The answer for `key`: from the cache, from a computation already under way, or from `compute`.
   * The computation is cancelled (its signal aborts) only when every request waiting on it is gone.
   */
  async get(key: string, nowMs: number, signal: AbortSignal, compute: (signal: AbortSignal) => Promise<SearchOk | TaskFailure>): Promise<Outcome> {
    const cached = this.peek(key, nowMs);
    if (cached) return { hit: true, answer: cached };
    let flight = this.flights.get(key);
    if (!flight) {
      const controller = new AbortController();
      const promise = compute(controller.signal);
      const f: Flight = { promise, controller, waiters: 0 };
      flight = f;
      this.flights.set(key, f);
      const land = (): void => {
        if (this.flights.get(key) === f) this.flights.delete(key);
      };
      promise.then(
        (r) => {
          land();
          if (r.ok && r.body.length <= MAX_ENTRY_BYTES) this.lru?.set(key, toAnswer(r));
        },
        land,
      );
    }
    const f = flight;
    f.waiters++;
    const leave = (): void => {
      // The last one out cancels; later requests for the key start a fresh flight.
      if (--f.waiters === 0 && this.flights.get(key) === f) {
        this.flights.delete(key);
        f.controller.abort();
      }
    };
    signal.addEventListener('abort', leave, { once: true });
    try {
      const r = await f.promise;
      if (!r.ok) return { hit: false, failure: r };
      return { hit: false, answer: toAnswer(r) };
    } finally {
      signal.removeEventListener('abort', leave);
      if (!signal.aborted) f.waiters--;
    }
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }
}
