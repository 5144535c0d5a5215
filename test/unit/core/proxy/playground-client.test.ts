import { describe, expect, it } from 'vitest';
import { PlaygroundErrorCode } from '../../../../src-preload/contract/index.js';
import { AppError, isCancellation } from '../../../../src-main/core/base/index.js';
import { decodeTokensPerS, sendChat, type ChatCall } from '../../../../src-main/core/proxy/playground-client.js';
import { UpstreamErrorCode, type UpstreamStream } from '../../../../src-main/core/upstream/index.js';

// The playground's reading of the proxy's answer: figures from the stream's
// own arrival times (an injected monotonic clock) and the usage block, never
// from counting chunks; refusals and in-stream errors as data.

/** A piece of the body and the monotonic time it arrives at. */
type Piece = [atMs: number, text: string | Buffer];

function world(pieces: Piece[], options: { status?: number; headers?: Record<string, string>; doneAt?: number } = {}) {
  let t = 0;
  // Not a Readable: one would read ahead of the consumer and move the clock before a piece is taken.
  const body = {
    readableEnded: false,
    destroy: () => undefined,
    async *[Symbol.asyncIterator]() {
      for (const [at, text] of pieces) {
        t = at;
        yield typeof text === 'string' ? Buffer.from(text) : text;
      }
      if (options.doneAt !== undefined) t = options.doneAt;
      body.readableEnded = true;
    },
  };
  const answer = {
    status: options.status ?? 200,
    headers: { 'x-request-id': 'req_0001', 'x-gpu-console-request-id': 'req_0001', 'x-upstream': 'gpu-a/qwen', 'x-queue-ms': '12', ...options.headers },
    body,
    retried: false,
    classify: (err: unknown) => new AppError(UpstreamErrorCode.RESET, `reset: ${String(err)}`),
    release: async () => undefined,
  } as unknown as UpstreamStream;
  const sent: unknown[] = [];
  const texts: string[] = [];
  const ids: unknown[] = [];
  const call: ChatCall = {
    client: {
      stream: async (c) => {
        sent.push(c);
        return answer;
      },
    },
    path: '/chat/completions',
    authorization: 'Bearer gci_x',
    cls: 'batch',
    body: { model: 'qwen' },
    stream: true,
    deadlineMs: 60_000,
    signal: new AbortController().signal,
    now: () => t,
    onHeaders: (x) => ids.push(x),
    onText: (x) => texts.push(x),
  };
  return { call, sent, texts, ids };
}

