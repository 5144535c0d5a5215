import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FleetSnapshot, HostConnectionState } from '../../../src-preload/contract/index.js';
import type { EventSink } from '../channel.js';
import type { Config, HostConfig } from '../config/index.js';
import { AppError, Emitter, fireAndForget, silentLogger, systemClock, type Clock, type Disposable, type Logger, type OnPremGuard } from '../base/index.js';
import {
  OpenSshHelperServer,
  OpenSshProbe,
  OpenSshSession,
  SshConnection,
  SshErrorCode,
  TunnelSockets,
  chooseTransport,
  defaultSshServices,
  type HostKeyProblem,
  type SshConnectionOptions,
  type SshServices,
  type SshSession,
  type SshStateChange,
  type ExecOptions,
  type ExecResult,
  type ExecStream,
  type ExecStreamOptions,
} from '../ssh/index.js';
import { splitUpstreamKey, type UpstreamClient, type UpstreamKey } from '../upstream/index.js';
import { FleetErrorCode } from './errors.js';
import { HostRuntime } from './host-runtime.js';
import type { HostReboot } from './host-health.js';
import { PrometheusSources } from './prometheus-sources.js';
import type { PollSettings } from './sources.js';
import { fleetSnapshotOf } from './snapshot-view.js';
import type { FleetState } from './state.js';
import type { TunnelTestResult } from './tunnel-probe.js';

export interface ConnectionFactoryDeps {
  clock: Clock;
  logger: Logger;
  /** The fleet's shared trust store, passphrases and dialer (installed by the app's ssh wiring). */
  services: SshServices;
}

export type ConnectionFactory = (host: HostConfig, deps: ConnectionFactoryDeps) => SshSession;

export interface FleetServiceOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  /** Tests inject sessions here; default: a real SshConnection per host. */
  connectionFactory?: ConnectionFactory;
  /** Default: config.telemetry.pollIntervalMs, else 1000. */
  pollIntervalMs?: number;
  /** Deadline for each HTTP scrape through a tunnel (headers and body). Default 3 s. */
  scrapeTimeoutMs?: number;
  /** Deadline for nvidia-smi over exec. Default 5 s. */
  execTimeoutMs?: number;
  /** Cap on a /metrics body. Default 8 MiB. */
  maxScrapeBytes?: number;
  /** Trust store, passphrases, dialer (resolver) for the default sessions. */
  sshServices?: Partial<SshServices>;
  /** Extra options for the default sessions (tests: backoff, keepalive, waits). */
  sshOptions?: Omit<SshConnectionOptions, 'clock' | 'logger' | 'services'>;
  /** Counts (and refuses) an operator's Test whose public URL is off this machine. */
  offPrem?: OnPremGuard;
  /**
   * The openssh transport: where control sockets, generated configs and the helper live (keep it
   * short: a socket path may hold 103 bytes), and the client. Default: a folder under the system tmp.
   */
  openssh?: { controlDir?: string; binary?: string };
  /**
   * The folder (made 0700) for the tunnels' private sockets: the data dir's `tunnels/`. Default, or when the
   * path is too long for a socket: a new folder under the system tmp, removed on dispose.
   */
  tunnelDir?: string;
  /** Where the fleet publishes the contract's `fleet.tick` (built at the edge from its state); none in tests that only read state. */
  events?: EventSink;
}

export interface HostStateChange {
  label: string;
  state: HostConnectionState;
  message: string | null;
  /** The coded error of this change (for audit rows and alerts). */
  error: AppError | null;
  /** Set when the change stopped on a host key the console would not accept. */
  hostKey: HostKeyProblem | null;
}

export interface FleetResourceCounts {
  hosts: number;
  connections: number;
  listeningForwards: number;
  activeStreams: number;
}

const DECISION_ERRORS = new Set<string>([
  SshErrorCode.INVALID_FINGERPRINT,
  SshErrorCode.FINGERPRINT_MISMATCH,
  SshErrorCode.HOST_KEY_CHANGED,
  SshErrorCode.NOTHING_TO_TRUST,
]);
const HOST_KEY_CODES = new Set<string>([SshErrorCode.HOST_KEY_UNKNOWN, SshErrorCode.HOST_KEY_CHANGED, SshErrorCode.HOST_KEY_REVOKED]);

/**
 * The fleet screen's engine: one SSH session per configured host, a tunnel per
 * service, and one poll round per interval (nvidia-smi over exec, /metrics and
 * /health through the tunnels) ending in one FleetState for the whole fleet
 * (`onDidChange`, also on every SSH state change) and one contract `fleet.tick`.
 * Rounds never overlap; a host still busy from the last round is skipped.
 */
