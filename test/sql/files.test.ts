// Every sql/*.sql file prepares against the schema it runs on: the builder's files against the
// snapshot schema (with the staging columns), the query worker's files against a Parquet snapshot
// written from that schema. A renamed column or a typo fails here, not in a build or a request.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import Database from 'better-sqlite3';
import { REPO_ROOT } from '../../core/config.ts';
import { changesSql, searchSql } from '../../query/db.ts';
import { BROAD_FILTERS, broadSql } from '../../query/broad.ts';
import { ledgerQuery, ledgerQueryNames } from '../../ledger/sqlite/store.ts';
import { pathLiteral, sqlFile, sqlSections } from '../../core/sql.ts';
import { SEARCH_DB, writeSearchDb } from '../../snapshot/search-db.ts';

/** Files the query worker runs; search_db_* create the tables the assembled search prepares against. */
const QUERY_FILES = [
  'search_macros',
  'search_db_events',
  'search_db_words',
  'search_db_broad',
  'search_db_broad_pairs',
  'search',
  'search_count',
  'search_filters',
  'search_suggest',
  'search_broad',
  'search_city_bands',
  'event_by_id',
  'export_excluded',
  'changes',
];
/** Files of several statements (-- query: NAME sections), run in order below: later ones read what earlier ones create. */
const SECTIONED = ['snapshot_changes', 'snapshot_gone'];

