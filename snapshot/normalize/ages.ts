// Age phrases → age_range in months (the canonical unit). Years become whole-year spans:
// "ages 3-5" covers from the 3rd birthday to the day before the 6th, i.e. months 36..71,
// which is what the contract's [age_min·12, age_max·12+11] child range overlaps against.
//
// An age in the text is the event's audience only where the text says so: the same numbers also
// price a ticket tier ("kids 12 and under free"), describe performers or another program ("our
// conservatory trains actors ages 11-20"), or are part of a name ("The Big Baby Tour"); audience.ts
// tells those apart. Number words ("twelve and under", "first through third grade") are read by
// compromise, only in sentences that pair one with an age word: it costs milliseconds a call.
import { createRequire } from 'node:module';
import type nlpType from 'compromise';
import { adultSigns, audienceField, audienceLabel, notTheAudience, speaksToChildren, type AudienceGroups } from './audience.ts';
import { memoize } from '../../core/memo.ts';
import { fold } from '../../core/text.ts';
import type { AgeRange } from '../../core/record.ts';

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
// Every way a span is joined: "3-5", "3 to 5", "3 through 5", "1 month up to 2 years", "3 and 4", "3 & 4".
const DASH = String.raw`\s{0,3}(?:[-–—]|to|through|thru|up\sto|until|till|and|&)\s{0,3}`;
// Whole words only: "Cost: 0-75 More Agenda" is not "0–75 mo".
const MONTHS_WORD = String.raw`(?:months?|mos?)\b\.?`;
const YEARS_WORD = String.raw`(?:years?|yrs?|y\.?o)\b\.?`;
// Who a number is about: an age is read only where the text says it is one.
const WHO = String.raw`(?:ages?|aged|kids|children|child|youths?|students|participants|campers|for\s(?:kids|children|youth|students|ages?))(?:\s(?:of|between|from))?(?:\sthe\sages?\sof)?:?`;
// "for 2-3 hours", "ages 5 to 10 pm": counts of other things.
const NOT_AGE_UNIT = String.raw`(?!\s{0,2}(?:hour|hr|min|mi\b|mile|km|[ap]\.?m\b|people|player|guest|week|day|%|percent|:\d|\.\d))`;
const OPEN_HIGH = String.raw`(?:\+|(?:and|&|or)\s(?:up|over|older|above))`;
const OPEN_LOW = String.raw`(?:and|&|or)\s(?:under|younger|below)`;

const num = (s: string | undefined): number => (s === undefined || /^(?:birth|newborns?)$/.test(s) ? 0 : Number(s));

// A school grade as the age it starts at: TK and pre-K are 4, K is 5, grade n is n + 5.
const GRADE = String.raw`(tk|t-k|pre-?k|k|kinder(?:garten)?|\d{1,2})(?:st|nd|rd|th)?`;
const gradeAge = (s: string): number => (/^(?:tk|t-k|pre-?k)$/.test(s) ? 4 : /^k/.test(s) ? 5 : Number(s) + 5);
const grades = (lo: string, hi: string | undefined, open: string | undefined): AgeVerdict => {
  const a = gradeAge(lo);
  if (open !== undefined) return /under|below|younger/.test(open) ? years(5, a + 1) : years(a, MAX_CHILD_YEARS);
  return years(a, Math.min(MAX_CHILD_YEARS, (hi === undefined ? a : gradeAge(hi)) + 1));
};

