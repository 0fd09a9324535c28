// The q filter as the amended contract (2026-11-26) reads, for the tests' oracles: written from its
// words, not from core/stem.ts: own folding, the Porter2 package called directly, own joins of
// neighbouring words, and every term stemmed (none of the server's shortcuts).
import { createRequire } from 'node:module';
import type { OracleRow } from './helpers.ts';

const porter2 = createRequire(import.meta.url)('wink-porter2-stemmer') as (w: string) => string;

const fold = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
const wordsOf = (s: string): string[] => fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];
const letters = (w: string): boolean => /^\p{L}+$/u.test(w);
const stemOf = (w: string): string => (w.length > 2 && letters(w) ? porter2(w) : w);
/** Two neighbours as one compound: both letters, two or more each, 24 together at most. */
const join = (a: string, b: string): string | null => (a.length >= 2 && b.length >= 2 && a.length + b.length <= 24 && letters(a) && letters(b) ? a + b : null);

const termCache = new Map<string, readonly string[]>();
/** Every term q may start: the words, their neighbours' joins within a field, and the stem of each. */
export function terms(r: OracleRow): readonly string[] {
  let t = termCache.get(r.id);
  if (!t) {
    const out = new Set<string>();
    for (const text of [r.title, r.summary, r.description, r.venue_name, r.organizer, ...r.tags]) {
      const ws = text ? wordsOf(text) : [];
      ws.forEach((w, i) => {
        out.add(w);
        const j = i > 0 ? join(ws[i - 1] as string, w) : null;
        if (j) out.add(j);
      });
    }
    for (const x of [...out]) out.add(stemOf(x));
    t = [...out];
    termCache.set(r.id, t);
  }
  return t;
}

/** Each word of q matches by itself, its stem, or its join with a neighbour (or that join's stem). */
export function matches(r: OracleRow, q: string): boolean {
  const qs = wordsOf(q);
  const ts = terms(r);
  return qs.every((w, i) => {
    const forms = [w, stemOf(w)];
    for (const j of [i - 1, i + 1]) {
      const n = qs[j];
      const c = n === undefined ? null : j < i ? join(n, w) : join(w, n);
      if (c) forms.push(c, stemOf(c));
    }
    return ts.some((t) => forms.some((f) => t.startsWith(f)));
  });
}
