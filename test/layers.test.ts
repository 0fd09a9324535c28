// The house's floors hold (eslint.config.js LAYERS, enforced by import-x/no-restricted-paths): a
// file that imports upward or sideways is an error of `npm run lint`, and one that imports downward
// is not. Each case lints a real file's path with one import added, through the repository's own
// ESLint configuration; the checkout is not touched.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import { REPO_ROOT } from '../core/config.ts';

// The repository's configuration, with only the layering rule run: it needs no type information,
// so the TypeScript program typed rules would build (~10 s) is not built.
const eslint = new ESLint({
  cwd: REPO_ROOT,
  ruleFilter: ({ ruleId }) => ruleId === 'import-x/no-restricted-paths',
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
});

/** The layering findings for `file` with `line` put before its own text. */
async function layerFindings(file: string, line: string): Promise<string[]> {
  const text = `${line}\n${readFileSync(path.join(REPO_ROOT, file), 'utf8')}`;
  const [result] = await eslint.lintText(text, { filePath: path.join(REPO_ROOT, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message);
}

test('the ground floor imports nothing of ours: core/ importing the server is an error', async () => {
  const found = await layerFindings('core/record.ts', "import '../server/start/main.ts';");
  assert.equal(found.length, 1, String(found));
  assert.match(found[0] ?? '', /core\/ is the ground floor/);
});

test('rooms do not import each other: the ledger importing the snapshot builder is an error', async () => {
  const found = await layerFindings('ledger/rules.ts', "import '../snapshot/store.ts';");
  assert.equal(found.length, 1, String(found));
  assert.match(found[0] ?? '', /ledger\/ may import only core\//);
});

test('nothing imports upward inside a room: the account pages importing the site is an error', async () => {
  assert.equal((await layerFindings('server/web/account/index.ts', "import '../site/index.ts';")).length, 1);
  assert.equal((await layerFindings('snapshot/normalize/price.ts', "import '../build/build.ts';")).length, 1);
});

test('the product never imports a test or a bench', async () => {
  assert.equal((await layerFindings('server/http.ts', "import '../test/server/helpers.ts';")).length, 1);
});

test('importing downward is allowed: the server start-up importing the routes, a parser the normalizer', async () => {
  assert.deepEqual(await layerFindings('server/start/main.ts', "import '../routes/events.ts';"), []);
  assert.deepEqual(await layerFindings('snapshot/parse/csv.ts', "import '../normalize/price.ts';"), []);
});
