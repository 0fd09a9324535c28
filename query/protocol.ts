import type { MessagePort } from 'node:worker_threads';
import type { GoneEvent } from '../snapshot/gone.ts';
import type { QueryWord } from '../core/stem.ts';
import type { ChangesCursor } from './changes.ts';

// What crosses between the server's main thread and the query workers: types only. Workers never
// throw across the thread boundary; a failure comes back as data ({ok: false, code, detail}).

/** A published snapshot, as the main thread resolved it when it validated the request. */
export interface SnapshotRef {
  readonly id: string;
  /** Absolute directory holding events.parquet, records.jsonl and records.idx. */
  readonly dir: string;
}

/**
 * The canonical search: every filter of the contract resolved to plain values (folded names,
 * sorted lists, epoch-ms ranges), so equal searches are equal objects and share a cache entry.
 */
export interface SearchQuery {
  /** Folded city names (city_key), sorted, or null for any city. */
  readonly cities: readonly string[] | null;
  readonly geo: { readonly lat: number; readonly lng: number; readonly radiusKm: number } | null;
  /** The child's range in months: [age_min·12, age_max·12 + 11]. */
  readonly ages: { readonly loMonths: number; readonly hiMonths: number } | null;
  /** Sorted, distinct slugs; any matches. */
  readonly categories: readonly string[] | null;
  /** The words of q in order (core/stem.ts queryForms): each must match, by one of its prefixes. */
  readonly words: readonly QueryWord[] | null;
  readonly isFree: boolean | null;
  /**
   * An explicit overlap range (inclusive epoch ms), or 'upcoming': not ended at the time of the
   * query. `fromNow`: the range starts no earlier than the time of the query (week=current: the rest
   * of this week, nothing that has ended).
   */
  readonly range: { readonly fromMs: number; readonly toMs: number; readonly fromNow?: true } | 'upcoming';
  readonly sort: 'start' | 'distance';
  readonly limit: number;
  readonly offset: number;
  /**
   * A change-feed page (/v1/changes, query/changes.ts) instead of a search page: where it starts.
   * The filters above select as for a search (sort and offset unused; range explicit, never
   * measured from now, since a feed's membership must not move with the clock).
   */
  readonly changes?: ChangesCursor;
  /**
   * Keyset paging (a request's `cursor`, sort start, offset 0): the page starts after this
   * (start_ms, id) in the page order. Absent: paged by offset.
   */
  readonly after?: { readonly startMs: number; readonly id: string };
}

/** The output formats of a search (server/routes/formats.ts says how each is answered). */
export type OutputFormat = 'json' | 'csv' | 'rss' | 'jsonfeed' | 'ics';

/** What an iCalendar body says of itself (X-WR-CALNAME, its URL, its DTSTAMP). */
export interface CalendarInfo {
  /** The calendar's name as a calendar app lists it. */
  readonly name: string;
  /** The calendar's own URL (a feed's, without any key) or the event page's. */
  readonly url: string;
  /** The snapshot's build time (ISO): every VEVENT's DTSTAMP, so equal snapshots give equal bytes. */
  readonly stamp: string;
}

/**
 * What a feed body links to. Built on the main thread from the request (host, /api prefix, its
 * parameters); the worker adds the offsets, since the next page is known only once it has searched.
 */
export interface FeedLinks {
  /** The feed's URL without its query, e.g. https://api.example/v1/feed.rss. */
  readonly url: string;
  /**
   * The request's parameters, sorted by name, without the paging ones (offset; cursor and since on
   * the change feed). With api_key when the request carried one: a reader given only a URL must be
   * able to follow its links (the key goes back only to the client that sent it).
   */
  readonly params: readonly (readonly [string, string])[];
  /** The snapshot's build time (ISO): the channel's lastBuildDate. */
  readonly updated: string;
}

