// The benchmark's distinct mix (bench/mix.ts): seeded and repeatable, spread over its kinds, its
// URLs answered 200 by the real server and mostly non-empty, and each row's PostGIS values saying
// what its URL says (so pgbench and wrk ask the same searches).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DateTime } from 'luxon';
import { generateMix, MIX_SIZE, type MixRow } from '../../bench/mix.ts';
import { datasetFacts, type DatasetFacts } from '../../bench/lib/dataset.ts';
import { get, NOW, sampleFixture, startTestServer, type Fixture, type TestServer } from '../server/helpers.ts';

const FAR = Number.MAX_SAFE_INTEGER;

/** Folding as the contract defines it for city names (an independent copy: NFKD, no marks, lower case, single spaces). */
const fold = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();

/** The ISO week of NOW in Los Angeles, shifted by `weeks`: Monday 00:00 to the next Monday minus 1 ms. */
function week(weeks: number): { from: number; to: number } {
  const monday = DateTime.fromJSDate(NOW, { zone: 'America/Los_Angeles' }).startOf('week').plus({ weeks });
  return { from: monday.toMillis(), to: monday.plus({ weeks: 1 }).toMillis() - 1 };
}

/** What a row's URL asks, in search.sql's terms, read back from the URL alone. */
function fromUrl(r: MixRow, facts: DatasetFacts): Omit<MixRow, 'i' | 'kind' | 'path'> {
  const p = new URL(r.path, 'http://x').searchParams;
  const num = (k: string): number => Number(p.get(k));
  const wk = p.get('week');
  // week=current: the week from now on (the contract, amended 2026-11-26), as the server binds it.
  const range = wk === 'current' ? { from: Math.max(week(0).from, facts.nowMs), to: week(0).to } : wk === 'next' ? week(1) : { from: facts.nowMs, to: FAR };
  const ages = p.has('age_min') || p.has('age_max');
  return {
    has_geo: p.has('lat') ? 1 : 0,
    lat: p.has('lat') ? num('lat') : 0,
    lng: p.has('lng') ? num('lng') : 0,
    radius: p.has('radius_km') ? num('radius_km') : 0,
    city_key: p.has('city') ? fold(p.get('city') ?? '') : '',
    word: p.get('q') ?? '',
    has_ages: ages ? 1 : 0,
    age_lo: ages ? num('age_min') * 12 : 0,
    age_hi: ages ? num('age_max') * 12 + 11 : 0,
    cat: p.get('category') ?? '',
    from_ms: range.from,
    to_ms: range.to,
    off: p.has('offset') ? num('offset') : 0,
  };
}

describe('bench mix', () => {
  let fx: Fixture;
  let srv: TestServer;
  let facts: DatasetFacts;

  before(async () => {
    fx = await sampleFixture();
    srv = await startTestServer(fx.dataDir);
    facts = await datasetFacts(path.join(fx.build.dir, 'events.parquet'));
  });
  after(async () => {
    await srv.stop();
    await fx.cleanup();
  });

  it('is the same list for the same seed, and another for another seed', () => {
    const a = generateMix(facts, 7);
    assert.equal(a.length, MIX_SIZE);
    assert.deepEqual(generateMix(facts, 7), a);
    const b = generateMix(facts, 8);
    assert.ok(b.filter((r, i) => r.path !== a[i]?.path).length > MIX_SIZE * 0.9, 'another seed draws other searches');
    // wrk walks the list in order: every search of a run is new to the response cache.
    assert.equal(new Set(a.map((r) => r.path)).size, MIX_SIZE, 'every search differs');
  });

  it('draws every kind near its weight, and the filters the issue names (city, radius, ages, week, q)', () => {
    const mix = generateMix(facts, 11);
    const share = (pred: (r: MixRow) => boolean): number => mix.filter(pred).length / mix.length;
    const weights = { near: 0.35, city: 0.3, q: 0.2, 'city-q': 0.15 };
    for (const [kind, w] of Object.entries(weights))
      assert.ok(Math.abs(share((r) => r.kind === kind) - w) < 0.03, `${kind}: ${share((r) => r.kind === kind)} vs ${w}`);
    for (const param of ['city=', 'radius_km=', 'age_min=', 'week=current', 'week=next', 'q=', 'category=', 'offset=']) {
      assert.ok(share((r) => r.path.includes(param)) > 0.05, `${param} appears in the mix`);
    }
  });

  it('gives PostGIS the values its URL asks for', () => {
    for (const r of generateMix(facts, 13).slice(0, 500)) {
      const expected = fromUrl(r, facts);
      for (const [k, v] of Object.entries(expected)) assert.equal(r[k as keyof typeof expected], v, `${r.path}: ${k}`);
    }
  });

  it('asks searches the server answers, most of them with events', async () => {
    const rows = generateMix(facts, 17).slice(0, 80);
    let found = 0;
    for (const r of rows) {
      const res = await get(srv.base, r.path);
      assert.equal(res.status, 200, `${r.path}: ${res.text.slice(0, 200)}`);
      const body = res.json as { total: number; events: unknown[] };
      if (body.total > 0) found++;
    }
    // Centred on busy venues, cities and frequent words: a mix that mostly finds nothing would
    // favour an index over a scan and misrepresent what users ask.
    assert.ok(found >= rows.length * 0.6, `${found} of ${rows.length} searches found events`);
  });
});
