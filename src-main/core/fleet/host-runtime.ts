import type { CredentialPrompt, ErrorSummary, GpuView, HostView } from '../../../src-preload/contract/index.js';
import type { HostConfig } from '../config/index.js';
import { AppError, DisposableStore, fireAndForget, toAppError, type Clock, type Logger } from '../base/index.js';
import { LocalForward, SshErrorCode, type SshSession, type SshStateChange } from '../ssh/index.js';
import type { TunnelTestResult } from './tunnel-probe.js';
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
  /** Set by the fleet: HTTP settings for the probes run right after a (re)connect. */
  probeSettings: PollSettings | null = null;

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
      const err = change.error ?? this.session.lastError;
      for (const s of this.services) {
        s.onHostDown(change.state, err);
        // Streams through a dead link fail now, with the reason, not when TCP gives up.
        if (s.forward && (change.state === 'reconnecting' || change.state === 'failed') && s.forward.activeStreams > 0) {
          s.forward.abortStreams(err ?? new AppError(SshErrorCode.DISCONNECTED, `${this.label}: the SSH connection was lost`));
        }
      }
      if (this.gpus.length > 0) {
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
            httpErrors: true,
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
    this.openingForwards = open()
      .then(() => this.probeNow())
      .finally(() => {
        this.openingForwards = null;
      });
  }

  /** Probe every tunnel at once (after a connect), so `up` does not wait for the next poll round. */
  private probeNow(): void {
    const settings = this.probeSettings;
    if (!settings || this.disposed || this.session.state !== 'connected') return;
    for (const s of this.services) fireAndForget(s.runProbe(this.clock, settings), this.logger, 'tunnel probe');
  }

  async testTunnel(serviceId: string, settings: PollSettings): Promise<TunnelTestResult> {
    const service = this.services.find((s) => s.config.id === serviceId);
    if (!service) throw new AppError('FLEET_UNKNOWN_SERVICE', `host ${this.label} has no service ${serviceId}`, { details: { label: this.label, serviceId } });
    const state = this.session.state;
    const notReady =
      state === 'connected'
        ? null
        : new AppError('FLEET_TUNNEL_NOT_READY', `SSH to ${this.label} is ${state}${this.session.lastError ? ` (${this.session.lastError.code})` : ''}`);
    return service.runTest(this.clock, settings, notReady);
  }

  /** The passphrase prompt the UI shows, derived from the last error. */
  private credentialPrompt(): CredentialPrompt | null {
    const err = this.session.lastError;
    const keyFile = this.config.ssh.identityFile;
    if (!err || !keyFile || this.session.state === 'connected') return null;
    if (err.code === SshErrorCode.PASSPHRASE_REQUIRED) return { kind: 'passphrase', keyFile, reason: 'required' };
    if (err.code === SshErrorCode.PASSPHRASE_INCORRECT) return { kind: 'passphrase', keyFile, reason: 'incorrect' };
    return null;
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
      await Promise.all([
        this.pollGpus(settings),
        ...this.services.map((s) => s.scrape(() => this.clock.now(), settings)),
        ...this.services.map((s) => s.runProbe(this.clock, settings)),
      ]);
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
      hostKey: this.session.hostKeyProblem ? { ...this.session.hostKeyProblem, knownFingerprints: [...this.session.hostKeyProblem.knownFingerprints] } : null,
      credentialPrompt: this.credentialPrompt(),
      jumpHost: ssh.jumpHost ?? null,
      gpuModel,
      pricePerHourUsd: this.config.pricePerHourUsd ?? null,
      gpus: this.gpus.map((g) => ({ ...g })),
      gpuStale: this.gpuStaleReason !== null,
      gpuStaleReason: this.gpuStaleReason,
      services: this.services.map((s) => s.view(state, this.session.nextRetryAt, this.lastError)),
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