export interface SearchTask {
  readonly kind: 'search';
  readonly snapshot: SnapshotRef;
  readonly query: SearchQuery;
  readonly format: OutputFormat;
  /** Categories the caller's plan never receives. */
  readonly excludedCategories: readonly string[];
  /** The instant 'upcoming' is measured from. */
  readonly nowMs: number;
  readonly webBaseUrl: string;
  readonly attribution: { readonly text: string; readonly url: string };
  /** Offsets beyond this cannot be requested, so no next_offset points past it. */
  readonly maxOffset: number;
  /**
   * The quota cut: at most this many of the page's records may be delivered (what is left of the
   * caller's monthly quota), or null. A page longer than the cut is truncated, and says so.
   */
  readonly cut: number | null;
  /** Feeds only: what the body links to (self, next). */
  readonly links: FeedLinks | null;
  /** iCalendar only: the calendar's name, URL and stamp. */
  readonly calendar?: CalendarInfo | null;
  /**
   * CSV only: the port the body streams over (StreamMessage out, StreamControl in). The task's own
   * result then says only how the stream ended; the page's figures come first, in a 'head' message.
   */
  readonly stream: MessagePort | null;
  /** Wall-clock ms the task may still run once a worker picks it up (queue wait counts). */
  readonly deadlineMs: number;
  /** Int32[0] set to 1 by the main thread when every requester has gone: skip or stop the work. */
  readonly cancel: SharedArrayBuffer;
}

/** What is known of a page before its body: everything the reply's headers and the charge need. */
export interface PageHead {
  readonly total: number;
  /** Records in the body: what the caller is charged for. */
  readonly count: number;
  readonly nextOffset: number | null;
  /**
   * The cursor of the next page: a search's (core/cursor.ts) on a page asked by cursor that has a
   * next one, and on a start-ordered page whose next one is past the offset cap; a change feed's
   * (query/changes.ts) on every page (on the last, where its next changes will be). Absent or null otherwise.
   */
  readonly nextCursor?: string | null;
  /** The page was cut short by the quota (`cut`). */
  readonly truncated: boolean;
  /**
   * For 'upcoming' searches: the end of the earliest-ending match. The answer stays exact until the
   * clock passes it (only then does an event drop out). Null when the answer never expires.
   */
  readonly validUntilMs: number | null;
  /**
   * The strong entity tag (without quotes or encoding suffix). Buffered bodies: a hash of the body.
   * Streamed bodies (CSV): a hash of everything that determines the body (serializer version,
   * snapshot, rows and their distances, paging, links), known before the first byte is sent.
   */
  readonly etag: string;
}

export interface SearchOk extends PageHead {
  readonly ok: true;
  /** The whole response body, serialized in the worker (transferred, not copied). */
  readonly body: Uint8Array;
}

/** A streamed search's task result: how the stream ended (its head and chunks went over the port). */
export interface StreamDone {
  readonly ok: true;
  readonly streamed: true;
  readonly rows: number;
  readonly bytes: number;
  /** True when the main thread cancelled it (client gone, HEAD, 304) before the end. */
  readonly cancelled: boolean;
  /** Chunk buffers newly allocated for the body (the rest reused buffers the main thread moved back). */
  readonly allocations: number;
}

/** Worker → main thread over SearchTask.stream. */
export type StreamMessage =
  /**
   * The page's figures, sent once the first chunk is made (and before it): `wholeBytes` is the
   * body's size when that chunk is the whole body, else null (the reply then knows whether the
   * body is small enough to go uncompressed).
   */
  | { readonly type: 'head'; readonly head: PageHead; readonly wholeBytes: number | null }
  /** Body bytes (transferred). The worker keeps at most STREAM_WINDOW_BYTES unacknowledged. */
  | { readonly type: 'chunk'; readonly bytes: Uint8Array }
  | { readonly type: 'end' }
  /** The body cannot be finished: the reply must be abandoned (its head is already out). */
  | { readonly type: 'error'; readonly detail: string };

