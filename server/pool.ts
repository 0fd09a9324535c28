// The Piscina pool of DuckDB query workers, as the main thread uses it: bounded queue (full → a
// failure the route answers 503), a deadline per task, cancellation through a shared flag, and the
// snapshot broadcast that lets every worker load a new snapshot before requests are switched to it.
import { randomUUID } from 'node:crypto';
import { BroadcastChannel, MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import {
  type QueryWorkerData,
  type BatchResult,
  type BatchTask,
  type EventMissing,
  type EventTask,
  type ExportTask,
  type PageHead,
  type PrepareMessage,
  type PreparedMessage,
  type SearchOk,
  type SearchResult,
  type SearchTask,
  type SnapshotRef,
  type StreamControl,
  type StreamDone,
  type StreamMessage,
  type TaskFailure,
} from '../query/protocol.ts';
import type { BodySink, BodyStream } from './http.ts';
import type { Config } from '../core/config.ts';
import { threadEntry } from '../core/thread-entry.ts';

const WORKER = threadEntry('../query/worker', import.meta.url);

export type TaskInput = Omit<SearchTask, 'cancel' | 'deadlineMs' | 'stream'>;
export type EventInput = Omit<EventTask, 'cancel' | 'deadlineMs'>;
export type ExportInput = Omit<ExportTask, 'cancel' | 'deadlineMs' | 'stream'>;

/** Where the pool reports how many searches each batch carried (server/metrics.ts). */
export interface BatchSizes {
  observe(searches: number): void;
}

/** A streamed search whose head has arrived: its figures, and the body still to come. */
export interface Streamed {
  readonly head: PageHead;
  /** The body's size when its first chunk is the whole of it, else null. */
  readonly wholeBytes: number | null;
  readonly body: BodyStream;
  /** Resolves when the worker is done with the task (finished, cancelled or failed). */
  readonly done: Promise<StreamDone | TaskFailure>;
}

const unavailable = (detail: string): TaskFailure => ({ ok: false, code: 'unavailable', detail });
const AT_CAPACITY = 'The server is at capacity; retry in a moment.';

/**
 * The most buffered searches one worker answers together (query/db.ts pages): enough to
 * take a whole burst off the queue, few enough that one batch never holds a worker for long.
 */
export const MAX_BATCH = 16;

/** A buffered search waiting for a worker, with its requester's callback. */
interface Waiting {
  readonly task: SearchTask;
  readonly resolve: (r: SearchOk | TaskFailure) => void;
}

/**
 * The main thread's end of a streamed body. Chunks wait here (at most the worker's window) until
 * the reply is piped; each chunk's bytes are credited back once the socket took them, or when it
 * drains after refusing more, which is what holds the worker to the client's pace.
 */
class PortBody implements BodyStream {
  private readonly queue: Uint8Array[] = [];
  private sink: BodySink | null = null;
  private blocked = false;
  private owed = 0;
  /** Chunk memory the sink is done with, moved back to the worker with the next credit. */
  private spent: ArrayBuffer[] = [];
  private ended = false;
  private failed = false;
  private closed = false;

  private readonly port: MessagePort;
  private readonly cancelTask: () => void;
  constructor(port: MessagePort, cancelTask: () => void) {
    this.port = port;
    this.cancelTask = cancelTask;
  }

  /** A message that followed the head. */
  receive(m: StreamMessage): void {
    if (m.type === 'chunk') this.queue.push(m.bytes);
    else if (m.type === 'end') this.ended = true;
    else if (m.type === 'error') this.failed = true;
    this.flush();
  }

  pipe(sink: BodySink): void {
    this.sink = sink;
    sink.onDrain(() => {
      this.blocked = false;
      this.credit(this.owed);
      this.owed = 0;
      this.flush();
    });
    this.flush();
  }

  cancel(): void {
    if (this.closed) return;
    this.closed = true;
    this.cancelTask();
    this.control({ type: 'cancel' });
    this.port.close();
  }

  private control(m: StreamControl): void {
    if (!this.closed || m.type === 'cancel') this.port.postMessage(m);
  }

  private credit(bytes: number): void {
    if (bytes <= 0 || this.closed) return;
    const buffers = this.spent;
    this.spent = [];
    this.port.postMessage({ type: 'credit', bytes, buffers } satisfies StreamControl, buffers);
  }

  private flush(): void {
    const sink = this.sink;
    if (sink === null || this.closed) return;
    if (this.failed) {
      this.closed = true;
      this.port.close();
      sink.abort();
      return;
    }
    while (!this.blocked && this.queue.length > 0) {
      const chunk = this.queue.shift() as Uint8Array;
      const written = sink.write(chunk);
      if (sink.copies) this.spent.push(chunk.buffer as ArrayBuffer);
      if (written) this.credit(chunk.length);
      else {
        this.blocked = true;
        this.owed += chunk.length;
      }
    }
    if (!this.blocked && this.queue.length === 0 && this.ended) {
      this.closed = true;
      this.port.close();
      sink.end();
    }
  }
}

export class QueryPool {
  private readonly piscina: Piscina;
  private readonly channel: BroadcastChannel;
  private readonly waiting: Waiting[] = [];
  /** Batches (or lone searches) handed to Piscina and not yet answered. */
  private inFlight = 0;
  /** Searches per batch handed out, for /metrics. */
  private readonly batches: BatchSizes;

  private readonly config: Config;
  constructor(config: Config, batchSizes: BatchSizes = { observe: () => undefined }) {
    this.config = config;
    this.batches = batchSizes;
    const data: QueryWorkerData = { snapshotChannel: `family-events:snapshots:${randomUUID()}` };
    this.channel = new BroadcastChannel(data.snapshotChannel);
    this.piscina = new Piscina({
      workerData: data,
      filename: WORKER.href,
      minThreads: config.poolThreads,
      maxThreads: config.poolThreads,
      maxQueue: config.poolMaxQueue,
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      // 'sync' parks idle threads in Atomics.wait, which would starve the snapshot channel.
      atomics: 'async',
    });
    (this.channel as unknown as { unref(): void }).unref();
  }

  /** Searches waiting here for a worker, and tasks waiting in Piscina's own queue. */
  get queueDepth(): number {
    return this.waiting.length + this.piscina.queueSize;
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /**
   * Runs one buffered search (every format but CSV). Never rejects: a full queue, a task past its
   * deadline or a crashed worker all come back as failures. Aborting `signal` flags the task so a
   * worker skips or abandons it; the thread itself is never killed for it (that would cost a
   * reload). A search goes to a worker at once when one is free; otherwise it waits here, and the
   * searches that waited together go to the next free worker as one batch (BatchTask).
   */
  run(input: TaskInput, signal: AbortSignal): Promise<SearchOk | TaskFailure> {
    if (this.waiting.length >= this.config.poolMaxQueue) return Promise.resolve(unavailable(AT_CAPACITY));
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const onAbort = (): void => void Atomics.store(flag, 0, 1);
    signal.addEventListener('abort', onAbort, { once: true });
    const task: SearchTask = { ...input, stream: null, cancel, deadlineMs: Date.now() + this.config.queryTimeoutMs };
    return new Promise<SearchOk | TaskFailure>((resolve) => {
      this.waiting.push({ task, resolve });
      this.pump();
    }).finally(() => signal.removeEventListener('abort', onAbort));
  }

  /** Hands waiting searches to Piscina while fewer batches are out than there are workers. */
  private pump(): void {
    while (this.inFlight < this.config.poolThreads && this.waiting.length > 0) {
      const taken = this.waiting.splice(0, MAX_BATCH);
      const live: Waiting[] = [];
      for (const w of taken) {
        // Requesters that left while their search waited: nothing to run.
        if (Atomics.load(new Int32Array(w.task.cancel), 0) === 1) w.resolve({ ok: false, code: 'cancelled', detail: 'the request was aborted' });
        else live.push(w);
      }
      if (live.length === 0) continue;
      this.inFlight++;
      // Not awaited: pump() runs from request code and from the last batch's settling. dispatch()
      // answers every waiter itself, Piscina's failures included, so it has nothing to reject with.
      void this.dispatch(live).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async dispatch(live: readonly Waiting[]): Promise<void> {
    const task: SearchTask | BatchTask = live.length === 1 ? (live[0] as Waiting).task : { kind: 'batch', tasks: live.map((w) => w.task) };
    this.batches.observe(live.length);
    let out: SearchResult | BatchResult;
    try {
      out = (await this.piscina.run(task)) as SearchResult | BatchResult;
    } catch (err) {
      const f = this.submitFailure(err);
      for (const w of live) w.resolve(f);
      return;
    }
    if ('results' in out) live.forEach((w, i) => w.resolve(out.results[i] ?? { ok: false, code: 'internal', detail: 'a batch came back short' }));
    else if (out.ok && 'streamed' in out) (live[0] as Waiting).resolve({ ok: false, code: 'internal', detail: 'a buffered search came back streamed' });
    else (live[0] as Waiting).resolve(out);
  }

  private submitFailure(err: unknown): TaskFailure {
    const message = (err as Error).message;
    if (/queue is at limit/i.test(message)) return unavailable(AT_CAPACITY);
    return { ok: false, code: 'internal', detail: `query worker failed: ${message}` };
  }

  /** One event by id (its record or a one-event calendar), on the same terms as run(). */
  async event(input: EventInput, signal: AbortSignal): Promise<SearchOk | EventMissing | TaskFailure> {
    const r = await this.submit(input, null, signal);
    if (r.ok && 'streamed' in r) return { ok: false, code: 'internal', detail: 'an event came back streamed' };
    return r;
  }

  /**
   * Runs one streamed search (CSV): resolves with the head once the worker has the page, and the
   * body as a stream; or with the failure, if the search failed before its head. Cancelling the
   * body (or aborting `signal`) stops the worker at its next chunk.
   */
  runStream(input: TaskInput | ExportInput, signal: AbortSignal): Promise<Streamed | TaskFailure> {
    const { port1, port2 } = new MessageChannel();
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const body = new PortBody(port1, () => void Atomics.store(flag, 0, 1));
    return new Promise((resolve) => {
      let head: PageHead | null = null;
      port1.on('message', (m: StreamMessage) => {
        if (m.type === 'head') {
          head = m.head;
          resolve({ head, wholeBytes: m.wholeBytes, body, done });
        } else body.receive(m);
      });
      const done = (this.submit(input, { port: port2, cancel }, signal) as Promise<SearchResult>).then((r): StreamDone | TaskFailure => {
        if (!r.ok) {
          port1.close();
          if (head === null) resolve(r);
          else body.receive({ type: 'error', detail: r.detail });
          return r;
        }
        if ('streamed' in r) return r;
        const f: TaskFailure = { ok: false, code: 'internal', detail: 'a streamed search came back buffered' };
        resolve(f);
        return f;
      });
    });
  }

  private async submit(
    input: TaskInput | EventInput | ExportInput,
    stream: { port: MessagePort; cancel: SharedArrayBuffer } | null,
    signal: AbortSignal,
  ): Promise<SearchResult | EventMissing> {
    const cancel = stream?.cancel ?? new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const onAbort = (): void => void Atomics.store(flag, 0, 1);
    signal.addEventListener('abort', onAbort, { once: true });
    const deadlineMs = Date.now() + this.config.queryTimeoutMs;
    const task: SearchTask | EventTask | ExportTask =
      input.kind === 'event' ? { ...input, cancel, deadlineMs } : { ...input, stream: stream?.port ?? null, cancel, deadlineMs };
    try {
      return (await this.piscina.run(task, stream ? { transferList: [stream.port] as never } : {})) as SearchResult | EventMissing;
    } catch (err) {
      stream?.port.close();
      return this.submitFailure(err);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Asks every worker to load `ref` and resolves once each has (or after `timeoutMs`, after which
   * any worker that is not ready loads it on its first request instead). Re-announces until all
   * have answered, since a worker that is still starting misses a single broadcast.
   */
  prepare(ref: SnapshotRef, timeoutMs: number): Promise<{ ready: number; errors: string[] }> {
    return new Promise((resolve) => {
      const ready = new Set<number>();
      const errors: string[] = [];
      const want = this.config.poolThreads;
      const announce = (): void => {
        const msg: PrepareMessage = { type: 'prepare', snapshot: ref };
        this.channel.postMessage(msg);
      };
      const finish = (): void => {
        clearInterval(again);
        clearTimeout(deadline);
        this.channel.removeEventListener('message', onMessage as never);
        resolve({ ready: ready.size, errors });
      };
      const onMessage = (event: { data: PrepareMessage | PreparedMessage }): void => {
        const m = event.data;
        if (m.type !== 'prepared' || m.snapshotId !== ref.id) return;
        if (m.error) errors.push(m.error);
        ready.add(m.threadId);
        if (ready.size >= want) finish();
      };
      this.channel.addEventListener('message', onMessage as never);
      const again = setInterval(announce, 250);
      const deadline = setTimeout(finish, timeoutMs);
      announce();
    });
  }

  async close(): Promise<void> {
    this.channel.close();
    await this.piscina.destroy();
  }
}
