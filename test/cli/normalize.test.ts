// family-events normalize for onboarding a feed: --csv-columns, --explain (text and --json), and the
// summary line's counts, through the real bin.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { InvalidArgumentError } from 'commander';
import { parseCsvColumns } from '../../cli/normalize.ts';
import { REPO_ROOT } from '../../core/config.ts';
import { CSV_FIELDS } from '../../snapshot/parse/csv.ts';

const run = promisify(execFile);
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
let dir: string;

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(dir, 'data'), FAMILY_EVENTS_NOW: '2026-11-21T09:00:00-08:00' },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// MissingMaps' columns (missingmaps-mapathons.csv), with Bay Area rows inside the test's window.
const MAPATHONS = `latitude,longitude,date,flag,name,place_name,place_url,time_string,signup_url
37.779,-122.4159,2026-11-24,us,Mapathon at the Main Library,Main Library,,6pm-9pm,
37.779,-122.4159,2026-11-25,us,GIS Day Mapathon,Main Library,,9:30-16:30,
37.779,-122.4159,2026-11-26,us,Mapathon TBD,Main Library,,TBD,
37.779,-122.4159,2026-11-2,us,UNC Humanitarian Mapathon,Main Library,,18:00-20:00,
`;
const COLUMNS = 'title=name,start=date,time=time_string,lat=latitude,lng=longitude,location=place_name';
const ORG = ['--organizer', 'Missing Maps', '--site', 'https://www.missingmaps.org', '--venue', 'sfpl-main'];

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-normalize-'));
  await writeFile(path.join(dir, 'mapathons.csv'), MAPATHONS);
  // The same event in a second file: merged into one record.
  await writeFile(path.join(dir, 'again.csv'), `${MAPATHONS.split('\n')[0]}\n37.779,-122.4159,2026-11-25,us,GIS Day Mapathon,Main Library,,9:30-16:30,\n`);
});
after(async () => rm(dir, { recursive: true, force: true }));

describe('parseCsvColumns', () => {
  test('FIELD=HEADER pairs, headers as written', () => {
    assert.deepEqual(parseCsvColumns('title=name, start=date,time=time_string,location=place_name'), {
      title: 'name',
      start: 'date',
      time: 'time_string',
      location: 'place_name',
    });
  });

  test('an unknown field or a pair without "=" is refused, naming the fields', () => {
    assert.throws(
      () => parseCsvColumns('name=title'),
      (e: unknown) => e instanceof InvalidArgumentError && /"name" is not a field; the fields are uid, title/.test(e.message),
    );
    assert.throws(() => parseCsvColumns('title'), InvalidArgumentError);
    assert.throws(() => parseCsvColumns('title='), InvalidArgumentError);
  });
});

