import { describe, expect, it } from 'vitest';
import {
  PlaygroundErrorCode,
  type ChannelInput,
  type ChannelOutput,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
  type PlaygroundAnswer,
  type PlaygroundSend,
} from '../../../src-preload/contract/index.js';
import { modelChoices } from '../../../src-renderer/src/features/playground/playground-models.js';
import { createPlaygroundStore, historyOf } from '../../../src-renderer/src/features/playground/playground-store.js';
import { createAppStore } from '../../../src-renderer/src/store/store.js';
import { TransportError, cancelledError, type ConnectionState, type InvokeOptions, type Transport } from '../../../src-renderer/src/transport/transport.js';

// The playground panel's state: streamed text from progress events, replaced
// whole by the call's answer; multi-turn history that alternates; Stop as an
// aborted call; a refusal before sending puts the prompt back.

/** `playground.send` answers when the test says (resolve/reject), so events can arrive first. */
class FakeTransport implements Transport {
  readonly kind = 'web' as const;
  readonly sent: PlaygroundSend[] = [];
  private readonly listeners = new Set<(p: EventPayload<'playground.progress'>) => void>();
  pending: { resolve(a: PlaygroundAnswer): void; reject(e: unknown): void; signal?: AbortSignal } | null = null;
  invoke<C extends InvokeChannel>(channel: C, input: ChannelInput<C>, options?: InvokeOptions): Promise<ChannelOutput<C>> {
    if (channel !== 'playground.send') return Promise.reject(new Error(`unexpected ${channel}`));
    this.sent.push(input as PlaygroundSend);
    return new Promise((resolve, reject) => {
      this.pending = { resolve: resolve as (a: PlaygroundAnswer) => void, reject, signal: options?.signal };
      options?.signal?.addEventListener('abort', () => reject(cancelledError(channel)));
    });
  }
  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    if (event !== 'playground.progress') return () => undefined;
    const l = listener as (p: EventPayload<'playground.progress'>) => void;
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  progress(p: EventPayload<'playground.progress'>): void {
    for (const l of this.listeners) l(p);
  }
  onConnection(listener: (s: ConnectionState) => void): () => void {
    listener({ status: 'open', attempt: 0, nextRetryAt: null, lastError: null });
    return () => undefined;
  }
  dispose(): void {}
}

const answer = (runId: string, text: string, more: Partial<PlaygroundAnswer> = {}): PlaygroundAnswer => ({
  runId,
  requestId: 'req_1',
  upstream: 'gpu-a/qwen',
  model: 'Qwen3-8B',
  status: 200,
  maxTokensNote: null,
  text,
  finishReason: 'stop',
  error: null,
  stream: true,
  ttftMs: 120,
  totalMs: 900,
  queueMs: 0,
  promptTokens: 9,
  completionTokens: 5,
  tokensPerS: 6.2,
  tokensPerSBasis: 'decode',
  ...more,
});

function setUp() {
  const t = new FakeTransport();
  let n = 0;
  const store = createPlaygroundStore({ transport: t, random: (k) => new Uint8Array(k).fill(++n), settings: { model: 'qwen' } });
  return { t, store };
}

