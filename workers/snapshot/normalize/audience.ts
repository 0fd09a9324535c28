// Who an event is for, when upstream says it in words rather than ages: audience checklists
// (Trumba's "Audience" custom field, schema.org audienceType) and the signs of an adults-only event.
// Works on folded text (see text.ts fold). Ages in numbers are ages.ts's.

/** What an audience list adds up to: all ages, a span of child years, or grown-ups only. */
export type AudienceGroups = { kind: 'all' } | { kind: 'years'; lo: number; hi: number } | { kind: 'adults' };

// Each checklist item is one group; Trumba's lists tick several ("Adults,Senior,Teen").
// 'neutral' items (pets, accessibility) say nothing about age and leave the rest to decide.
type Group = 'all' | 'adults' | 'neutral' | readonly [number, number];
const GROUPS: ReadonlyMap<string, Group> = new Map<string, Group>([
  ['all', 'all'], ['all ages', 'all'], ['everyone', 'all'], ['family', 'all'], ['families', 'all'], ['family friendly', 'all'],
  ['general public', 'all'], ['public', 'all'],
  ['children', [0, 12]], ['child', [0, 12]], ['kids', [0, 12]], ['youth', [5, 18]],
  ['infants', [0, 1]], ['babies', [0, 1]], ['toddlers', [1, 3]], ['preschoolers', [3, 5]], ['preschool', [3, 5]],
  ['tweens', [9, 12]], ['teen', [13, 18]], ['teens', [13, 18]], ['teenagers', [13, 18]], ['young adults', [13, 18]],
  ['adult', 'adults'], ['adults', 'adults'], ['senior', 'adults'], ['seniors', 'adults'], ['older adults', 'adults'],
  ['pets', 'neutral'], ['special needs', 'neutral'], ['people with disabilities', 'neutral'],
]);

// Longest names first, so "all ages" is not read as "all" followed by junk.
const GROUP = [...GROUPS.keys()].sort((a, b) => b.length - a.length).map((g) => g.replace(/ /g, String.raw`\s`)).join('|');
// A whole field that is nothing but a list; and "Audience: …" inside a description, where the list
// runs straight into the next label ("Audience: Adults,Senior,Teen Pre-Register: Yes").
const WHOLE_LIST = new RegExp(String.raw`^(?:${GROUP})(?:\s?[,;/]\s?(?:${GROUP}))*$`);
const LABELLED_LIST = new RegExp(String.raw`\b(?:audience|age\srange):\s?((?:${GROUP})(?:\s?,\s?(?:${GROUP}))*)\b(?!\s?[,;/])`);

function union(list: string): AudienceGroups | null {
  let lo = Infinity;
  let hi = -Infinity;
  let adults = false;
  for (const item of list.split(/\s?[,;/]\s?/)) {
    const g = GROUPS.get(item);
    if (g === 'all') return { kind: 'all' };
    if (g === 'adults') adults = true;
    else if (Array.isArray(g)) {
      lo = Math.min(lo, g[0]);
      hi = Math.max(hi, g[1]);
    }
  }
  if (lo <= hi) return { kind: 'years', lo, hi };
  return adults ? { kind: 'adults' } : null;
}

/** An ages field that is an audience checklist ("Adults,Family,Pets,Senior"): the union of its groups. */
export function audienceField(field: string): AudienceGroups | null {
  return WHOLE_LIST.test(field) ? union(field) : null;
}

/** A labelled "Audience: …" (or "Age range: All Ages") list inside running text, as Trumba prints its fields into descriptions. */
export function audienceLabel(text: string): AudienceGroups | null {
  const m = LABELLED_LIST.exec(text);
  return m?.[1] === undefined ? null : union(m[1]);
}

// A minimum age of 18 or more, or the words for one: nobody writes these about a children's event.
const ADULT_AGE = String.raw`(?:1[89]|2[01])`;
const STRONG_ADULT: readonly RegExp[] = [
  new RegExp(String.raw`\b${ADULT_AGE}\s?\+(?!\s?(?:months?|mos|years?|yrs)\b)`),
  new RegExp(String.raw`\b${ADULT_AGE}\s(?:years?\s(?:old\s|of\sage\s)?)?(?:and|or|&)\s(?:up|over|older)\b`),
  new RegExp(String.raw`\bmust\sbe\s(?:at\sleast\s)?${ADULT_AGE}\b`),
  new RegExp(String.raw`\b(?:no\sone|nobody)\sunder\s${ADULT_AGE}\b`),
  /\bover\s21\b/,
  // "ages 18-25", "ages 30 and up": any stated age from 18 on.
  /\bages?\s(?:1[89]|[2-9]\d)\b(?!\s(?:months?|mos)\b)/,
  /\badults?[\s-]only\b/,
];

// Places and programs that are usually, not always, for grown-ups: they drop an event only when
// nothing in it speaks to children ("Family Day at the Brewery" stays).
const WEAK_ADULT_ANYWHERE =
  /\b(?:(?:beer|wine|cider|sake|whiske?y|bourbon|tequila|cocktails?)\s(?:gardens?|tastings?|pairings?|dinners?|flights?|crawls?)|wine\sbars?|happy\shours?|(?:pub|bar)\scrawls?|taprooms?|brewpubs?|speakeasy|(?:full|cash|no-?\s?host|hosted)\sbars?|bar\sopens|burlesque)\b/;
// In a title these name the venue or the program; in a description they are too often something
// else ("monkey bars", "salad bar", "Adults $10, kids $5").
const WEAK_ADULT_TITLE = /\b(?:bar|pub|tavern|saloon|brewery|brewing|winery|distillery)\b(?!\s(?:mitzvah|none)\b)|(?<!\byoung\s)\badults?\b/;
const WEAK_ADULT_DESCRIPTION = /\b(?:for|open\sto|designed\sfor|intended\sfor)\s(?:adults?|grown-?ups)\b(?!\s?(?:,|and\b|&|with\b|accompanied\b|\+\s?(?:kids|children)))/;

// Children or families named at all, which outweighs the weak signs above. Singular "kid" and "baby"
// are left out: band names and lyrics ("DJ Kid Hops", "it's a love story, baby").
const CHILD_WORDS =
  /\b(?:kids|children|child|parents?|caregivers?|famil(?:y|ies)|family-friendly|all[\s-]ages|youth|teens?|tweens?|toddlers?|babies|infants|preschool(?:ers)?|storytime|story\stime|grades?\s(?:k|\d))\b/;

/** 'strong': a stated minimum age of 18+ or "adults only"; 'weak': a bar-like place or program. */
export function adultSigns(field: string | null, title: string, description: string | null): { strong: 'head' | 'body' | null; weak: boolean } {
  const head = [field, title].filter((t): t is string => t != null);
  const strongIn = (t: string): boolean => STRONG_ADULT.some((re) => re.test(t));
  const strong = head.some(strongIn) ? 'head' : description !== null && strongIn(description) ? 'body' : null;
  const weak =
    WEAK_ADULT_TITLE.test(title) || [title, description].some((t) => t != null && WEAK_ADULT_ANYWHERE.test(t)) || (description !== null && WEAK_ADULT_DESCRIPTION.test(description));
  return { strong, weak };
}

/** Whether any of the texts addresses children or families at all. */
export function speaksToChildren(...texts: readonly (string | null)[]): boolean {
  return texts.some((t) => t != null && CHILD_WORDS.test(t));
}