// Ordered: the first rule with a match that is the audience wins, most specific first.
type Rule = readonly [RegExp, (m: RegExpExecArray) => AgeVerdict];
const rule = (source: string, make: (m: RegExpExecArray) => AgeVerdict): Rule => [new RegExp(source, 'g'), make];
const RULES: readonly Rule[] = [
  // "0–18 months", "birth-12 months", "6 mos to 2 years", "1 month up to 2 years"
  rule(String.raw`\b${NUM}\s{0,2}(?:${MONTHS_WORD})?${DASH}(\d{1,2})\s{0,2}${MONTHS_WORD}`, (m) => months(num(m[1]), Number(m[2]))),
  rule(String.raw`\b${NUM}\s{0,2}${MONTHS_WORD}${DASH}(\d{1,2})\s{0,2}${YEARS_WORD}`, (m) => {
    const lo = num(m[1]);
    return lo >= MAX_CHILD_YEARS * 12 ? ADULT : { kind: 'range', range: { min_months: lo, max_months: Math.min(Number(m[2]) * 12 + 11, MAX_MONTHS) } };
  }),
  // "grades K-2", "grades TK-3rd", "grade 4", "grades 6 and up"
  rule(String.raw`\bgrades?\s{0,2}${GRADE}(?:${DASH}${GRADE})?(?:\s(${OPEN_HIGH}|${OPEN_LOW}))?\b`, (m) => grades(m[1]!, m[2], m[3])),
  // "3rd-5th grade", "kindergarten through 2nd grade", "TK-5th graders", "5th grade", "1st graders"
  rule(String.raw`\b${GRADE}(?:\s?grade)?${DASH}${GRADE}\s{0,2}(?:grades?|graders?)\b`, (m) => grades(m[1]!, m[2], undefined)),
  // Not a story's grade: "formed in the 4th grade", "since kindergarten".
  rule(
    String.raw`(?<!\b(?:in|since|from)\s(?:the\s)?)\b(?:(tk|pre-?k|k|kinder(?:garten)?|\d{1,2})(?:st|nd|rd|th)\s{0,2}(?:grades?|graders?)\b|\b(kindergarten(?:ers)?)\b(?!\s(?:readiness|registration|enrollment|teachers?)))`,
    (m) => grades(m[1] ?? 'k', undefined, undefined),
  ),
  // "(K-5)", "TK-5 students": a school span without the word grade (never "K-9", the police dogs)
  rule(String.raw`(?:\(|\b)(t?k)\s?[-–]\s?(?!9\b)(\d{1,2})(?:st|nd|rd|th)?(?:\)|\s(?:students|kids|children|families))`, (m) => grades(m[1]!, m[2], undefined)),
  // "ages 3-5", "ages 3 to 5 years", "for ages 3-5", "kids 6–12", "between the ages of 5 and 12"
  rule(String.raw`\b${WHO}\s{0,2}${NUM}${DASH}(\d{1,2})\b${NOT_AGE_UNIT}`, (m) => years(num(m[1]), Number(m[2]))),
  // "3-5 years", "for 3-5 year olds"
  rule(String.raw`\b${NUM}${DASH}(\d{1,2})\s{0,2}(?:-\s{0,2})?${YEARS_WORD}`, (m) => years(num(m[1]), Number(m[2]))),
  // "ages 2+", "ages 5 and up", "kids 5 & older", "5 years and up", "(4+)"; not "2+ mile walk"
  rule(String.raw`\b${WHO}\s{0,2}(\d{1,2})\s{0,2}${OPEN_HIGH}|\b(\d{1,2})\s{0,2}${YEARS_WORD}(?:\sold)?\s{0,2}${OPEN_HIGH}|\((\d{1,2})\s?\+\)`, (m) =>
    years(Number(m[1] ?? m[2] ?? m[3]), MAX_CHILD_YEARS),
  ),
  // "ages 5 and under", "kids 5 & younger", "musicians 18 and under", "children under 5", "under 5s"
  rule(String.raw`(?<![$\d.:,])\b(\d{1,2})\s{0,2}(?:${YEARS_WORD}(?:\sold)?\s{0,2})?${OPEN_LOW}\b`, (m) => years(0, Number(m[1]))),
  rule(
    String.raw`\b${WHO}\s(?:under|younger\sthan)\s(\d{1,2})\b${NOT_AGE_UNIT}|\bunder\s(\d{1,2})s\b|\b(?:under|younger\sthan)\s(\d{1,2})\s${YEARS_WORD}(?:\sold|\sof\sage)`,
    (m) => years(0, Number(m[1] ?? m[2] ?? m[3]) - 1),
  ),
  // "from birth to 5", "birth through elementary school"; Spanish "de 0 a 5 años", "edades 3-5"
  rule(String.raw`\bbirth${DASH}(?:age\s)?(\d{1,2})\b${NOT_AGE_UNIT}|\bbirth${DASH}(?:the\s)?(elementary|kindergarten|preschool|pre-?k)`, (m) =>
    years(0, m[1] !== undefined ? Number(m[1]) : m[2] === 'elementary' ? 11 : 5),
  ),
  rule(String.raw`\b(?:edades?:?\s|de\s)?(\d{1,2})\s?(?:a|-|–|y)\s?(\d{1,2})\sanos\b|\bedades?:?\s(\d{1,2})\s?(?:-|–|a)\s?(\d{1,2})\b`, (m) =>
    years(Number(m[1] ?? m[3]), Number(m[2] ?? m[4])),
  ),
  // Chinese: "3至5歲", "0-5岁", "从0岁到小学生" (from birth to primary school)
  rule(String.raw`(\d{1,2})\s?(?:岁|歲)?\s?(?:至|到|-|–|~|～)\s?(?:(\d{1,2})\s?(?:岁|歲)|(?:小学|小學))`, (m) =>
    years(Number(m[1]), m[2] !== undefined ? Number(m[2]) : 11),
  ),
  // "elementary, middle school, and high school students": the union of the school levels named
  rule(
    String.raw`\b((?:elementary|middle|high)(?:\sschool)?(?:,?\s(?:and|or|&)\s|,\s|\/)(?:(?:elementary|middle|high)(?:\sschool)?(?:,?\s(?:and|or|&)\s|,\s|\/))*(?:elementary|middle|high))\s(?:school\s)?(?:students|schoolers|kids|youth|aged?)\b`,
    (m) => {
      const lv = m[1]!;
      const lo = /elementary/.test(lv) ? 5 : /middle/.test(lv) ? 11 : 14;
      const hi = /high/.test(lv) ? 18 : /middle/.test(lv) ? 14 : 11;
      return years(lo, hi);
    },
  ),
  // A single age, unless it is the start of a range that failed above ("ages 9-3" is no age at all).
  rule(String.raw`\bages?:?\s(\d{1,2})\b(?!\s{0,3}(?:[-–—]|to)\s{0,3}\d)${NOT_AGE_UNIT}`, (m) => years(Number(m[1]), Number(m[1]))),
];

