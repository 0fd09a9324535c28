import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { bundledBayArea, bundledGazetteer } from '../../snapshot/gazetteer.ts';

const NINE = ['Alameda', 'Contra Costa', 'Marin', 'Napa', 'San Francisco', 'San Mateo', 'Santa Clara', 'Solano', 'Sonoma'];
const area = bundledBayArea();

test('sources/bayarea.json covers the nine counties: outline, destination, cities, CDPs and ZIP codes in each', () => {
  assert.deepEqual(area.counties.map((c) => c.name).sort(), NINE);
  const destinations = new Set(bundledGazetteer().cities.map((c) => c.destination));
  for (const county of NINE) {
    assert.ok(destinations.has(area.destinationOf.get(county)!), county);
    const places = area.places.filter((p) => p.county === county);
    assert.ok(
      places.some((p) => p.kind === 'city'),
      `${county}: no city`,
    );
    assert.ok(
      [...area.zips.values()].some((z) => z.county === county),
      `${county}: no ZIP`,
    );
    if (county !== 'San Francisco')
      assert.ok(
        places.some((p) => p.kind === 'cdp'),
        `${county}: no CDP`,
      );
  }
  // The nine counties have 101 incorporated cities and towns.
  assert.equal(area.places.filter((p) => p.kind === 'city').length, 101);
  // Napa, Solano and Sonoma are north-bay with Marin.
  for (const county of ['Marin', 'Napa', 'Solano', 'Sonoma']) assert.equal(area.destinationOf.get(county), 'north-bay');
  // Places reported by the issue as lost.
  for (const name of ['Occidental', 'Santa Rosa', 'Petaluma', 'Yountville', 'Kensington', 'Stanford'])
    assert.ok(
      area.places.some((p) => p.name === name),
      name,
    );
  for (const z of ['94131', '94102', '95405', '95465', '94574']) assert.ok(area.zips.has(z), z);
});

test('the data file records where each input came from, and its generator refuses any other places input', () => {
  const p = area.provenance as {
    places: { repository: string; commit: string; path: string; blob: string };
    counties: { package: string };
    zips: { package: string };
  };
  assert.match(p.places.commit, /^[0-9a-f]{40}$/);
  assert.match(p.places.blob, /^[0-9a-f]{40}$/);
  assert.equal(p.places.repository, 'pcaisse/us-places-geocoder');
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  for (const spec of [p.counties.package, p.zips.package]) {
    const [name, version] = spec.split('@') as [string, string];
    const installed = JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string };
    assert.equal(installed.version, version, spec);
    assert.ok(pkg.dependencies[name] ?? pkg.devDependencies[name], `${name} is no dependency`);
  }
  // Without its places input the generator refuses rather than writing a partial file.
  assert.throws(
    () =>
      execFileSync(process.execPath, ['--import', 'tsx', new URL('../../sources/bayarea.build.ts', import.meta.url).pathname, '/dev/null'], {
        stdio: 'pipe',
      }),
    /blob/,
  );
});
