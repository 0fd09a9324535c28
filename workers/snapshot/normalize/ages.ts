// Age phrases → age_range in months (the canonical unit). Years become whole-year spans:
// "ages 3-5" covers from the 3rd birthday to the day before the 6th, i.e. months 36..71,
// which is what the contract's [age_min·12, age_max·12+11] child range overlaps against.
import { memoize } from './memo.ts';
import { adultSigns, audienceField, audienceLabel, speaksToChildren, type AudienceGroups } from './audience.ts';
import { fold } from './text.ts';

export interface AgeRange {
  readonly min_months: number;
  readonly max_months: number;
}

/** range: a parsed span; all: explicitly all ages (stored as null); adults: not family-friendly. */
export type AgeVerdict = { kind: 'range'; range: AgeRange } | { kind: 'all' } | { kind: 'adults' };

export const MAX_CHILD_YEARS = 18;
const MAX_MONTHS = MAX_CHILD_YEARS * 12 + 11;

// A minimum of 18 years or more is an adults' event, never a child range of "18-year-olds".
const ADULT: AgeVerdict = { kind: 'adults' };
const years = (lo: number, hi: number): AgeVerdict =>
  lo >= MAX_CHILD_YEARS ? ADULT : { kind: 'range', range: { min_months: lo * 12, max_months: Math.min(hi * 12 + 11, MAX_MONTHS) } };
const months = (lo: number, hi: number): AgeVerdict =>
  lo >= MAX_CHILD_YEARS * 12 ? ADULT : { kind: 'range', range: { min_months: lo, max_months: Math.min(hi, MAX_MONTHS) } };

const NUM = String.raw`(\d{1,2}|birth|newborns?)`;
const DASH = String.raw`\s{0,3}(?:[-–—]|to|through|thru)\s{0,3}`;
// Whole words only: "Cost: 0-75 More Agenda" is not "0–75 mo".
const MONTHS_WORD = String.raw`(?:months?|mos?)\b\.?`;
const YEARS_WORD = String.raw`(?:years?|yrs?|y\.?o)\b\.?`;
// Who a number is about: an age is read only where the text says it is one.
const WHO = String.raw`(?:ages?|aged|kids|children|child|youth|for\s(?:kids|children|youth|students|ages?))`;
// "for 2-3 hours", "ages 5 to 10 pm": counts of other things.
const NOT_AGE_UNIT = String.raw`(?!\s{0,2}(?:hour|hr|min|mi\b|mile|km|[ap]\.?m\b|people|player|guest|week|day|%|percent|:|\.\d))`;

const num = (s: string | undefined): number => (s === undefined || /^(?:birth|newborns?)$/.test(s) ? 0 : Number(s));

