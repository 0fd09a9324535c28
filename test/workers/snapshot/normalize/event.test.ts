import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { eventId, ID_PREFIX, normalizePrice, splitCancelMarker } from '../../../../workers/snapshot/normalize/event.ts';

describe('eventId', () => {
  test('bsc_evt_ + 80 bits of sha256(source, uid): stable, and distinct per source', () => {
    const oracle = createHash('sha256').update('sfpl\u0000abc@x').digest('hex').slice(0, 20);
    assert.equal(eventId('sfpl', 'abc@x'), `${ID_PREFIX}${oracle}`);
    assert.equal(eventId('sfpl', 'abc@x'), eventId('sfpl', 'abc@x'));
    assert.notEqual(eventId('sfpl', 'abc@x'), eventId('oakland', 'abc@x'));
    assert.match(eventId('s', 'u'), /^bsc_evt_[0-9a-f]{20}$/);
  });
});

describe('cancellation markers', () => {
  const cases: [string, string, boolean][] = [
    ['Canceled: Toddler Time', 'Toddler Time', true],
    ['Cancelled - Toddler Time', 'Toddler Time', true],
    ['CANCELLED - Toddler Time', 'Toddler Time', true],
    ['[Canceled] Toddler Time', 'Toddler Time', true],
    ['Toddler Time (Cancelled)', 'Toddler Time', true],
    ['Toddler Time - CANCELED', 'Toddler Time', true],
    ['Toddler Time', 'Toddler Time', false],
    ['Canceled', 'Canceled', false],
    ['The Cancellation of Dinosaurs', 'The Cancellation of Dinosaurs', false],
  ];
  for (const [input, title, cancelled] of cases) test(input, () => assert.deepEqual(splitCancelMarker(input), [title, cancelled]));
});

describe('normalizePrice', () => {
  const p = (priceText: string | null, isFree: boolean | null = null, priceMin: number | null = null, priceMax: number | null = null) => ({ priceText, isFree, priceMin, priceMax });
  test('a range of amounts', () => assert.deepEqual(normalizePrice(p('$5–$8'), false), { isFree: false, min: 5, max: 8, note: '$5–$8' }));
  test('"Free" is free at zero', () => assert.deepEqual(normalizePrice(p('Free'), false), { isFree: true, min: 0, max: 0, note: 'Free' }));
  test('"Free with admission" is not free admission', () => assert.equal(normalizePrice(p('Free with museum admission'), false).isFree, false));
  test('an explicit upstream flag wins', () => assert.equal(normalizePrice(p('$10', true), false).isFree, true));
  test('numbers from fields count too', () => assert.deepEqual(normalizePrice(p(null, null, 12, 20), false), { isFree: false, min: 12, max: 20, note: null }));
  test('unknown price: the source default decides, and no price object is invented', () => {
    assert.deepEqual(normalizePrice(p(null), true), { isFree: true, min: null, max: null, note: null });
    assert.deepEqual(normalizePrice(p(null), false), { isFree: false, min: null, max: null, note: null });
  });
});
