import { describe, expect, it } from 'vitest';
import { invokeChannels } from '../../../src-preload/contract/index.js';

describe('alerts inputs', () => {
  it('a manual baseline below 0.01 tok/s is refused: split over its concurrency it would round to a per-sequence 0 (fuzz seed 20260611)', () => {
    const input = invokeChannels['alerts.setBaseline'].input;
    const bad = input.safeParse({ model: 'm', tokPerS: 2e-323, concurrency: 4064 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['tokPerS']);
    const ok = input.safeParse({ model: 'm', tokPerS: 0.01, concurrency: 4096 });
    expect(ok.success).toBe(true);
    expect(ok.data!.tokPerS / ok.data!.concurrency!).toBeGreaterThan(0);
  });
});
