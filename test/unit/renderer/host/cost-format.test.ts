import { describe, expect, it } from 'vitest';
import { formatEstimate, formatObserved, formatTokens } from '../../../../src-renderer/src/features/host/cost-format.js';
import type { CostWindowFigures } from '../../../../src-preload/contract/index.js';

// The host view's cost words: how much of the window the figures cover, and
// unknown token counts as "—", never 0 (issue #27 finding 2).

const w = (over: Partial<CostWindowFigures>): CostWindowFigures => ({
  fromMs: 0, toMs: 86_400_000, windowSeconds: 86_400, observedSeconds: 3720, coveragePct: (3720 / 86_400) * 100, outputTokens: 265_240,
  outputTokensBasis: 'generation rate readings', observedUsd: { value: 2.73, unit: 'USD', estimate: true, unavailableReason: null, basis: '' }, ...over,
});

describe('cost words in the host view', () => {
  it('says how much of the window was observed', () => {
    expect(formatObserved(w({}))).toBe('1 h 2 min of 1 d (4.3 %)');
    expect(formatObserved(w({ observedSeconds: 0, coveragePct: 0 }))).toBe('never observed (0 % of 1 d)');
    expect(formatObserved(w({ windowSeconds: 0, observedSeconds: 0, coveragePct: null }))).toBe('window not started');
  });
  it('an unknown token count is a dash, an unknown figure "unavailable", never 0 or $0.00', () => {
    expect(formatTokens(null)).toBe('—');
    expect(formatTokens(265_240.4)).toBe('265,240');
    expect(formatTokens(0)).toBe('0');
    expect(formatEstimate({ value: null, unit: 'USD', estimate: true, unavailableReason: 'no price configured', basis: '' })).toBe('unavailable');
  });
});