// Words that name an audience, each with its span. In a title they are the audience ("Toddler
// Time"); in a description only where addressed ("for teens", "toddlers and their caregivers"),
// since descriptions also name performers ("this teen group"), topics ("infant CPR training")
// and lists of every group. Several joined ("Baby and Toddler Storytime") are their union.
const NOUNS: readonly (readonly [RegExp, AgeVerdict])[] = [
  [/^(?:bab(?:y|ies)|infants?|lapsit|lap-sit|newborns?)$/, months(0, 12)],
  [/^(?:toddlers?|tots?)$/, months(12, 47)],
  [/^(?:preschool(?:ers)?|pre-k|prek)$/, years(3, 5)],
  [/^tweens?$/, years(9, 12)],
  [/^(?:teens?|teenagers?|young\sadults?|high\sschoolers)$/, years(13, 18)],
  [/^middle\sschoolers$/, years(11, 14)],
  [/^(?:school[\s-]aged?|elementary(?:\s(?:school\s)?(?:students|kids|children|aged?))?)$/, years(5, 11)],
];
const NOUN = String.raw`bab(?:y|ies)|infants?|lapsit|lap-sit|newborns?|toddlers?|preschool(?:ers)?|pre-k|prek|tweens?|teens?|teenagers?|young\sadults?|high\sschoolers|middle\sschoolers|school[\s-]aged?|elementary(?:\s(?:school\s)?(?:students|kids|children|aged?))?`;
const nounVerdict = (word: string): AgeVerdict | null => NOUNS.find(([re]) => re.test(word))?.[1] ?? null;
// "tots" only joined to another group ("Tots & Toddlers"); alone it is too often a name.
const JOIN = String.raw`\s?(?:[,&+/]|and|or)\s?`;
const LIST = String.raw`(?:${NOUN})(?:${JOIN}(?:${NOUN}|tots))*`;
// What a baby or a child is the subject of, not the audience of.
const TOPIC = String.raw`(?!\s(?:cpr|first\said|care|massage|sleep|feeding|loss|formula|safety|shower|dedication|nutrition|development|dating|violence|suicide|mental|boomers?|shark|driver|grand|bump|blues|brain|proofing|milestones|behavior|tantrums|parenting|titans|wolf|moms?|idol|spirit)\b)`;
// A singular "baby" in a title is the audience only beside its activity or its grown-up ("Baby
// Rhyme Time", "Baby & Me", "Baby and Toddler Storytime"); otherwise it names something ("The Big
// Baby Tour", "Baby Shark Live!").
const BABY_ACTIVITY = String.raw`(?=\s?(?:[&+,]|and)\s?(?:me|toddler|tot|caregiver|parent|grown-?up|famil|preschool|bab)|\s?(?:stor|rhyme|lap|play|sign|music|song|sing|bounce|yoga|sensory|gym|swim|social|circle|time|book|read|art|dance|steps|jam|boogie|wiggle|group|class|club|hour|talk|explor|meetup|movers|lounge)|\s?$|\s?[)\]:–-])`;
// Not the audience: a topic ("Parenting Teens"), or the place ("Concert at Rosa Parks Elementary").
const PARENTS_OF =
  /(?:parenting|raising|parents?\s(?:and\scaregivers\s)?of|caring\sfor|about|teaching|living\swith)\s(?:your\s|young\s|a\s|an\s|the\s)?$|\b(?:at|@)\s(?:[\w.'’-]+\s){1,3}$/;
// "Adults of all ages" is no child.
const ALL_AGES = /(?<!\b(?:adults?|grown-?ups|seniors)\sof\s)\ball[\s-]ages\b|\bfor (?:the (?:whole|entire) )?famil(?:y|ies)\b/;
// In a title the list may start with any group but a singular baby or infant, which needs its activity.
const TITLE_LIST = String.raw`(?!(?:baby|infant)\b)(?:${NOUN})(?:${JOIN}(?:${NOUN}|tots))*`;
const TITLE_NOUNS = new RegExp(String.raw`\b(?:(baby|infant)${BABY_ACTIVITY}|(${TITLE_LIST})\b)${TOPIC}`, 'g');
const ADDRESSED = String.raw`\b(?:for|open\sto|calling\sall|welcoming|attention|geared\sto(?:ward)?|just\sfor|perfect\sfor|great\sfor|designed\sfor|intended\sfor|recommended\sfor)\s(?:the\s|all\s|our\s|young\s|local\s|your\s|little\s)?`;
const WITH_GROWNUPS = String.raw`\s(?:only|welcome|(?:and|&|with|\+)\s(?:their\s|an?\s)?(?:caregivers?|parents?|families|family|grown-?ups?|adults?|guardians?))\b`;
const TEXT_NOUNS = new RegExp(String.raw`${ADDRESSED}(${LIST})\b${TOPIC}|\b(${LIST})${WITH_GROWNUPS}`, 'g');

function unionOf(list: string, acc: AgeRange | null): AgeRange | null {
  let out = acc;
  for (const word of list.split(/\s?(?:[,&+/]|\band\b|\bor\b)\s?/)) {
    const v = nounVerdict(word.trim());
    if (v?.kind === 'range') {
      out = out === null ? v.range : { min_months: Math.min(out.min_months, v.range.min_months), max_months: Math.max(out.max_months, v.range.max_months) };
    }
  }
  return out;
}

// Teens named beside adults ("Adults and teenagers welcome", "for teens and adults") are one end
// of an open range, not a teen program; toddlers beside adults are with their grown-ups.
const ADULTS_BEFORE = /\b(?:adults?|grown-?ups)\s?(?:[,&+]|and|or)\s?$/;
const ADULTS_AFTER = /^\s?(?:[,&+]|and|or)\s?(?:adults?|grown-?ups)\b/;
const TEENS_UP = 9 * 12;

/** The union of the audience words in a text (all of them in a title, the addressed ones in a description). */
function keywords(text: string, re: RegExp): AgeVerdict | null {
  let range: AgeRange | null = null;
  for (const m of text.matchAll(re)) {
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    if (PARENTS_OF.test(before)) continue;
    const found = unionOf(m[1] ?? m[2] ?? m[3] ?? '', null);
    if (found === null) continue;
    const listEnd = m.index + m[0].length;
    const withAdults =
      ADULTS_BEFORE.test(before) || ADULTS_AFTER.test(text.slice(listEnd, listEnd + 20)) || /\s(?:and|&|\+)\s(?:adults?|grown-?ups)\b/.test(m[0]);
    if (withAdults && found.min_months >= TEENS_UP) continue;
    range = unionOf(m[1] ?? m[2] ?? m[3] ?? '', range);
  }
  if (range !== null) return { kind: 'range', range };
  return ALL_AGES.test(text) ? { kind: 'all' } : null;
}

/** The first child verdict a rule gives that is the audience; an adult minimum is no child age and is passed over. */
function firstMatch(text: string, title: string): AgeVerdict | null {
  for (const [re, make] of RULES) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const verdict = make(m);
      if (verdict.kind !== 'range' || verdict.range.min_months > verdict.range.max_months) continue;
      if (notTheAudience(text, m.index, m.index + m[0].length, title, verdict.range.min_months === 0)) continue;
      return verdict;
    }
  }
  return null;
}

