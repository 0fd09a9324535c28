// Validators and conditional requests (RFC 9110 §8.8, §13.1.2). Each encoding of a body is its own
// representation, so its strong ETag carries the encoding ("tag", "tag-gzip", "tag-br"); If-None-Match
// uses weak comparison and matches any encoding of the same body, since a client holding any of
// them holds the current content.
import type { Encoding } from './compress.ts';

export function etagValue(tag: string, enc: Encoding): string {
  return enc === 'identity' ? `"${tag}"` : `"${tag}-${enc === 'br' ? 'br' : 'gzip'}"`;
}

/** The opaque tag of one entity-tag (weak or strong), without its encoding suffix, or null if malformed. */
function opaque(raw: string): string | null {
  let t = raw.trim();
  if (t.startsWith('W/')) t = t.slice(2);
  if (t.length < 2 || !t.startsWith('"') || !t.endsWith('"')) return null;
  t = t.slice(1, -1);
  if (t.endsWith('-gzip')) return t.slice(0, -5);
  if (t.endsWith('-br')) return t.slice(0, -3);
  return t;
}

/** Does an If-None-Match value name the body whose tag is `tag` ("*" names any)? */
export function noneMatchHits(ifNoneMatch: string | undefined, tag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const v = ifNoneMatch.trim();
  if (v === '*') return true;
  // Entity-tags cannot contain commas (RFC 9110 etagc), so a list splits on them.
  return v.split(',').some((t) => opaque(t) === tag);
}

const dates = new Map<string, string>();

/** An ISO instant as an HTTP-date (IMF-fixdate), e.g. the snapshot's build time for Last-Modified. */
export function httpDate(iso: string): string {
  let d = dates.get(iso);
  if (d === undefined) {
    d = new Date(iso).toUTCString();
    if (dates.size > 16) dates.clear();
    dates.set(iso, d);
  }
  return d;
}
