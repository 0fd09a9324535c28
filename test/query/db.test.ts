// The distance arithmetic the worker does beside DuckDB (query/db.ts): the page's distances
// (greatCircleKm) are the search macro's own (sql/search_macros.sql great_circle_km), and the circle
// test on the haversine term (haversineAt) keeps exactly the points the macro puts within the
// radius, both checked against DuckDB itself on random points of the radii a search may ask.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOUBLE, DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { sqlFile } from '../../core/sql.ts';
import { greatCircleKm, haversineAt } from '../../query/db.ts';

const point = fc.record({ lat: fc.double({ min: -89, max: 89, noNaN: true }), lng: fc.double({ min: -180, max: 180, noNaN: true }) });
/** A second point near the first: within a few hundred km, where searches draw their circles. */
const nearby = fc.record({ dLat: fc.double({ min: -4, max: 4, noNaN: true }), dLng: fc.double({ min: -4, max: 4, noNaN: true }) });

test('greatCircleKm is great_circle_km, and the haversine test keeps what the macro keeps', async () => {
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  await conn.run(sqlFile('search_macros'));
  const st = await conn.prepare(
    `SELECT great_circle_km($lat1, $lng1, $lat2, $lng2) AS km,
            pow(sin(radians($lat2 - $lat1) / 2), 2) + $cos_lat * cos(radians($lat2)) * pow(sin(radians($lng2 - $lng1) / 2), 2) AS hav`,
  );
  const samples = fc.sample(fc.tuple(point, nearby, fc.integer({ min: 1, max: 500 })), { numRuns: 500, seed: 29 });
  let inside = 0;
  for (const [a, d, radiusKm] of samples) {
    const b = { lat: Math.max(-90, Math.min(90, a.lat + d.dLat)), lng: a.lng + d.dLng };
    st.bind(
      { lat1: a.lat, lng1: a.lng, lat2: b.lat, lng2: b.lng, cos_lat: Math.cos((a.lat * Math.PI) / 180) },
      { lat1: DOUBLE, lng1: DOUBLE, lat2: DOUBLE, lng2: DOUBLE, cos_lat: DOUBLE },
    );
    const [km, hav] = (await st.runAndReadAll()).getRows()[0] as [number, number];
    const js = greatCircleKm(a.lat, a.lng, b.lat, b.lng);
    assert.ok(Math.abs(js - km) <= 1e-9 * Math.max(1, km), `${JSON.stringify([a, b])}: ${js} vs ${km}`);
    // A point within a micrometre of the circle may fall either way by rounding; none of these is.
    if (Math.abs(km - radiusKm) < 1e-9) continue;
    assert.equal(hav <= haversineAt(radiusKm), km <= radiusKm, `${JSON.stringify([a, b, radiusKm])}: ${km} km, hav ${hav}`);
    if (km <= radiusKm) inside++;
  }
  assert.ok(inside > 20 && inside < samples.length - 20, `${inside} of ${samples.length} inside: both sides tested`);
  assert.equal(haversineAt(Math.PI * 6371.0088), 1, 'half the globe and more: everything');
  assert.equal(haversineAt(0), 0);
});
