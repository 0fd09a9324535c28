// Regenerates sources/bayarea.json, the nine Bay Area counties' places, ZIP codes and county
// boundaries, from public data:
//   - counties: the `us-atlas` package (Census cartographic county boundaries, 2017, 1:10m);
//   - places: every incorporated place and census-designated place, name and internal point, from
//     the Census TIGER/Line 2024 place files as the us-places-geocoder repository publishes them
//     (static/places.json; its scripts/process_files reads each place's NAME, INTPTLAT, INTPTLON);
//     a place's county is the county whose boundary holds its internal point;
//   - ZIP codes: the `zipcodes` package's table (centroid and the city mail is addressed to), the
//     county again by boundary.
// Run: node --import tsx sources/bayarea.build.ts PLACES_JSON > sources/bayarea.json
// where PLACES_JSON is static/places.json of github.com/pcaisse/us-places-geocoder at the commit
// recorded below (its blob id is checked, so a different file is refused).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';

const require = createRequire(import.meta.url);

const PLACES_SOURCE = {
  repository: 'pcaisse/us-places-geocoder',
  commit: 'fa16f2d4b56c3caf9ae1ba01865bea53e818932f',
  path: 'static/places.json',
  blob: '463ea16bdb8670517eae1945d589c77bb791dd43',
  data: 'U.S. Census Bureau TIGER/Line 2024 places (NAME, INTPTLAT, INTPTLON)',
};

/** The nine counties (FIPS) and the destination each belongs to. */
const NINE: Record<string, { name: string; destination: string }> = {
  '06001': { name: 'Alameda', destination: 'east-bay' },
  '06013': { name: 'Contra Costa', destination: 'east-bay' },
  '06041': { name: 'Marin', destination: 'north-bay' },
  '06055': { name: 'Napa', destination: 'north-bay' },
  '06075': { name: 'San Francisco', destination: 'san-francisco' },
  '06081': { name: 'San Mateo', destination: 'peninsula' },
  '06085': { name: 'Santa Clara', destination: 'south-bay' },
  '06095': { name: 'Solano', destination: 'north-bay' },
  '06097': { name: 'Sonoma', destination: 'north-bay' },
};

// TIGER's place file does not say which places are incorporated; these are the 101 cities and
// towns of the nine counties (the Association of Bay Area Governments' members). Every one must
// be a TIGER place in its county, or the build stops.
const INCORPORATED: Record<string, readonly string[]> = {
  Alameda: [
    'Alameda',
    'Albany',
    'Berkeley',
    'Dublin',
    'Emeryville',
    'Fremont',
    'Hayward',
    'Livermore',
    'Newark',
    'Oakland',
    'Piedmont',
    'Pleasanton',
    'San Leandro',
    'Union City',
  ],
  'Contra Costa': [
    'Antioch',
    'Brentwood',
    'Clayton',
    'Concord',
    'Danville',
    'El Cerrito',
    'Hercules',
    'Lafayette',
    'Martinez',
    'Moraga',
    'Oakley',
    'Orinda',
    'Pinole',
    'Pittsburg',
    'Pleasant Hill',
    'Richmond',
    'San Pablo',
    'San Ramon',
    'Walnut Creek',
  ],
  Marin: ['Belvedere', 'Corte Madera', 'Fairfax', 'Larkspur', 'Mill Valley', 'Novato', 'Ross', 'San Anselmo', 'San Rafael', 'Sausalito', 'Tiburon'],
  Napa: ['American Canyon', 'Calistoga', 'Napa', 'St. Helena', 'Yountville'],
  'San Francisco': ['San Francisco'],
  'San Mateo': [
    'Atherton',
    'Belmont',
    'Brisbane',
    'Burlingame',
    'Colma',
    'Daly City',
    'East Palo Alto',
    'Foster City',
    'Half Moon Bay',
    'Hillsborough',
    'Menlo Park',
    'Millbrae',
    'Pacifica',
    'Portola Valley',
    'Redwood City',
    'San Bruno',
    'San Carlos',
    'San Mateo',
    'South San Francisco',
    'Woodside',
  ],
  'Santa Clara': [
    'Campbell',
    'Cupertino',
    'Gilroy',
    'Los Altos',
    'Los Altos Hills',
    'Los Gatos',
    'Milpitas',
    'Monte Sereno',
    'Morgan Hill',
    'Mountain View',
    'Palo Alto',
    'San Jose',
    'Santa Clara',
    'Saratoga',
    'Sunnyvale',
  ],
  Solano: ['Benicia', 'Dixon', 'Fairfield', 'Rio Vista', 'Suisun City', 'Vacaville', 'Vallejo'],
  Sonoma: ['Cloverdale', 'Cotati', 'Healdsburg', 'Petaluma', 'Rohnert Park', 'Santa Rosa', 'Sebastopol', 'Sonoma', 'Windsor'],
};

