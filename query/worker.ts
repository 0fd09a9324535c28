// A Piscina query worker. Holds DuckDB over the snapshots it has been asked about (at most two:
// the current one and the one requests still in flight may name), runs one search at a time, and
// returns the serialized body as a transferred buffer, or streams it (CSV) over a port with flow
// control. Failures are returned, never thrown.
import { BroadcastChannel, threadId, type MessagePort } from 'node:worker_threads';
import { Piscina, workerData } from 'piscina';
import {
  type QueryWorkerData,
  type BatchResult,
  type BatchTask,
  type EventResult,
  type EventTask,
  type PageHead,
  type PrepareMessage,
  type PreparedMessage,
  type SearchOk,
  type SearchResult,
  type SearchTask,
  type SnapshotRef,
  type ExportTask,
  type StreamDone,
  type TaskFailure,
} from './protocol.ts';
import { streamChunks, type Chunk } from './stream.ts';
import { exportCsv } from './export.ts';
import { csvBatch, CsvLines, csvRow, searchCells } from '../core/csv.ts';
import { changesCsv, changesJson, encodeCursor, type ChangesBodyInput, type ChangesCursor } from './changes.ts';
import { pageUrl } from './links.ts';
import { bodyTag, csvTag } from './etag.ts';
import { SnapshotDb, type PageRow, type SearchPage } from './db.ts';
import { jsonEnvelope, nextCursor, nextOffset, readRecord, recordBytes, roundKm } from './envelope.ts';
import { icsBody } from './ical.ts';
import { eventUrl } from '../core/record.ts';
import { jsonFeedBody, rssBody } from './feeds.ts';

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
      void doomed.then(
        (d) => d.close(),
        () => undefined,
      );
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
  snapshot(msg.snapshot).then(
    () => reply(null),
    (err: unknown) => reply((err as Error).message),
  );
};
// Never keep the thread alive for the channel alone.
(channel as unknown as { unref(): void }).unref();

const fail = (code: TaskFailure['code'], detail: string): TaskFailure => ({ ok: false, code, detail });

/**
 * A result whose body has an ArrayBuffer of its own, so that it can be moved to the main thread
 * rather than copied. Small Buffers are slices of Node's shared pool: moving that pool would detach
 * their neighbours, so those are copied first.
 */
function ownBuffer(result: SearchOk): SearchOk {
  const b = result.body;
  return b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength ? { ...result, body: new Uint8Array(b) } : result;
}

/** `value`, posted with `buffers` moved rather than copied. */
function moving(value: unknown, buffers: ArrayBufferLike[]): unknown {
  return Piscina.move({
    get [Piscina.transferableSymbol]() {
      return buffers;
    },
    get [Piscina.valueSymbol]() {
      return value;
    },
  } as unknown as Parameters<typeof Piscina.move>[0]);
}

function transferable(result: SearchOk): unknown {
  const own = ownBuffer(result);
  return moving(own, [own.body.buffer]);
}

function transferableBatch(result: BatchResult): unknown {
  return moving(
    result,
    result.results.flatMap((r) => (r.ok ? [r.body.buffer] : [])),
  );
}

/** What a body is made of besides its rows, for the page's figures. */
interface Paged {
  readonly page: SearchPage;
  readonly next: number | null;
  readonly truncated: boolean;
  /** The next page's cursor (PageHead.nextCursor). */
  readonly nextCursor: string | null;
}

function bufferedBody(task: SearchTask, db: SnapshotDb, p: Paged): Buffer {
  const q = task.query;
  if (task.format === 'json') return jsonEnvelope(task, p.page, db.records, p.next, p.truncated, p.nextCursor);
  if (task.format === 'csv') throw new Error('a CSV search streams: it needs its port');
  const records = p.page.rows.map((row) => readRecord(db.records, row, task.webBaseUrl));
  if (task.format === 'ics') {
    if (!task.calendar) throw new Error('an iCalendar search needs its calendar');
    return icsBody(records, task.calendar);
  }
  const links = task.links;
  if (links === null) throw new Error(`a ${task.format} search needs its feed links`);
  const figures = { total: p.page.total, limit: q.limit, offset: q.offset, nextOffset: p.next, truncated: p.truncated };
  return task.format === 'rss' ? rssBody(task, links, records, figures) : jsonFeedBody(task, links, records, figures);
}

