// Captured requests as the console runs them: the recorder the proxy calls,
// the store it fills, and the ways out — lists carry sizes only; a body is
// shown or exported only after the audit event saying who opened which capture
// has landed (a full data folder refuses the view rather than leave it unaudited).
import type { CaptureDetail, CaptureQuery, CaptureStatus, CaptureSummary } from '../../../src-preload/contract/index.js';
import { AppError, operatorActor, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { ConfigService } from '../config/index.js';
import type { SecretStore } from '../ports.js';
import type { Store } from '../store/index.js';
import { CaptureStore } from './capture-store.js';
import { CaptureRecorder } from './capture-tap.js';
import { ProxyErrorCode } from './errors.js';

export interface CapturesDeps {
  store: Store;
  config: ConfigService;
  secrets: SecretStore | null;
  clock: Clock;
  logger: Logger;
  /** Sampling draws (tests pin them); default Math.random. */
  random?: () => number;
  flushIntervalMs?: number;
  pruneIntervalMs?: number;
}

export type CaptureExportInput = { ids: number[] } | { query: CaptureQuery };

export class Captures implements Disposable {
  /** What the proxy server calls at arrival and at the end of each request. */
  readonly recorder: CaptureRecorder;
  private readonly kept: CaptureStore;

  constructor(private readonly deps: CapturesDeps) {
    const { store, config, clock, logger } = deps;
    this.kept = new CaptureStore({
      db: store.db,
      clock,
      logger,
      health: store.health,
      settings: () => config.current.proxy.capture,
      upstreamSecrets: (upstream) => this.upstreamKey(upstream),
      ...(deps.flushIntervalMs !== undefined ? { flushIntervalMs: deps.flushIntervalMs } : {}),
      ...(deps.pruneIntervalMs !== undefined ? { pruneIntervalMs: deps.pruneIntervalMs } : {}),
    });
    this.recorder = new CaptureRecorder(() => config.current, this.kept, deps.random);
  }

  private async upstreamKey(upstream: string): Promise<string[]> {
    const ref = this.deps.config.current.proxy.upstreams[upstream]?.apiKeyRef;
    if (!ref || !this.deps.secrets) return [];
    const value = await this.deps.secrets.get(ref);
    return value ? [value] : [];
  }

  /** Whether capture is on and for what, and what the store keeps. */
  status(): CaptureStatus {
    const c = this.deps.config.current.proxy.capture;
    return {
      enabled: c.enabled,
      failures: c.failures,
      sampleRate: c.sampleRate,
      models: [...c.models],
      tokens: [...c.tokens],
      maxBodyBytes: c.maxBodyBytes,
      retention: { ...c.retention },
      ...this.kept.counts(),
    };
  }

  list(query: CaptureQuery): CaptureSummary[] {
    return this.kept.list(query);
  }

  /** One capture with its bodies, after its `proxy.capture.viewed` audit event. Throws PROXY_CAPTURE_NOT_FOUND. */
  async show(id: number, caller: string): Promise<CaptureDetail> {
    await this.kept.flush();
    const [detail] = this.kept.details({ ids: [id] });
    if (!detail) {
      throw new AppError(ProxyErrorCode.CAPTURE_NOT_FOUND, `no captured request ${id} (never captured, or past the capture retention)`, { details: { id } });
    }
    this.deps.store.audit.append({
      type: 'proxy.capture.viewed',
      actor: operatorActor(caller),
      target: String(id),
      payload: { requestId: detail.requestId, client: detail.client, model: detail.model, status: detail.status },
    });
    return detail;
  }

  /** Captures with their bodies as one document, after one `proxy.capture.exported` event naming them. */
  async export(input: CaptureExportInput, caller: string): Promise<{ exportedAt: number; captures: CaptureDetail[] }> {
    await this.kept.flush();
    const captures = this.kept.details('ids' in input ? { ids: input.ids } : { query: input.query });
    const exportedAt = this.deps.clock.now();
    this.deps.store.audit.append({
      type: 'proxy.capture.exported',
      actor: operatorActor(caller),
      target: null,
      payload: { count: captures.length, ids: captures.map((c) => c.id), ...('query' in input ? { query: { ...input.query } } : {}) },
    });
    return { exportedAt, captures };
  }

  /** Writes what waits and runs the retention now (tests, and a reader that wants the latest). */
  async settle(): Promise<number> {
    await this.kept.flush(true);
    return this.kept.prune();
  }

  dispose(): Promise<void> {
    return this.kept.dispose();
  }
}
