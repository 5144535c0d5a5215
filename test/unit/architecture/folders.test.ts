import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { ROOT, deepImports, importGraph, importRefs, rel, type FolderRule, type ImportEdge, type ImportGraph } from '../../helpers/imports.js';

// "Capabilities import each other only through index.ts" (STYLE.md "Layout and
// import rules"), for every folder of src-main: each src-main/core/<capability>/
// and each other src-main/<folder>/ (shell/, web/, cli/). A file outside folder
// X that imports a file inside X other than X/index.ts is an offender. Imports
// are resolved to files (so `../proxy` is proxy/index.ts), and type-only
// imports count like any other: a type is part of a folder's face too.
//
// Allowed, by construction:
// - a file importing its own folder's files, at any depth (lifecycle/drivers/*);
// - files directly in src-main/core (app.ts, api.ts, ports.ts, channel.ts, …):
//   they are in no folder, so anyone may import them — core/ports.ts is how
//   shell and web meet core;
// - cli (or shell, or web) importing core/<capability>/index.ts;
// - tests: only src-main, src-preload and src-renderer are read.
// Exceptions (FOLDER_RULE; eslint.config.js keeps an equal copy, checked below):
// - the bundle entries src-main/index.ts and src-main/cli.ts are one-line
//   launchers and count as files of the bridge they launch (shell/, cli/);
// - no exempt folder. core/base is shared by every capability, but everyone
//   already imports it through base/index.ts, so it gets no licence to be
//   reached into. Nor does the composition root (app.ts, api.ts): the old
//   test let it reach into core/handlers/ and core/wiring/.

const FOLDER_RULE: FolderRule = {
  mainDir: 'src-main',
  entryPoints: { 'index.ts': 'shell', 'cli.ts': 'cli' },
  exempt: [],
};

/**
 * Today's deep imports, being removed (issue #14): `importer → imported`.
 * The test fails on any deep import not listed here and on any listed one that
 * is gone, so the list only shrinks: when one disappears, delete its line.
 * eslint.config.js reads this list (keep it one quoted string a line, no `]`).
 */
const KNOWN_DEEP_IMPORTS: readonly string[] = [
];

const SOURCES = ['src-main', 'src-preload', 'src-renderer'];
const FIXTURE = 'test/fixtures/architecture/faces/src-main';
const fixtureRule = (over: Partial<FolderRule> = {}): FolderRule => ({ ...FOLDER_RULE, mainDir: FIXTURE, ...over });

const key = (e: ImportEdge) => `${rel(e.from)} → ${rel(e.to)}`;
const short = (e: ImportEdge) => key(e).replaceAll(`${FIXTURE}/`, '');
const where = (e: ImportEdge) => `${rel(e.from)}:${e.line} imports '${e.spec}' (${e.kind})`;

interface Architecture {
  FOLDER_RULE: Pick<FolderRule, 'entryPoints' | 'exempt'>;
  knownDeepImports: () => string[];
  deepImportInto: (file: string, spec: string) => string | undefined;
  architecture: ESLint.Plugin;
}
const lintConfig = async (): Promise<Architecture> => (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as Architecture;

/** `file:line` of every deep import the lint rule reports in `patterns`, with no allow-list. */
async function lintDeepImports(patterns: string[]): Promise<string[]> {
  const { architecture } = await lintConfig();
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        // The sources' eslint-disable comments name rules this config lacks.
        linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: 'off' },
        plugins: { architecture },
        rules: { 'architecture/through-index': ['error', { allow: [] }] },
      },
    ],
  });
  const results = await eslint.lintFiles(patterns);
  return results
    .flatMap((r) => r.messages.filter((m) => m.fatal || m.ruleId === 'architecture/through-index').map((m) => `${rel(r.filePath)}:${m.line} ${m.ruleId ?? m.message}`))
    .sort();
}

describe('the folder-face checker (on a planted fixture)', () => {
  const graph = importGraph([FIXTURE]);

  it('finds the three deep imports, type-only included, and nothing that is allowed', () => {
    expect(deepImports(graph, fixtureRule()).map(short).sort()).toEqual([
      'core/app.ts → core/beta/impl.ts', // the composition root is no exception
      'core/beta/impl.ts → core/alpha/sub/deep.ts', // a type-only import
      'shell/main.ts → cli/version.ts', // between bridges
    ]);
  });

  it('applies the entry-point exception and the exempt list', () => {
    expect(deepImports(graph, fixtureRule({ entryPoints: {} })).map(short)).toContain('index.ts → shell/main.ts');
    expect(deepImports(graph, fixtureRule({ exempt: ['core/alpha'] })).map(short)).not.toContain('core/beta/impl.ts → core/alpha/sub/deep.ts');
  });

  it('and the lint rule reports the same imports, on the same lines', async () => {
    const expected = deepImports(graph, fixtureRule()).map((e) => `${rel(e.from)}:${e.line} architecture/through-index`);
    expect(await lintDeepImports([`${FIXTURE}/**/*.ts`])).toEqual(expected.sort());
  });
});

describe('src-main folders are reached only through their index.ts', () => {
  const graph: ImportGraph = importGraph(SOURCES);
  const deep = deepImports(graph, FOLDER_RULE);
  const found = [...new Set(deep.map(key))].sort();

  it('reads the whole tree (so an empty answer means something)', () => {
    expect(graph.files.filter((f) => rel(f).startsWith('src-main/core/')).length).toBeGreaterThan(100);
    expect(graph.missing, 'relative imports that name no file').toEqual([]);
  });

  it('has no deep import beyond KNOWN_DEEP_IMPORTS', () => {
    const added = deep.filter((e) => !KNOWN_DEEP_IMPORTS.includes(key(e)));
    expect(
      added.map(key),
      `New deep imports — export what you need from the folder's index.ts and import that:\n${added.map((e) => `  ${where(e)}`).join('\n')}\n` +
        `All deep imports today, as KNOWN_DEEP_IMPORTS would list them:\n${found.map((k) => `  '${k}',`).join('\n')}`,
    ).toEqual([]);
  });

  it('still has every deep import in KNOWN_DEEP_IMPORTS (delete the ones that are gone)', () => {
    const gone = KNOWN_DEEP_IMPORTS.filter((k) => !found.includes(k));
    expect(gone, 'These deep imports are gone: delete them from KNOWN_DEEP_IMPORTS in test/unit/architecture/folders.test.ts').toEqual([]);
  });

  it('eslint.config.js has the same exceptions, reads this KNOWN_DEEP_IMPORTS, and its rule decides every import the same way', async () => {
    const config = await lintConfig();
    expect(config.FOLDER_RULE).toEqual({ entryPoints: FOLDER_RULE.entryPoints, exempt: FOLDER_RULE.exempt });
    expect(config.knownDeepImports()).toEqual(KNOWN_DEEP_IMPORTS);
    // The rule's decision for every import of src-main (its AST side is proved on the fixture above;
    // linting all of src-main here would cost a parse of every file).
    const byLint = graph.files
      .filter((f) => rel(f).startsWith('src-main/'))
      .flatMap((f) => importRefs(f).flatMap((r) => (config.deepImportInto(f, r.spec) ? [`${rel(f)}:${r.line}`] : [])));
    const byTest = deep.filter((e) => rel(e.from).startsWith('src-main/')).map((e) => `${rel(e.from)}:${e.line}`);
    expect(byLint.sort()).toEqual(byTest.sort());
  });
});