// Ordered: the first rule that matches wins, most specific first.
type Rule = readonly [RegExp, (m: RegExpExecArray) => AgeVerdict];
const RULES: readonly Rule[] = [
  // "0–18 months", "birth-12 months", "6 mos to 2 years"
  [new RegExp(`\\b${NUM}\\s{0,2}(?:${MONTHS_WORD})?${DASH}(\\d{1,2})\\s{0,2}${MONTHS_WORD}`), (m) => months(num(m[1]), Number(m[2]))],
  [new RegExp(`\\b${NUM}\\s{0,2}${MONTHS_WORD}${DASH}(\\d{1,2})\\s{0,2}${YEARS_WORD}`), (m) => {
    const lo = num(m[1]);
    return lo >= MAX_CHILD_YEARS * 12 ? ADULT : { kind: 'range', range: { min_months: lo, max_months: Math.min(Number(m[2]) * 12 + 11, MAX_MONTHS) } };
  }],
  // "grades K-2", "grades 3–5", "grade 4"
  [/\bgrades?\s{0,2}(k|tk|pre-?k|\d{1,2})(?:\s{0,3}(?:[-–—]|to|through)\s{0,3}(k|\d{1,2}))?\b/, (m) => {
    const g = (s: string): number => (/^(?:tk|pre-?k)$/.test(s) ? -1 : s === 'k' ? 0 : Number(s));
    const lo = g(m[1] ?? 'k');
    const hi = m[2] === undefined ? lo : g(m[2]);
    return years(Math.max(0, lo + 5), Math.min(MAX_CHILD_YEARS, hi + 6));
  }],
  // "ages 3-5", "ages 3 to 5 years", "for ages 3-5", "kids 6–12"
  [new RegExp(`\\b${WHO}\\s{0,2}${NUM}${DASH}(\\d{1,2})\\b${NOT_AGE_UNIT}`), (m) => years(num(m[1]), Number(m[2]))],
  // "3-5 years", "for 3-5 year olds"
  [new RegExp(`\\b${NUM}${DASH}(\\d{1,2})\\s{0,2}(?:-\\s{0,2})?${YEARS_WORD}`), (m) => years(num(m[1]), Number(m[2]))],
  // "ages 2+", "ages 5 and up", "kids 5 & older", "5 years and up", "(4+)"; not "2+ mile walk"
  [new RegExp(`\\b${WHO}\\s{0,2}(\\d{1,2})\\s{0,2}(?:\\+|(?:and|&)\\s(?:up|over|older))|\\b(\\d{1,2})\\s{0,2}${YEARS_WORD}\\s{0,2}(?:\\+|(?:and|&|or)\\s(?:up|over|older))|\\((\\d{1,2})\\s?\\+\\)`), (m) =>
    years(Number(m[1] ?? m[2] ?? m[3]), MAX_CHILD_YEARS)],
  // "ages 5 and under", "kids 5 & younger", "children under 5", "under 5s"
  [new RegExp(`\\b${WHO}\\s{0,2}(\\d{1,2})\\s{0,2}(?:and|&)\\s(?:under|younger|below)\\b`), (m) => years(0, Number(m[1]))],
  [new RegExp(`\\b${WHO}\\s(?:under|younger\\sthan)\\s(\\d{1,2})\\b${NOT_AGE_UNIT}|\\bunder\\s(\\d{1,2})s\\b`), (m) => years(0, Number(m[1] ?? m[2]) - 1)],
  // A single age, unless it is the start of a range that failed above ("ages 9-3" is no age at all).
  [/\bages?\s(\d{1,2})\b(?!\s{0,3}(?:[-–—]|to)\s{0,3}\d)/, (m) => years(Number(m[1]), Number(m[1]))],
];

// Words that name an audience. In a title they are the audience ("Toddler Time"); in a description
// only where addressed ("for teens", "toddlers and their caregivers"), since descriptions also name
// performers ("this teen group"), topics ("infant CPR training") and lists of every group.
const KEYWORD_NOUNS: readonly (readonly [string, AgeVerdict])[] = [
  [String.raw`babies|baby|infants?|lapsit|lap-sit`, months(0, 12)],
  [String.raw`toddlers?`, months(12, 47)],
  [String.raw`preschool(?:ers)?|pre-k|prek`, years(3, 5)],
  [String.raw`tweens?`, years(9, 12)],
  [String.raw`teens?|teenagers?|young\sadults?`, years(13, 18)],
  [String.raw`school[\s-]aged?|elementary`, years(5, 11)],
];
// What a baby or a child is the subject of, not the audience of.
const TOPIC = String.raw`(?!\s(?:cpr|first\said|care|massage|sleep|feeding|loss|formula|safety|shower|dedication|nutrition|development|dating|violence|suicide|mental)\b)`;
const ADDRESSED = String.raw`\b(?:for|open\sto|calling\sall|welcoming|attention|geared\sto(?:ward)?|just\sfor|perfect\sfor|great\sfor)\s(?:the\s|all\s|our\s|young\s|local\s|your\s)?`;
const WITH_GROWNUPS = String.raw`\s(?:only|welcome|(?:and|&|with)\s(?:their\s|an?\s)?(?:caregivers?|parents?|families|family|grown-?ups?|adults?))\b`;
const ALL_AGES: Rule = [/\ball[\s-]ages\b|\bfor (?:the (?:whole|entire) )?famil(?:y|ies)\b/, () => ({ kind: 'all' })];
const TITLE_KEYWORDS: readonly Rule[] = [
  ...KEYWORD_NOUNS.map(([nouns, v]): Rule => [new RegExp(`\\b(?:${nouns})\\b${TOPIC}`), () => v]),
  ALL_AGES,
];
const TEXT_KEYWORDS: readonly Rule[] = [
  ...KEYWORD_NOUNS.map(([nouns, v]): Rule => [new RegExp(`${ADDRESSED}(?:${nouns})\\b${TOPIC}|\\b(?:${nouns})${WITH_GROWNUPS}`), () => v]),
  ALL_AGES,
];

