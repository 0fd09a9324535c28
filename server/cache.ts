// Response cache keyed by (snapshot, plan exclusions, format, canonical query, quota cut, and for
// feeds the links they carry), bounded in bytes (lru-cache). An entry keeps its compressed forms as
// they are first asked for, so a hit never compresses again. Single-flight: concurrent misses for
// one key share one worker task, so the hot path never waits on DuckDB twice for the same answer.
// An entry for a not-ended-yet search carries the instant it stops being exact (the earliest end
// among its matches) and is not served after it. Entries die with their snapshot.
import { LRUCache } from 'lru-cache';
import type { PageHead, SearchOk, TaskFailure } from '../query/protocol.ts';
import { compress } from './compress.ts';
import type { BodySink, BodyStream } from './http.ts';

export interface Answer extends PageHead {
  /** The identity (uncompressed) body. */
  readonly body: Uint8Array;
  /** Compressed forms made so far. */
  readonly forms: Map<'gzip' | 'br', Uint8Array>;
}

/** A failed computation's answer: a worker's failure, or what a caller computes (e.g. an event that is not there). */
export interface Failed {
  readonly ok: false;
}

export type Outcome<F extends Failed = TaskFailure> = { readonly hit: boolean; readonly answer: Answer } | { readonly hit: false; readonly failure: F };

/** Bodies larger than this are answered but not kept: one huge export must not evict everything. */
const MAX_ENTRY_BYTES = 8 * 1024 * 1024;
/**
 * A streamed body is kept only up to this size: its chunks are copied while they pass, and an
 * export's memory must stay flat (a 10,000-row page is ~10 MB and is not worth holding anyway).
 */
export const MAX_STREAMED_ENTRY_BYTES = 1024 * 1024;

const answerOf = (r: PageHead & { readonly body: Uint8Array }): Answer => ({
  body: r.body,
  total: r.total,
  count: r.count,
  nextOffset: r.nextOffset,
  nextCursor: r.nextCursor ?? null,
  truncated: r.truncated,
  validUntilMs: r.validUntilMs,
  etag: r.etag,
  forms: new Map(),
});

function entrySize(a: Answer): number {
  let n = a.body.length + 256;
  for (const f of a.forms.values()) n += f.length;
  return n;
}

interface Flight {
  readonly promise: Promise<SearchOk | Failed>;
  readonly controller: AbortController;
  waiters: number;
}

export class ResponseCache {
  private readonly lru: LRUCache<string, Answer> | null;
  private readonly flights = new Map<string, Flight>();
  private readonly compressing = new Map<string, Promise<Uint8Array>>();

  constructor(maxBytes: number) {
    this.lru = maxBytes > 0 ? new LRUCache<string, Answer>({ maxSize: maxBytes, maxEntrySize: MAX_ENTRY_BYTES, sizeCalculation: entrySize }) : null;
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
  async get<F extends Failed = TaskFailure>(
    key: string,
    nowMs: number,
    signal: AbortSignal,
    compute: (signal: AbortSignal) => Promise<SearchOk | F>,
  ): Promise<Outcome<F>> {
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
      promise.then((r) => {
        land();
        if (r.ok) this.lru?.set(key, answerOf(r));
      }, land);
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
      // A key is only ever computed by one kind of computation, so its flight fails with that kind's F.
      const r = (await f.promise) as SearchOk | F;
      if (!r.ok) return { hit: false, failure: r };
      // The entry the flight stored, so that compressed forms made for one waiter serve the others.
      return { hit: false, answer: this.lru?.peek(key) ?? answerOf(r) };
    } finally {
      signal.removeEventListener('abort', leave);
      if (!signal.aborted) f.waiters--;
    }
  }

  /** The answer's body in `enc`: kept from before, or compressed now (once, however many ask) and kept. */
  encoded(key: string, a: Answer, enc: 'gzip' | 'br'): Uint8Array | Promise<Uint8Array> {
    const form = a.forms.get(enc);
    if (form !== undefined) return form;
    const job = `${enc}\0${key}\0${a.etag}`;
    let p = this.compressing.get(job);
    if (p === undefined) {
      p = compress(a.body, enc).then((bytes) => {
        a.forms.set(enc, bytes);
        // Re-set so the entry's size counts the new form (only if it is still this entry).
        if (this.lru?.peek(key) === a) this.lru.set(key, a);
        return bytes;
      });
      const done = (): void => void this.compressing.delete(job);
      p.then(done, done);
      this.compressing.set(job, p);
    }
    return p;
  }

  /**
   * Passes a streamed body through, copying it while it stays under MAX_STREAMED_ENTRY_BYTES; a
   * body that ends complete within that is kept under `key` like any other answer.
   */
  keepStreamed(key: string, head: PageHead, inner: BodyStream): BodyStream {
    if (this.lru === null) return inner;
    const lru = this.lru;
    let parts: Uint8Array[] | null = [];
    let size = 0;
    return {
      pipe(sink: BodySink): void {
        inner.pipe({
          // Chunks being kept for the cache are not the producer's to reuse.
          get copies() {
            return parts === null && sink.copies;
          },
          write(chunk) {
            if (parts !== null) {
              size += chunk.length;
              if (size > MAX_STREAMED_ENTRY_BYTES) parts = null;
              else parts.push(chunk);
            }
            return sink.write(chunk);
          },
          end() {
            if (parts !== null) lru.set(key, answerOf({ ...head, body: Buffer.concat(parts) }));
            sink.end();
          },
          abort: () => sink.abort(),
          onDrain: (cb) => sink.onDrain(cb),
        });
      },
      cancel: () => inner.cancel(),
    };
  }

  /** Drops every entry of another snapshot than `snapshotId` (requests in flight may still add one). */
  retainSnapshot(snapshotId: string): void {
    if (this.lru === null) return;
    const prefix = `${snapshotId}\0`;
    for (const key of [...this.lru.keys()]) if (!key.startsWith(prefix)) this.lru.delete(key);
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }
}
