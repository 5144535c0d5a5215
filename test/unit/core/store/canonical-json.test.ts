import { describe, it, expect } from 'vitest';
import { canonicalJson } from '../../../../src-main/core/store/index.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: true }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}',
    );
  });

  it('sorts by UTF-16 code units and escapes strings as JSON does', () => {
    expect(canonicalJson({ é: 1, Z: 2, a: 3, '\u0001': 'line\nbreak "q" ü' })).toBe(
      '{"\\u0001":"line\\nbreak \\"q\\" ü","Z":2,"a":3,"é":1}',
    );
  });

  it('writes numbers in shortest round-trip form', () => {
    expect(canonicalJson([1, 1.5, -0, 1e21, 2.641736, 0.1 + 0.2])).toBe('[1,1.5,0,1e+21,2.641736,0.30000000000000004]');
  });

  it('omits undefined properties so a parsed row re-encodes identically', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it('refuses values JSON cannot carry faithfully', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/\$\.n: NaN is not a finite number/);
    expect(() => canonicalJson({ n: Infinity })).toThrow(TypeError);
    expect(() => canonicalJson([undefined])).toThrow(/undefined in an array/);
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(/Date is not a plain object/);
    expect(() => canonicalJson({ m: new Map() })).toThrow(/Map is not a plain object/);
    expect(() => canonicalJson({ b: 1n })).toThrow(/bigint/);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cycle/);
  });

  it('accepts shared (non-cyclic) references and null-prototype objects', () => {
    const shared = { x: 1 };
    const bare = Object.assign(Object.create(null) as object, { k: 'v' });
    expect(canonicalJson({ a: shared, b: shared, c: bare })).toBe('{"a":{"x":1},"b":{"x":1},"c":{"k":"v"}}');
  });
});
