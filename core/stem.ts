// The other forms of a word that q counts as the same word (the contract's `q`, amended 2026-11-26):
// singular and plural by stemming, and compounds written apart or together by joining neighbours.
// One module for both sides: the snapshot builder indexes an event's terms with indexTerms, the
// server turns a query's words into prefixes with queryForms, so the two always agree.
//
// The stemmer is Porter2 (Snowball's English; wink-porter2-stemmer): Porter himself recommends it
// over the original Porter algorithm, and its exception list keeps words a parent types from
// collapsing into unrelated prefixes ("news" stays "news", where Porter's "new" would prefix-match
// "newborn"; "skies" → "sky", "dying" → "die"). The package is a single dependency-free file.
//
// How a query word q_i (the folded words of q, in order) matches an event: some term of the event
// starts with one of q_i, stem(q_i), or, for a neighbour q_j (j = i ± 1), the join of the two in
// order and its stem. So "story time" matches "storytime" (each word is part of the joined term)
// and "storytime" matches an event saying "story time" (the join is one of its terms); every word
// of the query is still matched, alone or as part of a compound with its neighbour.
import { createRequire } from 'node:module';
import { memoize } from './memo.ts';

// CommonJS without types: one function of a lower-case word.
const porter2 = createRequire(import.meta.url)('wink-porter2-stemmer') as (word: string) => string;

const LETTERS = /^\p{L}+$/u;

/** Porter2's stem of a folded word; words with digits, and words of two letters or fewer, stay as they are. */
export const stem = memoize((word: string): string => (word.length > 2 && LETTERS.test(word) ? porter2(word) : word));

/**
 * Compounds are indexed from neighbours of at least this many letters each, up to MAX_JOIN letters
 * together: "story time" → "storytime", "play ground" → "playground", not "a class" → "aclass".
 * The bound keeps the word table to about twice the rows of plain words (joins of long words are
 * not compounds anyone types).
 */
const MIN_PART = 2;
const MAX_JOIN = 24;

function joinOf(a: string, b: string): string | null {
  return a.length >= MIN_PART && b.length >= MIN_PART && a.length + b.length <= MAX_JOIN && LETTERS.test(a) && LETTERS.test(b) ? a + b : null;
}

/**
 * An event's search terms from the folded words of each of its fields (in order): `words`, the
 * distinct words themselves (what "did you mean" suggests from), and `extra`, the other terms q
 * matches: the join of each pair of neighbours within a field, and the stem of each word and join
 * whose stem is not already a prefix of it (a prefix of the word is matched through the word).
 */
export function indexTerms(fields: readonly (readonly string[])[]): { words: string[]; extra: string[] } {
  const words = new Set<string>();
  const joins = new Set<string>();
  for (const ws of fields) {
    for (let i = 0; i < ws.length; i++) {
      words.add(ws[i] as string);
      const join = i > 0 ? joinOf(ws[i - 1] as string, ws[i] as string) : null;
      if (join !== null) joins.add(join);
    }
  }
  const extra = new Set<string>();
  for (const t of [...words, ...joins]) {
    if (!words.has(t)) extra.add(t);
    const s = stem(t);
    if (!t.startsWith(s) && !words.has(s)) extra.add(s);
  }
  return { words: [...words], extra: [...extra] };
}

/** One word of q and the prefixes that match it (an event matches the word when a term starts with one). */
export interface QueryWord {
  readonly word: string;
  /** Sorted; none a prefix of another (the longer one would match nothing more). */
  readonly prefixes: readonly string[];
}

/** The words of q (folded, in order) as QueryWords: duplicates of the same word and neighbours dropped. */
export function queryForms(words: readonly string[]): QueryWord[] {
  const out: QueryWord[] = [];
  const seen = new Set<string>();
  words.forEach((w, i) => {
    const candidates = [w, stem(w)];
    for (const j of [i - 1, i + 1]) {
      const n = words[j];
      if (n === undefined) continue;
      const join = j < i ? joinOf(n, w) : joinOf(w, n);
      if (join !== null) candidates.push(join, stem(join));
    }
    const sorted = [...new Set(candidates)].sort();
    const prefixes = sorted.filter((p) => !sorted.some((o) => o !== p && p.startsWith(o)));
    const key = JSON.stringify(prefixes);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ word: w, prefixes });
  });
  return out;
}
