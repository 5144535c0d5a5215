import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { rel, sourceFiles } from '../../helpers/imports.js';

// Issue #28 items 1 and 2, as checks on the sources (TypeScript's parser, so
// comments and strings cannot fool them):
//
// 1. Capabilities meet through the fleet's own FleetState, not the UI's shape.
//    No file of src-main/core names the contract's FleetSnapshot / HostView /
//    ServiceView / GpuView (imports them), reads the fleet's snapshot
//    (`fleet.snapshot()`), listens to its UI tick (`onDidTick`) or calls back
//    for figures the view dropped (`serviceFigures`) — except the edges listed
//    in EDGES, which build or render that shape.
// 2. No late setters: no class of src-main/core has a public `set…(x)` taking
//    something that is not plain data, nor a public mutable field holding a
//    service or port, so a service gets what it needs in its constructor.

const CORE = 'src-main/core';
const VIEW_TYPES = new Set(['FleetSnapshot', 'HostView', 'ServiceView', 'GpuView']);

/** Where the contract's snapshot is built or rendered as it is, each with why. */
const EDGES: Record<string, string> = {
  'src-main/core/fleet/snapshot-view.ts': 'builds the contract view from FleetState',
  'src-main/core/fleet/health-view.ts': 'builds the host health and GPU process parts of the contract view (called by snapshot-view)',
  'src-main/core/fleet/fleet-service.ts': 'emits fleet.tick (built by snapshot-view) and offers snapshot()/onDidTick to bridges and tests',
  'src-main/core/proxy/server.ts': "the proxy's /metrics: renders the fleet as the screen shows it (telemetry/fleet-exposition.ts)",
  'src-main/core/telemetry/fleet-exposition.ts': 'the Prometheus exposition of the fleet view on /metrics',
};

export interface Finding {
  file: string;
  line: number;
  what: string;
}

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

