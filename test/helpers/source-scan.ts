import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { rel, sourceFiles } from './imports.js';

// Reads string literals and declared code tables out of the sources with the
// TypeScript parser (comments and imports are not literals, so they cannot
// fool it). Templates count too, their substitutions written as `${}`. Used by test/unit/architecture/error-codes.test.ts and
// vocabulary.test.ts.

export interface Literal {
  /** Repository-relative path (posix). */
  file: string;
  /** 1-based. */
  line: number;
  /** The literal's text; for a template with substitutions, its text with each `${…}` as `${}`. */
  text: string;
  /** How it is used: compared (===, !==, ==, !=, a `case`), or anything else. */
  use: 'compared' | 'other';
  template: boolean;
}

function parse(file: string, text = readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

const COMPARISONS = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

function useOf(node: ts.Node): Literal['use'] {
  const p = node.parent;
  if (ts.isCaseClause(p) && p.expression === node) return 'compared';
  if (ts.isBinaryExpression(p) && COMPARISONS.has(p.operatorToken.kind)) return 'compared';
  return 'other';
}

/** Every string literal (and template without substitutions) of a source text, module specifiers left out. */
export function literalsOf(file: string, text?: string): Literal[] {
  const sf = parse(file, text);
  const out: Literal[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isModuleDeclaration(node)) {
      if (ts.isModuleDeclaration(node) && node.body) ts.forEachChild(node.body, visit);
      return;
    }
    const at = () => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      out.push({ file: rel(file), line: at(), text: node.text, use: useOf(node), template: false });
    }
    if (ts.isTemplateExpression(node)) {
      const text = node.head.text + node.templateSpans.map((s) => '${}' + s.literal.text).join('');
      out.push({ file: rel(file), line: at(), text, use: useOf(node), template: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

export function literalsIn(dirs: readonly string[], skip: (relPath: string) => boolean = () => false): Literal[] {
  return dirs.flatMap((d) => sourceFiles(d)).filter((f) => !skip(rel(f))).flatMap((f) => literalsOf(f));
}

export interface CodeTable {
  file: string;
  name: string;
  /** The string values of the table (`{ X: 'CAP_X' } as const`). */
  codes: string[];
}

/**
 * The code tables a source declares: `export const <Name>Code = { KEY: 'VALUE', … } as const`
 * (`BenchErrorCode`, `RequestErrorCode`, `BridgeErrorCode`, `VllmIssueCode`…).
 */
export function codeTablesOf(file: string, text?: string): CodeTable[] {
  const sf = parse(file, text);
  const out: CodeTable[] = [];
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || !/Code$/.test(d.name.text) || !d.initializer) continue;
      let init: ts.Expression = d.initializer;
      if (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression;
      if (!ts.isObjectLiteralExpression(init)) continue;
      const codes = init.properties.flatMap((p) => (ts.isPropertyAssignment(p) && ts.isStringLiteral(p.initializer) ? [p.initializer.text] : []));
      out.push({ file: rel(file), name: d.name.text, codes });
    }
  }
  return out;
}

export function codeTablesIn(dirs: readonly string[]): CodeTable[] {
  return dirs.flatMap((d) => sourceFiles(d)).flatMap((f) => codeTablesOf(f));
}

/** Names of the types a source declares at its top level (interface, type alias, class, enum); re-exports are not declarations. */
export function declaredTypesOf(file: string, text?: string): string[] {
  const sf = parse(file, text);
  return sf.statements.flatMap((st) =>
    ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isEnumDeclaration(st) || (ts.isClassDeclaration(st) && st.name) ? [st.name!.text] : [],
  );
}
