// Snapshot build throughput: builds the bundled sample and/or a synthetic set into a temp DATA_DIR
// and reports events/s, phase timings, Parquet size and peak RSS, with the machine it ran on.
// Usage: npm run bench:build -- [--events N] [--seed S] [--sample] [--keep]
// Writes the same figures as JSON to bench/results/snapshot-build-<date>.json.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DateTime } from 'luxon';
import { REPO_ROOT } from '../core/config.ts';
import { buildSnapshot } from '../snapshot/build/build.ts';
import { syntheticStart, writeSynthetic } from '../snapshot/sample/synthetic.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string' },
    seed: { type: 'string', default: '1' },
    sample: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const now = new Date('2026-11-21T17:00:00Z');
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 100);

interface Figure {
  set: string;
  events: number;
  generate_s: number | null;
  build_s: number;
  events_per_s: number;
  parquet_mib: number;
  sources: number;
}
const figures: Figure[] = [];

async function run(set: string, registryFile: string, dataDir: string, generateS: number | null): Promise<void> {
  const t = performance.now();
  const { manifest } = await buildSnapshot({ dataDir, registryFile, now });
  const s = (performance.now() - t) / 1000;
  figures.push({
    set,
    events: manifest.counts.events,
    generate_s: generateS,
    build_s: +s.toFixed(2),
    events_per_s: Math.round(manifest.counts.events / s),
    parquet_mib: +(manifest.files.events_bytes / 2 ** 20).toFixed(2),
    sources: manifest.counts.sources,
  });
}

const tmp = await mkdtemp(path.join(os.tmpdir(), 'fe-bench-'));
try {
  if (values.sample || !values.events) await run('bundled sample', path.join(REPO_ROOT, 'sources', 'registry.json'), path.join(tmp, 'sample'), null);
  if (values.events) {
    const n = Number(values.events);
    const dir = path.join(tmp, 'synthetic');
    const t = performance.now();
    const registry = await writeSynthetic({ events: n, seed: Number(values.seed), outDir: dir, start: syntheticStart(now), days: 90 });
    await run(`synthetic ${n}`, registry, path.join(tmp, 'data'), +((performance.now() - t) / 1000).toFixed(2));
  }
} finally {
  clearInterval(sampler);
  if (!values.keep) await rm(tmp, { recursive: true, force: true });
}

const machine = {
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  mem_gib: +(os.totalmem() / 2 ** 30).toFixed(1),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
};
console.table(figures);
console.log(`peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB; ${machine.cpus}× ${machine.cpu}, ${machine.mem_gib} GiB, Node ${machine.node}`);
const out = path.join(REPO_ROOT, 'bench', 'results', `snapshot-build-${DateTime.now().toFormat("yyyyLLdd'T'HHmmss")}.json`);
await writeFile(out, `${JSON.stringify({ machine, peak_rss_mib: Math.round(peakRss / 2 ** 20), figures }, null, 2)}\n`);
console.log(`written ${path.relative(REPO_ROOT, out)}`);
