// Who an event is for, when upstream says it in words rather than ages: audience checklists
// (Trumba's "Audience" custom field, schema.org audienceType) and the signs of an adults-only event.
// Works on folded text (see text.ts fold). Ages in numbers are ages.ts's.

/** What an audience list adds up to: all ages, a span of child years, or grown-ups only. */
export type AudienceGroups = { kind: 'all' } | { kind: 'years'; lo: number; hi: number } | { kind: 'adults' };

// Each checklist item is one group; Trumba's lists tick several ("Adults,Senior,Teen").
// 'neutral' items (pets, accessibility) say nothing about age and leave the rest to decide.
type Group = 'all' | 'adults' | 'neutral' | readonly [number, number];
const GROUPS: ReadonlyMap<string, Group> = new Map<string, Group>([
  ['all', 'all'],
  ['all ages', 'all'],
  ['everyone', 'all'],
  ['family', 'all'],
  ['families', 'all'],
  ['family friendly', 'all'],
  ['general public', 'all'],
  ['public', 'all'],
  ['children', [0, 12]],
  ['child', [0, 12]],
  ['kids', [0, 12]],
  ['youth', [5, 18]],
  ['infants', [0, 1]],
  ['babies', [0, 1]],
  ['toddlers', [1, 3]],
  ['preschoolers', [3, 5]],
  ['preschool', [3, 5]],
  ['tweens', [9, 12]],
  ['teen', [13, 18]],
  ['teens', [13, 18]],
  ['teenagers', [13, 18]],
  ['young adults', [13, 18]],
  ['adult', 'adults'],
  ['adults', 'adults'],
  ['senior', 'adults'],
  ['seniors', 'adults'],
  ['older adults', 'adults'],
  ['pets', 'neutral'],
  ['special needs', 'neutral'],
  ['people with disabilities', 'neutral'],
]);

// Longest names first, so "all ages" is not read as "all" followed by junk.
const GROUP = [...GROUPS.keys()]
  .sort((a, b) => b.length - a.length)
  .map((g) => g.replace(/ /g, String.raw`\s`))
  .join('|');
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

// Where an age stated in a text is not the audience of the event. Texts are folded.
const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
function sentenceAt(text: string, index: number): string {
  return segmenter.segment(text).containing(index)?.segment ?? text;
}
// A clause: what lies between commas, semicolons, slashes, bullets and sentence ends ("Adults $10, kids 6-12 $5").
const CLAUSE_BREAK = /[;|•·]|\s\/\s|,\s|\s[-–—]\s|[.!?](?:\s|$)/g;
function clauseAround(text: string, start: number, end: number): { before: string; after: string } {
  const from = Math.max(0, start - 50);
  let cut = 0;
  const head = text.slice(from, start);
  for (const m of head.matchAll(CLAUSE_BREAK)) cut = m.index + m[0].length;
  const tail = text.slice(end, end + 50);
  CLAUSE_BREAK.lastIndex = 0;
  const stop = tail.search(CLAUSE_BREAK);
  return { before: head.slice(cut), after: stop < 0 ? tail : tail.slice(0, stop) };
}

