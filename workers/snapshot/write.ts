// EventRows → a sorted Parquet file written by DuckDB. Rows are staged as NDJSON and loaded by
// DuckDB's parallel JSON reader with the column types of sql/snapshot_schema.sql (read back with
// DESCRIBE, so the schema is written once). The node-api appender was ~50 µs a row (one JS value
// object per cell); this is ~5× faster. The sort and file layout are sql/snapshot_write.sql's.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import { DuckDBInstance } from '@duckdb/node-api';
import type { EventRow } from './types.ts';
import { pathLiteral, sqlFile } from './sql.ts';

async function stageNdjson(rows: readonly EventRow[], file: string, onProgress?: (n: number) => void): Promise<void> {
  const out = createWriteStream(file);
  let batch: string[] = [];
  let n = 0;
  for (const r of rows) {
    batch.push(JSON.stringify(r));
    if (++n % 5_000 === 0) {
      if (!out.write(`${batch.join('\n')}\n`)) await once(out, 'drain');
      batch = [];
      if (n % 50_000 === 0) onProgress?.(n);
    }
  }
  if (batch.length) out.write(`${batch.join('\n')}\n`);
  out.end();
  await once(out, 'finish');
  onProgress?.(n);
}

export async function writeParquet(rows: readonly EventRow[], target: string, onProgress?: (n: number) => void): Promise<void> {
  const staged = `${target}.ndjson`;
  await stageNdjson(rows, staged, onProgress);
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await db.connect();
  try {
    await conn.run(sqlFile('snapshot_schema'));
    const cols = (await conn.runAndReadAll('SELECT column_name, column_type FROM (DESCRIBE events)')).getRowObjects();
    const struct = `{${cols.map((c) => `${pathLiteral(String(c['column_name']))}: ${pathLiteral(String(c['column_type']))}`).join(', ')}}`;
    await conn.run(`INSERT INTO events SELECT * FROM read_json(${pathLiteral(staged)}, format = 'newline_delimited', columns = ${struct}, maximum_object_size = 16777216)`);
    await conn.run(sqlFile('snapshot_write').replace('{{target}}', pathLiteral(target)));
  } finally {
    conn.closeSync();
    db.closeSync();
    await rm(staged, { force: true });
  }
}
