import { describe, expect, it } from 'vitest';
import { CaptureStatusSchema, type CaptureBodyMeta, type CaptureStatus } from '../../../src-preload/contract/index.js';
import { bodySizeLabel, bodyWithoutText, captureKeptLine, captureStatusLine } from '../../../src-renderer/src/features/proxy/capture-lines.js';

// The Proxy view's captured-requests panel says whether capture is on and for what (issue #32 item 5),
// and a body's size honestly: truncated, or compressed/binary/not UTF-8 (size only, no text).

const status = (over: Partial<CaptureStatus> = {}): CaptureStatus =>
  CaptureStatusSchema.parse({
    enabled: true,
    failures: true,
    sampleRate: 0,
    models: [],
    tokens: [],
    maxBodyBytes: 65536,
    retention: { days: 7, rows: 10000, bytes: 268435456 },
    rowsKept: 12,
    bytesKept: 49152,
    oldestTs: null,
    pending: 0,
    dropped: 0,
    lastPrunedAt: null,
    ...over,
  });

const meta = (over: Partial<CaptureBodyMeta>): CaptureBodyMeta => ({ sizeBytes: 3200, storedBytes: 3200, truncated: false, encoding: 'utf8', contentType: 'application/json', contentEncoding: null, ...over });

describe('captured requests panel lines', () => {
  it('says off, and how to turn it on', () => {
    expect(captureStatusLine(status({ enabled: false }))).toBe('Off: no request bodies are kept. Turn on with proxy.capture.enabled in the config.');
  });

  it('says on and for what: failures, a sample, models, tokens, the cap', () => {
    expect(captureStatusLine(status())).toBe('On: failed requests · every model · every token · bodies up to 64 KiB each');
    expect(captureStatusLine(status({ sampleRate: 0.05, models: ['qwen'], tokens: ['app', 'ci'] }))).toBe(
      'On: failed requests and 5 % of all requests · models qwen · tokens app, ci · bodies up to 64 KiB each',
    );
    expect(captureStatusLine(status({ failures: false }))).toContain('On: nothing (failures off, no sample)');
  });

  it('what is kept, and what the data folder refused', () => {
    expect(captureKeptLine(status())).toBe('Kept 7 d, 10000 captures, 256 MiB at most · 12 kept (48 KiB)');
    expect(captureKeptLine(status({ dropped: 3 }))).toContain('3 not written (data folder refused writes)');
  });

  it('body sizes: whole, truncated, compressed, binary, not UTF-8, empty', () => {
    expect(bodySizeLabel(meta({}))).toBe('3.1 KiB');
    expect(bodySizeLabel(meta({ sizeBytes: 50 * 1024 * 1024, storedBytes: 65536, truncated: true }))).toBe('64 KiB of 50 MiB (truncated)');
    expect(bodySizeLabel(meta({ encoding: 'compressed', storedBytes: 0, contentEncoding: 'gzip' }))).toBe('3.1 KiB compressed');
    expect(bodySizeLabel(meta({ encoding: 'not_utf8', storedBytes: 0 }))).toBe('3.1 KiB not UTF-8');
    expect(bodySizeLabel(meta({ encoding: 'empty', sizeBytes: 0, storedBytes: 0 }))).toBe('empty');
    expect(bodyWithoutText(meta({}))).toBeNull();
    expect(bodyWithoutText(meta({ encoding: 'compressed', contentEncoding: 'gzip' }))).toBe('3.1 KiB gzip-encoded: kept as its size only, not as text.');
    expect(bodyWithoutText(meta({ encoding: 'binary', contentType: 'image/png' }))).toBe('3.1 KiB of binary data (image/png): kept as its size only.');
  });
});