const lineOf = (sf: ts.SourceFile, node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;

/** Names of the contract's view types a file imports, and reads of the fleet's UI snapshot, tick or figure call-back. */
export function viewReads(file: string, text: string): Finding[] {
  const sf = parse(file, text);
  const out: Finding[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.moduleSpecifier.text.includes('src-preload/contract')) {
      const named = node.importClause?.namedBindings;
      if (named && ts.isNamedImports(named)) {
        for (const el of named.elements) {
          const name = (el.propertyName ?? el.name).text;
          if (VIEW_TYPES.has(name)) out.push({ file, line: lineOf(sf, el), what: `imports ${name}` });
        }
      }
    }
    if (ts.isPropertyAccessExpression(node)) {
      const name = node.name.text;
      const target = node.expression.getText(sf);
      if (name === 'onDidTick' || name === 'serviceFigures') out.push({ file, line: lineOf(sf, node), what: `${target}.${name}` });
      if (name === 'snapshot' && /(^|\.)fleet$/.test(target) && ts.isCallExpression(node.parent)) out.push({ file, line: lineOf(sf, node), what: `${target}.snapshot()` });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const modifiers = (node: ts.Node): ts.SyntaxKind[] => (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []).map((m) => m.kind) : []);
const isPublic = (node: ts.ClassElement): boolean => {
  const m = modifiers(node);
  return !m.includes(ts.SyntaxKind.PrivateKeyword) && !m.includes(ts.SyntaxKind.ProtectedKeyword) && !(node.name && ts.isPrivateIdentifier(node.name));
};

/**
 * The names of roles: interfaces and type literals with a method (a port: `WakeOnRequest { allowed(); request() }`),
 * and classes with one (a service), errors aside. Plain data (`PollSettings`, `DrainInfo`, `ErrorSummary`) is none.
 */
export function roleNames(sources: readonly { file: string; text: string }[]): Set<string> {
  const roles = new Set<string>();
  const hasMethod = (members: ts.NodeArray<ts.TypeElement>) =>
    members.some((m) => ts.isMethodSignature(m) || ts.isCallSignatureDeclaration(m) || (ts.isPropertySignature(m) && m.type !== undefined && ts.isFunctionTypeNode(m.type)));
  for (const { file, text } of sources) {
    const sf = parse(file, text);
    const visit = (node: ts.Node): void => {
      if (ts.isInterfaceDeclaration(node) && hasMethod(node.members)) roles.add(node.name.text);
      if (ts.isTypeAliasDeclaration(node) && ((ts.isTypeLiteralNode(node.type) && hasMethod(node.type.members)) || ts.isFunctionTypeNode(node.type))) roles.add(node.name.text);
      if (ts.isClassDeclaration(node) && node.name) {
        const isError = node.heritageClauses?.some((h) => h.types.some((t) => /Error$/.test(t.expression.getText(sf))));
        if (!isError && node.members.some((m) => ts.isMethodDeclaration(m))) roles.add(node.name.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return roles;
}

/**
 * Whether a written type names a role (`WakeOnRequest | null`, `Pick<FleetService, 'upstream'>`). A bare
 * callback is not one: a timer's `setTimeout(fn)` schedules, and an exchange's `abort` is per request.
 */
function namesRole(type: ts.TypeNode | undefined, roles: ReadonlySet<string>, sf: ts.SourceFile): boolean {
  if (!type) return false;
  let found = false;
  const visit = (node: ts.Node): void => {
    if (ts.isTypeReferenceNode(node) && roles.has(node.typeName.getText(sf).split('.').pop()!)) found = true;
    if (!found) ts.forEachChild(node, visit);
  };
  visit(type);
  return found;
}

/**
 * Public setters of a class that hand it a collaborator (`setWakeOnRequest(wake: WakeOnRequest)`), any public
 * `set` accessor, and public mutable fields holding one (`wakeOnRequest: WakeOnRequest | null`): the wiring
 * another service would do after construction. Setters of plain data (`setCaps(caps)`, `setBaseline(model,
 * tokPerS)`) and fields of plain data are state, not wiring.
 */
export function lateSetters(file: string, text: string, roles: ReadonlySet<string>): Finding[] {
  const sf = parse(file, text);
  const out: Finding[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node)) {
      const cls = node.name?.text ?? '<class>';
      for (const m of node.members) {
        if (!isPublic(m) || modifiers(m).includes(ts.SyntaxKind.StaticKeyword)) continue;
        if (ts.isMethodDeclaration(m) && ts.isIdentifier(m.name) && /^set[A-Z]/.test(m.name.text) && m.parameters.some((p) => namesRole(p.type, roles, sf))) {
          out.push({ file, line: lineOf(sf, m), what: `${cls}.${m.name.text}(…) sets a collaborator after construction` });
        }
        if (ts.isSetAccessorDeclaration(m) && ts.isIdentifier(m.name)) out.push({ file, line: lineOf(sf, m), what: `${cls}.${m.name.text} has a public setter` });
        if (ts.isPropertyDeclaration(m) && !modifiers(m).includes(ts.SyntaxKind.ReadonlyKeyword) && namesRole(m.type, roles, sf)) {
          out.push({ file, line: lineOf(sf, m), what: `${cls}.${m.name.getText(sf)}: ${m.type!.getText(sf)} is public and mutable` });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const coreFiles = () => sourceFiles(CORE).map((f) => ({ file: rel(f), text: readFileSync(f, 'utf8') }));

describe('the checkers (on planted sources)', () => {
  it('find an imported view type, fleet.snapshot(), onDidTick and serviceFigures; not the fleet\'s own state', () => {
    const planted = [
      "import type { ActionView, HostView as H, ServiceView } from '../../../src-preload/contract/index.js';",
      'const a = this.deps.fleet.snapshot().hosts;',
      'fleet.onDidTick((s) => s);',
      'const f = fleet.serviceFigures(label);',
      'const ok = fleet.state().hosts; proxy.snapshot(); fleet.onDidChange(() => 0); // fleet.snapshot() in a comment',
      "const s = 'fleet.snapshot()';",
    ].join('\n');
    expect(viewReads('x.ts', planted).map((f) => `${f.line} ${f.what}`)).toEqual([
      '1 imports HostView',
      '1 imports ServiceView',
      '2 this.deps.fleet.snapshot()',
      '3 fleet.onDidTick',
      '4 fleet.serviceFigures',
    ]);
  });

  it('find a setter of a collaborator and a public mutable role field; not data setters or private state', () => {
    const ports = `
      export interface WakeOnRequest { allowed(upstream: string): boolean; request(upstream: string): void }
      export interface PollSettings { timeoutMs: number }
      export type Resolver = { resolve(key: string): unknown };
      export class FleetService { start(): void {} }
      export class AppError extends Error { toJSON() { return {}; } }`;
    const planted = `
      export class ProxyService {
        wakeOnRequest: WakeOnRequest | null = null;
        probeSettings: PollSettings | null = null;
        readonly onDidAnswer: Event<number>;
        listenError: AppError | null = null;
        fleet: Pick<FleetService, 'start'> | null = null;
        onChange: (() => void) | null = null;
        count = 0;
        labels: string[] = [];
        private policy: WakePolicy | null = null;
        setWakeOnRequest(wake: WakeOnRequest | null): void {}
        setBaseline(model: string, tokPerS: number, source: 'manual' | 'benchmark'): void {}
        private setPolicy(p: WakePolicy): void {}
        setCaps(caps: PollSettings): void {}
        set resolver(r: Resolver) {}
      }`;
    const roles = roleNames([{ file: 'ports.ts', text: ports }]);
    expect([...roles].sort()).toEqual(['FleetService', 'Resolver', 'WakeOnRequest']);
    expect(lateSetters('x.ts', planted, roles).map((f) => f.what)).toEqual([
      'ProxyService.wakeOnRequest: WakeOnRequest | null is public and mutable',
      "ProxyService.fleet: Pick<FleetService, 'start'> | null is public and mutable",
      'ProxyService.setWakeOnRequest(…) sets a collaborator after construction',
      'ProxyService.resolver has a public setter',
    ]);
  });
});

describe('the fleet as capabilities read it', () => {
  it('no capability reads the contract snapshot types, the fleet\'s snapshot(), onDidTick or serviceFigures; the edges aside', () => {
    const found = coreFiles()
      .filter(({ file }) => !(file in EDGES))
      .flatMap(({ file, text }) => viewReads(file, text))
      .map((f) => `${f.file}:${f.line} ${f.what}`);
    expect(found, 'read the fleet through FleetState (fleet.state(), onDidChange, onDidRound); the UI view is built at fleet/snapshot-view.ts').toEqual([]);
  });

  it('every listed edge still exists and still needs its exception', () => {
    const files = new Map(coreFiles().map((f) => [f.file, f.text]));
    const stale = Object.keys(EDGES).filter((e) => !files.has(e) || viewReads(e, files.get(e)!).length === 0);
    expect(stale, 'remove an edge that no longer names the view').toEqual([]);
  });

  it('no service is handed a collaborator after construction (public setter or public mutable field)', () => {
    const files = coreFiles();
    const roles = roleNames(files);
    expect(roles.has('WakePolicy') && roles.has('FleetService'), 'the ports and services are found').toBe(true);
    const found = files
      .flatMap(({ file, text }) => lateSetters(file, text, roles))
      .map((f) => `${f.file}:${f.line} ${f.what}`);
    expect(found, 'hand it in through the constructor; a reaction goes through an event').toEqual([]);
  });
});
