import type { CredentialPrompt, ErrorSummary, GpuVendor } from '../../../src-preload/contract/index.js';
import { diskThresholdsOf, type DiskAlertConfig, type HealthConfig, type HostConfig } from '../config/index.js';
import { AppError, DisposableStore, fireAndForget, toAppError, type Clock, type Logger } from '../base/index.js';
import { GatedTunnel, SshErrorCode, type SshSession, type SshStateChange, type TunnelSockets } from '../ssh/index.js';
import { UpstreamClient, upstreamKey } from '../upstream/index.js';
import type { TunnelTestResult } from './tunnel-probe.js';
import {
  GPU_DETECT_COMMAND,
  TelemetryErrorCode,
  parseGpuDetect,
  vendorOf,
  type ExecRunner,
  type GpuReading,
  type GpuToolKind,
  type SourceReading,
  type TelemetrySource,
} from '../telemetry/index.js';
import { FleetErrorCode } from './errors.js';
import { ServiceMonitor } from './service-monitor.js';
import { HostGpuProcesses, type GpuAppsReading } from './host-gpu-processes.js';
import { HostHealthMonitor, healthSettingsOf, type HostReboot } from './host-health.js';
import { SOURCE_DETAIL, execGpuSource, tunnelServiceSource, type PollSettings } from './sources.js';
import type { HostState, ReadingSource, StaleCause } from './state.js';
import { HostCollector } from './collector.js';

/** After a detection found no GPU tool, look again this many polls later (a driver may be installed meanwhile). */
const REDETECT_EVERY_POLLS = 30;
/** Shortest silence that counts as a dead link (a reading may take up to its timeout). */
const DEAD_LINK_MIN_MS = 3_000;
/** Silence past this (and polls asking) means a dead link: longer than a reading may take. */
const linkLimitMs = (settings: PollSettings): number => Math.max(DEAD_LINK_MIN_MS, settings.timeoutMs + 500);

/** How a host reads its GPUs and services; built by the fleet from config. */
export interface HostSources {
  /** Settings for the sources built through the tunnels and the session. */
  settings: PollSettings;
  /** `tunnels`: never read this host with the collector (the host's `telemetry.read` wins); default auto. */
  read?: 'auto' | 'tunnels';
  /** A GPU source that does not run over this host's SSH (Prometheus); null: the host's own tools. */
  gpuSource?: TelemetrySource | null;
  /** Per service id: a source that does not read through the tunnel (Prometheus). */
  serviceSources?: ReadonlyMap<string, TelemetrySource>;
  /** The folder the tunnels' private sockets go in (the fleet's one). */
  tunnelSockets: TunnelSockets;
  /** The fleet-wide host health settings (the host's own `health` wins field by field). */
  health?: HealthConfig;
  /** The fleet-wide `alerts.disk` (the host's own `alerts.disk` wins field by field): when a disk counts as low. */
  diskAlerts?: DiskAlertConfig;
  /** A new boot id was seen: the host rebooted. */
  onReboot?: (reboot: HostReboot) => void;
}

/**
 * One host of the fleet: its SSH session, a tunnel per service (opened on the
 * first connect, kept bound across reconnects, closed on disconnect), its GPU
 * source (the tool detected on the host or set in config: nvidia-smi,
 * amd-smi, rocm-smi, amdgpu sysfs; or Prometheus) and the per-service monitors,
 * each with its own source. Every poll runs the sources; nothing here scrapes.
 */
export class HostRuntime {
  readonly services: ServiceMonitor[];
  private readonly disposables = new DisposableStore();
  private gpus: readonly GpuReading[] = [];
  private gpuStale: StaleCause | null = null;
  private gpuSource: TelemetrySource | null;
  /** The detected tool (auto); null before detection or when none was found. */
  private gpuTool: GpuToolKind | null = null;
  private gpuVendor: GpuVendor | null = null;
  private gpuReadAt: number | null = null;
  private gpuIssues: readonly string[] = [];
  private detectIn = 0;
  private readonly exec: ExecRunner;
  /** Reads the host with one exec a poll where it can (collector.ts); else the sources go through tunnels and exec as before. */
  private readonly collector: HostCollector;
  readonly health: HostHealthMonitor;
  /** The last compute-apps list (read every few GPU polls), kept until the next one. */
  private gpuApps: GpuAppsReading | null = null;
  private readonly gpuProcesses = new HostGpuProcesses();
  private updatedAt: number | null = null;
  private lastError: ErrorSummary | null = null;
  private polling = false;
  private probingLink = false;
  private openingForwards: Promise<void> | null = null;
  private disposed = false;

