// The real-world corpus: every feed in ../shared/realworld-feeds/ (real calendars from public
// repositories, never copied here) goes through `family-events normalize --explain --json`, as a
// person onboarding a feed runs it. Every record must keep the facts a parent relies on, checked by
// oracles of this file (not the pipeline's own rules), and what each file yields is pinned in
// realworld.expected.json so that a change in it shows up in review. Regenerate that file with
// FE_UPDATE_CORPUS=1 after a deliberate change, and say why in the commit.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { createRequire } from 'node:module';
import { REPO_ROOT } from '../../core/config.ts';
import type { EventRecord } from '../../core/record.ts';

const run = promisify(execFile);
/** The zipcodes package (offline US ZIP centroids; CommonJS, untyped): the oracle of where a city is. */
const zipcodes = createRequire(import.meta.url)('zipcodes') as {
  lookupByName(city: string, state: string): readonly { latitude: number; longitude: number }[];
};
const CORPUS = process.env['FE_REALWORLD_FEEDS'] ?? path.resolve(REPO_ROOT, '..', 'shared', 'realworld-feeds');
const EXPECTED = path.join(path.dirname(new URL(import.meta.url).pathname), 'realworld.expected.json');
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');

/**
 * How each file is normalized: whose feed it is, a "now" inside its dates (the build window is
 * two weeks back to three months ahead), and --venue where the feed names places we cannot locate
 * (most of the corpus is outside the Bay Area: those events must then be refused as not ours).
 */
const FILES: Readonly<Record<string, { organizer: string; site: string; now: string; venue?: string; csvColumns?: string }>> = {
  'bsa-cubscout-pack149.scouting.ics': {
    organizer: 'Cub Scout Pack 149',
    site: 'https://bsapack149.github.io',
    now: '2026-02-20T12:00:00-08:00',
    venue: 'sfpl-main',
  },
  'fablab-cottbus.ai1ec.ics': { organizer: 'FabLab Cottbus', site: 'https://blog.fablab-cottbus.de', now: '2018-04-10T12:00:00-07:00', venue: 'sfpl-main' },
  'fremont-abbey.jsonld.html': {
    organizer: 'Fremont Abbey Arts Center',
    site: 'https://fremontabbey.org',
    now: '2026-05-15T12:00:00-07:00',
    venue: 'sfpl-main',
  },
  'germany-holidays.officeholidays.ics': {
    organizer: 'Office Holidays',
    site: 'https://www.officeholidays.com',
    now: '2014-12-20T12:00:00-08:00',
    venue: 'sfpl-main',
  },
  'hidden-hall.jsonld.html': { organizer: 'Hidden Hall', site: 'https://hiddenhall.com', now: '2026-03-20T12:00:00-07:00', venue: 'sfpl-main' },
  'knco-nevada-county.trumba-rss.xml': { organizer: 'KNCO', site: 'https://knco.com', now: '2025-10-05T12:00:00-07:00', venue: 'sfpl-main' },
  'machbar-potsdam.google.ics': { organizer: 'machBar Potsdam', site: 'https://machbar-potsdam.de', now: '2018-04-20T12:00:00-07:00', venue: 'sfpl-main' },
  'majestic-bay.jsonld.html': { organizer: 'Majestic Bay Theatres', site: 'https://www.majesticbay.com', now: '2026-02-15T12:00:00-08:00', venue: 'sfpl-main' },
  'missingmaps-mapathons.csv': {
    organizer: 'Missing Maps',
    site: 'https://www.missingmaps.org',
    now: '2018-11-10T12:00:00-08:00',
    csvColumns: 'title=title,start=date,time=time_string,lat=latitude,lng=longitude,location=place_name',
  },
  'mohai.ecp.ics': { organizer: 'MOHAI', site: 'https://mohai.org', now: '2026-05-10T12:00:00-07:00', venue: 'sfpl-main' },
  'pike-place-market.jsonld.html': {
    organizer: 'Pike Place Market',
    site: 'https://www.pikeplacemarket.org',
    now: '2026-02-10T12:00:00-08:00',
    venue: 'sfpl-main',
  },
  'royal-room.wp-rss.xml': { organizer: 'The Royal Room', site: 'https://theroyalroomseattle.com', now: '2026-04-20T12:00:00-07:00', venue: 'sfpl-main' },
  'scoutbook-troop485.csv': { organizer: 'Troop 485', site: 'https://scoutbook.scouting.org', now: '2022-08-01T12:00:00-07:00', venue: 'sfpl-main' },
  'scoutbook-troop485.ics': { organizer: 'Troop 485', site: 'https://scoutbook.scouting.org', now: '2022-08-01T12:00:00-07:00', venue: 'sfpl-main' },
  'seattle-gov-citywide.trumba.ics': { organizer: 'Seattle.gov', site: 'https://www.seattle.gov', now: '2026-05-10T12:00:00-07:00', venue: 'sfpl-main' },
  'songkick-maximo-park.jsonld.html': { organizer: 'Songkick', site: 'https://www.songkick.com', now: '2014-07-01T12:00:00-07:00' },
  'songkick-years-and-years.jsonld.html': { organizer: 'Songkick', site: 'https://www.songkick.com', now: '2015-10-20T12:00:00-07:00' },
  'spscc-student-life.trumba.ics': {
    organizer: 'South Puget Sound Community College',
    site: 'https://spscc.edu',
    now: '2023-05-10T12:00:00-07:00',
    venue: 'sfpl-main',
  },
  'united-indians-daybreak-star.ecp.ics': {
    organizer: 'United Indians of All Tribes',
    site: 'https://www.unitedindians.org',
    now: '2026-05-10T12:00:00-07:00',
    venue: 'sfpl-main',
  },
  'wallyhood.google.ics': { organizer: 'Wallyhood', site: 'https://www.wallyhood.org', now: '2025-10-15T12:00:00-07:00', venue: 'sfpl-main' },
};

