// Text folding: the one comparison key for words and names, used where the snapshot is built and
// where it is searched, so a query's words meet the stored words in the same form.
import { memoize } from './memo.ts';

/** Case- and accent-insensitive comparison key: "San José" → "san jose". */
export function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

const wordsMemo = memoize((s: string): readonly string[] => Object.freeze(fold(s).match(/[\p{L}\p{N}]+/gu) ?? []));

/** Folded words, letters and digits only; the unit of the q filter's word-prefix match. */
export function words(s: string): readonly string[] {
  return wordsMemo(s);
}

export function slugify(s: string): string {
  return words(s).join('-');
}