export class FleetService implements Disposable {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly factory: ConnectionFactory;
  private readonly hosts = new Map<string, HostRuntime>();
  private readonly prometheus: PrometheusSources;
  private readonly settings: PollSettings;
  private readonly pollIntervalMs: number;
  private readonly changeEmitter = new Emitter<FleetState>();
  private readonly roundEmitter = new Emitter<FleetState>();
  private readonly hostStateEmitter = new Emitter<HostStateChange>();
  /** One object shared by every default session. */
  private readonly sshServices: SshServices;
  /** The fleet's state after each poll round and each SSH state change (the proxy routes by it). */
  readonly onDidChange = this.changeEmitter.on.bind(this.changeEmitter);
  /**
   * The state at the end of each poll round only (the same object `onDidChange` carried just before): for
   * what counts per reading (series, policies' episodes, budget spans), which an SSH change must not repeat.
   */
  readonly onDidRound = this.roundEmitter.on.bind(this.roundEmitter);
  private readonly tickEmitter = new Emitter<FleetSnapshot>();
  /**
   * The contract's `fleet.tick`, for what stands outside core (bridges, tests): nothing in core subscribes
   * to it (test/unit/architecture/fleet-state.test.ts); capabilities read `onDidChange`.
   */
  readonly onDidTick = this.tickEmitter.on.bind(this.tickEmitter);
  private readonly events: EventSink | null;
  private published: FleetState;
  readonly onDidChangeHostState = this.hostStateEmitter.on.bind(this.hostStateEmitter);
  private readonly rebootEmitter = new Emitter<HostReboot>();
  /** A host answered with a new boot id (HostService audits it as `host.rebooted`). */
  readonly onDidReboot = this.rebootEmitter.on.bind(this.rebootEmitter);
  private sshDefaults: Config['ssh'];
  /** Fleet-wide host health and alert settings (a host's own blocks win field by field). */
  private healthDefaults: Pick<Config, 'health' | 'alerts'>;
  private readonly opensshDir: string;
  private readonly tunnelSockets: TunnelSockets;
  private readonly tunnelDirGiven: boolean;
  private readonly opensshProbe = new OpenSshProbe();
  private opensshHelper: OpenSshHelperServer | null = null;
  private timer: Disposable | null = null;
  private roundInFlight: Promise<void> | null = null;
  private started = false;
  private disposed = false;

  constructor(options: FleetServiceOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.sshServices = { ...defaultSshServices(), ...options.sshServices };
    const sshOptions = options.sshOptions ?? {};
    this.sshDefaults = options.config.ssh ?? { transport: 'auto' };
    this.opensshDir = options.openssh?.controlDir ?? join(tmpdir(), `gc-ssh-${process.getuid?.() ?? 'user'}-${process.pid}`);
    this.factory =
      options.connectionFactory ??
      ((host, deps) => {
        const choice = chooseTransport(host.ssh, this.sshDefaults.transport);
        if (choice.kind === 'builtin') return new SshConnection(host, { ...sshOptions, transportWhy: choice.why, clock: deps.clock, logger: deps.logger, services: deps.services });
        return new OpenSshSession(host, {
          ...sshOptions,
          transportWhy: choice.why,
          clock: deps.clock,
          logger: deps.logger,
          services: deps.services,
          controlDir: this.opensshDir,
          binary: options.openssh?.binary ?? this.sshDefaults.binary ?? 'ssh',
          helper: this.helper(deps.logger),
          probe: this.opensshProbe,
        });
      });
    this.pollIntervalMs = options.pollIntervalMs ?? options.config.telemetry?.pollIntervalMs ?? 1_000;
    this.tunnelSockets = new TunnelSockets({ preferredDir: options.tunnelDir ?? null, logger: this.logger });
    this.tunnelDirGiven = options.tunnelDir !== undefined;
    this.healthDefaults = options.config;
    this.settings = {
      timeoutMs: options.scrapeTimeoutMs ?? 3_000,
      maxBytes: options.maxScrapeBytes ?? 8 * 1024 * 1024,
      execTimeoutMs: options.execTimeoutMs ?? 5_000,
      ...(options.offPrem ? { offPrem: options.offPrem } : {}),
    };
    this.prometheus = new PrometheusSources(options.config.telemetry, this.clock, this.logger, this.settings.maxBytes);
    this.events = options.events ?? null;
    for (const host of options.config.hosts) this.addHost(host);
    this.published = this.state();
  }

