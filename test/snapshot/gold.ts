// The gold set's scorer: every labelled feed of test/fixtures/gold/ through the pipeline a build runs
// (the parser, normalizeAll with the source's context, the merge, the served record), each item's
// outcome set against what a person labelled it (test/fixtures/gold/README.md), and precision and
// recall per fact. Twice: as the feed is (is it served, and where), and with its place set aside
// (its facts: a Seattle library's storytime has an audience and a price like any other, though we
// serve none of it). gold.test.ts holds the targets; run this file to print the table:
//   node --import tsx test/snapshot/gold.ts [--items FACT]
// (--items lists the items a fact gets wrong: verdict, age, free, price, categories, city).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { DateTime } from 'luxon';
import { REPO_ROOT } from '../../core/config.ts';
import { toRecord, type EventRecord, type EventRow } from '../../core/record.ts';
import { decode } from '../../snapshot/build/fetch.ts';
import { bundledGazetteer } from '../../snapshot/gazetteer.ts';
import { normalizeAll, sourceContext } from '../../snapshot/normalize/event.ts';
import { mergeRows, sameEventKey } from '../../snapshot/normalize/merge.ts';
import { plainText } from '../../snapshot/normalize/text.ts';
import { parseFeed, sniffFormat } from '../../snapshot/parse/index.ts';
import { parseRegistry, type FeedFormat } from '../../snapshot/registry.ts';
import type { DropReason, RawEvent } from '../../snapshot/types.ts';
import { fold } from '../../core/text.ts';

export const GOLD_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'gold');
/** Feed files a steward has placed beside the real-world corpus, named as the labels name them. */
const SHARED_FEEDS = path.resolve(REPO_ROOT, '..', 'shared', 'gold-feeds');
/** Where the search tool's `fetch` leaves repository snapshots (owner+name/repo is a git directory). */
const MIRRORS = process.env.GOLD_MIRRORS ?? '/work/.mirror';

export type Verdict = 'family' | 'adults_only' | 'outside_area' | 'not_event';

export interface GoldItem {
  readonly uid: string | null;
  readonly title: string;
  readonly start: string;
  readonly verdict: Verdict;
  readonly age: readonly [number, number] | null;
  readonly free: boolean;
  readonly price: readonly [number, number] | null;
  readonly price_in_prose?: boolean;
  readonly categories: readonly string[];
  readonly city: string | null;
  readonly note?: string;
}

export interface GoldFeed {
  readonly id: string;
  readonly file: string;
  readonly format?: FeedFormat;
  readonly kind: string;
  readonly organizer: { readonly name: string; readonly url: string };
  readonly free_by_default?: boolean;
  readonly default_venue?: string;
  readonly csv_columns?: Readonly<Record<string, string>>;
  readonly provenance: { readonly repo: string; readonly path: string; readonly commit: string; readonly blob?: string; readonly excerpt?: string };
}

export interface GoldFile {
  readonly feed: GoldFeed;
  readonly items: readonly GoldItem[];
}

/** What the pipeline made of one labelled item: its served record, or why it served none. */
export type Outcome = { readonly record: EventRecord } | { readonly dropped: DropReason | 'unmatched' };

export interface Scored {
  readonly feed: GoldFeed;
  readonly item: GoldItem;
  /** The feed as it is. */
  readonly outcome: Outcome;
  /** The feed with every item's place set aside (the source's default venue instead). */
  readonly facts: Outcome;
}

/**
 * A feed's bytes, exactly those its provenance names: third-party data is never committed, so it is
 * read from a steward's copy under ../shared/gold-feeds, or from the repository snapshot `fetch`
 * brought (checked against the blob), or from a labeller's local copy; null when none is here.
 */