  constructor(
    readonly config: HostConfig,
    readonly session: SshSession,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onStateChange: (change: SshStateChange) => void,
    private readonly sources: HostSources,
  ) {
    this.collector = new HostCollector({
      label: config.label,
      exec: (command, options) => session.exec(command, options),
      stream: session.execStream ? (command, options) => session.execStream!(command, options) : undefined,
      clock,
      logger,
      httpTimeoutMs: sources.settings.timeoutMs,
      read: config.telemetry?.read ?? sources.read,
    });
    this.exec = this.collector.exec;
    this.gpuSource = sources.gpuSource ?? null;
    const onReboot = sources.onReboot ?? (() => undefined);
    this.health = new HostHealthMonitor(config.label, healthSettingsOf(config.health, sources.health, diskThresholdsOf(config.alerts?.disk, sources.diskAlerts)), this.exec, clock, logger, onReboot, () =>
      this.services.map((m) => m.modelPath),
    );
    const tool = config.telemetry?.gpu ?? 'auto';
    if (this.gpuSource === null && tool !== 'auto' && tool !== 'none') this.useGpuTool(tool);
    this.services = config.services.map((s) => {
      const elsewhere = sources.serviceSources?.get(s.id) ?? null;
      return elsewhere
        ? new ServiceMonitor(s, () => elsewhere, false)
        : new ServiceMonitor(s, (client) =>
            client === null ? null : tunnelServiceSource(config, s, client, clock, sources.settings, (tunnel) => this.collector.httpGet(s.remoteHost, s.remotePort, tunnel)),
          );
    });
    this.disposables.add(session.onDidChangeState((change) => this.handleState(change)));
    this.disposables.add(this.collector);
  }

  private useGpuTool(tool: GpuToolKind): void {
    this.gpuTool = tool;
    this.gpuVendor = vendorOf(tool);
    this.gpuSource = execGpuSource(this.config, tool, this.exec, this.clock, this.sources.settings);
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
      if (this.gpus.length > 0 && this.gpuSource?.kind !== 'prometheus-api') {
        this.gpuStale = err ? { code: err.code, message: err.message } : { code: SshErrorCode.NOT_CONNECTED, message: `host is ${change.state}` };
      }
      this.health.markStale(err ? { code: err.code, message: err.message } : { code: SshErrorCode.NOT_CONNECTED, message: `host is ${change.state}` });
      this.collector.onDisconnected();
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
          // The public port passes inference and reads only; the console's own callers use the private socket
          // (on the openssh transport the master holds it while the link is up: no JS in their data path).
          const forward = await GatedTunnel.open(this.session, {
            sockets: this.sources.tunnelSockets,
            localPort: service.config.localPort,
            remoteHost: service.config.remoteHost,
            remotePort: service.config.remotePort,
            httpErrors: true,
            // The next SSH attempt plus a handshake; while connected (a channel failed), a second.
            retryAfterS: () => {
              const next = this.session.nextRetryAt;
              return next === null ? 1 : Math.max(0, next - this.clock.now()) / 1000 + 1.5;
            },
            logger: this.logger,
          });
          if (this.disposed || this.session.state === 'disconnected') {
            await forward.close();
            continue;
          }
          // The service's one client, bound to the private socket for the tunnel's life (it survives reconnects as the tunnel does).
          const client = UpstreamClient.forTunnel(upstreamKey(this.label, service.config.id), forward.privateSocketPath, {
            host: service.config.remoteHost,
            port: service.config.remotePort,
          });
          service.attachForward({ forward, client });
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
    const settings = this.sources.settings;
    if (this.disposed || this.session.state !== 'connected') return;
    for (const s of this.services) fireAndForget(s.runProbe(this.clock, settings), this.logger, 'tunnel probe');
  }

  async testTunnel(serviceId: string, settings: PollSettings): Promise<TunnelTestResult> {
    const service = this.services.find((s) => s.config.id === serviceId);
    if (!service) throw new AppError(FleetErrorCode.UNKNOWN_SERVICE, `host ${this.label} has no service ${serviceId}`, { details: { label: this.label, serviceId } });
    const state = this.session.state;
    const notReady =
      state === 'connected'
        ? null
        : new AppError(FleetErrorCode.TUNNEL_NOT_READY, `SSH to ${this.label} is ${state}${this.session.lastError ? ` (${this.session.lastError.code})` : ''}`);
    return service.runTest(this.clock, settings, notReady);
  }

