import type { Client, ClientChannel } from 'ssh2';
import { AppError, Emitter, fireAndForget, silentLogger, systemClock, toAppError, type Clock, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { execOnClient, type ExecOptions, type ExecResult } from './exec.js';
import { openForwardChannel } from './forward-channel.js';
import { assertTrustable, refusalOf } from './host-key-check.js';
import { knownHostsName } from './known-hosts.js';
import { endClients, openLink, watchLink, type Link, type LinkContext } from './link.js';
import { RetryTimer } from './retry-timer.js';
import { defaultSshServices, type HostKeyProblem, type SshConnectionOptions, type SshConnectionState, type SshHostTarget, type SshServices, type SshSession, type SshStateChange, type SshTransportInfo } from './session.js';
import { AttemptWaiters, ConnectedWaiters } from './waiters.js';

// The public names of a session live in session.ts; they are re-exported here, where they always were.
export {
  defaultSshServices,
  type HostKeyProblem,
  type SshClientFactory,
  type SshConnectionOptions,
  type SshConnectionState,
  type SshHostTarget,
  type SshServices,
  type SshSession,
  type SshTransportInfo,
  type SshStateChange,
} from './session.js';

/**
 * One SSH session per host over ssh2 (optionally through one jump host): the
 * state machine. Host-key trust is decided in the handshake, before any
 * credential is offered; unknown and changed keys stop and wait for the
 * operator, only network trouble is retried, with backoff and jitter.
 */
export class SshConnection implements SshSession {
  readonly label: string;
  private readonly target: SshHostTarget;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly options: SshConnectionOptions;
  private readonly services: Partial<SshServices>;
  private readonly fallback = defaultSshServices();
  private readonly stateEmitter = new Emitter<SshStateChange>();
  readonly onDidChangeState = this.stateEmitter.on.bind(this.stateEmitter);

  private _state: SshConnectionState = 'disconnected';
  private _lastError: AppError | null = null;
  private _nextRetryAt: number | null = null;
  /** Epoch ms of the last byte received on the connected link. */
  private lastInboundAt: number | null = null;
  private _fingerprint: string | null = null;
  private _problem: HostKeyProblem | null = null;
  private client: Client | null = null;
  private jumpClient: Client | null = null;
  /** Clients of the attempt in flight (so disconnect() can cut a handshake short). */
  private readonly handshaking = new Set<Client>();
  private closedPromises: Promise<void>[] = [];
  /** Bumped on every attempt and on disconnect, so late events of an old client are ignored. */
  private generation = 0;
  private readonly retry: RetryTimer;
  private readonly attemptWaiters = new AttemptWaiters();
  private readonly connectedWaiters = new ConnectedWaiters();
  private disposed = false;

  constructor(target: SshHostTarget, options: SshConnectionOptions = {}) {
    this.target = target;
    this.label = target.label;
    this.options = options;
    this.services = options.services ?? {};
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger).child(`ssh:${target.label}`);
    this.retry = new RetryTimer(this.clock, () => this.options.backoff ?? {});
  }

  get state(): SshConnectionState {
    return this._state;
  }
  get lastError(): AppError | null {
    return this._lastError;
  }
  get nextRetryAt(): number | null {
    return this._nextRetryAt;
  }
  get hostKeyFingerprint(): string | null {
    return this._fingerprint;
  }
  get hostKeyProblem(): HostKeyProblem | null {
    return this._problem;
  }
  get hasLiveClient(): boolean {
    return this.client !== null || this.jumpClient !== null || this.handshaking.size > 0;
  }
  get transport(): SshTransportInfo {
    return { kind: 'builtin', why: this.options.transportWhy ?? 'builtin', client: 'ssh2', effective: null };
  }
  get address(): string {
    return `${this.target.ssh.user}@${this.target.ssh.host}:${this.target.ssh.port}`;
  }

  /** The app's service if it installed one (read at each use), else this session's default. */
  private service<K extends keyof SshServices>(name: K): SshServices[K] {
    return this.services[name] ?? this.fallback[name];
  }

  /**
   * Starts connecting (or joins the attempt in flight). Resolves once connected;
   * rejects with the attempt's coded error. Network failures keep retrying in the
   * background after the rejection; trust and auth failures wait for the operator.
   */
  connect(): Promise<void> {
    if (this.disposed) return Promise.reject(new AppError(SshErrorCode.CANCELLED, 'the session is disposed'));
    if (this._state === 'connected') return Promise.resolve();
    const settled = this.attemptWaiters.next();
    const inFlight = this._state === 'connecting' || (this._state === 'reconnecting' && !this.retry.pending);
    if (!inFlight) {
      this.retry.stop();
      fireAndForget(this.attempt(this._state === 'reconnecting' ? 'reconnecting' : 'connecting'), this.logger, 'ssh connect attempt');
    }
    return settled;
  }

  /** "Reconnect now": whatever the state, drop the link or the pending retry and try at once. */
  async reconnectNow(reason?: AppError): Promise<void> {
    if (this.disposed) throw new AppError(SshErrorCode.CANCELLED, 'the session is disposed');
    if (this._state === 'connected' || this._state === 'connecting' || this._state === 'reconnecting') {
      this.generation++;
      this.retry.stop();
      // Tell listeners first (open streams fail with the reason) — dropping a dead link can take a second.
      if (reason) this.setState({ state: 'reconnecting', error: reason });
      await this.dropClients();
      const settled = this.attemptWaiters.next();
      fireAndForget(this.attempt('reconnecting', reason), this.logger, 'ssh reconnect-now attempt');
      return settled;
    }
    return this.connect();
  }

  silentForMs(): number | null {
    if (this._state !== 'connected' || this.lastInboundAt === null) return null;
    return Math.max(0, this.clock.now() - this.lastInboundAt);
  }

  /** Closes the session at any moment; stops retries. */
  async disconnect(): Promise<void> {
    this.generation++;
    this.retry.stop();
    const cancelled = new AppError(SshErrorCode.CANCELLED, 'disconnected by request');
    this.attemptWaiters.settle(cancelled);
    this.connectedWaiters.rejectAll(cancelled);
    await this.dropClients();
    if (this._state !== 'disconnected') this.setState({ state: 'disconnected' });
  }

  /**
   * Records the operator's confirmation of a host key and reconnects. While the
   * session waits on an unknown key the fingerprint must be that key's; with
   * nothing pending it pre-trusts a key for the host (a fingerprint read out of
   * band). It never overrides known_hosts or an earlier confirmation: a changed
   * key stays refused.
   */
  async trustFingerprint(fingerprint: string, actor = 'operator'): Promise<void> {
    const problem = this._problem;
    assertTrustable(problem, fingerprint);
    const endpoint = problem?.endpoint ?? knownHostsName(this.target.ssh.host, this.target.ssh.port);
    this.service('trustStore').add({
      endpoint,
      keyType: problem?.keyType ?? 'unknown',
      fingerprint,
      confirmedAt: this.clock.now(),
      actor,
    });
    this._problem = null;
    if (this._state === 'awaiting-trust' || this._state === 'disconnected') await this.connect();
  }

  /** The operator said no: the session stops (state failed, SSH_TRUST_REFUSED) and does not retry. */
  async refuseTrust(fingerprint: string): Promise<void> {
    const refused = refusalOf(this._problem, this._state, this.label, fingerprint);
    this._problem = null;
    this.setState({ state: 'failed', error: refused });
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const client = this.requireClient();
    return execOnClient(client, command, this.clock, options);
  }

  /** Opens a direct-tcpip channel, waiting a bounded time for a reconnect if needed. */
  async forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<ClientChannel> {
    await this.whenConnected(this.options.waitForConnectionMs ?? 5_000);
    const client = this.requireClient();
    return openForwardChannel(client, this.clock, srcIp, srcPort, dstHost, dstPort, this.options.channelOpenTimeoutMs ?? 10_000);
  }

  /** Resolves when connected; rejects after `timeoutMs` or when the session stops trying. */
  whenConnected(timeoutMs: number): Promise<void> {
    if (this._state === 'connected') return Promise.resolve();
    if (this._state === 'disconnected' || this._state === 'failed' || this._state === 'awaiting-trust' || this.disposed) {
      return Promise.reject(this.notConnected());
    }
    return this.connectedWaiters.wait(
      this.clock,
      timeoutMs,
      () =>
        new AppError(SshErrorCode.NOT_CONNECTED, `${this.label}: SSH did not come back within ${timeoutMs} ms (${this._lastError?.message ?? this._state})`, {
          retryable: true,
          details: { timeoutMs, state: this._state },
        }),
    );
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    await this.disconnect();
    this.disposed = true;
    this.stateEmitter.dispose();
  }

  // --- internals -----------------------------------------------------------

  private notConnected(): AppError {
    const why = this._lastError ? `: ${this._lastError.code} ${this._lastError.message}` : '';
    return new AppError(SshErrorCode.NOT_CONNECTED, `${this.label}: SSH is ${this._state}${why}`, {
      retryable: this._state !== 'failed',
      details: { state: this._state },
    });
  }

  private requireClient(): Client {
    if (this._state !== 'connected' || !this.client) throw this.notConnected();
    return this.client;
  }

  private setState(change: SshStateChange): void {
    this._state = change.state;
    this._nextRetryAt = change.nextRetryAt ?? null;
    if (change.error) this._lastError = change.error;
    else if (change.state === 'connected') this._lastError = null;
    this.logger.debug('state', { state: change.state, code: change.error?.code, nextRetryAt: change.nextRetryAt });
    this.stateEmitter.fire(change);
  }

  /** What one attempt's link needs from the session; `gen` is the attempt's generation. */
  private linkContext(gen: number): LinkContext {
    return {
      target: this.target,
      clock: this.clock,
      homeDir: this.options.homeDir,
      env: this.options.env ?? process.env,
      dialer: () => this.service('dialer'),
      passphrases: () => this.service('passphrases'),
      clientFactory: this.options.clientFactory,
      readyTimeoutMs: this.options.readyTimeoutMs ?? 15_000,
      keepaliveIntervalMs: this.target.ssh.keepaliveIntervalMs ?? 5_000,
      keepaliveCountMax: this.options.keepaliveCountMax ?? 2,
      logger: this.logger,
      trustStore: () => this.service('trustStore'),
      isCurrent: () => gen === this.generation,
      handshaking: this.handshaking,
      onHostFingerprint: (fingerprint) => (this._fingerprint = fingerprint),
      onHostKeyProblem: (problem) => (this._problem = problem),
    };
  }

  private async attempt(state: 'connecting' | 'reconnecting', reason?: AppError): Promise<void> {
    const gen = ++this.generation;
    this.setState({ state, ...(reason ? { error: reason } : {}) });
    try {
      const link = await openLink(this.linkContext(gen));
      if (link) this.adopt(link, gen);
    } catch (err) {
      if (gen !== this.generation) return;
      this.fail(toAppError(err, SshErrorCode.CONNECT_FAILED));
    }
  }

  /** The link is up: watch it, and on loss schedule a reconnect. */
  private adopt(link: Link, gen: number): void {
    const { client, jumpClient } = link;
    this.client = client;
    this.jumpClient = jumpClient;
    // Every byte from the server (channel data, keepalive replies) proves the link alive; ssh2 reads the
    // stream already, so a second listener only watches.
    this.lastInboundAt = this.clock.now();
    link.sock.on('data', () => {
      if (gen === this.generation) this.lastInboundAt = this.clock.now();
    });
    const closed = watchLink(link, this.logger, (lastError) => {
      if (this.client === client) this.client = null;
      if (this.jumpClient === jumpClient) this.jumpClient = null;
      // One hop gone takes the other with it.
      client.destroy();
      jumpClient?.destroy();
      if (gen !== this.generation) return;
      const why = lastError ? ` (${lastError.message})` : '';
      this.scheduleRetry(
        new AppError(SshErrorCode.DISCONNECTED, `${this.label}: the SSH connection was lost${why}`, { retryable: true, cause: lastError ?? undefined }),
      );
    });
    this.closedPromises.push(...closed);
    this.retry.reset();
    this._problem = null;
    this.setState({ state: 'connected' });
    this.attemptWaiters.settle(null);
    this.connectedWaiters.resolveAll();
  }

  private fail(err: AppError): void {
    this.attemptWaiters.settle(err);
    if (err.retryable) {
      this.scheduleRetry(err);
      return;
    }
    const state: SshConnectionState = err.code === SshErrorCode.HOST_KEY_UNKNOWN ? 'awaiting-trust' : 'failed';
    this.connectedWaiters.rejectAll(err);
    this.setState({ state, error: err });
  }

  private scheduleRetry(err: AppError): void {
    const gen = this.generation;
    const nextRetryAt = this.retry.schedule(() => {
      if (gen !== this.generation || this.disposed) return;
      fireAndForget(this.attempt('reconnecting'), this.logger, 'ssh reconnect attempt');
    });
    this.setState({ state: 'reconnecting', error: err, nextRetryAt });
  }

  private async dropClients(): Promise<void> {
    const clients = [this.client, this.jumpClient, ...this.handshaking].filter((c): c is Client => c !== null);
    this.client = null;
    this.jumpClient = null;
    this.handshaking.clear();
    if (clients.length === 0) return;
    const closed = this.closedPromises;
    this.closedPromises = [];
    await endClients(clients, closed);
  }
}
