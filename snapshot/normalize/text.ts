// Upstream text → plain text. html-to-text does the HTML (tags, entities, block breaks);
// we only decide wrapping, link handling, and the summary cut.
import { compile } from 'html-to-text';
import { memoize } from '../../core/memo.ts';

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
// exports), and hostile items escape it many times: text that a browser would still read as a tag or
// an entity (also a legacy one with no semicolon, "&lt" or "&amp"; a one-letter name never is one)
// is decoded again, until a pass changes nothing.
const STILL_MARKUP = /<[a-z!/?]|&(?:#|[a-z]{2})/i;
// A run of escaped ampersands is one "&" escaped that many times: "&amp;amp;amp;lt;" is "<" escaped
// four times. Collapsing the run decodes all of its levels in one pass, so the common way of nesting
// costs no pass per level. (A numeric one must end there: "&#381;" is "Ž", not "&" and "1;".)
const AMP_RUN = /&(?:amp;?|#0*38(?:;|(?!\d))|#x0*26(?:;|(?![\da-f])))+/gi;
// Real feeds need two or three passes. Rarer nestings (escaping a letter of an entity's name, a
// tag split by another tag) cost a pass per level; past this many, the input is hostile and what
// is left of its markup is made inert instead of decoded.
const MAX_PASSES = 16;
const TAG = /<[a-z!/?]/i;
const TAG_OPEN = /<(?=[a-z!/?])/gi;
const ENTITY_OPEN = /&(?=#|[a-z]{2})/gi;

const toPlain = memoize((input: string): string | null => {
  let text = input;
  let settled = !MARKUP.test(text);
  for (let pass = 0; !settled && pass < MAX_PASSES; pass++) {
    const next = htmlToText(text.replace(AMP_RUN, '&'));
    settled = next === text || !STILL_MARKUP.test(next);
    text = next;
  }
  // Past the bound, no "<" may open a tag and no "&" an entity for whoever reads this as HTML next
  // (an RSS reader, a page): each becomes a look-alike that no parser reads as markup.
  if (!settled || TAG.test(text)) text = text.replace(TAG_OPEN, '‹').replace(ENTITY_OPEN, '＆');
  text = text.replace(/\s+/g, ' ').trim();
  return text === '' ? null : text;
});

/** Plain text with no tags or entities; whitespace collapsed to single spaces. Null when empty. */
export function plainText(input: string | null | undefined): string | null {
  return input == null ? null : toPlain(input);
}

export const SUMMARY_MAX = 200;
const TRAILING_PUNCT = new Set([' ', ',', ';', ':', '.', '-', '–', '—']);
// A summary that stops at a sentence end should still say something: not before a third of the room.
const MIN_SENTENCE = Math.floor(SUMMARY_MAX / 3);
// A sentence ends at . ! ? or … (maybe inside a closing quote or bracket), then a space, then a capital,
// a digit or an opening quote.
const SENTENCE_END = /[.!?…]["'”’)\]]?\s(?=[\p{Lu}\p{N}"'“‘(])/gu;
// Periods that end abbreviations, not sentences: "Ofc. Barton", "600 4th Ave. Seattle".
const ABBREVIATIONS: ReadonlySet<string> = new Set(['approx', 'ave', 'blvd', 'dept', 'feat', 'incl', 'mrs', 'ofc', 'rev', 'sgt', 'ste', 'vol']);
const URL_START = /^(?:[a-z][a-z\d+.-]{0,20}:\/\/|www\.)/i;
// A break opportunity is any whitespace: words and URLs alike are never split.
const SPACE = /\s/;

/** The last complete sentence end in `room` (its length), or -1. */
function sentenceCut(room: string): number {
  let best = -1;
  for (const m of room.matchAll(SENTENCE_END)) {
    const stop = m.index + 1;
    const word = room.slice(lastSpace(room.slice(0, m.index)) + 1, m.index);
    // A one- or two-letter word is an initial or "St."; "a.m." and a URL's own dots are not sentence ends.
    const letters = word.replace(/\P{L}/gu, '');
    if ((letters.length > 0 && letters.length <= 2) || word.includes('.') || ABBREVIATIONS.has(letters.toLowerCase()) || URL_START.test(word)) continue;
    if (stop >= MIN_SENTENCE) best = stop + (m[0].length - 2);
  }
  return best;
}

/**
 * The upstream summary if there is one, else the description cut to at most 200 characters: after
 * the last whole sentence that fits when there is one, else between words, with "…". A cut never
 * falls inside a word or a URL; a URL left dangling at the end is dropped, since "…" after it would
 * read as part of the address.
 */
export function summarize(summary: string | null, description: string | null): string | null {
  const own = plainText(summary);
  const base = own ?? description;
  if (base == null) return null;
  if (base.length <= SUMMARY_MAX) return base;
  const room = base.slice(0, SUMMARY_MAX - 1);
  const sentence = sentenceCut(room);
  if (sentence > 0) return room.slice(0, sentence).trimEnd();
  const fits = SPACE.test(base[SUMMARY_MAX - 1] ?? '') ? room : room.slice(0, Math.max(0, lastSpace(room)));
  const kept = fits.split(/\s+/);
  while (kept.length > 0 && URL_START.test(kept.at(-1) ?? '')) kept.pop();
  let head = kept.join(' ');
  // Text with no spaces at all (a run of CJK, say) can only be cut by characters; a URL not at all.
  if (head === '') head = URL_START.test(room) ? '' : room.replace(/[\uD800-\uDBFF]$/, '');
  while (head !== '' && TRAILING_PUNCT.has(head.at(-1) ?? '')) head = head.slice(0, -1);
  return head === '' ? null : `${head}…`;
}

/** Index of the last whitespace character, or -1. */
function lastSpace(s: string): number {
  for (let i = s.length - 1; i >= 0; i--) if (SPACE.test(s[i]!)) return i;
  return -1;
}
