import type { ErrorSummary, GpuView, HostView } from '../../../src-preload/contract/index.js';
import type { HostConfig } from '../config/index.js';
import { DisposableStore, fireAndForget, toAppError, type AppError, type Clock, type Logger } from '../base/index.js';
import { LocalForward, type SshSession, type SshStateChange } from '../ssh/index.js';
import { nvidiaSmiQueryCommand } from '../telemetry/index.js';
import { gpuViewsFromNvidiaSmi } from './gpu-view.js';
import { ServiceMonitor, type ScrapeSettings } from './service-monitor.js';
import { TelemetryErrorCode } from '../telemetry/index.js';

export interface PollSettings extends ScrapeSettings {
  execTimeoutMs: number;
}

/**
 * One host of the fleet: its SSH session, a tunnel per service (opened on the
 * first connect, kept bound across reconnects, closed on disconnect), GPU
 * figures from nvidia-smi, and the per-service monitors.
 */
export class HostRuntime {
  readonly services: ServiceMonitor[];
  private readonly disposables = new DisposableStore();
  private gpus: GpuView[] = [];
  private gpuStaleReason: string | null = null;
  private updatedAt: number | null = null;
  private lastError: ErrorSummary | null = null;
  private polling = false;
  private openingForwards: Promise<void> | null = null;
  private disposed = false;

  constructor(
    readonly config: HostConfig,
    readonly session: SshSession,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onStateChange: (change: SshStateChange) => void,
  ) {
    this.services = config.services.map((s) => new ServiceMonitor(s));
    this.disposables.add(session.onDidChangeState((change) => this.handleState(change)));
  }

  get label(): string {
    return this.config.label;
  }
  get isPolling(): boolean {
    return this.polling;
  }

  private handleState(change: SshStateChange): void {
    if (change.error) this.lastError = { code: change.error.code, message: change.error.message, at: this.clock.now() };
    if (change.state === 'connected') {
      this.lastError = null;
      this.openForwards();
    } else {
      for (const s of this.services) s.onHostDown(change.state, change.error ?? this.session.lastError);
      if (this.gpus.length > 0) {
        const err = change.error ?? this.session.lastError;
        this.gpuStaleReason = err ? `${err.code}: ${err.message}` : `SSH_NOT_CONNECTED: host is ${change.state}`;
      }
      if (change.state === 'disconnected') fireAndForget(this.closeForwards(), this.logger, 'closing tunnels');
    }
    this.onStateChange(change);
  }

  private openForwards(): void {
    if (this.openingForwards || this.disposed) return;
    const open = async (): Promise<void> => {
      for (const service of this.services) {
        if (service.forward || this.disposed) continue;
        try {
          const forward = await LocalForward.open(this.session, {
            localPort: service.config.localPort,
            remoteHost: service.config.remoteHost,
            remotePort: service.config.remotePort,
            logger: this.logger,
          });
          if (this.disposed || this.session.state === 'disconnected') {
            await forward.close();
            continue;
          }
          service.attachForward(forward);
        } catch (err) {
          const e = toAppError(err);
          service.listenError = { code: e.code, message: e.message, at: this.clock.now() };
          this.logger.warn('tunnel listener failed', { service: service.config.id, code: e.code, message: e.message });
        }
      }
    };
    this.openingForwards = open().finally(() => {
      this.openingForwards = null;
    });
  }

  async closeForwards(): Promise<void> {
    await this.openingForwards;
    const closing = this.services.map(async (s) => {
      const f = s.forward;
      s.forward = null;
      await f?.close();
    });
    await Promise.all(closing);
  }

  connect(): Promise<void> {
    return this.session.connect();
  }

  async disconnect(): Promise<void> {
    await this.session.disconnect();
    await this.closeForwards();
  }

  /** One poll: nvidia-smi and every service's scrape, in parallel. Never throws. */
  async poll(settings: PollSettings): Promise<void> {
    if (this.polling || this.disposed || this.session.state !== 'connected') return;
    this.polling = true;
    try {
      await Promise.all([this.pollGpus(settings), ...this.services.map((s) => s.scrape(() => this.clock.now(), settings))]);
      if (this.gpuStaleReason === null || this.services.some((s) => s.fresh)) {
        this.updatedAt = this.clock.now();
      }
    } catch (err) {
      this.logger.error('poll failed unexpectedly', { error: toAppError(err).message });
    } finally {
      this.polling = false;
    }
  }

  private async pollGpus(settings: PollSettings): Promise<void> {
    try {
      const res = await this.session.exec(nvidiaSmiQueryCommand(), { timeoutMs: settings.execTimeoutMs, maxOutputBytes: 256 * 1024 });
      if (res.exitCode !== 0) {
        const firstLine = (res.stderr || res.stdout).trim().split('\n')[0] ?? '';
        this.gpuStaleReason = `${TelemetryErrorCode.EXEC_FAILED}: nvidia-smi exited ${res.exitCode ?? res.signal}${firstLine ? `: ${firstLine}` : ''}`;
        return;
      }
      const { gpus, errors } = gpuViewsFromNvidiaSmi(res.stdout);
      if (gpus.length === 0 && errors > 0) {
        this.gpuStaleReason = `${TelemetryErrorCode.UNPARSEABLE}: nvidia-smi output could not be read (${errors} lines)`;
        return;
      }
      this.gpus = gpus;
      this.gpuStaleReason = null;
    } catch (err) {
      const e: AppError = toAppError(err);
      this.gpuStaleReason = `${e.code}: ${e.message}`;
    }
  }

  view(): HostView {
    const { ssh } = this.config;
    const state = this.session.state;
    const gpuModel = this.config.gpu?.model ?? this.gpus[0]?.name ?? null;
    return {
      label: this.config.label,
      address: `${ssh.user}@${ssh.host}:${ssh.port}`,
      state,
      lastError: this.lastError,
      nextRetryAt: this.session.nextRetryAt,
      hostKeyFingerprint: this.session.hostKeyFingerprint,
      gpuModel,
      pricePerHourUsd: this.config.pricePerHourUsd ?? null,
      gpus: this.gpus.map((g) => ({ ...g })),
      gpuStale: this.gpuStaleReason !== null,
      gpuStaleReason: this.gpuStaleReason,
      services: this.services.map((s) => s.view(state)),
      updatedAt: this.updatedAt,
    };
  }

  resourceCounts(): { connections: number; listeningForwards: number; activeStreams: number } {
    let listening = 0;
    let streams = 0;
    for (const s of this.services) {
      if (s.forward?.listening) listening++;
      streams += s.forward?.activeStreams ?? 0;
    }
    return { connections: this.session.hasLiveClient ? 1 : 0, listeningForwards: listening, activeStreams: streams };
  }

  /** Reverse order: tunnels, then the session. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.disposables.dispose();
    await this.closeForwards();
    await this.session.dispose();
  }
}