interface Yield {
  readonly items: number;
  readonly records: number;
  readonly dropped: Readonly<Record<string, number>>;
  readonly merged_duplicates: number;
  readonly with_age_range: number;
  readonly free: number;
  readonly with_price: number;
}

async function normalize(file: string): Promise<{ records: EventRecord[]; summary: Yield }> {
  const o = FILES[file]!;
  const args = [BIN, 'normalize', path.join(CORPUS, file), '--organizer', o.organizer, '--site', o.site, '--json'];
  if (o.venue) args.push('--venue', o.venue);
  if (o.csvColumns) args.push('--csv-columns', o.csvColumns);
  const { stdout, stderr } = await run(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', FAMILY_EVENTS_NOW: o.now },
    maxBuffer: 64 * 1024 * 1024,
  });
  const records = stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as EventRecord);
  const last = stderr.trim().split('\n').at(-1) ?? '';
  const s = JSON.parse(last) as { items: number; records: number; dropped: Record<string, number>; merged_duplicates: number };
  assert.equal(s.records, records.length, `${file}: the summary counts another number of records than were printed`);
  return {
    records,
    summary: {
      items: s.items,
      records: s.records,
      dropped: Object.fromEntries(Object.entries(s.dropped).sort(([a], [b]) => (a < b ? -1 : 1))),
      merged_duplicates: s.merged_duplicates,
      with_age_range: records.filter((r) => r.age_range !== null).length,
      free: records.filter((r) => r.is_free).length,
      with_price: records.filter((r) => r.price !== null).length,
    },
  };
}

// ---------------------------------------------------------------- the oracles

const textOf = (r: EventRecord): string => [r.title, r.summary ?? '', r.description ?? ''].join('\n');

/** Phrases that make an event adults-only, whatever else it says. */
const ADULTS_ONLY = [
  /(?<![\d.])21\s?\+(?!\s?(?:years?|yrs?|months?|mos?)\b)/i,
  /\b18\s?\+\s?only\b/i,
  /\bages?\s21\s(?:and|&)\s(?:up|over|older)\b/i,
  /\bmust be (?:at least )?21\b/i,
  /\b21 years (?:of age )?(?:and|or) (?:over|older)\b/i,
  /\badults? only\b/i,
];

/** What states an audience age: an age word, a unit, a grade, a life stage, or "N+". */
const AGE_PHRASE =
  /\b(?:ages?|years?|yrs?|months?|mos|grades?|toddlers?|bab(?:y|ies)|infants?|preschool(?:ers)?|kids|children|child|teens?|tweens?|youth|families|family|kindergarten|students?|scouts?|cubs?|under \d{1,2})\b|\d\s?\+/i;

/** The Bay Area, generously: the nine counties' extent. */
const BAY = { south: 36.85, north: 38.87, west: -123.65, east: -121.2 };

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** How far a venue may be from the nearest ZIP centroid addressed to its city (a city is a few km across). */
const CITY_KM = 12;

