import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BodyTee, describeBody, redactHeaders, redactText } from '../../../../src-main/core/proxy/capture-body.js';

// One captured body: kept up to the cap with its whole size, told apart as text or not (compressed,
// binary, not UTF-8: size only), and redacted (issue #32 item 5, "Bad input").

const JSON_TYPE = { contentType: 'application/json', contentEncoding: null };

describe('BodyTee', () => {
  it('keeps the first cap bytes of chunks and counts the whole size', () => {
    const tee = new BodyTee(10);
    tee.push(Buffer.from('abcdef'));
    tee.push('ghijkl');
    tee.push(Buffer.from('mnop'));
    expect(tee.sizeBytes).toBe(16);
    expect(tee.truncated).toBe(true);
    expect(tee.bytes().toString()).toBe('abcdefghij');
  });

  it('a 50 MB body leaves the cap stored, not 50 MB, and holds no chunk past the cap', () => {
    const cap = 64 * 1024;
    const tee = new BodyTee(cap);
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 50; i++) tee.push(chunk);
    expect(tee.sizeBytes).toBe(50 * 1024 * 1024);
    expect(tee.bytes().length).toBe(cap);
    // Only the first chunk is referenced: the other 49 went by.
    expect((tee as unknown as { chunks: unknown[] }).chunks).toHaveLength(1);
  });

  it('counts multi-byte strings in bytes, and a body within the cap is not truncated', () => {
    const tee = new BodyTee(100);
    tee.push('é€');
    expect(tee.sizeBytes).toBe(5);
    expect(tee.truncated).toBe(false);
    expect(tee.bytes().toString('utf8')).toBe('é€');
  });
});

describe('describeBody', () => {
  it('text is kept as text with its figures', () => {
    const bytes = Buffer.from('{"model":"m"}');
    expect(describeBody(bytes, bytes.length, false, JSON_TYPE)).toEqual({
      meta: { sizeBytes: 13, storedBytes: 13, truncated: false, encoding: 'utf8', contentType: 'application/json', contentEncoding: null },
      text: '{"model":"m"}',
    });
  });

  it('a gzip-encoded body is recorded as compressed with its size, never as text', () => {
    const gz = gzipSync(Buffer.from('{"model":"m"}'.repeat(50)));
    const d = describeBody(gz, gz.length, false, { contentType: 'application/json', contentEncoding: 'gzip' });
    expect(d.text).toBeNull();
    expect(d.meta).toMatchObject({ encoding: 'compressed', sizeBytes: gz.length, storedBytes: 0, contentEncoding: 'gzip' });
    // Sent without its header, gzip's magic bytes still say so.
    expect(describeBody(gz, gz.length, false, JSON_TYPE).meta.encoding).toBe('compressed');
  });

  it('binary (a binary type, or NUL bytes) and not-UTF-8 bodies keep their size only', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]);
    expect(describeBody(png, 6, false, { contentType: 'image/png', contentEncoding: null })).toMatchObject({ text: null, meta: { encoding: 'binary', sizeBytes: 6 } });
    const nul = Buffer.from('{"a":"\u0000"}', 'latin1');
    expect(describeBody(nul, nul.length, false, JSON_TYPE).meta.encoding).toBe('binary');
    const latin1 = Buffer.from('{"name":"Jos\xe9"}', 'latin1');
    expect(describeBody(latin1, latin1.length, false, JSON_TYPE)).toMatchObject({ text: null, meta: { encoding: 'not_utf8', storedBytes: 0 } });
    expect(describeBody(Buffer.alloc(0), 0, false, JSON_TYPE).meta.encoding).toBe('empty');
  });

  it('a truncated body cut inside a UTF-8 sequence is still text (the cut half dropped)', () => {
    const whole = Buffer.from('abc€');
    const cut = whole.subarray(0, 5); // '€' is 3 bytes: two of them kept
    const d = describeBody(cut, whole.length, true, JSON_TYPE);
    expect(d).toMatchObject({ text: 'abc', meta: { encoding: 'utf8', truncated: true, sizeBytes: 6 } });
    // The same bytes not truncated are not UTF-8.
    expect(describeBody(cut, 5, false, JSON_TYPE).meta.encoding).toBe('not_utf8');
  });

  it('an SSE stream is text', () => {
    const sse = Buffer.from('data: {"x":1}\n\ndata: [DONE]\n\n');
    expect(describeBody(sse, sse.length, false, { contentType: 'text/event-stream', contentEncoding: null }).text).toContain('[DONE]');
  });
});

describe('redaction', () => {
  const clientToken = 'gcp_' + 'A'.repeat(43);
  const upstreamKey = 'sk-upstream-secret-1234567890';

  it('replaces the known secrets, any client token of the proxy, and secrets written inline', () => {
    const other = 'gcp_' + 'b'.repeat(43);
    const text = `{"content":"my token ${clientToken}, theirs ${other}","note":"Authorization: Bearer abcdef123","x":"${upstreamKey}","password":"hunter22"}`;
    const out = redactText(text, [clientToken, upstreamKey], false);
    for (const s of [clientToken, other, upstreamKey, 'abcdef123', 'hunter22']) expect(out).not.toContain(s);
    expect(out).toContain('[redacted]');
    expect(out).toContain('"content":"my token');
  });

  it('leaves figures named like secrets alone (max_tokens)', () => {
    const text = '{"max_tokens":512,"prompt_tokens":3}';
    expect(redactText(text, [], false)).toBe(text);
  });

  it('a truncated text ending with the start of a secret has that start redacted', () => {
    const cutKey = `{"echo":"${upstreamKey.slice(0, 12)}`;
    expect(redactText(cutKey, [upstreamKey], true)).toBe('{"echo":"[redacted]');
    const cutToken = `{"echo":"${clientToken.slice(0, 9)}`;
    expect(redactText(cutToken, [], true)).toBe('{"echo":"[redacted]');
    // Not truncated: a word that happens to start like a key is text.
    expect(redactText('{"echo":"sk-upstream-s', [upstreamKey], false)).toBe('{"echo":"sk-upstream-s');
  });

  it('credential headers are replaced, others kept (scrubbed of known secrets)', () => {
    const h = redactHeaders(
      { authorization: `Bearer ${clientToken}`, 'x-api-key': 'k', Cookie: 'a=b', 'content-type': 'application/json', 'x-note': `key ${upstreamKey}`, 'x-list': ['a', 'b'] },
      [upstreamKey],
    );
    expect(h).toEqual({ authorization: '[redacted]', 'x-api-key': '[redacted]', cookie: '[redacted]', 'content-type': 'application/json', 'x-note': 'key [redacted]', 'x-list': 'a, b' });
  });
});
