#!/usr/bin/env node
// The published entry point: the CLI as compiled JavaScript in dist/ (`npm run build`, which npm ci
// runs as prepare and npm start runs first). A dist/ built before the last change to one of its
// sources is refused, not run: it would be yesterday's code under today's name (a test run after an
// edit, a node restarted after a pull). The check is one stat per source, listed in tsc's build info.
import { readFileSync, statSync } from 'node:fs';

const info = new URL('../dist/tsconfig.build.tsbuildinfo', import.meta.url);
let stale;
try {
  const built = statSync(info).mtimeMs;
  const { root } = /** @type {{ root: string[] }} */ (JSON.parse(readFileSync(info, 'utf8')));
  // A source moved or deleted since counts as changed.
  const changed = root.find((file) => (statSync(new URL(file, info), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > built);
  if (changed !== undefined) stale = `dist/ was built before the last change to ${changed.replace(/^\.\.\//, '')}`;
} catch {
  stale = 'dist/ is missing';
}
if (stale !== undefined) {
  process.stderr.write(`family-events: ${stale}: run \`npm run build\` (npm ci and npm start build it themselves)\n`);
  process.exit(1);
}
await import('../dist/cli/main.js');
