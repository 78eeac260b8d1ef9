// ESLint with typescript-eslint, run by `npm test` (`npm run lint`). The
// packages live in lint/, a workspace of their own: typescript-eslint reads
// code through the classic TypeScript API, which the project's TypeScript 7
// compiler does not have, so lint/ holds TypeScript 6 for it alone.
import { defineConfig, tseslint } from './lint/index.js';

export default defineConfig(
  { ignores: ['dist/**', '.cache/**', 'out/**', 'lint/node_modules/**'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'plugins/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // One program for src, test and plugins (tsconfig.test.json includes all three): type-aware
      // rules on it cost about 45 s of CPU, against several minutes for a program per folder.
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its failure: an un-awaited `expect(...).rejects`
      // passes whatever happens, an async handler's throw goes unheard.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Types describe the domain.
      '@typescript-eslint/no-explicit-any': 'error',
      // tsc's noUnusedLocals misses what a destructuring drops; `_name` says it is dropped on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // No `any` across a module boundary: none passed to a call, none returned (JSON.parse's
    // `any` is narrowed where it is read). Tests read parsed JSON freely.
    files: ['src/**/*.ts', 'plugins/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      // A function reads as a short list of named steps; past this it is several steps in one. (The
      // longest now are data: a schema literal, and commander's declarations of a command family.)
      'max-lines-per-function': ['error', { max: 150, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
);
