// Upstream categories and keywords → taxonomy slugs; whatever topical remains → tags.
// Matching is on folded whole words/phrases so "fair" never matches "fairy".
import { CATEGORY_SLUGS, type CategorySlug } from '../../core/taxonomy.ts';
import { plainText } from './text.ts';
import { memoize } from '../../core/memo.ts';
import { fold, slugify, words } from '../../core/text.ts';

// Workouts: sports and fitness, and the words that mark a sentence as a workout's (maskWorkouts).
const WORKOUTS = [
  'fitness',
  'hiit',
  'cardio',
  'aerobics',
  'jazzercise',
  'barre',
  'workout*',
  'exercise',
  'weight training',
  'strength training',
  'weightlifting',
] as const;

// Each phrase is matched as a whole-word sequence in the folded text; a trailing * allows any suffix.
const RULES: Readonly<Record<CategorySlug, readonly string[]>> = {
  // Never a bare "story": "The Moth StorySLAM" is adults telling stories, "LOVE STORY" a 21+ dance night.
  storytime: [
    'storytime*',
    'story time*',
    'story hour*',
    'toddler story',
    'toddler stories',
    'preschool story',
    'preschool stories',
    'baby story',
    'storywalk*',
    'story walk*',
    'read aloud',
    'read-aloud',
    'lapsit',
    'lap sit',
    'bilingual story*',
    'rhyme time*',
    'rhymetime*',
    'nursery rhyme*',
    'book babies',
    'picture book*',
    'read to a dog',
    'read to dogs',
    'read to a therapy dog',
    'paws to read',
    'hora de cuentos',
    'cuentacuentos',
    '故 事 会',
    '故 事 會',
    '故 事 时 间',
    '故 事 時 間',
    '说 故 事',
    '說 故 事',
  ],
  'arts-crafts': [
    'art',
    'arts',
    'craft*',
    'painting',
    'drawing',
    'collage',
    'maker*',
    'origami',
    'clay',
    'sculpt*',
    'diy',
    'pottery',
    'ceramic*',
    'wheel throwing',
    'printmaking',
  ],
  music: [
    'music*',
    'sing',
    'sings',
    'singing',
    'sing along*',
    'singalong*',
    'singer*',
    'song*',
    'concert*',
    'choir',
    'chorus',
    'ukulele',
    'drum*',
    'orchestra',
    'symphony',
    'philharmonic',
    'jam',
    'jam session*',
    'jazz',
    'blues',
    'bluegrass',
    'recital*',
    'pianist*',
    'piano*',
    'guitar*',
    'violin*',
    'cello*',
    'a cappella',
    'karaoke',
    'dj',
    'djs',
  ],
  dance: ['danc*', 'ballet', 'hip hop', 'folklorico', 'folklórico', 'zumba', 'bellydanc*', 'belly danc*'],
  // Not a bare "play": "Open Play" and "Play-based discovery" are play, not a stage play. Not
  // "performance": a recital, a fashion show and a tea ceremony are performances, and so is "high-performance" fabric.
  theater: [
    'theater',
    'theatre',
    'puppet*',
    'school play',
    'fall play',
    'spring play',
    'winter play',
    'family play',
    'stage play',
    'magic show',
    'magician',
    'circus',
    'improv',
    'shakespeare',
    'playwright*',
    'broadway',
    'a musical',
    'the musical',
    'musical theater',
    'musical theatre',
  ],
  film: ['film*', 'movie*', 'cinema', 'screening'],
  // Not a bare "code" ("Meeting number (access code)") or "space" ("Space is limited"); not
  // "experimental", a genre of music and film.
  stem: [
    'stem',
    'steam',
    'science',
    'scientist*',
    'coding',
    'code club',
    'learn to code',
    'hour of code',
    'robot*',
    'lego*',
    'engineer*',
    'math',
    'maths',
    'mathematics',
    'astronom*',
    'planetarium',
    'chemistry',
    'tech',
    'technology',
    'experiment',
    'experiments',
    'outer space',
    'space science',
    'space exploration',
    'telescope*',
    'fossil*',
    'microfossil*',
    'dinosaur*',
    'paleontolog*',
    'artificial intelligence',
    'machine learning',
    'hackathon*',
    'hack night*',
  ],
  'nature-outdoors': [
    'nature',
    'hike',
    'hikes',
    'hiking',
    'garden*',
    'outdoor*',
    'park walk',
    'tide pool*',
    'bird*',
    'trail',
    'trails',
    'naturalist',
    'creek',
    'beach',
    'earth day',
    'forest restoration',
    'habitat restoration',
    'restoration work party',
    'restoration event*',
    'tree planting',
    'trailhead*',
  ],
  // Not a bare "dog*": Dogpatch and Dogwood are places.
  animals: [
    'animal*',
    'zoo',
    'farm',
    'petting',
    'reptile*',
    'insect*',
    'bug',
    'bugs',
    'wildlife',
    'aquarium',
    'otter*',
    'penguin*',
    'goat',
    'goats',
    'dog',
    'dogs',
    'doggy',
    'doggie*',
    'puppy',
    'puppies',
    'cat',
    'cats',
    'kitten*',
    'butterfl*',
  ],
  // Not a bare "run": "all lanes will run" is a freeway, "run by volunteers" an organizer.
  'sports-fitness': [
    'sport*',
    'soccer',
    'basketball',
    'baseball',
    'softball',
    'volleyball',
    'pickleball',
    'hockey',
    'golf',
    'yoga',
    'pilates',
    'tai chi',
    'qigong',
    ...WORKOUTS,
    'swim*',
    'skate*',
    'bike',
    'biking',
    'tennis',
    'gymnastics',
    'martial arts',
    'karate',
    'climb*',
    'bouldering',
    'fun run*',
    'run club',
    'running club',
    'run walk',
    'kids run',
    'family run',
    '5k',
    '10k',
    'motorsport*',
    'speedway',
    'raceway',
    'drifting',
    'drift day',
    'drift school',
    'drift event*',
    '太 极',
    '太 極',
  ],
  'museums-exhibits': [
    'museum*',
    'exhibit',
    'exhibits',
    'exhibition*',
    'gallery',
    'galleries',
    'free day',
    'free admission day',
    'public tour*',
    'member tour*',
    'members tour*',
    'guided tour*',
    'docent*',
    'gallery tour*',
    'museum tour*',
    'exhibition tour*',
    'highlights tour*',
    'member preview*',
    'members preview*',
    'free first sunday',
    'free first monday',
    'free first tuesday',
    'free first wednesday',
    'free first thursday',
    'free first friday',
    'free first saturday',
  ],
  'classes-workshops': [
    'class',
    'classes',
    'workshop*',
    'lesson*',
    'tutoring',
    'homework help',
    'homework',
    'webinar*',
    'intro to',
    'introduction to',
    'basics of',
  ],
  playgroups: [
    'playgroup*',
    'play group*',
    'playtime',
    'play time',
    'open play',
    'baby play',
    'sensory play',
    'stay and play',
    'stay & play',
    'play and learn',
    'play learn',
  ],
  games: ['game*', 'gaming', 'chess', 'board game*', 'video game*', 'minecraft', 'trivia', 'puzzle*', 'pokemon', 'dungeons', 'scrabble', 'bingo', 'geoguessr'],
  // A camp as an event, never a place named Camp: "Camp Long Restoration Event" is a park work party.
  camps: [
    'camps',
    'day camp*',
    'summer camp*',
    'spring camp*',
    'spring break camp*',
    'winter camp*',
    'winter break camp*',
    'break camp*',
    'holiday camp*',
    'half day camp*',
    'full day camp*',
    'art camp*',
    'science camp*',
    'stem camp*',
    'nature camp*',
    'sports camp*',
    'soccer camp*',
    'scout camp*',
    'family camp*',
    'overnight camp*',
    'sleepaway camp*',
    'camp week',
    'campout*',
    'camp out',
  ],
  festivals: ['festival*', 'fest', 'fair', 'fairs', 'street fair*', 'carnival*', 'parade*', 'block party'],
  // Not a bare "santa": Santa Clara, Santa Cruz and Santa Rosa are Bay Area places. Not Earth Day,
  // which is what a park's work party or a recycling drive is for, not a holiday (see nature-outdoors).
  seasonal: [
    'halloween',
    'trick or treat*',
    'trick-or-treat*',
    'pumpkin*',
    'lunar new year',
    'chinese new year',
    'diwali',
    'hanukkah',
    'chanukah',
    'christmas',
    'santa claus',
    'with santa',
    'santa s',
    'santa visit*',
    'santa photo*',
    'holiday*',
    'thanksgiving',
    'friendsgiving',
    'easter',
    'egg hunt*',
    'winter wonderland',
    'dia de los muertos',
    'day of the dead',
    'kwanzaa',
    'valentine*',
    'galentine*',
    'fourth of july',
    '4th of july',
    'independence day',
    'gingerbread',
    'snow day',
    'menorah',
    'ramadan',
    'eid',
    'juneteenth',
    'mother s day',
    'father s day',
  ],
  community: ['community', 'volunteer*', 'meetup', 'social', 'library card', 'town hall', 'clean up', 'cleanup'],
};

