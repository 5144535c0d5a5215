import { describe, expect, it } from 'vitest';
import { SseRelay } from '../../../../src-main/core/proxy/index.js';
import { MAX_PENDING_EVENT_BYTES } from '../../../../src-main/core/proxy/sse.js';

// An upstream stream that never ends an event (no blank line) was held whole in
// the relay's pending text: memory grew with whatever the upstream sent.

describe('SseRelay with an event that never ends', () => {
  it('holds at most MAX_PENDING_EVENT_BYTES and passes everything on, in order, unchanged', () => {
    const relay = new SseRelay(false);
    const piece = 'data: ' + 'x'.repeat(64 * 1024 - 6);
    let out = '';
    let maxHeld = 0;
    for (let i = 0; i < 48; i++) {
      out += relay.push(Buffer.from(piece)).toString();
      maxHeld = Math.max(maxHeld, relay.pendingBytes);
    }
    // Then ordinary events still relay (and a usage line is still read).
    const tail = '\n\ndata: {"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\ndata: [DONE]\n\n';
    out += relay.push(Buffer.from(tail)).toString() + relay.end().toString();
    expect(maxHeld).toBeLessThanOrEqual(MAX_PENDING_EVENT_BYTES);
    expect(relay.oversized).toBeGreaterThan(0);
    expect(out).toBe(piece.repeat(48) + tail);
    expect(relay.usage).toEqual({ promptTokens: 1, completionTokens: 2 });
    expect(relay.sawDone).toBe(true);
  });
});
