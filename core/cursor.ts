// A search's position for keyset paging: the last delivered event's (start_ms, id), the page
// order's key. A cursor names values, not a snapshot's row numbers, so it keeps its place when the
// snapshot it was made on is replaced: the next page is whatever now sorts after that key, and an
// event that moved or went away cannot shift it. Written "1.<start_ms>.<the id's 20 hex digits>":
// URL-safe, opaque to clients (they echo next_cursor), and exactly described by CURSOR_PATTERN, so
// that every text the pattern admits is a position (the OpenAPI document states the pattern).
import { EVENT_ID_PATTERN, ID_PREFIX } from './ids.ts';

export interface CursorKey {
  readonly startMs: number;
  readonly id: string;
}

/** Every cursor, and nothing else: a version, a whole ms (at most 15 digits, inside the safe integers), a hex id. */
// eslint-disable-next-line regexp/prefer-d -- the OpenAPI document publishes it, and other engines read \d as any script's digits
export const CURSOR_PATTERN = /^1\.(0|-?[1-9][0-9]{0,14})\.([0-9a-f]{20})$/;

export function encodeCursor(key: CursorKey): string {
  if (!EVENT_ID_PATTERN.test(key.id) || !Number.isSafeInteger(key.startMs)) throw new Error(`no cursor for ${key.startMs} ${key.id}`);
  return `1.${key.startMs}.${key.id.slice(ID_PREFIX.length)}`;
}

/** The key a cursor names, or null for any text CURSOR_PATTERN does not admit. */
export function decodeCursor(text: string): CursorKey | null {
  const m = CURSOR_PATTERN.exec(text);
  if (m === null) return null;
  return { startMs: Number(m[1]), id: `${ID_PREFIX}${m[2] as string}` };
}
