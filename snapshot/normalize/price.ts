// What an event costs, and whether it is free. Evidence, in order of trust: the upstream price field
// (text and numbers); a "Cost:"/"Price:" line of the description (Trumba, Google Calendar and
// WordPress have no price field and write one there); else the prose of the title and description,
// where only sentences that state what attending costs count. The upstream free flag and the
// source's default decide only when no text states a price.
//
// is_free and price agree by construction (api-contract.md): a price known to be zero (min and max
// 0) is free, and a free record has price 0–0 or no amount. "Free with (museum) admission" has one
// meaning: not free, no amount (its cost is the admission, which the item does not state), the
// text kept as the note.
//
// No NLP library: compromise 14 (the one with a money parser) found no amount in "$10-15" or
// "$10–$15" and took ~4 ms per 500-character description, 200 times the whole per-event budget;
// what decides here is which sentence an amount belongs to, not how it is written.
import type { RawEvent } from '../types.ts';
import { plainText } from './text.ts';

export interface Price {
  readonly isFree: boolean;
  readonly min: number | null;
  readonly max: number | null;
  readonly note: string | null;
}

export interface PriceText {
  readonly title: string;
  /** The upstream description, with its markup: line breaks separate its fields. */
  readonly description: string | null;
  /** ISO weekday of the event's start (1 = Monday): "FREE Wednesdays" is free on a Wednesday. */
  readonly weekday?: number | undefined;
}

// ---------------------------------------------------------------- amounts

const NUM = String.raw`(\d{1,3}(?:,\d{3})+|\d{1,5})(\.\d{1,2})?`;
// "$25", "$ 45", "$1,250", "$5.50", ranges "$20-40", "$10 – $15", "$5 to $8" (not "$5 - 8pm"), "20 dollars".
const MONEY = new RegExp(String.raw`\$\s?${NUM}(?:\s?(?:[-–—]|to)\s?\$?\s?${NUM}(?!\d|\s?(?:[ap]\.?m\b|:)))?|\b${NUM}\s?(?:dollars|usd)\b`, 'gi');
// A cost field holding only numbers ("Cost: 25-100", "Price: 0") is in the feed's currency.
const BARE_AMOUNTS = /^\$?\s?\d{1,5}(?:\.\d{1,2})?(?:\s?(?:-|–|to)\s?\$?\s?\d{1,5}(?:\.\d{1,2})?)?$/i;
const BARE_NUMBER = /\d{1,5}(?:\.\d{1,2})?/g;

const toAmount = (whole: string | undefined, cents: string | undefined): number | null =>
  whole === undefined ? null : Number(whole.replace(/,/g, '') + (cents ?? ''));

interface Amount {
  readonly value: number;
  readonly start: number;
  readonly end: number;
}

function amountsIn(s: string): Amount[] {
  const out: Amount[] = [];
  for (const m of s.matchAll(MONEY)) {
    const start = m.index;
    const end = start + m[0].length;
    for (const v of [toAmount(m[1], m[2]), toAmount(m[3], m[4]), toAmount(m[5], m[6])])
      if (v !== null && Number.isFinite(v)) out.push({ value: v, start, end });
  }
  return out;
}

// Amounts that are not what attending costs, looked for in the clause around each amount: parking,
// discounts, prizes, money raised or given, optional extras.
const NOT_ATTENDING =
  /\b(?:parking|discounts?|save|savings|prizes?|win|winners?|awards?|awarded|raffle|rais(?:e|ed|es|ing)|goal|fundrais\w*|proceeds|grants?|scholarships?|sponsors?(?:hip)?|stipends?|gift (?:cards?|certificates?)|million|billion|value|worth|optional|wishing to|if you (?:would like|wish|want)|membership|dues|deposit|refund|fines?|budget|tips?)\b|^\s?off\b/i;
