// Larger synthetic data sets for benchmarks: N events over many destinations, written as real CSV
// feeds plus their own registry and gazetteer extension, so that building them exercises the
// whole pipeline (fetch, parse, normalize, merge, Parquet) exactly as a real build would.
// Deterministic in (N, seed): the same arguments write byte-identical files.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { format } from 'fast-csv';
import { DateTime } from 'luxon';
import { FESTIVALS, SEASONAL, WEEKLY, type Program } from './programs.ts';
import { LA } from '../../core/zone.ts';

export const EVENTS_PER_SOURCE = 5_000;

/** mulberry32: a tiny seeded PRNG; determinism is what matters here, not quality (the benchmarks' mix draws from it too). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SyntheticOptions {
  readonly events: number;
  readonly seed: number;
  readonly outDir: string;
  /** Events are spread over [start, start + days). */
  readonly start: DateTime;
  readonly days: number;
}

const STREETS = ['Main St', 'Oak Ave', 'Park Blvd', 'Mission St', 'Elm St', 'Bay St', 'Hill Rd', 'Lake Dr', 'Pine St', 'Cedar Ave'];
const KINDS = ['library', 'museum', 'zoo', 'parks'] as const;
// Adults-only programs would be dropped by the build, so they are left out: N generated events
// become N snapshot events.
const ALL_PROGRAMS: readonly Program[] = [...Object.values(WEEKLY).flat(), ...Object.values(SEASONAL).flat(), ...FESTIVALS].filter(
  (p) => !/adults|21\+/i.test(`${p.title} ${p.html} ${p.agesField ?? ''}`),
);

