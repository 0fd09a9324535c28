// Upstream categories and keywords → taxonomy slugs; whatever topical remains → tags.
// Matching is on folded whole words/phrases so "fair" never matches "fairy".
import { CATEGORY_SLUGS, type CategorySlug } from '../taxonomy.ts';
import { memoize } from './memo.ts';
import { fold, plainText, slugify, words } from './text.ts';

// Each phrase is matched as a whole-word sequence in the folded text; a trailing * allows any suffix.
const RULES: Readonly<Record<CategorySlug, readonly string[]>> = {
  // Never a bare "story": "The Moth StorySLAM" is adults telling stories, "LOVE STORY" a 21+ dance night.
  storytime: ['storytime*', 'story time*', 'story hour*', 'toddler story', 'toddler stories', 'preschool story', 'preschool stories', 'baby story', 'storywalk*', 'story walk*', 'read aloud', 'read-aloud', 'lapsit', 'lap sit', 'bilingual story*', 'rhyme time*', 'rhymetime*', 'nursery rhyme*', 'book babies', 'picture book*'],
  'arts-crafts': ['art', 'arts', 'craft*', 'painting', 'drawing', 'collage', 'maker*', 'origami', 'clay', 'sculpt*', 'diy'],
  music: ['music*', 'sing', 'sings', 'singing', 'sing along*', 'singalong*', 'singer*', 'song*', 'concert*', 'choir', 'ukulele', 'drum*', 'orchestra', 'symphony', 'jam', 'jazz'],
  dance: ['danc*', 'ballet', 'hip hop', 'folklorico', 'folklórico', 'zumba'],
  // Not a bare "play": "Open Play" and "Play-based discovery" are play, not a stage play.
  theater: ['theater', 'theatre', 'puppet*', 'school play', 'fall play', 'spring play', 'winter play', 'family play', 'magic show', 'magician', 'circus', 'improv', 'performance*', 'shakespeare'],
  film: ['film*', 'movie*', 'cinema', 'screening'],
  // Not a bare "code" ("Meeting number (access code)") or "space" ("Space is limited").
  stem: ['stem', 'steam', 'science', 'scientist*', 'coding', 'code club', 'learn to code', 'hour of code', 'robot*', 'lego*', 'engineer*', 'math', 'maths', 'mathematics', 'astronom*', 'planetarium', 'chemistry', 'tech', 'technology', 'experiment*', 'outer space', 'space science', 'space exploration', 'telescope*'],
  'nature-outdoors': ['nature', 'hike', 'hikes', 'hiking', 'garden*', 'outdoor*', 'park walk', 'tide pool*', 'bird*', 'trail*', 'naturalist', 'creek', 'beach'],
  animals: ['animal*', 'zoo', 'farm', 'petting', 'reptile*', 'insect*', 'bug*', 'wildlife', 'aquarium', 'otter*', 'penguin*', 'goat*', 'dog*'],
  // Not a bare "run": "all lanes will run" is a freeway, "run by volunteers" an organizer.
  'sports-fitness': ['sport*', 'soccer', 'basketball', 'yoga', 'fitness', 'swim*', 'skate*', 'bike', 'biking', 'tennis', 'gymnastics', 'martial arts', 'climb*', 'fun run*', 'run club', 'running club', 'run walk', 'kids run', 'family run', '5k', '10k'],
  'museums-exhibits': ['museum*', 'exhibit*', 'exhibition*', 'gallery', 'galleries', 'free day', 'free admission day'],
  'classes-workshops': ['class', 'classes', 'workshop*', 'lesson*', 'tutoring', 'homework help', 'homework'],
  playgroups: ['playgroup*', 'play group*', 'playtime', 'play time', 'open play', 'baby play', 'sensory play', 'stay and play', 'stay & play'],
  games: ['game*', 'gaming', 'chess', 'board game*', 'video game*', 'minecraft', 'trivia', 'puzzle*', 'pokemon', 'dungeons'],
  // A camp as an event, never a place named Camp: "Camp Long Restoration Event" is a park work party.
  camps: ['camps', 'day camp*', 'summer camp*', 'spring camp*', 'spring break camp*', 'winter camp*', 'winter break camp*', 'break camp*', 'holiday camp*', 'half day camp*', 'full day camp*', 'art camp*', 'science camp*', 'stem camp*', 'nature camp*', 'sports camp*', 'soccer camp*', 'scout camp*', 'family camp*', 'overnight camp*', 'sleepaway camp*', 'camp week', 'campout*', 'camp out'],
  festivals: ['festival*', 'fest', 'fair', 'fairs', 'street fair*', 'carnival*', 'parade*', 'block party'],
  // Not a bare "santa": Santa Clara, Santa Cruz and Santa Rosa are Bay Area places.
  seasonal: ['halloween', 'trick or treat*', 'trick-or-treat*', 'pumpkin*', 'lunar new year', 'chinese new year', 'diwali', 'hanukkah', 'chanukah', 'christmas', 'santa claus', 'with santa', 'santa s', 'santa visit*', 'santa photo*', 'holiday*', 'thanksgiving', 'easter', 'egg hunt*', 'winter wonderland', 'dia de los muertos', 'day of the dead', 'kwanzaa', 'valentine*', 'fourth of july', '4th of july', 'independence day', 'gingerbread', 'snow day', 'menorah', 'ramadan', 'eid', 'juneteenth', 'earth day', 'mother s day', 'father s day'],
  community: ['community', 'volunteer*', 'meetup', 'social', 'library card', 'town hall', 'clean up', 'cleanup'],
};