// The 1:10m outline cuts the bay shore short: Treasure Island, Alameda's beaches, Sausalito's
// waterfront fall in no county polygon. A point in no county is the nearest county's within this
// distance; a point inside another county's outline (Davis, 2 km from Solano's line) never is.
const SHORE_KM = 6;
// Counties outside the nine are kept when this near them, so that the shore test can tell a
// point off Santa Cruz's coast from one off San Mateo's.
const NEIGHBOUR_KM = 40;
// How far out at sea a city's internal point may lie and still be taken for the county that lists it.
const OFFSHORE_KM = 60;

type Ring = [number, number][];
type Polygons = Ring[][];

const round = (x: number, d: number): number => Math.round(x * 10 ** d) / 10 ** d;

function kmToSegment(lng: number, lat: number, a: [number, number], b: [number, number]): number {
  const kx = 111.32 * Math.cos((lat * Math.PI) / 180);
  const ky = 110.57;
  const ax = (a[0] - lng) * kx,
    ay = (a[1] - lat) * ky,
    bx = (b[0] - lng) * kx,
    by = (b[1] - lat) * ky;
  const dx = bx - ax,
    dy = by - ay;
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2));
  return Math.hypot(ax + t * dx, ay + t * dy);
}

function inRing(lng: number, lat: number, ring: Ring): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!,
      [xj, yj] = ring[j]!;
    if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

const inPolygons = (lng: number, lat: number, ps: Polygons): boolean => ps.some((p) => inRing(lng, lat, p[0]!) && !p.slice(1).some((h) => inRing(lng, lat, h)));

function kmToPolygons(lng: number, lat: number, ps: Polygons): number {
  let best = Infinity;
  for (const p of ps) for (const r of p) for (let i = 1; i < r.length; i++) best = Math.min(best, kmToSegment(lng, lat, r[i - 1]!, r[i]!));
  return best;
}

interface County {
  fips: string;
  name: string;
  polygons: Polygons;
}

function countyAt(counties: readonly County[], lat: number, lng: number): County | undefined {
  const inside = counties.find((c) => inPolygons(lng, lat, c.polygons));
  if (inside) return inside;
  let best: County | undefined;
  let bestKm = SHORE_KM;
  for (const c of counties) {
    const km = kmToPolygons(lng, lat, c.polygons);
    if (km < bestKm) [best, bestKm] = [c, km];
  }
  return best;
}

