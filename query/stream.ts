// A body streamed from a query worker to the main thread over a MessagePort, at the reader's pace:
// the head first, then chunks, never more than STREAM_WINDOW_BYTES unacknowledged (the main thread
// credits bytes as the socket takes them), so the worker waits on a slow reader instead of piling
// the body up in memory. CSV searches and the whole-snapshot export both stream through here.
import type { MessagePort } from 'node:worker_threads';
import { STREAM_WINDOW_BYTES, type PageHead, type StreamControl, type StreamDone, type StreamMessage, type TaskFailure } from './protocol.ts';

/** A reader that takes nothing for this long gives its query thread back. */
const STREAM_STALL_MS = 60_000;

/** Buffers kept for reuse per stream: the window's worth of chunks, and one being made. */
const KEPT_BUFFERS = 6;
/** A chunk buffer is at least this large, so a returned one fits the next chunk of a similar size. */
const MIN_BUFFER_BYTES = 512 * 1024;

/**
 * Memory for a chunk of `size` bytes that streamChunks may move to the main thread: a returned
 * buffer when one is large enough, else a new one.
 */
export type ChunkAlloc = (size: number) => Uint8Array;

/** One chunk of a body: its bytes (an ArrayBuffer of their own, from ChunkAlloc or fresh; moved, not copied) and the rows in them. */
export interface Chunk {
  readonly bytes: Uint8Array;
  readonly rows: number;
  /** The body's last chunk. */
  readonly last: boolean;
}

const aborted = (): TaskFailure => ({ ok: false, code: 'cancelled', detail: 'the request was aborted' });

/**
 * Streams `head`, then the chunks `next` makes (the first, even of an empty body, carries the
 * header), until one is `last` or the main thread cancels (its control message, or `cancelFlag`).
 */
export async function streamChunks(
  port: MessagePort,
  cancelFlag: Int32Array,
  head: PageHead,
  next: (alloc: ChunkAlloc) => Promise<Chunk>,
): Promise<StreamDone | TaskFailure> {
  let inflight = 0;
  let cancelled = false;
  let wake: (() => void) | null = null;
  const free: ArrayBuffer[] = [];
  let allocations = 0;
  const alloc: ChunkAlloc = (size) => {
    const i = free.findIndex((b) => b.byteLength >= size);
    if (i !== -1) return new Uint8Array(free.splice(i, 1)[0] as ArrayBuffer, 0, size);
    allocations++;
    // allocUnsafeSlow: memory of its own (not the shared pool), uninitialized, as it is all written.
    return new Uint8Array(Buffer.allocUnsafeSlow(Math.max(size, MIN_BUFFER_BYTES)).buffer, 0, size);
  };
  port.on('message', (m: StreamControl) => {
    if (m.type === 'credit') {
      inflight -= m.bytes;
      for (const b of m.buffers ?? []) if (free.length < KEPT_BUFFERS) free.push(b);
    } else cancelled = true;
    wake?.();
  });
  const post = (m: StreamMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);
  const stopped = (): boolean => cancelled || Atomics.load(cancelFlag, 0) === 1;
  let bytes = 0;
  let sent = 0;
  let headSent = false;
  // Until the head is out, the main thread waits for it or for a failure: never leave it neither.
  const over = (cancelledNow: boolean): StreamDone | TaskFailure =>
    headSent ? { ok: true, streamed: true, rows: sent, bytes, cancelled: cancelledNow, allocations } : aborted();
  try {
    for (let first = true; ; first = false) {
      if (stopped()) break;
      const chunk = await next(alloc);
      if (first) {
        post({ type: 'head', head, wholeBytes: chunk.last ? chunk.bytes.length : null });
        headSent = true;
      }
      while (!stopped() && inflight > 0 && inflight + chunk.bytes.length > STREAM_WINDOW_BYTES) {
        const credited = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), STREAM_STALL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        wake = null;
        if (!credited) {
          post({ type: 'error', detail: `the client read nothing for ${STREAM_STALL_MS / 1000} s` });
          return over(true);
        }
      }
      if (stopped()) break;
      inflight += chunk.bytes.length;
      bytes += chunk.bytes.length;
      sent += chunk.rows;
      post({ type: 'chunk', bytes: chunk.bytes }, [chunk.bytes.buffer as ArrayBuffer]);
      if (chunk.last) break;
    }
    if (stopped()) return over(true);
    post({ type: 'end' });
    return over(false);
  } catch (err) {
    if (!headSent) return { ok: false, code: 'internal', detail: (err as Error).message };
    post({ type: 'error', detail: (err as Error).message });
    return over(true);
  } finally {
    port.close();
  }
}
