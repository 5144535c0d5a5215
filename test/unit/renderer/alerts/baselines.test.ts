import { describe, expect, it } from 'vitest';
import { baselineLevelsText } from '../../../../src-renderer/src/features/alerts/baselines.js';

describe('baseline levels as the Alerts page shows them', () => {
  it('lists per-sequence speed by load, lowest load first', () => {
    expect(baselineLevelsText({ levels: [{ concurrency: 4, perSeqTokPerS: 17.875 }, { concurrency: 1, perSeqTokPerS: 21.3 }] })).toEqual({ text: 'c=1 21.3 · c=4 17.9 tok/s per sequence', compared: true });
  });
  it('a baseline stored before levels says it is not compared, never a 0', () => {
    const r = baselineLevelsText({});
    expect(r.compared).toBe(false);
    expect(r.text).toMatch(/^not compared/);
    expect(r.text).not.toMatch(/\b0\b/);
  });
});
