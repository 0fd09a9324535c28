import type { MessagePort } from 'node:worker_threads';

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

/** The output formats of a search (server/routes/events.ts says how each is answered). */
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
  /** The request's parameters, sorted by name, without api_key (never in a link) and offset. */
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
  /** These many bytes left the main thread for the socket: the worker may send as many more. */
  { readonly type: 'credit'; readonly bytes: number } | { readonly type: 'cancel' };

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

/**
 * An event an earlier snapshot served and this one does not (withdrawn upstream, or past the
 * window): enough to say what it was and to point at similar events. Kept in the snapshot's
 * gone.jsonl (workers/snapshot/gone.ts).
 */
export interface GoneEvent {
  readonly id: string;
  readonly title: string;
  readonly start_datetime: string;
  readonly venue_city: string;
  readonly categories: readonly string[];
  /** The build time (ISO) of the first snapshot without it. */
  readonly removed_at: string;
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

// ---------------------------------------------------------------------------------------------
// Developer accounts (the website): the metering thread is the server's one connection to
// accounts.sqlite, so every account operation is a request to it. The main thread never runs SQL.

export type LoginPurpose = 'sign_in' | 'invite';
export type Role = 'owner' | 'member';

/** Why an account operation did nothing. */
export type AccountRefusal = {
  readonly ok: false;
  readonly reason: 'unknown_user' | 'unknown_org' | 'not_member' | 'unknown_key' | 'not_active' | 'invalid' | 'limited' | SendRefusal;
  /** For `invite_limited`: whose limit (the sending account's or its organization's), and when one more may be sent. */
  readonly per?: 'sender' | 'organization';
  readonly windowMs?: number;
  readonly retryAfterMs?: number;
  /** For the limits: the limit that was reached (and, for `too_many_keys`, the live keys counted). */
  readonly max?: number;
  readonly live?: number;
};

/**
 * The ledger's limits on what an account can make the service send or spend
 * (workers/meter/rules.ts): invitations per sender and per organization in a window, pending
 * invitations per organization, live keys per organization.
 */
export type SendRefusal = 'invite_limited' | 'too_many_pending' | 'too_many_keys';

/**
 * At most `max` links (sign-in and invitation alike) to one address in `windowMs`, counted in the
 * ledger, so the limit holds across nodes and restarts; beyond it, the refusal `limited`.
 */
export interface MailLimit {
  readonly max: number;
  readonly windowMs: number;
}

/** Why a link was not spent (or would not be): `purpose`, a link of the other kind, is left unspent for its own page. */
export type LoginTokenRefusal = { readonly ok: false; readonly reason: 'unknown' | 'expired' | 'used' | 'binding' | 'purpose' };

export type SpentLoginToken = { readonly ok: true; readonly email: string; readonly purpose: LoginPurpose; readonly orgId: string | null } | LoginTokenRefusal;

/** A link as its page shows it before anything is spent: whom it is for, and an invitation's organization and inviter. */
export type PeekedLoginToken =
  | {
      readonly ok: true;
      readonly email: string;
      readonly purpose: LoginPurpose;
      readonly orgId: string | null;
      readonly orgName: string | null;
      /** The inviter's e-mail; null for a sign-in link, or an inviter the ledger knows no address of. */
      readonly inviter: string | null;
    }
  | LoginTokenRefusal;

export interface User {
  readonly id: string;
  /** An address the person proved to own; null for an identity whose provider verified none. */
  readonly email: string | null;
  readonly created_at: string;
}

/** Who signed in; `orgId` is the organization made for a new account (null for a returning one). */
export interface SignedIn {
  readonly user: User;
  readonly created: boolean;
  readonly orgId: string | null;
}

export interface OrgOfUser {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly role: Role;
}

export interface Member {
  readonly user_id: string;
  readonly email: string | null;
  readonly role: Role;
  readonly created_at: string;
}

/** A key as its organization's members see it: never the key, nor its hash. */
export interface KeySummary {
  readonly id: string;
  readonly hint: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  /** A scheduled revocation (a roll's grace period): refused from this instant. */
  readonly revoke_at: string | null;
  /** The website user who made it; null for a command-line key. */
  readonly created_by: string | null;
  /** The last day (YYYY-MM-DD, America/Los_Angeles) it was used on, or null. */
  readonly last_used: string | null;
}

/** A new key: the only time the key itself leaves the thread. */
export type NewKey = { readonly ok: true; readonly keyId: string; readonly key: string };

/** Every account operation, as the metering thread runs it (workers/meter/store.ts AccountsDb). */
export interface AccountCalls {
  /** A sign-in or invitation link's token (stored hashed). Answers alike whether the address has an account. */
  issueLoginToken(
    email: string,
    purpose: LoginPurpose,
    orgId: string | null,
    bindingHash: string,
    ttlMs: number,
    nowMs?: number,
    limit?: MailLimit | null,
    /** The account sending an invitation: its limits, and its organization's, are checked (rules.ts). */
    sender?: string | null,
  ): { readonly ok: true; readonly token: string } | AccountRefusal;
  /**
   * Spends a token once, from the browser it was issued to, before it expires, and only for the
   * purpose it was made for: a link of the other kind is refused (`purpose`) and stays unspent.
   */
  spendLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): SpentLoginToken;
  /** What spendLoginToken would answer now, spending nothing (the page a link opens). */
  peekLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): PeekedLoginToken;
  /** A user by id (the signed-in one's address); null when there is none. */
  userOf(userId: string): User | null;
  /** The account of a proven e-mail address, made (with an organization on Community) on first sign-in. */
  signInByEmail(email: string): SignedIn;
  /** The account of an identity provider's (issuer, subject), made on first sign-in. */
  signInByIdentity(issuer: string, subject: string, email: string | null, emailVerified: boolean): SignedIn;
  createSession(userId: string, absoluteTtlMs: number): { readonly ok: true; readonly token: string; readonly sessionId: string } | AccountRefusal;
  /** The session's user, or null when unknown, ended, idle too long or past its absolute expiry. */
  touchSession(token: string, nowMs: number, idleMs: number): { readonly userId: string; readonly sessionId: string } | null;
  endSession(token: string, nowMs: number): { readonly ended: boolean };
  endAllSessions(userId: string, nowMs: number): { readonly ended: number };
  organizationsOf(userId: string): readonly OrgOfUser[];
  acceptInvite(userId: string, orgId: string): { readonly ok: true; readonly joined: boolean } | AccountRefusal;
  /** The account of an invitation's addressee (made without an organization of its own when new), now a member. */
  joinByInvite(email: string, orgId: string): SignedIn | AccountRefusal;
  members(orgId: string): readonly Member[];
  keysOf(orgId: string): readonly KeySummary[];
  createKeyFor(orgId: string, userId: string): NewKey | AccountRefusal;
  revokeKey(orgId: string, keyId: string): { readonly ok: true; readonly revoked: boolean } | AccountRefusal;
  /** A new key for the organization; the old one is refused from `revokeAt` (now + graceMs). */
  rollKey(orgId: string, userId: string, keyId: string, graceMs: number): (NewKey & { readonly revokeAt: string }) | AccountRefusal;
  /** The organization's usage in the period holding `atMs`: the body /v1/usage answers, whatever its keys' states. */
  orgUsage(orgId: string, atMs: number): UsageBody | AccountRefusal;
}

