import { join, resolve, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { ROOT, importsOf, rel, sourceFiles } from '../../helpers/imports.js';

// The layering of ARCHITECTURE.md §2, checked on the real import graph (lint
// enforces the same rules while editing; this test is what CI cannot skip).
// "Only through index.ts" is folders.test.ts, "no cycles" is cycles.test.ts.

function offenders(dir: string, isBad: (spec: string, file: string) => boolean): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(dir)) {
    for (const spec of importsOf(file)) if (isBad(spec, file)) found.push(`${rel(file)} imports ${spec}`);
  }
  return found;
}

const resolvesInto = (spec: string, file: string, folder: string) =>
  spec.startsWith('.') && (resolve(dirname(file), spec) + '/').startsWith(join(ROOT, folder) + '/');

/** A core file importing the demo fleet, or anything outside it. */
const coreImportsDemo = (s: string, f: string) => resolvesInto(s, f, 'src-main/demo');
/** A demo file importing core other than its primitives (core/base/index.ts), or a bridge, electron or the renderer. */
const demoImportsConsole = (s: string, f: string) =>
  (resolvesInto(s, f, 'src-main/core') && resolve(dirname(f), s).replace(/\.js$/, '') !== join(ROOT, 'src-main/core/base/index')) ||
  ['src-main/shell', 'src-main/web', 'src-main/cli', 'src-renderer'].some((d) => resolvesInto(s, f, d)) ||
  s === 'electron';

/** eslint.config.js's no-restricted-imports verdicts on one line of `code` in a file at `path`, without the type-aware rules. */
async function restrictedImports(path: string, code: string): Promise<string[]> {
  const config = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as { default: Linter.Config[] };
  const layers = config.default.filter((c) => c.rules?.['no-restricted-imports'] !== undefined);
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...layers],
  });
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('import rules', () => {
  it('finds the files it checks (the checker itself works)', () => {
    expect(sourceFiles('src-main/core').length).toBeGreaterThan(10);
    expect(importsOf(join(ROOT, 'src-main/shell/main.ts'))).toContain('electron');
  });

  it('src-main/core never imports electron', () => {
    expect(offenders('src-main/core', (s) => s === 'electron' || s.startsWith('electron/'))).toEqual([]);
  });

  it('src-main/shell is the only place in main that imports electron', () => {
    const bad = offenders('src-main', (s, f) => (s === 'electron' || s.startsWith('electron/')) && !rel(f).startsWith('src-main/shell/'));
    expect(bad).toEqual([]);
  });

  it('core does not reach up into shell, web or cli', () => {
    expect(
      offenders('src-main/core', (s, f) => ['src-main/shell', 'src-main/web', 'src-main/cli'].some((d) => resolvesInto(s, f, d))),
    ).toEqual([]);
  });

  it('core never imports the demo fleet (src-main/demo)', () => {
    expect(offenders('src-main/core', coreImportsDemo)).toEqual([]);
  });

  it('the demo fleet imports of core only its primitives (core/base), and no bridge, electron or renderer', () => {
    expect(sourceFiles('src-main/demo').length).toBeGreaterThan(10);
    expect(offenders('src-main/demo', demoImportsConsole)).toEqual([]);
  });

  it('those two checks and the lint rules find a planted import (so an empty answer means something)', async () => {
    const app = join(ROOT, 'src-main/core/app.ts');
    const demoExec = join(ROOT, 'src-main/demo/exec.ts');
    expect(coreImportsDemo('../demo/index.js', app)).toBe(true);
    expect(coreImportsDemo('./demo-things.js', app)).toBe(false);
    expect(demoImportsConsole('../core/telemetry/index.js', demoExec)).toBe(true);
    expect(demoImportsConsole('../core/app.js', demoExec)).toBe(true);
    expect(demoImportsConsole('../core/base/index.js', demoExec)).toBe(false);
    expect(demoImportsConsole('./gpu-commands.js', demoExec)).toBe(false);
    expect(await restrictedImports('src-main/core/planted.ts', "import { startDemoFleet } from '../demo/index.js';\nexport const x = startDemoFleet;\n")).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*core never imports the demo fleet/),
    ]);
    const demo = await restrictedImports(
      'src-main/demo/planted.ts',
      "import { GPU_DETECT_COMMAND } from '../core/telemetry/index.js';\nimport { AppError } from '../core/base/index.js';\nexport const x = [GPU_DETECT_COMMAND, AppError];\n",
    );
    expect(demo).toEqual([expect.stringMatching(/^no-restricted-imports: '\.\.\/core\/telemetry\/index\.js'.*demo fleet uses core\/base only/)]);
  });

  it('the renderer never imports node modules, electron or core', () => {
    const bad = offenders(
      'src-renderer',
      (s, f) =>
        s.startsWith('node:') ||
        ['fs', 'path', 'os', 'net', 'http', 'child_process', 'crypto', 'electron'].includes(s) ||
        resolvesInto(s, f, 'src-main'),
    );
    expect(bad).toEqual([]);
  });

  it('the contract imports zod and itself only', () => {
    const bad = offenders('src-preload/contract', (s) => !(s === 'zod' || s.startsWith('./')));
    expect(bad).toEqual([]);
  });
});