// A price for the group: "kids 12 and under free", "children under 2 are admitted free", "ages 3-12: $5",
// "$8 children 3-12", "free for kids under 5". A free or discounted group is a tier by itself; a
// lone price beside one group ("ages 6-12: $120") is the event's price unless the sentence prices
// another group too.
const FREE_AFTER = /^\s?\)?\s?(?:[:=–-]\s?)?(?:[\w']+\s){0,5}?(?:free\b|half[\s-]price|no\scharge|complimentary|discounted|at\sno\scost|\d+\s?%\soff)/;
const DOLLAR_AFTER = /^\s?\)?\s?(?:[:=–-]\s?)?(?:(?:are|is|pay|tickets?|admission|entry)\s){0,2}\$\s?\d/;
const PRICE = String.raw`\$\s?\d+(?:\.\d\d)?(?:\s?(?:\/|per|a|each)\s?(?:ticket|person|child|kid|head|adult|student))?`;
const DOLLAR_BEFORE = new RegExp(String.raw`${PRICE}\s(?:(?!for\b)[\w&]+\s){0,3}\(?$`);
const DOLLAR_FOR_BEFORE = new RegExp(String.raw`${PRICE}\sfor\s(?:[\w&]+\s){0,3}\(?$`);
const FREE_FOR_BEFORE = /\bfree\s(?:(?:admission|entry|tickets?|of\scharge)\s)?(?:for\s)?(?:[\w&]+\s){0,2}\(?$/;
const ADDRESSED_BEFORE = /\b(?:for|open\sto|designed\sfor|intended\sfor)\s(?:[\w-]+\s){0,2}\(?$/;
const OTHER_TIER = /\badults?\b|\bseniors?\b|\bgeneral\b|\bmembers?\b|\bstudents?\b|\$\s?\d[^$]*\$\s?\d/;
// Performers and casts ("young actors ages 11-20", "performed by students ages 8-14"), unless the
// text invites them ("open to musicians 18 and under").
const PERFORMER =
  /\b(?:perform(?:ed|s|ing)?\sby|performances?\sby|featur(?:es|ing)|starring|presented\sby|(?:works?|art(?:work)?|pieces|projects|films?|written|created|made|painted|drawn|led|hosted|taught)\sby|cast|casts|actors?|performers?|dancers|singers|musicians|choir|chorus|orchestra|ensemble|band|troupe|company\sof|students\sof|alumni)\b/g;
const ADDRESSED_AFTER = /\b(?:for|open\sto|calling\sall|welcom\w*|invit\w*)\b/;
const INVITED = /\b(?:for|open\sto|calling\sall|seeking|welcom\w*|invit\w*|attention|all)\s(?:[\w-]+\s){0,2}$/;
// Another program of the organizer ("Our conservatory trains actors ages 11-20", "enrollment for our
// camps, ages 5-12"), unless the event is such a program itself.
const OTHER_PROGRAM =
  /\b(?:conservatory|academy|alumni|auditions?|year-round|after-?school|scholarships?|trains|training|(?:our|other|upcoming)\s(?:[\w-]+\s){0,2}(program|class|camp|course|session|workshop|offering)e?s)\b/;
const PROGRAM_TITLE = /\b(?:camps?|class(?:es)?|courses?|workshops?|auditions?|academy|conservatory|training|lessons?|clinics?|programs?|sessions?)\b/;
// The event is such a program itself when the text calls it one elsewhere ("camp participants will …").
function otherProgram(text: string, start: number, end: number, title: string): boolean {
  const sentence = sentenceAt(text, start);
  const at = text.indexOf(sentence);
  // Sentences run long where a feed drops the space after a period: only what is near the age counts.
  const near = at < 0 ? sentence : text.slice(Math.max(at, start - 150), Math.min(at + sentence.length, end + 150));
  const m = OTHER_PROGRAM.exec(near);
  if (m === null || PROGRAM_TITLE.test(title)) return false;
  if (/\b(?:this|the)\s(?:[\w-]+\s)?(?:class|course|training|program|camp|workshop|session)\b/.test(near)) return false;
  const kind = m[1];
  return kind === undefined || !new RegExp(String.raw`\b${kind}\b(?!e?s\b)`).test(text.replace(m[0], ' '));
}
// A rule of entry for some of the audience ("children under 12 must be accompanied by an adult").
const ENTRY_RULE = /^\s?\)?\s?(?:must|need\sto|needs\sto|should|require|requires|are\srequired)\b/;
const PARENTS_OF = /\bparents?\s(?:and\scaregivers\s)?of\s(?:[\w-]+\s){0,3}\(?$/;

/**
 * Whether the age phrase at text[start, end) is not the audience: a price tier, performers, parents'
 * children, or another program. `openLow`: the phrase is an "N and under" kind of span.
 */
export function notTheAudience(text: string, start: number, end: number, title: string, openLow: boolean): boolean {
  const { before, after } = clauseAround(text, start, end);
  // "for ages 3-5, always free" prices the event; "kids under 5 are free" a group.
  const addressed = ADDRESSED_BEFORE.test(before) || text.startsWith('for ', start);
  if ((FREE_AFTER.test(after) && !addressed) || (openLow && FREE_FOR_BEFORE.test(before))) return true;
  if (DOLLAR_BEFORE.test(before)) return true;
  if ((DOLLAR_AFTER.test(after) || DOLLAR_FOR_BEFORE.test(before)) && OTHER_TIER.test(sentenceAt(text, start).replace(text.slice(start, end), ' ')))
    return true;
  if (PARENTS_OF.test(before) || ENTRY_RULE.test(after)) return true;
  for (const m of before.matchAll(PERFORMER)) {
    // "led by a librarian for ages 3-5": the age is addressed after the performer is named.
    if (!addressed && !INVITED.test(before.slice(0, m.index)) && !ADDRESSED_AFTER.test(before.slice(m.index + m[0].length))) return true;
  }
  return otherProgram(text, start, end, title);
}

// A minimum age of 18 or more, or the words for one: nobody writes these about a children's event.
// Number words are numerals by now (ages.ts). "20" is left out where it is too often a count ("over 20 artists").
const ADULT_AGE = String.raw`(?:1[89]|2[01])`;
// Standing alone, the number is no price or decimal ("$21+ per person").
const ADULT_AGE_ALONE = String.raw`(?<![$\d.])${ADULT_AGE}`;
const STRONG_ADULT: readonly RegExp[] = [
  new RegExp(String.raw`\b${ADULT_AGE_ALONE}\s?\+(?!\s?(?:months?|mos|years?|yrs)\b)`, 'g'),
  new RegExp(
    String.raw`\b${ADULT_AGE_ALONE}\s?(?:years?\s?(?:old\s?|of\sage\s?)?)?(?:-?(?:and|or|&)-?|-|\/)\s?(?:up|over|older|above|plus)\b(?!\s(?:of|in|years?)\b)`,
    'g',
  ),
  new RegExp(String.raw`\bmust\sbe\s(?:at\sleast\s|over\s|aged?\s)?${ADULT_AGE}\b`, 'g'),
  new RegExp(String.raw`\b(?:no\sone|nobody|none|no\sminors)\sunder\s(?:the\sage\sof\s)?${ADULT_AGE}\b`, 'g'),
  /\b(?:over|above|at\sleast)\s(?:the\sage\sof\s)?(?:1[89]|21)\b(?!\s?(?:months?|mos|[-–]|and\sunder)\b)/g,
  // "ages 18-25", "ages 30 and up", "age 18 and above": any stated age from 18 on, not "age 18 and under".
  /\bages?\s(?:1[89]|[2-9]\d)\b(?!\s(?:months?|mos)\b|\s?(?:and|&|or|-)\s?(?:under|younger|below)\b)/g,
  /\b(?:age\s(?:restriction|requirement|limit|minimum)s?|minimum\sage)\s?(?:is\s|of\s)?:?\s?(?:1[89]|2[01])\b/g,
  /\badults?[\s-]only\b|\bno\sminors\b|\bminors\s(?:are\s)?not\s(?:permitted|allowed|admitted)\b|\b(?:legal\s)?drinking\sage\b|\bof\slegal\sage\b/g,
  new RegExp(
    String.raw`\b(?:under|younger\sthan)\s${ADULT_AGE}\s(?:(?:will|are|is)\s)?(?:not|never|cannot|can't)\s(?:be\s)?(?:admitted|allowed|permitted)`,
    'g',
  ),
  // Spanish ("solo para adultos", "mayores de 18 años") and Chinese ("18歲以上", "僅限成人").
  /\b(?:solo|solamente|exclusivo)\s(?:para\s)?adultos\b|\bmayores\sde\s(?:1[89]|2[01])\b/g,
  /(?<![$\d.])(?:1[89]|2[01])\s?(?:岁|歲|周岁|週歲)或?以上|(?:仅限|僅限|只限)成人|成人(?:专场|專場|限定)/g,
];
// Minors may come with a grown-up: then the age is a rule of entry, not an adults' event.
const ACCOMPANIED =
  /\b(?:unless\s|if\s|when\s|must\sbe\s|are\s|is\s)?accompanied\sby\b|\bwith\sa\s(?:parent|guardian|grown-?up|adult)\b|\bguardians?\b|\bchaperon\w*|\bparental\s(?:consent|permission)|\bpermission\sslip/;
// Nudity: a life-drawing session "from a nude model", whatever else the text says.
const NUDITY =
  /\bnud(?:e|es|ity)\b(?!\s(?:colou?r|tone|lip|heel|shade|palette|pump|descending))|\b(?:figure|life)\s(?:drawing\s)?models?\b|\bclothing[\s-]optional\b|\bnaked\s(?:models?|figures?|bike|yoga|swim)/;

function strongIn(text: string): boolean {
  for (const re of STRONG_ADULT) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const { before, after } = clauseAround(text, m.index, m.index + m[0].length);
      // "Adults (18+): $15, children $5" prices a tier; it does not close the door to children.
      if (DOLLAR_AFTER.test(after) || DOLLAR_BEFORE.test(before) || FREE_AFTER.test(after)) continue;
      if (ACCOMPANIED.test(sentenceAt(text, m.index))) continue;
      return true;
    }
  }
  return false;
}

// Places and programs that are usually, not always, for grown-ups: they drop an event only when
// nothing in it speaks to children ("Family Day at the Brewery" stays).
// Drinks that are always alcohol; cider, sake or a brew also name fresh-pressed juice, a brand or coffee.
const DRINK = String.raw`beer|wine|whiske?y|bourbon|tequila|mezcal|cocktails?|spirits|vino|martinis?|margaritas?|mimosas?|sangria|booze|pints`;
const WEAK_ADULT_ANYWHERE = new RegExp(
  String.raw`\b(?:(?<!\b(?:root|ginger)\s)(?:${DRINK})\s(?:(?:&|and)\s\w+\s)?(?:gardens?|tastings?|pairings?|dinners?|flights?|crawls?|nights?|walks?|fest(?:ival)?s?|socials?|class(?:es)?|workshops?|making|bars?|hours?|specials|lounges?|tours?|mixers?|seminars?|clubs?)|` +
    String.raw`(?:cider|sake|brews?|ales?|champagne)\s(?:gardens?|tastings?|pairings?|flights?|crawls?|bars?|hours?)|` +
    String.raw`(?:books|trivia|bingo|yoga|paint|art|board\sgames|comedy)\s(?:&|and|n)\s(?:${DRINK}|brews)|(?:${DRINK}|brews)\s(?:&|and|n)\s(?:books|trivia|bingo|yoga|art|games|bites|cheese)|` +
    String.raw`sip\s(?:&|and|n)\s(?:paint|stroke|draw|craft|create|savor)|paint\s(?:&|and|n)\ssip|drink\s(?:&|and|n)\sdraw|happy\shours?|craft\sbeers?|open\sbar|drink\s(?:specials|minimum)|bottomless|` +
    String.raw`(?:pub|bar)\s(?:crawls?|quiz|trivia|hops?|hopping)|taprooms?|brewpubs?|speakeasy|tasting\sroom|(?:full|cash|no-?\s?host|hosted)\sbars?|bar\s(?:opens|will\sbe\sopen)|burlesque|` +
    String.raw`night\s?clubs?|club\snights?|dance\sclub|(?:hookah|piano|ultra|vip|rooftop|sky)\slounges?|lounge\s(?:nights?|party|parties|series)|bottle\sservice|` +
    String.raw`after[\s-]?part(?:y|ies)|` +
    // Training for a profession: teachers' in-service days, continuing-education credit.
    String.raw`professional\sdevelopment|(?:teachers?|educators?)(?:'s?|’s?)?\s(?:workshops?|trainings?|institutes?|in-?services?|seminars?|certification)|continuing\seducation\s(?:credits?|units?|hours?)|clock\shours|ceus)\b`,
);
// In a title: a venue that serves drink. A bar word counts where it names the place ("at Murphy's
// Pub", "Russell's Tavern 12th Anniversary", "Trivia at the Lounge"), not as the first word of a
// name ("Pub Choir", "Bar Method") or beside another noun ("at Monkey Bar Gym").
const TITLE_PLACE = /\b(?:brewery|breweries|brewing|winery|wineries|distillery|beer\shall|biergarten|cocktail\sbar|wine\sbar)\b/;
const TITLE_GROWNUPS =
  /(?<!\byoung\s)\badults?\b|\bseniors\b|\bolder\sadults\b|\badultos\b|\bpersonas\smayores\b|\btercera\sedad\b|樂齡|乐龄|長者|长者|長輩|长辈|銀髮|银发|耆英|老年人|成人/;
// A drink named in a title is what the event is about ("Women, Wheels and Wine Ride", "IPA Release
// Party"), unless it is no drink ("root beer", "ginger beer") or a region ("wine country").
const TITLE_DRINK =
  /(?<!\b(?:root|ginger|butter)\s)\b(?:beers?|wines?|whiske?y|bourbon|tequila|mezcal|cocktails?|martinis?|margaritas?|mimosas?|sangria|booze|pints|ipas?|champagne|prosecco|tap\stakeovers?)\b(?!\scountry\b)/;
const BAR_WORD = /\b(?:bar|pub|tavern|saloon|lounge|cantina)\b(?!\s(?:mitzvah|none)\b)/g;
const POSSESSIVE_BEFORE = /(?:'s|s'|’s)\s$/;
const AT_BEFORE = /(?:^|\s)(?:at|@)\s(?:[\w'’&.-]+\s){0,3}$/;
const PLACE_END = /^(?:\s?$|\s?[-–—:|,(!)@]|\s(?:at|in|on)\s|\s(?:(?:and|&)\s(?:grill|kitchen|restaurant|lounge|bar)|presents|anniversary|\d))/;
function barPlaceInTitle(title: string): boolean {
  for (const m of title.matchAll(BAR_WORD)) {
    const before = title.slice(0, m.index);
    const after = title.slice(m.index + m[0].length);
    if (POSSESSIVE_BEFORE.test(before)) return true;
    if (PLACE_END.test(after) && (AT_BEFORE.test(before) || before.trim() !== '')) return true;
  }
  return false;
}
// The event's location names a place that serves drink. Not a bare "bar" ("Monkey Bar Gym", "Sand
// Bar Beach") nor "lounge" (a library's teen lounge).
const DRINKING_PLACE =
  /\b(?:pub|tavern|saloon|taproom|tap\sroom|tap\shouse|taphouse|brewery|breweries|brewing|brewpub|brews|winery|wineries|distillery|beer\shall|beer\sgarden|biergarten|night\s?club|cantina|(?:wine|cocktail|sports|dive|tiki|piano)\sbar|bar\s(?:&|and)\sgrill)\b/;
// In a description bar words are too often something else ("monkey bars", "salad bar", "Adults $10, kids $5").
// Spanish and Chinese programs for grown-ups: "para adultos mayores", 樂齡/乐龄 (seniors), 長者 (elders); not
// "abierto a todos, … se recomienda a las personas de la tercera edad" (open to all, elders encouraged).
const WEAK_ADULT_DESCRIPTION =
  /\b(?:for|open\sto|designed\sfor|intended\sfor)\s(?:adults?|grown-?ups|seniors|older\sadults)\b(?!\s?(?:,|and\b|&|with\b|accompanied\b|\+\s?(?:kids|children)))|\bolder\sadults\b|\badult\s(?:learners|students|participants|education)\b|^(?:adults|seniors|grown-?ups),?\s(?:join|come|learn|are\sinvited)\b|\bpara\s(?:(?:los|las)\s)?(?:adultos(?:\smayores)?|personas\s(?:mayores|de\sla\stercera\sedad)|mayores)\b|樂齡|乐龄|長者|长者|長輩|长辈|銀髮族|银发族|耆英|老年人/;

// Children or families named at all, which outweighs the weak signs above. Singular "kid" and "baby"
// are left out: band names and lyrics ("DJ Kid Hops", "it's a love story, baby").
// Cartoons and puppet shows are children's fare ("Cartoon Happy Hour" at a cinema). "Adults of all
// ages" speaks to grown-ups only. Spanish and Chinese (兒童 children, 親子 parent-child, 故事 stories).
const CHILD_WORDS =
  /\b(?:kids|children|child|parents?|caregivers?|famil(?:y|ies)|family-friendly|kid-friendly|(?<!\b(?:adults?|grown-?ups|seniors)\sof\s)all[\s-]ages|youth|teens?|tweens?|toddlers?|babies|infants|preschool(?:ers)?|storytime|story\stime|grades?\s(?:k|tk|\d)|graders?|kindergarten\w*|little\sones|youngsters|kiddos|cartoons?|puppets?|puppetry|ninos|ninas|familias?|cuentos|bebes|jovenes|adolescentes|infantil(?:es)?)\b|兒童|儿童|孩子|小朋友|親子|亲子|家庭|青少年|幼兒|幼儿|嬰|婴|學生|学生|故事/;

// What an event is, when it is no drinking event wherever it is held: a market, a sale, an
// adoption meet, a drive, a clean-up ("Veggie Start Sale", "Adoptable Dog Meet-n-Greet" at a brewery).
const NOT_A_DRINKING_EVENT =
  /\b(?:markets?|marketplace|sales?|fair|bazaar|flea|swap|rummage|adopt\w*|meet[\s-]?(?:n|and|&)?[\s-]?greet|(?:blood|food|toy|coat|book|clothing)\sdrive|clean[\s-]?up|pumpkin\spatch|egg\shunt|vaccin\w*|clinic)\b/;
// What makes a morning event at a taproom a drinking one after all.
const DRINKING_WORDS = /\b(?:night|evening|after\s(?:dark|hours)|happy\shours?|trivia|brunch|bottomless|tasting|tap|pints?|release|party)\b/;

/**
 * Whether the place names a taproom, pub or winery that makes this event a drinking one: not a
 * market, sale or adoption meet there before the evening, nor a morning there that names no drink
 * or night (`startHour`: the local hour it starts, null when unknown).
 */
function drinkingPlace(title: string, place: string | null, startHour: number | null): boolean {
  const atBar = TITLE_PLACE.test(title) || barPlaceInTitle(title) || (place !== null && DRINKING_PLACE.test(place));
  if (!atBar) return false;
  // Before 7 a time is more often an evening written without "pm" ("05:30-07:30") than a dawn event.
  const beforeEvening = startHour === null || (startHour >= 7 && startHour < 17);
  if (beforeEvening && NOT_A_DRINKING_EVENT.test(title)) return false;
  return !(startHour !== null && startHour >= 7 && startHour < 12 && !DRINKING_WORDS.test(title));
}

/**
 * 'strong': a stated minimum age of 18+ or "adults only" ('head' in the field or title, or nudity
 * anywhere: decisive; 'body' in the description); 'weak': a bar-like place or program.
 */
export function adultSigns(
  field: string | null,
  title: string,
  description: string | null,
  place: string | null = null,
  startHour: number | null = null,
): { strong: 'head' | 'body' | null; weak: boolean } {
  const head = [field, title].filter((t): t is string => t != null);
  const nude = [...head, description].some((t) => t != null && NUDITY.test(t));
  const strong = nude || head.some(strongIn) ? 'head' : description !== null && strongIn(description) ? 'body' : null;
  const weak =
    TITLE_GROWNUPS.test(title) ||
    TITLE_DRINK.test(title) ||
    drinkingPlace(title, place, startHour) ||
    [title, description].some((t) => t != null && WEAK_ADULT_ANYWHERE.test(t)) ||
    (description !== null && WEAK_ADULT_DESCRIPTION.test(description));
  return { strong, weak };
}

/** Whether any of the texts addresses children or families at all. */
export function speaksToChildren(...texts: readonly (string | null)[]): boolean {
  return texts.some((t) => t != null && CHILD_WORDS.test(t));
}
