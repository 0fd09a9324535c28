import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classify } from '../../../../workers/snapshot/normalize/categories.ts';
import { CATEGORY_SLUGS } from '../../../../workers/snapshot/taxonomy.ts';

describe('classify', () => {
  const cases: [string, string[], string, string | null, string[]][] = [
    ['storytime from upstream category', ['Storytime', 'Kids'], 'Toddler Time', null, ['storytime']],
    ['holiday title is seasonal', [], 'Halloween Costume Parade', null, ['festivals', 'seasonal']],
    ['pumpkin patch is seasonal', [], 'Pumpkin Patch Weekend', null, ['seasonal']],
    ['Lunar New Year is seasonal', [], 'Lunar New Year Lantern Craft', null, ['arts-crafts', 'seasonal']],
    ['egg hunt is seasonal', [], 'Spring Egg Hunt', null, ['seasonal']],
    ['winter holidays are seasonal', [], 'Winter Holiday Sing-Along', null, ['music', 'seasonal']],
    ['street fair is festivals', [], 'Family Street Fair', null, ['festivals']],
    ['a holiday in the description still counts', ['Storytime'], 'Toddler Storytime', 'Our Halloween special: wear a costume!', ['storytime', 'seasonal']],
    ['"fairy" is not a fair', [], 'Fairy Tale Theater', null, ['theater']],
    ['nothing matched → community', [], 'Open House', 'Drop by.', ['community']],
    ['a slug given upstream is taken as is', ['stem'], 'Robots', null, ['stem']],
  ];
  for (const [name, upstream, title, desc, expected] of cases) {
    test(name, () => assert.deepEqual(classify(upstream, title, desc).categories, expected));
  }

  test('categories are always taxonomy slugs in taxonomy order', () => {
    const { categories } = classify(['Music', 'Art', 'Science', 'Zoo'], 'Halloween Street Fair with dancing', null);
    assert.ok(categories.every((c) => (CATEGORY_SLUGS as readonly string[]).includes(c)));
    assert.deepEqual(categories, CATEGORY_SLUGS.filter((s) => categories.includes(s)));
  });

  test('unmapped upstream categories and keyword topics become tags, never categories', () => {
    const r = classify(['Early Literacy', 'Storytime'], 'Bilingual Storytime', 'En español. Stroller parking.');
    assert.deepEqual(r.categories, ['storytime']);
    for (const t of ['early-literacy', 'bilingual', 'spanish', 'stroller-friendly']) assert.ok(r.tags.includes(t), t);
    assert.ok(!r.tags.includes('storytime'));
  });

  test('results are copies: changing one event does not change another', () => {
    const a = classify(['Storytime'], 'Family Storytime', null);
    a.categories.push('stem');
    assert.deepEqual(classify(['Storytime'], 'Family Storytime', null).categories, ['storytime']);
  });
});