// Number words beside an age word, the only place they are worth the parser's time.
const NUMBER_WORD = String.raw`(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty(?:[\s-]one)?|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)`;
const SPELLED_AGE = new RegExp(
  String.raw`\b(?:ages?|aged|grades?)\s${NUMBER_WORD}\b|\b${NUMBER_WORD}\s(?:(?:months?|years?)\s(?:old\s|of\sage\s)?)?(?:and|&|or)\s(?:up|under|over|older|younger|above)\b|` +
    String.raw`\b${NUMBER_WORD}\s(?:(?:months?|years?)\s)?(?:to|through|-|up\sto|until)\s${NUMBER_WORD}\s(?:months?|years?|grade)|\b${NUMBER_WORD}[\s-](?:months?|years?)[\s-]olds?\b|\b${NUMBER_WORD}\s(?:grade|graders)\b|\b${NUMBER_WORD}\+`,
  'g',
);
let nlp: typeof nlpType | null = null;

/** The text with number words turned to numerals ("twelve and under" → "12 and under") around each phrase that states an age with them. */
function numerals(text: string): string {
  SPELLED_AGE.lastIndex = 0;
  if (!SPELLED_AGE.test(text)) return text;
  nlp ??= createRequire(import.meta.url)('compromise') as typeof nlpType;
  let out = '';
  let done = 0;
  SPELLED_AGE.lastIndex = 0;
  for (const m of text.matchAll(SPELLED_AGE)) {
    if (m.index < done) continue;
    // The phrase with a few words either side, cut at spaces: the parser's time grows with its input.
    const from = Math.max(done, text.lastIndexOf(' ', Math.max(0, m.index - 24)) + 1);
    const stop = text.indexOf(' ', m.index + m[0].length + 24);
    const to = stop < 0 ? text.length : stop;
    // Ages are whole years: compromise reads "two and a half" as "0 half".
    const doc = nlp(text.slice(from, to).replace(/\sand\sa\shalf\b/g, ''));
    doc.numbers().toNumber();
    out += text.slice(done, from) + doc.text();
    done = to;
  }
  return out + text.slice(done);
}

