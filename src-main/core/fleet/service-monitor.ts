import type { Dispatcher } from 'undici';
import type { ErrorSummary, HostConnectionState, ServiceView, SleepState, TunnelState } from '../../../src-preload/contract/index.js';
import type { ServiceConfig } from '../config/index.js';
import { toAppError, type AppError } from '../base/index.js';
import type { LocalForward } from '../ssh/index.js';
import { CounterRate, probeHealth, scrapeLlamaServerMetrics, scrapeVllmMetrics } from '../telemetry/index.js';

export interface ScrapeSettings {
  dispatcher: Dispatcher;
  timeoutMs: number;
  maxBytes: number;
}

interface Figures {
  running: number | null;
  waiting: number | null;
  kvCacheUsage: number | null;
  sleepState: SleepState;
  promptTokensTotal: number | null;
  generationTokensTotal: number | null;
}

const summary = (err: AppError, at: number): ErrorSummary => ({ code: err.code, message: err.message, at });
const reason = (err: { code: string; message: string }): string => `${err.code}: ${err.message}`;

/**
 * One model service on one host: its tunnel, the last good figures and why
 * they may be stale. Tunnel state is derived from the SSH state and from what
 * the last HTTP request through the tunnel did, so it is never `up` for a dead path.
 */
export class ServiceMonitor {
  forward: LocalForward | null = null;
  listenError: ErrorSummary | null = null;
  private hadForward = false;
  /** null: nothing tried through the tunnel since SSH (re)connected. */
  private lastOk: boolean | null = null;
  private lastError: ErrorSummary | null = null;
  private staleReason: string | null = null;
  private everScraped = false;
  private health: 'ok' | 'down' | 'unknown' = 'unknown';
  private sleep: SleepState = 'unknown';
  private running: number | null = null;
  private waiting: number | null = null;
  private kvCachePct: number | null = null;
  private genRate: number | null = null;
  private promptRate: number | null = null;
  private readonly genCounter = new CounterRate();
  private readonly promptCounter = new CounterRate();

  constructor(readonly config: ServiceConfig) {}

  /** The last request through the tunnel (since SSH connected) succeeded. */
  get fresh(): boolean {
    return this.lastOk === true;
  }

  attachForward(forward: LocalForward): void {
    this.forward = forward;
    this.hadForward = true;
    this.listenError = null;
  }

  /** SSH left `connected`: figures turn stale, the tunnel must prove itself again afterwards. */
  onHostDown(state: HostConnectionState, error: AppError | null): void {
    this.lastOk = null;
    this.health = 'unknown';
    if (this.everScraped) this.staleReason = error ? reason(error) : `SSH_NOT_CONNECTED: host is ${state}`;
  }

  async scrape(now: () => number, settings: ScrapeSettings): Promise<void> {
    const forward = this.forward;
    if (!forward) return;
    const base = forward.url;
    const opts = { dispatcher: settings.dispatcher, timeoutMs: settings.timeoutMs, maxBytes: settings.maxBytes };
    const [metrics, health] = await Promise.allSettled([this.scrapeFigures(base, opts), probeHealth(base, opts)]);
    const at = now();
    if (health.status === 'fulfilled') this.health = health.value;
    else this.health = 'down';
    if (metrics.status === 'rejected') {
      const err = toAppError(metrics.reason);
      this.lastOk = false;
      this.lastError = summary(err, at);
      this.staleReason = reason(err);
      return;
    }
    const m = metrics.value;
    this.lastOk = true;
    this.everScraped = true;
    this.staleReason = null;
    this.running = m.running;
    this.waiting = m.waiting;
    this.kvCachePct = m.kvCacheUsage === null ? null : Math.round(m.kvCacheUsage * 1000) / 10;
    this.sleep = m.sleepState;
    this.genRate = m.generationTokensTotal === null ? null : this.genCounter.push(m.generationTokensTotal, at);
    this.promptRate = m.promptTokensTotal === null ? null : this.promptCounter.push(m.promptTokensTotal, at);
  }

  /** Both server kinds reduced to the figures the view shows. */
  private async scrapeFigures(base: string, opts: { dispatcher: Dispatcher; timeoutMs: number; maxBytes: number }): Promise<Figures> {
    if (this.config.kind === 'vllm') {
      const { metrics } = await scrapeVllmMetrics(base, opts);
      return metrics;
    }
    const { metrics } = await scrapeLlamaServerMetrics(base, opts);
    return { ...metrics, kvCacheUsage: null, sleepState: 'unknown' };
  }

  private tunnelState(host: HostConnectionState): TunnelState {
    if (!this.forward) {
      switch (host) {
        case 'connecting':
          return 'connecting';
        case 'reconnecting':
          return 'reconnecting';
        case 'failed':
          return 'failed';
        case 'awaiting-trust':
          return 'idle';
        case 'disconnected':
          return this.hadForward ? 'closed' : 'idle';
        case 'connected':
          return this.listenError ? 'failed' : 'connecting';
      }
    }
    switch (host) {
      case 'connected':
        return this.lastOk === null ? 'connecting' : this.lastOk ? 'up' : 'degraded';
      case 'connecting':
      case 'reconnecting':
        return 'reconnecting';
      case 'failed':
      case 'awaiting-trust':
        return 'failed';
      case 'disconnected':
        return 'closed';
    }
  }

  view(host: HostConnectionState): ServiceView {
    const c = this.config;
    return {
      id: c.id,
      kind: c.kind,
      model: c.model,
      aliases: [...c.aliases],
      slots: c.slots,
      remotePort: c.remotePort,
      tunnel: {
        state: this.tunnelState(host),
        localUrl: this.forward?.url ?? null,
        lastError: this.listenError ?? this.lastError,
      },
      health: host === 'connected' ? this.health : 'unknown',
      sleep: this.sleep,
      requestsRunning: this.running,
      requestsWaiting: this.waiting,
      kvCachePct: this.kvCachePct,
      generationTokensPerS: this.genRate,
      promptTokensPerS: this.promptRate,
      stale: this.staleReason !== null,
      staleReason: this.staleReason,
    };
  }
}
