// Tests and scripts run the TypeScript sources through tsx: `node --import ./test/tsx.js …`
// (production runs dist/, compiled by tsc, and needs no loader).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

// Not `--import tsx`: on Node 20, tsx 4 registers its hooks on the main thread only (in worker
// threads from Node 22.22.3), so a thread whose entry is a .ts file (the ledger's) fails with
// 'Unknown file extension ".ts"'. Threads inherit the parent's execArgv: this file runs in each.
register();

// Tests that start the CLI or the server as a process run bin/family-events.js, that is dist/, which
// refuses to run when older than its sources: bring dist/ up to date first, once per run (in the
// process that was started, not in the test runner's per-file processes, which have
// NODE_TEST_CONTEXT, nor in threads). tsc -b does nothing when nothing changed. Type errors are for
// `npm run typecheck` to report; tsc emits despite them, as tsx would run the sources.
if (isMainThread && process.env.NODE_TEST_CONTEXT === undefined) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: new URL('..', import.meta.url), stdio: 'ignore' });
  } catch {
    // Reported by npm run typecheck; a dist/ that could not be written is reported by the bin.
  }
}