function fromGroups(g: AudienceGroups | null): AgeVerdict | null {
  if (g === null) return null;
  return g.kind === 'years' ? years(g.lo, g.hi) : g;
}

/**
 * Reads ages from, in order of trust: an upstream ages field (numbers, or an audience checklist), the
 * title, the description, then a labelled "Audience:"/"Age range:" list (whose "All Ages" comes before
 * the title). A numeric phrase beats a keyword ("Toddler Time, ages 18 months–3 years" is 18..47
 * months); an age that is a price tier, a performer's or another program's is not the audience.
 * Adults only ('adults': not family-friendly) when the field or title states a minimum age of 18+,
 * or nudity anywhere; when the description states one and nothing in the event states a child
 * audience; or when a bar, lounge, tasting or "for adults" program, or one at a taproom, pub or
 * winery (`place`, the upstream location and organizer), speaks to no child. `startHour`, the local
 * hour the event starts (null when unknown or all day), tells a taproom's evening from its
 * Saturday-morning market.
 * Returns null when nothing is said (served as all ages).
 */
export function parseAges(
  field: string | null,
  title: string,
  description: string | null,
  place: string | null = null,
  startHour: number | null = null,
): AgeVerdict | null {
  // Only the part of the day matters (audience.ts): night, morning, afternoon, evening.
  const partOfDay = startHour === null ? null : startHour < 7 ? 0 : startHour < 12 ? 7 : startHour < 17 ? 12 : 17;
  return agesMemo(JSON.stringify([field, title, description, place, partOfDay]));
}

