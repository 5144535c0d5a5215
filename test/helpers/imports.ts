import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

// Reads the import graph of the sources with the TypeScript parser (no type
// checking, no regexes over the text: a `/*` inside a string or an import in a
// comment cannot fool it). Used by test/unit/architecture.

export const ROOT = join(import.meta.dirname, '..', '..');

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
    }
  };
  walk(resolve(ROOT, dir));
  return out;
}

/**
 * How a file depends on a module: `value` (import / export … from, kept at
 * run time unless every name turns out to be a type), `type` (`import type`,
 * `export type … from`, `import { type A }` only, or a type `import('x').T`),
 * `dynamic` (`import('x')` in code), `require`.
 */
export type ImportKind = 'value' | 'type' | 'dynamic' | 'require';

export interface ImportRef {
  spec: string;
  kind: ImportKind;
  /** 1-based line of the specifier. */
  line: number;
}

const parsed = new Map<string, { mtimeMs: number; refs: ImportRef[] }>();

/** Every module a file imports or re-exports: static, type-only, dynamic and require. */
export function importRefs(file: string): ImportRef[] {
  const { mtimeMs } = statSync(file);
  const hit = parsed.get(file);
  if (hit?.mtimeMs === mtimeMs) return hit.refs;
  const refs = parseImports(file);
  parsed.set(file, { mtimeMs, refs });
  return refs;
}

function parseImports(file: string): ImportRef[] {
  const text = readFileSync(file, 'utf8');
  const kindOfScript = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kindOfScript);
  const refs: ImportRef[] = [];
  const add = (lit: ts.Node | undefined, kind: ImportKind) => {
    if (!lit || !ts.isStringLiteralLike(lit)) return;
    refs.push({ spec: lit.text, kind, line: sf.getLineAndCharacterOfPosition(lit.getStart(sf)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const onlyTypes =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier, onlyTypes ? 'type' : 'value');
      return;
    }
    if (ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier) {
        const named = node.exportClause;
        const onlyTypes =
          node.isTypeOnly || (!!named && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly));
        add(node.moduleSpecifier, onlyTypes ? 'type' : 'value');
      }
      return;
    }
    if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly ? 'type' : 'require');
      return;
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, 'type');
    if (ts.isCallExpression(node)) {
      const [arg] = node.arguments;
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) add(arg, 'dynamic');
      else if (ts.isIdentifier(node.expression) && node.expression.text === 'require') add(arg, 'require');
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

/** Every module specifier a file imports or re-exports (static, type-only, dynamic and require). */
export function importsOf(file: string): string[] {
  return importRefs(file).map((r) => r.spec);
}

export function rel(file: string): string {
  return relative(ROOT, file).split(sep).join('/');
}

const SOURCE_EXT = ['.ts', '.tsx', '.mts'];

/**
 * The source file a relative specifier names, the way the bundler and
 * `moduleResolution: Bundler` find it: `./x.js` → `x.ts` / `x.tsx`, `./x` →
 * `x.ts` / `x.tsx` / `x/index.ts`. Undefined for a package (`zod`,
 * `node:fs`) and for a relative specifier that names no source file (see
 * `ResolvedImport.missing`).
 */
export function resolveImport(fromFile: string, spec: string): string | undefined {
  if (!spec.startsWith('./') && !spec.startsWith('../') && spec !== '.' && spec !== '..') return undefined;
  const base = resolve(dirname(fromFile), spec);
  const candidates: string[] = [];
  const js = /\.(m?js|jsx)$/.exec(base);
  if (js) {
    const stem = base.slice(0, -js[0].length);
    candidates.push(...(js[1] === 'mjs' ? ['.mts'] : ['.ts', '.tsx']).map((e) => stem + e));
  }
  candidates.push(base, ...SOURCE_EXT.map((e) => base + e), ...SOURCE_EXT.map((e) => join(base, 'index' + e)));
  return candidates.find((c) => SOURCE_EXT.some((e) => c.endsWith(e)) && existsSync(c) && statSync(c).isFile());
}

export interface ImportEdge {
  /** Absolute paths. */
  from: string;
  to: string;
  spec: string;
  kind: ImportKind;
  line: number;
}

export interface ImportGraph {
  /** Absolute paths of every source file under the scanned folders, sorted. */
  files: string[];
  /** Relative imports between source files (the target may lie outside the scanned folders). */
  edges: ImportEdge[];
  /** Relative specifiers that name no source file and no other existing file (`… imports ./gone.js`). */
  missing: string[];
}