export type AccountCall = keyof AccountCalls;

// A record, so that the compiler insists every call is listed exactly once.
const CALL_NAMES: Record<AccountCall, true> = {
  issueLoginToken: true,
  spendLoginToken: true,
  peekLoginToken: true,
  userOf: true,
  signInByEmail: true,
  signInByIdentity: true,
  createSession: true,
  touchSession: true,
  endSession: true,
  endAllSessions: true,
  organizationsOf: true,
  acceptInvite: true,
  joinByInvite: true,
  members: true,
  keysOf: true,
  createKeyFor: true,
  revokeKey: true,
  rollKey: true,
  orgUsage: true,
};
/** The calls, for the main thread's client and the thread's dispatch (which refuses any other name). */
export const ACCOUNT_CALLS = Object.keys(CALL_NAMES) as AccountCall[];

/** One account operation as a request: its name and its arguments. */
export type AccountRequest = {
  [K in AccountCall]: { readonly op: 'account'; readonly id: number; readonly call: K; readonly args: Parameters<AccountCalls[K]> };
}[AccountCall];

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
  | { readonly op: 'usage'; readonly id: number; readonly keyId: string; readonly atMs: number }
  | AccountRequest;

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
  /** An account operation's result: ReturnType<AccountCalls[call]> of the request's call. */
  | { readonly id: number; readonly ok: true; readonly account: unknown }
  | { readonly id: number; readonly ok: false; readonly code: 'invalid_api_key' | 'unavailable'; readonly detail: string };

/** Main thread → thread: finish the batch in hand, close the files, release the lock, exit. */
export type MeterControl = { readonly op: 'close' };

/** Thread → main thread. */
export type MeterMessage =
  | { readonly type: 'accounts'; readonly keys: readonly KeyInfo[]; readonly plans: readonly Plan[] }
  | {
      readonly type: 'replies';
      readonly replies: readonly MeterReply[];
      readonly batch: { readonly ops: number; readonly charges: number; readonly commitMs: number };
    }
  | { readonly type: 'failed'; readonly detail: string }
  /**
   * Something went wrong that the thread survived (a failed write or read, answered `unavailable`):
   * logged by the main thread, so it lands in the server's structured log with the other lines.
   */
  | { readonly type: 'warning'; readonly msg: string; readonly detail: string; readonly call?: AccountCall }
  /** The shared ledger became reachable (ok) or not; until ok again, every request answers `unavailable`. */
  | { readonly type: 'health'; readonly ok: boolean; readonly detail: string }
  /** The snapshot the shared ledger says every node should answer from (at start, and on each change). */
  | { readonly type: 'snapshot'; readonly id: string }
  /** The website's signing key every node of the shared ledger uses (base64url), once it is known. */
  | { readonly type: 'web_secret'; readonly secret: string }
  | { readonly type: 'closed' };

export interface MeterWorkerData {
  readonly ledgerDir: string;
  /** How often the accounts file is checked for changes while no request arrives. */
  readonly accountsPollMs: number;
}

/** The metering thread on the shared PostgreSQL ledger (workers/meter/pg-thread.ts). */
export interface PgMeterWorkerData {
  readonly database: { readonly url: string; readonly poolMax: number; readonly statementTimeoutMs: number };
  /** Names this node's holds in the ledger. */
  readonly nodeName: string;
  /** How long a hold of records lives unless charged or released: a dead node's holds come back after it. */
  readonly holdTtlMs: number;
  /** This node's own website key (LEDGER_DIR/web-secret, base64url): the cluster's if no node has set one. */
  readonly webSecret: string;
}
