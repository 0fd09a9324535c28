// Untrusted upstream documents: random and mutated input to every parser. The only acceptable
// outcomes are a parse result or a FeedFormatError — never another exception (the build would
// still isolate the source, but a TypeError is a parser bug) and never a hang. Time-budgeted.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { REPO_ROOT } from '../../core/config.ts';
import { buildWindow } from '../../snapshot/build/build.ts';
import { parseFeed } from '../../snapshot/parse/index.ts';
import { FeedFormatError } from '../../snapshot/parse/types.ts';
import { FORMATS, type FeedFormat } from '../../snapshot/registry.ts';

const WINDOW = buildWindow(new Date('2026-11-21T17:00:00Z'));
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'feeds');
const seeds = readdirSync(FIXTURES).map((f) => readFileSync(path.join(FIXTURES, f), 'utf8'));
const BUDGET_MS = 4_000;

async function outcome(format: FeedFormat, text: string): Promise<void> {
  try {
    const out = await parseFeed(format, text, { window: WINDOW });
    assert.ok(Array.isArray(out.events) && Number.isInteger(out.noStart));
    for (const e of out.events) assert.ok(e.start.at.isValid, 'every emitted event has a valid start');
  } catch (err) {
    if (!(err instanceof FeedFormatError)) throw new Error(`${format} threw ${(err as Error).name}: ${(err as Error).message}`, { cause: err });
  }
}

// Mutations that real broken feeds exhibit: truncation, spliced fragments, duplicated or deleted slices.
const mutated = fc
  .record({
    seed: fc.constantFrom(...seeds),
    at: fc.nat(),
    len: fc.nat({ max: 200 }),
    insert: fc.string({ maxLength: 40 }),
    op: fc.constantFrom('cut', 'splice', 'delete', 'dup'),
  })
  .map(({ seed, at, len, insert, op }) => {
    const i = at % (seed.length + 1);
    switch (op) {
      case 'cut':
        return seed.slice(0, i);
      case 'splice':
        return seed.slice(0, i) + insert + seed.slice(i);
      case 'delete':
        return seed.slice(0, i) + seed.slice(i + len);
      case 'dup':
        return seed.slice(0, i + len) + seed.slice(i);
    }
  });

describe('parsers under random input', () => {
  for (const format of FORMATS) {
    test(`${format}: mutated real feeds`, async () => {
      await fc.assert(
        fc.asyncProperty(mutated, (text) => outcome(format, text)),
        { interruptAfterTimeLimit: BUDGET_MS, numRuns: 100_000 },
      );
    });
    test(`${format}: arbitrary text`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 2000 }), (text) => outcome(format, text)),
        { interruptAfterTimeLimit: BUDGET_MS / 2, numRuns: 100_000 },
      );
    });
  }
});
