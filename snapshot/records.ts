// The served form of every event, rendered once at build time in the Parquet file's row order:
// records.jsonl holds one record body per line (toRecordBody: no event_url, whose host is the
// server's configuration), records.idx its byte offsets as little-endian float64, n + 1 of them.
// records.csv (+ records.csv.idx) holds the same records as CSV, each its own cells (all columns
// but event_url and distance_km), so a CSV export only appends those two to stored bytes instead
// of parsing JSON and formatting 32 fields a row (about 25 µs a row, most of a CSV page's cost).
// A search query returns only row numbers; the worker then reads exactly those records with
// pread instead of making DuckDB materialize wide rows, so a page costs the same at 6k or 1M events.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { CsvLines, ownCells } from '../core/csv.ts';
import { toRecordBody, type RecordRow } from '../core/record.ts';
import { pathLiteral, sqlFile } from '../core/sql.ts';

export const RECORDS_FILE = 'records.jsonl';
export const RECORDS_INDEX = 'records.idx';
/** Optional: a snapshot without them (built before they existed) is exported by formatting records. */
export const RECORDS_CSV = 'records.csv';
export const RECORDS_CSV_INDEX = 'records.csv.idx';

/**
 * The index RecordStore reads beside a file of lines: the byte offset of each line's start, and of
 * the end, as float64s; written and synced.
 */
export async function writeLineIndex(idxPath: string, offsets: readonly number[]): Promise<void> {
  const idx = await open(idxPath, 'w');
  try {
    await idx.write(Buffer.from(new Float64Array(offsets).buffer));
    await idx.sync();
  } finally {
    await idx.close();
  }
}

/** Lines appended in order to a file, with the offsets of their starts (and of the end), buffered into large writes. */
class LineFile {
  readonly offsets: number[] = [0];
  private at = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  private readonly file: FileHandle;
  private constructor(file: FileHandle) {
    this.file = file;
  }

  static async create(p: string): Promise<LineFile> {
    return new LineFile(await open(p, 'w'));
  }

  async add(line: Buffer): Promise<void> {
    this.pending.push(line);
    this.pendingBytes += line.length;
    this.at += line.length;
    this.offsets.push(this.at);
    if (this.pendingBytes > 1 << 20) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.pending.length) await this.file.write(Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Flushes, syncs and closes the file, then writes the offsets beside it. */
  async finish(idxPath: string): Promise<void> {
    try {
      await this.flush();
      await this.file.sync();
    } finally {
      await this.file.close();
    }
    await writeLineIndex(idxPath, this.offsets);
  }

  async abandon(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }
}

/** Streams the Parquet file's rows, in file order, into records.jsonl and records.csv with their indexes. */
export async function writeRecordFiles(conn: DuckDBConnection, parquet: string, dir: string): Promise<number> {
  const json = await LineFile.create(path.join(dir, RECORDS_FILE));
  const csv = await LineFile.create(path.join(dir, RECORDS_CSV)).catch(async (err: unknown) => {
    await json.abandon();
    throw err;
  });
  const cells = new CsvLines();
  const NL = Buffer.from('\n');
  try {
    const result = await conn.stream(sqlFile('snapshot_records').replaceAll('{{parquet}}', pathLiteral(parquet)));
    for await (const rows of result.yieldRowObjectJson()) {
      for (const row of rows as unknown as RecordRow[]) {
        const body = toRecordBody(row);
        await json.add(Buffer.from(`${JSON.stringify(body)}\n`));
        await csv.add(Buffer.concat([cells.line(ownCells(body)), NL]));
      }
    }
  } catch (err) {
    await Promise.all([json.abandon(), csv.abandon()]);
    throw err;
  }
  await json.finish(path.join(dir, RECORDS_INDEX));
  await csv.finish(path.join(dir, RECORDS_CSV_INDEX));
  return json.offsets.length - 1;
}

/** Read side: random access to record bodies by row number. Holds one file descriptor. */
export class RecordStore {
  readonly count: number;
  private readonly fd: number;
  private readonly offsets: Float64Array;

  constructor(jsonlPath: string, idxPath: string) {
    const raw = readFileSync(idxPath);
    this.offsets = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8);
    this.count = this.offsets.length - 1;
    this.fd = openSync(jsonlPath, 'r');
  }

  /** The record body's JSON text (no trailing newline). */
  read(row: number): Buffer {
    const { start, length } = this.line(row);
    const buf = Buffer.allocUnsafe(length);
    readSync(this.fd, buf, 0, buf.length, start);
    return buf;
  }

  /**
   * Rows [from, to) as one read: their lines (each with its newline) back to back. The whole-snapshot
   * export reads the file this way, in large sequential pieces, instead of a pread per row. Into
   * `scratch` when it is large enough (the caller copies the bytes out before its next read).
   */
  readRows(from: number, to: number, scratch?: Buffer): Buffer {
    const start = this.offsets[from];
    const end = this.offsets[to];
    if (start === undefined || end === undefined || from > to) throw new RangeError(`rows ${from}-${to} are not in this snapshot (${this.count} rows)`);
    const buf = scratch !== undefined && scratch.length >= end - start ? scratch.subarray(0, end - start) : Buffer.allocUnsafe(end - start);
    let at = 0;
    while (at < buf.length) {
      const n = readSync(this.fd, buf, at, buf.length - at, start + at);
      if (n === 0) throw new Error(`the record file ends before row ${to}`);
      at += n;
    }
    return buf;
  }

  /** The byte offset of a row's line in the file (of the file's end for row `count`). */
  offsetOf(row: number): number {
    const at = this.offsets[row];
    if (at === undefined) throw new RangeError(`row ${row} is not in this snapshot (${this.count} rows)`);
    return at;
  }

  /** Where a row's line starts in the file, and its length without the newline. */
  private line(row: number): { start: number; length: number } {
    const start = this.offsets[row];
    const end = this.offsets[row + 1];
    if (start === undefined || end === undefined) throw new RangeError(`row ${row} is not in this snapshot (${this.count} rows)`);
    return { start, length: end - start - 1 };
  }

  /**
   * The record's id: toRecordBody writes it first, so the head of the line holds it; searches
   * return row numbers only, and a page's ids come from here.
   */
  idOf(row: number): string {
    const { start, length } = this.line(row);
    const head = Buffer.allocUnsafe(Math.min(ID_HEAD_BYTES, length));
    readSync(this.fd, head, 0, head.length, start);
    const m = ID_AT_HEAD.exec(head.toString('latin1'));
    if (m) return JSON.parse(Buffer.from(m[1] as string, 'latin1').toString('utf8')) as string;
    return (JSON.parse(this.read(row).toString()) as { id: string }).id;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Enough of a line for any id we publish (ids are short); a longer one falls back to the whole record. */
const ID_HEAD_BYTES = 128;
const ID_AT_HEAD = /^\{"id":("(?:[^"\\]|\\.)*")/;
