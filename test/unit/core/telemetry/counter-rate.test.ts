import { describe, expect, it } from 'vitest';
import { CounterRate } from '../../../../src-main/core/telemetry/index.js';

describe('CounterRate', () => {
  it('gives null first, then Δvalue/Δt per second', () => {
    const r = new CounterRate();
    expect(r.push(100, 1_000)).toBeNull();
    expect(r.push(150, 1_500)).toBe(100); // 50 tokens in 0.5 s
    expect(r.push(150, 2_500)).toBe(0);
    expect(r.push(450, 5_500)).toBe(100); // 300 in 3 s
  });

  it('skips the interval of a counter reset and rebases on the new value', () => {
    const r = new CounterRate();
    r.push(1_000, 0);
    expect(r.push(1_200, 1_000)).toBe(200);
    expect(r.push(30, 2_000)).toBeNull(); // restart: we cannot tell when in the interval it happened
    expect(r.resets).toBe(1);
    expect(r.push(90, 3_000)).toBe(60);
  });

  it('ignores samples that do not move time forward and non-finite values', () => {
    const r = new CounterRate();
    r.push(10, 1_000);
    expect(r.push(20, 1_000)).toBeNull();
    expect(r.push(Number.NaN, 2_000)).toBeNull();
    expect(r.push(Number.POSITIVE_INFINITY, 2_000)).toBeNull();
    expect(r.push(30, 2_000)).toBe(20); // baseline still (10, 1000)
  });
});