const chunk = (content: string | null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ model: 'Qwen3-8B', choices: [{ index: 0, delta: content === null ? { role: 'assistant' } : { content }, finish_reason: null }], ...extra })}\n\n`;
const finish = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;
const usage = (completion: number) => `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: completion } })}\n\n`;

describe('playground client: streamed answers', () => {
  it('TTFT from sending to the first content chunk; tok/s over the decode from the usage block', async () => {
    const w = world([
      [100, chunk(null)],
      [150, chunk('Hel')],
      [200, chunk('lo')],
      [350, chunk('!') + finish],
      [360, usage(4) + 'data: [DONE]\n\n'],
    ]);
    const a = await sendChat(w.call);
    expect(a).toMatchObject({ text: 'Hello!', finishReason: 'stop', error: null, ttftMs: 150, totalMs: 360, promptTokens: 9, completionTokens: 4, model: 'Qwen3-8B' });
    // Three tokens after the first, over 200 ms from the first content chunk to the last.
    expect(a.tokensPerS).toBeCloseTo(15, 6);
    expect(a.tokensPerSBasis).toBe('decode');
    expect(a).toMatchObject({ requestId: 'req_0001', upstream: 'gpu-a/qwen', queueMs: 12, status: 200 });
    expect(w.ids).toEqual([{ requestId: 'req_0001', upstream: 'gpu-a/qwen' }]);
    expect(w.texts.join('')).toBe('Hello!');
    // Sent as a client of the proxy: its own token, the chosen class as X-Priority.
    expect(w.sent[0]).toMatchObject({ method: 'POST', path: '/chat/completions', headers: { authorization: 'Bearer gci_x', 'x-priority': 'batch' } });
  });

  it("names the row by the proxy's own id (X-Request-Id may be the client's trace) and says what it did to max_tokens", async () => {
    const w = world([[10, chunk('x') + finish]], { headers: { 'x-request-id': 'trace-from-app', 'x-gpu-console-request-id': 'req_0002', 'x-gpu-console-max-tokens': 'clamped 9000→4096' } });
    const a = await sendChat(w.call);
    expect(a).toMatchObject({ requestId: 'req_0002', maxTokensNote: 'clamped 9000→4096' });
    expect(w.ids).toEqual([{ requestId: 'req_0002', upstream: 'gpu-a/qwen' }]);
  });

  it('reads events split across pieces and a UTF-8 character split between two pieces', async () => {
    const whole = Buffer.from(chunk('héllo') + finish + usage(2));
    const at = whole.indexOf(Buffer.from('é')) + 1; // between the two bytes of é
    const w = world([
      [10, whole.subarray(0, 7)],
      [20, whole.subarray(7, at)],
      [30, whole.subarray(at)],
    ]);
    const a = await sendChat(w.call);
    expect(a.text).toBe('héllo');
    expect(a.ttftMs).toBe(30);
  });

  it('no usage block: token figures stay unknown, never counted from chunks', async () => {
    const w = world([
      [50, chunk('a')],
      [90, chunk('b')],
      [130, chunk('c') + finish + 'data: [DONE]\n\n'],
    ]);
    const a = await sendChat(w.call);
    expect(a.text).toBe('abc');
    expect(a.completionTokens).toBeNull();
    expect(a.tokensPerS).toBeNull();
    expect(a.tokensPerSBasis).toBeNull();
    expect(a.ttftMs).toBe(50);
  });

  it('an error frame inside the stream is the answer\'s error, with the frame\'s retry time', async () => {
    const frame = `data: ${JSON.stringify({ error: { message: 'the upstream went away', type: 'server_error', code: 'upstream_reset', retry_after_s: 4 } })}\n\n`;
    const w = world([
      [40, chunk('par')],
      [60, frame],
    ]);
    const a = await sendChat(w.call);
    expect(a.text).toBe('par');
    expect(a.error).toEqual({ code: 'upstream_reset', message: 'the upstream went away', retryAfterS: 4, inStream: true });
  });

  it('a stream that ends without a finish reason is said to be cut', async () => {
    const w = world([[40, chunk('par')]]);
    const a = await sendChat(w.call);
    expect(a.error).toMatchObject({ code: 'stream_cut', inStream: true });
  });
});

describe('playground client: refusals and unstreamed answers', () => {
  it("a proxy refusal keeps its status, wire code, message and Retry-After", async () => {
    const body = JSON.stringify({ error: { message: 'queue for l20-poc/qwen is full (64 waiting)', type: 'rate_limit_error', param: null, code: 'queue_full' } });
    const w = world([[5, body]], { status: 429, headers: { 'retry-after': '7' } });
    const a = await sendChat(w.call);
    expect(a).toMatchObject({ status: 429, text: '', tokensPerS: null, ttftMs: null, requestId: 'req_0001' });
    expect(a.error).toEqual({ code: 'queue_full', message: 'queue for l20-poc/qwen is full (64 waiting)', retryAfterS: 7, inStream: false });
  });

  it('an error answer that is not JSON is coded by its status', async () => {
    const w = world([[5, '<html>bad gateway</html>']], { status: 502 });
    const a = await sendChat(w.call);
    expect(a.error).toMatchObject({ code: 'HTTP_502', retryAfterS: null });
  });

  it('unstreamed: no TTFT; tok/s over the whole answer', async () => {
    const body = JSON.stringify({ model: 'Qwen3-8B', choices: [{ message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'length' }], usage: { prompt_tokens: 5, completion_tokens: 10 } });
    const w = world([[400, body]], { doneAt: 500 });
    const a = await sendChat({ ...w.call, stream: false });
    expect(a).toMatchObject({ text: 'Hi there', finishReason: 'length', ttftMs: null, totalMs: 500, completionTokens: 10, tokensPerSBasis: 'end_to_end' });
    expect(a.tokensPerS).toBeCloseTo(20, 6);
  });

  it('no answer at all: PLAYGROUND_PROXY_UNREACHABLE; a cancelled call stays a cancellation', async () => {
    const w = world([]);
    const failing = { ...w.call, client: { stream: () => Promise.reject(new AppError(UpstreamErrorCode.REFUSED, 'connect ECONNREFUSED 127.0.0.1:1')) } };
    await expect(sendChat(failing)).rejects.toMatchObject({ code: PlaygroundErrorCode.PROXY_UNREACHABLE, message: expect.stringMatching(/ECONNREFUSED/) });
    const controller = new AbortController();
    controller.abort();
    const cancelled = { ...w.call, signal: controller.signal, client: { stream: () => Promise.reject(new AppError(UpstreamErrorCode.CANCELLED, 'cancelled')) } };
    const err = await sendChat(cancelled).catch((e: unknown) => e);
    expect(isCancellation(err)).toBe(true);
  });
});

describe('decode speed', () => {
  it('is unknown with fewer than two tokens or no time between chunks', () => {
    expect(decodeTokensPerS(null, 0, 100)).toBeNull();
    expect(decodeTokensPerS(1, 0, 100)).toBeNull();
    expect(decodeTokensPerS(10, 100, 100)).toBeNull();
    expect(decodeTokensPerS(11, 0, 1000)).toBe(10);
  });
});
