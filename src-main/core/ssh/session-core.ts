// The state machine both transports share: states and their events, the
// attempt in flight and who waits on it, retries with backoff for network
// trouble only, waits for a reconnect, and the operator's host-key decisions.
// A transport says how one attempt opens a link (attempt) and how a link is
// dropped (dropLink); everything else a session is, is here.
import { AppError, Emitter, fireAndForget, silentLogger, systemClock, type Clock, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { assertTrustable, refusalOf } from './host-key-check.js';
import { knownHostsName } from './known-hosts.js';
import { expectRecovery, failureKindOf, type LinkFailureKind, type RecoveryExpectation } from './recovery.js';
import { RetryTimer } from './retry-timer.js';
import { defaultSshServices, type HostKeyProblem, type SshConnectionOptions, type SshConnectionState, type SshHostTarget, type SshServices, type SshStateChange } from './session.js';
import { AttemptWaiters, ConnectedWaiters } from './waiters.js';

export abstract class SessionCore {
  readonly label: string;
  protected readonly target: SshHostTarget;
  protected readonly clock: Clock;
  protected readonly logger: Logger;
  protected readonly options: SshConnectionOptions;
  private readonly fallback = defaultSshServices();
  private readonly stateEmitter = new Emitter<SshStateChange>();
  readonly onDidChangeState = this.stateEmitter.on.bind(this.stateEmitter);

  protected _state: SshConnectionState = 'disconnected';
  protected _lastError: AppError | null = null;
  protected _nextRetryAt: number | null = null;
  protected _fingerprint: string | null = null;
  protected _problem: HostKeyProblem | null = null;
  /** The last failure's kind and the failed attempts since the link was last up: what `recovery` says. */
  private lastFailure: LinkFailureKind | null = null;
  private failuresInRow = 0;
  /** Bumped on every attempt and on disconnect, so late events of an old link are ignored. */
  protected generation = 0;
  protected readonly retry: RetryTimer;
  protected readonly attemptWaiters = new AttemptWaiters();
  protected readonly connectedWaiters = new ConnectedWaiters();
  protected disposed = false;

  protected constructor(
    target: SshHostTarget,
    options: SshConnectionOptions,
    /** Names the transport in logs (`ssh`, `openssh`). */
    private readonly kind: string,
  ) {
    this.target = target;
    this.label = target.label;
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger).child(`${kind}:${target.label}`);
    this.retry = new RetryTimer(this.clock, () => this.options.backoff ?? {});
  }

  /** Opens one link for attempt `gen` (the generation it was started with) and adopts it, or fails. */
  protected abstract attempt(state: 'connecting' | 'reconnecting', reason?: AppError): Promise<void>;
  /** Drops the link and anything still handshaking; resolves once it is gone. */
  protected abstract dropLink(): Promise<void>;

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
  /** Whether the link is expected back by itself, and when it is tried next; null while connected or disconnected. */
  get recovery(): RecoveryExpectation | null {
    if (this._state === 'connected' || this._state === 'disconnected') return null;
    return expectRecovery(this.lastFailure, this.failuresInRow, this._nextRetryAt, this.options.transientFailuresMax);
  }

  /** The app's service if it installed one (read at each use), else this session's default. */
  protected service<K extends keyof SshServices>(name: K): SshServices[K] {
    return this.options.services?.[name] ?? this.fallback[name];
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
      fireAndForget(this.attempt(this._state === 'reconnecting' ? 'reconnecting' : 'connecting'), this.logger, `${this.kind} connect attempt`);
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
      await this.dropLink();
      const settled = this.attemptWaiters.next();
      fireAndForget(this.attempt('reconnecting', reason), this.logger, `${this.kind} reconnect-now attempt`);
      return settled;
    }
    return this.connect();
  }

  /** Closes the session at any moment; stops retries. */
  async disconnect(): Promise<void> {
    this.generation++;
    this.retry.stop();
    const cancelled = new AppError(SshErrorCode.CANCELLED, 'disconnected by request');
    this.attemptWaiters.settle(cancelled);
    this.connectedWaiters.rejectAll(cancelled);
    await this.dropLink();
    this.lastFailure = null;
    this.failuresInRow = 0;
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
    this.service('trustStore').add({ endpoint, keyType: problem?.keyType ?? 'unknown', fingerprint, confirmedAt: this.clock.now(), actor });
    this._problem = null;
    if (this._state === 'awaiting-trust' || this._state === 'disconnected') await this.connect();
  }

  /** The operator said no: the session stops (state failed, SSH_TRUST_REFUSED) and does not retry. */
  async refuseTrust(fingerprint: string): Promise<void> {
    const refused = refusalOf(this._problem, this._state, this.label, fingerprint);
    this._problem = null;
    this.setState({ state: 'failed', error: refused });
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

  // --- for the transports ----------------------------------------------------

  protected notConnected(): AppError {
    const why = this._lastError ? `: ${this._lastError.code} ${this._lastError.message}` : '';
    return new AppError(SshErrorCode.NOT_CONNECTED, `${this.label}: SSH is ${this._state}${why}`, {
      retryable: this._state !== 'failed',
      details: { state: this._state },
    });
  }

  protected setState(change: SshStateChange): void {
    this._state = change.state;
    this._nextRetryAt = change.nextRetryAt ?? null;
    if (change.error) this._lastError = change.error;
    else if (change.state === 'connected') this._lastError = null;
    // Set before listeners hear of the change: the fleet publishes `recovery` from inside them.
    if (change.state === 'connected') {
      this.lastFailure = null;
      this.failuresInRow = 0;
    } else if (change.error) this.lastFailure = failureKindOf(change.error);
    this.logger.debug('state', { state: change.state, code: change.error?.code, nextRetryAt: change.nextRetryAt });
    this.stateEmitter.fire(change);
  }

  /** The link is up: waiters resolve, backoff starts over. */
  protected becameConnected(): void {
    this.retry.reset();
    this._problem = null;
    this.setState({ state: 'connected' });
    this.attemptWaiters.settle(null);
    this.connectedWaiters.resolveAll();
  }

  /** An attempt failed: network trouble is retried; a key waiting for the operator, or anything else, stops. */
  protected fail(err: AppError): void {
    this.failuresInRow++;
    this.attemptWaiters.settle(err);
    if (err.retryable) {
      this.scheduleRetry(err);
      return;
    }
    const state: SshConnectionState = err.code === SshErrorCode.HOST_KEY_UNKNOWN && this._problem !== null ? 'awaiting-trust' : 'failed';
    this.connectedWaiters.rejectAll(err);
    this.setState({ state, error: err });
  }

  protected scheduleRetry(err: AppError): void {
    const gen = this.generation;
    const nextRetryAt = this.retry.schedule(() => {
      if (gen !== this.generation || this.disposed) return;
      fireAndForget(this.attempt('reconnecting'), this.logger, `${this.kind} reconnect attempt`);
    });
    this.setState({ state: 'reconnecting', error: err, nextRetryAt });
  }
}