describe('playground store', () => {
  it('streams text from progress events, then takes the whole answer from the call', async () => {
    const { t, store } = setUp();
    store.getState().setDraft('Say hello.');
    const sending = store.getState().send();
    const runId = t.sent[0]!.runId;
    expect(t.sent[0]).toMatchObject({ model: 'qwen', class: 'interactive', stream: true, maxTokens: 256, temperature: null, turns: [{ role: 'user', content: 'Say hello.' }] });
    expect(store.getState()).toMatchObject({ running: runId, draft: '' });
    t.progress({ runId, seq: 0, text: '', requestId: 'req_1', upstream: 'gpu-a/qwen' });
    t.progress({ runId, seq: 1, text: 'Hel', requestId: 'req_1', upstream: 'gpu-a/qwen' });
    // seq 2 was skipped by a backed-up stream: counted, and the answer repairs the text.
    t.progress({ runId, seq: 3, text: '!', requestId: 'req_1', upstream: 'gpu-a/qwen' });
    t.progress({ runId: 'someone-else', seq: 0, text: 'not mine', requestId: null, upstream: null });
    expect(store.getState().exchanges[0]).toMatchObject({ text: 'Hel!', requestId: 'req_1', upstream: 'gpu-a/qwen', status: 'running', skippedEvents: 1 });
    t.pending!.resolve(answer(runId, 'Hello!'));
    await sending;
    expect(store.getState().exchanges[0]).toMatchObject({ text: 'Hello!', status: 'done', answer: { tokensPerS: 6.2 } });
    expect(store.getState().running).toBeNull();
  });

  it('sends the earlier exchanges as alternating turns, leaving out one that got no answer', async () => {
    const { t, store } = setUp();
    for (const [prompt, reply] of [['one', 'uno'], ['two', ''], ['three', null]] as const) {
      store.getState().setDraft(prompt);
      const sending = store.getState().send();
      const runId = t.sent[t.sent.length - 1]!.runId;
      if (reply === null) break;
      t.pending!.resolve(reply === '' ? answer(runId, '', { status: 429, error: { code: 'queue_full', message: 'full', retryAfterS: 3, inStream: false } }) : answer(runId, reply));
      await sending;
    }
    expect(t.sent[2]!.turns).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'uno' },
      { role: 'user', content: 'three' },
    ]);
    expect(store.getState().exchanges[1]).toMatchObject({ status: 'failed', answer: { error: { code: 'queue_full', retryAfterS: 3 } } });
  });

  it('Stop aborts the call and keeps what had arrived', async () => {
    const { t, store } = setUp();
    store.getState().setDraft('Count to 100.');
    const sending = store.getState().send();
    const runId = t.sent[0]!.runId;
    t.progress({ runId, seq: 0, text: '1 2 3', requestId: 'req_9', upstream: 'gpu-a/qwen' });
    store.getState().stop();
    await sending;
    expect(t.pending!.signal!.aborted).toBe(true);
    expect(store.getState().exchanges[0]).toMatchObject({ status: 'stopped', text: '1 2 3', requestId: 'req_9' });
    expect(store.getState().running).toBeNull();
  });

  it('a refusal before sending (asleep) is shown by code and the prompt goes back to the composer', async () => {
    const { t, store } = setUp();
    store.getState().setDraft('Hello?');
    const sending = store.getState().send();
    t.pending!.reject(new TransportError({ code: PlaygroundErrorCode.MODEL_SLEEPING, message: 'qwen is asleep (gpu-a/qwen); wake it from the host card, then ask again', retryable: false, details: {} }));
    await sending;
    expect(store.getState()).toMatchObject({ exchanges: [], draft: 'Hello?', refusal: { code: PlaygroundErrorCode.MODEL_SLEEPING } });
  });

  it('fields that are not numbers are named here; nothing is sent', async () => {
    const { t, store } = setUp();
    store.getState().setDraft('x');
    store.getState().setSettings({ maxTokens: '' });
    await store.getState().send();
    expect(store.getState().refusal).toMatchObject({ code: PlaygroundErrorCode.INVALID_MAX_TOKENS });
    store.getState().setSettings({ maxTokens: '12', temperature: 'warm' });
    await store.getState().send();
    expect(store.getState().refusal).toMatchObject({ code: PlaygroundErrorCode.INVALID_TEMPERATURE });
    expect(t.sent).toEqual([]);
  });

  it('history skips a running exchange', () => {
    expect(historyOf([{ runId: 'a', prompt: 'p', text: 'partial', status: 'running', answer: null, requestId: null, upstream: null, error: null, skippedEvents: 0 }])).toEqual([]);
  });
});

describe('playground model list and the request link', () => {
  it('marks a name asleep only when none of its replicas could answer', () => {
    const up = (upstream: string, state: 'ready' | 'sleeping' | 'down' | 'draining') => ({ upstream, state }) as never;
    const choices = modelChoices(
      [
        { name: 'qwen', kind: 'model', chain: ['qwen'], replicas: ['a/qwen', 'b/qwen'], aliases: [] },
        { name: 'ocr', kind: 'model', chain: ['ocr'], replicas: ['a/ocr'], aliases: [] },
        { name: 'chat', kind: 'group', chain: ['qwen', 'gemma'], replicas: ['a/qwen', 'b/qwen', 'a/gemma'], aliases: [] },
      ],
      [up('a/qwen', 'sleeping'), up('b/qwen', 'down'), up('a/ocr', 'sleeping'), up('a/gemma', 'ready')],
    );
    expect(choices).toEqual([
      { name: 'qwen', kind: 'model', asleep: true },
      { name: 'ocr', kind: 'model', asleep: true },
      { name: 'chat', kind: 'group', asleep: false },
    ]);
  });

  it('showRequest opens the Proxy view; the log takes the request id once', () => {
    const app = createAppStore({ transportKind: 'web' });
    app.getState().showRequest('req_00ab');
    expect(app.getState().ui.view).toBe('proxy');
    expect(app.getState().takeRequestFocus()).toBe('req_00ab');
    expect(app.getState().takeRequestFocus()).toBeNull();
  });
});
