// The bundled sample, built the way `npm start` builds it, checked record by record against the
// contract's invariants. Each check is computed here from the row, not copied from the builder.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { DateTime } from 'luxon';
import { getDomain } from 'tldts';
import { REPO_ROOT } from '../../core/config.ts';
import { toRecord, type EventRow } from '../../core/record.ts';
import { buildSnapshot, type BuildResult } from '../../snapshot/build/build.ts';
import { CATEGORY_SLUGS } from '../../core/taxonomy.ts';
import { words } from '../../core/text.ts';
import { FESTIVALS, SEASONAL, WEEKLY } from '../../snapshot/sample/programs.ts';

const NOW = new Date('2026-11-21T17:00:00Z');
const WEB = 'https://web.example';
let dataDir: string;
let built: BuildResult;
let rows: EventRow[];

async function readParquet(file: string): Promise<EventRow[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const r = await c.runAndReadAll(`SELECT * EXCLUDE (start_ms, end_ms), start_ms::DOUBLE AS start_ms, end_ms::DOUBLE AS end_ms FROM read_parquet('${file}')`);
  const out = r.getRowObjectsJson() as unknown as EventRow[];
  c.closeSync();
  return out;
}

before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'fe-sample-'));
  built = await buildSnapshot({ dataDir, registryFile: path.join(REPO_ROOT, 'sources', 'registry.json'), now: NOW });
  rows = await readParquet(path.join(built.dir, 'events.parquet'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

describe('bundled sample: coverage', () => {
  test('every source builds; all four formats; at least 30 organizers', async () => {
    const registry = JSON.parse(await readFile(path.join(REPO_ROOT, 'sources', 'registry.json'), 'utf8')) as {
      sources: { format: string; organizer: { name: string } }[];
    };
    assert.deepEqual(
      built.manifest.sources.filter((s) => s.status !== 'ok'),
      [],
    );
    assert.deepEqual(new Set(registry.sources.map((s) => s.format)), new Set(['ical', 'rss', 'jsonld', 'csv']));
    assert.ok(new Set(rows.map((r) => r.organizer)).size >= 30);
    assert.equal(rows.length, built.manifest.counts.events);
  });

  test('at least 2,000 events in the 90 days after the build date', () => {
    const from = NOW.getTime();
    const to = DateTime.fromJSDate(NOW).plus({ days: 90 }).toMillis();
    assert.ok(rows.filter((r) => r.start_ms >= from && r.start_ms <= to).length >= 2000);
  });

  test('the messiness is there and handled: cancellations, merged duplicates, dropped adult events, recurring series', () => {
    assert.ok(rows.some((r) => r.is_canceled));
    assert.ok(built.manifest.counts.merged_across_sources > 0);
    assert.ok((built.manifest.counts.dropped['adults_only'] ?? 0) > 0);
    const weekly = new Map<string, number>();
    for (const r of rows.filter((x) => x.source_id === 'sfpl')) weekly.set(`${r.title}|${r.venue_key}`, (weekly.get(`${r.title}|${r.venue_key}`) ?? 0) + 1);
    assert.ok(
      [...weekly.values()].some((n) => n >= 10),
      'an iCal series expands to weekly occurrences',
    );
    assert.ok(rows.some((r) => r.categories.includes('seasonal')) && rows.some((r) => r.categories.includes('festivals')));
  });

  test('no two rows are the same real-world event', () => {
    const keys = rows.map(
      (r) =>
        `${r.title
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, ' ')
          .trim()}|${r.start_ms}|${r.venue_key}`,
    );
    assert.equal(new Set(keys).size, keys.length);
    assert.equal(new Set(rows.map((r) => r.id)).size, rows.length);
  });
});

describe('bundled sample: every record keeps the contract', () => {
  const TAG_OR_ENTITY = /<\/?[a-z][^>]*>|&(?:#\d+|#x[\da-f]+|[a-z]+);/i;
  const FEED = /\.(?:ics|rss|xml|atom)$|\/(?:feed|rss|ical)(?:\/|$)/i;
  const DESTINATIONS = new Set(['san-francisco', 'east-bay', 'peninsula', 'south-bay', 'north-bay']);

  test('record shape and field rules', () => {
    for (const row of rows) {
      const r = toRecord({ ...row, created_ms: 0, updated_ms: 0 }, WEB);
      const where = `${r.id} ${r.title}`;
      assert.match(r.id, /^bsc_evt_[0-9a-f]{20}$/, where);
      assert.ok(r.title.trim() === r.title && r.title !== '', where);
      assert.match(r.venue.address, /^[^,]+, [^,]+, CA \d{5}$/, where);
      assert.ok(r.venue.address.includes(`, ${r.venue.city}, CA`), where);
      assert.ok(built.manifest.cities.includes(r.venue.city), where);
      assert.ok(r.venue.lat > 36.9 && r.venue.lat < 38.6 && r.venue.lng > -123.1 && r.venue.lng < -121.5, where);
      assert.ok(DESTINATIONS.has(r.destination), where);
      assert.equal(r.source_url, null);
      assert.ok(r.source !== null && /^[a-z0-9.-]+$/.test(r.source) && !r.source.startsWith('www.'), where);
      if (r.organizer_url) assert.ok(!FEED.test(new URL(r.organizer_url).pathname), `${where}: ${r.organizer_url}`);
      if (r.ticket_url) assert.equal(getDomain(r.ticket_url), getDomain(r.organizer_url ?? ''), `${where}: ${r.ticket_url}`);
      if (r.image_url) assert.ok(r.image_url.startsWith('https://'), where);
      for (const text of [r.description, r.summary]) if (text) assert.ok(!TAG_OR_ENTITY.test(text), `${where}: ${text}`);
      if (r.summary) assert.ok(r.summary.length <= 200, where);
      assert.ok(r.categories.length > 0 && r.categories.every((c) => (CATEGORY_SLUGS as readonly string[]).includes(c)), where);
      assert.equal(r.event_url, `${WEB}/events/${r.id}`);
      if (r.age_range) {
        assert.ok(r.age_range.min_months <= r.age_range.max_months && r.age_range.max_months <= 227, where);
        assert.deepEqual(r.age_range_years, { min_years: Math.floor(r.age_range.min_months / 12), max_years: Math.floor(r.age_range.max_months / 12) });
      } else assert.equal(r.age_range_years, null);
      if (r.price) assert.ok(r.price.min === null || r.price.max === null || r.price.min <= r.price.max, where);
    }
  });

  test('datetimes are ISO 8601 with the Los Angeles offset of that instant', () => {
    for (const row of rows) {
      const start = DateTime.fromMillis(row.start_ms, { zone: 'America/Los_Angeles' });
      assert.equal(row.start_datetime, start.toISO({ suppressMilliseconds: true }), row.id);
      if (row.end_datetime) {
        const end = DateTime.fromISO(row.end_datetime, { setZone: true });
        assert.equal(end.toMillis(), row.end_ms, row.id);
        assert.ok(row.end_ms >= row.start_ms, row.id);
        assert.equal(end.offset, DateTime.fromMillis(row.end_ms, { zone: 'America/Los_Angeles' }).offset, row.id);
      } else assert.equal(row.end_ms, row.start_ms);
    }
  });

  test("all_day: exactly the sample's all-day programs, in every feed format, midnight to 23:59:59 of their last day", () => {
    // The generator's own programs say which are all-day; each source writes them its format's way
    // (VALUE=DATE, a date-only startDate or ev:startdate, a CSV date with an empty time cell).
    const programs = [...Object.values(WEEKLY).flat(), ...Object.values(SEASONAL).flat(), ...FESTIVALS];
    const allDayTitles = new Set(programs.filter((p) => p.allDay).map((p) => words(p.title).join(' ')));
    const timedTitles = new Set(programs.filter((p) => !p.allDay).map((p) => words(p.title).join(' ')));
    assert.ok(allDayTitles.size >= 4);
    const formats = new Set<string>();
    const formatOf = new Map(built.manifest.sources.map((s) => [s.id, s.format]));
    let allDay = 0;
    for (const r of rows) {
      const title = words(r.title).join(' ');
      if (allDayTitles.has(title)) {
        assert.equal(r.all_day, true, `${r.id} ${r.title}: an all-day program`);
        formats.add(formatOf.get(r.source_id) ?? '?');
      } else if (timedTitles.has(title)) assert.equal(r.all_day, false, `${r.id} ${r.title}: a timed program`);
      if (!r.all_day) continue;
      allDay++;
      const start = DateTime.fromISO(r.start_datetime, { setZone: true }).setZone('America/Los_Angeles');
      const end = DateTime.fromISO(r.end_datetime ?? '', { setZone: true }).setZone('America/Los_Angeles');
      assert.deepEqual([start.hour, start.minute, start.second], [0, 0, 0], `${r.id}: starts at Pacific midnight`);
      assert.deepEqual([end.hour, end.minute, end.second], [23, 59, 59], `${r.id}: ends at 23:59:59 of its last day`);
    }
    assert.ok(allDay >= 20, `${allDay} all-day rows`);
    assert.deepEqual([...formats].sort(), ['csv', 'ical', 'jsonld', 'rss'], 'all-day events come from every format');
  });

  test('q tokens cover title, venue and organizer words', () => {
    for (const row of rows.slice(0, 500)) {
      for (const text of [row.title, row.venue_name, row.organizer ?? '']) {
        for (const w of text
          .normalize('NFKD')
          .replace(/\p{M}/gu, '')
          .toLowerCase()
          .match(/[\p{L}\p{N}]+/gu) ?? []) {
          assert.ok(row.search_text.includes(` ${w}`), `${row.id}: ${w}`);
        }
      }
    }
  });
});

describe('bundled sample: the Parquet file', () => {
  test('columns and types are exactly sql/snapshot_schema.sql, then the change times', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(await readFile(path.join(REPO_ROOT, 'sql', 'snapshot_schema.sql'), 'utf8'));
    const schema = (await c.runAndReadAll('SELECT column_name, column_type FROM (DESCRIBE events)')).getRowObjectsJson();
    const file = (
      await c.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${path.join(built.dir, 'events.parquet')}'))`)
    ).getRowObjectsJson();
    // Then each row's change times, stamped at the write (sql/snapshot_changes.sql, sql/snapshot_write.sql).
    const changeColumns = [
      { column_name: 'content_hash', column_type: 'VARCHAR' },
      { column_name: 'created_ms', column_type: 'BIGINT' },
      { column_name: 'updated_ms', column_type: 'BIGINT' },
    ];
    assert.deepEqual(file, [...schema, ...changeColumns]);
  });

  test('rows are ordered by (week, destination, latitude, start) so row groups prune by date and place', () => {
    const key = (r: EventRow) => [Math.floor(r.start_ms / 604_800_000), r.destination, r.venue_lat, r.start_ms] as const;
    for (let i = 1; i < rows.length; i++) {
      const a = key(rows[i - 1]!);
      const b = key(rows[i]!);
      const cmp = a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) || a[2] - b[2] || a[3] - b[3];
      assert.ok(cmp <= 0, `row ${i} out of order`);
    }
  });
});