/** The graph of relative imports of every source file under `dirs` (paths relative to ROOT). */
export function importGraph(dirs: readonly string[]): ImportGraph {
  const files = [...new Set(dirs.flatMap((d) => sourceFiles(d)))].sort();
  const edges: ImportEdge[] = [];
  const missing: string[] = [];
  for (const from of files) {
    for (const ref of importRefs(from)) {
      if (!ref.spec.startsWith('.')) continue;
      const to = resolveImport(from, ref.spec);
      if (to) edges.push({ from, to, ...ref });
      else if (!existsSync(resolve(dirname(from), ref.spec))) missing.push(`${rel(from)}:${ref.line} imports ${ref.spec}`);
      // else: a stylesheet, JSON file or asset — not a module of the graph.
    }
  }
  return { files, edges, missing };
}

function adjacency(graph: ImportGraph): Map<string, string[]> {
  const adj = new Map<string, string[]>(graph.files.map((f) => [f, []]));
  for (const e of graph.edges) {
    const out = adj.get(e.from);
    if (out && adj.has(e.to) && !out.includes(e.to)) out.push(e.to);
  }
  for (const out of adj.values()) out.sort();
  return adj;
}

/** Strongly connected components with more than one file (or a file importing itself), Tarjan's algorithm. */
export function tangles(graph: ImportGraph): string[][] {
  const adj = adjacency(graph);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of adj.get(v)!) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || adj.get(v)!.includes(v)) out.push(scc.sort());
    }
  };
  for (const v of adj.keys()) if (!index.has(v)) connect(v);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/**
 * Every elementary cycle (no file twice), each as the files in import order
 * starting from its alphabetically first file; sorted. Gives up after `max`
 * cycles or `maxSteps` steps of the walk (then the last entry is `['…']`), so
 * a badly tangled tree still reports fast; `tangles` still names every file.
 */
export function importCycles(graph: ImportGraph, max = 500, maxSteps = 1_000_000): string[][] {
  const adj = adjacency(graph);
  const cycles: string[][] = [];
  let steps = 0;
  for (const scc of tangles(graph)) {
    const inScc = new Set(scc);
    // Johnson-style enumeration, simplified: for each start s (in order), only
    // walk files after s, so each cycle is found once, from its first file.
    for (const [i, start] of scc.entries()) {
      const allowed = new Set(scc.slice(i));
      const path = [start];
      const onPath = new Set(path);
      const walk = (v: string): boolean => {
        for (const w of adj.get(v)!) {
          if (++steps > maxSteps) return false;
          if (!inScc.has(w) || !allowed.has(w)) continue;
          if (w === start) {
            cycles.push([...path]);
            if (cycles.length >= max) return false;
          } else if (!onPath.has(w)) {
            path.push(w);
            onPath.add(w);
            if (!walk(w)) return false;
            path.pop();
            onPath.delete(w);
          }
        }
        return true;
      };
      if (!walk(start)) return [...cycles.sort((a, b) => a.join(' ').localeCompare(b.join(' '))), ['…']];
    }
  }
  return cycles.sort((a, b) => a.join(' ').localeCompare(b.join(' ')));
}

/** `a.ts → b.ts → a.ts`, paths relative to ROOT (or to `base`). */
export function formatCycle(cycle: readonly string[], base = ROOT): string {
  const name = (f: string) => relative(base, f).split(sep).join('/');
  return [...cycle, cycle[0]!].map(name).join(' → ');
}

/** The folder of src-main a file belongs to, for the rule "a folder is reached only through its index.ts". */
export interface FolderRule {
  /** The src-main folder, relative to ROOT (a fixture can stand in for it). */
  mainDir: string;
  /** Files directly in mainDir that count as files of a folder (a bundle entry launching its bridge). */
  entryPoints: Readonly<Record<string, string>>;
  /** Folders any file may import deeply. */
  exempt: readonly string[];
}

/**
 * `core/<capability>` for a file under src-main/core/<capability>/, `<folder>`
 * for one under any other src-main/<folder>/ (shell, web, cli, …); undefined
 * for a file directly in src-main or src-main/core (app.ts, api.ts, ports.ts …)
 * or outside src-main. `rest` is the path inside that folder.
 */
export function folderOf(file: string, rule: FolderRule): { folder: string; rest: string } | undefined {
  const r = relative(resolve(ROOT, rule.mainDir), file).split(sep).join('/');
  if (r.startsWith('../') || r.startsWith('/')) return undefined;
  const entry = rule.entryPoints[r];
  if (entry) return { folder: entry, rest: r };
  const segs = r.split('/');
  const depth = segs[0] === 'core' ? 2 : 1;
  if (segs.length <= depth) return undefined;
  return { folder: segs.slice(0, depth).join('/'), rest: segs.slice(depth).join('/') };
}

/** Imports of a file inside a folder, other than its index.ts, from a file outside that folder. */
export function deepImports(graph: ImportGraph, rule: FolderRule): ImportEdge[] {
  return graph.edges.filter((e) => {
    const to = folderOf(e.to, rule);
    if (!to || rule.exempt.includes(to.folder) || /^index\.tsx?$/.test(to.rest)) return false;
    return folderOf(e.from, rule)?.folder !== to.folder;
  });
}
