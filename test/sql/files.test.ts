// Every sql/*.sql file prepares against the schema it runs on: the builder's files against the
// snapshot schema (with the staging columns), the query worker's files against a Parquet snapshot
// written from that schema. A renamed column or a typo fails here, not in a build or a request.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { REPO_ROOT } from '../../server/config.ts';
import { pathLiteral, sqlFile } from '../../workers/snapshot/sql.ts';

/** Files the query worker runs, in order; search_load creates the table search prepares against. */
const QUERY_FILES = ['search_macros', 'search_load', 'search'];

test('every sql file prepares against the schema it runs on', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-sql-'));
  const parquet = path.join(dir, 'events.parquet');
  const fill = (text: string): string => text.replaceAll('{{target}}', pathLiteral(parquet)).replaceAll('{{parquet}}', pathLiteral(parquet));
  try {
    const names = (await readdir(path.join(REPO_ROOT, 'sql'))).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4));
    assert.ok(names.length >= 11, `found ${names.length} sql files`);

    const build = await (await DuckDBInstance.create(':memory:')).connect();
    await build.run(sqlFile('snapshot_schema'));
    await build.run(sqlFile('snapshot_stage'));
    // The snapshot as published: the schema's columns, in Parquet, for the read-side files.
    await build.run(`COPY (SELECT * EXCLUDE (merge_key, source_rank) FROM events) TO ${pathLiteral(parquet)} (FORMAT parquet)`);
    for (const name of names.filter((n) => !['snapshot_schema', 'snapshot_stage', ...QUERY_FILES].includes(n))) {
      await assert.doesNotReject(build.prepare(fill(sqlFile(name))), name);
    }
    build.closeSync();

    const query = await (await DuckDBInstance.create(':memory:')).connect();
    await query.run(sqlFile('search_macros'));
    await query.run(fill(sqlFile('search_load')));
    await assert.doesNotReject(query.prepare(sqlFile('search')), 'search');
    query.closeSync();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
