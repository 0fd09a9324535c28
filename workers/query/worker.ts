// A Piscina query worker. Holds DuckDB over the snapshots it has been asked about (at most two:
// the current one and the one requests still in flight may name), runs one search at a time, and
// returns the serialized body as a transferred buffer. Failures are returned, never thrown.
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { Piscina, workerData } from 'piscina';
import {
  type QueryWorkerData,
  type PrepareMessage, type PreparedMessage, type SearchOk, type SearchResult, type SearchTask, type SnapshotRef, type TaskFailure,
} from '../protocol.ts';
import { SnapshotDb } from './db.ts';
import { jsonEnvelope, nextOffset } from './envelope.ts';

const KEEP_OPEN = 2;
const open = new Map<string, Promise<SnapshotDb>>();

function snapshot(ref: SnapshotRef): Promise<SnapshotDb> {
  let db = open.get(ref.id);
  if (db === undefined) {
    db = SnapshotDb.open(ref);
    open.set(ref.id, db);
    db.catch(() => open.delete(ref.id));
    // Oldest first: a Map iterates in insertion order.
    while (open.size > KEEP_OPEN) {
      const [oldest, doomed] = open.entries().next().value as [string, Promise<SnapshotDb>];
      open.delete(oldest);
      // Only this thread uses it, and it runs one task at a time: nothing is mid-query on it now.
      void doomed.then((d) => d.close(), () => undefined);
    }
  }
  return db;
}

// The main thread announces a new snapshot before it switches requests to it, so the load happens
// here, off the request path; requests keep using the old snapshot until every worker is ready.
const channel = new BroadcastChannel((workerData as QueryWorkerData).snapshotChannel);
channel.onmessage = (event) => {
  const msg = (event as { data: PrepareMessage | PreparedMessage }).data;
  if (msg.type !== 'prepare') return;
  const reply = (error: string | null): void => {
    const done: PreparedMessage = { type: 'prepared', snapshotId: msg.snapshot.id, threadId, error };
    channel.postMessage(done);
  };
  snapshot(msg.snapshot).then(() => reply(null), (err: unknown) => reply((err as Error).message));
};
// Never keep the thread alive for the channel alone.
(channel as unknown as { unref(): void }).unref();

const fail = (code: TaskFailure['code'], detail: string): TaskFailure => ({ ok: false, code, detail });

/**
 * A result whose body buffer is moved to the main thread rather than copied. Small Buffers are
 * slices of Node's shared pool: moving that pool would detach its neighbours, so those are copied
 * into an ArrayBuffer of their own first.
 */
function transferable(result: SearchOk): unknown {
  const b = result.body;
  if (b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength) result = { ...result, body: new Uint8Array(b) };
  const body = result.body.buffer;
  const value = result;
  return Piscina.move({
    get [Piscina.transferableSymbol]() {
      return body;
    },
    get [Piscina.valueSymbol]() {
      return value;
    },
  } as unknown as Parameters<typeof Piscina.move>[0]);
}

export default async function run(task: SearchTask): Promise<SearchResult | unknown> {
  const cancelled = new Int32Array(task.cancel);
  if (Atomics.load(cancelled, 0) === 1) return fail('cancelled', 'the request was aborted');
  const startedAt = Date.now();
  if (startedAt >= task.deadlineMs) return fail('unavailable', 'The server is too busy to answer in time; retry shortly.');

  let db: SnapshotDb;
  try {
    db = await snapshot(task.snapshot);
  } catch {
    // The snapshot on disk is unreadable: the server's state, not the request's fault, and it
    // may pass (a rebuild); the cause is logged by the main thread when it tries to switch.
    return fail('unavailable', 'The event snapshot cannot be read right now; retry shortly.');
  }

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    db.interrupt();
  }, Math.max(1, task.deadlineMs - startedAt));
  try {
    const full = await db.page(task.query, task.excludedCategories, task.nowMs);
    if (Atomics.load(cancelled, 0) === 1) return fail('cancelled', 'the request was aborted');
    // Cut by the quota: the page ends early, and the next page starts where it was cut.
    const truncated = task.cut !== null && full.rows.length > task.cut;
    const page = truncated ? { ...full, rows: full.rows.slice(0, task.cut ?? 0) } : full;
    const next = nextOffset(page.total, truncated ? page.rows.length : task.query.limit, task.query.offset, task.maxOffset);
    const ok: SearchOk = {
      ok: true,
      body: jsonEnvelope(task, page, db.records, next, truncated),
      total: page.total,
      count: page.rows.length,
      nextOffset: next,
      truncated,
      validUntilMs: task.query.range === 'upcoming' ? page.firstEndMs : null,
    };
    return transferable(ok);
  } catch (err) {
    if (timedOut) return fail('unavailable', 'The search took too long and was stopped; narrow it with a date range, a city or a category.');
    return fail('internal', (err as Error).message);
  } finally {
    clearTimeout(timer);
  }
}