// Things for sale at the event, unless the price includes them ("$25 includes dinner").
const FOR_SALE = /\b(?:for sale|for purchase|merch\w*|t-?shirts?|books|food|drinks?|beverages?|beer|wine|cocktails?|snacks?|concessions?|refreshments)\b/i;
const INCLUDES = /\binclud/i;
// A sentence about another event: "Also check out our 8-week series ($120)", "Don't miss next month's gala".
const ANOTHER_EVENT =
  /\b(?:check out|also offer(?:s|ing)?|don['’]t miss|coming up|upcoming|next (?:week|month|year|session|term|season)|sign up for our|register for our|other (?:classes|programs|events))\b/i;
// What makes a prose sentence a statement of the price of attending.
const PRICE_CUE =
  /\b(?:admission|admittance|tickets?|entry|entrance|cover|costs?|price[sd]?|pricing|fees?|charge|donation|tuition|registration|register|enroll(?:ment)?|pay|payable|sliding scale|per|each|members?|non-?members?|adults?|kids?|children|child|seniors?|students?|youth|teens?|general|at the door|doors?|in advance|advance|adv|dos|presale|drop-?ins?|pass(?:es)?)\b|\b(?:is|are|just|only|from|starting at)\s\$|\/\s?(?:person|child|kid|ticket|family|adult|student|session|class)\b/i;
// A clause ends at , ; | • or a dash set off by spaces.
const CLAUSE_BREAK = /[,;|•]|\s[-–—]\s/g;

function clauseAround(s: string, a: Amount, prevEnd: number): string {
  let from = prevEnd;
  for (const m of s.slice(0, a.start).matchAll(CLAUSE_BREAK)) if (m.index + m[0].length > from) from = m.index + m[0].length;
  const rest = s.slice(a.end, a.end + 40);
  const stop = rest.search(/[,;|•$]|\s[-–—]\s/);
  return `${s.slice(from, a.start)}\u0000${stop < 0 ? rest : rest.slice(0, stop)}`;
}

/** The amounts of `s` that are prices of attending. In a price field every amount is, unless its clause says otherwise. */
function attendingAmounts(s: string, field: boolean): number[] {
  if (field && BARE_AMOUNTS.test(s)) return [...s.matchAll(BARE_NUMBER)].map((m) => Number(m[0]));
  const found = amountsIn(s);
  if (found.length === 0) return [];
  if (!field && ((!PRICE_CUE.test(s.replace(MONEY, ' ')) && !onlyAmounts(s)) || ANOTHER_EVENT.test(s))) return [];
  const out: number[] = [];
  let prevEnd = 0;
  for (const a of found) {
    const [left, right] = clauseAround(s, a, prevEnd).split('\u0000') as [string, string];
    const clause = `${left} ${right}`;
    if (!NOT_ATTENDING.test(left) && !NOT_ATTENDING.test(right) && !(FOR_SALE.test(clause) && !INCLUDES.test(clause))) out.push(a.value);
    prevEnd = a.end;
  }
  return out;
}

// A line that is nothing but prices: "$10 - $20", "$36 / $46".
const onlyAmounts = (s: string): boolean => s.replace(MONEY, '').replace(/[\s\p{P}]|\b(?:and|or|to)\b/giu, '') === '';

// ---------------------------------------------------------------- free, free for some, free on a condition

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const WEEKDAY = String.raw`(?:mon|tues|wednes|thurs|fri|satur|sun)day`;

// Who a "free for …" can be: some of the audience, not all of it.
const GROUP = String.raw`(?:kids?|children|child|infants?|bab(?:y|ies)|toddlers?|little ones|juniors?|members?|seniors?|students?|veterans?|military|teachers?|educators?|chaperones?|caregivers?|participants?|participating \w+|residents?|(?:library )?card ?holders?|volunteers?|performers?|lap \w+|(?:ages?|under|those under|kids under|children under) \d{1,2}|\d{1,2} (?:and|&) (?:under|younger|below)|\d{1,2} ?(?:yrs?|years?|months?)(?: old)?|the \d+(?:st|nd|rd|th)|(?:first|second|third|fourth|fifth|\d+(?:st|nd|rd|th)) (?:person|child|kid|ticket|attendee))`;
// "Kids 12 and under free", "free for members", "free entrance to kids 12 and under", "the 5th is free".
const FREE_TIER = new RegExp(
  [
    String.raw`\bfree\s(?:of charge\s)?(?:for|to)\s(?:all\s)?(?:[\w'’&]+\s){0,2}?${GROUP}\b`,
    String.raw`\b${GROUP}(?:\s(?:\d{1,2}|and|under|or|younger|older|below|up|over|[+&-]))*[\s:,-]*(?:are\s|is\s|get in\s|enter\s|attend\s|go\s|always\s)?(?:free|no charge)\b`,
    String.raw`\bfree\s(?:admission|entry|entrance|tickets?)\s(?:to|for)\s(?:all\s)?(?:[\w'’&]+\s){0,2}?${GROUP}\b`,
  ].join('|'),
  'gi',
);
// Free only with something that costs: "Free with museum admission", "included with general admission", "$10 plus admission".
const FREE_ON_CONDITION =
  /\bfree\s(?:with|w\/)\s(?:(?:paid|general|museum|zoo|park|garden|regular|gallery|aquarium|your|an?|the|daily|same-day|valid|entry)\s){0,3}(?:admission|entry|entrance|tickets?|membership|purchase|fee)\b|\bincluded\s(?:with|in)\s(?:(?:paid|general|museum|zoo|park|regular|your|the)\s){0,2}(?:admission|entry|ticket)\b|\bplus\s(?:(?:museum|general|regular|park)\s)?admission\b|\bsuggested donation\b|\bpay what you (?:can|wish)\b/gi;
// "free" that is not about getting in: compounds ("gluten-free", "free-flowing"), invitations
// ("feel free"), extras ("free parking"), kinds of activity ("free play", "free swim": a session that may cost).
const NOT_ADMISSION =
  /\w-free\b|\bfree-\w|\b(?:feel|set|break|sugar|smoke|scent|nut|latex|fragrance|hands) free\b|\bfree (?:of (?!charge)|from|parking|wi-?fi|refreshments|snacks|food|popcorn|drinks?|coffee|childcare|zines?|gifts?|giveaways?|swag|samples?|seeds|books?|t-?shirts?|tickets? for|play|swim|skate|style|form|range|verse|throw|time|speech|jazz|will|trial|consultation|resources?|materials)\b/gi;
// Free on a day: "FREE Wednesdays", "free admission on Sundays", "Wednesdays are free".
// ("anyone with a free Saturday" is free time, not a free day.)
const FREE_WEEKDAY = new RegExp(
  String.raw`\bfree\s(?:(?:admission|entry|entrance)\s)?(?:(?:on|every)\s(${WEEKDAY})s?|(${WEEKDAY})s)\b|\b(${WEEKDAY})s\s(?:are|is)\sfree\b`,
  'i',
);
// Free only on some days or hours, which we cannot check: "First Thursday", "free before 10pm", "free on January 29th".
const FREE_SOMETIMES = new RegExp(
  String.raw`\b(?:first|second|third|fourth|last|1st|2nd|3rd|4th)\s${WEEKDAY}|\bfree\s(?:[^.!?]{0,40}?\s)?(?:before|after|until|between)\s\d|\bfree\s(?:[^.!?]{0,30}?\s)?on\s(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s\d`,
  'i',
);

const EVENT_NOUN = String.raw`(?:event|program(?:me)?|class|workshop|session|concert|show|festival|fair|clinic|screening|performance|tour|training|story ?time|lecture|talk|seminar|webinar|celebration|party|gathering|meetup|open house|day|night|evening|afternoon|morning|activity|drop-in|exhibition|exhibit|showing|film|movie|walk|hike|carnival|playgroup|reading|sing-?along|open mic|series)`;
// A word, hyphenated or not ("all-ages"), between "free" and what is free.
const WORD = String.raw`[\w'’+]+(?:-[\w'’+]+)*`;
// Prose that says the event costs nothing.
const FREE_EVENT = new RegExp(
  [
    String.raw`\bfree\s(?:admission|entry|entrance|access|of charge)\b`,
    String.raw`\bfree\s(?:and open\s)?to\s(?:the public|all|everyone|everybody|attend|enter|participate|join|the community|visitors)\b`,
    String.raw`\bfree and open\b`,
    // One of "a series of free outdoor poetry gatherings".
    String.raw`\b(?:a|this|our) series of free\b`,
    String.raw`\bfree for (?:all|everyone|everybody|the (?:whole )?family|families|all ages|the public|the community)\b`,
    String.raw`\b(?:admission|entry|entrance|attendance|participation|it|everything|(?:the |this |our )?${EVENT_NOUN}|tickets?(?: for this \w+)?) (?:is|are|will be|remains?) (?:(?:completely|totally|always|also|absolutely|100%|entirely)\s)?(?:free|at no cost)\b`,
    String.raw`\b(?:this|a|our|the|is|are)\sfree,?\s+(?:${WORD},?\s+){0,4}?${EVENT_NOUN}\b`,
    String.raw`^free,?\s+(?:${WORD},?\s+){0,3}?${EVENT_NOUN}\b`,
    String.raw`\b(?:at\s)?no\s(?:cost|charge|fee|admission\s(?:fee|charge|cost)|entry fee|entrance fee|cover(?: charge)?)\b`,
    String.raw`\bcosts? nothing\b`,
    String.raw`^(?:(?:admission|entry|entrance|cost|price|tickets?|cover)\s?:?\s?)?free(?:\s(?:admission|entry|entrance|event|for all|to all|to the public|with (?:rsvp|registration|reservation)))?[\s!.]*$`,
  ].join('|'),
  'i',
);
// Titles mark free events in brackets or as a trailing tag: "Amy Yee (Youth) Tennis Clinics (Free)".
const TITLE_FREE = /[([]\s?free!?\s?[)\]]|[-–—:|]\s?free!?$/i;

interface Reading {
  amounts: number[];
  /** The text says the event costs nothing. */
  free: boolean;
  /** Free for some of the audience ("kids 12 and under free"): a price of 0 beside the others. */
  tierFree: boolean;
  /** Free only with something that costs ("free with museum admission", a suggested donation). */
  conditional: boolean;
  /** The sentences that said any of it. */
  said: string[];
}

const emptyReading = (): Reading => ({ amounts: [], free: false, tierFree: false, conditional: false, said: [] });
const informative = (r: Reading): boolean => r.amounts.length > 0 || r.free || r.tierFree || r.conditional;

/** Removes what `re` (global) matches from `s`; whether it matched. */
function cut(s: string, re: RegExp): [string, boolean] {
  let found = false;
  const rest = s.replace(re, () => {
    found = true;
    return ' ';
  });
  return [rest, found];
}

/** Reads one sentence (or a price field's value) into `r`. */
function readSentence(sentence: string, field: boolean, weekday: number | undefined, r: Reading): void {
  const amounts = attendingAmounts(sentence, field);
  const [afterCondition, conditional] = cut(sentence, FREE_ON_CONDITION);
  const [afterTier, tierFree] = cut(afterCondition, FREE_TIER);
  const rest = afterTier.replace(NOT_ADMISSION, ' ').trim();
  let free = false;
  const day = FREE_WEEKDAY.exec(rest);
  if (day) free = WEEKDAYS.indexOf((day[1] ?? day[2] ?? day[3])!.toLowerCase() as (typeof WEEKDAYS)[number]) + 1 === weekday;
  // In a price field "free" anywhere is about the price; in prose it must be said of the event.
  else if (!FREE_SOMETIMES.test(rest)) free = field ? /\bfree\b|\bno (?:cost|charge)\b/i.test(rest) : FREE_EVENT.test(rest);
  if (amounts.length === 0 && !free && !tierFree && !conditional) return;
  r.amounts.push(...amounts);
  r.free ||= free;
  r.tierFree ||= tierFree;
  r.conditional ||= conditional;
  r.said.push(sentence);
}

// Breaks between description lines, in HTML (also escaped once more, as RSS often is) or plain text.
const LINE_BREAK = /<br\s{0,4}\/?>|&lt;br\s{0,4}\/?&gt;|<\/(?:p|div|li|tr|h[1-6])>|&lt;\/(?:p|div|li)&gt;|\r?\n/i;
// A sentence ends at . ! ? then a space (so "$5.50" and "a.m." inside a word stay whole).
const SENTENCE_END = /(?<=[.!?])\s+/;
// Prose worth reading for a price: most descriptions say nothing of cost and are skipped.
const MENTIONS_PRICE = /\$|\bfree\b|\bno (?:cost|charge|fee)\b|\bdollars?\b|\bcosts? nothing\b|\badmission\b/i;

function sentencesOf(description: string | null): string[] {
  if (description === null || !MENTIONS_PRICE.test(description)) return [];
  const out: string[] = [];
  for (const line of description.split(LINE_BREAK)) {
    const plain = plainText(line);
    if (plain !== null && MENTIONS_PRICE.test(plain)) out.push(...plain.split(SENTENCE_END).filter((s) => s !== ''));
  }
  return out;
}

/** Whether a price text says that getting in costs nothing, for everyone and on no condition. */
export function saysFree(text: string): boolean {
  const r = emptyReading();
  readSentence(text, true, undefined, r);
  return r.free && !r.conditional;
}

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

const NOTE_MAX = 300;

/** The price read from the title and the description's prose; the note is the sentences that stated it. */
export function readProse(text: PriceText): Reading {
  const r = emptyReading();
  // A title that starts with "Free" is about the event ("Free Tax Help"), unless it is "Free zines", "Free Play"…
  const title = text.title.replace(NOT_ADMISSION, ' ').trim();
  // (The record carries its title: the note is not made of it.)
  if (TITLE_FREE.test(text.title) || (/^free\b/i.test(title) && !FREE_SOMETIMES.test(title))) r.free = true;
  else readSentence(text.title, false, text.weekday, r);
  for (const s of sentencesOf(text.description)) readSentence(s, false, text.weekday, r);
  return r;
}

export function normalizePrice(
  raw: Pick<RawEvent, 'priceText' | 'priceMin' | 'priceMax' | 'isFree'>,
  freeByDefault: boolean,
  text: PriceText = { title: '', description: null },
): Price {
  const field = plainText(raw.priceText) ?? costField(text.description);
  const numbers = [raw.priceMin, raw.priceMax].filter((n): n is number => n !== null && Number.isFinite(n) && n >= 0);
  let r = emptyReading();
  let note = field;
  if (field !== null) readSentence(field, true, text.weekday, r);
  // A field that says nothing of cost ("See website", "Tickets") and no numbers: the prose may.
  if (!informative(r) && numbers.length === 0) {
    const prose = readProse(text);
    if (informative(prose)) {
      r = prose;
      note ??= prose.said.join(' ').slice(0, NOTE_MAX).trim() || null;
    }
  }
  let amounts = [...r.amounts, ...numbers];
  // Free only with a paid admission: a zero is no price of its own, and only stated amounts remain.
  if (r.conditional) amounts = amounts.filter((n) => n > 0);
  else if ((r.free || r.tierFree) && amounts.some((n) => n > 0)) amounts.push(0);
  if (amounts.length > 0) {
    const min = Math.min(...amounts);
    const max = Math.max(...amounts);
    return { isFree: max === 0, min, max, note };
  }
  if (r.conditional) return { isFree: false, min: null, max: null, note };
  if (r.free) return { isFree: true, min: 0, max: 0, note };
  // Nothing priced: an upstream flag says free at zero or not free; a source default is no price at all.
  if (raw.isFree === true) return { isFree: true, min: 0, max: 0, note };
  return { isFree: raw.isFree ?? freeByDefault, min: null, max: null, note };
}
