// The change feed (/v1/changes): every record added, changed or removed after a position, in
// (updated_at, id) order, following OpenActive's RPDE rules so that a client that pages it never
// skips or repeats a version across snapshot switches. Three facts make that hold:
// - a build stamps what it adds or changes with a time later than every stamp before it
//   (snapshot/build/build.ts changeStamp), so new changes only ever sort after old ones;
// - a removal is an entry too (a deletion), from the snapshot's gone list at its removal stamp;
// - a filtered feed delivers a changed record that no longer matches its filters as a deletion,
//   since the client may hold an earlier version that matched. Only versions stamped after the
//   cursor's horizon need that: a client starts with nothing, at the horizon of the snapshot it
//   started from, so what changed before then and does not match it never held.
// The cursor carries the position, the horizon and a fingerprint of the filters it was issued for.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GONE_FILE, GONE_TOMBSTONE_DAYS } from '../snapshot/gone.ts';
import { CSV_COLUMNS, CsvLines, textCell } from '../core/csv.ts';
import { changeTime } from '../core/record.ts';

/** Where a page of the feed starts, and what its client may hold. */
export interface ChangesCursor {
  /** The client holds no version stamped after this (ms) that it was not sent by this feed. */
  readonly horizonMs: number;
  /** The last entry the client has: entries after (afterMs, afterId) follow. */
  readonly afterMs: number;
  readonly afterId: string;
  /** The filters (and plan exclusions) the cursor was issued for: a digest, compared, never read. */
  readonly filters: string;
}

/** How long a removal stays in the feed at least (the server's cursor_expired prose says it). */
export const DELETIONS_KEPT_DAYS = GONE_TOMBSTONE_DAYS;

const CURSOR_VERSION = 'c1';
/** After every id at a time: ids are ASCII, and DuckDB orders VARCHAR by bytes. */
export const AFTER_ALL_IDS = '\u{10FFFF}';
const MAX_CURSOR_ID = 200;

export function encodeCursor(c: ChangesCursor): string {
  return `${CURSOR_VERSION}.${Buffer.from(JSON.stringify([c.horizonMs, c.afterMs, c.afterId, c.filters])).toString('base64url')}`;
}

const isTime = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= -1;

/** A cursor this server issued, or null when the text is not one (the route answers 400). */
export function decodeCursor(text: string): ChangesCursor | null {
  const dot = text.indexOf('.');
  if (text.slice(0, dot) !== CURSOR_VERSION) return null;
  const raw = text.slice(dot + 1);
  if (!/^[\w-]{1,600}$/.test(raw)) return null;
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parts) || parts.length !== 4) return null;
  const [horizonMs, afterMs, afterId, filters] = parts as unknown[];
  if (!isTime(horizonMs) || !isTime(afterMs) || typeof afterId !== 'string' || typeof filters !== 'string') return null;
  if (afterId.length > MAX_CURSOR_ID || filters.length > 64) return null;
  return { horizonMs, afterMs, afterId, filters };
}

/** One entry of the feed: a record to hold (its row) or a deletion (rid null). */
export interface ChangeEntry {
  readonly ms: number;
  readonly id: string;
  /** The record's row number, or null for a deletion. */
  readonly rid: number | null;
}

const after = (ms: number, id: string, atMs: number, atId: string): boolean => ms > atMs || (ms === atMs && id > atId);

/**
 * The snapshot's removals as deletions, in (removed_at, id) order: read whole from gone.jsonl
 * (small: a line per event removed in the last GONE_KEEP_DAYS) on the first change-feed page.
 */
export class Tombstones {
  private readonly ms: Float64Array;
  private readonly ids: string[];

  private constructor(entries: { ms: number; id: string }[]) {
    entries.sort((a, b) => a.ms - b.ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.ms = Float64Array.from(entries, (e) => e.ms);
    this.ids = entries.map((e) => e.id);
  }

  /** The snapshot's list; empty when it has none. A line that cannot be read is skipped, as GoneIndex does. */
  static read(snapshotDir: string): Tombstones {
    let text: string;
    try {
      text = readFileSync(path.join(snapshotDir, GONE_FILE), 'utf8');
    } catch {
      return new Tombstones([]);
    }
    const entries: { ms: number; id: string }[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const e = JSON.parse(line) as { id?: unknown; removed_at?: unknown };
        const ms = typeof e.removed_at === 'string' ? Date.parse(e.removed_at) : NaN;
        if (typeof e.id === 'string' && Number.isFinite(ms)) entries.push({ ms, id: e.id });
      } catch {
        // One bad line costs its entry, not the list.
      }
    }
    return new Tombstones(entries);
  }

  get size(): number {
    return this.ids.length;
  }

