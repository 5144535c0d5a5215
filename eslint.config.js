// Lint enforces where code may reach (STYLE.md "Layout and import rules") and
// that no promise floats in the main process.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const nodeBuiltins = ['node:*', 'fs', 'path', 'os', 'net', 'http', 'https', 'child_process', 'crypto', 'stream', 'url', 'util', 'events'];

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', '.data/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['scripts/**', 'bin/**', '*.config.{js,ts}', 'test/**/*.mjs'], languageOptions: { globals: { ...globals.node, ...globals.browser } } },
  {
    files: ['**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Type-aware rules for the main process: no floating promises.
    files: ['src-main/**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.node.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  {
    files: ['src-main/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'core never imports electron: put Electron code in src-main/shell and hand core a port.' }],
          patterns: [
            { group: ['**/shell/**', '**/web/**', '**/cli/**', '**/src-renderer/**'], message: 'core depends on nothing above it.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src-main/web/**/*.ts', 'src-main/cli/**/*.ts', 'src-main/cli.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'only src-main/shell imports electron.' }],
          patterns: [{ group: ['**/shell/**', '**/src-renderer/**'], message: 'web and cli do not reach into the shell or the renderer.' }],
        },
      ],
    },
  },
  {
    files: ['src-renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'the renderer reaches the core only through its Transport.' }],
          patterns: [
            { group: nodeBuiltins, message: 'the renderer never imports node modules.' },
            { group: ['**/src-main/**'], message: 'the renderer never imports core; use the contract.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src-preload/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'the contract is environment-neutral (zod only).' }],
          patterns: [{ group: [...nodeBuiltins, '**/src-main/**', '**/src-renderer/**'], message: 'the contract imports zod only.' }],
        },
      ],
    },
  },
);
