import { join, resolve, dirname } from 'node:path';
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
  spec.startsWith('.') && resolve(dirname(file), spec).startsWith(join(ROOT, folder));

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
