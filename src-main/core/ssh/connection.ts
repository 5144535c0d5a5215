import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
import type { Client, ClientChannel, ConnectConfig } from 'ssh2';
import type { HostConfig } from '../config/index.js';
import {
  AppError,
  Emitter,
  backoffDelayMs,
  fireAndForget,
  silentLogger,
  systemClock,
  toAppError,
  type Clock,
  type Disposable,
  type Logger,
} from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { execOnClient, type ExecOptions, type ExecResult } from './exec.js';
import { isSha256Fingerprint } from './fingerprint.js';
import { KnownHosts, type HostKeyVerdict } from './known-hosts.js';
import { loadPrivateKey } from './keys.js';

export type SshConnectionState = 'disconnected' | 'connecting' | 'awaiting-trust' | 'connected' | 'reconnecting' | 'failed';

export interface SshStateChange {
  state: SshConnectionState;
  error?: AppError;
  /** Epoch ms of the next automatic attempt (only in `reconnecting` while waiting). */
  nextRetryAt?: number;
}

/** What a session needs from the host inventory. */
export type SshHostTarget = Pick<HostConfig, 'label' | 'ssh' | 'knownHostsFile'>;

/** Creates the ssh2 client; tests inject their own. */
export type SshClientFactory = () => Client;

export interface SshConnectionOptions {
  clock?: Clock;
  logger?: Logger;
  /** Home folder for the default `~/.ssh/known_hosts`. */
  homeDir?: string;
  /** Where `SSH_AUTH_SOCK` is read from (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  clientFactory?: SshClientFactory;
  /** Handshake + authentication deadline. Default 15 s. */
  readyTimeoutMs?: number;
  keepaliveCountMax?: number;
  backoff?: { initialMs?: number; maxMs?: number; random?: () => number };
  /** How long a new tunnel stream waits for a reconnect before failing. Default 5 s. */
  waitForConnectionMs?: number;
  /** Deadline for the host to answer a tunnel (direct-tcpip) request. Default 10 s. */
  channelOpenTimeoutMs?: number;
}

/** The part of a session the tunnels and pollers use; the fleet takes this so tests can fake it. */
export interface SshSession extends Disposable {
  readonly label: string;
  readonly state: SshConnectionState;
  readonly lastError: AppError | null;
  readonly nextRetryAt: number | null;
  readonly hostKeyFingerprint: string | null;
  /** True while an ssh2 client (socket) exists: for leak checks. */
  readonly hasLiveClient: boolean;
  readonly onDidChangeState: Emitter<SshStateChange>['on'];
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  trustFingerprint(fingerprint: string): Promise<void>;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<Duplex>;
}

const HOST_KEY_ALGORITHMS: Record<string, string[]> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};
const DEFAULT_HOST_KEY_ORDER = Object.values(HOST_KEY_ALGORITHMS).flat();

interface Waiter {
  resolve: () => void;
  reject: (err: AppError) => void;
}

/**
 * One SSH session per host over ssh2. Host-key trust is decided in the
 * handshake, before any credential is offered; unknown and changed keys stop
 * and wait for the operator, only network trouble is retried with backoff.
 */
export class SshConnection implements SshSession {
  readonly label: string;
  private readonly target: SshHostTarget;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly options: SshConnectionOptions;
  private readonly stateEmitter = new Emitter<SshStateChange>();
  readonly onDidChangeState = this.stateEmitter.on.bind(this.stateEmitter);

  private _state: SshConnectionState = 'disconnected';
  private _lastError: AppError | null = null;
  private _nextRetryAt: number | null = null;
  private _fingerprint: string | null = null;
  private client: Client | null = null;
  private clientClosed: Promise<void> = Promise.resolve();
  /** Bumped on every attempt and on disconnect, so late events of an old client are ignored. */
  private generation = 0;
  private retryAttempt = 0;
  private retryTimer: Disposable | null = null;
  private attemptWaiters: Waiter[] = [];
  private connectedWaiters = new Set<Waiter>();
  /**
   * Fingerprints the operator confirmed for this host. Kept in memory only for
   * now: they last as long as this session object, not across restarts.
   */
  private readonly trusted = new Set<string>();
  private disposed = false;

  constructor(target: SshHostTarget, options: SshConnectionOptions = {}) {
    this.target = target;
    this.label = target.label;
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger).child(`ssh:${target.label}`);
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
  get hasLiveClient(): boolean {
    return this.client !== null;
  }
  get address(): string {
    return `${this.target.ssh.user}@${this.target.ssh.host}:${this.target.ssh.port}`;
  }

