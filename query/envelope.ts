// The JSON list response, serialized in the worker: the contract's envelope around records read
// verbatim from records.jsonl, each completed with its event_url (and distance_km on geo searches).
import { eventUrl, type EventRecord } from '../core/record.ts';
import { encodeCursor } from '../core/cursor.ts';
import type { SearchQuery, SearchTask } from './protocol.ts';
import type { PageRow, SearchPage } from './db.ts';
import type { RecordStore } from '../snapshot/records.ts';

const COMMA = Buffer.from(',');
const CLOSE = Buffer.from('}');

/** The page's next offset, or null on the last page or when it would exceed the offset cap. */
export function nextOffset(total: number, limit: number, offset: number, maxOffset: number): number | null {
  const next = offset + limit;
  return next < total && next <= maxOffset ? next : null;
}

/**
 * The next page's cursor: after the last delivered row, whenever more rows follow it in (start, id)
 * order, so a client may switch from offsets to cursors on any page (and one following rel="next"
 * is handed the cursor where the next offset would pass the cap). Pages by distance have no keyset order.
 */
export function nextCursor(q: SearchQuery, page: SearchPage): string | null {
  const last = page.rows[page.rows.length - 1];
  if (last?.startMs === undefined || (q.sort === 'distance' && q.geo !== null)) return null;
  const more = q.after ? (page.remaining ?? 0) > page.rows.length : q.offset + page.rows.length < page.total;
  return more ? encodeCursor({ startMs: last.startMs, id: last.id }) : null;
}

/** distance_km to the metre: the filter compares the exact value, the record shows this one. */
export function roundKm(km: number): number {
  return Math.round(km * 1000) / 1000;
}

function recordParts(store: RecordStore, row: PageRow, webBaseUrl: string): Buffer[] {
  const body = store.read(row.rid);
  // The stored body is a JSON object: drop its closing brace and append the server-side fields.
  let tail = `,"event_url":${JSON.stringify(eventUrl(webBaseUrl, row.id))}`;
  if (row.distanceKm !== null) tail += `,"distance_km":${roundKm(row.distanceKm)}`;
  return [body.subarray(0, body.length - 1), Buffer.from(tail), CLOSE];
}

/** One record's bytes, completed as a search serves it (/v1/events/{id}). */
export function recordBytes(store: RecordStore, row: PageRow, webBaseUrl: string): Buffer {
  return Buffer.concat(recordParts(store, row, webBaseUrl));
}

/** The envelope's bytes; `next` is the page's next offset, which the worker also returns beside the body. */
export function jsonEnvelope(
  task: SearchTask,
  page: SearchPage,
  store: RecordStore,
  next: number | null,
  truncated: boolean,
  nextCursor: string | null = null,
): Buffer {
  const q = task.query;
  const parts: Buffer[] = [Buffer.from('{"events":[')];
  page.rows.forEach((row, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(...recordParts(store, row, task.webBaseUrl));
  });
  parts.push(
    Buffer.from(
      `],"total":${page.total},"limit":${q.limit},"offset":${q.offset},` +
        `"next_offset":${JSON.stringify(next)},"next_cursor":${JSON.stringify(nextCursor)},"truncated":${truncated},` +
        // Only when q found nothing and another q would find something (query/db.ts suggest).
        (page.suggestion !== null ? `"did_you_mean":${JSON.stringify(page.suggestion)},` : '') +
        `"attribution":${JSON.stringify(task.attribution)}}`,
    ),
  );
  return Buffer.concat(parts);
}

/** A page row's full record (CSV and feeds, which need fields rather than bytes). */
export function readRecord(store: RecordStore, row: PageRow, webBaseUrl: string): EventRecord {
  const r = JSON.parse(store.read(row.rid).toString()) as EventRecord;
  r.event_url = eventUrl(webBaseUrl, row.id);
  if (row.distanceKm !== null) r.distance_km = roundKm(row.distanceKm);
  return r;
}
