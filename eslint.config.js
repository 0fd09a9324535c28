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
  { files: ['server/config.ts', 'test/**', 'bench/**'], rules: { 'no-restricted-properties': 'off' } },
  {
    // These patterns are published in the OpenAPI document, where engines other than ours read them:
    // there \d takes any script's digits and no flag applies, so digits are [0-9] and case is spelled out.
    files: ['server/params.ts'],
    rules: {
      'regexp/prefer-d': 'off',
      'regexp/use-ignore-case': 'off',
      'no-restricted-syntax': ['error', { selector: 'Literal[regex.pattern=/\\\\[dD]/]', message: 'Write [0-9]: \\d matches non-ASCII digits in other engines.' }],
    },
  },
);