  /** Installs the app's trust store / passphrase cache / dialer for every session (call before start()). */
  get ssh(): Readonly<SshServices> {
    return this.sshServices;
  }

  /** Connects every host and starts the poll rounds. */
  start(): void {
    if (this.disposed || this.started) return;
    this.started = true;
    // Sockets a console that crashed left in the data dir's folder (nobody listens on them).
    if (this.tunnelDirGiven) fireAndForget(this.tunnelSockets.sweep(), this.logger, 'sweeping stale tunnel sockets');
    for (const host of this.hosts.values()) this.connectQuietly(host);
    this.timer = this.clock.setInterval(() => this.round(), this.pollIntervalMs);
  }

  /** The fleet as of now (a new object each call; what `onDidChange` last published is `lastPublished`). */
  state(): FleetState {
    return { at: this.clock.now(), hosts: [...this.hosts.values()].map((h) => h.state()) };
  }

  /** The state the last `onDidChange` carried: what the proxy routes by. */
  get lastPublished(): FleetState {
    return this.published;
  }

  /** The contract's view of the fleet now, built at the edge (the `fleet.snapshot` channel, bridges, tests). */
  snapshot(): FleetSnapshot {
    return fleetSnapshotOf(this.state());
  }

  async connect(label: string): Promise<HostConnectionState> {
    const host = this.requireHost(label);
    try {
      await host.connect();
    } catch {
      // The failure is in the host's state and lastError, which the caller reads.
    }
    return host.session.state;
  }

  async disconnect(label: string): Promise<HostConnectionState> {
    const host = this.requireHost(label);
    await host.disconnect();
    return host.session.state;
  }

  /** Drops the host's link or pending retry and connects at once. */
  async reconnectNow(label: string): Promise<HostConnectionState> {
    const host = this.requireHost(label);
    try {
      await (host.session.reconnectNow ? host.session.reconnectNow() : host.session.connect());
    } catch {
      // The failure is in the host's state and lastError.
    }
    return host.session.state;
  }

  /**
   * Records the operator's confirmation of a host key (in the trust store the
   * app installed) and reconnects. Errors that concern the decision itself
   * (mismatch, changed key, malformed) are thrown; connection trouble after it is in the state.
   */
  async trustHostKey(label: string, fingerprint: string, actor = 'operator'): Promise<HostConnectionState> {
    const host = this.requireHost(label);
    try {
      await host.session.trustFingerprint(fingerprint, actor);
    } catch (err) {
      if (err instanceof AppError && DECISION_ERRORS.has(err.code)) throw err;
    }
    return host.session.state;
  }

  /** The operator refused the host key the host is waiting on. */
  async refuseHostKey(label: string, fingerprint: string): Promise<HostConnectionState> {
    const host = this.requireHost(label);
    if (!host.session.refuseTrust) throw new AppError(SshErrorCode.UNSUPPORTED, `${label}: this session cannot refuse a key`);
    await host.session.refuseTrust(fingerprint);
    return host.session.state;
  }

  /** Declines the question the host asks now; the attempt fails with that reason. */
  async declinePrompt(label: string): Promise<HostConnectionState> {
    const host = this.requireHost(label);
    if (!host.session.cancelPrompt?.()) {
      throw new AppError(SshErrorCode.NO_PROMPT, `${label} is not asking anything now`, { details: { label } });
    }
    await host.session.connect().catch(() => undefined);
    return host.session.state;
  }

  /** Keeps the passphrase of the host's key in memory (never on disk) and connects. */
  async providePassphrase(label: string, passphrase: string): Promise<HostConnectionState> {
    const host = this.requireHost(label);
    // The host is asking something right now (keyboard-interactive): this is the answer.
    if (host.session.pendingPrompt && host.session.answerPrompt?.(passphrase)) {
      await host.session.connect().catch(() => undefined);
      return host.session.state;
    }
    const keyFile = host.config.ssh.identityFile;
    if (!keyFile) throw new AppError(FleetErrorCode.NO_IDENTITY_FILE, `${label} has no identityFile; a passphrase has nothing to unlock`);
    this.sshServices.passphrases.set(keyFile, passphrase);
    try {
      await host.connect();
    } catch {
      // SSH_PASSPHRASE_INCORRECT and the rest land in the host's state.
    }
    return host.session.state;
  }

