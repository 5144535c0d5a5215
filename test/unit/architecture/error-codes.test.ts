import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/imports.js';
import { codeTablesIn, codeTablesOf, literalsIn, literalsOf } from '../../helpers/source-scan.js';

// Error codes are vocabulary (STYLE "Vocabulary is typed"): each is declared
// once, in a capability's errors.ts (or, where the renderer or CLI matches it,
// in the contract's codes.ts), registered in base's ErrorCodeRegistry so that
// `new AppError(code)` only compiles with a declared code, and everyone else
// names the constant: a code spelled as a literal elsewhere is a second
// declaration that a rename does not find.

const SOURCES = ['src-main', 'src-preload', 'src-renderer/src'];
const CODE_SHAPE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/;
const isTest = (f: string) => /\.test\.tsx?$/.test(f);

/** Where a code table may live: a capability's (or the CLI's) errors.ts, base's, the contract's codes.ts. */
const isCodeHome = (f: string) => /\/errors\.ts$/.test(f) || f === 'src-preload/contract/codes.ts';

/** Files allowed to spell codes by value, and why. */
const SPELLS_CODES: Readonly<Record<string, string>> = {
  // Base imports no capability: the list of cancellation codes is by value, each checked by `satisfies ErrorCode[]`.
  'src-main/core/base/cancellation.ts': 'CANCELLATION_CODES',
};

const tables = codeTablesIn(SOURCES).filter((t) => t.name.endsWith('ErrorCode'));

describe('error codes (checker)', () => {
  it('finds compared literals and code tables in planted text', () => {
    const lits = literalsOf('planted.ts', "import x from 'MOD_NAME';\nif (e.code === 'REPORT_X') f('A_B');\nswitch (c) { case 'C_D': }\n");
    expect(lits.map((l) => `${l.line}:${l.text}:${l.use}`)).toEqual(['2:REPORT_X:compared', '2:A_B:other', '3:C_D:compared']);
    expect(literalsOf('planted.ts', 'const n = `svc.${id}.gen_tok_s`;').map((l) => [l.text, l.template])).toEqual([['svc.${}.gen_tok_s', true]]);
    expect(codeTablesOf('planted.ts', "export const FooErrorCode = { X: 'FOO_X', Y: 'FOO_Y' } as const;\nconst n = 1;")).toEqual([
      { file: 'planted.ts', name: 'FooErrorCode', codes: ['FOO_X', 'FOO_Y'] },
    ]);
  });

  it('reads the real tables', () => {
    const names = tables.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['SshErrorCode', 'ReportErrorCode', 'BridgeErrorCode', 'BaseErrorCode', 'FleetErrorCode', 'CliErrorCode']));
    expect(tables.find((t) => t.name === 'ReportErrorCode')?.codes).toContain('REPORT_SIGNING_KEY_ENCRYPTED');
  });
});

describe('error codes', () => {
  it('each error-code table lives in an errors.ts or the contract codes.ts', () => {
    expect(tables.filter((t) => !isCodeHome(t.file)).map((t) => `${t.file}: ${t.name}`)).toEqual([]);
  });

  it('each code is declared once (BridgeErrorCode.INTERNAL is base INTERNAL_ERROR as the bridges name it)', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const t of tables)
      for (const c of t.codes) {
        const first = seen.get(c);
        if (first !== undefined && !(c === 'INTERNAL_ERROR' && [first, t.name].sort().join() === 'BaseErrorCode,BridgeErrorCode')) twice.push(`${c}: ${first} and ${t.name}`);
        seen.set(c, t.name);
      }
    expect(twice).toEqual([]);
  });

  it('each errors.ts registers its error-code tables in base ErrorCodeRegistry (so AppError accepts only declared codes)', () => {
    const missing: string[] = [];
    for (const t of tables) {
      if (t.file === 'src-preload/contract/codes.ts' || t.file === 'src-main/core/base/errors.ts') continue;
      const text = readFileSync(join(ROOT, t.file), 'utf8');
      const registry = /interface ErrorCodeRegistry\s*\{([^}]*)\}/.exec(text)?.[1] ?? '';
      if (!new RegExp(`:\\s*${t.name}\\s*;`).test(registry)) missing.push(`${t.file}: ${t.name}`);
    }
    // The contract's tables are registered by core (it imports zod only).
    const api = readFileSync(join(ROOT, 'src-main/core/api.ts'), 'utf8');
    if (!/interface ErrorCodeRegistry\s*\{[^}]*:\s*BridgeErrorCode\s*;/.test(api)) missing.push('src-main/core/api.ts: BridgeErrorCode');
    expect(missing).toEqual([]);
  });

  it('no source spells a declared code outside its table: it names the constant', () => {
    const homeOf = new Map<string, string>();
    for (const t of tables) for (const c of t.codes) if (!homeOf.has(c)) homeOf.set(c, t.file);
    const spelled = literalsIn(SOURCES, (f) => isTest(f) || f in SPELLS_CODES)
      .filter((l) => homeOf.has(l.text) && !tables.some((t) => t.file === l.file && t.codes.includes(l.text)))
      .map((l) => `${l.file}:${l.line} '${l.text}' (declared in ${homeOf.get(l.text)})`);
    expect(spelled).toEqual([]);
  });

  it('the renderer spells no error code at all (it matches the contract constants)', () => {
    const spelled = literalsIn(['src-renderer/src'], isTest)
      .filter((l) => CODE_SHAPE.test(l.text))
      .map((l) => `${l.file}:${l.line} '${l.text}' (${l.use})`);
    expect(spelled).toEqual([]);
  });
});