/** The first child verdict a rule gives; a rule that reads an adult minimum is no child age and is passed over. */
function firstMatch(rules: readonly Rule[], text: string): AgeVerdict | null {
  for (const [re, make] of rules) {
    const m = re.exec(text);
    if (m) {
      const verdict = make(m);
      if (verdict.kind === 'all' || (verdict.kind === 'range' && verdict.range.min_months <= verdict.range.max_months)) return verdict;
    }
  }
  return null;
}

function fromGroups(g: AudienceGroups | null): AgeVerdict | null {
  if (g === null) return null;
  return g.kind === 'years' ? years(g.lo, g.hi) : g;
}

/**
 * Reads ages from, in order of trust: an upstream ages field (numbers, or an audience checklist), the
 * title, the description, then a labelled "Audience:"/"Age range:" list (whose "All Ages" comes before
 * the title). A numeric phrase beats a keyword ("Toddler
 * Time, ages 18 months–3 years" is 18..47 months). Adults only ('adults': not family-friendly) when
 * the field or title states a minimum age of 18+, when the description does and nothing in the event
 * speaks to children, or when a bar, tasting or "for adults" program speaks to no child.
 * Returns null when nothing is said (served as all ages).
 */
export function parseAges(field: string | null, title: string, description: string | null): AgeVerdict | null {
  return agesMemo(JSON.stringify([field, title, description]));
}

const agesMemo = memoize((key: string): AgeVerdict | null => {
  const [field0, title0, description0] = JSON.parse(key) as [string | null, string, string | null];
  const clip = (t: string | null): string | null => (t == null || t.trim() === '' ? null : fold(t).slice(0, 4000));
  const [field, title, description] = [clip(field0), clip(title0) ?? '', clip(description0)];

  const listed = field === null ? null : audienceField(field);
  if (listed) return fromGroups(listed);

  // An ages field that is only numbers ("7-12", "3+", schema.org's "21-") is in years, as the field's name implies.
  const fieldText = field && /^\d/.test(field) ? `ages ${field.replace(/^(\d{1,2})\s?-$/, '$1+')}` : field;
  const signs = adultSigns(fieldText, title, description);
  if (signs.strong === 'head') return ADULT;

  const texts = [fieldText, title, description].filter((t): t is string => t !== null);
  // A labelled list ("Age range: Teens, Adult, Seniors") is a checklist of coarse groups: its "All
  // Ages" outweighs a price tier ("Kids 6-12: $10"), but a stated age is finer than its other groups.
  const label = description === null ? null : fromGroups(audienceLabel(description));
  const stated =
    (fieldText === null ? null : firstMatch(RULES, fieldText)) ??
    (label?.kind === 'all' ? label : null) ??
    firstMatch(RULES, title) ??
    (description === null ? null : firstMatch(RULES, description)) ??
    label;
  const keyword =
    stated ??
    (fieldText === null ? null : firstMatch(TITLE_KEYWORDS, fieldText)) ??
    firstMatch(TITLE_KEYWORDS, title) ??
    (description === null ? null : firstMatch(TEXT_KEYWORDS, description));
  // A stated 21+ in a description yields only to a stated child age or audience ("Family Festival …
  // beer garden 21+"); a bar or a tasting also yields to children merely being named.
  if (keyword === null && (signs.strong === 'body' || (signs.weak && !speaksToChildren(...texts)))) return ADULT;
  return keyword;
});

export function ageRangeYears(range: AgeRange | null): { min_years: number; max_years: number } | null {
  return range && { min_years: Math.floor(range.min_months / 12), max_years: Math.floor(range.max_months / 12) };
}
