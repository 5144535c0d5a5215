import { describe, expect, it } from 'vitest';
import { rel, sourceFiles } from '../../helpers/imports.js';
import { declaredTypesOf } from '../../helpers/source-scan.js';

// "No type declared both in core and in the contract" (issue #28 item 5): a
// shape that crosses the boundary is declared once, by the contract, and core
// imports it. Two declarations under one name drift apart silently (the core's
// AuditVerifyResult had a union for `reason`, the contract's a string).

function declared(dir: string): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const f of sourceFiles(dir)) for (const name of declaredTypesOf(f)) byName.set(name, [...(byName.get(name) ?? []), rel(f)]);
  return byName;
}

describe('types at the boundary', () => {
  it('the checker sees declarations, not re-exports', () => {
    expect(declaredTypesOf('a.ts', "export type { A } from './b.js';\nexport interface B { x: 1 }\ntype C = 1;\nclass D {}\nexport { E };")).toEqual(['B', 'C', 'D']);
  });

  it('no type name is declared both in src-main/core and in the contract', () => {
    const contract = declared('src-preload/contract');
    const core = declared('src-main/core');
    expect(contract.size).toBeGreaterThan(50);
    expect(contract.has('AuditVerifyResult')).toBe(true);
    const both = [...core.keys()].filter((n) => contract.has(n)).map((n) => `${n}: ${core.get(n)!.join(', ')} and ${contract.get(n)!.join(', ')}`);
    expect(both).toEqual([]);
  });
});
