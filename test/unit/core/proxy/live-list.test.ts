import { describe, expect, it } from 'vitest';
import { LiveList } from '../../../../src-main/core/proxy/live-list.js';

describe('LiveList', () => {
  it('adds, removes in any order (idempotently) and lists what is left', () => {
    const list = new LiveList<string>();
    const a = list.add('a');
    const b = list.add('b');
    const c = list.add('c');
    expect(list.size).toBe(3);
    list.remove(b);
    list.remove(b);
    expect(list.size).toBe(2);
    expect(list.values().sort()).toEqual(['a', 'c']);
    list.remove(c);
    list.remove(a);
    expect(list.size).toBe(0);
    expect(list.values()).toEqual([]);
    list.add('d');
    expect(list.values()).toEqual(['d']);
  });

  it('lets members be removed while going through a copy; a removed node keeps no references', () => {
    const list = new LiveList<number>();
    const nodes = [1, 2, 3, 4].map((n) => list.add(n));
    for (const n of list.values()) list.remove(nodes[n - 1]!);
    expect(list.size).toBe(0);
    for (const node of nodes) expect(node).toEqual({ value: null, prev: null, next: null });
  });
});