function main(placesFile: string): void {
  const raw = readFileSync(placesFile);
  const blob = createHash('sha1').update(`blob ${raw.length}\0`).update(raw).digest('hex');
  if (blob !== PLACES_SOURCE.blob)
    throw new Error(`${placesFile}: blob ${blob}, expected ${PLACES_SOURCE.blob} (${PLACES_SOURCE.repository}@${PLACES_SOURCE.commit}:${PLACES_SOURCE.path})`);

  const us = require('us-atlas/counties-10m.json') as Topology<{ counties: GeometryCollection<{ name: string }> }>;
  const all: County[] = feature(us, us.objects.counties)
    .features.filter((f) => String(f.id).startsWith('06'))
    .map((f) => {
      const g = f.geometry as GeoJSON.Polygon | GeoJSON.MultiPolygon;
      const polys = (g.type === 'Polygon' ? [g.coordinates] : g.coordinates) as Polygons;
      return {
        fips: String(f.id),
        name: f.properties.name,
        polygons: polys.map((p) => p.map((r) => r.map(([x, y]) => [round(x, 4), round(y, 4)] as [number, number]))),
      };
    });
  const nine = all.filter((c) => NINE[c.fips]);
  if (nine.length !== 9) throw new Error(`us-atlas: ${nine.length} of the nine counties`);
  const near = all.filter(
    (c) => !NINE[c.fips] && nine.some((n) => c.polygons.some((p) => p[0]!.some(([x, y]) => kmToPolygons(x, y, n.polygons) < NEIGHBOUR_KM))),
  );

  const flat = JSON.parse(raw.toString('utf8')) as (string | number)[];
  const places: [string, string, string, number, number][] = [];
  const seen = new Set<string>();
  for (let i = 0; i < flat.length; i += 3) {
    const label = flat[i] as string;
    if (!label.endsWith(', CA') || / County, CA$/.test(label)) continue;
    const name = label.slice(0, -4);
    const lat = flat[i + 1] as number,
      lng = flat[i + 2] as number;
    const c = countyAt([...nine, ...near], lat, lng);
    // San Francisco's internal point lies at sea, in the county's ocean waters by the Farallones.
    const listed = c
      ? undefined
      : Object.entries(INCORPORATED).find(
          ([county, names]) => names.includes(name) && kmToPolygons(lng, lat, nine.find((n) => NINE[n.fips]!.name === county)!.polygons) < OFFSHORE_KM,
        )?.[0];
    const county = c && NINE[c.fips] ? NINE[c.fips]!.name : listed;
    if (!county) continue;
    places.push([name, county, INCORPORATED[county]!.includes(name) ? 'city' : 'cdp', round(lat, 5), round(lng, 5)]);
    seen.add(`${name}|${county}`);
  }
  for (const [county, names] of Object.entries(INCORPORATED))
    for (const n of names) if (!seen.has(`${n}|${county}`)) throw new Error(`TIGER has no place ${n} in ${county} County`);

  const { codes } = require('zipcodes/lib/codes.js') as {
    codes: Record<string, { zip: string; latitude: number; longitude: number; city: string; state: string }>;
  };
  const hundredths = (x: number): boolean => Math.abs(x * 100 - Math.round(x * 100)) < 1e-6;
  const zips: [string, string, string, number, number][] = [];
  for (const z of Object.values(codes)) {
    if (z.state !== 'CA' || !Number.isFinite(z.latitude) || (hundredths(z.latitude) && hundredths(z.longitude))) continue;
    const c = countyAt([...nine, ...near], z.latitude, z.longitude);
    if (c && NINE[c.fips]) zips.push([z.zip, NINE[c.fips]!.name, z.city, z.latitude, z.longitude]);
  }
  zips.sort((a, b) => a[0].localeCompare(b[0]));
  places.sort((a, b) => a[1].localeCompare(b[1]) || a[0].localeCompare(b[0]));

  const usAtlas = require('us-atlas/package.json') as { version: string };
  const zipcodes = require('zipcodes/package.json') as { version: string };
  const out = {
    provenance: {
      generator: 'sources/bayarea.build.ts',
      places: PLACES_SOURCE,
      counties: {
        package: `us-atlas@${usAtlas.version}`,
        file: 'counties-10m.json',
        data: 'U.S. Census Bureau cartographic boundary files 2017, counties, 1:10,000,000',
      },
      zips: { package: `zipcodes@${zipcodes.version}`, file: 'lib/codes.js', data: 'ZIP code centroids and the city each is addressed to' },
      incorporated: 'the 101 cities and towns of the nine counties (ABAG members), listed in the generator',
      shore_km: SHORE_KM,
    },
    counties: nine.map((c) => ({ fips: c.fips, name: NINE[c.fips]!.name, destination: NINE[c.fips]!.destination, polygons: c.polygons })),
    neighbours: near.map((c) => ({ fips: c.fips, name: c.name, polygons: c.polygons })),
    places,
    zips,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main(process.argv[2] ?? '');
