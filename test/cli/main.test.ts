// The family-events command as an operator runs it: a real process through the package's bin.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../core/config.ts';
import { freePort } from '../ports.ts';

const run = promisify(execFile);
const BIN = path.join(REPO_ROOT, 'bin', 'family-events.js');
let dir: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  try {
    const r = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(dir, 'data'), FAMILY_EVENTS_NOW: '2026-11-21T09:00:00-08:00', ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const ICS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Test//EN',
  'BEGIN:VEVENT',
  'UID:storytime-1@test',
  'DTSTART;TZID=America/Los_Angeles:20261124T103000',
  'DTEND;TZID=America/Los_Angeles:20261124T110000',
  'SUMMARY:Toddler Storytime',
  'DESCRIPTION:<p>Songs &amp; stories. Ages 1-3.</p>',
  'LOCATION:Mission Branch Library\\, 300 Bartlett St\\, San Francisco\\, CA 94110',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:club-1@test',
  'DTSTART;TZID=America/Los_Angeles:20261125T190000',
  'SUMMARY:Evening Book Club (adults only)',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-cli-'));
  await writeFile(path.join(dir, 'branch.ics'), ICS);
  await writeFile(
    path.join(dir, 'registry.json'),
    JSON.stringify({
      sources: [
        {
          id: 'branch',
          url: 'branch.ics',
          format: 'ical',
          organizer: { name: 'San Francisco Public Library', url: 'https://sfpl.org' },
          default_venue: 'sfpl-main',
          destination: 'san-francisco',
          attribution: 'SFPL',
          free_by_default: true,
        },
      ],
    }),
  );
});
after(() => rm(dir, { recursive: true, force: true }));

describe('family-events', () => {
  test('--help on the program and on every subcommand', async () => {
    const top = await cli(['--help']);
    assert.equal(top.code, 0);
    for (const cmd of ['snapshot', 'normalize', 'sample', 'serve']) assert.match(top.stdout, new RegExp(`\\b${cmd}\\b`));
    for (const sub of [['snapshot', 'build'], ['snapshot', 'status'], ['normalize'], ['sample', 'write'], ['serve']]) {
      const r = await cli([...sub, '--help']);
      assert.equal(r.code, 0, sub.join(' '));
      assert.match(r.stdout, /^Usage: family-events /m, sub.join(' '));
    }
  });

  test('bad configuration stops with one line naming the variable', async () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['WEB_BASE_URL', 'not a url'],
      ['FAMILY_EVENTS_NOW', 'yesterday'],
    ] as const) {
      const r = await cli(['snapshot', 'status'], { [name]: value });
      assert.equal(r.code, 2, name);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, new RegExp(name));
    }
  });

  test('bad arguments say what to change', async () => {
    const r = await cli(['snapshot', 'build', '--window-days', 'many']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /--window-days must be a whole number/);
  });

  test('snapshot build --json prints one JSON manifest; status agrees', async () => {
    const b = await cli(['snapshot', 'build', '--sources', path.join(dir, 'registry.json'), '--json']);
    assert.equal(b.code, 0, b.stderr);
    const manifest = JSON.parse(b.stdout) as { id: string; counts: { events: number; dropped: Record<string, number> } };
    assert.equal(b.stdout.trim().split('\n').length, 1);
    assert.equal(manifest.counts.events, 1);
    assert.equal(manifest.counts.dropped['adults_only'], 1);
    const s = await cli(['snapshot', 'status', '--json']);
    assert.equal((JSON.parse(s.stdout) as { id: string }).id, manifest.id);
  });

  test('snapshot build without --json prints the per-source report', async () => {
    const b = await cli(['snapshot', 'build', '--sources', path.join(dir, 'registry.json')]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /^branch\s+ical\s+ok\s+2\s+1\s+1\b/m);
  });

  test('a build whose every source fails exits non-zero and keeps the current snapshot', async () => {
    const before = JSON.parse((await cli(['snapshot', 'status', '--json'])).stdout) as { id: string };
    const broken = path.join(dir, 'broken.json');
    await writeFile(
      broken,
      JSON.stringify({
        sources: [
          {
            id: 'gone',
            url: 'missing.ics',
            format: 'ical',
            organizer: { name: 'X', url: 'https://x.example' },
            destination: 'san-francisco',
            attribution: 'X',
          },
        ],
      }),
    );
    const b = await cli(['snapshot', 'build', '--sources', broken]);
    assert.equal(b.code, 1);
    assert.match(b.stderr, /snapshot build failed: .*current snapshot is unchanged/);
    const afterwards = JSON.parse((await cli(['snapshot', 'status', '--json'])).stdout) as { id: string };
    assert.equal(afterwards.id, before.id);
  });

  test('a registry with a mistake names the entry and field', async () => {
    const bad = path.join(dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify({
        sources: [{ id: 'Bad Id', url: 'x', format: 'ical', organizer: { name: 'X', url: 'https://x.example' }, destination: 'sf', attribution: 'X' }],
      }),
    );
    const b = await cli(['snapshot', 'build', '--sources', bad]);
    assert.equal(b.code, 1);
    assert.match(b.stderr, /sources\.0\.id: must be a lowercase slug/);
  });

  test('normalize prints one served record per line, exactly the record shape', async () => {
    const r = await cli(
      ['normalize', path.join(dir, 'branch.ics'), '--organizer', 'San Francisco Public Library', '--site', 'https://sfpl.org', '--free-by-default'],
      { WEB_BASE_URL: 'https://web.example' },
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    const rec = JSON.parse(lines[0]!) as Record<string, unknown> & {
      venue: { address: string };
      age_range_years: unknown;
      event_url: string;
      description: string;
    };
    assert.equal(rec['title'], 'Toddler Storytime');
    assert.equal(rec['start_datetime'], '2026-11-24T10:30:00-08:00');
    assert.equal(rec.venue.address, '300 Bartlett St, San Francisco, CA 94110');
    assert.equal(rec.description, 'Songs & stories. Ages 1-3.');
    assert.deepEqual(rec.age_range_years, { min_years: 1, max_years: 3 });
    assert.equal(rec.event_url, `https://web.example/events/${String(rec['id'])}`);
    assert.equal(rec['source_url'], null);
    assert.match(r.stderr, /1 records; dropped: adults_only 1/);
  });

  test('normalize on a feed it cannot place asks whose feed it is; a missing file is named', async () => {
    const anon = await cli(['normalize', path.join(dir, 'branch.ics')]);
    assert.equal(anon.code, 1);
    assert.match(anon.stderr, /--source ID .* or --organizer NAME --site URL/);
    const missing = await cli(['normalize', path.join(dir, 'nope.ics'), '--organizer', 'X', '--site', 'https://x.example']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /nope\.ics: no such file/);
  });
});