export default function run(task: SearchTask | EventTask | BatchTask | ExportTask): Promise<SearchResult | EventResult | BatchResult | unknown> {
  if (task.kind === 'batch') return batch(task);
  if (task.kind === 'export') return exportTask(task);
  return task.kind === 'event' ? eventById(task) : search(task);
}

/** One event by id: its record's bytes or a one-event calendar; not found (and whether it is gone) otherwise. */
async function eventById(task: EventTask): Promise<EventResult | unknown> {
  const db = await startable(task);
  if (isFailure(db)) return db;
  try {
    const found = await db.byId(task.id, task.excludedCategories);
    if (found === null || found.excluded) {
      // An excluded event is simply not there for this caller: neither its record nor its past.
      const past = found === null ? db.gone.lookup(task.id) : null;
      const gone = past && !past.categories.some((c) => task.excludedCategories.includes(c)) ? past : null;
      return { ok: false, code: 'not_found', detail: `There is no event ${task.id}.`, gone };
    }
    const row = { rid: found.rid, id: task.id, distanceKm: null };
    let body: Buffer;
    if (task.format === 'ics') {
      if (!task.calendar) throw new Error('an iCalendar event needs its calendar');
      body = icsBody([readRecord(db.records, row, task.webBaseUrl)], task.calendar);
    } else body = recordBytes(db.records, row, task.webBaseUrl);
    return transferable({ ok: true, body, total: 1, count: 1, nextOffset: null, truncated: false, validUntilMs: null, etag: bodyTag(body) });
  } catch (err) {
    return fail('internal', (err as Error).message);
  }
}

/** The whole snapshot as CSV (query/export.ts), streamed over the task's port. */
async function exportTask(task: ExportTask): Promise<StreamDone | TaskFailure> {
  if (task.stream === null) return fail('internal', 'an export streams: it needs its port');
  const refused = unstartable(task);
  if (refused) return refused;
  const db = await opened(task.snapshot);
  if (isFailure(db)) return db;
  try {
    return await exportCsv(task, db, new Int32Array(task.cancel));
  } catch (err) {
    return fail('internal', (err as Error).message);
  }
}

const ABORTED = (): TaskFailure => fail('cancelled', 'the request was aborted');

/** `cancelled` once every requester of the task has gone (the main thread set its flag), else null. */
function abandoned(task: SearchTask | EventTask | ExportTask): TaskFailure | null {
  return Atomics.load(new Int32Array(task.cancel), 0) === 1 ? ABORTED() : null;
}

/** Why a task is not worth starting: its requester left, or its deadline passed in the queue. */
function unstartable(task: SearchTask | EventTask | ExportTask): TaskFailure | null {
  return abandoned(task) ?? (Date.now() >= task.deadlineMs ? fail('unavailable', 'The server is too busy to answer in time; retry shortly.') : null);
}

/**
 * The snapshot's database, or `unavailable` when it cannot be opened: the server's state, not the
 * request's fault, and it may pass (a rebuild); the cause is logged by the main thread when it
 * tries to switch.
 */
async function opened(ref: SnapshotRef): Promise<SnapshotDb | TaskFailure> {
  try {
    return await snapshot(ref);
  } catch {
    return fail('unavailable', 'The event snapshot cannot be read right now; retry shortly.');
  }
}

/** The task's snapshot, unless the task is not worth starting or the snapshot cannot be opened. */
async function startable(task: SearchTask | EventTask): Promise<SnapshotDb | TaskFailure> {
  return unstartable(task) ?? opened(task.snapshot);
}

const TOO_LONG = (): TaskFailure => fail('unavailable', 'The search took too long and was stopped; narrow it with a date range, a city or a category.');

/** Runs `work` on `db`, interrupting it at `deadlineMs`: a TaskFailure when it was stopped or failed. */
async function withDeadline<T>(db: SnapshotDb, deadlineMs: number, work: () => Promise<T>): Promise<T | TaskFailure> {
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      db.interrupt();
    },
    Math.max(1, deadlineMs - Date.now()),
  );
  try {
    return await work();
  } catch (err) {
    return timedOut ? TOO_LONG() : fail('internal', (err as Error).message);
  } finally {
    clearTimeout(timer);
  }
}

const isFailure = (x: unknown): x is TaskFailure => typeof x === 'object' && x !== null && (x as { ok?: unknown }).ok === false;

