// The playground: an operator's chat with any model or group the proxy knows,
// sent through the proxy's own port as the internal client `console:playground`
// (so it is queued at its class, logged, counted and refused like any client's
// request). Bad input and a model that is asleep are refused here, coded, before
// anything is sent: a sleeping model would otherwise hold the operator for a
// wake nobody approved. The streamed text goes out as `playground.progress`
// events, a few a second; the call's answer holds the whole of it and its figures.
import { performance } from 'node:perf_hooks';
import {
  PlaygroundErrorCode,
  asleepReplicas,
  type ChannelParsedInput,
  type PlaygroundAnswer,
  type ProxyStats,
} from '../../../src-preload/contract/index.js';
import { AppError, DisposableStore, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import { UpstreamClient } from '../upstream/index.js';
import { sendChat } from './playground-client.js';
import type { PlaygroundIdentity } from './playground-identity.js';

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    playground: PlaygroundErrorCode;
  }
}

export type PlaygroundRequest = ChannelParsedInput<'playground.send'>;

/** What the playground needs of the proxy (ProxyService satisfies it). */
export interface PlaygroundProxyPort {
  url(): string | null;
  snapshot(): ProxyStats;
}

export interface PlaygroundDeps {
  proxy: PlaygroundProxyPort;
  identity: PlaygroundIdentity;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
  /** Monotonic milliseconds for the answer's figures; default performance.now. */
  monotonic?: () => number;
  /** Longest a playground answer may take, queue wait included (default 10 min). */
  deadlineMs?: number;
}

/** Streamed text is sent on at most this often (one event per batch, not one per token). */
export const PROGRESS_INTERVAL_MS = 50;
const DEFAULT_DEADLINE_MS = 10 * 60_000;

export class PlaygroundService implements Disposable {
  private readonly disposables = new DisposableStore();
  private readonly running = new Map<string, AbortController>();
  /** A client for the proxy's current origin (one keep-alive pool), remade if the port changes. */
  private client: { base: string; client: UpstreamClient } | null = null;

  constructor(private readonly deps: PlaygroundDeps) {}

  async send(input: PlaygroundRequest, signal?: AbortSignal): Promise<PlaygroundAnswer> {
    checkInput(input);
    const target = this.target(input.model);
    const base = this.deps.proxy.url();
    if (base === null) throw new AppError(PlaygroundErrorCode.PROXY_NOT_RUNNING, 'the proxy is not running; the playground sends through it');
    if (this.running.has(input.runId)) throw new AppError(PlaygroundErrorCode.RUN_IN_FLIGHT, `a playground run "${input.runId}" is already in flight`, { details: { runId: input.runId } });
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    this.running.set(input.runId, controller);
    const progress = new ProgressBatcher(input.runId, this.deps.emit, this.deps.clock);
    try {
      const answer = await sendChat({
        client: this.clientFor(base),
        path: '/chat/completions',
        authorization: this.deps.identity.authorization,
        cls: input.class,
        body: chatBody(input, target),
        stream: input.stream,
        deadlineMs: this.deps.deadlineMs ?? DEFAULT_DEADLINE_MS,
        signal: controller.signal,
        now: this.deps.monotonic ?? (() => performance.now()),
        onHeaders: (ids) => progress.identify(ids),
        onText: (text) => progress.add(text),
      });
      return { runId: input.runId, ...answer };
    } finally {
      progress.end();
      signal?.removeEventListener('abort', onAbort);
      this.running.delete(input.runId);
    }
  }

