// Upstream categories and keywords → taxonomy slugs; whatever topical remains → tags.
// Matching is on folded whole words/phrases so "fair" never matches "fairy".
import { CATEGORY_SLUGS, type CategorySlug } from '../taxonomy.ts';
import { memoize } from './memo.ts';
import { fold, slugify, words } from './text.ts';

// Each phrase is matched as a whole-word sequence in the folded text; a trailing * allows any suffix.
const RULES: Readonly<Record<CategorySlug, readonly string[]>> = {
  storytime: ['storytime', 'story time', 'stories', 'story*', 'read aloud', 'read-aloud', 'lapsit', 'bilingual story*', 'rhyme*', 'book babies', 'picture book*'],
  'arts-crafts': ['art', 'arts', 'craft*', 'painting', 'drawing', 'collage', 'maker*', 'origami', 'clay', 'sculpt*', 'diy'],
  music: ['music*', 'sing*', 'song*', 'concert*', 'choir', 'ukulele', 'drum*', 'orchestra', 'symphony', 'jam'],
  dance: ['danc*', 'ballet', 'hip hop', 'folklorico', 'folklórico', 'zumba'],
  theater: ['theater', 'theatre', 'puppet*', 'play', 'magic show', 'magician', 'circus', 'improv', 'performance*'],
  film: ['film*', 'movie*', 'cinema', 'screening'],
  stem: ['stem', 'steam', 'science', 'scientist*', 'coding', 'code', 'robot*', 'lego*', 'engineer*', 'math*', 'astronom*', 'planetarium', 'chemistry', 'tech', 'technology', 'experiment*', 'space', 'telescope*'],
  'nature-outdoors': ['nature', 'hike', 'hikes', 'hiking', 'garden*', 'outdoor*', 'park walk', 'tide pool*', 'bird*', 'trail*', 'naturalist', 'creek', 'beach'],
  animals: ['animal*', 'zoo', 'farm', 'petting', 'reptile*', 'insect*', 'bug*', 'wildlife', 'aquarium', 'otter*', 'penguin*', 'goat*', 'dog*'],
  'sports-fitness': ['sport*', 'soccer', 'basketball', 'yoga', 'fitness', 'swim*', 'skate*', 'bike', 'biking', 'tennis', 'gymnastics', 'martial arts', 'climb*', 'run'],
  'museums-exhibits': ['museum*', 'exhibit*', 'exhibition*', 'gallery', 'galleries', 'free day', 'free admission day'],
  'classes-workshops': ['class', 'classes', 'workshop*', 'lesson*', 'tutoring', 'homework help', 'homework'],
  playgroups: ['playgroup*', 'play group*', 'playtime', 'play time', 'open play', 'baby play', 'sensory play', 'stay and play', 'stay & play'],
  games: ['game*', 'gaming', 'chess', 'board game*', 'video game*', 'minecraft', 'trivia', 'puzzle*', 'pokemon', 'dungeons'],
  camps: ['camp', 'camps', 'day camp*', 'summer camp*', 'spring break camp*', 'winter camp*'],
  festivals: ['festival*', 'fest', 'fair', 'fairs', 'street fair*', 'carnival*', 'parade*', 'block party'],
  seasonal: ['halloween', 'trick or treat*', 'trick-or-treat*', 'pumpkin*', 'lunar new year', 'chinese new year', 'diwali', 'hanukkah', 'chanukah', 'christmas', 'santa', 'holiday*', 'thanksgiving', 'easter', 'egg hunt*', 'winter wonderland', 'dia de los muertos', 'day of the dead', 'kwanzaa', 'valentine*', 'fourth of july', '4th of july', 'independence day', 'gingerbread', 'snow day', 'menorah', 'ramadan', 'eid', 'juneteenth', 'earth day', 'mother s day', 'father s day'],
  community: ['community', 'volunteer*', 'meetup', 'social', 'library card', 'town hall', 'clean up', 'cleanup'],
};

// Extra topical tags read from the text; they never change which categories match.
const TAG_RULES: Readonly<Record<string, readonly string[]>> = {
  bilingual: ['bilingual'],
  spanish: ['spanish', 'espanol', 'en espanol'],
  chinese: ['chinese', 'mandarin', 'cantonese'],
  'sensory-friendly': ['sensory friendly', 'sensory-friendly', 'autism friendly'],
  'stroller-friendly': ['stroller*'],
  'registration-required': ['registration required', 'register*', 'pre-registration', 'rsvp'],
  'drop-in': ['drop in', 'drop-in', 'no registration'],
  lego: ['lego*'],
  outdoor: ['outdoor*', 'outside'],
  virtual: ['virtual', 'online', 'zoom'],
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
const TAG_MATCHERS = indexMatchers(compileRules(TAG_RULES));

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

const SLUG_SET: ReadonlySet<string> = new Set(CATEGORY_SLUGS);

export interface Classified {
  readonly categories: CategorySlug[];
  readonly tags: string[];
}

/**
 * Upstream categories are trusted first (each is matched against the rules, or taken as-is when it is
 * already a slug); the title adds more; the description only fills in when nothing matched yet,
 * because descriptions mention everything ("bring a snack for the park walk").
 * An event that matches nothing is `community`.
 */
export function classify(upstream: readonly string[], title: string, description: string | null): Classified {
  // Copies: the memoized arrays are shared by every occurrence of a program.
  const c = classifyMemo(JSON.stringify([upstream, title, description]));
  return { categories: [...c.categories], tags: [...c.tags] };
}

const classifyMemo = memoize((key: string): Classified => {
  const [upstream, title, description] = JSON.parse(key) as [string[], string, string | null];
  const cats = new Set<string>();
  const tags = new Set<string>();
  for (const raw of upstream) {
    const slug = slugify(raw);
    if (slug === '') continue;
    const hit = SLUG_SET.has(slug) ? new Set([slug]) : matchAll(words(raw), CATEGORY_MATCHERS);
    if (hit.size === 0) tags.add(slug);
    for (const c of hit) cats.add(c);
  }
  const titleWords = words(title);
  for (const c of matchAll(titleWords, CATEGORY_MATCHERS)) cats.add(c);
  const descWords = description ? words(description.slice(0, 2000)) : [];
  if (cats.size === 0) for (const c of matchAll(descWords, CATEGORY_MATCHERS)) cats.add(c);
  // Holidays and fairs are plan-relevant (Community excludes them), so they are read from the
  // description too: a "Toddler Storytime" whose text says it is the Halloween special is seasonal.
  for (const c of matchAll(descWords, CATEGORY_MATCHERS)) if (c === 'seasonal' || c === 'festivals') cats.add(c);
  if (cats.size === 0) cats.add('community');
  for (const t of matchAll([...titleWords, ...descWords], TAG_MATCHERS)) tags.add(t);
  for (const c of cats) tags.delete(c);
  return {
    categories: CATEGORY_SLUGS.filter((s) => cats.has(s)),
    tags: [...tags].filter((t) => t.length <= 40).sort(),
  };
});

export { fold };
