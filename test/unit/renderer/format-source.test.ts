import { describe, expect, it } from 'vitest';
import type { FigureSource } from '../../../src-preload/contract/index.js';
import { AGE_SLACK_MS, DEFAULT_POLL_INTERVAL_MS, medianGapMs, oldAfterMs, sourceLine } from '../../../src-renderer/src/format/source.js';

const NOW = 1_700_000_000_000;
const src = (kind: FigureSource['kind'], atMs: number | null, detail: string | null = null): FigureSource => ({ kind, atMs, detail });

describe('where figures come from', () => {
  it('names the tool or endpoint and the age of the reading', () => {
    expect(sourceLine(src('nvidia-smi', NOW - 1000), NOW, 1000).text).toBe('nvidia-smi · 1 s ago');
    expect(sourceLine(src('llama-server', NOW - 2000), NOW, 1000).text).toBe('llama-server /slots · 2 s ago');
    expect(sourceLine(src('vllm', NOW - 400), NOW, 1000).text).toBe('vLLM /metrics · 0 s ago');
    expect(sourceLine(src('amd-sysfs', NOW - 1000), NOW, 1000).text).toBe('amdgpu sysfs · 1 s ago');
    expect(sourceLine(src('prometheus', NOW - 14_000), NOW, 5000).text).toBe('Prometheus · 14 s ago');
  });

  it('is fresh up to three poll intervals (and a second of slack), then flagged', () => {
    expect(sourceLine(src('nvidia-smi', NOW - 2400), NOW, 1000).tone).toBe('fresh');
    expect(sourceLine(src('nvidia-smi', NOW - 4000), NOW, 1000).tone).toBe('fresh');
    const old = sourceLine(src('nvidia-smi', NOW - 4001), NOW, 1000);
    expect(old.tone).toBe('old');
    expect(old.title).toMatch(/older than 3 polls \(3 s\): the figures may be out of date/);
    // a slower console poll moves the limit with it
    expect(sourceLine(src('vllm', NOW - 12_000), NOW, 5000).tone).toBe('fresh');
    expect(sourceLine(src('vllm', NOW - 17_000), NOW, 5000).tone).toBe('old');
  });

  it('assumes the default poll interval until it has been measured', () => {
    expect(oldAfterMs(null)).toBe(3 * DEFAULT_POLL_INTERVAL_MS + AGE_SLACK_MS);
    expect(oldAfterMs(Number.NaN)).toBe(3 * DEFAULT_POLL_INTERVAL_MS + AGE_SLACK_MS);
    expect(oldAfterMs(0)).toBe(3 * DEFAULT_POLL_INTERVAL_MS + AGE_SLACK_MS);
    expect(oldAfterMs(2000)).toBe(6000 + AGE_SLACK_MS);
  });

  it('before the first reading says so instead of an age', () => {
    const none = sourceLine(src('rocm-smi', null), NOW, 1000);
    expect(none).toMatchObject({ text: 'rocm-smi · no reading yet', tone: 'none', ageMs: null });
    expect(none.title).toMatch(/figures are unknown/);
  });

  it('puts what was read and when in the title', () => {
    const line = sourceLine(src('llama-server', NOW - 2000, 'GET /health, /slots, /props, /metrics, /models'), NOW, 1000);
    expect(line.title).toMatch(/^llama-server \/slots: GET \/health, \/slots/);
    expect(line.title).toMatch(/read \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\S* \(2 s ago\)/);
  });

  it('a reading a little ahead of this clock is 0 s old, not negative', () => {
    const ahead = sourceLine(src('vllm', NOW + 300), NOW, 1000);
    expect(ahead.ageMs).toBe(0);
    expect(ahead.tone).toBe('fresh');
  });

  it('estimates the poll interval as the median snapshot gap', () => {
    expect(medianGapMs([])).toBeNull();
    expect(medianGapMs([1000])).toBe(1000);
    expect(medianGapMs([1000, 40, 1000, 9000, 1000])).toBe(1000);
    expect(medianGapMs([1000, 2000])).toBe(1500);
    expect(medianGapMs([0, -5, Number.NaN])).toBeNull();
  });
});
