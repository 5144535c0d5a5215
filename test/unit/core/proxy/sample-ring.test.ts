import { describe, expect, it } from 'vitest';
import { MAX_SAMPLES, SampleRing } from '../../../../src-main/core/proxy/stats.js';

describe('SampleRing (proxy window samples)', () => {
  it('holds a few samples in a few hundred bytes, not a full ring', () => {
    const ring = new SampleRing();
    for (let i = 0; i < 10; i++) ring.push(i, i * 10);
    expect(ring.length).toBe(10);
    expect(ring.capacityBytes).toBeLessThanOrEqual(64 * 16);
  });

  it('keeps every sample, newest first, across each growth step', () => {
    const ring = new SampleRing();
    for (let i = 0; i < 1000; i++) ring.push(i, i);
    const values = ring.valuesSince(0);
    expect(values).toHaveLength(1000);
    expect(values[0]).toBe(999);
    expect(values[999]).toBe(0);
    expect(values.every((v, k) => v === 999 - k)).toBe(true);
  });

  it('stops growing at MAX_SAMPLES and then drops the oldest', () => {
    const ring = new SampleRing();
    const n = MAX_SAMPLES * 2 + 123;
    for (let i = 0; i < n; i++) ring.push(i, i);
    expect(ring.length).toBe(MAX_SAMPLES);
    expect(ring.capacityBytes).toBe(MAX_SAMPLES * 16);
    const values = ring.valuesSince(0);
    expect(values).toHaveLength(MAX_SAMPLES);
    expect(values[0]).toBe(n - 1);
    expect(values[MAX_SAMPLES - 1]).toBe(n - MAX_SAMPLES);
  });

  it('returns only samples no older than the cut-off', () => {
    const ring = new SampleRing();
    for (let i = 0; i < 300; i++) ring.push(i * 1000, i);
    expect(ring.valuesSince(250_000)).toEqual(Array.from({ length: 50 }, (_, k) => 299 - k));
  });
});
