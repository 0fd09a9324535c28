// Lint = correctness + regex safety. Regexes here run on untrusted upstream text, so
// super-linear backtracking is an error, not a style note.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';
import importX from 'eslint-plugin-import-x';
import { readdirSync } from 'node:fs';
import path from 'node:path';

// The house's floors: each folder of the product, and the folders its files may import. A folder is
// its own files only (server/ does not include server/web/). Nothing imports upward: core/ imports
// nothing of ours, the rooms (ledger/, snapshot/, query/) import the ground floor and what is below
// them in their own room, the server imports the rooms, the CLI everything. The table itself must be
// acyclic (checked below), so no two folders can ever import each other, even through others.
// Tests, benches and build scripts may import anything; nothing of the product imports them.
const LAYERS = {
  core: [],
  ledger: ['core'],
  'ledger/sqlite': ['ledger', 'core'],
  'ledger/postgres': ['ledger', 'core'],
  snapshot: ['core'],
  'snapshot/normalize': ['snapshot', 'core'],
  'snapshot/parse': ['snapshot/normalize', 'snapshot', 'core'],
  'snapshot/sample': ['snapshot/parse', 'snapshot/normalize', 'snapshot', 'core'],
  'snapshot/build': ['snapshot/sample', 'snapshot/parse', 'snapshot/normalize', 'snapshot', 'core'],
  query: ['snapshot', 'core'],
  server: ['query', 'ledger', 'snapshot', 'core'],
  'server/routes': ['server', 'query', 'ledger', 'core'],
  'server/web': ['server', 'core'],
  'server/web/pages': ['server/web', 'server', 'query', 'ledger', 'snapshot', 'core'],
  'server/web/account': ['server/web/pages', 'server/web', 'server', 'ledger', 'core'],
  'server/web/site': ['server/web/account', 'server/web/pages', 'server/web', 'server', 'query', 'ledger', 'snapshot', 'core'],
  'server/start': ['server/web/site', 'server/web', 'server/routes', 'server', 'query', 'ledger/postgres', 'ledger', 'snapshot', 'core'],
  cli: [
    'server/start',
    'server',
    'query',
    'ledger/postgres',
    'ledger/sqlite',
    'ledger',
    'snapshot/build',
    'snapshot/sample',
    'snapshot/parse',
    'snapshot/normalize',
    'snapshot',
    'core',
  ],
};

/** Throws when LAYERS lets a folder reach itself, or names a folder it does not list. */
function assertAcyclic(layers) {
  const state = new Map();
  const visit = (folder, path) => {
    if (!(folder in layers)) throw new Error(`eslint.config.js LAYERS: ${path.join(' → ')} names ${folder}, which is not in the table`);
    if (state.get(folder) === 'done') return;
    if (state.get(folder) === 'open') throw new Error(`eslint.config.js LAYERS has a cycle: ${[...path, folder].join(' → ')}`);
    state.set(folder, 'open');
    for (const below of layers[folder]) visit(below, [...path, folder]);
    state.set(folder, 'done');
  };
  for (const folder of Object.keys(layers)) visit(folder, []);
}
assertAcyclic(LAYERS);

// A product folder missing from the table would be neither held nor known: every folder under the
// product's roots that holds TypeScript must have its line.
for (const root of ['core', 'ledger', 'query', 'snapshot', 'server', 'cli']) {
  for (const entry of readdirSync(path.join(import.meta.dirname, root), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const folder = path
      .relative(import.meta.dirname, entry.parentPath)
      .split(path.sep)
      .join('/');
    if (!(folder in LAYERS)) throw new Error(`eslint.config.js LAYERS has no line for ${folder}/ (${entry.name}): say what it may import`);
  }
}

const folders = Object.keys(LAYERS);
const layerZones = folders.map((folder) => ({
  target: `./${folder}/*.ts`,
  from: folders
    .filter((other) => other !== folder && !LAYERS[folder].includes(other))
    .flatMap((other) => [`./${other}/*.ts`])
    .concat(['./test/**', './bench/**']),
  message: LAYERS[folder].length
    ? `${folder}/ may import only ${LAYERS[folder].map((f) => `${f}/`).join(', ')} (eslint.config.js LAYERS).`
    : `${folder}/ is the ground floor: it imports nothing of ours (eslint.config.js LAYERS).`,
}));

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', '.tmp/**', 'bench/results/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  regexp.configs['flat/recommended'],
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
      'regexp/no-misleading-capturing-group': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through core/config.ts.' }],
    },
  },
  {
    // Type-aware rules for every TypeScript file (tsconfig.json's include: bin, core, ledger, query, snapshot, server, cli,
    // sources, bench, test). The JavaScript files (bin's entry, this file, the browser's site.js) are
    // outside the TypeScript program and get the rules above only.
    // No --cache: eslint's cache keys a file on its own text, and a type-aware finding depends on the
    // files it imports (a function turning async elsewhere leaves its callers' floating promises unreported).
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its rejection (or ends the process on it). One left running on
      // purpose says so with `void` and a comment on why nothing is lost.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test() and describe() return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      // An async function where a callback's result is ignored (an event handler, forEach, a timer).
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // `return p` inside try would leave p's rejection to the caller, past this catch and finally.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // require-await stays off: an async function without await is how an interface's method turns
      // a throw into a rejection, or answers a promise it has nothing to wait for.
      // An assertion that no longer narrows would hide the next change of the type it names.
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      // A union grows (an error code, a ledger op, a format): every switch over it that lets the new
      // member fall into `default` is reported, not only those without a default.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false }],
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    rules: { 'import-x/no-restricted-paths': ['error', { zones: layerZones }] },
  },
  { files: ['core/config.ts', 'test/**', 'bench/**'], rules: { 'no-restricted-properties': 'off' } },
  {
    // These patterns are published in the OpenAPI document, where engines other than ours read them:
    // there \d takes any script's digits and no flag applies, so digits are [0-9] and case is spelled out.
    files: ['server/params.ts'],
    rules: {
      'regexp/prefer-d': 'off',
      'regexp/use-ignore-case': 'off',
      'no-restricted-syntax': [
        'error',
        { selector: 'Literal[regex.pattern=/\\\\[dD]/]', message: 'Write [0-9]: \\d matches non-ASCII digits in other engines.' },
      ],
    },
  },
);