test('every sql file prepares against the schema it runs on', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-sql-'));
  const parquet = path.join(dir, 'events.parquet');
  const goneFile = path.join(dir, 'gone.jsonl');
  // The gone list's slots: both snapshots' Parquet, the previous list and its columns (as gone.ts fills them).
  const goneColumns =
    "{'id': 'VARCHAR', 'title': 'VARCHAR', 'start_datetime': 'VARCHAR', 'venue_city': 'VARCHAR', 'categories': 'VARCHAR[]', 'removed_at': 'VARCHAR'}";
  const fill = (text: string): string =>
    text
      .replaceAll('{{target}}', pathLiteral(parquet))
      .replaceAll('{{parquet}}', pathLiteral(parquet))
      .replaceAll('{{current}}', pathLiteral(parquet))
      .replaceAll('{{previous}}', pathLiteral(parquet))
      .replaceAll('{{file}}', pathLiteral(goneFile))
      .replaceAll('{{columns}}', goneColumns);
  try {
    const names = (await readdir(path.join(REPO_ROOT, 'sql'))).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4));
    assert.ok(names.length >= 11, `found ${names.length} sql files`);

    const build = await (await DuckDBInstance.create(':memory:')).connect();
    await build.run(sqlFile('snapshot_schema'));
    await build.run(sqlFile('snapshot_stage'));
    // The snapshot as published (snapshot/build/write.ts): the change times stamped, then the Parquet file.
    const changes = sqlSections('snapshot_changes', 'query');
    await build.run(changes.get('content') as string);
    await build.run(changes.get('fresh') as string, { stamp: 0n });
    await build.run(fill(sqlFile('snapshot_write')));
    await build.run(sqlFile('snapshot_gone_schema'));
    await writeFile(
      goneFile,
      '{"id":"bsc_evt_00000000000000000000","title":"t","start_datetime":"2026-11-21T10:00:00-08:00","venue_city":"Berkeley","categories":[],"removed_at":"2026-11-21T17:00:00.000Z"}\n',
    );
    for (const name of names.filter(
      (n) => !['snapshot_schema', 'snapshot_stage', 'snapshot_gone_schema', ...QUERY_FILES, ...SECTIONED].includes(n) && !n.startsWith('ledger_'),
    )) {
      await assert.doesNotReject(build.prepare(fill(sqlFile(name))), name);
    }
    // Stamping against a previous snapshot: its Parquet has the change times now.
    await build.run('DROP TABLE changes');
    await assert.doesNotReject(build.prepare(fill(changes.get('carried') as string)), 'snapshot_changes carried');
    // The gone list (snapshot/gone.ts): the list, then what is written and pruned from it.
    const gone = sqlSections('snapshot_gone', 'query');
    await build.run(fill(gone.get('list') as string), { removed_at: '2026-11-21T17:00:00.000Z', cutoff_ms: 0n, tombstone_ms: 0n });
    for (const name of ['write', 'pruned']) await assert.doesNotReject(build.prepare(fill(gone.get(name) as string)), `snapshot_gone ${name}`);
    build.closeSync();

    // The search database as the builder writes it, opened read-only as a query worker opens it.
    await writeSearchDb(parquet, dir);
    const query = await (await DuckDBInstance.create(path.join(dir, SEARCH_DB), { access_mode: 'READ_ONLY' })).connect();
    await query.run(sqlFile('search_macros'));
    await assert.doesNotReject(query.prepare(sqlFile('event_by_id')), 'event_by_id');
    await assert.doesNotReject(query.prepare(sqlFile('search_city_bands')), 'search_city_bands');
    await assert.doesNotReject(query.prepare(sqlFile('export_excluded')), 'export_excluded');
    for (const [name, text] of sqlSections('search_suggest', 'query')) await assert.doesNotReject(query.prepare(text), `search_suggest ${name}`);
    // search.sql is assembled from search_filters.sql per combination of filters: prepare them all.
    let prepared = 0;
    for (let mask = 0; mask < 1 << 6; mask++) {
      for (const [cities, words, wordTable] of [
        [0, [], false],
        [1, [1, 3, 2], false],
        [2, [2], false],
        [0, [1, 4], true],
      ] as const) {
        const geo = (mask & 1) !== 0;
        const shape = {
          geo,
          cities,
          ages: (mask & 2) !== 0,
          categories: (mask & 4) !== 0,
          excluded: (mask & 8) !== 0,
          isFree: (mask & 16) !== 0,
          words,
          wordTable,
          byDistance: geo && (mask & 32) !== 0,
        };
        await assert.doesNotReject(query.prepare(searchSql(shape)), `search ${JSON.stringify(shape)}`);
        // A keyset page (a cursor) of the same shape: its QUALIFY and remaining count.
        await assert.doesNotReject(query.prepare(searchSql({ ...shape, after: true })), `search after ${JSON.stringify(shape)}`);
        await assert.doesNotReject(query.prepare(searchSql(shape, true)), `search_count ${JSON.stringify(shape)}`);
        await assert.doesNotReject(query.prepare(changesSql(shape)), `changes ${JSON.stringify(shape)}`);
        prepared++;
      }
    }
    assert.equal(prepared, 256);
    // The broad postings' statements (query/broad.ts), per combination of the filters they carry.
    for (let mask = 0; mask < 1 << BROAD_FILTERS.length; mask++) {
      const filters = BROAD_FILTERS.filter((_, i) => (mask & (1 << i)) !== 0);
      for (const name of ['page', 'stats_open', 'stats_bounded'] as const)
        await assert.doesNotReject(query.prepare(broadSql(name, filters)), `search_broad ${name} ${filters.join(' ')}`);
    }
    query.closeSync();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// The ledger's files are SQLite, not DuckDB: its schemas (accounts, the sign-in codes beside them,
// usage), as AccountsDb.open and UsageDb make them, then every named statement.
test('every ledger statement prepares against the ledger schemas', () => {
  const db = new Database(':memory:');
  try {
    db.exec(sqlFile('ledger_accounts'));
    db.exec(sqlFile('ledger_login_codes'));
    db.exec(sqlFile('ledger_usage'));
    const names = ledgerQueryNames();
    assert.ok(names.length >= 15, `found ${names.length} ledger statements`);
    for (const name of names) assert.doesNotThrow(() => db.prepare(ledgerQuery(name)), name);
    // The shipped plans are seeded by the schema file itself.
    assert.deepEqual(
      (db.prepare(ledgerQuery('plans')).all() as { name: string }[]).map((p) => p.name),
      ['community', 'partner'],
    );
  } finally {
    db.close();
  }
});
