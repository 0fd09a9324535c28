// Upstream text → plain text. html-to-text does the HTML (tags, entities, block breaks);
// we only decide wrapping, link handling, and the summary cut.
import { compile } from 'html-to-text';
import { memoize } from './memo.ts';

const htmlToText = compile({
  wordwrap: false,
  preserveNewlines: false,
  selectors: [
    // Links keep their text only: hrefs are upstream addresses we never republish.
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'h1', options: { uppercase: false } },
    { selector: 'h2', options: { uppercase: false } },
    { selector: 'h3', options: { uppercase: false } },
    { selector: 'h4', options: { uppercase: false } },
    { selector: 'h5', options: { uppercase: false } },
    { selector: 'h6', options: { uppercase: false } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    { selector: 'ul', options: { itemPrefix: '• ' } },
  ],
});

// A string with neither markup nor an entity needs no HTML pass; this keeps synthetic
// million-event builds from paying for a DOM per plain description.
const MARKUP = /[<&]/;

// Feeds escape their HTML once more than they should (&amp;lt;p&amp;gt; in RSS, &amp;amp; in CMS
// exports): while the text still looks like markup after a pass, it was markup, so decode again.
const STILL_MARKUP = /<[a-z!/]|&(?:#\d+|#x[\da-f]+|[a-z]+);/i;

const toPlain = memoize((input: string): string | null => {
  let text = MARKUP.test(input) ? htmlToText(input) : input;
  for (let pass = 0; pass < 3 && STILL_MARKUP.test(text); pass++) text = htmlToText(text);
  text = text.replace(/\s+/g, ' ').trim();
  return text === '' ? null : text;
});

/** Plain text with no tags or entities; whitespace collapsed to single spaces. Null when empty. */
export function plainText(input: string | null | undefined): string | null {
  return input == null ? null : toPlain(input);
}

export const SUMMARY_MAX = 200;
const TRAILING_PUNCT = new Set([' ', ',', ';', ':', '.', '-', '–', '—']);

/** The upstream summary if there is one, else the description cut at a word boundary (≤ 200 chars). */
export function summarize(summary: string | null, description: string | null): string | null {
  const own = plainText(summary);
  const base = own ?? description;
  if (base == null) return null;
  if (base.length <= SUMMARY_MAX) return base;
  const room = base.slice(0, SUMMARY_MAX - 1);
  const cut = room.lastIndexOf(' ');
  let head = cut > SUMMARY_MAX / 2 ? room.slice(0, cut) : room;
  while (head !== '' && TRAILING_PUNCT.has(head.at(-1) ?? '')) head = head.slice(0, -1);
  return `${head}…`;
}

/** Case- and accent-insensitive comparison key: "San José" → "san jose". */
export function fold(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

const wordsMemo = memoize((s: string): readonly string[] => Object.freeze(fold(s).match(/[\p{L}\p{N}]+/gu) ?? []));

/** Folded words, letters and digits only; the unit of the q filter's word-prefix match. */
export function words(s: string): readonly string[] {
  return wordsMemo(s);
}

export function slugify(s: string): string {
  return words(s).join('-');
}
