// The Piscina pool of DuckDB query workers, as the main thread uses it: bounded queue (full → a
// failure the route answers 503), a deadline per task, cancellation through a shared flag, and the
// snapshot broadcast that lets every worker load a new snapshot before requests are switched to it.
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import {
  type QueryWorkerData,
  type PrepareMessage, type PreparedMessage, type SearchResult, type SearchTask, type SnapshotRef, type TaskFailure,
} from '../workers/protocol.ts';
import { workerExecArgv } from '../workers/threads.ts';
import type { Config } from './config.ts';

const WORKER = new URL('../workers/query/worker.ts', import.meta.url);


export type TaskInput = Omit<SearchTask, 'cancel' | 'deadlineMs'>;

const unavailable = (detail: string): TaskFailure => ({ ok: false, code: 'unavailable', detail });

export class QueryPool {
  private readonly piscina: Piscina;
  private readonly channel: BroadcastChannel;

  constructor(private readonly config: Config) {
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
      execArgv: workerExecArgv(),
      // 'sync' parks idle threads in Atomics.wait, which would starve the snapshot channel.
      atomics: 'async',
    });
    (this.channel as unknown as { unref(): void }).unref();
  }

  get queueDepth(): number {
    return this.piscina.queueSize;
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /**
   * Runs one search. Never rejects: a full queue, a task past its deadline or a crashed worker all
   * come back as failures. Aborting `signal` flags the task so a worker skips or abandons it; the
   * thread itself is never killed for it (that would cost a DuckDB reload).
   */
  async run(input: TaskInput, signal: AbortSignal): Promise<SearchResult> {
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const onAbort = (): void => void Atomics.store(flag, 0, 1);
    signal.addEventListener('abort', onAbort, { once: true });
    const task: SearchTask = { ...input, cancel, deadlineMs: Date.now() + this.config.queryTimeoutMs };
    try {
      return (await this.piscina.run(task)) as SearchResult;
    } catch (err) {
      const message = (err as Error).message;
      if (/queue is at limit/i.test(message)) return unavailable('The server is at capacity; retry in a moment.');
      return { ok: false, code: 'internal', detail: `query worker failed: ${message}` };
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
