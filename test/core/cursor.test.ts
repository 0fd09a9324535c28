// Cursors (core/cursor.ts): a key's text decodes to that key, every text the published pattern
// admits is a cursor of exactly one key (so a documented-valid cursor is never refused), and
// nothing else is one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CURSOR_PATTERN, decodeCursor, encodeCursor } from '../../core/cursor.ts';

const HEX = 'a0b1c2d3e4f5a6b7c8d9';
const MAX_MS = 999_999_999_999_999;
/** RFC 3986's unreserved characters: what a query value carries without percent-encoding. */
const UNRESERVED = /^[\w.~-]+$/;

test('a key encodes to a URL-safe text that decodes back to it', () => {
  fc.assert(
    fc.property(fc.integer({ min: -MAX_MS, max: MAX_MS }), fc.stringMatching(/^[0-9a-f]{20}$/), (startMs, hex) => {
      const key = { startMs, id: `bsc_evt_${hex}` };
      const text = encodeCursor(key);
      assert.match(text, CURSOR_PATTERN);
      assert.match(text, UNRESERVED);
      assert.deepEqual(decodeCursor(text), key);
    }),
  );
});

test('every text the pattern admits names one key and is that key’s own text', () => {
  fc.assert(
    fc.property(fc.stringMatching(CURSOR_PATTERN), (text) => {
      const key = decodeCursor(text);
      assert.ok(key !== null, text);
      assert.equal(encodeCursor(key), text);
    }),
  );
});

test('anything else is not a cursor', () => {
  for (const bad of [
    '',
    '1',
    '1..',
    `1.0.${HEX}0`,
    `1.0.${HEX.slice(1)}`,
    `1.0.${HEX.toUpperCase()}`,
    `1.0.bsc_evt_${HEX}`,
    `2.0.${HEX}`,
    `1.01.${HEX}`,
    `1.-0.${HEX}`,
    `1.+5.${HEX}`,
    `1.1e3.${HEX}`,
    `1.1.5.${HEX}`,
    `1.${'9'.repeat(16)}.${HEX}`,
    ` 1.0.${HEX}`,
    `1.0.${HEX}\n`,
    Buffer.from(`1:0:bsc_evt_${HEX}`).toString('base64url'),
  ])
    assert.equal(decodeCursor(bad), null, JSON.stringify(bad));
});

test('a key no cursor can carry is refused when encoding, not written wrong', () => {
  assert.throws(() => encodeCursor({ startMs: 1.5, id: `bsc_evt_${HEX}` }));
  assert.throws(() => encodeCursor({ startMs: 0, id: 'evt_1' }));
});