describe('family-events normalize', () => {
  test('--help names every field --csv-columns accepts', async () => {
    const r = await cli(['normalize', '--help']);
    const help = r.stdout.replace(/\s+/g, ' ');
    for (const f of CSV_FIELDS) assert.match(help, new RegExp(`\\b${f}\\b`));
    assert.match(help, /--explain/);
  });

  test('--csv-columns reads a feed the usual headers miss; "6pm-9pm" is a time, "TBD" an all-day event', async () => {
    const r = await cli(['normalize', path.join(dir, 'mapathons.csv'), ...ORG, '--csv-columns', COLUMNS]);
    assert.equal(r.code, 0, r.stderr);
    const recs = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { title: string; start_datetime: string; end_datetime: string | null });
    assert.deepEqual(
      recs.map((x) => [x.title, x.start_datetime, x.end_datetime]),
      [
        ['Mapathon at the Main Library', '2026-11-24T18:00:00-08:00', '2026-11-24T21:00:00-08:00'],
        ['GIS Day Mapathon', '2026-11-25T09:30:00-08:00', '2026-11-25T16:30:00-08:00'],
        ['Mapathon TBD', '2026-11-26T00:00:00-08:00', '2026-11-26T23:59:59-08:00'],
      ],
    );
    assert.match(r.stderr, /^4 items → 3 records; dropped: no_start 1; merged duplicates: 0$/m);
  });

  test('--explain reports every item on stderr, records stay alone on stdout; merged duplicates are counted', async () => {
    const r = await cli(['normalize', path.join(dir, 'mapathons.csv'), path.join(dir, 'again.csv'), ...ORG, '--csv-columns', COLUMNS, '--explain']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 3);
    const lines = r.stderr.trim().split('\n');
    assert.match(lines[0]!, /mapathons\.csv #1 "Mapathon at the Main Library": kept \S+$/);
    assert.match(lines[3]!, /mapathons\.csv #4 "UNC Humanitarian Mapathon": dropped: no_start$/);
    // One of the two listings of the same event is the record; the other is merged into it.
    assert.equal(lines.filter((l) => /#\d+ "GIS Day Mapathon": merged into bsc_evt_\w+ \(same title, start and place\)$/.test(l)).length, 1);
    assert.equal(lines.filter((l) => /#\d+ "GIS Day Mapathon": kept bsc_evt_\w+$/.test(l)).length, 1);
    assert.match(lines.at(-1)!, /^5 items → 3 records; dropped: no_start 1; merged duplicates: 1$/);
  });

  test('--explain --json: one object per item, then the summary', async () => {
    const r = await cli(['normalize', path.join(dir, 'mapathons.csv'), path.join(dir, 'again.csv'), ...ORG, '--csv-columns', COLUMNS, '--explain', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const objs = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const items = objs.slice(0, -1);
    assert.deepEqual(
      items.map((o) => [path.basename(String(o['file'])), o['position'], o['title'], o['title'] === 'GIS Day Mapathon' ? 'kept|merged' : o['outcome']]),
      [
        ['mapathons.csv', 1, 'Mapathon at the Main Library', 'kept'],
        ['mapathons.csv', 2, 'GIS Day Mapathon', 'kept|merged'],
        ['mapathons.csv', 3, 'Mapathon TBD', 'kept'],
        ['mapathons.csv', 4, 'UNC Humanitarian Mapathon', 'no_start'],
        ['again.csv', 1, 'GIS Day Mapathon', 'kept|merged'],
      ],
    );
    const [kept, merged] = [items[1]!, items[4]!].sort((a) => (a['outcome'] === 'kept' ? -1 : 1));
    assert.deepEqual([kept!['outcome'], merged!['outcome']], ['kept', 'merged']);
    assert.equal(merged!['into'], kept!['id']);
    assert.deepEqual(objs.at(-1), { items: 5, records: 3, dropped: { no_start: 1 }, merged_duplicates: 1 });
  });

  test('an unknown --csv-columns field is a usage error', async () => {
    const r = await cli(['normalize', path.join(dir, 'mapathons.csv'), ...ORG, '--csv-columns', 'name=title']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /"name" is not a field/);
  });

  test("a --csv-columns header the file does not have is refused, naming it and listing the file's columns", async () => {
    const r = await cli(['normalize', path.join(dir, 'mapathons.csv'), ...ORG, '--csv-columns', `${COLUMNS},ages=age_group`]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /--csv-columns names "age_group" \(for ages\), which the file does not have; its columns are: latitude, longitude, date, flag, name, place_name, place_url, time_string, signup_url/,
    );
  });

  test('an unknown --venue exits 1, naming it and how to list the venues (it dropped every event as no_location)', async () => {
    const r = await cli([
      'normalize',
      path.join(dir, 'mapathons.csv'),
      '--organizer',
      'Missing Maps',
      '--site',
      'https://www.missingmaps.org',
      '--venue',
      'sfpl-mian',
      '--csv-columns',
      COLUMNS,
    ]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /--venue: no venue "sfpl-mian" in the gazetteer; `family-events gazetteer --venues` lists the venue keys/);
  });

  test('an unknown --destination exits 1, naming it and how to list the destinations; the default needs no check', async () => {
    const r = await cli(['normalize', path.join(dir, 'mapathons.csv'), ...ORG, '--destination', 'sf', '--csv-columns', COLUMNS]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--destination: no destination "sf"; `family-events gazetteer --destinations` lists them/);
  });

  test('family-events gazetteer lists what --venue and --destination accept, and they are accepted', async () => {
    const venues = await cli(['gazetteer', '--venues']);
    assert.equal(venues.code, 0, venues.stderr);
    const keys = venues.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t')[0]!);
    assert.ok(keys.includes('sfpl-main'));
    const dest = await cli(['gazetteer', '--destinations', '--json']);
    const { destinations } = JSON.parse(dest.stdout) as { destinations: string[] };
    assert.ok(destinations.includes('san-francisco') && destinations.includes('east-bay'));
    const ok = await cli([
      'normalize',
      path.join(dir, 'mapathons.csv'),
      ...ORG.slice(0, 4),
      '--venue',
      keys.at(-1)!,
      '--destination',
      destinations.at(-1)!,
      '--csv-columns',
      COLUMNS,
    ]);
    assert.equal(ok.code, 0, ok.stderr);
  });

  test('a feed whose UIDs repeat at other branches and times: every one is a record, and the summary adds up', async () => {
    const ev = (uid: string, start: string, where: string, extra: string[] = []) => [
      'BEGIN:VEVENT',
      `UID:${uid}`,
      `DTSTART;TZID=America/Los_Angeles:${start}`,
      'DURATION:PT45M',
      'SUMMARY:Baby Storytime',
      `LOCATION:${where}`,
      ...extra,
      'END:VEVENT',
    ];
    const mission = 'Mission Branch Library\\, 300 Bartlett St\\, San Francisco\\, CA 94110';
    const excelsior = 'Excelsior Branch Library\\, 4400 Mission St\\, San Francisco\\, CA 94112';
    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//Test//County//EN',
      ...ev('st@county', '20261124T103000', mission),
      ...ev('st@county', '20261124T103000', excelsior),
      ...ev('st@county', '20261201T103000', mission),
      ...ev('st@county', '20261124T103000', mission),
      ...ev('lone@county', '20261202T103000', mission, ['SEQUENCE:1']),
      ...ev('lone@county', '20261202T103000', mission, ['SEQUENCE:0']),
      ...ev('old@county', '20250101T103000', mission),
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    await writeFile(path.join(dir, 'county.ics'), ics);
    const r = await cli(['normalize', path.join(dir, 'county.ics'), ...ORG, '--explain', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 4);
    const objs = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const summary = objs.at(-1) as { items: number; records: number; dropped: Record<string, number>; merged_duplicates: number };
    assert.deepEqual(summary, { items: 7, records: 4, dropped: { outside_window: 1 }, merged_duplicates: 2 });
    const merged = objs.filter((o) => o['outcome'] === 'merged');
    assert.deepEqual(
      merged.map((o) => [o['position'], o['same']]),
      [
        [4, 'uid'],
        [6, 'uid'],
      ],
    );
    for (const m of merged)
      assert.ok(
        objs.some((o) => o['outcome'] === 'kept' && o['id'] === m['into']),
        'merged into a record that is served',
      );
  });
});