// What a city calendar lists that is no outing for a family: civic business and road work. Read
// from the upstream labels ("Boards & Commissions", "Seattle City Council") and the title; such an
// event keeps no category at all, not even the "community" fallback, so that no category filter
// serves it (it stays in unfiltered results: the pipeline has no drop reason for non-events).
const NOT_FOR_FAMILIES: readonly string[] = [
  'city council',
  'council briefing',
  'council meeting*',
  'community council',
  'advisory council',
  'commission',
  'commissions',
  'commissioners',
  'committee',
  'advisory board',
  'board meeting*',
  'review panel',
  'public hearing*',
  'public meeting*',
  'design review',
  'closure',
  'closures',
  'lane closure*',
  'lane reduction*',
  'road work',
];

// The upstream's own type, where schema.org has one that says what the event is. ChildrensEvent and
// LiteraryEvent say who it is for or what it is about, not its kind; a cinema types its screenings
// VisualArtsEvent (majestic-bay) as a gallery does its openings, so that one decides nothing either.
// A Map, not an object: "constructor" is an upstream @type like any other.
const SCHEMA_TYPES: ReadonlyMap<string, CategorySlug> = new Map([
  ['MusicEvent', 'music'],
  ['ScreeningEvent', 'film'],
  ['TheaterEvent', 'theater'],
  ['ComedyEvent', 'theater'],
  ['DanceEvent', 'dance'],
  ['SportsEvent', 'sports-fitness'],
  ['ExhibitionEvent', 'museums-exhibits'],
  ['EducationEvent', 'classes-workshops'],
  ['Festival', 'festivals'],
]);

// Extra topical tags read from the text; they never change which categories match.
const TAG_RULES: Readonly<Record<string, readonly string[]>> = {
  bilingual: ['bilingual'],
  spanish: ['spanish', 'espanol', 'en espanol'],
  chinese: ['chinese', 'mandarin', 'cantonese'],
  'sensory-friendly': ['sensory friendly', 'sensory-friendly', 'autism friendly'],
  'stroller-friendly': ['stroller*'],
  'registration-required': ['registration required', 'register*', 'pre-registration', 'rsvp'],
  // Only statements that nothing needs booking: a bare "no registration" also begins
  // "Pre-Register: No Registration Details: To RSVP…" (seattle.gov's Trumba fields).
  'drop-in': [
    'drop in',
    'drop-in',
    'no registration required',
    'no registration is required',
    'no registration needed',
    'no registration is needed',
    'no rsvp is needed',
    'no rsvp needed',
  ],
  lego: ['lego*'],
  outdoor: ['outdoor*', 'outside'],
  // In a description "online" is mostly about something else ("register online", "online tickets",
  // a Neighborhoods list that includes "Online Event" for a story time at a branch library): only
  // phrases that say how the event itself is attended count there; the title is read in full below.
  virtual: ['virtual meeting', 'virtual session', 'online meeting', 'zoom meeting', 'via zoom', 'on zoom', 'webinar*'],
};