  /** The operator's Test of one tunnel: GET /v1/models, then a 1-token chat. */
  testTunnel(label: string, serviceId: string): Promise<TunnelTestResult> {
    return this.requireHost(label).testTunnel(serviceId, this.settings);
  }

  /** Labels and identity files, for callers that must not see the sessions. */
  hostConfig(label: string): HostConfig {
    return this.requireHost(label).config;
  }

  /**
   * The client of a service's endpoint, for the console's own callers (proxy, lifecycle drivers, report
   * checks, bench): bound to its tunnel's private socket, where admin paths pass. Made when the tunnel
   * opens, closed with it (a call through a closed one fails UPSTREAM_CLOSED); operators and apps get the
   * public `tunnel.localUrl` of the snapshot. Throws FLEET_UNKNOWN_HOST, FLEET_UNKNOWN_SERVICE, or
   * FLEET_TUNNEL_NOT_READY while the tunnel is not open.
   */
  upstream(key: UpstreamKey): UpstreamClient {
    const { label, serviceId } = splitUpstreamKey(key) ?? { label: key, serviceId: '' };
    const host = this.requireHost(label);
    const service = host.services.find((s) => s.config.id === serviceId);
    if (!service) {
      throw new AppError(FleetErrorCode.UNKNOWN_SERVICE, `host ${label} has no service ${serviceId}`, { details: { label, serviceId } });
    }
    const client = service.client;
    if (!client) {
      throw new AppError(FleetErrorCode.TUNNEL_NOT_READY, `the tunnel to ${key} is not open (SSH ${host.session.state})`, {
        retryable: true,
        details: { label, serviceId, state: host.session.state },
      });
    }
    return client;
  }

