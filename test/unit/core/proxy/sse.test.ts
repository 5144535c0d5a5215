import { describe, expect, it } from 'vitest';
import { SseRelay, usageFromBody } from '../../../../src-main/core/proxy/index.js';
import { withIncludeUsage } from '../../../../src-main/core/proxy/sse.js';

const chunk = (content: string) => `data: {"id":"c","choices":[{"index":0,"delta":{"content":"${content}"}}],"usage":null}\n\n`;
const usage = 'data: {"id":"c","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}\n\n';
const body = chunk('a') + chunk('b') + usage + 'data: [DONE]\n\n';

function run(relay: SseRelay, pieces: string[]): string {
  return pieces.map((p) => relay.push(Buffer.from(p))).join('') + relay.end();
}

describe('SseRelay', () => {
  it('passes events through unchanged and reads the usage when the client asked for it', () => {
    const relay = new SseRelay(false);
    expect(run(relay, [body])).toBe(body);
    expect(relay.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(relay.sawDone).toBe(true);
  });

  it('removes the usage chunk and usage:null fields it added, across arbitrary chunk boundaries', () => {
    for (const size of [1, 3, 17, 64]) {
      const relay = new SseRelay(true);
      const pieces: string[] = [];
      for (let i = 0; i < body.length; i += size) pieces.push(body.slice(i, i + size));
      const out = run(relay, pieces);
      expect(out).not.toContain('usage');
      expect(out).toContain('"content":"a"');
      expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(relay.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
    }
  });

  it('never holds back a complete event (no buffering past the event end)', () => {
    const relay = new SseRelay(true);
    expect(relay.push(Buffer.from(chunk('x')))).toContain('"x"');
    expect(relay.push(Buffer.from('data: {"id"'))).toBe('');
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const text = chunk('é—✓');
    const bytes = Buffer.from(text);
    const relay = new SseRelay(false);
    const out = relay.push(bytes.subarray(0, 60)) + relay.push(bytes.subarray(60)) + relay.end();
    expect(out).toBe(text);
  });

  it('reads usage from a complete JSON body', () => {
    expect(usageFromBody(Buffer.from('{"usage":{"prompt_tokens":2,"completion_tokens":5}}'))).toEqual({ promptTokens: 2, completionTokens: 5 });
    expect(usageFromBody(Buffer.from('not json'))).toBeNull();
  });

  it('reads usage from the usage object alone, whatever surrounds it, and agrees with a full parse', () => {
    const answer = (usage: unknown, content = 'hello') =>
      JSON.stringify({ id: 'c', choices: [{ index: 0, message: { role: 'assistant', content } }], usage, prompt_logprobs: null });
    const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: null };
    expect(usageFromBody(Buffer.from(answer(usage)))).toEqual({ promptTokens: 7, completionTokens: 3 });
    // Content that mentions usage, braces and escaped quotes does not confuse it.
    const tricky = '{"usage": {"prompt_tokens": 99}} \\" } { "usage":';
    expect(usageFromBody(Buffer.from(answer(usage, tricky)))).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(usageFromBody(Buffer.from(answer(null, tricky)))).toBeNull();
    // Whitespace and pretty-printing.
    expect(usageFromBody(Buffer.from(JSON.stringify(JSON.parse(answer(usage)), null, 2)))).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(usageFromBody(Buffer.from(answer(null)))).toBeNull();
    expect(usageFromBody(Buffer.from(answer({})))).toEqual({ promptTokens: null, completionTokens: null });
    expect(usageFromBody(Buffer.from(answer({ prompt_tokens: 'x', completion_tokens: 4 })))).toEqual({ promptTokens: null, completionTokens: 4 });
    expect(usageFromBody(Buffer.from('{"choices":[]}'))).toBeNull();
  });

  it('adds include_usage to a request body without re-serialising it', () => {
    const sent = ' \n{"model":"m","stream":true,"messages":[{"role":"user","content":"{hi}"}]}';
    const out = withIncludeUsage(Buffer.from(sent)).toString();
    expect(JSON.parse(out)).toEqual({ ...(JSON.parse(sent) as object), stream_options: { include_usage: true } });
    expect(out.endsWith('"messages":[{"role":"user","content":"{hi}"}]}')).toBe(true);
  });
});