test('the CLI restates the builder window defaults without loading it; they agree', async () => {
  const cli = await import('../../cli/snapshot.ts');
  const build = await import('../../snapshot/build/build.ts');
  assert.deepEqual([cli.WINDOW_DAYS, cli.LOOKBACK_DAYS], [build.DEFAULT_WINDOW_DAYS, build.DEFAULT_LOOKBACK_DAYS]);
});

test('normalize prints exactly the records a build publishes, across the whole bundled sample', { timeout: 120_000 }, async () => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const { toRecord } = await import('../../core/record.ts');
  const feeds = path.join(dir, 'sample-feeds');
  const env = { DATA_DIR: path.join(dir, 'sample-data'), WEB_BASE_URL: 'https://web.example' };
  const written = await cli(['sample', 'write', '--out', feeds, '--json'], env);
  assert.equal(written.code, 0, written.stderr);
  const files = Object.values((JSON.parse(written.stdout) as { files: Record<string, string> }).files);
  assert.equal(files.length, 50);
  const normalized = await cli(['normalize', ...files], env);
  assert.equal(normalized.code, 0, normalized.stderr);
  const fromNormalize = normalized.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string });

  const built = await cli(['snapshot', 'build', '--json'], env);
  assert.equal(built.code, 0, built.stderr);
  const { id } = JSON.parse(built.stdout) as { id: string };
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const rows = (
    await c.runAndReadAll(`SELECT * EXCLUDE (start_ms, end_ms) FROM read_parquet('${path.join(env.DATA_DIR, 'snapshots', id, 'events.parquet')}')`)
  ).getRowObjectsJson();
  const fromBuild = rows.map((r) => toRecord({ ...r, created_ms: Number(r['created_ms']), updated_ms: Number(r['updated_ms']) } as never, env.WEB_BASE_URL));

  // Change times are a build's (against the snapshot before it); normalize stamps its own run.
  const timeless = <T extends { id: string }>(xs: T[]) =>
    [...xs].sort((a, b) => (a.id < b.id ? -1 : 1)).map((x) => ({ ...x, created_at: undefined, updated_at: undefined }));
  assert.equal(fromNormalize.length, fromBuild.length);
  assert.deepEqual(JSON.parse(JSON.stringify(timeless(fromNormalize))), JSON.parse(JSON.stringify(timeless(fromBuild))));
  for (const r of fromNormalize as unknown as { created_at: string; updated_at: string }[]) assert.equal(r.created_at, r.updated_at);
});

test('serve on an empty DATA_DIR builds the bundled sample, answers searches, and exits 0 on SIGTERM', { timeout: 120_000 }, async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fe-serve-'));
  const [port, adminPort] = [await freePort(), await freePort()];
  // The key first, as an operator would: `keys create --json` prints exactly one JSON object.
  const created = spawnSync(process.execPath, [BIN, 'keys', 'create', '--email', 'dev@example.com', '--org', 'Serve test', '--plan', 'partner', '--json'], {
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir },
    encoding: 'utf8',
  });
  assert.equal(created.status, 0, created.stderr);
  const made = JSON.parse(created.stdout) as { org_id: string; key: string; plan: string };
  assert.deepEqual(Object.keys(made).sort(), ['key', 'org_id', 'plan']);
  assert.match(made.key, /^bsc_live_[0-9A-Za-z]{32,}$/);
  assert.equal(made.plan, 'partner');
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dataDir,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      FAMILY_EVENTS_NOW: '2026-11-21T09:00:00-08:00',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const base = `http://127.0.0.1:${port}`;
    let ready = false;
    for (let i = 0; i < 240 && !ready && child.exitCode === null; i++) {
      ready = await fetch(`${base}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(ready, `never ready; stderr: ${stderr}`);
    assert.match(stderr, /building one from .*registry\.json/);
    const manifest = JSON.parse(await readFile(path.join(dataDir, 'snapshots', 'current', 'manifest.json'), 'utf8')) as {
      id: string;
      counts: { events: number };
    };
    assert.ok(manifest.counts.events > 1000);
    const ready200 = (await (await fetch(`${base}/readyz`)).json()) as { snapshot: string };
    assert.equal(ready200.snapshot, manifest.id);
    assert.equal((await fetch(`${base}/v1/events?limit=5`)).status, 401, 'live routes need a key');
    const res = await fetch(`${base}/v1/events?limit=5`, { headers: { Authorization: `Bearer ${made.key}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { events: unknown[]; total: number };
    assert.equal(body.events.length, 5);
    assert.ok(body.total > 5 && body.total < manifest.counts.events, `total ${body.total}`);
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    await rm(dataDir, { recursive: true, force: true });
  }
});