// What a city calendar lists that is no outing for a family: civic business and road work. Read
// from the upstream labels ("Boards & Commissions", "Seattle City Council") and the title; such an
// event keeps no category at all, not even the "community" fallback, so that no category filter
// serves it (it stays in unfiltered results: the pipeline has no drop reason for non-events).
const NOT_FOR_FAMILIES: readonly string[] = [
  'city council', 'council briefing', 'council meeting*', 'community council', 'advisory council',
  'commission', 'commissions', 'commissioners', 'committee', 'advisory board', 'board meeting*', 'review panel',
  'public hearing*', 'public meeting*', 'design review', 'closure', 'closures', 'lane closure*', 'lane reduction*', 'road work',
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
  'drop-in': ['drop in', 'drop-in', 'no registration required', 'no registration is required', 'no registration needed', 'no registration is needed', 'no rsvp is needed', 'no rsvp needed'],
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

const CATEGORY_MATCHERS = indexMatchers(compileRules(RULES));
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

const SLUG_SET: ReadonlySet<string> = new Set(CATEGORY_SLUGS);

/** A title that ends a clause on "Meeting" ("Pack Meeting: Cubmaster Challenge"), not "Meeting Worlds: Jazz…". */
function namesMeeting(titleTokens: readonly string[]): boolean {
  return titleTokens.some((t, i) => (t === 'meeting' || t === 'meetings') && [undefined, FIELD, CLAUSE].includes(titleTokens[i + 1]));
}

export interface Classified {
  readonly categories: CategorySlug[];
  readonly tags: string[];
}

/**
 * The upstream's own schema.org type and categories are trusted first (each category is matched
 * against the rules, or taken as-is when it is already a slug); the title adds more; the description
 * only fills in when nothing matched yet, because descriptions mention everything ("bring a snack for
 * the park walk"). Civic business and road work get no category; anything else that matches nothing
 * is `community`.
 */
export function classify(upstream: readonly string[], title: string, description: string | null, schemaTypes: readonly string[] = []): Classified {
  // Copies: the memoized arrays are shared by every occurrence of a program.
  const c = classifyMemo(JSON.stringify([upstream, title, description, schemaTypes]));
  return { categories: [...c.categories], tags: [...c.tags] };
}

const classifyMemo = memoize((key: string): Classified => {
  const [upstream, title, description, schemaTypes] = JSON.parse(key) as [string[], string, string | null, string[]];
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
  for (const c of matchAll(titleWords, CATEGORY_MATCHERS)) cats.add(c);
  const titleTokens = clauseTokens(title);
  // A meeting's description is its agenda ("Topic of Discussion: Fall Campout", "Meeting number
  // (access code)"): what it discusses, not what it is.
  const descWords = description && !namesMeeting(titleTokens) ? words(description.slice(0, 2000)) : [];
  if (cats.size === 0) for (const c of matchAll(descWords, CATEGORY_MATCHERS)) cats.add(c);
  // Holidays and fairs are plan-relevant (Community excludes them), so they are read from the
  // description too: a "Toddler Storytime" whose text says it is the Halloween special is seasonal.
  for (const c of matchAll(descWords, CATEGORY_MATCHERS)) if (c === 'seasonal' || c === 'festivals') cats.add(c);
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
