// The gold set (test/fixtures/gold/README.md): real feeds found in public repositories, every item
// labelled by a person. The pipeline is scored fact by fact against the labels (gold.ts) and must
// meet issue 25's targets. When one fails, `node --import tsx test/snapshot/gold.ts --items
// FACT` lists the items it gets wrong.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { REPO_ROOT } from '../../core/config.ts';
import { CATEGORY_SLUGS } from '../../core/taxonomy.ts';
import { pct, scoreAll, table, type GoldFile, type Rate, type Scores } from './gold.ts';

// Issue 25's targets. It states none for category precision ("no category from an incidental
// word"), the city or items that are not events: theirs sit a little under what the pipeline reaches
// today (92%, 100%, 82%), so that none slips back unnoticed; README › Data quality says what is left.
const TARGETS = {
  feeds: 25,
  items: 600,
  familyDroppedAtMost: 0.01,
  ageAtLeast: 0.97,
  freePrecisionAtLeast: 0.99,
  freeRecallAtLeast: 0.95,
  priceProseAtLeast: 0.9,
  categoryPrecisionAtLeast: 0.9,
  cityAtLeast: 0.95,
  notEventDroppedAtLeast: 0.75,
  unmatchedAtMost: 0.01,
} as const;

const HELDOUT = path.resolve(REPO_ROOT, '..', 'shared', 'heldout-sources.txt');

const show = (r: Rate): string => `${(pct(r) * 100).toFixed(1)}% (${r.hit}/${r.of})`;
const worst = (fact: string): string => (scores.wrong[fact] ?? []).slice(0, 15).join('\n');

// The feeds are third-party data, never committed: where their copies are not on this machine the
// set cannot be scored, and says so rather than score a part of it.
const { files, scores, missing }: { files: GoldFile[]; scores: Scores; missing: string[] } = await scoreAll();
const skip = missing.length > 0 ? `feeds not here: ${missing.join(', ')} (see test/fixtures/gold/README.md)` : false;

describe('gold set', { skip }, () => {
  before(() => {
    // The table a reviewer reads; the assertions below hold its rows to the targets.
    console.log(`\n${table(scores)}\n`);
  });

  test('is large enough, and every feed is real, traced and not held out', () => {
    assert.ok(files.length >= TARGETS.feeds, `${files.length} feeds, want ≥ ${TARGETS.feeds}`);
    assert.ok(scores.items >= TARGETS.items, `${scores.items} items, want ≥ ${TARGETS.items}`);
    const heldout = existsSync(HELDOUT)
      ? readFileSync(HELDOUT, 'utf8')
          .split('\n')
          .map((l) => l.trim().toLowerCase())
          .filter((l) => l !== '' && !l.startsWith('#'))
      : [];
    const ids = new Set<string>();
    for (const { feed, items } of files) {
      assert.ok(!ids.has(feed.id), `feed id ${feed.id} twice`);
      ids.add(feed.id);
      assert.match(feed.provenance.repo, /^[\w.-]+\/[\w.-]+$/, `${feed.id}: provenance.repo`);
      assert.match(feed.provenance.commit, /^[0-9a-f]{40}$/, `${feed.id}: provenance.commit`);
      assert.ok(feed.provenance.path, `${feed.id}: provenance.path`);
      assert.ok(!heldout.includes(feed.provenance.repo.toLowerCase()), `${feed.id} comes from a held-out repository`);
      for (const i of items) {
        assert.match(i.start, /^\d{4}-\d\d-\d\d$/, `${feed.id} ${i.title}: start`);
        assert.ok(['family', 'adults_only', 'outside_area', 'not_event'].includes(i.verdict), `${feed.id} ${i.title}: verdict`);
        for (const c of i.categories) assert.ok((CATEGORY_SLUGS as readonly string[]).includes(c), `${feed.id} ${i.title}: category ${c}`);
        if (i.age) assert.ok(i.age[0] <= i.age[1] && i.age[0] >= 0, `${feed.id} ${i.title}: age`);
        if (i.price) assert.ok(i.price[0] <= i.price[1] && i.price[0] >= 0, `${feed.id} ${i.title}: price`);
      }
    }
  });

  test('finds every labelled item in its feed', () => {
    const r = { hit: scores.unmatched.length, of: scores.items };
    assert.ok(pct(r) <= TARGETS.unmatchedAtMost, `unmatched ${show(r)}:\n${scores.unmatched.map((u) => `${u.feed.id} ${u.item.title}`).join('\n')}`);
  });

  test('serves no adults-only event', () => {
    assert.equal(scores.adultsServed.hit, 0, `adults-only served ${show(scores.adultsServed)}:\n${worst('verdict')}`);
  });

  test('drops at most 1% of family events', () => {
    assert.ok(pct(scores.familyDropped) <= TARGETS.familyDroppedAtMost, `family dropped ${show(scores.familyDropped)}:\n${worst('verdict')}`);
  });

  test('reads the audience age within a year at each end', () => {
    assert.ok(pct(scores.age) >= TARGETS.ageAtLeast, `age ${show(scores.age)}:\n${worst('age')}`);
  });

  test('reads free with high precision and recall', () => {
    assert.ok(pct(scores.freePrecision) >= TARGETS.freePrecisionAtLeast, `free precision ${show(scores.freePrecision)}:\n${worst('free')}`);
    assert.ok(pct(scores.freeRecall) >= TARGETS.freeRecallAtLeast, `free recall ${show(scores.freeRecall)}:\n${worst('free')}`);
  });

  test('reads the price from prose', () => {
    assert.ok(pct(scores.priceProse) >= TARGETS.priceProseAtLeast, `price in prose ${show(scores.priceProse)}:\n${worst('price')}`);
  });

  test('gives categories the event is, not its incidental words', () => {
    assert.ok(
      pct(scores.categoryPrecision) >= TARGETS.categoryPrecisionAtLeast,
      `category precision ${show(scores.categoryPrecision)}:\n${worst('categories')}`,
    );
  });

  test('drops what is not an event (closures, private bookings, deadlines), never a family event for it', () => {
    assert.ok(pct(scores.notEventDropped) >= TARGETS.notEventDroppedAtLeast, `not-an-event dropped ${show(scores.notEventDropped)}:\n${worst('verdict')}`);
    const lost = (scores.wrong['verdict'] ?? []).filter((w) => w.endsWith('dropped: not_an_event'));
    assert.deepEqual(lost, []);
  });

  test('places the event in its city', () => {
    assert.ok(pct(scores.city) >= TARGETS.cityAtLeast, `venue city ${show(scores.city)}:\n${worst('city')}`);
  });
});
