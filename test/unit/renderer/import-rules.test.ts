// The renderer never touches node:* or main-process code; it reaches the core
// only through the contract. Enforced here by reading every renderer import.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../../src-renderer');
const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

export function forbiddenImports(source: string, file: string): string[] {
  const bad: string[] = [];
  for (const match of source.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3] ?? '';
    const target = spec.startsWith('.') ? resolve(file, '..', spec) : spec;
    const builtin = /^(node:|fs$|path$|child_process$|electron$|net$|http$|os$)/.test(spec);
    const mainCode = target.includes(`${resolve(ROOT, '..', 'src-main')}`) || /(^|\/)src-main\//.test(spec);
    const preloadNotContract = target.includes(resolve(ROOT, '..', 'src-preload')) && !target.includes(resolve(ROOT, '..', 'src-preload', 'contract'));
    if (builtin || mainCode || preloadNotContract) bad.push(spec);
  }
  return bad;
}

describe('renderer import rules', () => {
  it('finds violations when they exist (the rule itself works)', () => {
    const file = join(ROOT, 'src', 'x.ts');
    expect(forbiddenImports("import { readFile } from 'node:fs';\nimport x from '../../src-main/core/app.js';", file)).toEqual([
      'node:fs',
      '../../src-main/core/app.js',
    ]);
    expect(forbiddenImports("import '../../src-preload/index.js'", file)).toEqual(['../../src-preload/index.js']);
    expect(forbiddenImports("import { z } from '../../src-preload/contract/index.js'", file)).toEqual([]);
  });

  it('no renderer file imports node:*, electron, src-main or the preload itself', () => {
    const all = files(join(ROOT, 'src'));
    expect(all.length).toBeGreaterThan(10);
    const offenders = all.flatMap((file) => forbiddenImports(readFileSync(file, 'utf8'), file).map((spec) => `${relative(ROOT, file)}: ${spec}`));
    expect(offenders).toEqual([]);
  });
});