// Read from the title only, where "Virtual Storytime" or "Online: Homework Help" describe the event.
const TITLE_TAG_RULES: Readonly<Record<string, readonly string[]>> = {
  virtual: ['virtual', 'online', 'zoom', 'webinar*'],
};

interface Matcher {
  readonly key: string;
  readonly seq: readonly string[];
  readonly prefix: boolean;
}

function compileRules(rules: Readonly<Record<string, readonly string[]>>): Matcher[] {
  const out: Matcher[] = [];
  for (const [key, phrases] of Object.entries(rules)) {
    for (const phrase of phrases) {
      const prefix = phrase.endsWith('*');
      out.push({ key, seq: words(prefix ? phrase.slice(0, -1) : phrase), prefix });
    }
  }
  return out;
}

// Matchers indexed by the first three letters of their first word, so a token is only compared
// with the few phrases that could start at it. Every phrase's first word has at least three
// letters except exact short words, which are indexed whole.
type MatcherIndex = ReadonlyMap<string, readonly Matcher[]>;
const head = (w: string): string => w.slice(0, 3);

function indexMatchers(ms: readonly Matcher[]): MatcherIndex {
  const idx = new Map<string, Matcher[]>();
  for (const m of ms) {
    const k = head(m.seq[0]!);
    idx.set(k, [...(idx.get(k) ?? []), m]);
  }
  return idx;
}

/** The token an idiom (below) leaves behind: the category rules match it as a word of their own. */
const idiomToken = (key: string): string => `=${key}`;
const CATEGORY_MATCHERS = indexMatchers([...compileRules(RULES), ...CATEGORY_SLUGS.map((key) => ({ key, seq: [idiomToken(key)], prefix: false }))]);
const NOT_FOR_FAMILIES_MATCHERS = indexMatchers(compileRules({ none: NOT_FOR_FAMILIES }));
const TAG_MATCHERS = indexMatchers(compileRules(TAG_RULES));
const TITLE_TAG_MATCHERS = indexMatchers(compileRules(TITLE_TAG_RULES));

function matchesAt(tokens: readonly string[], i: number, m: Matcher): boolean {
  const n = m.seq.length;
  if (i + n > tokens.length) return false;
  for (let j = 0; j < n; j++) {
    const t = tokens[i + j]!;
    const w = m.seq[j]!;
    if (!(j === n - 1 && m.prefix ? t.startsWith(w) : t === w)) return false;
  }
  return true;
}

/** Each key's first match, as the number of words before it, in the order of first matches. */
function firstMatches(tokens: readonly string[], index: MatcherIndex): Map<string, number> {
  const hits = new Map<string, number>();
  let n = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const candidates = index.get(head(t));
    if (candidates) for (const m of candidates) if (!hits.has(m.key) && matchesAt(tokens, i, m)) hits.set(m.key, n);
    if (t !== CLAUSE && t !== FIELD) n++;
  }
  return hits;
}

function matchAll(tokens: readonly string[], index: MatcherIndex): Set<string> {
  const hits = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const candidates = index.get(head(tokens[i]!));
    if (candidates) for (const m of candidates) if (!hits.has(m.key) && matchesAt(tokens, i, m)) hits.add(m.key);
  }
  return hits;
}

// Tags are read clause by clause: a colon or question mark ends a field label, other punctuation a
// clause. Both become marker tokens, which no phrase matches, so a phrase never spans two clauses.
const FIELD = ':';
const CLAUSE = '.';
const CLAUSE_TOKENS = /[\p{L}\p{N}]+|[:?.;!,()[\]|•]/gu;

const clauseTokens = memoize((s: string): readonly string[] =>
  Object.freeze((fold(s).match(CLAUSE_TOKENS) ?? []).map((t) => (t === ':' || t === '?' ? FIELD : /^[\p{L}\p{N}]/u.test(t) ? t : CLAUSE))),
);

const NEGATORS: ReadonlySet<string> = new Set(['no', 'not', 'non', 'never', 'without']);
// What follows a phrase to deny it: "Registration not required", "RSVP optional", "Pre-Register: No".
const DENIALS: ReadonlySet<string> = new Set(['no', 'not', 'none', 'optional', 'unnecessary']);
const COPULAS: ReadonlySet<string> = new Set(['is', 'are', 'was', 'were']);

/**
 * Whether the phrase at tokens[i, i+n) is denied by its own clause: a negator up to three words before
 * it ("No RSVP is needed", "no need to register"), a denial right after it or after a copula
 * ("registration is not required"), or a field whose value is a denial ("Pre-Register: No").
 */
function negatedAt(tokens: readonly string[], i: number, n: number): boolean {
  for (let j = i - 1; j >= Math.max(0, i - 3); j--) {
    const t = tokens[j]!;
    if (t === FIELD || t === CLAUSE) break;
    if (NEGATORS.has(t)) return true;
  }
  const next = tokens[i + n];
  if (next === undefined) return false;
  if (next === FIELD) return DENIALS.has(tokens[i + n + 1] ?? '');
  if (COPULAS.has(next)) return DENIALS.has(tokens[i + n + 1] ?? '');
  return DENIALS.has(next);
}

/**
 * Tags the text asserts: a key matches when one of its phrases occurs, unless the text denies one
 * of them anywhere — a tag must never contradict the upstream's own words, and "Pre-Register: No"
 * outweighs a later "To RSVP, email…".
 */