/** Writes feeds, registry.json and gazetteer.json into outDir; returns the registry path. */
export async function writeSynthetic(opts: SyntheticOptions, onProgress?: (done: number, total: number) => void): Promise<string> {
  const rand = rng(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const nSources = Math.max(1, Math.ceil(opts.events / EVENTS_PER_SOURCE));
  const nDest = Math.max(5, Math.ceil(opts.events / 40_000));
  const citiesPerDest = 6;
  const venuesPerCity = 8;

  // Destinations on a grid over California; cities scattered around each destination's centre.
  const cities: { name: string; destination: string; county: string; lat: number; lng: number; aliases: string[] }[] = [];
  const venues: { key: string; name: string; organizer: string; street: string; city: string; zip: string; lat: number; lng: number; aliases: string[] }[] = [];
  const cols = Math.ceil(Math.sqrt(nDest));
  for (let d = 0; d < nDest; d++) {
    const destination = `synthetic-metro-${String(d + 1).padStart(3, '0')}`;
    const cLat = 33 + (Math.floor(d / cols) / cols) * 8;
    const cLng = -122.5 + ((d % cols) / cols) * 7;
    for (let c = 0; c < citiesPerDest; c++) {
      const name = `Synth City ${String(d * citiesPerDest + c + 1).padStart(4, '0')}`;
      const lat = cLat + (rand() - 0.5) * 0.4;
      const lng = cLng + (rand() - 0.5) * 0.4;
      cities.push({ name, destination, county: `Synthetic County ${d + 1}`, lat, lng, aliases: [] });
      for (let v = 0; v < venuesPerCity; v++) {
        const kind = KINDS[v % KINDS.length]!;
        const key = `syn-${d + 1}-${c + 1}-${v + 1}`;
        venues.push({
          key,
          name: `${name.replace('Synth City', 'Synth')} ${kind === 'library' ? 'Branch Library' : kind === 'museum' ? "Children's Museum" : kind === 'zoo' ? 'Nature Center' : 'Community Park'} ${v + 1}`,
          organizer: `Synthetic ${kind} district ${d + 1}`,
          street: `${100 + Math.floor(rand() * 9000)} ${pick(STREETS)}`,
          city: name,
          zip: String(90000 + ((d * 97 + c * 13 + v) % 6000)),
          lat: lat + (rand() - 0.5) * 0.05,
          lng: lng + (rand() - 0.5) * 0.05,
          aliases: [],
        });
      }
    }
  }

  const feedsDir = path.join(opts.outDir, 'feeds');
  await mkdir(feedsDir, { recursive: true });
  const sources = [];
  let written = 0;
  for (let s = 0; s < nSources; s++) {
    const id = `synthetic-${String(s + 1).padStart(4, '0')}`;
    const count = Math.min(EVENTS_PER_SOURCE, opts.events - written);
    // Each source covers one destination's venues, as a county system's feed would.
    const dest = s % nDest;
    const own = venues.slice(dest * citiesPerDest * venuesPerCity, (dest + 1) * citiesPerDest * venuesPerCity);
    const file = path.join(feedsDir, `${id}.csv`);
    const csv = format({ headers: ['id', 'title', 'start', 'end', 'venue', 'lat', 'lng', 'categories', 'ages', 'price', 'description', 'url', 'image'] });
    const done = new Promise<void>((resolve, reject) => {
      const chunks: Buffer[] = [];
      csv
        .on('data', (c: Buffer) => chunks.push(c))
        .on('error', reject)
        .on('end', () => void writeFile(file, Buffer.concat(chunks)).then(resolve, reject));
    });
    // Each event gets its own (venue, day, hour) slot, and sources that share a destination use
    // different minutes, so no two synthetic events are the same event and none merge away.
    const lane = Math.floor(s / nDest);
    for (let i = 0; i < count; i++) {
      const p = pick(ALL_PROGRAMS);
      const v = own[i % own.length]!;
      const slot = Math.floor(i / own.length);
      const start = opts.start.plus({ days: slot % opts.days }).set({ hour: 8 + (Math.floor(slot / opts.days) % 12), minute: (lane * 5) % 60 });
      const html = rand() < 0.35;
      csv.write({
        id: `${id}-${i}`,
        title: rand() < 0.01 ? `Canceled: ${p.title}` : p.title,
        start: start.toFormat('yyyy-MM-dd HH:mm'),
        end: start.plus({ minutes: p.minutes }).toFormat('yyyy-MM-dd HH:mm'),
        venue: `${v.name}, ${v.street}, ${v.city}, CA ${v.zip}`,
        lat: rand() < 0.5 ? v.lat.toFixed(6) : '',
        lng: '',
        categories: p.categories.join(','),
        ages: p.agesField ?? '',
        price: p.price ?? '',
        description: html ? p.html : p.html.replace(/<[^>]{0,100}>/g, ''),
        url: `https://synthetic.familyevents.example/${id}/${i}`,
        image: rand() < 0.5 ? `https://synthetic.familyevents.example/img/${p.key}.jpg` : '',
      });
    }
    csv.end();
    await done;
    written += count;
    const kind = KINDS[s % KINDS.length]!;
    sources.push({
      id,
      url: `feeds/${id}.csv`,
      format: 'csv',
      organizer: { name: `Synthetic ${kind} district ${dest + 1}`, url: `https://synthetic-${kind}-${dest + 1}.familyevents.example` },
      default_venue: own[0]!.key,
      destination: own.length ? `synthetic-metro-${String(dest + 1).padStart(3, '0')}` : 'san-francisco',
      attribution: `Synthetic ${kind} district ${dest + 1}`,
      free_by_default: kind === 'library',
      max_bytes: 64 * 1024 * 1024,
    });
    onProgress?.(written, opts.events);
  }
  await writeFile(path.join(opts.outDir, 'gazetteer.json'), JSON.stringify({ cities, venues }));
  const registry = path.join(opts.outDir, 'registry.json');
  await writeFile(registry, JSON.stringify({ gazetteer: 'gazetteer.json', sources }, null, 1));
  return registry;
}

export function syntheticStart(now: Date): DateTime {
  return DateTime.fromJSDate(now, { zone: LA }).startOf('day');
}
