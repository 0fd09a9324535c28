// Every sql/*.sql file prepares against the snapshot schema (with the build's staging columns):
// a renamed column or a typo fails here, not in the middle of a build.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { REPO_ROOT } from '../../server/config.ts';
import { pathLiteral, sqlFile } from '../../workers/snapshot/sql.ts';

test('every sql file prepares against the snapshot schema', async () => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(sqlFile('snapshot_schema'));
  await c.run(sqlFile('snapshot_stage'));
  const names = readdirSync(path.join(REPO_ROOT, 'sql')).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4));
  assert.ok(names.length >= 8);
  for (const name of names.filter((n) => n !== 'snapshot_schema' && n !== 'snapshot_stage')) {
    const text = sqlFile(name).replace('{{target}}', pathLiteral(path.join(os.tmpdir(), 'never-written.parquet')));
    await assert.doesNotReject(c.prepare(text), name);
  }
  c.closeSync();
});