function assertedTags(tokens: readonly string[], index: MatcherIndex): Set<string> {
  const said = new Set<string>();
  const denied = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const candidates = index.get(head(tokens[i]!));
    if (!candidates) continue;
    for (const m of candidates) {
      if (denied.has(m.key) || !matchesAt(tokens, i, m)) continue;
      if (negatedAt(tokens, i, m.seq.length)) denied.add(m.key);
      else said.add(m.key);
    }
  }
  for (const k of denied) said.delete(k);
  return said;
}

// ---------- What the text says the event is, not what it merely mentions ----------
// A category word counts only where it describes the event. Three kinds of mention do not, and are
// masked (their tokens become clause markers, which no phrase matches) before the rules run:
//  - exceptions and negations: "open daily except for holidays", "closed for the holiday", "due to
//    major holidays", "no class on Monday" (the rest of the clause after the cue);
//  - other senses of the word: "Class of 1995 reunion", "first class", "performing arts", "dog days";
//  - proper names and titles: a quoted title ("Holidays on Ice"), a run of capitalized words that
//    holds a word no rule and no everyday event word explains ("Palace of Fine Arts", "Dog Eyes",
//    "Lincoln High School Class"), a place after "at", a billing after "with" or "featuring".
// Capitalization is read in descriptions, where prose is in sentence case; a title is title-cased
// throughout, so there only the cues around a run (at, with, featuring) and the description's own
// names mark one. Specific holidays are names themselves ("Halloween", "Lunar New Year") and are
// never masked as names. compromise (on npm) tags proper nouns, but took ~3 ms per description
// here, against ~0.3 ms for all of classify, over a build of a million events, and still read
// "Dog" in "Dog Eyes" as a common noun: capitalization and these cues are what decide it.

interface Tok {
  /** Folded word, or FIELD / CLAUSE. */
  w: string;
  /** Capitalized as a name is: "Palace", not "PALACE" (shouting) or "palace". */
  readonly cap: boolean;
  /** First word of a sentence or field, whose capital says nothing. */
  readonly first: boolean;
  readonly quote: boolean;
  /** Index of its sentence. */
  readonly sent: number;
}

