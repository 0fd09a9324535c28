// The README's "Try it" block, run as a newcomer runs it: bash, curl and `npx family-events` against
// `family-events serve` (a real process), with only the port changed. Each curl line states its
// answer after "# →" (status, then a problem code and headers it must carry); every one is checked,
// so a quick start that runs out of quota, or drifts from the server, fails here.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { REPO_ROOT } from '../server/config.ts';
import { NOW_ISO, sampleFixture, type Fixture } from './server/helpers.ts';
import { freePort } from './ports.ts';

const README_PORT = '127.0.0.1:8080';

interface Expectation {
  readonly line: string;
  readonly status: number;
  readonly code: string | null;
  readonly headers: readonly (readonly [string, string])[];
}

/** The fenced sh block under "### Try it", and what each of its curl lines says it answers. */
async function tryIt(): Promise<{ script: string; expected: Expectation[] }> {
  const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const m = /^### Try it\n[\s\S]*?^```sh\n([\s\S]*?)^```/m.exec(readme);
  assert.ok(m?.[1], 'README.md has no ```sh block under "### Try it"');
  const script = m[1];
  const expected: Expectation[] = [];
  for (const line of script.split('\n')) {
    if (!/^curl /.test(line)) continue;
    const said = /# → (\d{3})(?: ([a-z_]+)\b)?([^#]*)$/.exec(line);
    assert.ok(said, `the README's curl line says nothing of its answer: ${line}`);
    const headers = [...(said[3] ?? '').matchAll(/\b([A-Z][A-Za-z-]+): (\S+)/g)].map((h) => [h[1]!, h[2]!] as const);
    expected.push({ line, status: Number(said[1]), code: said[2] ?? null, headers });
  }
  return { script, expected };
}

let fx: Fixture;
let server: ReturnType<typeof spawn>;
let port: number;
let work: string;

before(async () => {
  fx = await sampleFixture();
  work = await mkdtemp(path.join(os.tmpdir(), 'fe-readme-'));
  port = await freePort();
  server = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'family-events.js'), 'serve'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: fx.dataDir, PORT: String(port), ADMIN_PORT: String(await freePort()), FAMILY_EVENTS_NOW: NOW_ISO, POOL_THREADS: '1' },
    stdio: 'ignore',
  });
  for (let i = 0; i < 300; i++) {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (ready) return;
    await delay(100);
  }
  assert.fail('family-events serve never became ready');
});

after(async () => {
  server?.kill('SIGTERM');
  await rm(work, { recursive: true, force: true });
  await fx?.cleanup();
});

test('every curl of the README quick start answers what the README says, with the keys it creates', { skip: spawnSync('curl', ['--version']).error ? 'curl is not installed' : false }, async () => {
  const { script, expected } = await tryIt();
  assert.ok(expected.length >= 10, 'the quick start lost its examples');
  assert.ok(expected.some((e) => e.status === 429), 'the quick start shows where the Community cap ends');
  // curl writes files (-o) into a scratch folder; npx runs in the repository, as a reader's would.
  const prelude = `set -eo pipefail\ncurl() { (cd ${JSON.stringify(work)} && command curl -sS -w '\\n@@status %{http_code}\\n' "$@"); }\n`;
  const run = spawnSync('bash', ['-c', prelude + script.replaceAll(README_PORT, `127.0.0.1:${port}`)], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, DATA_DIR: fx.dataDir },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(run.status, 0, `the block failed: ${run.stderr}`);
  const answers = run.stdout.split(/\n@@status (\d{3})\n/);
  assert.equal((answers.length - 1) / 2, expected.length, `${expected.length} curl lines, ${(answers.length - 1) / 2} answers`);
  expected.forEach((e, i) => {
    const body = answers[2 * i]!;
    const status = Number(answers[2 * i + 1]);
    assert.equal(status, e.status, `${e.line}\n${body.slice(0, 500)}`);
    if (e.code) assert.match(body, new RegExp(`"code":"${e.code}"`), e.line);
    for (const [name, value] of e.headers) assert.match(body, new RegExp(`^${name}: ${value}\\r?$`, 'im'), `${e.line}: no ${name}: ${value}`);
  });
  const csv = await readFile(path.join(work, 'events.csv'), 'utf8');
  assert.ok(csv.split('\r\n').length > 1000, 'the CSV example exports the sample');
});
