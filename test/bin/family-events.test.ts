// bin/family-events.js runs dist/ as it was built, or refuses: never a dist/ older than its sources.
// The bin is copied beside a dist/ and sources of the test's own, so the checkout's are not touched.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { REPO_ROOT } from '../../core/config.ts';

let dir: string;
const BUILT = new Date('2026-11-20T12:00:00Z');

function bin(): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(dir, 'bin', 'family-events.js'), '--help'], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A dist/ built at BUILT from src/a.ts and src/b.ts, whose CLI prints what it was given. */
async function build(): Promise<void> {
  await rm(path.join(dir, 'dist'), { recursive: true, force: true });
  await mkdir(path.join(dir, 'dist', 'cli'), { recursive: true });
  await writeFile(path.join(dir, 'dist', 'cli', 'main.js'), "process.stdout.write(`dist ran: ${process.argv.slice(2).join(' ')}\\n`);\n");
  for (const f of ['a.ts', 'b.ts']) await utimes(path.join(dir, 'src', f), new Date(BUILT.getTime() - 60_000), new Date(BUILT.getTime() - 60_000));
  const info = path.join(dir, 'dist', 'tsconfig.build.tsbuildinfo');
  await writeFile(info, JSON.stringify({ root: ['../src/a.ts', '../src/b.ts'], version: '5.9.3' }));
  await utimes(info, BUILT, BUILT);
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-bin-'));
  await mkdir(path.join(dir, 'bin'));
  await mkdir(path.join(dir, 'src'));
  await copyFile(path.join(REPO_ROOT, 'bin', 'family-events.js'), path.join(dir, 'bin', 'family-events.js'));
  await writeFile(path.join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
  await writeFile(path.join(dir, 'src', 'b.ts'), 'export const b = 2;\n');
});
after(() => rm(dir, { recursive: true, force: true }));

test('a dist/ built after its sources runs, with the arguments', async () => {
  await build();
  const r = bin();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'dist ran: --help\n');
});

test('no dist/: says to build, runs nothing', async () => {
  await rm(path.join(dir, 'dist'), { recursive: true, force: true });
  const r = bin();
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'family-events: dist/ is missing: run `npm run build` (npm ci and npm start build it themselves)\n');
});

test('a source changed since the build: names it, runs nothing', async () => {
  await build();
  const later = new Date(BUILT.getTime() + 1000);
  await utimes(path.join(dir, 'src', 'b.ts'), later, later);
  const r = bin();
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^family-events: dist\/ was built before the last change to src\/b\.ts: run `npm run build`/);
});

test('a source moved or deleted since the build counts as changed', async () => {
  await build();
  await rm(path.join(dir, 'src', 'a.ts'));
  const r = bin();
  assert.equal(r.status, 1);
  assert.match(r.stderr, /before the last change to src\/a\.ts/);
  await writeFile(path.join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
});
