import { describe, expect, it } from 'vitest';
import { SseRelay, usageFromBody } from '../../../../src-main/core/proxy/index.js';
import { withIncludeUsage } from '../../../../src-main/core/proxy/sse.js';

const chunk = (content: string) => `data: {"id":"c","choices":[{"index":0,"delta":{"content":"${content}"}}],"usage":null}\n\n`;
const usage = 'data: {"id":"c","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}\n\n';
const body = chunk('a') + chunk('b') + usage + 'data: [DONE]\n\n';

function run(relay: SseRelay, pieces: string[]): string {
  return Buffer.concat([...pieces.map((p) => relay.push(Buffer.from(p))), relay.end()]).toString();
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
    expect(relay.push(Buffer.from(chunk('x'))).toString()).toContain('"x"');
    expect(relay.push(Buffer.from('data: {"id"'))).toHaveLength(0);
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const text = chunk('é—✓');
    const bytes = Buffer.from(text);
    const relay = new SseRelay(false);
    const out = Buffer.concat([relay.push(bytes.subarray(0, 60)), relay.push(bytes.subarray(60)), relay.end()]);
    expect(out.toString()).toBe(text);
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

// The string relay this one replaced (regex separators, decoded text): the byte relay must hand on
// exactly what it did for valid UTF-8 input, whatever the chunk boundaries.
function stringRelay(body: string, stripUsage: boolean): string {
  let out = '';
  const parts = body.split(/(\r?\n\r?\n)/);
  for (let k = 0; k < parts.length; k += 2) {
    const event = parts[k]!;
    const sep = parts[k + 1] ?? '';
    if (event === '' && sep === '') continue;
    let dataAt = 0;
    if (!event.startsWith('data:')) {
      const i = event.indexOf('\ndata:');
      if (i < 0) {
        out += event + sep;
        continue;
      }
      dataAt = i + 1;
    }
    const payload = event.slice(dataAt + 5).trimStart();
    if (payload.startsWith('[DONE]') || payload.startsWith('{"error"')) out += event + sep;
    else if (payload.includes('"usage":{') || payload.includes('"usage": {')) {
      const parsed = JSON.parse(payload) as { usage?: unknown; choices?: unknown[] };
      if (!stripUsage || !parsed.usage) out += event + sep;
      else if (Array.isArray(parsed.choices) && parsed.choices.length === 0) continue;
      else {
        delete parsed.usage;
        out += event.slice(0, dataAt) + 'data: ' + JSON.stringify(parsed) + sep;
      }
    } else if (stripUsage && event.includes('"usage":null')) out += event.replace(/,"usage":null|"usage":null,?/g, '') + sep;
    else out += event + sep;
  }
  return out;
}

describe('SseRelay on bytes', () => {
  const events = [
    'data: {"id":"c","choices":[{"delta":{"content":"é—✓"}}],"usage":null}\r\n\r\n',
    'id: 7\nevent: chunk\ndata: {"usage":null,"id":"c","choices":[{"delta":{"content":"x"}}]}\n\n',
    'data: {"id":"c","usage":null,"usage":null,"choices":[]}\n\r\n',
    ': keep-alive\n\n',
    'event: note\ndata: {"id":"c","choices":[{"index":0}],"usage": {"prompt_tokens":4,"completion_tokens":1}}\n\n',
    'data: {"id":"c","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}\r\n\r\n',
    'data: [DONE]\n\n',
  ];
  const body = events.join('');

  it('hands on what the string relay did, at every chunk boundary, with and without stripping', () => {
    for (const strip of [false, true]) {
      const want = stringRelay(body, strip);
      const bytes = Buffer.from(body);
      for (let cut = 1; cut < bytes.length; cut++) {
        const relay = new SseRelay(strip);
        const out = Buffer.concat([relay.push(bytes.subarray(0, cut)), relay.push(bytes.subarray(cut)), relay.end()]);
        expect(out.toString(), `strip ${strip}, cut at ${cut}`).toBe(want);
        expect(relay.usage).toEqual({ promptTokens: 4, completionTokens: 2 });
        expect(relay.sawDone).toBe(true);
      }
    }
  });

  it('passes an unchanged read on as the very buffer received (no copy), and bytes that are not UTF-8 as they came', () => {
    const read = Buffer.from('data: {"id":"c","choices":[{"delta":{"content":"a"}}]}\n\ndata: {"id":"c"}\n\n');
    expect(new SseRelay(false).push(read)).toBe(read);
    expect(new SseRelay(true).push(read)).toBe(read);
    const odd = Buffer.concat([Buffer.from('data: {"c":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}\n\n')]);
    const relay = new SseRelay(true);
    expect(Buffer.concat([relay.push(odd.subarray(0, 13)), relay.push(odd.subarray(13)), relay.end()]).equals(odd)).toBe(true);
  });

  it('reads an error event and passes it unchanged', () => {
    const text = 'data: {"error":{"message":"the context is full","code":400}}\n\n';
    const relay = new SseRelay(true);
    expect(Buffer.concat([relay.push(Buffer.from(text)), relay.end()]).toString()).toBe(text);
    expect(relay.errorEvent).toBe('the context is full');
  });
});