  /** The passphrase prompt the UI shows, derived from the last error. */
  private credentialPrompt(): CredentialPrompt | null {
    const asked = this.session.pendingPrompt;
    if (asked) return { kind: 'prompt', text: asked.text, expiresAt: asked.expiresAt };
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
      const open = s.detachForward();
      if (!open) return;
      await open.forward.close();
      // Calls still in flight end UPSTREAM_CLOSED; the next tunnel gets a client of its own.
      await open.client.destroy();
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

  /** One poll: the GPU source and every service's source, in parallel, plus the tunnel probes. Never throws. */
  async poll(settings: PollSettings): Promise<void> {
    if (this.polling || this.disposed) return;
    const connected = this.session.state === 'connected';
    // Sources that do not need the SSH session (Prometheus) keep reading while it is down.
    if (!connected && this.gpuSource?.kind !== 'prometheus-api' && !this.services.some((s) => s.readsElsewhere)) return;
    this.polling = true;
    try {
      if (connected) await this.collector.prepare();
      // Read by the collector, a due health round rides the same exec as the GPU and service reads once a
      // poll told the vendor and the model paths (started, not awaited: a `du` round runs on its own exec).
      if (connected && this.updatedAt !== null && this.collector.state().mode === 'collector' && this.health.due()) fireAndForget(this.health.run(this.gpuVendor), this.logger, 'host health');
      await Promise.all([
        this.pollGpus(connected),
        ...this.services.map(async (s) => {
          if (connected || s.readsElsewhere) await s.scrape(() => this.clock.now());
          // A reading through the tunnel proves the path too; the probe runs when it is due or the reading failed.
          if (connected && s.probeDue()) await s.runProbe(this.clock, settings);
        }),
      ]);
      if (this.gpuStale === null || this.services.some((s) => s.fresh)) {
        this.updatedAt = this.clock.now();
      }
      if (connected) this.checkLinkAlive(settings);
      // After the GPUs (the vendor decides whether DRM fdinfo is read); its own interval and deadline
      // (a `du` round takes long), so it never holds a poll round up.
      if (connected && this.health.due()) fireAndForget(this.health.run(this.gpuVendor), this.logger, 'host health');
    } catch (err) {
      this.logger.error('poll failed unexpectedly', { error: toAppError(err).message });
    } finally {
      this.polling = false;
    }
  }

  /**
   * Every poll sends something through the SSH link (a GPU exec, readings and probes through the
   * tunnels), and a live server answers within milliseconds. A link that received nothing for
   * longer than a reading may take, while polls kept asking, is dead even though TCP has not noticed:
   * drop it now (open streams end with the reason, requests stop being sent into it) instead of
   * waiting for SSH's keepalive timeout.
   */
  private checkLinkAlive(settings: PollSettings): void {
    const silent = this.linkSilence(settings);
    if (silent !== null) this.declareLinkDead(silent);
  }

  /**
   * A poll still in flight (read by the collector, one exec waits for its whole deadline — many
   * seconds on a cut link) is checked every round, not only once it ends: past the same silence, a
   * tiny exec asks the link itself. On a live link the server answers it at once, whatever the
   * collector's command is still waiting for on the host; when the link stays silent through the
   * exec's deadline too (half the limit, at least 1 s), it is dead.
   */
  watchLink(settings: PollSettings): void {
    if (this.probingLink || this.linkSilence(settings) === null) return;
    this.probingLink = true;
    // The link has been silent past the limit already; a live server answers an exec in a few round trips.
    const probeMs = Math.max(1_000, linkLimitMs(settings) / 2);
    this.session
      .exec('true', { timeoutMs: probeMs, maxOutputBytes: 1024 })
      .then(
        () => undefined,
        () => {
          const silent = this.linkSilence(settings);
          if (silent !== null) this.declareLinkDead(silent);
        },
      )
      .finally(() => {
        this.probingLink = false;
      });
  }

  /** How long the link has received nothing, when that is past what a reading may take and polls use it; else null. */
  private linkSilence(settings: PollSettings): number | null {
    if (this.session.state !== 'connected' || !this.session.reconnectNow) return null;
    const usesLink = (this.gpuSource !== null && this.gpuSource.kind !== 'prometheus-api') || this.services.some((s) => !s.readsElsewhere);
    if (!usesLink) return null;
    const silent = this.session.silentForMs?.() ?? null;
    return silent === null || silent < linkLimitMs(settings) ? null : silent;
  }

  private declareLinkDead(silent: number): void {
    if (!this.session.reconnectNow) return;
    const err = new AppError(SshErrorCode.DISCONNECTED, `${this.label}: the SSH link received nothing for ${Math.round(silent / 1000)} s while requests went through it; it is dead, reconnecting`, {
      retryable: true,
      details: { silentMs: silent },
    });
    this.logger.warn('dead SSH link', { silentMs: silent });
    fireAndForget(this.session.reconnectNow(err), this.logger, 'reconnect after a dead link');
  }

  private async pollGpus(connected: boolean): Promise<void> {
    const tool = this.config.telemetry?.gpu ?? 'auto';
    if (tool === 'none' && this.gpuSource === null) return;
    if (!connected && this.gpuSource?.kind !== 'prometheus-api') return;
    if (this.gpuSource === null) {
      if (this.detectIn-- > 0) return;
      await this.detectGpuTool();
      if (this.gpuSource === null) return;
    }
    let r: SourceReading;
    try {
      r = await this.gpuSource.scrape();
    } catch (err) {
      const e = toAppError(err, TelemetryErrorCode.SCRAPE_FAILED);
      r = { ok: false, atMs: this.clock.now(), stale: { code: e.code, message: e.message, atMs: this.clock.now() } };
    }
    if (!r.ok) {
      this.gpuStale = { code: r.stale.code, message: r.stale.message };
      // The detected tool went missing (exit 127): look again next poll.
      if (tool === 'auto' && r.stale.code === TelemetryErrorCode.EXEC_FAILED && / exited 127/.test(r.stale.message) && this.gpuSource.kind !== 'prometheus-api') {
        this.gpuSource = null;
        this.gpuTool = null;
      }
      return;
    }
    const gpus = r.gpus ?? [];
    this.gpus = gpus;
    this.gpuIssues = (r.issues ?? []).slice(0, 10);
    this.gpuStale = null;
    this.gpuReadAt = r.atMs;
    if (gpus.some((g) => g.processes !== null)) this.gpuApps = { atMs: r.atMs, byGpu: new Map(gpus.map((g) => [g.index, g.processes ?? []])) };
    const vendor = gpus[0]?.vendor;
    if (vendor) this.gpuVendor = vendor;
  }

  /** `auto`: ask the host which tool it has (nvidia-smi, then amd-smi, then rocm-smi, then sysfs). */
  private async detectGpuTool(): Promise<void> {
    try {
      const res = await this.session.exec(GPU_DETECT_COMMAND, { timeoutMs: this.sources.settings.execTimeoutMs, maxOutputBytes: 16 * 1024 });
      const found = parseGpuDetect(res.stdout);
      if (found.tool === null) {
        const line = (res.stderr || res.stdout).trim().split('\n')[0]?.trim() ?? '';
        this.gpuStale = {
          code: TelemetryErrorCode.NO_GPU_TOOL,
          message: `${this.label} has no nvidia-smi, amd-smi, rocm-smi or amdgpu sysfs files${
            res.exitCode !== 0 ? ` (detection exited ${res.exitCode ?? res.signal ?? '?'}${line ? `: ${line.slice(0, 120)}` : ''})` : ''
          }; set hosts[].telemetry.gpu to choose one, or none`,
        };
        this.detectIn = REDETECT_EVERY_POLLS;
        return;
      }
      this.useGpuTool(found.tool);
      this.logger.info('GPU tool detected', { tool: found.tool, found: found.found });
    } catch (err) {
      const e = toAppError(err);
      this.gpuStale = { code: e.code, message: `GPU tool detection failed: ${e.message}` };
    }
  }

  private gpuReadingSource(): ReadingSource | null {
    const source = this.gpuSource;
    if (source === null) return null;
    if (source.kind === 'prometheus-api') return { kind: 'prometheus', atMs: this.gpuReadAt, detail: (source as { detail?: string }).detail ?? null };
    const kind = source.kind as GpuToolKind;
    return { kind, atMs: this.gpuReadAt, detail: SOURCE_DETAIL[kind] ?? null };
  }

  /** This host as of now, for the fleet's state (a new object each call). */
  state(): HostState {
    const session = this.session;
    const problem = session.hostKeyProblem;
    const services = this.services.map((s) => s.state(this.config.label, session.state, session.nextRetryAt));
    const health = this.health.state();
    return {
      label: this.config.label,
      config: this.config,
      session: {
        state: session.state,
        lastError: this.lastError,
        nextRetryAt: session.nextRetryAt,
        recovery: session.recovery ?? null,
        hostKeyFingerprint: session.hostKeyFingerprint,
        trustProblem: problem ? { ...problem, knownFingerprints: [...problem.knownFingerprints] } : null,
        credentialPrompt: this.credentialPrompt(),
        transport: session.transport ? { ...session.transport, effective: session.transport.effective ? { ...session.transport.effective } : null } : null,
      },
      gpus: { readings: this.gpus, stale: this.gpuStale, vendor: this.gpuVendor, tool: this.gpuTool, source: this.gpuReadingSource(), issues: this.gpuIssues },
      health: this.health.settings.intervalMs > 0 ? health : null,
      gpuProcesses: this.gpuProcesses.state({
        vendor: this.gpuVendor,
        apps: this.gpuApps,
        health: this.health.parsed,
        healthAtMs: health.atMs,
        services: services.map((s) => ({ id: s.id, remoteHost: s.config.remoteHost, remotePort: s.config.remotePort, health: s.health })),
        sshUser: this.config.ssh.user,
      }),
      services,
      updatedAt: this.updatedAt,
      read: this.collector.state(),
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
