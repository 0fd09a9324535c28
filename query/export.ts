// The whole snapshot as CSV (/v1/export.csv), streamed from the snapshot's stored CSV rows
// (records.csv: each record's own cells, rendered at build time) in large sequential reads, each
// row completed with its link and an empty distance: the bytes a CSV search gives the same row,
// without a query, a pread per row, or fast-csv per row. Rows go in the snapshot's stored order;
// the rows a plan excludes are skipped, and the quota cut keeps the first ones.
import type { MessagePort } from 'node:worker_threads';
import { csvBatch, CsvLines, searchCells } from '../core/csv.ts';
import { ID_PREFIX } from '../core/ids.ts';
import { eventUrl } from '../core/record.ts';
import type { RecordStore } from '../snapshot/records.ts';
import type { SnapshotDb } from './db.ts';
import { readRecord } from './envelope.ts';
import { exportTag } from './etag.ts';
import type { ExportTask, PageHead, StreamDone, TaskFailure } from './protocol.ts';
import { streamChunks, type Chunk, type ChunkAlloc } from './stream.ts';

/**
 * Stored bytes per chunk: a quarter of the stream's window, so a few chunks are in flight while
 * the next is made (a chunk as large as the window would leave this thread idle until it is read).
 */
const CHUNK_BYTES = 256 * 1024;
/** Rows per chunk when records are formatted (a snapshot without records.csv). */
const FORMATTED_ROWS = 500;
/** An id's cell: the prefix and 20 hex digits (core/ids.ts), never quoted or escaped. */
const ID_CELL = ID_PREFIX.length + 20;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

export async function exportCsv(task: ExportTask, db: SnapshotDb, cancelFlag: Int32Array): Promise<StreamDone | TaskFailure> {
  const excluded = await db.excludedRows(task.excludedCategories);
  let total = 0;
  for (let rid = 0; rid < excluded.length; rid++) total += 1 - (excluded[rid] as number);
  const count = task.cut === null ? total : Math.min(total, task.cut);
  const truncated = count < total;
  const head: PageHead = {
    total,
    count,
    nextOffset: null,
    nextCursor: null,
    truncated,
    validUntilMs: null,
    etag: exportTag(task.snapshot.id, task.webBaseUrl, task.excludedCategories, truncated ? count : null),
  };
  const header = await csvBatch([], true);
  const next = db.csvRecords ? storedRows(task, db.csvRecords, excluded, count, header) : formattedRows(task, db, excluded, count);
  return streamChunks(task.stream as MessagePort, cancelFlag, head, next);
}

/**
 * A row's link cell and the empty distance after it, as fast-csv writes them for a search
 * (query/worker.ts csvChunk: searchCells(event_url, null)). Returns the link's bytes before the id
 * when that is all they are (`<prefix><id>,`), which holds for every id once it holds for one,
 * since ids are letters, digits and underscores; else null, and each row is formatted.
 */
function plainLinkPrefix(webBaseUrl: string): Buffer | null {
  const sample = `${ID_PREFIX}${'0'.repeat(20)}`;
  const url = eventUrl(webBaseUrl, sample);
  const formatted = new CsvLines().line(searchCells(url, null));
  if (!formatted.equals(Buffer.from(`${url},`))) return null;
  return Buffer.from(url.slice(0, url.length - sample.length));
}

function storedRows(task: ExportTask, store: RecordStore, excluded: Uint8Array, count: number, header: Buffer): (alloc: ChunkAlloc) => Promise<Chunk> {
  const prefix = plainLinkPrefix(task.webBaseUrl);
  const suffixes = new CsvLines();
  const n = store.count;
  let rid = 0;
  let sent = 0;
  let first = true;
  const scratch = Buffer.allocUnsafeSlow(CHUNK_BYTES * 2);
  return (alloc) => {
    // The next run of rows, about CHUNK_BYTES of stored lines, read at once.
    let to = rid;
    const start = store.offsetOf(rid);
    while (to < n && (to === rid || store.offsetOf(to) - start < CHUNK_BYTES)) to++;
    // Into the stream's one read buffer, whose bytes are copied out below. A run is under CHUNK_BYTES
    // plus one row, so only a row longer than CHUNK_BYTES makes readRows allocate for its run.
    const lines = store.readRows(rid, to, scratch);
    // The rows this chunk delivers, and their size once completed.
    const take: number[] = [];
    let size = first ? header.length : 0;
    const links: Buffer[] = [];
    for (let r = rid; r < to && sent + take.length < count; r++) {
      if (excluded[r] === 1) continue;
      const at = store.offsetOf(r) - start;
      const end = store.offsetOf(r + 1) - start - 1;
      let link: Buffer | null = null;
      // Formatted as the search formats it (fast-csv) unless the link is plain and the line starts with the id's cell.
      if (prefix === null || lines[at + ID_CELL] !== COMMA) link = suffixes.line(searchCells(eventUrl(task.webBaseUrl, idOfLine(lines, at, end, r)), null));
      links.push(link ?? EMPTY);
      take.push(r);
      size += end - at + 1 + (link === null ? (prefix as Buffer).length + ID_CELL + 1 : link.length) + 2;
    }
    const chunk = alloc(size);
    const out = Buffer.from(chunk.buffer, chunk.byteOffset, size);
    let w = 0;
    if (first) w += header.copy(out, 0);
    take.forEach((r, i) => {
      const at = store.offsetOf(r) - start;
      const end = store.offsetOf(r + 1) - start - 1;
      if (lines[end] !== NEWLINE) throw new Error(`records.csv row ${r} does not end its line`);
      w += lines.copy(out, w, at, end);
      out[w++] = COMMA;
      const link = links[i] as Buffer;
      if (link.length === 0) {
        w += (prefix as Buffer).copy(out, w);
        w += lines.copy(out, w, at, at + ID_CELL);
        out[w++] = COMMA;
      } else w += link.copy(out, w);
      out[w++] = 0x0d;
      out[w++] = NEWLINE;
    });
    if (w !== size) throw new Error(`export chunk sized ${size}, written ${w}`);
    first = false;
    sent += take.length;
    rid = to;
    return Promise.resolve({ bytes: chunk, rows: take.length, last: rid >= n || sent >= count });
  };
}

/** A record's id from its stored CSV line when its first cell is not the plain id (never, for ids we make). */
function idOfLine(lines: Buffer, at: number, end: number, rid: number): string {
  const cell = lines.toString('utf8', at, Math.min(end, at + 64)).split(',')[0] ?? '';
  if (!cell.startsWith(ID_PREFIX)) throw new Error(`records.csv row ${rid} does not start with its id`);
  return cell;
}

/** A snapshot without records.csv: its records formatted (the slow path a CSV search also takes then). */
function formattedRows(task: ExportTask, db: SnapshotDb, excluded: Uint8Array, count: number): () => Promise<Chunk> {
  const n = db.records.count;
  let rid = 0;
  let sent = 0;
  let first = true;
  return async () => {
    const records = [];
    for (; rid < n && records.length < FORMATTED_ROWS && sent + records.length < count; rid++)
      if (excluded[rid] !== 1) records.push(readRecord(db.records, { rid, id: db.records.idOf(rid), distanceKm: null }, task.webBaseUrl));
    // A fresh, exactly-sized ArrayBuffer: it is moved to the main thread, not copied.
    const bytes = new Uint8Array(await csvBatch(records, first));
    first = false;
    sent += records.length;
    return { bytes, rows: records.length, last: rid >= n || sent >= count };
  };
}
