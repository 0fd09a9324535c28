// What an event costs. The upstream price field when there is one; many calendars (Trumba, Google
// Calendar, WordPress) have none and write the cost into the description as a "Cost:" or "Price:"
// line, or mark the title "(Free)", so those are read too, in that order of trust.
import type { RawEvent } from '../types.ts';
import { plainText } from './text.ts';

export interface Price {
  readonly isFree: boolean;
  readonly min: number | null;
  readonly max: number | null;
  readonly note: string | null;
}

const MONEY = /\$\s?(\d{1,5}(?:\.\d{1,2})?)/g;
// A cost field holding only numbers ("Cost: 25-100", "Price: 0") is in the feed's currency.
const BARE_AMOUNTS = /^\$?\s?\d{1,5}(?:\.\d{1,2})?(?:\s?(?:-|–|to)\s?\$?\s?\d{1,5}(?:\.\d{1,2})?)?$/i;
const NUMBER = /\d{1,5}(?:\.\d{1,2})?/g;

// "free" that is not about getting in: compounds ("gluten-free", "free-flowing"), invitations
// ("feel free") and extras ("free parking"). They are cut out before "free" is looked for.
const NOT_ADMISSION = /\w-free\b|\bfree-\w|\bfeel free\b|\bfree (?:parking|wi-?fi|refreshments|snacks|food|childcare|zines?|gifts?|giveaways?|tickets? for)\b/gi;
const FREE = /\bfree\b/i;
// Free only on a condition, or not at all: "Free with museum admission", "$10 suggested donation".
const NOT_REALLY_FREE = /\bfree\s(?:with|w\/)|\bsuggested donation\b|\bplus admission\b/i;

/** Whether a price text says that getting in costs nothing. */
export function saysFree(text: string): boolean {
  return !NOT_REALLY_FREE.test(text) && FREE.test(text.replace(NOT_ADMISSION, ' '));
}

// Breaks between description lines, in HTML (also escaped once more, as RSS often is) or plain text.
const LINE_BREAK = /<br\s{0,4}\/?>|&lt;br\s{0,4}\/?&gt;|<\/(?:p|div|li|tr|h[1-6])>|&lt;\/(?:p|div|li)&gt;|\r?\n/gi;
// A cost field: at the start of a line, of a sentence, or after a parenthesis ("… Institute. Cost: $220 for the full 9 weeks.").
const COST_FIELD = /(?:^|[.!?)]\s)(?:cost|costs|price|prices|admission|fee|fees|tickets?)\s?:\s?(\S.*)$/i;
// The field ends where its sentence does, or where a description run together from fields starts
// the next one ("Price: $60 Ages: Adults and teens 10+").
const FIELD_END = /[.!?](?=\s)|\s(?:ages?|age range|time|date|when|where|location|phone|contact|registration|online ticket|city\/area)\s?:/i;

// A description line that is a price on its own: Wallyhood's whole DESCRIPTION is "Free".
const FREE_LINE = /^(?:admission:?\s)?free(?:\s(?:admission|entry|event))?[!.]?$/i;

/** The value of a "Cost:"/"Price:"/"Admission:" line of a description (HTML or plain), or a line that is only "Free"; else null. */
export function costField(description: string | null): string | null {
  if (description === null) return null;
  for (const line of description.split(LINE_BREAK)) {
    const plain = plainText(line);
    if (plain === null) continue;
    if (FREE_LINE.test(plain)) return plain;
    const m = COST_FIELD.exec(plain);
    if (!m) continue;
    const value = m[1]!;
    const end = FIELD_END.exec(value);
    const cut = (end ? value.slice(0, end.index + (end[0].length === 1 ? 1 : 0)) : value).trim().slice(0, 300);
    if (cut !== '') return cut;
  }
  return null;
}

// Titles mark free events in brackets or as a trailing tag: "Amy Yee (Youth) Tennis Clinics (Free)".
const TITLE_FREE = /[([]\s?free!?\s?[)\]]|[-–—:|]\s?free!?$/i;
// Prose that says the event itself costs nothing. Narrow on purpose: "free admission to the museum
// on First Thursdays" or "free event tickets for veterans" are offers to some, not free events.
const PROSE_FREE = /\b(?:admission|event|show|program|class|concert|workshop|screening) is (?:completely |totally |always )?free\b(?! with| w\/| for members)|\bfree and open to the public\b|\bfree to attend\b|\bthis free event\b/i;

export interface PriceText {
  readonly title: string;
  /** The upstream description, with its markup: line breaks separate its fields. */
  readonly description: string | null;
}

export function normalizePrice(
  raw: Pick<RawEvent, 'priceText' | 'priceMin' | 'priceMax' | 'isFree'>,
  freeByDefault: boolean,
  text: PriceText = { title: '', description: null },
): Price {
  const note = plainText(raw.priceText) ?? costField(text.description);
  const amounts = note === null ? [] : BARE_AMOUNTS.test(note) ? [...note.matchAll(NUMBER)].map((m) => Number(m[0])) : [...note.matchAll(MONEY)].map((m) => Number(m[1]));
  for (const n of [raw.priceMin, raw.priceMax]) if (n !== null && Number.isFinite(n) && n >= 0) amounts.push(n);
  const free = note !== null ? saysFree(note) : TITLE_FREE.test(text.title) || PROSE_FREE.test(plainText(text.description) ?? '');
  // "Free-$15", "Kids 5 and under: FREE": free for some is a price of zero beside the others.
  if (free && note !== null && amounts.length) amounts.push(0);
  const min = amounts.length ? Math.min(...amounts) : null;
  const max = amounts.length ? Math.max(...amounts) : null;
  const isFree = raw.isFree ?? (max !== null ? max === 0 : free || freeByDefault);
  if (note === null && min === null) {
    // Nothing priced: a free event (by flag, title or text) is a price of zero; a source default is no price at all.
    const zero = raw.isFree === true || (raw.isFree === null && free) ? 0 : null;
    return { isFree, min: zero, max: zero, note: null };
  }
  return { isFree, min: min ?? (free ? 0 : null), max: max ?? (free ? 0 : null), note };
}