  /**
   * A URL on one of the tunnels' public ports (http://127.0.0.1:<port>/… or localhost) as that tunnel's
   * client and the URL's path; null for any other URL. For a lifecycle.routerBaseUrl pointing at a
   * tunnel: the public port's gate would refuse the router's admin paths.
   */
  upstreamAt(url: string): { client: UpstreamClient; path: string } | null {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return null;
    }
    if (u.protocol !== 'http:' || (u.hostname !== '127.0.0.1' && u.hostname.toLowerCase() !== 'localhost')) return null;
    const port = Number(u.port || 80);
    for (const host of this.hosts.values()) {
      const service = host.services.find((s) => s.forward?.localPort === port);
      if (service?.client) return { client: service.client, path: `${u.pathname}${u.search}` };
    }
    return null;
  }

  /** Runs one command on a host's SSH session (lifecycle restarts). Throws FLEET_UNKNOWN_HOST, or the session's SSH_* errors. */
  exec(label: string, command: string, options?: ExecOptions): Promise<ExecResult> {
    return this.requireHost(label).session.exec(command, options);
  }

  /** Runs a command as a stream on a host's session (service logs). Throws FLEET_UNKNOWN_HOST, SSH_NOT_CONNECTED. */
  execStream(label: string, command: string, options?: ExecStreamOptions): ExecStream {
    const session = this.requireHost(label).session;
    if (!session.execStream) throw new AppError(SshErrorCode.UNSUPPORTED, `${label}: this session cannot stream commands`);
    return session.execStream(command, options);
  }

  /** Hosts added or changed are (re)started, removed ones stopped; unchanged hosts keep running. */
  applyConfig(config: Config): void {
    if (this.disposed) return;
    const next = new Map(config.hosts.map((h) => [h.label, h]));
    // A changed fleet-wide Prometheus setting restarts the hosts that read from it.
    const promChanged = this.prometheus.update(config.telemetry);
    const oldSsh = this.sshDefaults;
    this.sshDefaults = config.ssh ?? this.sshDefaults;
    this.healthDefaults = config; // hosts started from now on; running ones keep theirs until restarted
    // A new fleet-wide transport (or client) restarts the hosts whose transport it changes.
    const transportMoved = (h: HostConfig) =>
      chooseTransport(h.ssh, oldSsh.transport).kind !== chooseTransport(h.ssh, this.sshDefaults.transport).kind || oldSsh.binary !== this.sshDefaults.binary;
    for (const [label, runtime] of [...this.hosts]) {
      const wanted = next.get(label);
      if (!wanted || JSON.stringify(wanted) !== JSON.stringify(runtime.config) || (promChanged && this.prometheus.reads(wanted)) || transportMoved(wanted)) {
        this.hosts.delete(label);
        fireAndForget(runtime.dispose(), this.logger, `stopping host ${label}`);
      }
    }
    for (const host of config.hosts) {
      if (this.hosts.has(host.label)) continue;
      const runtime = this.addHost(host);
      if (this.started) this.connectQuietly(runtime);
    }
    this.prometheus.closeUnread(config);
  }

  resourceCounts(): FleetResourceCounts {
    const counts: FleetResourceCounts = { hosts: this.hosts.size, connections: 0, listeningForwards: 0, activeStreams: 0 };
    for (const h of this.hosts.values()) {
      const c = h.resourceCounts();
      counts.connections += c.connections;
      counts.listeningForwards += c.listeningForwards;
      counts.activeStreams += c.activeStreams;
    }
    return counts;
  }

  /** Pollers first, then each host's tunnels and session (reverse order), then the HTTP pool. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    void this.timer?.dispose();
    this.timer = null;
    const hosts = [...this.hosts.values()].reverse();
    this.hosts.clear();
    await Promise.allSettled(hosts.map((h) => h.dispose()));
    await this.opensshHelper?.dispose();
    this.tunnelSockets.dispose();
    // A round still in flight is not awaited: its I/O was just torn down and it fires nothing once disposed.
    await this.prometheus.destroy();
    this.changeEmitter.dispose();
    this.roundEmitter.dispose();
    this.tickEmitter.dispose();
    this.hostStateEmitter.dispose();
    this.rebootEmitter.dispose();
  }

  // --- internals -----------------------------------------------------------

  /** One askpass / known-hosts helper for every openssh session of this fleet, made on first use. */
  private helper(logger: Logger): OpenSshHelperServer {
    this.opensshHelper ??= new OpenSshHelperServer(this.opensshDir, { logger });
    return this.opensshHelper;
  }

  private requireHost(label: string): HostRuntime {
    const host = this.hosts.get(label);
    if (!host) throw new AppError(FleetErrorCode.UNKNOWN_HOST, `no host named ${label}`, { details: { label } });
    return host;
  }

  private addHost(config: HostConfig): HostRuntime {
    const logger = this.logger.child(config.label);
    const session = this.factory(config, { clock: this.clock, logger, services: this.sshServices });
    const runtime = new HostRuntime(config, session, this.clock, logger, (change: SshStateChange) => {
      if (this.hosts.get(config.label) !== runtime) return;
      this.publish();
      this.hostStateEmitter.fire({
        label: config.label,
        state: change.state,
        message: change.error?.message ?? null,
        error: change.error ?? null,
        hostKey: change.error && HOST_KEY_CODES.has(change.error.code) ? (session.hostKeyProblem ?? null) : null,
      });
    }, { settings: this.settings, tunnelSockets: this.tunnelSockets, ...this.prometheus.sourcesFor(config),
      health: this.healthDefaults.health, diskAlerts: this.healthDefaults.alerts?.disk, onReboot: (reboot) => this.hosts.get(config.label) === runtime && this.rebootEmitter.fire(reboot) });
    this.hosts.set(config.label, runtime);
    return runtime;
  }

  private connectQuietly(host: HostRuntime): void {
    host.connect().catch((err: unknown) => {
      this.logger.debug('connect attempt failed', { label: host.label, error: err instanceof Error ? err.message : String(err) });
    });
  }

  /** One round: poll each connected, idle host; tick when all finish or the interval is over. */
  private round(): void {
    if (this.roundInFlight || this.disposed) return;
    const hosts = [...this.hosts.values()];
    // A host whose last poll still waits is not polled again; its link is watched meanwhile.
    for (const h of hosts) if (h.isPolling) h.watchLink(this.settings);
    const polls = hosts.filter((h) => !h.isPolling).map((h) => h.poll(this.settings));
    let deadline: Disposable | undefined;
    const cutoff = new Promise<void>((resolve) => {
      deadline = this.clock.setTimeout(resolve, Math.max(1, this.pollIntervalMs - 10));
    });
    this.roundInFlight = Promise.race([Promise.allSettled(polls).then(() => undefined), cutoff]).then(() => {
      void deadline?.dispose();
      this.roundInFlight = null;
      if (this.disposed) return;
      const state = this.publish();
      // The UI's tick first: the bridges send telemetry.tick (recorded from this round) after fleet.tick.
      const tick = fleetSnapshotOf(state);
      this.events?.('fleet.tick', tick);
      this.tickEmitter.fire(tick);
      this.roundEmitter.fire(state);
    });
  }

  /** A new state for everyone who routes, records or verifies by it. */
  private publish(): FleetState {
    this.published = this.state();
    this.changeEmitter.fire(this.published);
    return this.published;
  }
}
