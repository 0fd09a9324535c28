import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ageRangeYears, parseAges, type AgeVerdict } from '../../../../workers/snapshot/normalize/ages.ts';

// The contract's rule, stated independently: whole years a..b cover months [12a, 12b + 11].
const years = (a: number, b: number): AgeVerdict => ({ kind: 'range', range: { min_months: a * 12, max_months: Math.min(b, 18) * 12 + 11 } });
const months = (a: number, b: number): AgeVerdict => ({ kind: 'range', range: { min_months: a, max_months: b } });

describe('parseAges: the phrases real calendars use', () => {
  const cases: [string, string | null, string, string | null, AgeVerdict | null][] = [
    ['"Ages 3-5" in a title', null, 'Preschool Storytime (Ages 3-5)', null, years(3, 5)],
    ['"ages 3 to 5 years"', null, 'Storytime', 'For children ages 3 to 5 years.', years(3, 5)],
    ['en dash range', null, 'Family Art Workshop', 'Ages 6–12 with an adult.', years(6, 12)],
    ['"ages 2+"', null, 'Sensory Storytime', 'A calm storytime. Ages 2+.', years(2, 18)],
    ['"5 and up"', null, 'Paws to Read', 'Read to a dog! Ages 5 and up.', years(5, 18)],
    ['"0–18 months"', null, 'Lapsit', 'For babies 0–18 months.', months(0, 18)],
    ['"babies (birth–12 months)"', null, 'Baby Rhyme Time', 'For babies (birth–12 months) and caregivers.', months(0, 12)],
    ['"18 months–3 years"', null, 'Toddler Storytime', 'For toddlers 18 months–3 years.', { kind: 'range', range: { min_months: 18, max_months: 47 } }],
    ['"toddlers" keyword', null, 'Toddler Time', 'Songs and rhymes.', months(12, 47)],
    ['"preschool" keyword', null, 'Preschool Playdate', null, years(3, 5)],
    ['"Grades K-2"', null, 'LEGO Club', 'Grades K-2.', years(5, 8)],
    ['"grades 3–5"', 'Grades 3–5', 'Coding', null, years(8, 11)],
    ['"teens"', null, 'Teen Game Night', 'For teens.', years(13, 18)],
    ['"tweens"', null, 'Tween Maker Club', null, years(9, 12)],
    ['"all ages"', null, 'Family Storytime', 'All ages welcome!', { kind: 'all' }],
    ['"adults only" in a field', 'Adults only', 'Evening Book Club', null, { kind: 'adults' }],
    ['"(21+)" in a title', null, 'After Dark (21+ only)', null, { kind: 'adults' }],
    ['"5 & under"', null, 'Little Movers', 'Kids 5 & under.', years(0, 5)],
    ['nothing said', null, 'Museum Free Day', 'Come explore.', null],
    ['numbers win over keywords', null, 'Toddler Time', 'Ages 2-3.', years(2, 3)],
    ['accents and case folded', null, 'CUENTOS BILINGÜES', 'Para niños. AGES 0-5.', years(0, 5)],
  ];
  for (const [name, field, title, description, expected] of cases) {
    test(name, () => assert.deepEqual(parseAges(field, title, description), expected));
  }

  test('an upstream ages field is trusted over the title', () => {
    assert.deepEqual(parseAges('7-12', 'Junior Ranger (ages 5-8)', null), years(7, 12));
  });

  test('a reversed range is not a range', () => {
    assert.equal(parseAges(null, 'Ages 9-3', null), null);
  });
});

describe('age_range_years', () => {
  test('is floor(months / 12) of each bound, for every valid range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 227 }), fc.integer({ min: 0, max: 227 }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        assert.deepEqual(ageRangeYears({ min_months: lo, max_months: hi }), { min_years: Math.floor(lo / 12), max_years: Math.floor(hi / 12) });
      }),
    );
    assert.equal(ageRangeYears(null), null);
  });

  test('years ranges round-trip: "ages a-b" → years a..b', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 18 }), fc.integer({ min: 0, max: 18 }), (a, b) => {
        fc.pre(a <= b);
        const v = parseAges(null, `Ages ${a}-${b}`, null);
        assert.ok(v?.kind === 'range');
        assert.deepEqual(ageRangeYears(v.range), { min_years: a, max_years: b });
      }),
    );
  });
});