// A hashtag runs its words together: "#StoupBeerRunners" is a beer run.
const HASHTAG = /#[A-Za-z]\w*[a-z][A-Z]\w*/g;
const splitHashtags = (t: string): string => (t.includes('#') ? t.replace(HASHTAG, (h) => h.replace(/(?<=[a-z])(?=[A-Z])/g, ' ')) : t);

const agesMemo = memoize((key: string): AgeVerdict | null => {
  const [field0, title0, description0, place0, startHour] = JSON.parse(key) as [string | null, string, string | null, string | null, number | null];
  const clip = (t: string | null): string | null => (t == null || t.trim() === '' ? null : numerals(fold(splitHashtags(t)).slice(0, 4000)));
  const [field, title, description] = [clip(field0), clip(title0) ?? '', clip(description0)];

  const listed = field === null ? null : audienceField(field);
  if (listed) return fromGroups(listed);

  // An ages field that is only numbers ("7-12", "3+", schema.org's "21-") is in years, as the field's name implies.
  const fieldText = field && /^\d/.test(field) ? `ages ${field.replace(/^(\d{1,2})\s?-$/, '$1+')}` : field;
  const signs = adultSigns(fieldText, title, description, place0 === null ? null : fold(place0), startHour);
  if (signs.strong === 'head') return ADULT;

  const texts = [fieldText, title, description].filter((t): t is string => t !== null);
  // A labelled list ("Age range: Teens, Adult, Seniors") is a checklist of coarse groups: its "All
  // Ages" outweighs a price tier ("Kids 6-12: $10"), but a stated age is finer than its other groups.
  const label = description === null ? null : fromGroups(audienceLabel(description));
  const stated =
    (fieldText === null ? null : firstMatch(fieldText, title)) ??
    (label?.kind === 'all' ? label : null) ??
    firstMatch(title, title) ??
    (description === null ? null : firstMatch(description, title)) ??
    label;
  const keyword =
    stated ??
    (fieldText === null ? null : keywords(fieldText, TITLE_NOUNS)) ??
    keywords(title, TITLE_NOUNS) ??
    (description === null ? null : keywords(description, TEXT_NOUNS));
  // A stated 21+ in a description yields only to a stated child age or audience ("Family Festival …
  // beer garden 21+"); a bar or a tasting also yields to children merely being named.
  if (keyword === null && (signs.strong === 'body' || (signs.weak && !speaksToChildren(...texts)))) return ADULT;
  return keyword;
});