/** The page as the task delivers it: cut by the quota (the next page starts where it was cut). */
function paged(task: SearchTask, full: SearchPage): Paged {
  const truncated = task.cut !== null && full.rows.length > task.cut;
  const page = truncated ? { ...full, rows: full.rows.slice(0, task.cut ?? 0) } : full;
  // A keyset page has no offset to move on: its next page is only by cursor.
  const next = task.query.after ? null : nextOffset(page.total, truncated ? page.rows.length : task.query.limit, task.query.offset, task.maxOffset);
  return { page, truncated, next, nextCursor: nextCursor(task.query, page) };
}

function headOf(task: SearchTask, p: Paged, etag: string): PageHead {
  return {
    total: p.page.total,
    count: p.page.rows.length,
    nextOffset: p.next,
    nextCursor: p.nextCursor,
    truncated: p.truncated,
    // Measured from now: exact until its earliest-ending match ends (none can start matching later).
    validUntilMs: task.query.range === 'upcoming' || task.query.range.fromNow ? p.page.firstEndMs : null,
    etag,
  };
}

/** A buffered answer (not CSV): its body serialized here, with the figures its headers need. */
function buffered(task: SearchTask, db: SnapshotDb, p: Paged): SearchOk | TaskFailure {
  try {
    const body = bufferedBody(task, db, p);
    return { ok: true, body, ...headOf(task, p, bodyTag(body)) };
  } catch (err) {
    return fail('internal', (err as Error).message);
  }
}

async function search(task: SearchTask): Promise<SearchResult | unknown> {
  const cancelled = new Int32Array(task.cancel);
  const db = await startable(task);
  if (isFailure(db)) return db;
  if (task.query.changes) {
    const r = await changesAnswer(task, db, task.query.changes);
    return r.ok ? transferable(r) : r;
  }
  const full = await withDeadline(db, task.deadlineMs, () => db.page(task.query, task.excludedCategories, task.nowMs));
  if (isFailure(full)) return full;
  const gone = abandoned(task);
  if (gone) return gone;
  const p = paged(task, full);
  if (task.stream !== null) {
    try {
      return await streamCsv(task, db, p.page.rows, headOf(task, p, csvTag(task, p.page, p.next, p.truncated, p.nextCursor)), cancelled);
    } catch (err) {
      return fail('internal', (err as Error).message);
    }
  }
  const r = buffered(task, db, p);
  return r.ok ? transferable(r) : r;
}

/**
 * A batch (BatchTask): the live tasks of each snapshot answered by one statement. When that
 * statement fails or is stopped at the earliest deadline among them, each task still within its
 * own deadline runs alone, so one search never fails another.
 */
async function batch(t: BatchTask): Promise<BatchResult | unknown> {
  const results: (SearchOk | TaskFailure)[] = t.tasks.map(() => fail('internal', 'not answered'));
  const bySnapshot = new Map<string, number[]>();
  t.tasks.forEach((task, i) => {
    const refused = task.stream === null ? unstartable(task) : fail('internal', 'a streamed search cannot be batched');
    if (refused) results[i] = refused;
    else bySnapshot.set(task.snapshot.id, [...(bySnapshot.get(task.snapshot.id) ?? []), i]);
  });
  for (const all of bySnapshot.values()) {
    const db = await opened((t.tasks[all[0] as number] as SearchTask).snapshot);
    if (isFailure(db)) {
      for (const i of all) results[i] = db;
      continue;
    }
    // Change-feed pages are not searches: each is answered alone.
    const indexes: number[] = [];
    for (const i of all) {
      const task = t.tasks[i] as SearchTask;
      if (task.query.changes) results[i] = unstartable(task) ?? (await changesAnswer(task, db, task.query.changes));
      else indexes.push(i);
    }
    if (indexes.length === 0) continue;
    const tasks = indexes.map((i) => t.tasks[i] as SearchTask);
    const earliest = Math.min(...tasks.map((task) => task.deadlineMs));
    let pages: (SearchPage | TaskFailure)[];
    const together = await withDeadline(db, earliest, () =>
      db.pages(tasks.map((task) => ({ query: task.query, excluded: task.excludedCategories, nowMs: task.nowMs }))),
    );
    if (!isFailure(together)) pages = together;
    else {
      pages = [];
      for (const task of tasks)
        pages.push(unstartable(task) ?? (await withDeadline(db, task.deadlineMs, () => db.page(task.query, task.excludedCategories, task.nowMs))));
    }
    indexes.forEach((i, j) => {
      const task = t.tasks[i] as SearchTask;
      const page = pages[j] as SearchPage | TaskFailure;
      results[i] = isFailure(page) ? page : (abandoned(task) ?? buffered(task, db, paged(task, page)));
    });
  }
  return transferableBatch({ ok: true, results: results.map((r) => (r.ok ? ownBuffer(r) : r)) });
}

