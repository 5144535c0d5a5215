// The renderer never touches node:* or main-process code; it reaches the core
// only through the contract; and its modules import each other without cycles.
// Enforced here by reading every renderer import.
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

const GLOB = /import\.meta\.glob(?:<[^>]*>)?\(\s*['"]([^'"]+)['"]/g;

/**
 * The renderer files each file imports: relative imports (`import type` and
 * re-exports included) resolved to a file, and the files an
 * `import.meta.glob('../x/*\/y.ts')` matches (an eager glob is static imports).
 */
export function rendererImports(source: string, file: string, known: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const match of source.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3] ?? '';
    if (!spec.startsWith('.')) continue;
    const base = resolve(file, '..', spec).replace(/\.js$/, '');
    const hit = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((c) => known.has(c));
    if (hit) out.push(hit);
  }
  for (const match of source.matchAll(GLOB)) {
    const parts = resolve(file, '..', match[1]!).split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(`^${parts.join('[^/]*')}$`);
    out.push(...[...known].filter((c) => pattern.test(c)));
  }
  return out;
}

/** Each cycle once, as the files in import order starting from the first one found. */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    seen.add(file);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (stack.includes(next)) cycles.push(stack.slice(stack.indexOf(next)));
      else if (!seen.has(next)) visit(next);
    }
    stack.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return cycles;
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

  it('finds a cycle when there is one, through a glob too (the check itself works)', () => {
    const a = join(ROOT, 'src', 'a.ts');
    const b = join(ROOT, 'src', 'f', 'x', 'b.ts');
    const known = new Set([a, b]);
    expect(rendererImports("import type { B } from './f/x/b.js';", a, known)).toEqual([b]);
    expect(rendererImports("const m = import.meta.glob<{ v: 1 }>('../../a.ts', { eager: true });", b, known)).toEqual([a]);
    expect(rendererImports("import.meta.glob('./f/*/b.ts')", a, known)).toEqual([b]);
    expect(findCycles(new Map([[a, [b]], [b, [a]]]))).toEqual([[a, b]]);
    expect(findCycles(new Map([[a, [b]], [b, []]]))).toEqual([]);
  });

  it('no import cycles between renderer files (STYLE.md "no cycles")', () => {
    const all = files(join(ROOT, 'src'));
    const known = new Set(all);
    const graph = new Map(all.map((file) => [file, rendererImports(readFileSync(file, 'utf8'), file, known)]));
    expect([...graph.values()].flat().length).toBeGreaterThan(200);
    expect(findCycles(graph).map((cycle) => cycle.map((f) => relative(ROOT, f)).join(' → '))).toEqual([]);
  });
});
