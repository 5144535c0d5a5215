// Lint enforces where code may reach (STYLE.md "Layout and import rules") and
// that no promise floats in the main process.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// "A folder is reached only through its index.ts" (ARCHITECTURE.md §2): the
// folders are src-main/core/<capability>/ and every other src-main/<folder>/
// (shell, web, cli). A file outside such a folder that imports a file in it
// other than its index.ts is an error, while editing. The same rule runs in CI
// as test/unit/architecture/folders.test.ts, on the resolved import graph; that
// test checks that FOLDER_RULE equals its own exceptions and that this rule
// finds what it finds. Today's offenders (KNOWN_DEEP_IMPORTS) are listed once,
// in the test file, and read from there.
export const FOLDER_RULE = {
  entryPoints: { 'index.ts': 'shell', 'cli.ts': 'cli' },
  exempt: [],
};

export function knownDeepImports() {
  const test = new URL('./test/unit/architecture/folders.test.ts', import.meta.url);
  const list = /const KNOWN_DEEP_IMPORTS\b[^=]*=\s*\[([^\]]*)\]/.exec(readFileSync(test, 'utf8').replace(/\/\/.*$/gm, ''));
  if (!list) throw new Error('eslint.config.js: no KNOWN_DEEP_IMPORTS list in test/unit/architecture/folders.test.ts');
  return [...list[1].matchAll(/'([^'\n]+)'/g)].map((m) => m[1]);
}

/** { folder, rest } for a path relative to src-main (no extension), as folderOf in test/helpers/imports.ts. */
function folderOf(mainRel, ext) {
  const entry = FOLDER_RULE.entryPoints[mainRel + ext];
  if (entry) return { folder: entry, rest: mainRel };
  const segs = mainRel.split('/');
  if (segs[0] === '..' || segs[0] === '') return undefined;
  const depth = segs[0] === 'core' ? 2 : 1;
  if (segs.length <= depth) return undefined; // a file directly in src-main or core/, or a folder import (its index.ts)
  return { folder: segs.slice(0, depth).join('/'), rest: segs.slice(depth).join('/') };
}

const posix = (p) => p.split(sep).join('/');
const noExt = (p) => p.replace(/\.(tsx?|mts|m?js|jsx)$/, '');

/**
 * For `file` importing `spec`: the folder ('src-main/core/proxy') it reaches
 * into past the folder's index.ts, or undefined when that is allowed.
 * `allow` holds `importer → imported` paths relative to the folder above src-main.
 */
export function deepImportInto(file, spec, allow = new Set()) {
  const at = file.lastIndexOf(`${sep}src-main${sep}`);
  if (at < 0 || !spec.startsWith('.')) return undefined;
  const mainDir = file.slice(0, at + `${sep}src-main`.length);
  const from = folderOf(posix(noExt(relative(mainDir, file))), /\.\w+$/.exec(file)[0]);
  const target = noExt(resolve(dirname(file), spec));
  const ext = ['.ts', '.tsx', '.mts'].find((e) => existsSync(target + e)) ?? '.ts';
  const to = folderOf(posix(relative(mainDir, target)), ext);
  if (!to || to.rest === 'index' || FOLDER_RULE.exempt.includes(to.folder) || from?.folder === to.folder) return undefined;
  const top = dirname(mainDir);
  if (allow.has(`${posix(relative(top, file))} → ${posix(relative(top, target + ext))}`)) return undefined;
  return `src-main/${to.folder}`;
}

const throughIndex = {
  meta: {
    type: 'problem',
    docs: { description: 'A folder of src-main is imported from outside only through its index.ts.' },
    schema: [{ type: 'object', properties: { allow: { type: 'array', items: { type: 'string' } } }, additionalProperties: false }],
    messages: {
      deep: "'{{spec}}' reaches inside {{folder}}/: import it through {{folder}}/index.ts (export what you need there). Rule and exceptions: test/unit/architecture/folders.test.ts.",
    },
  },
  create(context) {
    const allow = new Set(context.options[0]?.allow ?? []);
    const check = (node) => {
      const spec = node?.type === 'Literal' ? node.value : undefined;
      const folder = typeof spec === 'string' ? deepImportInto(context.filename, spec, allow) : undefined;
      if (folder) context.report({ node, messageId: 'deep', data: { spec, folder } });
    };
    return {
      ImportDeclaration: (n) => check(n.source),
      ExportNamedDeclaration: (n) => check(n.source),
      ExportAllDeclaration: (n) => check(n.source),
      ImportExpression: (n) => check(n.source),
      TSImportType: (n) => check(n.argument?.type === 'TSLiteralType' ? n.argument.literal : n.argument),
      TSExternalModuleReference: (n) => check(n.expression),
      CallExpression: (n) => n.callee.type === 'Identifier' && n.callee.name === 'require' && check(n.arguments[0]),
    };
  },
};

export const architecture = { rules: { 'through-index': throughIndex } };

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
    // A plugin rule rather than no-restricted-imports: that one matches the
    // specifier text, not the file it names, and a second no-restricted-imports
    // block would replace the layer bans below for the same files.
    files: ['src-main/**/*.ts'],
    plugins: { architecture },
    rules: { 'architecture/through-index': ['error', { allow: knownDeepImports() }] },
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
            {
              group: ['**/demo', '**/demo/**'],
              message: 'core never imports the demo fleet (src-main/demo): a bridge starts it and hands core its config, as for real hosts.',
            },
          ],
        },
      ],
    },
  },
  {
    // The demo fleet is a fixture of the world beside the bridges (ARCHITECTURE §2): it answers the
    // console's commands with its own vocabulary, so it must not import the console's (telemetry's
    // scripts, lifecycle's commands). Of core it uses the primitives in core/base only.
    files: ['src-main/demo/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'only src-main/shell imports electron.' }],
          patterns: [
            {
              group: ['**/core/*', '!**/core/base'],
              message: 'the demo fleet uses core/base only: its command vocabulary is its own (test/unit/demo/command-vocabulary.test.ts pins it against the console).',
            },
            { group: ['**/shell/**', '**/web/**', '**/cli/**', '**/src-renderer/**'], message: 'the demo fleet does not reach into the bridges or the renderer.' },
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