const COMMA = Buffer.from(',');
const CRLF_BYTES = Buffer.from('\r\n');

/**
 * A change-feed page (query/changes.ts), buffered like a JSON search in either format (its pages
 * are at most CHANGES_MAX_LIMIT entries). Its records count toward the quota; deletions do not.
 */
async function changesAnswer(task: SearchTask, db: SnapshotDb, cursor: ChangesCursor): Promise<SearchOk | TaskFailure> {
  const page = await withDeadline(db, task.deadlineMs, () => db.changes(task.query, task.excludedCategories, cursor, task.cut));
  if (isFailure(page)) return page;
  const gone = abandoned(task);
  if (gone) return gone;
  const links = task.links;
  if (links === null) return fail('internal', 'a change feed needs its links');
  try {
    const nextCursor = encodeCursor({ ...cursor, afterMs: page.nextMs, afterId: page.nextId });
    const suffixes = new CsvLines();
    const stored = db.csvRecords;
    const input: ChangesBodyInput = {
      page,
      next: pageUrl(links.url, links.params, [['cursor', nextCursor]]),
      nextCursor,
      limit: task.query.limit,
      attribution: task.attribution,
      recordJson: (rid, id) => recordBytes(db.records, { rid, id, distanceKm: null }, task.webBaseUrl),
      recordCsv: (rid, id) =>
        stored === null
          ? suffixes.line(csvRow(readRecord(db.records, { rid, id, distanceKm: null }, task.webBaseUrl)))
          : Buffer.concat([stored.read(rid), COMMA, suffixes.line(searchCells(eventUrl(task.webBaseUrl, id), null))]),
    };
    const body = task.format === 'csv' ? changesCsv(input) : changesJson(input);
    return {
      ok: true,
      body,
      total: page.total,
      count: page.entries.reduce((n, e) => (e.rid === null ? n : n + 1), 0),
      nextOffset: null,
      nextCursor,
      truncated: page.truncated,
      validUntilMs: null,
      etag: bodyTag(body),
    };
  } catch (err) {
    return fail('internal', (err as Error).message);
  }
}

/**
 * One batch of a CSV body. From the snapshot's stored CSV rows when it has them: each row's own
 * cells as stored, then its link and distance formatted by fast-csv (the same bytes as formatting
 * the whole record, a fraction of the cost); otherwise by formatting the records.
 */
async function csvChunk(task: SearchTask, db: SnapshotDb, batch: readonly PageRow[], header: boolean, suffixes: CsvLines): Promise<Buffer> {
  const stored = db.csvRecords;
  if (stored === null)
    return csvBatch(
      batch.map((row) => readRecord(db.records, row, task.webBaseUrl)),
      header,
    );
  const parts: Buffer[] = header ? [await csvBatch([], true)] : [];
  for (const row of batch) {
    const distance = row.distanceKm === null ? null : roundKm(row.distanceKm);
    parts.push(stored.read(row.rid), COMMA, suffixes.line(searchCells(eventUrl(task.webBaseUrl, row.id), distance)), CRLF_BYTES);
  }
  return Buffer.concat(parts);
}

/** Rows per CSV batch: about 0.5 MB of CSV, small enough to keep the stream's memory flat. */
const CSV_BATCH_ROWS = 500;

/** Streams the CSV body over the task's port in batches of CSV_BATCH_ROWS, at the reader's pace (query/stream.ts). */
function streamCsv(task: SearchTask, db: SnapshotDb, rows: readonly PageRow[], head: PageHead, cancelFlag: Int32Array): Promise<StreamDone | TaskFailure> {
  const suffixes = new CsvLines();
  let i = 0;
  return streamChunks(task.stream as MessagePort, cancelFlag, head, async (): Promise<Chunk> => {
    const batch = rows.slice(i, i + CSV_BATCH_ROWS);
    // A fresh, exactly-sized ArrayBuffer: it is moved to the main thread, not copied.
    const bytes = new Uint8Array(await csvChunk(task, db, batch, i === 0, suffixes));
    i += CSV_BATCH_ROWS;
    return { bytes, rows: batch.length, last: i >= rows.length };
  });
}
