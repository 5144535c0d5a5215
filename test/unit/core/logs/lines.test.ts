import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeLine, LineSplitter, maskLine } from '../../../../src-main/core/logs/index.js';

const FIXTURES = join(__dirname, '../../../fixtures/logs');

describe('LineSplitter', () => {
  it('joins a line split across chunks, drops the CR of CRLF, and gives the last unterminated line on flush', () => {
    const s = new LineSplitter(1024);
    expect(s.push(Buffer.from('one\r\ntw'))).toEqual([{ bytes: Buffer.from('one'), cutBytes: 0 }]);
    expect(s.push(Buffer.from('o\nthree')).map((l) => l.bytes.toString())).toEqual(['two']);
    expect(s.flush()).toEqual({ bytes: Buffer.from('three'), cutBytes: 0 });
    expect(s.flush()).toBeNull();
  });

  it('keeps the bound of a 1 MB line and counts the rest, whatever the chunking', () => {
    const s = new LineSplitter(16 * 1024);
    const big = Buffer.alloc(1024 * 1024, 'x');
    const out = [];
    // 64 KiB chunks, as a pipe delivers them; the next line follows the big one.
    for (let i = 0; i < big.length; i += 65536) out.push(...s.push(big.subarray(i, i + 65536)));
    out.push(...s.push(Buffer.from('\nnext\n')));
    expect(out).toHaveLength(2);
    expect(out[0]!.bytes.length).toBe(16 * 1024);
    expect(out[0]!.cutBytes).toBe(1024 * 1024 - 16 * 1024);
    expect(out[1]).toEqual({ bytes: Buffer.from('next'), cutBytes: 0 });
  });

  it('holds no more than its bound while a line never ends', () => {
    const s = new LineSplitter(4096);
    for (let i = 0; i < 100; i++) s.push(Buffer.alloc(65536, 'y'));
    const last = s.flush()!;
    expect(last.bytes.length).toBe(4096);
    expect(last.cutBytes).toBe(100 * 65536 - 4096);
  });
});

describe('decodeLine', () => {
  it('shows invalid UTF-8 as replacement characters and keeps the rest', () => {
    const d = decodeLine({ bytes: Buffer.from([0x6f, 0x6b, 0x20, 0xff, 0xfe, 0x20, 0xc3, 0xa9, 0x74, 0xc3, 0xa9, 0x20, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a]), cutBytes: 0 });
    expect(d.text).toBe('ok \uFFFD\uFFFD été abcdefghij');
    expect(d.binary).toBe(false);
  });

  it('never splits a character at the cut: the partial character counts as cut', () => {
    // 'é' is 2 bytes; a cut after its first byte moves back one.
    const d = decodeLine({ bytes: Buffer.from([0x61, 0x62, 0xc3]), cutBytes: 10 });
    expect(d.text).toBe('ab');
    expect(d.cutBytes).toBe(11);
  });

  it('marks binary garbage instead of showing it', () => {
    const garbage = Buffer.from(Array.from({ length: 200 }, (_, i) => (i * 37) % 256));
    const d = decodeLine({ bytes: garbage, cutBytes: 0 });
    expect(d.binary).toBe(true);
    expect(d.text).toBe('[binary data: 200 bytes not shown]');
  });

  it('drops terminal colour codes and shows other control bytes as replacement characters', () => {
    const d = decodeLine({ bytes: Buffer.from('\u001b[32mINFO\u001b[0m server ready on port 8080 now \u0007'), cutBytes: 0 });
    expect(d.text).toBe('INFO server ready on port 8080 now \uFFFD');
    expect(d.binary).toBe(false);
  });
});

describe('maskLine', () => {
  it.each([
    ['vllm serve m --api-key sk-abc123 --port 8000', 'vllm serve m --api-key [redacted] --port 8000'],
    ['llama-server --api-key=sk-abc123', 'llama-server --api-key=[redacted]'],
    ['HF_TOKEN=hf_AbCdEf123 python -m x', 'HF_TOKEN=[redacted] python -m x'],
    ['request headers: Authorization: Bearer sk-live-999', 'request headers: Authorization: Bearer [redacted]'],
    ["{'authorization': 'Basic dXNlcjpwYXNz'}", "{'authorization': 'Basic [redacted]'}"],
    ['got Bearer abcdefghijkl from client', 'got Bearer [redacted] from client'],
    ['fetching https://user:pw@mirror.example/x', 'fetching https://[redacted]@mirror.example/x'],
  ])('masks %s', (line, masked) => {
    expect(maskLine(line, [])).toBe(masked);
  });

  it("masks the service's own key wherever it appears, and leaves figures named like tokens alone", () => {
    expect(maskLine('client sent s3cr3t-key-value in a query', ['s3cr3t-key-value'])).toBe('client sent [redacted] in a query');
    const figures = 'Chunked prefill is enabled with max_num_batched_tokens=8192. --max-num-batched-tokens 8192 max_tokens=4096';
    expect(maskLine(figures, [])).toBe(figures);
  });

  it("masks the API key in vLLM's recorded non-default args line", () => {
    const line = readFileSync(join(FIXTURES, 'vllm-startup.log'), 'utf8').split('\n').find((l) => l.includes('non-default args'))!;
    const masked = maskLine(line, []);
    expect(masked).not.toContain('sk-fixture-4f1c2a9e7b');
    expect(masked).toContain("'api_key': ['[redacted]']");
    expect(masked).toContain("'max_num_batched_tokens': 8192");
  });
});