  /**
   * Starts connecting (or joins the attempt in flight). Resolves once connected;
   * rejects with the attempt's coded error. Network failures keep retrying in the
   * background after the rejection; trust and auth failures wait for the operator.
   */
  connect(): Promise<void> {
    if (this.disposed) return Promise.reject(new AppError(SshErrorCode.CANCELLED, 'the session is disposed'));
    if (this._state === 'connected') return Promise.resolve();
    const settled = new Promise<void>((resolve, reject) => this.attemptWaiters.push({ resolve, reject }));
    const inFlight = this._state === 'connecting' || (this._state === 'reconnecting' && this.retryTimer === null);
    if (!inFlight) {
      void this.retryTimer?.dispose();
      this.retryTimer = null;
      this.retryAttempt = 0;
      fireAndForget(this.attempt(this._state === 'reconnecting' ? 'reconnecting' : 'connecting'), this.logger, 'ssh connect attempt');
    }
    return settled;
  }

  /** Closes the session at any moment; stops retries. */
  async disconnect(): Promise<void> {
    this.generation++;
    void this.retryTimer?.dispose();
    this.retryTimer = null;
    this.retryAttempt = 0;
    const cancelled = new AppError(SshErrorCode.CANCELLED, 'disconnected by request');
    this.settleAttempt(cancelled);
    this.rejectConnectedWaiters(cancelled);
    await this.dropClient();
    if (this._state !== 'disconnected') this.setState({ state: 'disconnected' });
  }

  /**
   * Records the operator's confirmation of an unknown host's fingerprint and
   * reconnects. It never overrides a known_hosts entry: a changed key stays refused.
   */
  async trustFingerprint(fingerprint: string): Promise<void> {
    if (!isSha256Fingerprint(fingerprint)) {
      throw new AppError(SshErrorCode.INVALID_FINGERPRINT, `not a SHA256 fingerprint: ${fingerprint}`);
    }
    this.trusted.add(fingerprint);
    if (this._state === 'awaiting-trust' || this._state === 'disconnected') await this.connect();
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const client = this.requireClient();
    return execOnClient(client, command, this.clock, options);
  }

  /** Opens a direct-tcpip channel, waiting a bounded time for a reconnect if needed. */
  async forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<ClientChannel> {
    await this.whenConnected(this.options.waitForConnectionMs ?? 5_000);
    const client = this.requireClient();
    const openTimeoutMs = this.options.channelOpenTimeoutMs ?? 10_000;
    return new Promise<ClientChannel>((resolve, reject) => {
      let done = false;
      // ssh2 has no deadline on CHANNEL_OPEN; a host that never answers must not pin the socket.
      const timer = this.clock.setTimeout(() => {
        done = true;
        reject(
          new AppError(SshErrorCode.FORWARD_FAILED, `no answer to a tunnel request to ${dstHost}:${dstPort} within ${openTimeoutMs} ms`, {
            retryable: true,
            details: { dstHost, dstPort, timeoutMs: openTimeoutMs },
          }),
        );
      }, openTimeoutMs);
      try {
        client.forwardOut(srcIp, srcPort, dstHost, dstPort, (err, channel) => {
          void timer.dispose();
          if (done) {
            channel?.destroy();
            return;
          }
          done = true;
          if (err) {
            reject(
              new AppError(SshErrorCode.FORWARD_FAILED, `the host refused a tunnel to ${dstHost}:${dstPort}: ${err.message}`, {
                retryable: true,
                details: { dstHost, dstPort },
                cause: err,
              }),
            );
            return;
          }
          resolve(channel);
        });
      } catch (err) {
        void timer.dispose();
        done = true;
        reject(new AppError(SshErrorCode.NOT_CONNECTED, 'the SSH session is not open', { retryable: true, cause: err }));
      }
    });
  }