// "+" and "/" part a billing: "Dog Eyes + Sour Widows"; a spaced dash parts a title ("Artist - Tour").
const TOKEN = /[\p{L}\p{N}]+|["“”«»:?.;!,()[\]|•+/–—@]|(?<=\s)-(?=\s)/gu;
const QUOTES: ReadonlySet<string> = new Set(['"', '“', '”', '«', '»']);
// Where a sentence ends, for what is read sentence by sentence (a workout class).
const SENTENCE_ENDS: ReadonlySet<string> = new Set(['.', '?', '!', ';', ':', '|', '•']);
// Chinese writes no spaces between words: each Han character is a token, and a rule's Chinese
// phrase is written character by character ("故 事 会", a story time).
const HAN = /\p{Script=Han}/gu;
// Links name pages, not events: "…/free-educator-day-yellow-brick-road-film-festival" is no film
// festival, "…/veggie-start-sale-with-ravenna-gardens" no garden.
const LINKS = /\b(?:https?:\/\/|www\.)\S*|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/gi;
// "indoor/outdoor", "indoor and outdoor": the place has both; the event is not outdoors for it.
const BOTH_SIDES = /\bindoors?\s*(?:[-/&]|and|or)\s*outdoors?\b|\boutdoors?\s*(?:[-/&]|and|or)\s*indoors?\b/gi;

// In prose these are other words unless written in capitals: a flower's "stem", "full steam ahead".
const ACRONYMS: ReadonlySet<string> = new Set(['stem', 'steam']);

/** `prose`: sentence case, where capitals say something (a description, not a title). */
function tokenize(text: string, prose = false): Tok[] {
  const out: Tok[] = [];
  let first = true;
  let sent = 0;
  const clean = text.replace(LINKS, ' ').replace(BOTH_SIDES, ' indoor ').replace(HAN, ' $& ');
  for (const [raw] of clean
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .matchAll(TOKEN)) {
    if (QUOTES.has(raw)) {
      out.push({ w: CLAUSE, cap: false, first: false, quote: true, sent });
      continue;
    }
    if (raw === '@') {
      out.push({ w: AT, cap: false, first: false, quote: false, sent });
      continue;
    }
    if (!/^[\p{L}\p{N}]/u.test(raw)) {
      out.push({ w: raw === ':' || raw === '?' ? FIELD : CLAUSE, cap: false, first: false, quote: false, sent });
      first = raw !== ',' && raw !== '(' && raw !== ')';
      if (SENTENCE_ENDS.has(raw)) sent++;
      continue;
    }
    const lower = raw.toLowerCase();
    const cap = raw[0] !== lower[0] && (raw.length === 1 || raw.slice(1) !== raw.slice(1).toUpperCase() || /\d/.test(raw));
    out.push({ w: prose && ACRONYMS.has(lower) && raw !== raw.toUpperCase() ? CLAUSE : lower, cap, first, quote: false, sent });
    first = false;
  }
  return out;
}

/** "@": what follows is a place or an account ("Passion Pit @ Fox Theater - Oakland", "Director @ Guild.ai"). */
const AT = '@';

const mask = (toks: Tok[], from: number, to: number, keep?: ReadonlySet<number>): void => {
  for (let i = from; i < to; i++) if (!keep?.has(i)) toks[i]!.w = CLAUSE;
};

/** A quoted title: the words between a pair of quote marks (at most 12 words apart). */
function maskQuotes(toks: Tok[]): void {
  for (let i = 0; i < toks.length; i++) {
    if (!toks[i]!.quote) continue;
    const j = toks.findIndex((t, k) => k > i && t.quote);
    if (j > i && j - i <= 13) {
      mask(toks, i + 1, j);
      i = j;
    }
  }
}

// Cues after which the rest of the clause says when or why the event does not happen.
const EXCEPTIONS: ReadonlySet<string> = new Set([
  'except',
  'excluding',
  'excludes',
  'exclude',
  'closed',
  'closes',
  'closure',
  'closures',
  'no',
  'not',
  'without',
  'due',
  'because',
  'observed',
  'observance',
  'observing',
  'canceled',
  'cancelled',
  'postponed',
  'unless',
  'skip',
  'skipping',
]);

// A negative contraction is split at its apostrophe: "isn't" is "isn" "t", "don’t" is "don" "t".
const CONTRACTED: ReadonlySet<string> = new Set([
  'isn',
  'aren',
  'wasn',
  'weren',
  'don',
  'doesn',
  'didn',
  'can',
  'won',
  'shouldn',
  'wouldn',
  'couldn',
  'hasn',
  'haven',
  'hadn',
  'ain',
]);

/** What follows an "@" up to the end of its clause (at most 8 words) is a place or an account. */
function maskPlaces(toks: Tok[]): void {
  for (let i = 0; i < toks.length; i++) {
    if (toks[i]!.w !== AT) continue;
    let j = i + 1;
    while (j < toks.length && j <= i + 8 && toks[j]!.w !== CLAUSE && toks[j]!.w !== FIELD) j++;
    mask(toks, i, j);
    i = j;
  }
}

function maskExceptions(toks: Tok[]): void {
  for (let i = 0; i < toks.length; i++) {
    const w = toks[i]!.w;
    let from = i + 1;
    if (CONTRACTED.has(w) && toks[i + 1]?.w === 't') from = i + 2;
    else if (!EXCEPTIONS.has(w)) continue;
    let j = from;
    while (j < toks.length && j <= i + 8 && toks[j]!.w !== CLAUSE && toks[j]!.w !== FIELD) j++;
    mask(toks, from, j);
    i = j;
  }
}

// Other senses of a rule's word: the word is masked when the word before or after it is one of these.
const SENSES: ReadonlyMap<string, { readonly before?: ReadonlySet<string>; readonly after?: ReadonlySet<string> }> = new Map([
  [
    'class',
    {
      before: new Set(['first', 'world', 'high', 'middle', 'working', 'business', 'economy', 'upper', 'lower', 'graduating', 'senior']),
      after: new Set(['of', 'reunion', 'reunions', 'act', 'action', 'photo', 'photos', 'ring', 'rings']),
    },
  ],
  ['classes', { before: new Set(['social', 'working', 'middle', 'upper', 'lower']) }],
  ['arts', { before: new Set(['liberal', 'fine']) }],
  ['art', { before: new Set(['martial']) }],
  // "drawing on Roomful of Blues alumni", "drawing crowds": a verb.
  ['drawing', { after: new Set(['on', 'upon', 'together', 'inspiration', 'crowds', 'attention']) }],
  // "participants will experiment with different ways": a verb.
  ['experiment', { after: new Set(['with']) }],
  // "idea jam", "game jam", "traffic jam", "jam-packed".
  [
    'jam',
    { before: new Set(['idea', 'game', 'hack', 'code', 'coding', 'traffic', 'paper', 'strawberry', 'jelly']), after: new Set(['packed', 'jar', 'jars']) },
  ],
  ['dog', { before: new Set(['hot', 'corn', 'top']), after: new Set(['days']) }],
  ['dogs', { before: new Set(['hot', 'corn']) }],
  ['holiday', { after: new Set(['hours', 'schedule', 'closure', 'closures', 'closing', 'closings', 'observance', 'break', 'weekend', 'inn']) }],
  ['holidays', { after: new Set(['hours', 'schedule', 'closure', 'closures', 'closing', 'closings', 'observance', 'break', 'weekend']) }],
  ['fair', { before: new Set(['job', 'career', 'resource', 'college', 'housing']), after: new Set(['housing', 'trade', 'share', 'use', 'and']) }],
  ['game', { before: new Set(['end']), after: new Set(['changer', 'changing', 'plan']) }],
  ['bug', { before: new Set(['stomach', 'computer']) }],
]);

function maskSenses(toks: Tok[]): void {
  const said = toks.map((t) => t.w);
  for (let i = 0; i < toks.length; i++) {
    const sense = SENSES.get(said[i]!);
    if (sense && (sense.before?.has(said[i - 1] ?? '') || sense.after?.has(said[i + 1] ?? ''))) toks[i]!.w = CLAUSE;
  }
}

// Phrases whose words mean something else together: the phrase names its own category (or none),
// and its words count for no other. "Performing arts" is a stage, "martial arts" a sport, an "art
// museum" a museum; "state of the art", "science fiction", "craft beer" are no art, science or craft.
const IDIOMS: Readonly<Record<string, readonly string[]>> = {
  theater: ['performing arts'],
  'sports-fitness': ['martial arts'],
  'museums-exhibits': ['art museum*', 'museum of art', 'museum of fine arts', 'museum of modern art'],
  // "the ancient & mysterious art of belly dancing" is a skill, not art.
  none: ['art of', 'state of the art', 'science fiction', 'sci fi', 'craft beer*', 'craft brew*', 'craft cocktail*', 'craft spirits', 'craft distill*'],
};
const IDIOM_MATCHERS = indexMatchers(compileRules(IDIOMS));
function maskIdioms(toks: Tok[]): void {
  const ws = toks.map((t) => t.w);
  for (let i = 0; i < toks.length; i++) {
    for (const m of IDIOM_MATCHERS.get(head(ws[i]!)) ?? []) {
      if (!matchesAt(ws, i, m)) continue;
      mask(toks, i, i + m.seq.length);
      if (m.key !== 'none') toks[i]!.w = idiomToken(m.key);
      i += m.seq.length - 1;
      break;
    }
  }
}

// A workout is sports and fitness, not a class to learn in or a sculpture: in a sentence that names
// one ("Cardio Sculpt Dance Fitness Class", "This is a group exercise class"), "class" and "sculpt"
// are the workout's. An upstream "Classes" label still counts.
const WORKOUT = indexMatchers(
  compileRules({
    workout: [...WORKOUTS, 'zumba', 'bootcamp', 'yoga', 'pilates', 'tai chi'],
  }),
);
const WORKOUT_WORDS: ReadonlySet<string> = new Set(['class', 'classes', 'sculpt', 'sculpting']);

function maskWorkouts(toks: Tok[]): void {
  const ws = toks.map((t) => t.w);
  const workouts = new Set<number>();
  for (let i = 0; i < ws.length; i++) if ((WORKOUT.get(head(ws[i]!)) ?? []).some((m) => matchesAt(ws, i, m))) workouts.add(toks[i]!.sent);
  if (workouts.size > 0) for (const t of toks) if (workouts.has(t.sent) && WORKOUT_WORDS.has(t.w)) t.w = CLAUSE;
}

// Words that join the words of a name: "Palace of Fine Arts", "Holidays on Ice", "Santa Cruz and Monterey".
const CONNECTORS: ReadonlySet<string> = new Set(['of', 'on', 'the', 'and', 'de', 'del', 'la', 'el', 'los', 'for', 'in', 'y']);
// Capitalized words an event's own name or a heading is made of: they are no evidence of a name.
const EVERYDAY: ReadonlySet<string> = new Set([
  'family',
  'families',
  'kid',
  'kids',
  'child',
  'children',
  'childrens',
  'teen',
  'teens',
  'tween',
  'tweens',
  'toddler',
  'toddlers',
  'baby',
  'babies',
  'preschool',
  'preschooler',
  'preschoolers',
  'youth',
  'adult',
  'adults',
  'parent',
  'parents',
  'all',
  'ages',
  'free',
  'day',
  'days',
  'night',
  'nights',
  'party',
  'event',
  'events',
  'program',
  'programs',
  'club',
  'time',
  'fun',
  'open',
  'drop',
  'annual',
  'special',
  'celebration',
  'celebrate',
  'summer',
  'winter',
  'spring',
  'fall',
  'autumn',
  'weekend',
  'morning',
  'afternoon',
  'evening',
  'join',
  'us',
  'we',
  'our',
  'you',
  'your',
  'new',
  'first',
  'learn',
  'explore',
  'make',
  'create',
  'come',
  'bring',
  'let',
  's',
  'a',
  'an',
  'and',
  'at',
  'with',
  'for',
  'the',
  'this',
  'it',
  'in',
  'on',
  'to',
  'of',
  'is',
  'are',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
  'big',
  'little',
  'mini',
  'great',
  'grand',
  'happy',
  'welcome',
  'week',
  'month',
  'year',
  'series',
  'session',
  'sessions',
  'edition',
  'part',
  'live',
  'public',
  'library',
  'branch',
  'room',
  'center',
  'hall',
  'park',
]);

const WORD_INDEX = (() => {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const phrases of [...Object.values(RULES), ...Object.values(IDIOMS)]) {
    for (const phrase of phrases) {
      const ws = words(phrase.replace(/\*$/, ''));
      ws.forEach((w, k) => (phrase.endsWith('*') && k === ws.length - 1 ? prefixes.push(w) : exact.add(w)));
    }
  }
  return { exact, prefixes };
})();
const ruleWords = new Map<string, boolean>();
function isRuleWord(w: string): boolean {
  let hit = ruleWords.get(w);
  if (hit === undefined) {
    hit = WORD_INDEX.exact.has(w) || WORD_INDEX.prefixes.some((p) => w.startsWith(p));
    if (ruleWords.size < 50_000) ruleWords.set(w, hit);
  }
  return hit;
}

