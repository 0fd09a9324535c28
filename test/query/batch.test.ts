// A batch (query/db.ts pages: the searches waiting together answered by one statement) answers each
// search as it would be answered alone: same page, total, earliest end and suggestion, on random
// searches of the bundled sample with every filter, both orders and pages past the last match
// (where the total is counted apart, by a statement per shape the branches share).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { SnapshotDb } from '../../query/db.ts';
import type { SearchQuery } from '../../query/protocol.ts';
import { CATEGORY_SLUGS } from '../../core/taxonomy.ts';
import { NOW, sampleFixture, type Fixture } from '../server/helpers.ts';

let fx: Fixture;
let db: SnapshotDb;

before(async () => {
  fx = await sampleFixture();
  db = await SnapshotDb.open({ id: path.basename(fx.build.dir), dir: fx.build.dir });
});

after(async () => {
  db.close();
  await fx.cleanup();
});

function searches(): fc.Arbitrary<{ query: SearchQuery; excluded: string[] }> {
  const rows = fx.rows;
  const cityKeys = [...new Set(rows.map((r) => r.venue_city.toLowerCase().replace(/\s+/g, ' ')))];
  const centre = fc.constantFrom(...rows.map((r) => ({ lat: r.venue_lat, lng: r.venue_lng })));
  const nowMs = NOW.getTime();
  const range = fc.oneof(
    fc.constant('upcoming' as const),
    fc.integer({ min: -3, max: 30 }).map((d) => ({ fromMs: nowMs + d * 86_400_000, toMs: nowMs + (d + 7) * 86_400_000 })),
  );
  return fc
    .record({
      cities: fc.option(fc.subarray(cityKeys, { minLength: 1, maxLength: 3 }), { nil: null }),
      geo: fc.option(
        fc.record({ c: centre, radiusKm: fc.integer({ min: 1, max: 60 }) }).map(({ c, radiusKm }) => ({ lat: c.lat + 0.003, lng: c.lng - 0.002, radiusKm })),
        { nil: null },
      ),
      ages: fc.option(
        fc
          .tuple(fc.integer({ min: 0, max: 18 }), fc.integer({ min: 0, max: 6 }))
          .map(([lo, d]) => ({ loMonths: lo * 12, hiMonths: Math.min(18, lo + d) * 12 + 11 })),
        { nil: null },
      ),
      categories: fc.option(fc.subarray([...CATEGORY_SLUGS], { minLength: 1, maxLength: 3 }), { nil: null }),
      isFree: fc.option(fc.boolean(), { nil: null }),
      range,
      byDistance: fc.boolean(),
      limit: fc.constantFrom(1, 20, 100),
      // Mostly past the last match: where a batch's branches used to read each other's totals.
      offset: fc.constantFrom(0, 20, 5000, 5000),
      excluded: fc.subarray([...CATEGORY_SLUGS], { maxLength: 2 }),
    })
    .map(({ byDistance, excluded, ...q }) => ({ query: { ...q, words: null, sort: byDistance && q.geo ? 'distance' : 'start' }, excluded }));
}

test('a batch answers each search as it is answered alone', async () => {
  const nowMs = NOW.getTime();
  let counted = 0;
  for (const batch of fc.sample(fc.array(searches(), { minLength: 2, maxLength: 6 }), { numRuns: 60, seed: 7 })) {
    const input = batch.map(({ query, excluded }) => ({ query, excluded, nowMs }));
    const together = await db.pages(input);
    const alone = [];
    for (const s of input) alone.push(await db.page(s.query, s.excluded, s.nowMs));
    assert.deepEqual(together, alone, JSON.stringify(batch));
    counted += alone.filter((p) => p.rows.length === 0 && p.total > 0).length;
  }
  assert.ok(counted > 20, `${counted} pages past the last match of a search with matches: the counted-apart totals are tested`);
});
