// Rows on their way into a snapshot, as NDJSON files that DuckDB loads in one pass. Sources write
// their rows here as they finish (in whatever thread normalized them), so a build never holds the
// whole snapshot in JavaScript memory: a 10M-event build costs disk, not heap.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { EventRow } from '../core/record.ts';

/** A row as staged: the snapshot row plus the key that finds its copies in other sources. */
export type StagedRow = EventRow & { merge_key: string };

export async function writeStaged(rows: Iterable<StagedRow>, file: string): Promise<number> {
  const out = createWriteStream(file);
  let batch: string[] = [];
  let n = 0;
  for (const r of rows) {
    batch.push(JSON.stringify(r));
    if (++n % 2_000 === 0) {
      if (!out.write(`${batch.join('\n')}\n`)) await once(out, 'drain');
      batch = [];
    }
  }
  if (batch.length) out.write(`${batch.join('\n')}\n`);
  out.end();
  await once(out, 'finish');
  return n;
}