// Holidays are names themselves: "Halloween" and "Lunar New Year" in a name are still the holiday.
const HOLIDAY_NAMES = indexMatchers(compileRules({ holiday: RULES.seasonal.filter((p) => !p.startsWith('holiday')) }));

/**
 * The indices of the words of a name run: capitalized words (a connector between two of them
 * included) of which at least two are capitalized and one is neither a rule's word nor an
 * everyday event word. Returns [from, to) ranges.
 */
function nameRuns(toks: readonly Tok[], from = 0, to = toks.length, titled = false): [number, number][] {
  const runs: [number, number][] = [];
  let i = from;
  while (i < to) {
    const t = toks[i]!;
    if (!(t.cap || (titled && t.w !== CLAUSE && t.w !== FIELD && !CONNECTORS.has(t.w)))) {
      i++;
      continue;
    }
    let j = i + 1;
    let end = i + 1;
    while (j < to) {
      const u = toks[j]!;
      if (u.cap || (titled && u.w !== CLAUSE && u.w !== FIELD && !CONNECTORS.has(u.w))) end = ++j;
      else if (CONNECTORS.has(u.w)) j++;
      else break;
    }
    let capped = 0;
    let evidence = false;
    for (let k = i; k < end; k++) {
      const u = toks[k]!;
      if (u.w === CLAUSE || CONNECTORS.has(u.w)) continue;
      capped++;
      evidence ||= !u.first && !EVERYDAY.has(u.w) && !/^\d/.test(u.w) && !isRuleWord(u.w);
    }
    if (capped >= 2 && evidence) runs.push([i, end]);
    i = Math.max(end, i + 1);
  }
  return runs;
}

// What kind of event it is, as against what it is about (animals, nature, art, science, a holiday):
// an event's own name says its kind ("Solstice Parade Launch"), a band's or a book's ("Dog Eyes",
// "Holidays on Ice") only a topic.
const KINDS: readonly CategorySlug[] = [
  'storytime',
  'music',
  'dance',
  'theater',
  'film',
  'classes-workshops',
  'playgroups',
  'games',
  'camps',
  'festivals',
  'sports-fitness',
  'museums-exhibits',
];
const KIND_WORDS = indexMatchers(compileRules(Object.fromEntries(KINDS.map((k) => [k, RULES[k]]))));

