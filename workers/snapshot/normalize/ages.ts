// Age phrases → age_range in months (the canonical unit). Years become whole-year spans:
// "ages 3-5" covers from the 3rd birthday to the day before the 6th, i.e. months 36..71,
// which is what the contract's [age_min·12, age_max·12+11] child range overlaps against.
import { memoize } from './memo.ts';
import { fold } from './text.ts';

export interface AgeRange {
  readonly min_months: number;
  readonly max_months: number;
}

/** range: a parsed span; all: explicitly all ages (stored as null); adults: not family-friendly. */
export type AgeVerdict = { kind: 'range'; range: AgeRange } | { kind: 'all' } | { kind: 'adults' };

export const MAX_CHILD_YEARS = 18;
const MAX_MONTHS = MAX_CHILD_YEARS * 12 + 11;

const years = (lo: number, hi: number): AgeVerdict => ({
  kind: 'range',
  range: { min_months: Math.min(lo, MAX_CHILD_YEARS) * 12, max_months: Math.min(hi * 12 + 11, MAX_MONTHS) },
});
const months = (lo: number, hi: number): AgeVerdict => ({
  kind: 'range',
  range: { min_months: Math.min(lo, MAX_MONTHS), max_months: Math.min(hi, MAX_MONTHS) },
});

const NUM = String.raw`(\d{1,2}|birth|newborns?)`;
const DASH = String.raw`\s{0,3}(?:[-–—]|to|through|thru)\s{0,3}`;
const MONTHS_WORD = String.raw`(?:months?|mos?\.?)`;
const YEARS_WORD = String.raw`(?:years?|yrs?\.?|y\.?o\.?)`;

const num = (s: string | undefined): number => (s === undefined || /^(?:birth|newborns?)$/.test(s) ? 0 : Number(s));

// Ordered: the first rule that matches wins, most specific first.
type Rule = readonly [RegExp, (m: RegExpExecArray) => AgeVerdict];
const RULES: readonly Rule[] = [
  [/\badults?[\s-]only\b|\b(?:21|18)\s?\+\s?only\b|\bages?\s(?:21|18)\s?(?:\+|and\s(?:up|over|older))/, () => ({ kind: 'adults' })],
  // "0–18 months", "birth-12 months", "6 mos to 2 years"
  [new RegExp(`${NUM}\\s{0,2}${MONTHS_WORD}?${DASH}(\\d{1,2})\\s{0,2}${MONTHS_WORD}`), (m) => months(num(m[1]), Number(m[2]))],
  [new RegExp(`${NUM}\\s{0,2}${MONTHS_WORD}${DASH}(\\d{1,2})\\s{0,2}${YEARS_WORD}`), (m) => ({
    kind: 'range',
    range: { min_months: num(m[1]), max_months: Math.min(Number(m[2]) * 12 + 11, MAX_MONTHS) },
  })],
  // "grades K-2", "grades 3–5", "grade 4"
  [/\bgrades?\s{0,2}(k|tk|pre-?k|\d{1,2})(?:\s{0,3}(?:[-–—]|to|through)\s{0,3}(k|\d{1,2}))?\b/, (m) => {
    const g = (s: string): number => (/^(?:tk|pre-?k)$/.test(s) ? -1 : s === 'k' ? 0 : Number(s));
    const lo = g(m[1] ?? 'k');
    const hi = m[2] === undefined ? lo : g(m[2]);
    return years(Math.max(0, lo + 5), Math.min(MAX_CHILD_YEARS, hi + 6));
  }],
  // "ages 3-5", "ages 3 to 5 years", "for 3-5 year olds", "kids 6–12"
  [new RegExp(`\\b(?:ages?|aged|kids|children|for)\\s{0,2}${NUM}${DASH}(\\d{1,2})\\b`), (m) => years(num(m[1]), Number(m[2]))],
  [new RegExp(`\\b${NUM}${DASH}(\\d{1,2})\\s{0,2}(?:-\\s{0,2})?${YEARS_WORD}`), (m) => years(num(m[1]), Number(m[2]))],
  // "ages 2+", "ages 5 and up", "5 & older"
  [/\b(?:ages?\s{0,2})?(\d{1,2})\s{0,2}(?:\+|(?:and|&)\s(?:up|over|older))/, (m) => years(Number(m[1]), MAX_CHILD_YEARS)],
  // "ages 5 and under", "under 5", "5 & younger"
  [/\b(?:ages?\s{0,2})?(\d{1,2})\s{0,2}(?:and|&)\s(?:under|younger|below)\b/, (m) => years(0, Number(m[1]))],
  [/\bunder\s(\d{1,2})\b/, (m) => years(0, Number(m[1]) - 1)],
  // A single age, unless it is the start of a range that failed above ("ages 9-3" is no age at all).
  [/\bages?\s(\d{1,2})\b(?!\s{0,3}(?:[-–—]|to)\s{0,3}\d)/, (m) => years(Number(m[1]), Number(m[1]))],
];

const KEYWORDS: readonly Rule[] = [
  [/\b(?:babies|baby|infants?|lapsit|lap-sit)\b/, () => months(0, 12)],
  [/\btoddlers?\b/, () => months(12, 47)],
  [/\b(?:preschool(?:ers)?|pre-k|prek)\b/, () => years(3, 5)],
  [/\btweens?\b/, () => years(9, 12)],
  [/\bteens?\b|\bteenagers?\b|\byoung adults?\b/, () => years(13, 18)],
  [/\bschool[\s-]aged?\b|\belementary\b/, () => years(5, 11)],
  [/\ball ages\b|\ball-ages\b|\bfor (?:the (?:whole|entire) )?famil(?:y|ies)\b/, () => ({ kind: 'all' })],
];

function firstMatch(rules: readonly Rule[], text: string): AgeVerdict | null {
  for (const [re, make] of rules) {
    const m = re.exec(text);
    if (m) {
      const verdict = make(m);
      if (verdict.kind !== 'range' || verdict.range.min_months <= verdict.range.max_months) return verdict;
    }
  }
  return null;
}

/**
 * Reads ages from, in order of trust: an upstream ages field, the title, the description.
 * A numeric phrase anywhere beats a keyword ("Toddler Time, ages 18 months–3 years" is 18..47 months);
 * "adults only" in the ages field or title marks the event as not family-friendly.
 * Returns null when nothing is said (served as all ages).
 */
export function parseAges(field: string | null, title: string, description: string | null): AgeVerdict | null {
  return agesMemo(JSON.stringify([field, title, description]));
}

const agesMemo = memoize((key: string): AgeVerdict | null => {
  const [field, title, description] = JSON.parse(key) as [string | null, string, string | null];
  // An ages field that is only numbers ("7-12", "3+") is in years, as the field's name implies.
  const fieldText = field && /^\s{0,3}\d/.test(field) ? `ages ${field}` : field;
  const texts = [fieldText, title, description].filter((t): t is string => t != null && t !== '').map((t) => fold(t).slice(0, 4000));
  for (const t of texts) {
    const numeric = firstMatch(RULES, t);
    if (numeric) return numeric;
  }
  for (const t of texts) {
    const keyword = firstMatch(KEYWORDS, t);
    if (keyword) return keyword;
  }
  return null;
});

export function ageRangeYears(range: AgeRange | null): { min_years: number; max_years: number } | null {
  return range && { min_years: Math.floor(range.min_months / 12), max_years: Math.floor(range.max_months / 12) };
}
