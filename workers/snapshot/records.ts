// The served form of every event, rendered once at build time in the Parquet file's row order:
// records.jsonl holds one record body per line (toRecordBody: no event_url, whose host is the
// server's configuration), records.idx its byte offsets as little-endian float64, n + 1 of them.
// A search query returns only row numbers; the worker then reads exactly those records with
// pread instead of making DuckDB materialize wide rows, so a page costs the same at 6k or 1M events.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { toRecordBody, type RecordRow } from '../record.ts';
import { pathLiteral, sqlFile } from './sql.ts';

export const RECORDS_FILE = 'records.jsonl';
export const RECORDS_INDEX = 'records.idx';

/** Streams the Parquet file's rows, in file order, into records.jsonl and records.idx. */
export async function writeRecordFiles(conn: DuckDBConnection, parquet: string, jsonlPath: string, idxPath: string): Promise<number> {
  const out = await open(jsonlPath, 'w');
  const offsets: number[] = [0];
  let at = 0;
  try {
    const result = await conn.stream(sqlFile('snapshot_records').replaceAll('{{parquet}}', pathLiteral(parquet)));
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for await (const rows of result.yieldRowObjectJson()) {
      for (const row of rows as unknown as RecordRow[]) {
        const line = Buffer.from(`${JSON.stringify(toRecordBody(row))}\n`);
        pending.push(line);
        pendingBytes += line.length;
        at += line.length;
        offsets.push(at);
      }
      if (pendingBytes > 1 << 20) {
        await out.write(Buffer.concat(pending));
        pending = [];
        pendingBytes = 0;
      }
    }
    if (pending.length) await out.write(Buffer.concat(pending));
    await out.sync();
  } finally {
    await out.close();
  }
  const idx = await open(idxPath, 'w');
  try {
    await idx.write(Buffer.from(new Float64Array(offsets).buffer));
    await idx.sync();
  } finally {
    await idx.close();
  }
  return offsets.length - 1;
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
    const start = this.offsets[row];
    const end = this.offsets[row + 1];
    if (start === undefined || end === undefined) throw new RangeError(`row ${row} is not in this snapshot (${this.count} rows)`);
    const buf = Buffer.allocUnsafe(end - start - 1);
    readSync(this.fd, buf, 0, buf.length, start);
    return buf;
  }

  close(): void {
    closeSync(this.fd);
  }
}
