import { describe, expect, it } from 'vitest';
import type { AdvisorList } from '../../../../src-preload/contract/index.js';
import { capsChanges, emptyReason, verdictLine, windowWords } from '../../../../src-renderer/src/features/advisor/advice-text.js';

const list = (verdicts: AdvisorList['upstreams'][number]['verdict'][]): AdvisorList => ({
  recommendations: [],
  upstreams: verdicts.map((verdict, i) => ({ upstream: `h/s${i}`, verdict, because: ['x'] })),
  windowMs: 900_000,
  at: 0,
});

describe('advisor panel words', () => {
  it('lists exactly the caps an advice changes, before and after', () => {
    expect(capsChanges({ reservedInteractive: 4, interactive: 8, system: 4, batch: 4 }, { reservedInteractive: 2, interactive: 8, system: 4, batch: 6 })).toEqual([
      { key: 'reservedInteractive', label: 'Reserved for interactive', from: 4, to: 2 },
      { key: 'batch', label: 'Batch cap', from: 4, to: 6 },
    ]);
  });

  it('says why there is no advice', () => {
    expect(emptyReason(list([]))).toBe('no upstream behind the proxy yet');
    expect(emptyReason(list(['balanced', 'balanced']))).toBe('every upstream is balanced');
    expect(emptyReason(list(['insufficient_traffic']))).toBe('not enough traffic in the last 15 min');
    expect(emptyReason(list(['balanced', 'gpu_limit']))).toBe('see each upstream below');
    expect(windowWords(60_000)).toBe('1 min');
    expect(windowWords(45_000)).toBe('45 s');
  });

  it('names the verdict once', () => {
    expect(verdictLine('balanced', 'balanced over the last 15 min: …')).toBe('balanced over the last 15 min: …');
    expect(verdictLine('gpu_limit', 'batch queue wait p95 41.0 s')).toBe('the GPU is the limit: batch queue wait p95 41.0 s');
  });
});
