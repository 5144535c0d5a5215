import { join, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, importsOf, rel, sourceFiles } from '../../helpers/imports.js';

// The layering of ARCHITECTURE.md §2, checked on the real import graph (lint
// enforces the same rules while editing; this test is what CI cannot skip).

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

  it('capabilities import each other only through index.ts', () => {
    const bad = offenders('src-main/core', (s, f) => {
      if (!s.startsWith('.')) return false;
      const target = resolve(dirname(f), s);
      const core = join(ROOT, 'src-main/core') + '/';
      if (!target.startsWith(core)) return false;
      const [fromCap] = rel(f).slice('src-main/core/'.length).split('/');
      const parts = target.slice(core.length).split('/');
      if (parts.length < 2) return false; // core/app.ts, core/api.ts, core/ports.ts
      const [toCap, ...rest] = parts;
      // handlers/ and wiring/ belong to the composition root (app.ts, api.ts), not to a capability.
      const composition = new Set(['handlers', 'wiring']);
      if (composition.has(toCap!) && (fromCap!.endsWith('.ts') || composition.has(fromCap!))) return false;
      return toCap !== fromCap && !(rest.length === 1 && /^index\.(js|ts)$/.test(rest[0]!));
    });
    expect(bad).toEqual([]);
  });
});