export async function feedBytes(feed: GoldFeed): Promise<Buffer | null> {
  const shared = path.join(SHARED_FEEDS, feed.file);
  if (existsSync(shared)) return readFile(shared);
  const gitDir = path.join(MIRRORS, feed.provenance.repo.replace('/', '+'), 'repo');
  if (existsSync(gitDir)) {
    const spec = `${feed.provenance.commit}:${feed.provenance.path}`;
    try {
      const blob = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', spec], { encoding: 'utf8' }).trim();
      if (feed.provenance.blob && blob !== feed.provenance.blob) throw new Error(`${feed.id}: ${spec} is blob ${blob}, labelled ${feed.provenance.blob}`);
      return execFileSync('git', ['--git-dir', gitDir, 'cat-file', 'blob', blob], { maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      if ((err as Error).message.includes('labelled')) throw err;
    }
  }
  const local = path.join(GOLD_DIR, 'feeds', feed.file);
  return existsSync(local) ? readFile(local) : null;
}

// The gazetteer venue the facts pass puts every item at: any Bay Area place would do.
const ASIDE_VENUE = 'sfpl-main';

export async function loadGold(): Promise<GoldFile[]> {
  const dir = path.join(GOLD_DIR, 'labels');
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  return Promise.all(names.map(async (n) => JSON.parse(await readFile(path.join(dir, n), 'utf8')) as GoldFile));
}

const ZONE = 'America/Los_Angeles';
const titleKey = (t: string | null): string => fold(plainText(t) ?? '');
const uidBase = (uid: string | null): string | null => (uid === null ? null : uid.split('#')[0]!);

/**
 * The labelled item a raw event is: by its uid (an occurrence's uid is the series' uid + "#…"),
 * then by title, then by the date it starts. A series' occurrences all answer to its one label.
 */
function matcher(items: readonly GoldItem[]): (raw: RawEvent, startDate: string) => GoldItem | undefined {
  return (raw, startDate) => {
    const base = uidBase(raw.uid);
    const title = titleKey(raw.title);
    let cands = items.filter((i) => i.uid !== null && base !== null && (i.uid === raw.uid || i.uid === base));
    if (cands.length === 0) cands = items.filter((i) => titleKey(i.title) === title);
    if (cands.length > 1) {
      const byTitle = cands.filter((i) => titleKey(i.title) === title);
      if (byTitle.length > 0) cands = byTitle;
    }
    if (cands.length > 1) {
      const byDate = cands.filter((i) => i.start === startDate);
      if (byDate.length > 0) cands = byDate;
    }
    return cands[0];
  };
}

/** One feed through the pipeline, in a window around its labelled dates; null when its bytes are not here. */
export async function scoreFeed(gold: GoldFile): Promise<Scored[] | null> {
  const { feed, items } = gold;
  const bytes = await feedBytes(feed);
  if (bytes === null) return null;
  const text = decode(bytes, null);
  const dates = items.map((i) => DateTime.fromISO(i.start, { zone: ZONE })).filter((d) => d.isValid);
  const first = DateTime.min(...dates) ?? DateTime.now();
  const last = DateTime.max(...dates) ?? DateTime.now();
  const window = { start: first.minus({ days: 15 }).startOf('day'), end: last.plus({ days: 15 }).endOf('day') };
  const format = feed.format ?? sniffFormat(text, feed.file);
  const parsed = await parseFeed(format, text, { window, csvColumns: feed.csv_columns, baseUrl: feed.organizer.url });
  const entry = (defaultVenue: string | undefined): unknown => ({
    sources: [
      {
        id: feed.id,
        url: `gold/${feed.file}`,
        format,
        organizer: feed.organizer,
        ...(defaultVenue ? { default_venue: defaultVenue } : {}),
        destination: 'san-francisco',
        attribution: feed.organizer.name,
        free_by_default: feed.free_by_default ?? false,
        ...(feed.csv_columns ? { csv_columns: feed.csv_columns } : {}),
      },
    ],
  });
  const run = (raws: readonly RawEvent[], defaultVenue: string | undefined): Map<GoldItem, Outcome> => {
    const registry = parseRegistry(entry(defaultVenue), feed.id);
    const ctx = sourceContext(registry, registry.sources[0]!, bundledGazetteer(), window);
    const outcomes: (EventRow | DropReason)[] = [];
    const normalized = normalizeAll(raws, ctx, (i, o) => (outcomes[i] = o));
    const merged = mergeRows(normalized.rows);
    // A row merged into another is served as that one.
    const served = new Map(merged.rows.map((r) => [sameEventKey(r), r]));
    const find = matcher(items);
    const seen = new Map<GoldItem, Outcome>();
    for (const [i, raw] of raws.entries()) {
      // The date as the item gives it, in its own zone, as a person reading it would.
      const item = find(raw, raw.start.at.isValid ? (raw.start.at.toISODate() ?? '') : '');
      const o = outcomes[i];
      if (!item || o === undefined) continue;
      let outcome: Outcome;
      if (typeof o === 'string') outcome = { dropped: o };
      else {
        // Every row of normalizeAll is in the merge, as itself or as the record it was merged into.
        const row = served.get(sameEventKey(o));
        if (!row) throw new Error(`${feed.id}: a row the merge does not hold (${o.id})`);
        outcome = { record: toRecord({ ...row, created_ms: 0, updated_ms: 0 }, 'https://example.test') };
      }
      // A series' first served occurrence stands for it (an occurrence may fall outside the window).
      const prev = seen.get(item);
      if (!prev || (!('record' in prev) && 'record' in outcome)) seen.set(item, outcome);
    }
    return seen;
  };
  const asIs = run(parsed.events, feed.default_venue);
  const aside = run(
    parsed.events.map((r) => ({ ...r, location: null, lat: null, lng: null })),
    ASIDE_VENUE,
  );
  const unmatched: Outcome = { dropped: 'unmatched' };
  return items.map((item) => ({ feed, item, outcome: asIs.get(item) ?? unmatched, facts: aside.get(item) ?? unmatched }));
}

export interface Rate {
  readonly hit: number;
  readonly of: number;
}
const rate = (hit: number, of: number): Rate => ({ hit, of });
export const pct = (r: Rate): number => (r.of === 0 ? 1 : r.hit / r.of);

export interface Scores {
  readonly feeds: number;
  readonly items: number;
  readonly unmatched: readonly Scored[];
  /** Adults-only items served (target: none). */
  readonly adultsServed: Rate;
  /** Family items dropped, for any reason. */
  readonly familyDropped: Rate;
  readonly outsideDropped: Rate;
  readonly notEventDropped: Rate;
  readonly age: Rate;
  /** The age range within a year, on the items whose label states one. */
  readonly ageStated: Rate;
  /** Served records with an age range where the label has none: a range read from a phrase that is not the audience. */
  readonly ageFromNothing: Rate;
  readonly freePrecision: Rate;
  readonly freeRecall: Rate;
  readonly pricePrecision: Rate;
  readonly priceProse: Rate;
  readonly priceAll: Rate;
  readonly categoryPrecision: Rate;
  readonly categoryRecall: Rate;
  /** Records given only the fallback `community` where the label has other categories. */
  readonly uncategorized: Rate;
  readonly city: Rate;
  /** The items each fact gets wrong, for --items. */
  readonly wrong: Readonly<Record<string, readonly string[]>>;
}

const near = (a: number, b: number): boolean => Math.abs(a - b) <= 1;
const cents = (a: number | null | undefined, b: number): boolean => a !== null && a !== undefined && Math.abs(a - b) < 0.005;

const recordOf = (o: Outcome): EventRecord | null => ('record' in o ? o.record : null);
const isUnmatched = (s: Scored): boolean => 'dropped' in s.outcome && s.outcome.dropped === 'unmatched';

/**
 * Verdicts: an adults-only item must not be served even where its place would allow it (the facts
 * pass); an item for anyone else must survive every rule but the area's (the facts pass), and a
 * Bay Area one must be served (as is); an out-of-area one must not be (as is). Facts (age, free,
 * price, categories) are read off the facts pass of every item for anyone but adults; the city off
 * the as-is pass of the Bay Area ones.
 */
export function score(all: readonly Scored[]): Scores {
  const wrong: Record<string, string[]> = { verdict: [], age: [], free: [], price: [], categories: [], city: [] };
  const say = (fact: string, s: Scored, what: string): void =>
    void wrong[fact]!.push(`${s.feed.id} ${JSON.stringify(s.item.title)} (${s.item.start}): ${what}`);
  const matched = all.filter((s) => !isUnmatched(s));
  const by = (...v: Verdict[]): Scored[] => matched.filter((s) => v.includes(s.item.verdict));
  const droppedWhy = (o: Outcome): string => ('dropped' in o ? o.dropped : 'served');

  const adults = by('adults_only');
  let adultsServed = 0;
  for (const s of adults) {
    if (recordOf(s.facts)) {
      adultsServed++;
      say('verdict', s, 'adults-only served');
    }
  }
  const forAnyone = by('family', 'outside_area');
  let familyDropped = 0;
  for (const s of forAnyone) {
    const lost = !recordOf(s.facts) ? droppedWhy(s.facts) : s.item.verdict === 'family' && !recordOf(s.outcome) ? droppedWhy(s.outcome) : null;
    if (lost) {
      familyDropped++;
      say('verdict', s, `${s.item.verdict === 'family' ? 'family' : 'out-of-area family'} item dropped: ${lost}`);
    }
  }
  const outside = by('outside_area');
  for (const s of outside) if (recordOf(s.outcome)) say('verdict', s, `out of area, served in ${recordOf(s.outcome)!.venue.city}`);
  const notEvents = by('not_event');
  for (const s of notEvents) if (recordOf(s.facts)) say('verdict', s, 'not an event, served');

  let ageHit = 0;
  let ageOf = 0;
  let spurious = 0;
  let statedHit = 0;
  let statedOf = 0;
  let unstated = 0;
  let freeTp = 0;
  let freeFp = 0;
  let freeFn = 0;
  let priceHit = 0;
  let priceOf = 0;
  let priceClaimed = 0;
  let priceClaimedHit = 0;
  let proseHit = 0;
  let proseOf = 0;
  let catTp = 0;
  let catPredicted = 0;
  let catLabelled = 0;
  let catRecalled = 0;
  let uncategorized = 0;
  for (const s of forAnyone) {
    const r = recordOf(s.facts);
    if (!r) continue;
    ageOf++;
    const got = r.age_range_years;
    const want = s.item.age;
    const ageOk = want === null ? got === null : got !== null && near(got.min_years, want[0]) && near(Math.min(got.max_years, 18), Math.min(want[1], 18));
    if (ageOk) ageHit++;
    else say('age', s, `got ${got ? `${got.min_years}–${got.max_years}` : 'none'}, labelled ${want ? want.join('–') : 'none'}`);
    if (want === null) {
      unstated++;
      if (got !== null) spurious++;
    } else {
      statedOf++;
      if (ageOk) statedHit++;
    }

    if (r.is_free && s.item.free) freeTp++;
    else if (r.is_free) {
      freeFp++;
      say('free', s, 'served free, labelled not free');
    } else if (s.item.free) {
      freeFn++;
      say('free', s, 'labelled free, served not free');
    }

    const p = r.price;
    const priced = p !== null && (p.min !== null || p.max !== null);
    const want_p = s.item.price;
    const ok = priced && want_p !== null && cents(p.min, want_p[0]) && cents(p.max, want_p[1]);
    if (priced) {
      priceClaimed++;
      if (ok) priceClaimedHit++;
    }
    if (want_p) {
      priceOf++;
      if (ok) priceHit++;
      if (s.item.price_in_prose) {
        proseOf++;
        if (ok) proseHit++;
      }
    }
    if (!ok && (want_p || priced)) say('price', s, `got ${priced ? `${p.min}–${p.max}` : 'none'}, labelled ${want_p ? want_p.join('–') : 'none'}`);

    const want_c = new Set(s.item.categories);
    catLabelled += want_c.size;
    // `community` alone is the pipeline's "nothing matched": a category missed (recall), not one
    // read from an incidental word (precision).
    const fallback = r.categories.length === 1 && r.categories[0] === 'community';
    if (fallback && !want_c.has('community')) uncategorized++;
    else
      for (const c of r.categories) {
        catPredicted++;
        if (want_c.has(c)) catTp++;
        else say('categories', s, `${c} not among ${[...want_c].join(', ') || 'none'}`);
      }
    catRecalled += s.item.categories.filter((c) => r.categories.includes(c)).length;
  }

  let cityHit = 0;
  let cityOf = 0;
  for (const s of by('family')) {
    const r = recordOf(s.outcome);
    if (!r || s.item.city === null) continue;
    cityOf++;
    if (fold(r.venue.city) === fold(s.item.city)) cityHit++;
    else say('city', s, `got ${r.venue.city}, labelled ${s.item.city}`);
  }
  return {
    feeds: new Set(all.map((s) => s.feed.id)).size,
    items: all.length,
    unmatched: all.filter(isUnmatched),
    adultsServed: rate(adultsServed, adults.length),
    familyDropped: rate(familyDropped, forAnyone.length),
    outsideDropped: rate(outside.filter((s) => !recordOf(s.outcome)).length, outside.length),
    notEventDropped: rate(notEvents.filter((s) => !recordOf(s.facts)).length, notEvents.length),
    age: rate(ageHit, ageOf),
    ageFromNothing: rate(spurious, unstated),
    ageStated: rate(statedHit, statedOf),
    freePrecision: rate(freeTp, freeTp + freeFp),
    freeRecall: rate(freeTp, freeTp + freeFn),
    pricePrecision: rate(priceClaimedHit, priceClaimed),
    priceProse: rate(proseHit, proseOf),
    priceAll: rate(priceHit, priceOf),
    categoryPrecision: rate(catTp, catPredicted),
    categoryRecall: rate(catRecalled, catLabelled),
    uncategorized: rate(uncategorized, ageOf),
    city: rate(cityHit, cityOf),
    wrong,
  };
}

export async function scoreAll(): Promise<{ scored: Scored[]; scores: Scores; files: GoldFile[]; missing: string[] }> {
  const files = await loadGold();
  const runs = await Promise.all(files.map(async (f) => [f, await scoreFeed(f)] as const));
  const missing = runs.filter(([, r]) => r === null).map(([f]) => f.feed.id);
  const scored = runs.flatMap(([, r]) => r ?? []);
  return { scored, scores: score(scored), files, missing };
}

const fmt = (r: Rate): string => `${(pct(r) * 100).toFixed(1)}% (${r.hit}/${r.of})`;

/** The table the closing note and README print: one row per fact. */
export function table(s: Scores): string {
  const rows: [string, Rate][] = [
    ['adults-only items served', s.adultsServed],
    ['family items dropped', s.familyDropped],
    ['out-of-area items dropped', s.outsideDropped],
    ['not-an-event items dropped', s.notEventDropped],
    ['age range within a year', s.age],
    ['age range within a year, where one is stated', s.ageStated],
    ['age range where none is stated', s.ageFromNothing],
    ['free: precision', s.freePrecision],
    ['free: recall', s.freeRecall],
    ['price: precision (prices served)', s.pricePrecision],
    ['price: recall, stated in prose', s.priceProse],
    ['price: recall, all stated', s.priceAll],
    ['categories: precision', s.categoryPrecision],
    ['categories: recall', s.categoryRecall],
    ['categories: only the fallback, where others apply', s.uncategorized],
    ['venue city', s.city],
  ];
  return [
    `| fact (${s.feeds} feeds, ${s.items} items, ${s.unmatched.length} unmatched) | rate |`,
    '|---|---|',
    ...rows.map(([k, r]) => `| ${k} | ${fmt(r)} |`),
  ].join('\n');
}

export function feedTable(files: readonly GoldFile[]): string {
  const lines = [
    '| feed | kind | repository | items | family | adults-only | outside area | not an event | free | priced | with ages |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { feed, items } of files) {
    const n = (v: Verdict): number => items.filter((i) => i.verdict === v).length;
    lines.push(
      `| ${feed.id} | ${feed.kind} | ${feed.provenance.repo} | ${items.length} | ${n('family')} | ${n('adults_only')} | ${n('outside_area')} | ${n('not_event')} | ${items.filter((i) => i.free).length} | ${items.filter((i) => i.price && i.price[1] > 0).length} | ${items.filter((i) => i.age).length} |`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { scores, files, missing } = await scoreAll();
  if (missing.length) console.log(`feeds not here (no copy under ../shared/gold-feeds, no snapshot under ${MIRRORS}): ${missing.join(', ')}`);
  const which = process.argv.indexOf('--items');
  if (which > 0) {
    const fact = process.argv[which + 1] ?? 'verdict';
    for (const line of scores.wrong[fact] ?? []) console.log(line);
  } else {
    console.log(feedTable(files));
    console.log();
    console.log(table(scores));
    for (const u of scores.unmatched) console.log(`unmatched: ${u.feed.id} ${JSON.stringify(u.item.title)} ${u.item.start}`);
  }
}
