// The README's "Try it" block, run as a newcomer runs it: bash, curl and `npx family-events` against
// `family-events serve` (a real process), with only the port changed. Each curl line states its
// answer after "# →" (status, then a problem code and headers it must carry); every one is checked,
// so a quick start that runs out of quota, or drifts from the server, fails here. It is run twice,
// as a reader may, and must answer the same the second time and leave no file in the checkout.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { REPO_ROOT } from '../core/config.ts';
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
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: fx.dataDir,
      PORT: String(port),
      ADMIN_PORT: String(await freePort()),
      FAMILY_EVENTS_NOW: NOW_ISO,
      POOL_THREADS: '1',
    },
    stdio: 'ignore',
  });
  for (let i = 0; i < 300; i++) {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
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

/** Untracked files in the checkout (the block must leave none behind: a newcomer's `git status` stays clean). */
function untracked(): Set<string> {
  const st = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(st.status, 0, st.stderr);
  return new Set(
    st.stdout
      .split('\n')
      .filter((l) => l.startsWith('?? '))
      .map((l) => l.slice(3)),
  );
}

test(
  'every curl of the README quick start answers what the README says, with the keys it creates, run after run, leaving the checkout clean',
  { skip: spawnSync('curl', ['--version']).error ? 'curl is not installed' : false },
  async () => {
    const { script, expected } = await tryIt();
    assert.ok(expected.length >= 10, 'the quick start lost its examples');
    assert.ok(
      expected.some((e) => e.status === 429),
      'the quick start shows where the Community cap ends',
    );
    // Run in the repository, as a reader's would (npx finds the bin there); what it saves goes to its $OUT.
    const prelude = `set -eo pipefail\ncurl() { command curl -sS -w '\\n@@status %{http_code}\\n' "$@"; }\n`;
    const before = untracked();
    // Twice on one DATA_DIR: a second run (the same month) answers as the first, the Community lines included.
    for (const round of [1, 2]) {
      const run = spawnSync('bash', ['-c', `${prelude}${script.replaceAll(README_PORT, `127.0.0.1:${port}`)}\necho "@@out $OUT"\n`], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, TMPDIR: work, DATA_DIR: fx.dataDir },
        encoding: 'utf8',
        timeout: 120_000,
      });
      assert.equal(run.status, 0, `run ${round}: the block failed: ${run.stderr}`);
      const out = /\n@@out (\S+)\n$/.exec(run.stdout)?.[1];
      assert.ok(out !== undefined && out.startsWith(work), `run ${round}: the block saves its files under $OUT, a fresh scratch folder (${out})`);
      const answers = run.stdout.slice(0, run.stdout.lastIndexOf('@@out ')).split(/\n@@status (\d{3})\n/);
      assert.equal((answers.length - 1) / 2, expected.length, `run ${round}: ${expected.length} curl lines, ${(answers.length - 1) / 2} answers`);
      expected.forEach((e, i) => {
        const body = answers[2 * i]!;
        const status = Number(answers[2 * i + 1]);
        assert.equal(status, e.status, `run ${round}: ${e.line}\n${body.slice(0, 500)}`);
        if (e.code) assert.match(body, new RegExp(`"code":"${e.code}"`), e.line);
        for (const [name, value] of e.headers) assert.match(body, new RegExp(`^${name}: ${value}\\r?$`, 'im'), `run ${round}: ${e.line}: no ${name}: ${value}`);
      });
      const csv = await readFile(path.join(out, 'events.csv'), 'utf8');
      assert.ok(csv.split('\r\n').length > 1000, 'the CSV example exports the sample');
    }
    // Only files the block names count: other work in this checkout may add files meanwhile.
    const left = [...untracked()].filter((f) => !before.has(f) && script.includes(path.basename(f)));
    assert.deepEqual(left, [], 'the quick start left files in the checkout');
  },
);
