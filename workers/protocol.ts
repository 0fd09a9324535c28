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
  /** Folded words, distinct; each must prefix a word of the event. */
  readonly words: readonly string[] | null;
  readonly isFree: boolean | null;
  /** An explicit overlap range (inclusive epoch ms), or 'upcoming': not ended at the time of the query. */
  readonly range: { readonly fromMs: number; readonly toMs: number } | 'upcoming';
  readonly sort: 'start' | 'distance';
  readonly limit: number;
  readonly offset: number;
}

export type OutputFormat = 'json';

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
  /** Wall-clock ms the task may still run once a worker picks it up (queue wait counts). */
  readonly deadlineMs: number;
  /** Int32[0] set to 1 by the main thread when every requester has gone: skip or stop the work. */
  readonly cancel: SharedArrayBuffer;
}

export interface SearchOk {
  readonly ok: true;
  /** The whole response body, serialized in the worker (transferred, not copied). */
  readonly body: Uint8Array;
  readonly total: number;
  readonly count: number;
  readonly nextOffset: number | null;
  /**
   * For 'upcoming' searches: the end of the earliest-ending match. The answer stays exact until the
   * clock passes it (only then does an event drop out). Null when the answer never expires.
   */
  readonly validUntilMs: number | null;
}

export type FailureCode = 'unavailable' | 'internal' | 'cancelled';

export interface TaskFailure {
  readonly ok: false;
  readonly code: FailureCode;
  /** Safe to show to the client: never SQL, never a stack. */
  readonly detail: string;
}

export type SearchResult = SearchOk | TaskFailure;

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