function km(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.sqrt(a));
}

/** Distance from a point to the city of that name in California, by the ZIP data set (not our gazetteer). */
function kmToCity(city: string, lat: number, lng: number): number {
  const zips = zipcodes.lookupByName(city, 'CA');
  return Math.min(Infinity, ...zips.map((z) => km(lat, lng, z.latitude, z.longitude)));
}

function checkRecord(file: string, r: EventRecord, problems: string[]): void {
  const where = `${file} ${r.id} "${r.title}"`;
  const text = textOf(r);
  for (const p of ADULTS_ONLY) if (p.test(text)) problems.push(`${where}: served although it says ${p.exec(text)?.[0]}`);
  if (r.age_range) {
    if (r.age_range.min_months >= 18 * 12) problems.push(`${where}: an age range from 18 years (${r.age_range.min_months} months)`);
    if (!AGE_PHRASE.test(text)) problems.push(`${where}: age range ${r.age_range.min_months}-${r.age_range.max_months} months, and no age phrase`);
  }
  const { lat, lng } = r.venue;
  if (!(lat >= BAY.south && lat <= BAY.north && lng >= BAY.west && lng <= BAY.east)) problems.push(`${where}: at ${lat},${lng}, outside the Bay Area`);
  const toCity = kmToCity(r.venue.city, lat, lng);
  if (!(toCity <= CITY_KM)) problems.push(`${where}: at ${lat},${lng}, ${toCity.toFixed(1)} km from ${r.venue.city}`);
  const tail = `${r.venue.city}, CA`;
  const [, head = '', zip = ''] = /^(.*?)(?: (\d{5}))?$/.exec(r.venue.address) ?? [];
  if (!(head === tail || head.endsWith(`, ${tail}`)) || (zip !== '' && !zip.startsWith('9')))
    problems.push(`${where}: address "${r.venue.address}" does not read "…, ${tail} ZIP"`);
  for (const t of [...r.tags, ...r.categories]) if (!SLUG.test(t) || /\bamp\b/.test(t)) problems.push(`${where}: tag "${t}" is not a clean slug`);
  if (/\bpre-?register:\s*no\b/i.test(text) && r.tags.includes('registration-required'))
    problems.push(`${where}: registration-required, upstream says "Pre-Register: No"`);
  if (r.tags.includes('virtual') && !/\b(?:virtual|online|zoom|webinar|livestream(?:ed)?)\b/i.test(text))
    problems.push(`${where}: virtual, and nothing says so`);
  if (/\\['"]/.test(text)) problems.push(`${where}: a literal backslash survives`);
}

// ---------------------------------------------------------------- the test

const skip = existsSync(CORPUS) ? false : `the corpus is not here (${CORPUS}); it lives in shared/, beside the repository`;

describe('the real-world corpus through family-events normalize', { skip }, () => {
  test('every file: no record breaks a fact a parent relies on, and what each file yields is as pinned', { timeout: 300_000 }, async () => {
    const files = existsSync(CORPUS)
      ? (await import('node:fs'))
          .readdirSync(CORPUS)
          .filter((f) => f !== 'PROVENANCE.md')
          .sort()
      : [];
    assert.deepEqual(files, Object.keys(FILES).sort(), 'every corpus file has its options here, and only corpus files do');
    const got: Record<string, Yield> = {};
    const problems: string[] = [];
    // Two at a time: each is a process of its own, and the machine has two cores.
    const queue = [...files];
    await Promise.all(
      [0, 1].map(async () => {
        for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
          const { records, summary } = await normalize(f);
          got[f] = summary;
          for (const r of records) checkRecord(f, r, problems);
        }
      }),
    );
    assert.deepEqual(problems, [], `${problems.length} records break the invariants:\n${problems.slice(0, 40).join('\n')}`);
    const ordered = Object.fromEntries(files.map((f) => [f, got[f]]));
    if (process.env.FE_UPDATE_CORPUS) await writeFile(EXPECTED, `${JSON.stringify(ordered, null, 2)}\n`);
    const expected = JSON.parse(await readFile(EXPECTED, 'utf8')) as Record<string, Yield>;
    assert.deepEqual(ordered, expected, 'what a real feed yields changed: if that is meant, run with FE_UPDATE_CORPUS=1 and say why in the commit');
  });
});
