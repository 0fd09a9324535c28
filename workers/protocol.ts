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
  /**
   * The quota cut: at most this many of the page's records may be delivered (what is left of the
   * caller's monthly quota), or null. A page longer than the cut is truncated, and says so.
   */
  readonly cut: number | null;
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
  /** Records in the body: what the caller is charged for. */
  readonly count: number;
  readonly nextOffset: number | null;
  /** The page was cut short by the quota (`cut`). */
  readonly truncated: boolean;
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

// ---------------------------------------------------------------------------------------------
// The metering thread (workers/meter/thread.ts): the one writer of the usage ledger. The main
// thread sends batches of requests; the thread answers each by id, after the transaction holding
// its charge has been committed to disk.

/** A plan, as a row of the accounts store. */
export interface Plan {
  readonly name: string;
  /** Event records per calendar month (America/Los_Angeles), or null for no cap. */
  readonly monthlyRecordLimit: number | null;
  /** Sorted slugs whose events never appear in this plan's results (asking for one is a 403). */
  readonly excludedCategories: readonly string[];
  readonly attributionRequired: boolean;
  /** Live requests a minute per key. */
  readonly requestsPerMinute: number;
}

/** A key as the main thread authenticates it: by the SHA-256 of the presented key. */
export interface KeyInfo {
  readonly keyId: string;
  readonly hash: string;
  readonly orgId: string;
  readonly orgName: string;
  readonly plan: Plan;
  readonly revoked: boolean;
}

/** Where an organization stands in its current period, for the quota headers. */
export interface QuotaState {
  readonly orgId: string;
  readonly plan: string;
  /** Null: no cap. */
  readonly limit: number | null;
  readonly used: number;
  /** Null: no cap. Reserved-but-uncommitted records already count as used here. */
  readonly remaining: number | null;
  readonly periodStartMs: number;
  readonly resetMs: number;
}

/** The /v1/usage body (see the contract's "Usage body"). */
export interface UsageBody {
  readonly organization: { readonly id: string; readonly name: string };
  readonly plan: {
    readonly name: string;
    readonly monthly_record_limit: number | null;
    readonly excluded_categories: readonly string[];
    readonly attribution_required: boolean;
  };
  readonly period: { readonly start: string; readonly end: string; readonly resets_at: string };
  readonly records: { readonly used: number; readonly remaining: number | null; readonly limit: number | null };
  readonly requests: { readonly count: number };
  readonly by_day: readonly { readonly date: string; readonly records: number; readonly requests: number }[];
}

export type MeterRequest =
  /** A key the main thread does not know: re-read the accounts (it may have just been created). */
  | { readonly op: 'lookup'; readonly id: number; readonly hash: string }
  /**
   * Hold up to `want` records of the key's organization. With `settle`, a full grant is charged
   * at once (the answer is already known: a cached page); otherwise a reservation is returned, to
   * be committed with what was delivered or released.
   */
  | { readonly op: 'reserve'; readonly id: number; readonly keyId: string; readonly want: number; readonly settle: boolean; readonly atMs: number }
  | { readonly op: 'commit'; readonly id: number; readonly reservation: number; readonly delivered: number; readonly atMs: number }
  | { readonly op: 'release'; readonly reservation: number }
  | { readonly op: 'peek'; readonly id: number; readonly keyId: string; readonly atMs: number }
  | { readonly op: 'usage'; readonly id: number; readonly keyId: string; readonly atMs: number };

export type MeterReply =
  | { readonly id: number; readonly ok: true; readonly key: KeyInfo | null }
  | {
      readonly id: number;
      readonly ok: true;
      readonly granted: number;
      /** Null when nothing is held: the grant was settled (charged) at once, or nothing was granted. */
      readonly reservation: number | null;
      readonly quota: QuotaState;
    }
  | { readonly id: number; readonly ok: true; readonly quota: QuotaState }
  | { readonly id: number; readonly ok: true; readonly usage: UsageBody; readonly quota: QuotaState }
  | { readonly id: number; readonly ok: false; readonly code: 'invalid_api_key' | 'unavailable'; readonly detail: string };

/** Main thread → thread: finish the batch in hand, close the files, release the lock, exit. */
export type MeterControl = { readonly op: 'close' };

/** Thread → main thread. */
export type MeterMessage =
  | { readonly type: 'accounts'; readonly keys: readonly KeyInfo[]; readonly plans: readonly Plan[] }
  | { readonly type: 'replies'; readonly replies: readonly MeterReply[]; readonly batch: { readonly ops: number; readonly charges: number; readonly commitMs: number } }
  | { readonly type: 'failed'; readonly detail: string }
  | { readonly type: 'closed' };

export interface MeterWorkerData {
  readonly ledgerDir: string;
  /** How often the accounts file is checked for changes while no request arrives. */
  readonly accountsPollMs: number;
}
