// Lint = correctness + regex safety. Regexes here run on untrusted upstream text, so
// super-linear backtracking is an error, not a style note.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';

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
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through server/config.ts.' }],
    },
  },
  {
    // Type-aware rules for every TypeScript file (tsconfig.json's include: bin, cli, server, workers,
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
  { files: ['server/config.ts', 'test/**', 'bench/**'], rules: { 'no-restricted-properties': 'off' } },
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
