import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, formatCycle, importCycles, importGraph, rel, resolveImport, tangles, type ImportGraph } from '../../helpers/imports.js';

// "No cycles" (STYLE.md "Layout and import rules"), checked on the import graph
// of src-main, src-preload and src-renderer: every relative import resolved to
// its file (`./x.js` → x.ts or x.tsx, `./x` → x.ts or x/index.ts).
//
// Every import counts, `import type` included: a cycle through types is still
// two modules that each need the other to be understood, and it turns into a
// run-time cycle the day one of the names becomes a value. Dynamic import()
// and re-exports count too.

/**
 * Cycles allowed for now, to be removed (issue #14). The test fails on any
 * cycle not listed here, and on any listed one that is gone, so the list only
 * shrinks: when one disappears, delete its line. Never add one. (Empty: the
 * api ⇄ handlers, app ⇄ app-context ⇄ wiring and store types ⇄ slices cycles
 * are gone. A failure prints every cycle, ready to paste, should one ever
 * need listing while it is being taken apart.)
 */
const KNOWN_CYCLES: readonly string[] = [];

const SOURCES = ['src-main', 'src-preload', 'src-renderer'];
const fixture = (name: string) => `test/fixtures/architecture/${name}`;

/** `a.ts:3 imports './b.js' (type)` for each hop of a cycle: where to cut it. */
function hops(graph: ImportGraph, cycle: readonly string[]): string {
  return cycle
    .map((from, i) => {
      const to = cycle[(i + 1) % cycle.length];
      const edges = graph.edges.filter((e) => e.from === from && e.to === to);
      return `    ${edges.map((e) => `${rel(e.from)}:${e.line} imports '${e.spec}' (${e.kind})`).join(', ')}`;
    })
    .join('\n');
}

describe('the cycle checker (on planted fixtures)', () => {
  it('finds the planted cycle a → b → c → a, whose closing edge is a type import', () => {
    const graph = importGraph([fixture('cycle')]);
    const cycles = importCycles(graph);
    expect(cycles.map((c) => formatCycle(c, join(ROOT, fixture('cycle'))))).toEqual(['a.ts → b.ts → c.ts → a.ts']);
    expect(tangles(graph).map((t) => t.map(rel))).toEqual([[`${fixture('cycle')}/a.ts`, `${fixture('cycle')}/b.ts`, `${fixture('cycle')}/c.ts`]]);
    const closing = graph.edges.find((e) => rel(e.from).endsWith('cycle/c.ts'));
    expect(closing).toMatchObject({ spec: './a.js', kind: 'type' });
  });

  it('passes an acyclic graph, resolving every specifier form and ignoring imports in comments and strings', () => {
    const graph = importGraph([fixture('acyclic')]);
    const edges = graph.edges.map((e) => `${rel(e.from).slice(fixture('acyclic').length + 1)} → ${rel(e.to).slice(fixture('acyclic').length + 1)} ${e.kind}`);
    expect(edges.sort()).toEqual([
      'a.ts → b.ts value',
      'a.ts → c.ts value', // './c'
      'a.ts → d/index.ts type',
      'b.ts → d/index.ts value', // './d'
      'c.ts → b.ts dynamic',
      'c.ts → d/index.ts type',
      'panel.tsx → view.tsx value', // './view.js'
    ]);
    expect(graph.missing).toEqual([]);
    expect(tangles(graph)).toEqual([]);
    expect(importCycles(graph)).toEqual([]);
  });

  it('reports a relative import that names no file instead of dropping it', () => {
    const a = join(ROOT, fixture('acyclic'), 'a.ts');
    expect(resolveImport(a, './gone.js')).toBeUndefined();
    expect(resolveImport(a, 'zod')).toBeUndefined();
    expect(resolveImport(a, './view.js')).toBe(join(ROOT, fixture('acyclic'), 'view.tsx'));
  });

  it('reports every cycle, each from its first file, once', () => {
    // Two cycles sharing the edge a → b: a → b → a and a → b → c → a.
    const f = (n: string) => `/x/${n}.ts`;
    const edge = (from: string, to: string) => ({ from: f(from), to: f(to), spec: `./${to}.js`, kind: 'value' as const, line: 1 });
    const graph: ImportGraph = { files: ['a', 'b', 'c'].map(f), edges: [edge('a', 'b'), edge('b', 'a'), edge('b', 'c'), edge('c', 'a')], missing: [] };
    expect(importCycles(graph).map((c) => formatCycle(c, '/x'))).toEqual(['a.ts → b.ts → a.ts', 'a.ts → b.ts → c.ts → a.ts']);
    expect(importCycles(graph, 1).at(-1), 'gives up, visibly, past its limit').toEqual(['…']);
  });
});

describe('no import cycles in src-main, src-preload, src-renderer', () => {
  const graph = importGraph(SOURCES);
  const cycles = importCycles(graph);
  const found = cycles.map((c) => formatCycle(c));

  it('reads the whole tree (so an empty answer means something)', () => {
    expect(graph.files.length).toBeGreaterThan(200);
    expect(graph.edges.length).toBeGreaterThan(500);
    expect(graph.missing, 'relative imports that name no file').toEqual([]);
  });

  it('has no cycle beyond KNOWN_CYCLES', () => {
    const added = cycles.filter((c) => !KNOWN_CYCLES.includes(formatCycle(c)));
    const report = added.map((c) => `  ${formatCycle(c)}\n${hops(graph, c)}`).join('\n');
    const files = tangles(graph)
      .map((t) => `  ${t.map(rel).join(' ')}`)
      .join('\n');
    expect(
      added.map((c) => formatCycle(c)),
      `New import cycles — break them (move the shared part down, or invert the dependency), don't list them:\n${report}\n` +
        `Files that import each other in a loop, by tangle:\n${files}\n` +
        `All cycles today, as KNOWN_CYCLES would list them:\n${found.map((c) => `  '${c}',`).join('\n')}`,
    ).toEqual([]);
  });

  it('still has every cycle in KNOWN_CYCLES (delete the ones that are gone)', () => {
    const gone = KNOWN_CYCLES.filter((c) => !found.includes(c));
    expect(gone, 'These cycles are gone: delete them from KNOWN_CYCLES in test/unit/architecture/cycles.test.ts').toEqual([]);
  });
});