  /** The deletions after (afterMs, afterId) and stamped after horizonMs: at most `limit` of them, and how many there are in all. */
  after(c: ChangesCursor, limit: number): { readonly entries: ChangeEntry[]; readonly total: number } {
    // The first entry past both bounds: past the cursor, and stamped after the horizon.
    let lo = 0;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ms = this.ms[mid] as number;
      const id = this.ids[mid] as string;
      if (after(ms, id, c.afterMs, c.afterId) && ms > c.horizonMs) hi = mid;
      else lo = mid + 1;
    }
    const entries: ChangeEntry[] = [];
    for (let i = lo; i < this.ids.length && entries.length < limit; i++) entries.push({ ms: this.ms[i] as number, id: this.ids[i] as string, rid: null });
    return { entries, total: this.ids.length - lo };
  }
}

/** A page of the feed, merged from the records' changes and the removals. */
export interface ChangesPage {
  readonly entries: readonly ChangeEntry[];
  /** Entries from the cursor on, this page's included. */
  readonly total: number;
  /** Where the next page starts: the last entry's position, or the cursor's own when the page is empty. */
  readonly nextMs: number;
  readonly nextId: string;
  /** The page was cut short by the quota. */
  readonly truncated: boolean;
}

/**
 * The first `limit` entries of both lists in (ms, id) order, cut after `cut` records (deletions
 * are free, so they do not count) when the quota says so.
 */
export function mergePage(
  c: ChangesCursor,
  live: readonly ChangeEntry[],
  liveTotal: number,
  gone: { readonly entries: readonly ChangeEntry[]; readonly total: number },
  limit: number,
  cut: number | null,
): ChangesPage {
  const entries: ChangeEntry[] = [];
  let i = 0;
  let j = 0;
  let records = 0;
  let truncated = false;
  while (entries.length < limit) {
    const a = live[i];
    const b = gone.entries[j];
    if (a === undefined && b === undefined) break;
    const takeLive = b === undefined || (a !== undefined && !after(a.ms, a.id, b.ms, b.id));
    const next = (takeLive ? a : b) as ChangeEntry;
    if (next.rid !== null && cut !== null && records >= cut) {
      truncated = true;
      break;
    }
    if (next.rid !== null) records++;
    entries.push(next);
    if (takeLive) i++;
    else j++;
  }
  const last = entries[entries.length - 1];
  return {
    entries,
    total: liveTotal + gone.total,
    nextMs: last ? last.ms : c.afterMs,
    nextId: last ? last.id : c.afterId,
    truncated,
  };
}

/** A page's records and deletions as the JSON envelope and the CSV body write them. */
export interface ChangesBodyInput {
  readonly page: ChangesPage;
  /** The next page's URL and cursor. */
  readonly next: string;
  readonly nextCursor: string;
  readonly limit: number;
  readonly attribution: { readonly text: string; readonly url: string };
  /** A record's bytes as a search serves it (with event_url). */
  readonly recordJson: (rid: number, id: string) => Buffer;
  /** A record's CSV line (its columns as /v1/events.csv writes them, without the line end). */
  readonly recordCsv: (rid: number, id: string) => Buffer;
}

/** The deletion entry: all a client needs to drop its copy. */
export const tombstoneJson = (e: ChangeEntry): string => `{"id":${JSON.stringify(e.id)},"deleted":true,"updated_at":${JSON.stringify(changeTime(e.ms))}}`;

export function changesJson(b: ChangesBodyInput): Buffer {
  const parts: Buffer[] = [Buffer.from('{"changes":[')];
  b.page.entries.forEach((e, i) => {
    if (i > 0) parts.push(Buffer.from(','));
    parts.push(e.rid === null ? Buffer.from(tombstoneJson(e)) : b.recordJson(e.rid, e.id));
  });
  const hasMore = b.page.total > b.page.entries.length;
  parts.push(
    Buffer.from(
      `],"next":${JSON.stringify(b.next)},"next_cursor":${JSON.stringify(b.nextCursor)},"has_more":${hasMore},` +
        `"total":${b.page.total},"limit":${b.limit},"truncated":${b.page.truncated},"attribution":${JSON.stringify(b.attribution)}}`,
    ),
  );
  return Buffer.concat(parts);
}

/** The CSV columns of the change feed: the search's, then whether the row is a deletion. */
export const CHANGES_CSV_COLUMNS = [...CSV_COLUMNS.map(([name]) => name), 'deleted'];
const UPDATED_AT = CSV_COLUMNS.findIndex(([name]) => name === 'updated_at');

export function changesCsv(b: ChangesBodyInput): Buffer {
  const lines = new CsvLines();
  const CRLF = Buffer.from('\r\n');
  const parts: Buffer[] = [lines.line(CHANGES_CSV_COLUMNS), CRLF];
  for (const e of b.page.entries) {
    if (e.rid !== null) parts.push(b.recordCsv(e.rid, e.id), Buffer.from(',false\r\n'));
    else {
      const cells: (string | boolean)[] = CSV_COLUMNS.map(() => '');
      cells[0] = textCell(e.id);
      cells[UPDATED_AT] = changeTime(e.ms);
      cells.push(true);
      parts.push(lines.line(cells), CRLF);
    }
  }
  return Buffer.concat(parts);
}
