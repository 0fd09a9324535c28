// Two builds of the server side by side on one machine, in one run: the cached paths (the repeated
// keyed search and its 304 poll) asked of each in alternating rounds, so that whatever this VM's
// noise does to one round it does to both builds' neighbouring rounds. Runs between `npm run bench`
// runs vary more than a change to the cached path is worth (the hello-world alone moved 137k-185k
// req/s in one hour); interleaved rounds of the two builds do not.
//
// Usage: npm run bench:ab -- --base <dir> [--rounds 3] [--duration 4]
//   --base: another checkout, built (`git worktree add ../base <commit> && cd ../base && npm ci && npm run build`);
//   B is this checkout (built first by the npm script). Each server gets its own copy of the 50k set's
//   snapshot (a ledger has one writer).
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BenchError, describeMachine, exitOnError, log, machineInfo, RESULTS_DIR, SCRATCH_DIR, stamp } from './lib/common.ts';
import { datasetFacts, prepareDataset } from './lib/dataset.ts';
import { headerObject, startServer, type Child } from './lib/server.ts';
import { ensureWrk, runWrk } from './lib/wrk.ts';
import { repeatedPath } from './scenarios.ts';

exitOnError();
const { values: opts } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '4' },
    connections: { type: 'string', default: '32' },
  },
});
if (!opts.base) throw new BenchError('--base <dir>: the checkout to compare this one with (built)');
const rounds = Number(opts.rounds);
const durationS = Number(opts.duration);
const connections = Number(opts.connections);

await ensureWrk();
const runDir = path.join(SCRATCH_DIR, `ab-${stamp()}`);
await mkdir(runDir, { recursive: true });
const ds = await prepareDataset('synthetic-50k', runDir);
const facts = await datasetFacts(ds.parquet);

/** A copy of the dataset's snapshots with a ledger of its own. */
async function copyOf(name: string): Promise<string> {
  const dir = path.join(runDir, name);
  await cp(path.join(ds.dataDir, 'snapshots'), path.join(dir, 'snapshots'), { recursive: true });
  return dir;
}

const builds = { A: path.resolve(opts.base), B: null } as const;
const servers: Record<'A' | 'B', Child> = {
  A: await startServer({ dataDir: await copyOf('a'), logFile: path.join(runDir, 'a.log'), logLevel: 'info', poolThreads: 2, repoRoot: builds.A }),
  B: await startServer({ dataDir: await copyOf('b'), logFile: path.join(runDir, 'b.log'), logLevel: 'info', poolThreads: 2 }),
};
const rows: { scenario: string; build: 'A' | 'B'; round: number; rps: number; p99_ms: number | null }[] = [];
try {
  const url = repeatedPath(facts);
  for (const scenario of ['repeated', 'poll-304'] as const) {
    for (let round = 1; round <= rounds; round++) {
      for (const build of ['A', 'B'] as const) {
        const s = servers[build];
        const headers = [...s.headers];
        if (scenario === 'poll-304') {
          const r = await fetch(`${s.base}${url}`, { headers: headerObject(s.headers) });
          await r.arrayBuffer();
          const etag = r.headers.get('etag');
          if (r.status !== 200 || !etag) throw new BenchError(`${build}: ${url} answered ${r.status} without an ETag`);
          headers.push(`If-None-Match: ${etag}`);
        }
        await runWrk({ url: `${s.base}${url}`, connections, durationS: 1, headers });
        const r = await runWrk({ url: `${s.base}${url}`, connections, durationS, headers });
        if (r.non2xx_or_3xx > 0) throw new BenchError(`${build} ${scenario}: ${r.non2xx_or_3xx} error answers`);
        rows.push({ scenario, build, round, rps: r.rps, p99_ms: r.p99_ms });
        log(`${scenario} round ${round} ${build}: ${Math.round(r.rps)} req/s, p99 ${r.p99_ms} ms`);
      }
    }
  }
} finally {
  await Promise.all([servers.A.stop(), servers.B.stop()]);
}

const machine = machineInfo();
console.log(`\n${describeMachine(machine)}\nA = ${builds.A}, B = this checkout; wrk -t1 -c${connections} -d${durationS}s, ${rounds} alternating rounds`);
const summary = (['repeated', 'poll-304'] as const).map((scenario) => {
  const mean = (b: 'A' | 'B'): number => {
    const xs = rows.filter((r) => r.scenario === scenario && r.build === b).map((r) => r.rps);
    return xs.reduce((a, x) => a + x, 0) / xs.length;
  };
  const a = mean('A');
  const b = mean('B');
  console.log(
    `${scenario.padEnd(9)}  A ${Math.round(a).toLocaleString('en-US').padStart(7)} req/s   B ${Math.round(b).toLocaleString('en-US').padStart(7)} req/s   B/A ${(b / a).toFixed(2)}`,
  );
  return { scenario, a_rps: a, b_rps: b, ratio: b / a };
});
await mkdir(RESULTS_DIR, { recursive: true });
const file = path.join(RESULTS_DIR, `ab-${stamp()}.json`);
await writeFile(file, JSON.stringify({ machine, base: builds.A, rounds, durationS, connections, rows, summary }, null, 2));
console.log(`written ${path.relative(process.cwd(), file)}`);
await rm(runDir, { recursive: true, force: true });