/** Keeps the words of specific holidays (and, with `kinds`, of event kinds) inside [from, to). */
function holidayWords(toks: readonly Tok[], from: number, to: number, kinds = false): Set<number> {
  const keep = new Set<number>();
  const ws = toks.map((t) => t.w);
  for (let i = from; i < to; i++) {
    for (const idx of kinds ? [HOLIDAY_NAMES, KIND_WORDS] : [HOLIDAY_NAMES]) {
      for (const m of idx.get(head(ws[i]!)) ?? []) if (matchesAt(ws, i, m)) for (let k = 0; k < m.seq.length; k++) keep.add(i + k);
    }
  }
  return keep;
}

// Cues after which a title names a place ("at the Palace of Fine Arts") or a billing ("with Dog Eyes").
const PLACE_CUES: ReadonlySet<string> = new Set(['at']);
const BILLING_CUES: ReadonlySet<string> = new Set(['with', 'featuring', 'feat', 'ft', 'presents', 'presenting', 'starring', 'by', 'w']);

interface Read {
  readonly title: readonly string[];
  readonly description: readonly string[];
}

/** The title's and description's words with incidental mentions masked. */
// Words by which a description bills a name: "The Vera Project Presents Remember Sports".
const BILLS: readonly string[] = ['presents', 'presenting', 'featuring', 'starring'];

/** The title's and description's words with incidental mentions masked. */
function readText(title: string, description: string | null): Read {
  const d = description ? tokenize(description.slice(0, 2000), true) : [];
  const said = ` ${d.map((u) => u.w).join(' ')} `;
  maskPlaces(d);
  maskQuotes(d);
  const names: string[] = [];
  for (const [a, b] of nameRuns(d)) {
    // A description that opens with the event's name is a heading, not evidence that the title is a name.
    if (a > 0)
      names.push(
        d
          .slice(a, b)
          .map((t) => t.w)
          .join(' '),
      );
    mask(d, a, b, holidayWords(d, a, b));
  }
  maskExceptions(d);
  maskSenses(d);
  maskWorkouts(d);
  maskIdioms(d);

  const t = tokenize(title);
  maskPlaces(t);
  maskQuotes(t);
  // A title, or a part of a billing ("Dog Eyes + Sour Widows"), that the description writes as a name
  // or bills ("… Presents Baby Bugs") is a name: a band's, a book's, or the event's own. Its topic
  // words go ("Dog" in "Dog Eyes", "Bugs" in "Baby Bugs"); its words of an event's kind stay
  // ("Parade" in "Brazilian Showcase & Solstice Parade Launch").
  for (let i = 0; i < t.length;) {
    let j = i;
    while (j < t.length && t[j]!.w !== CLAUSE && t[j]!.w !== FIELD) j++;
    const part = t
      .slice(i, j)
      .map((u) => u.w)
      .join(' ');
    if (j > i && (names.includes(part) || BILLS.some((b) => said.includes(` ${b} ${part} `)))) mask(t, i, j, holidayWords(t, i, j, true));
    i = j + 1;
  }
  for (let i = 0; i < t.length; i++) {
    const cue = t[i]!.w;
    if (!PLACE_CUES.has(cue) && !BILLING_CUES.has(cue)) continue;
    let j = i + 1;
    while (j < t.length && t[j]!.w !== CLAUSE && t[j]!.w !== FIELD) j++;
    for (const [a, b] of nameRuns(t, i + 1, j, true)) if (a <= i + 2) mask(t, a, b, holidayWords(t, a, b));
  }
  maskExceptions(t);
  maskSenses(t);
  maskWorkouts(t);
  maskIdioms(t);
  return { title: t.map((u) => u.w), description: d.map((u) => u.w) };
}

const SLUG_SET: ReadonlySet<string> = new Set(CATEGORY_SLUGS);

// A book club's description is the book ("…learns giraffes are going extinct"), not the event.
const DISCUSSIONS = indexMatchers(
  compileRules({ discussion: ['book club*', 'book group*', 'book discussion*', 'book chat*', 'reading group*', 'readers circle'] }),
);

/**
 * A title that ends a clause on "Meeting" ("Pack Meeting: Cubmaster Challenge"), not "Meeting
 * Worlds: Jazz…", or that names a book discussion: its description is what it discusses.
 */
function namesMeeting(titleTokens: readonly string[]): boolean {
  return (
    titleTokens.some((t, i) => (t === 'meeting' || t === 'meetings') && [undefined, FIELD, CLAUSE].includes(titleTokens[i + 1])) ||
    matchAll(titleTokens, DISCUSSIONS).size > 0
  );
}

export interface Classified {
  readonly categories: CategorySlug[];
  readonly tags: string[];
}

/** What the event's source says about it besides its text. */
export interface ClassifyContext {
  /** Who runs it: a museum's tours, talks and openings are museum visits. */
  readonly organizer?: string | null;
  /** The upstream's page: its sections ("/movie/", "/cinema/in-theaters/") are the upstream's own categories. */
  readonly url?: string | null;
}

// Organizers whose programs are visits to a museum: "Seattle Art Museum", "Exploratorium",
// "Chabot Space & Science Center", "California Academy of Sciences", "Lawrence Hall of Science".
const MUSEUM_ORGANIZERS = indexMatchers(
  compileRules({ museum: ['museum*', 'exploratorium', 'science center', 'science centre', 'academy of sciences', 'hall of science'] }),
);
// What a museum's program is when its title says no more: a tour, a talk, an opening, an access day.
// Elsewhere a tour is a band's and a talk an author's at the library.
const MUSEUM_VISITS = indexMatchers(
  compileRules({
    'museums-exhibits': [
      'tour',
      'tours',
      'talk',
      'talks',
      'lecture*',
      'panel*',
      'discussion*',
      'conversation*',
      'curator*',
      'demonstration*',
      'open house',
      'opening',
      'openings',
      'preview*',
      'sensory friendly',
      'homeschool day*',
      'first thursday',
      'first friday',
      'first sunday',
    ],
  }),
);

