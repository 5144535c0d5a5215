import type { Dispatcher } from 'undici';
import type { ErrorSummary, HostConnectionState, ServiceView, SleepState, TunnelState } from '../../../src-preload/contract/index.js';
import type { ServiceConfig } from '../config/index.js';
import { toAppError, type AppError, type Clock } from '../base/index.js';
import type { LocalForward } from '../ssh/index.js';
import {
  CounterRate,
  ServiceDeriver,
  probeHealth,
  scrapeLlamaServerMetrics,
  scrapeVllmMetrics,
  serviceReadingFromLlama,
  serviceReadingFromVllm,
  type ServiceFigures,
  type ServiceReading,
} from '../telemetry/index.js';
import { probeTunnel, testTunnel, type ProbeResult, type TunnelTestResult } from './tunnel-probe.js';

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
  /** The whole scrape, for the derived figures (percentiles, hit rate, KV tokens). */
  reading: ServiceReading;
}

const summary = (err: AppError, at: number): ErrorSummary => ({ code: err.code, message: err.message, at });
const reason = (err: { code: string; message: string }): string => `${err.code}: ${err.message}`;

/**
 * One model service on one host: its tunnel, the last good figures and why
 * they may be stale. The tunnel is `up` only while SSH is connected AND the
 * last end-to-end probe through it (GET /v1/models) passed, so it is never
 * `up` for a dead path; a failing probe on a live link is `degraded`.
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
  /** Windowed figures (latency percentiles from histogram deltas, prefix-cache hit rate, KV tokens). */
  private readonly deriver = new ServiceDeriver();
  private lastFigures: ServiceFigures | null = null;
  /** null: no probe since SSH (re)connected. */
  private lastProbe: ProbeResult | null = null;
  private lastTest: TunnelTestResult | null = null;
  private probing: Promise<void> | null = null;
  /** Bumped when SSH drops, so a probe that started before the drop cannot mark the new link up. */
  private linkEpoch = 0;

  constructor(readonly config: ServiceConfig) {}

  get probe(): ProbeResult | null {
    return this.lastProbe;
  }

  /** One probe through the tunnel (joins one in flight). */
  runProbe(clock: Clock, settings: ScrapeSettings): Promise<void> {
    const forward = this.forward;
    if (!forward) return Promise.resolve();
    if (this.probing) return this.probing;
    const epoch = this.linkEpoch;
    this.probing = probeTunnel(forward.url, clock, { dispatcher: settings.dispatcher, timeoutMs: settings.timeoutMs })
      .then((result) => {
        if (epoch === this.linkEpoch && this.forward === forward) this.lastProbe = result;
      })
      .finally(() => {
        this.probing = null;
      });
    return this.probing;
  }

  /** The operator's Test through the tunnel (models, then a 1-token chat). */
  async runTest(clock: Clock, settings: ScrapeSettings, notReady: AppError | null): Promise<TunnelTestResult> {
    const forward = this.forward;
    if (!forward || notReady) {
      const e = notReady ?? { code: 'FLEET_TUNNEL_NOT_READY', message: 'the tunnel has no local listener yet' };
      this.lastTest = { ok: false, at: clock.now(), totalMs: 0, localUrl: forward?.url ?? null, steps: [], error: { code: e.code, message: e.message } };
      return this.lastTest;
    }
    this.lastTest = await testTunnel(forward.url, this.config.model, clock, { dispatcher: settings.dispatcher, timeoutMs: Math.max(settings.timeoutMs, 15_000) });
    return this.lastTest;
  }

  /** The derived figures of the last good scrape; null while stale or before the first one. */
  get figures(): ServiceFigures | null {
    return this.staleReason === null ? this.lastFigures : null;
  }

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
    this.lastProbe = null;
    this.linkEpoch++;
    this.health = 'unknown';
    // a window spanning the outage would mix two runs of the server
    this.deriver.reset();
    this.lastFigures = null;
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
      this.lastFigures = null;
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
    this.lastFigures = this.deriver.push(m.reading, at);
  }

  /** Both server kinds reduced to the figures the view shows. */
  private async scrapeFigures(base: string, opts: { dispatcher: Dispatcher; timeoutMs: number; maxBytes: number }): Promise<Figures> {
    if (this.config.kind === 'vllm') {
      const { metrics } = await scrapeVllmMetrics(base, opts);
      return { ...metrics, reading: serviceReadingFromVllm(metrics) };
    }
    const { metrics } = await scrapeLlamaServerMetrics(base, opts);
    return { ...metrics, kvCacheUsage: null, sleepState: 'unknown', reading: serviceReadingFromLlama(metrics) };
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
        return this.lastProbe === null ? 'connecting' : this.lastProbe.ok ? 'up' : 'degraded';
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

  view(host: HostConnectionState, nextRetryAt: number | null = null, hostError: ErrorSummary | null = null): ServiceView {
    const c = this.config;
    const probe = this.lastProbe;
    const probeError: ErrorSummary | null = probe && !probe.ok && probe.error ? { ...probe.error, at: probe.at } : null;
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
        lastError: this.listenError ?? probeError ?? (host === 'connected' ? null : hostError),
        lastProbe: probe ? { ...probe, error: probe.error ? { ...probe.error } : null } : null,
        lastTest: this.lastTest ? { ...this.lastTest, steps: this.lastTest.steps.map((st) => ({ ...st })), error: this.lastTest.error ? { ...this.lastTest.error } : null } : null,
        nextRetryAt: host === 'reconnecting' ? nextRetryAt : null,
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