  /** Resolves when connected; rejects after `timeoutMs` or when the session stops trying. */
  whenConnected(timeoutMs: number): Promise<void> {
    if (this._state === 'connected') return Promise.resolve();
    if (this._state === 'disconnected' || this._state === 'failed' || this._state === 'awaiting-trust' || this.disposed) {
      return Promise.reject(this.notConnected());
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          void timer.dispose();
          resolve();
        },
        reject: (err) => {
          void timer.dispose();
          reject(err);
        },
      };
      const timer = this.clock.setTimeout(() => {
        this.connectedWaiters.delete(waiter);
        reject(
          new AppError(SshErrorCode.NOT_CONNECTED, `${this.label}: SSH did not come back within ${timeoutMs} ms`, {
            retryable: true,
            details: { timeoutMs },
          }),
        );
      }, timeoutMs);
      this.connectedWaiters.add(waiter);
    });
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    await this.disconnect();
    this.disposed = true;
    this.stateEmitter.dispose();
  }

  // --- internals -----------------------------------------------------------

  private notConnected(): AppError {
    return new AppError(SshErrorCode.NOT_CONNECTED, `${this.label}: SSH is ${this._state}`, {
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

  private settleAttempt(err: AppError | null): void {
    const waiters = this.attemptWaiters;
    this.attemptWaiters = [];
    for (const w of waiters) {
      if (err) w.reject(err);
      else w.resolve();
    }
  }

  private rejectConnectedWaiters(err: AppError): void {
    const waiters = [...this.connectedWaiters];
    this.connectedWaiters.clear();
    for (const w of waiters) w.reject(err);
  }

  private async loadKnownHosts(): Promise<KnownHosts> {
    const file = this.target.knownHostsFile ?? join(this.options.homeDir ?? homedir(), '.ssh', 'known_hosts');
    try {
      return KnownHosts.parse(await readFile(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return KnownHosts.empty();
      throw new AppError(SshErrorCode.KNOWN_HOSTS_UNREADABLE, `cannot read ${file}: ${(err as Error).message}`, {
        details: { file },
        cause: err,
      });
    }
  }

  private async attempt(state: 'connecting' | 'reconnecting'): Promise<void> {
    const gen = ++this.generation;
    this.setState({ state });
    const { ssh } = this.target;
    let knownHosts: KnownHosts;
    let privateKey: Buffer | undefined;
    let agentSock: string | undefined;
    try {
      if (ssh.jumpHost) {
        throw new AppError(SshErrorCode.UNSUPPORTED, 'connecting through a jump host is not supported yet', {
          details: { jumpHost: ssh.jumpHost },
        });
      }
      knownHosts = await this.loadKnownHosts();
      if (ssh.identityFile) privateKey = await loadPrivateKey(ssh.identityFile);
      if (ssh.agent) agentSock = (this.options.env ?? process.env)['SSH_AUTH_SOCK'] || undefined;
      if (!privateKey && !agentSock) {
        throw new AppError(
          SshErrorCode.NO_AUTH_METHOD,
          ssh.agent ? 'ssh-agent requested but SSH_AUTH_SOCK is not set, and no identityFile is configured' : 'no identityFile and no agent configured',
        );
      }
    } catch (err) {
      if (gen !== this.generation) return;
      this.fail(toAppError(err, SshErrorCode.CONNECT_FAILED));
      return;
    }
    if (gen !== this.generation) return;

    const methods: Array<'publickey' | 'agent'> = [];
    if (privateKey) methods.push('publickey');
    if (agentSock) methods.push('agent');
    const tried: string[] = [];
    let verdict: HostKeyVerdict | null = null;
    let lastClientError: (Error & { level?: string; code?: string }) | null = null;

    const knownTypes = knownHosts.keyTypesFor(ssh.host, ssh.port);
    const preferred = knownTypes.flatMap((t) => HOST_KEY_ALGORITHMS[t] ?? []);
    const hostKeyOrder = [...new Set([...preferred, ...DEFAULT_HOST_KEY_ORDER])];

    const client = (this.options.clientFactory ?? (() => new ssh2.Client()))();
    this.client = client;
    let markClosed!: () => void;
    this.clientClosed = new Promise<void>((r) => (markClosed = r));
    let ready = false;

    client.on('ready', () => {
      if (gen !== this.generation) return;
      ready = true;
      this.retryAttempt = 0;
      this.setState({ state: 'connected' });
      this.settleAttempt(null);
      const waiters = [...this.connectedWaiters];
      this.connectedWaiters.clear();
      for (const w of waiters) w.resolve();
    });
    client.on('error', (err: Error & { level?: string }) => {
      // The first error is the cause; ssh2 may add "connection lost" ones while tearing down.
      lastClientError ??= err;
      this.logger.debug('client error', { level: err.level, message: err.message });
    });
    client.on('close', () => {
      markClosed();
      if (this.client === client) this.client = null;
      if (gen !== this.generation) return;
      if (ready) {
        const err = new AppError(SshErrorCode.DISCONNECTED, `${this.label}: the SSH connection was lost${lastClientError ? ` (${lastClientError.message})` : ''}`, {
          retryable: true,
          cause: lastClientError ?? undefined,
        });
        this.scheduleRetry(err);
        return;
      }
      this.fail(this.classifyFailure(verdict, lastClientError, tried));
    });

    const config: ConnectConfig = {
      host: ssh.host,
      port: ssh.port,
      username: ssh.user,
      readyTimeout: this.options.readyTimeoutMs ?? 15_000,
      keepaliveInterval: ssh.keepaliveIntervalMs ?? 5_000,
      keepaliveCountMax: this.options.keepaliveCountMax ?? 3,
      algorithms: { serverHostKey: hostKeyOrder as NonNullable<ConnectConfig['algorithms']>['serverHostKey'] },
      hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
        let v = knownHosts.check(ssh.host, ssh.port, key);
        if (v.status === 'unknown' && this.trusted.has(v.fingerprint)) v = { status: 'trusted', fingerprint: v.fingerprint };
        verdict = v;
        this._fingerprint = v.fingerprint;
        verify(v.status === 'trusted');
      },
      authHandler: (_left, _partial, next) => {
        const method = methods[tried.length];
        if (!method) {
          next(false as never);
          return;
        }
        tried.push(method);
        next(method);
      },
    };
    if (privateKey) config.privateKey = privateKey;
    if (agentSock) config.agent = agentSock;

    try {
      client.connect(config);
    } catch (err) {
      // ssh2 throws synchronously on bad config; the socket never opened.
      this.client = null;
      markClosed();
      this.fail(new AppError(SshErrorCode.CONNECT_FAILED, `could not start SSH: ${(err as Error).message}`, { cause: err }));
    }
  }

  private classifyFailure(
    verdict: HostKeyVerdict | null,
    err: (Error & { level?: string; code?: string }) | null,
    tried: string[],
  ): AppError {
    const where = this.address;
    if (verdict && verdict.status === 'unknown') {
      return new AppError(SshErrorCode.HOST_KEY_UNKNOWN, `${where}: host key ${verdict.fingerprint} is not known; confirm it to connect`, {
        details: { fingerprint: verdict.fingerprint },
      });
    }
    if (verdict && verdict.status === 'changed') {
      return new AppError(
        SshErrorCode.HOST_KEY_CHANGED,
        `${where}: HOST KEY CHANGED — presented ${verdict.fingerprint}, known ${verdict.knownFingerprints.join(', ')}. Refusing to connect.`,
        { details: { fingerprint: verdict.fingerprint, knownFingerprints: verdict.knownFingerprints } },
      );
    }
    if (verdict && verdict.status === 'revoked') {
      return new AppError(SshErrorCode.HOST_KEY_REVOKED, `${where}: host key ${verdict.fingerprint} is marked @revoked`, {
        details: { fingerprint: verdict.fingerprint },
      });
    }
    const level = err?.level;
    if (level === 'client-authentication') {
      const names = tried.map((m) => (m === 'publickey' ? `publickey (${this.target.ssh.identityFile})` : 'ssh-agent'));
      return new AppError(SshErrorCode.AUTH_FAILED, `${where}: authentication failed; tried ${names.join(', ') || 'nothing'}`, {
        details: { methodsTried: tried },
        cause: err,
      });
    }
    if (level === 'client-timeout') {
      return new AppError(SshErrorCode.TIMEOUT, `${where}: no SSH handshake within ${this.options.readyTimeoutMs ?? 15_000} ms`, {
        retryable: true,
        cause: err,
      });
    }
    const code = err?.code;
    return new AppError(SshErrorCode.CONNECT_FAILED, `${where}: ${code ? `${code} ` : ''}${err?.message ?? 'connection closed during handshake'}`, {
      retryable: true,
      details: code ? { errno: code } : {},
      cause: err ?? undefined,
    });
  }

  private fail(err: AppError): void {
    this.settleAttempt(err);
    if (err.retryable) {
      this.scheduleRetry(err);
      return;
    }
    const state: SshConnectionState = err.code === SshErrorCode.HOST_KEY_UNKNOWN ? 'awaiting-trust' : 'failed';
    this.rejectConnectedWaiters(err);
    this.setState({ state, error: err });
  }

  private scheduleRetry(err: AppError): void {
    const delay = backoffDelayMs(this.retryAttempt++, this.options.backoff ?? {});
    const nextRetryAt = this.clock.now() + delay;
    const gen = this.generation;
    void this.retryTimer?.dispose();
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = null;
      if (gen !== this.generation || this.disposed) return;
      fireAndForget(this.attempt('reconnecting'), this.logger, 'ssh reconnect attempt');
    }, delay);
    this.setState({ state: 'reconnecting', error: err, nextRetryAt });
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = null;
    const closed = this.clientClosed;
    try {
      client.end();
    } catch {
      // already gone
    }
    // Real time on purpose: the socket is real whatever clock drives the session logic.
    let timer: Disposable | undefined;
    const forced = new Promise<void>((resolve) => {
      timer = systemClock.setTimeout(() => {
        client.destroy();
        resolve();
      }, 1_000);
    });
    await Promise.race([closed, forced]);
    await timer?.dispose();
  }
}
