// Strong entity tags of search bodies: 128 bits of SHA-256, base64url (22 characters). A module of
// its own, free of load-time effects, so the benchmarks can time it outside a query worker.
import { createHash, type Hash } from 'node:crypto';
import type { SearchTask } from './protocol.ts';
import type { SearchPage } from './db.ts';
import { CSV_VERSION } from '../core/csv.ts';

const tag = (h: Hash): string => h.digest('base64url').slice(0, 22);

/** A buffered body's tag: the digest of its bytes. */
export const bodyTag = (body: Uint8Array): string => tag(createHash('sha256').update(body));

/**
 * A CSV body's entity tag, known before its first byte: the digest of everything its bytes are a
 * function of. Records are immutable within a snapshot id, so equal digests mean equal bodies.
 */
export function csvTag(task: SearchTask, page: SearchPage, next: number | null, truncated: boolean, nextCursor: string | null = null): string {
  const h = createHash('sha256');
  const q = task.query;
  h.update(`csv/${CSV_VERSION}\0${task.snapshot.id}\0${task.webBaseUrl}\0${page.total}\0${q.limit}\0${q.offset}\0${next}\0${truncated}\0`);
  // Keyset pages and their links (absent elsewhere, so other pages keep their tags).
  if (q.after) h.update(`after:${q.after.startMs}:${q.after.id}\0`);
  if (nextCursor !== null) h.update(`next_cursor:${nextCursor}\0`);
  for (const r of page.rows) h.update(`${r.rid}:${r.distanceKm ?? ''}\n`);
  return tag(h);
}

/**
 * The whole-snapshot export's tag (/v1/export.csv): its bytes are a function of the serializer,
 * the snapshot, the links' base, the plan's exclusions and, when the quota cut it, its length.
 */
export function exportTag(snapshotId: string, webBaseUrl: string, excluded: readonly string[], cutTo: number | null): string {
  return tag(createHash('sha256').update(`export/${CSV_VERSION}\0${snapshotId}\0${webBaseUrl}\0${[...excluded].sort().join(',')}\0${cutTo ?? 'all'}`));
}