const museumOrganizers = new Map<string, boolean>();
function isMuseum(organizer: string | null | undefined): boolean {
  if (!organizer) return false;
  let hit = museumOrganizers.get(organizer);
  if (hit === undefined) {
    hit = matchAll(words(organizer), MUSEUM_ORGANIZERS).size > 0;
    if (museumOrganizers.size < 10_000) museumOrganizers.set(organizer, hit);
  }
  return hit;
}

/**
 * The sections of an event page's address, its last segment (the event's own slug, made of its
 * title) left out: ["movie"] for https://www.central-cinema.com/movie/the-room, none for
 * …/event-calendar?eventid=…. Only short names are sections; a long slug is some title's.
 */
function urlSections(url: string | null | undefined): string[] {
  if (!url) return [];
  const path = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(url)?.[1] ?? '';
  const segments = path.split('/').filter((p) => p !== '');
  return segments.slice(0, -1).filter((p) => /\p{L}/u.test(p) && p.split(/[-_+.]+/).length <= 2);
}

/**
 * The upstream's own schema.org type and categories (and its page's sections) are trusted first
 * (each category is matched against the rules, or taken as-is when it is already a slug); the title
 * adds more; the description only fills in when nothing matched yet, because descriptions mention
 * everything ("bring a snack for the park walk"). Civic business and road work get no category;
 * anything else that matches nothing is `community`.
 */
export function classify(
  upstream: readonly string[],
  title: string,
  description: string | null,
  schemaTypes: readonly string[] = [],
  context: ClassifyContext = {},
): Classified {
  // Copies: the memoized arrays are shared by every occurrence of a program. The key holds what the
  // context says, not the context: every occurrence of a program has an address of its own.
  const c = classifyMemo(JSON.stringify([upstream, title, description, schemaTypes, urlSections(context.url), isMuseum(context.organizer)]));
  return { categories: [...c.categories], tags: [...c.tags] };
}

// A description says what the event is first and mentions everything else later ("…a chance to
// share what you're creating with other makers in the room", "a screening of their launch film").
// Where the title says nothing, the description's first FILL words say what the event is, or else
// the one category it names first. Where the title does say, the description adds nothing but
// holidays and fairs: "stories, songs and a simple craft" is how a storytime goes, not a concert
// and a craft class too (on the gold set, adding its first 15 words' categories cost 1.5 points of
// precision for 4 of recall, and changed 2,100 of the sample's records).
const FILL = 40;
const classifyMemo = memoize((key: string): Classified => {
  const [upstream, title, description, schemaTypes, sections, museum] = JSON.parse(key) as [string[], string, string | null, string[], string[], boolean];
  const cats = new Set<string>();
  const tags = new Set<string>();
  for (const t of schemaTypes) {
    const slug = SCHEMA_TYPES.get(t);
    if (slug) cats.add(slug);
  }
  const titleWords = words(title);
  let forFamilies = matchAll(titleWords, NOT_FOR_FAMILIES_MATCHERS).size === 0;
  for (const raw of upstream) {
    // Upstream labels are upstream text: "Boards &amp; Commissions" is "Boards & Commissions".
    const label = plainText(raw) ?? '';
    const slug = slugify(label);
    if (slug === '') continue;
    if (matchAll(words(label), NOT_FOR_FAMILIES_MATCHERS).size > 0) forFamilies = false;
    const hit = SLUG_SET.has(slug) ? new Set([slug]) : matchAll(words(label), CATEGORY_MATCHERS);
    if (hit.size === 0) tags.add(slug);
    for (const c of hit) cats.add(c);
  }
  // A site's "/community/" section is the site's, not a gathering (knco.com/community/community-calendar/).
  for (const section of sections) for (const c of matchAll(words(section), CATEGORY_MATCHERS)) if (c !== 'community') cats.add(c);
  const titleTokens = clauseTokens(title);
  const read = readText(title, description);
  for (const c of matchAll(read.title, CATEGORY_MATCHERS)) cats.add(c);
  // A meeting's description is its agenda ("Topic of Discussion: Fall Campout", "Meeting number
  // (access code)"): what it discusses, not what it is.
  const descWords = description && !namesMeeting(titleTokens) ? read.description : [];
  const first = firstMatches(descWords, CATEGORY_MATCHERS);
  if (cats.size === 0) {
    // A museum's description says "tours" or "talks" as its title would.
    if (museum) for (const [c, at] of firstMatches(descWords, MUSEUM_VISITS)) first.set(c, Math.min(at, first.get(c) ?? at));
    const early = [...first].filter(([, at]) => at < FILL).map(([c]) => c);
    const earliest = [...first]
      .sort((a, b) => a[1] - b[1])
      .slice(0, 1)
      .map(([c]) => c);
    for (const c of early.length > 0 ? early : earliest) cats.add(c);
  }
  // Holidays and fairs are plan-relevant (Community excludes them), so they are read from the
  // description too: a "Toddler Storytime" whose text says it is the Halloween special is seasonal.
  for (const c of first.keys()) if (c === 'seasonal' || c === 'festivals') cats.add(c);
  // A museum's tour, talk or opening is a museum visit, whatever its topic ("Dino Lecture" is also
  // science); a museum's class, camp or film is that.
  if (museum && matchAll(read.title, MUSEUM_VISITS).size > 0 && !KINDS.some((k) => k !== 'museums-exhibits' && cats.has(k))) cats.add('museums-exhibits');
  if (!forFamilies) cats.clear();
  else if (cats.size === 0) cats.add('community');
  const textTokens = [...titleTokens, CLAUSE, ...(description ? clauseTokens(description.slice(0, 2000)) : [])];
  const asserted = assertedTags(textTokens, TAG_MATCHERS);
  for (const t of assertedTags(titleTokens, TITLE_TAG_MATCHERS)) asserted.add(t);
  for (const t of asserted) tags.add(t);
  for (const c of cats) tags.delete(c);
  return {
    categories: CATEGORY_SLUGS.filter((s) => cats.has(s)),
    tags: [...tags].filter((t) => t.length <= 40).sort(),
  };
});

export { fold };
