// All-day detection against labelled real items: every item of test/fixtures/allday/labels.json
// (read from the raw text of ../shared/realworld-feeds, whose files are never copied here) through
// its parser and eventSpan, the rule the snapshot's all_day comes from, and precision and recall
// of all_day per format. Also scored: the strict rule (the upstream wrote a date-only start), to
// show what reading whole days written as times adds. allday.test.ts holds the targets; run this
// file to print the table:
//   node --import ./test/tsx.js test/snapshot/allday.ts [--items]
// (--items lists the items each rule gets wrong). FE_REALWORLD_FEEDS names the corpus when it is
// not beside the checkout (a worktree's ../shared).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DateTime } from 'luxon';
import { REPO_ROOT } from '../../core/config.ts';
import { LA } from '../../core/zone.ts';
import { eventSpan } from '../../snapshot/normalize/times.ts';
import { parseFeed, sniffFormat } from '../../snapshot/parse/index.ts';

export const CORPUS = process.env['FE_REALWORLD_FEEDS'] ?? path.resolve(REPO_ROOT, '..', 'shared', 'realworld-feeds');
const LABELS = path.join(REPO_ROOT, 'test', 'fixtures', 'allday', 'labels.json');

/** The corpus CSV's columns (as test/snapshot/realworld.test.ts reads it). */
const CSV_COLUMNS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'missingmaps-mapathons.csv': { title: 'title', start: 'date', time: 'time_string', lat: 'latitude', lng: 'longitude', location: 'place_name' },
};

// Wide enough for every file's dates; recurring series expand within it (at most 500 occurrences).
const WINDOW = { start: DateTime.fromISO('2000-01-01', { zone: LA }), end: DateTime.fromISO('2035-01-01', { zone: LA }) };

interface Label {
  readonly title: string;
  /** Pacific start date, YYYY-MM-DD. */
  readonly start: string;
  /** Among several items with this title and date, the label's (document order); else the first. */
  readonly nth?: number;
  readonly all_day: boolean;
  readonly why: string;
}

export type Rule = 'shipped' | 'strict';

export interface Miss {
  readonly file: string;
  readonly label: Label;
  readonly predicted: boolean;
}

export interface Tally {
  n: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

export interface AllDayScore {
  /** Per rule, per format ('all' too). */
  readonly tallies: Record<Rule, Record<string, Tally>>;
  readonly misses: Record<Rule, Miss[]>;
  /** Labels no parsed item matched (a parser change, or a label typo): each one a defect of the set. */
  readonly unmatched: { readonly file: string; readonly label: Label }[];
}

const empty = (): Tally => ({ n: 0, tp: 0, fp: 0, fn: 0, tn: 0 });
export const precision = (t: Tally): number => (t.tp + t.fp === 0 ? 1 : t.tp / (t.tp + t.fp));
export const recall = (t: Tally): number => (t.tp + t.fn === 0 ? 1 : t.tp / (t.tp + t.fn));

/** The labelled items scored; null when the corpus is not on this machine. */
export async function scoreAllDay(): Promise<AllDayScore | null> {
  if (!existsSync(CORPUS)) return null;
  const labels = JSON.parse(await readFile(LABELS, 'utf8')) as { files: Record<string, Label[]> };
  const tallies: AllDayScore['tallies'] = { shipped: {}, strict: {} };
  const misses: AllDayScore['misses'] = { shipped: [], strict: [] };
  const unmatched: AllDayScore['unmatched'] = [];
  for (const [file, items] of Object.entries(labels.files)) {
    const text = await readFile(path.join(CORPUS, file), 'utf8');
    const format = sniffFormat(text, file);
    const parsed = await parseFeed(format, text, { window: WINDOW, csvColumns: CSV_COLUMNS[file] });
    const read = new Map<string, Record<Rule, boolean>[]>();
    for (const r of parsed.events) {
      const span = eventSpan(r.start, r.end, r.endIsExclusiveDate ?? false);
      const key = `${r.title}|${span.start.setZone(LA).toISODate()}`;
      read.set(key, [...(read.get(key) ?? []), { shipped: span.allDay, strict: r.start.dateOnly }]);
    }
    for (const label of items) {
      const got = read.get(`${label.title}|${label.start}`)?.[label.nth ?? 0];
      if (!got) {
        unmatched.push({ file, label });
        continue;
      }
      for (const rule of ['shipped', 'strict'] as const) {
        for (const bucket of [format, 'all']) {
          const t = (tallies[rule][bucket] ??= empty());
          t.n++;
          if (got[rule] && label.all_day) t.tp++;
          else if (got[rule]) t.fp++;
          else if (label.all_day) t.fn++;
          else t.tn++;
        }
        if (got[rule] !== label.all_day) misses[rule].push({ file, label, predicted: got[rule] });
      }
    }
  }
  return { tallies, misses, unmatched };
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

async function main(): Promise<void> {
  const score = await scoreAllDay();
  if (score === null) {
    console.log(`no corpus at ${CORPUS} (set FE_REALWORLD_FEEDS): nothing scored`);
    return;
  }
  console.log('rule     format   items  all-day  TP  FP  FN  precision  recall');
  for (const rule of ['shipped', 'strict'] as const) {
    for (const [format, t] of Object.entries(score.tallies[rule]).sort(([a], [b]) => (a === 'all' ? 1 : b === 'all' ? -1 : a < b ? -1 : 1))) {
      console.log(
        `${rule.padEnd(8)} ${format.padEnd(8)} ${String(t.n).padStart(5)}  ${String(t.tp + t.fn).padStart(7)} ${String(t.tp).padStart(3)} ${String(t.fp).padStart(3)} ${String(t.fn).padStart(3)}  ${pct(precision(t)).padStart(9)}  ${pct(recall(t)).padStart(6)}`,
      );
    }
  }
  if (score.unmatched.length)
    console.log(`\n${score.unmatched.length} label(s) matched no item: ${score.unmatched.map((u) => `${u.file}: ${u.label.title}`).join('; ')}`);
  if (process.argv.includes('--items')) {
    for (const rule of ['shipped', 'strict'] as const) {
      console.log(`\n${rule}: ${score.misses[rule].length} wrong`);
      for (const m of score.misses[rule]) console.log(`  ${m.predicted ? 'FP' : 'FN'} ${m.file} ${m.label.start} ${m.label.title} — ${m.label.why}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