/** Main thread → worker over SearchTask.stream. */
export type StreamControl =
  /**
   * These many bytes left the main thread for the socket: the worker may send as many more.
   * `buffers` are chunks' memory the socket has copied out of, moved back for the next chunks to
   * reuse, so a long body cycles a few buffers instead of leaving one behind per chunk.
   */
  { readonly type: 'credit'; readonly bytes: number; readonly buffers?: readonly ArrayBuffer[] } | { readonly type: 'cancel' };

/** Unacknowledged body bytes a streaming worker may have in flight (memory per export is about this). */
export const STREAM_WINDOW_BYTES = 1 << 20;

export type FailureCode = 'unavailable' | 'internal' | 'cancelled';

/**
 * One event by id (/v1/events/{id}, the website's event page and its .ics). Not found when the id
 * is not in the snapshot or the event is in one of `excludedCategories`.
 */
export interface EventTask {
  readonly kind: 'event';
  readonly snapshot: SnapshotRef;
  readonly id: string;
  /** json: the event record's bytes (as a search serves it); ics: a calendar of that one event. */
  readonly format: 'json' | 'ics';
  readonly excludedCategories: readonly string[];
  readonly webBaseUrl: string;
  /** iCalendar only. */
  readonly calendar: CalendarInfo | null;
  readonly deadlineMs: number;
  readonly cancel: SharedArrayBuffer;
}

/** An event task's answer when there is no such event: `gone` when an earlier snapshot had it. */
export interface EventMissing {
  readonly ok: false;
  readonly code: 'not_found';
  readonly detail: string;
  readonly gone: GoneEvent | null;
}

export type EventResult = SearchOk | EventMissing | TaskFailure;

export interface TaskFailure {
  readonly ok: false;
  readonly code: FailureCode;
  /** Safe to show to the client: never SQL, never a stack. */
  readonly detail: string;
}

export type SearchResult = SearchOk | StreamDone | TaskFailure;

/**
 * Buffered searches (every format but CSV) that waited together while every worker was busy: the
 * worker answers them with one DuckDB statement per snapshot (sql/search.sql's branches joined by
 * UNION ALL), since binding and planning, not scanning, is most of a search's cost; each keeps its
 * own cancel flag and deadline, and gets its own answer.
 */
export interface BatchTask {
  readonly kind: 'batch';
  /** Each with `stream: null`. */
  readonly tasks: readonly SearchTask[];
}

/** A batch's answers, in the order of its tasks (bodies transferred). */
export interface BatchResult {
  readonly ok: true;
  readonly results: readonly (SearchOk | TaskFailure)[];
}

/**
 * The whole snapshot as CSV (/v1/export.csv): every record the plan may see, in the snapshot's
 * stored order, each row its stored cells and its link, streamed over `stream` like a CSV search.
 */
export interface ExportTask {
  readonly kind: 'export';
  readonly snapshot: SnapshotRef;
  readonly excludedCategories: readonly string[];
  readonly webBaseUrl: string;
  /** The quota cut: at most this many rows (the first ones), or null. */
  readonly cut: number | null;
  readonly stream: MessagePort | null;
  readonly deadlineMs: number;
  readonly cancel: SharedArrayBuffer;
}

/** Main thread → every worker, over a BroadcastChannel: load this snapshot before it is switched to. */
export interface PrepareMessage {
  readonly type: 'prepare';
  readonly snapshot: SnapshotRef;
}

/** Worker → main thread: this worker has the snapshot loaded (or could not load it). */
export interface PreparedMessage {
  readonly type: 'prepared';
  readonly snapshotId: string;
  readonly threadId: number;
  readonly error: string | null;
}

/** What each query worker is started with (Piscina workerData). */
export interface QueryWorkerData {
  /**
   * The BroadcastChannel name of this pool's snapshot announcements. One per pool: channels are
   * process-wide, and a pool must never count another pool's workers as ready.
   */
  readonly snapshotChannel: string;
}
