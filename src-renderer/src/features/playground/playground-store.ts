// One playground panel's state and its calls: the request settings, the
// conversation (each exchange with its answer's figures), the draft, and the
// run in flight, whose streamed text arrives as `playground.progress` events
// and whose call's answer then replaces it whole (events may be skipped).
// Stop aborts the call: main closes the request, the proxy records 499.
// Vanilla zustand, so it runs in Node tests; components read it narrowly.
import { createStore, type StoreApi } from 'zustand/vanilla';
import { PlaygroundErrorCode, type ContractError, type PlaygroundAnswer, type PlaygroundProgress, type PlaygroundSend, type PlaygroundTurn, type TrafficClass } from '../../../../src-preload/contract/index.js';
import { isCancelled, toContractError, type Transport } from '../../transport/transport.js';

export interface PlaygroundSettings {
  model: string;
  cls: TrafficClass;
  stream: boolean;
  /** As typed: parsed when sending (main refuses ≤ 0, coded). */
  maxTokens: string;
  /** As typed; empty: the server's default. */
  temperature: string;
  systemPrompt: string;
}

export type ExchangeStatus = 'running' | 'done' | 'stopped' | 'failed';

export interface Exchange {
  runId: string;
  prompt: string;
  /** The answer's text so far (streamed), then the whole of it. */
  text: string;
  status: ExchangeStatus;
  answer: PlaygroundAnswer | null;
  /** Known from the first progress event (the proxy's headers), before the answer. */
  requestId: string | null;
  upstream: string | null;
  /** The call failed without an answer (coded: refused before sending, or the proxy unreachable). */
  error: ContractError | null;
  /** Progress events this panel never got (the answer still carries the whole text). */
  skippedEvents: number;
}

export interface PlaygroundState {
  settings: PlaygroundSettings;
  draft: string;
  exchanges: readonly Exchange[];
  /** A refusal before anything was sent (sleeping model, empty prompt…): shown above the composer. */
  refusal: ContractError | null;
  running: string | null;
  setSettings(patch: Partial<PlaygroundSettings>): void;
  setDraft(text: string): void;
  send(): Promise<void>;
  stop(): void;
  clear(): void;
  dispose(): void;
}

export type PlaygroundStore = StoreApi<PlaygroundState>;

export const DEFAULT_SETTINGS: PlaygroundSettings = { model: '', cls: 'interactive', stream: true, maxTokens: '256', temperature: '', systemPrompt: '' };

/** Earlier exchanges that got an answer, as turns; a failed or empty exchange is left out so turns alternate. */
export function historyOf(exchanges: readonly Exchange[]): PlaygroundTurn[] {
  const turns: PlaygroundTurn[] = [];
  for (const x of exchanges) {
    if (x.status === 'running' || x.text === '') continue;
    turns.push({ role: 'user', content: x.prompt }, { role: 'assistant', content: x.text });
  }
  return turns;
}

function newRunId(random: (n: number) => Uint8Array): string {
  return 'pg_' + Array.from(random(12), (b) => b.toString(16).padStart(2, '0')).join('');
}

function localRefusal(code: string, message: string): ContractError {
  return { code, message, retryable: false, details: {} };
}

function numberOrNull(text: string): number | null {
  const t = text.trim();
  if (t === '') return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : Number.NaN;
}

export interface PlaygroundStoreOptions {
  transport: Transport;
  random?: (n: number) => Uint8Array;
  settings?: Partial<PlaygroundSettings>;
}

export function createPlaygroundStore(options: PlaygroundStoreOptions): PlaygroundStore {
  const { transport } = options;
  const random = options.random ?? ((n: number) => crypto.getRandomValues(new Uint8Array(n)));
  let controller: AbortController | null = null;
  let lastSeq = -1;

  const store = createStore<PlaygroundState>()((set, get) => {
    const update = (runId: string, patch: (x: Exchange) => Partial<Exchange>) =>
      set((s) => ({ exchanges: s.exchanges.map((x) => (x.runId === runId ? { ...x, ...patch(x) } : x)) }));

    return {
      settings: { ...DEFAULT_SETTINGS, ...options.settings },
      draft: '',
      exchanges: [],
      refusal: null,
      running: null,
      setSettings: (patch) => set((s) => ({ settings: { ...s.settings, ...patch } })),
      setDraft: (draft) => set({ draft }),
      async send() {
        const { settings, draft, exchanges, running } = get();
        if (running !== null) return;
        const maxTokens = numberOrNull(settings.maxTokens);
        const temperature = numberOrNull(settings.temperature);
        // What a typed field cannot carry as a number is named here; main names the rest (≤ 0, out of range).
        if (maxTokens === null || !Number.isInteger(maxTokens)) {
          set({ refusal: localRefusal(PlaygroundErrorCode.INVALID_MAX_TOKENS, 'max_tokens must be a whole number of at least 1') });
          return;
        }
        if (Number.isNaN(temperature)) {
          set({ refusal: localRefusal(PlaygroundErrorCode.INVALID_TEMPERATURE, 'temperature must be a number between 0 and 2, or empty for the server\'s default') });
          return;
        }
        const runId = newRunId(random);
        const input: PlaygroundSend = {
          runId,
          model: settings.model,
          class: settings.cls,
          stream: settings.stream,
          maxTokens,
          temperature,
          systemPrompt: settings.systemPrompt,
          turns: [...historyOf(exchanges), { role: 'user', content: draft }],
        };
        controller = new AbortController();
        lastSeq = -1;
        const exchange: Exchange = { runId, prompt: draft, text: '', status: 'running', answer: null, requestId: null, upstream: null, error: null, skippedEvents: 0 };
        set((s) => ({ running: runId, refusal: null, draft: '', exchanges: [...s.exchanges, exchange] }));
        try {
          const answer = await transport.invoke('playground.send', input, { signal: controller.signal });
          update(runId, () => ({ text: answer.text, answer, requestId: answer.requestId, upstream: answer.upstream, status: answer.error && answer.text === '' ? 'failed' : 'done' }));
        } catch (err) {
          const current = get().exchanges.find((x) => x.runId === runId);
          if (isCancelled(err)) update(runId, () => ({ status: 'stopped' }));
          else if (current && current.requestId === null) {
            // Refused before anything reached the proxy: the prompt goes back to the composer.
            set((s) => ({ exchanges: s.exchanges.filter((x) => x.runId !== runId), refusal: toContractError(err), draft: s.draft === '' ? current.prompt : s.draft }));
          } else update(runId, () => ({ status: 'failed', error: toContractError(err) }));
        } finally {
          controller = null;
          set({ running: null });
        }
      },
      stop() {
        controller?.abort();
      },
      clear() {
        if (get().running !== null) return;
        set({ exchanges: [], refusal: null });
      },
      dispose() {
        controller?.abort();
        unsubscribe();
      },
    };
  });
  const unsubscribe = transport.on('playground.progress', (p) => onProgress(p));
  return store;

  function onProgress(p: PlaygroundProgress): void {
    const s = store.getState();
    if (p.runId !== s.running) return;
    const skipped = Math.max(0, p.seq - lastSeq - 1);
    lastSeq = Math.max(lastSeq, p.seq);
    store.setState({
      exchanges: s.exchanges.map((x) =>
        x.runId === p.runId ? { ...x, text: x.text + p.text, requestId: p.requestId ?? x.requestId, upstream: p.upstream ?? x.upstream, skippedEvents: x.skippedEvents + skipped } : x,
      ),
    });
  }
}