  /** The name as the proxy knows it; refused when unknown, or when every replica that could answer is asleep. */
  private target(model: string): string {
    const stats = this.deps.proxy.snapshot();
    const wanted = model.trim().toLowerCase();
    const route = (stats.models ?? []).find((m) => m.name.toLowerCase() === wanted || m.aliases.some((a) => a.toLowerCase() === wanted));
    const replicas = route?.replicas ?? stats.upstreams.filter((u) => u.model.toLowerCase() === wanted || u.aliases.some((a) => a.toLowerCase() === wanted)).map((u) => u.upstream);
    if (replicas.length === 0) {
      const known = (stats.models ?? []).map((m) => m.name);
      throw new AppError(PlaygroundErrorCode.UNKNOWN_MODEL, `the proxy serves no model, alias or group "${model}"${known.length ? ` (it knows ${known.slice(0, 8).join(', ')})` : ''}`, {
        details: { model },
      });
    }
    const states = new Map(stats.upstreams.map((u) => [u.upstream, u.state]));
    const asleep = asleepReplicas(replicas, (r) => states.get(r));
    if (asleep.length > 0) {
      const name = route?.name ?? model;
      throw new AppError(PlaygroundErrorCode.MODEL_SLEEPING, `${name} is asleep (${asleep.join(', ')}); wake it from the host card, then ask again`, {
        details: { model: name, upstreams: asleep },
      });
    }
    return route?.name ?? model;
  }

  private clientFor(base: string): UpstreamClient {
    if (this.client?.base === base) return this.client.client;
    const old = this.client;
    // The console's own proxy on 127.0.0.1 (ProxyServer binds nothing else): no off-prem question to ask.
    this.client = { base, client: UpstreamClient.forUrl(base, { onPrem: null, purpose: 'proxy' }) };
    if (old) void old.client.close();
    return this.client.client;
  }

  dispose(): Promise<void> {
    for (const c of this.running.values()) c.abort();
    this.running.clear();
    const c = this.client;
    this.client = null;
    return Promise.all([c?.client.destroy(), this.disposables.dispose()]).then(() => undefined);
  }
}

function checkInput(input: PlaygroundRequest): void {
  if (input.maxTokens <= 0) {
    throw new AppError(PlaygroundErrorCode.INVALID_MAX_TOKENS, `max_tokens must be at least 1 (got ${input.maxTokens})`, { details: { maxTokens: input.maxTokens } });
  }
  const t = input.temperature;
  if (t !== null && !(Number.isFinite(t) && t >= 0 && t <= 2)) {
    throw new AppError(PlaygroundErrorCode.INVALID_TEMPERATURE, `temperature must be between 0 and 2 (got ${t})`, { details: { temperature: t } });
  }
  const last = input.turns[input.turns.length - 1];
  if (!last || last.role !== 'user' || last.content.trim() === '') {
    throw new AppError(PlaygroundErrorCode.EMPTY_PROMPT, 'the prompt is empty: write a message to send', { details: {} });
  }
}

/** The OpenAI chat body: the system prompt first (when given), then the turns. */
export function chatBody(input: PlaygroundRequest, model: string): Record<string, unknown> {
  const messages = [...(input.systemPrompt.trim() !== '' ? [{ role: 'system', content: input.systemPrompt }] : []), ...input.turns.map((t) => ({ role: t.role, content: t.content }))];
  return {
    model,
    messages,
    max_tokens: input.maxTokens,
    stream: input.stream,
    ...(input.stream ? { stream_options: { include_usage: true } } : {}),
    ...(input.temperature !== null ? { temperature: input.temperature } : {}),
  };
}

/** One run's progress events: the request's identity at once, text batched every PROGRESS_INTERVAL_MS. */
class ProgressBatcher {
  private seq = 0;
  private pending = '';
  private timer: Disposable | null = null;
  private ids: { requestId: string | null; upstream: string | null } = { requestId: null, upstream: null };

  constructor(
    private readonly runId: string,
    private readonly emit: EventSink,
    private readonly clock: Clock,
  ) {}

  identify(ids: { requestId: string | null; upstream: string | null }): void {
    this.ids = ids;
    this.flush();
  }

  add(text: string): void {
    this.pending += text;
    this.timer ??= this.clock.setTimeout(() => this.flush(), PROGRESS_INTERVAL_MS);
  }

  end(): void {
    if (this.pending !== '') this.flush();
    void this.timer?.dispose();
    this.timer = null;
  }

  private flush(): void {
    void this.timer?.dispose();
    this.timer = null;
    const text = this.pending;
    this.pending = '';
    this.emit('playground.progress', { runId: this.runId, seq: this.seq++, text, ...this.ids });
  }
}
