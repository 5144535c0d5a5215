import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
import type { AnyAuthMethod, Client, ClientChannel, ConnectConfig, ParsedKey } from 'ssh2';
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
import { tcpDialer, type Dialer } from './dialer.js';
import { SshErrorCode } from './errors.js';
import { execOnClient, type ExecOptions, type ExecResult } from './exec.js';
import { isSha256Fingerprint } from './fingerprint.js';
import { parseJumpHost } from './jump.js';
import { KnownHosts, knownHostsName, type HostKeyVerdict } from './known-hosts.js';
import { loadKeyFile } from './keys.js';
import { MemoryPassphraseCache, type PassphraseProvider } from './passphrases.js';
import { MemoryTrustStore, type HostKeyTrustStore } from './trust-store.js';

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

/** A host key the session saw and could not accept on its own. */
export interface HostKeyProblem {
  status: 'unknown' | 'changed' | 'revoked';
  /** The hop that presented it: the host itself or its jump host. */
  role: 'host' | 'jump';
  /** known_hosts name: `host` or `[host]:port`. */
  endpoint: string;
  keyType: string;
  fingerprint: string;
  /** For `changed`: what known_hosts or the console's trust store holds. */
  knownFingerprints: string[];
  knownSource: 'known_hosts' | 'console' | null;
}

/** Shared services the sessions of one app read at each attempt (so the app may install them after building the fleet). */
export interface SshServices {
  trustStore: HostKeyTrustStore;
  passphrases: PassphraseProvider;
  dialer: Dialer;
}

export function defaultSshServices(): SshServices {
  return { trustStore: new MemoryTrustStore(), passphrases: new MemoryPassphraseCache(), dialer: tcpDialer() };
}

export interface SshConnectionOptions {
  clock?: Clock;
  logger?: Logger;
  /** Home folder for the default `~/.ssh/known_hosts`. */
  homeDir?: string;
  /** Where `SSH_AUTH_SOCK` is read from (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  clientFactory?: SshClientFactory;
  /** Trust store, passphrases and dialer; read at every attempt. Default: in-memory ones and a TCP dialer on system DNS. */
  services?: Partial<SshServices>;
  /** Handshake + authentication deadline (per hop). Default 15 s. */
  readyTimeoutMs?: number;
  /** Unanswered keepalives before the link counts as lost. Default 2 (loss seen within about 3 intervals). */
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
  /** The unknown/changed key the session stopped on, if any. */
  readonly hostKeyProblem?: HostKeyProblem | null;
  /** True while an ssh2 client (socket) exists: for leak checks. */
  readonly hasLiveClient: boolean;
  readonly onDidChangeState: Emitter<SshStateChange>['on'];
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** Drops the current link (if any) and tries at once, backoff reset. */
  reconnectNow?(): Promise<void>;
  trustFingerprint(fingerprint: string, actor?: string): Promise<void>;
  /** The operator refused the key the session is waiting on: stop, and say so. */
  refuseTrust?(fingerprint: string): Promise<void>;
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

interface Credentials {
  key: ParsedKey | null;
  keyFile: string | null;
  /** Why the key file was not offered (agent used instead). */
  keySkipped: AppError | null;
  agentSock: string | null;
}

interface Hop {
  role: 'host' | 'jump';
  host: string;
  port: number;
  user: string;
}

type ClientError = Error & { level?: string; code?: string };

function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + Math.min(len, 64)).toString('latin1');
}

/**
 * One SSH session per host over ssh2 (optionally through one jump host).
 * Host-key trust is decided in the handshake, before any credential is
 * offered; unknown and changed keys stop and wait for the operator, only
 * network trouble is retried, with backoff and jitter.
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
  private _fingerprint: string | null = null;
  private _problem: HostKeyProblem | null = null;
  private client: Client | null = null;
  private jumpClient: Client | null = null;
  /** Clients of the attempt in flight (so disconnect() can cut a handshake short). */
  private readonly handshaking = new Set<Client>();
  private closedPromises: Promise<void>[] = [];
  /** Bumped on every attempt and on disconnect, so late events of an old client are ignored. */
  private generation = 0;
  private retryAttempt = 0;
  private retryTimer: Disposable | null = null;
  private attemptWaiters: Waiter[] = [];
  private connectedWaiters = new Set<Waiter>();
  private disposed = false;

  constructor(target: SshHostTarget, options: SshConnectionOptions = {}) {
    this.target = target;
    this.label = target.label;
    this.options = options;
    this.services = options.services ?? {};
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
  get hostKeyProblem(): HostKeyProblem | null {
    return this._problem;
  }
  get hasLiveClient(): boolean {
    return this.client !== null || this.jumpClient !== null || this.handshaking.size > 0;
  }
  get address(): string {
    return `${this.target.ssh.user}@${this.target.ssh.host}:${this.target.ssh.port}`;
  }

  private get trustStore(): HostKeyTrustStore {
    return this.services.trustStore ?? this.fallback.trustStore;
  }
  private get passphrases(): PassphraseProvider {
    return this.services.passphrases ?? this.fallback.passphrases;
  }
  private get dialer(): Dialer {
    return this.services.dialer ?? this.fallback.dialer;
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

  /** "Reconnect now": whatever the state, drop the link or the pending retry and try at once. */
  async reconnectNow(): Promise<void> {
    if (this.disposed) throw new AppError(SshErrorCode.CANCELLED, 'the session is disposed');
    if (this._state === 'connected' || this._state === 'connecting' || this._state === 'reconnecting') {
      this.generation++;
      void this.retryTimer?.dispose();
      this.retryTimer = null;
      this.retryAttempt = 0;
      await this.dropClients();
      const settled = new Promise<void>((resolve, reject) => this.attemptWaiters.push({ resolve, reject }));
      fireAndForget(this.attempt('reconnecting'), this.logger, 'ssh reconnect-now attempt');
      return settled;
    }
    return this.connect();
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
    if (!isSha256Fingerprint(fingerprint)) {
      throw new AppError(SshErrorCode.INVALID_FINGERPRINT, `not a SHA256 fingerprint: ${fingerprint}`);
    }
    const problem = this._problem;
    if (problem && problem.status !== 'unknown') {
      throw new AppError(
        SshErrorCode.HOST_KEY_CHANGED,
        `${problem.endpoint}: the host key is ${problem.status}; it cannot be trusted from the console (known: ${problem.knownFingerprints.join(', ') || 'revoked'})`,
        { details: { ...problem } },
      );
    }
    if (problem && problem.fingerprint !== fingerprint) {
      throw new AppError(
        SshErrorCode.FINGERPRINT_MISMATCH,
        `${problem.endpoint} presented ${problem.fingerprint}, not ${fingerprint}; nothing was trusted`,
        { details: { presented: problem.fingerprint, given: fingerprint } },
      );
    }
    const endpoint = problem?.endpoint ?? knownHostsName(this.target.ssh.host, this.target.ssh.port);
    this.trustStore.add({
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
    const problem = this._problem;
    if (!problem || this._state !== 'awaiting-trust') {
      throw new AppError(SshErrorCode.NOTHING_TO_TRUST, `${this.label} is not waiting for a host-key decision (state ${this._state})`);
    }
    if (problem.fingerprint !== fingerprint) {
      throw new AppError(SshErrorCode.FINGERPRINT_MISMATCH, `${problem.endpoint} presented ${problem.fingerprint}, not ${fingerprint}`, {
        details: { presented: problem.fingerprint, given: fingerprint },
      });
    }
    this._problem = null;
    this.setState({
      state: 'failed',
      error: new AppError(SshErrorCode.TRUST_REFUSED, `${problem.endpoint}: the operator refused host key ${fingerprint}`, {
        details: { endpoint: problem.endpoint, fingerprint },
      }),
    });
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const client = this.requireClient();
    return execOnClient(client, command, this.clock, options);
  }

  /** Opens a direct-tcpip channel, waiting a bounded time for a reconnect if needed. */
  async forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<ClientChannel> {
    await this.whenConnected(this.options.waitForConnectionMs ?? 5_000);
    const client = this.requireClient();
    return this.openChannel(client, srcIp, srcPort, dstHost, dstPort, this.options.channelOpenTimeoutMs ?? 10_000);
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
          new AppError(SshErrorCode.NOT_CONNECTED, `${this.label}: SSH did not come back within ${timeoutMs} ms (${this._lastError?.message ?? this._state})`, {
            retryable: true,
            details: { timeoutMs, state: this._state },
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

  /** Reads the key (with a passphrase the operator gave earlier) and the agent socket; no network yet. */
  private async credentials(): Promise<Credentials> {
    const { ssh } = this.target;
    const agentSock = ssh.agent ? (this.options.env ?? process.env)['SSH_AUTH_SOCK'] || null : null;
    const creds: Credentials = { key: null, keyFile: ssh.identityFile ?? null, keySkipped: null, agentSock };
    if (ssh.identityFile) {
      const passphrase = this.passphrases.get(ssh.identityFile);
      try {
        creds.key = (await loadKeyFile(ssh.identityFile, passphrase)).key;
      } catch (err) {
        const e = toAppError(err, SshErrorCode.KEY_UNREADABLE);
        if (e.code === SshErrorCode.PASSPHRASE_INCORRECT) this.passphrases.forget(ssh.identityFile);
        const passphraseProblem = e.code === SshErrorCode.PASSPHRASE_REQUIRED || e.code === SshErrorCode.PASSPHRASE_INCORRECT;
        if (!(passphraseProblem && agentSock)) throw e;
        creds.keySkipped = e;
      }
    }
    if (!creds.key && !agentSock) {
      throw new AppError(
        SshErrorCode.NO_AUTH_METHOD,
        ssh.agent ? 'ssh-agent requested but SSH_AUTH_SOCK is not set, and no identityFile is configured' : 'no identityFile and no agent configured',
        { details: { methodsTried: [] } },
      );
    }
    return creds;
  }

  private async attempt(state: 'connecting' | 'reconnecting'): Promise<void> {
    const gen = ++this.generation;
    this.setState({ state });
    const { ssh } = this.target;
    try {
      const jump = ssh.jumpHost ? parseJumpHost(ssh.jumpHost) : null;
      const knownHosts = await this.loadKnownHosts();
      const creds = await this.credentials();
      if (gen !== this.generation) return;
      const readyTimeoutMs = this.options.readyTimeoutMs ?? 15_000;

      let jumpClient: Client | null = null;
      let sock: Duplex;
      if (jump) {
        const hop: Hop = { role: 'jump', host: jump.host, port: jump.port, user: jump.user ?? ssh.user };
        const jsock = await this.dial(hop, readyTimeoutMs);
        jumpClient = await this.handshake(hop, jsock, knownHosts, creds, gen);
        try {
          sock = await this.openChannel(jumpClient, '127.0.0.1', 0, ssh.host, ssh.port, readyTimeoutMs);
        } catch (err) {
          jumpClient.end();
          const e = toAppError(err);
          throw new AppError(SshErrorCode.JUMP_FAILED, `jump host ${hop.user}@${hop.host}:${hop.port} could not reach ${ssh.host}:${ssh.port}: ${e.message}`, {
            retryable: true,
            details: { jumpHost: ssh.jumpHost, host: ssh.host, port: ssh.port },
            cause: err,
          });
        }
      } else {
        sock = await this.dial({ role: 'host', host: ssh.host, port: ssh.port, user: ssh.user }, readyTimeoutMs);
      }
      if (gen !== this.generation) {
        sock.destroy();
        jumpClient?.end();
        return;
      }
      const client = await this.handshake({ role: 'host', host: ssh.host, port: ssh.port, user: ssh.user }, sock, knownHosts, creds, gen).catch(
        (err: unknown) => {
          jumpClient?.end();
          throw err;
        },
      );
      if (gen !== this.generation) {
        client.end();
        jumpClient?.end();
        return;
      }
      this.adopt(client, jumpClient, gen);
    } catch (err) {
      if (gen !== this.generation) return;
      this.fail(toAppError(err, SshErrorCode.CONNECT_FAILED));
    }
  }

  private async dial(hop: Hop, timeoutMs: number): Promise<Duplex> {
    try {
      return await this.dialer(hop.host, hop.port, { timeoutMs });
    } catch (err) {
      const e = toAppError(err, SshErrorCode.CONNECT_FAILED);
      if (hop.role === 'host') throw e;
      throw new AppError(e.code, `jump host ${hop.host}:${hop.port}: ${e.message}`, { retryable: e.retryable, details: { ...e.details, role: 'jump' }, cause: e });
    }
  }

  /** The link is up: watch it, and on loss schedule a reconnect. */
  private adopt(client: Client, jumpClient: Client | null, gen: number): void {
    this.client = client;
    this.jumpClient = jumpClient;
    let lastError: ClientError | null = null;
    client.on('error', (err: ClientError) => {
      lastError ??= err;
      this.logger.debug('client error', { level: err.level, message: err.message });
    });
    const lost = (): void => {
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
    };
    this.closedPromises.push(new Promise<void>((resolve) => client.once('close', () => resolve())));
    client.once('close', lost);
    if (jumpClient) {
      jumpClient.on('error', (err: ClientError) => (lastError ??= err));
      this.closedPromises.push(new Promise<void>((resolve) => jumpClient.once('close', () => resolve())));
      jumpClient.once('close', lost);
    }
    this.retryAttempt = 0;
    this._problem = null;
    this.setState({ state: 'connected' });
    this.settleAttempt(null);
    const waiters = [...this.connectedWaiters];
    this.connectedWaiters.clear();
    for (const w of waiters) w.resolve();
  }

  /** One SSH handshake over `sock`: host key checked first, then (only if trusted) the credentials. */
  private handshake(hop: Hop, sock: Duplex, knownHosts: KnownHosts, creds: Credentials, gen: number): Promise<Client> {
    const client = (this.options.clientFactory ?? (() => new ssh2.Client()))();
    this.handshaking.add(client);
    const methods: Array<'publickey' | 'agent'> = [];
    if (creds.key) methods.push('publickey');
    if (creds.agentSock) methods.push('agent');
    const tried: string[] = [];
    let verdict: (HostKeyVerdict & { keyType: string }) | null = null;
    let firstError: ClientError | null = null;

    const knownTypes = [
      ...knownHosts.keyTypesFor(hop.host, hop.port),
      ...this.trustStore.lookup(knownHostsName(hop.host, hop.port)).map((t) => t.keyType),
    ];
    const preferred = knownTypes.flatMap((t) => HOST_KEY_ALGORITHMS[t] ?? []);
    const hostKeyOrder = [...new Set([...preferred, ...DEFAULT_HOST_KEY_ORDER])];

    return new Promise<Client>((resolve, reject) => {
      let ready = false;
      client.on('ready', () => {
        ready = true;
        this.handshaking.delete(client);
        if (hop.role === 'host' && verdict) this._fingerprint = verdict.fingerprint;
        resolve(client);
      });
      client.on('error', (err: ClientError) => {
        // The first error is the cause; ssh2 may add "connection lost" ones while tearing down.
        firstError ??= err;
        this.logger.debug('handshake error', { role: hop.role, level: err.level, message: err.message });
      });
      client.once('close', () => {
        this.handshaking.delete(client);
        if (ready) return;
        reject(this.classifyFailure(hop, verdict, firstError, tried, creds));
      });

      const config: ConnectConfig = {
        sock,
        host: hop.host,
        port: hop.port,
        username: hop.user,
        readyTimeout: this.options.readyTimeoutMs ?? 15_000,
        keepaliveInterval: this.target.ssh.keepaliveIntervalMs ?? 5_000,
        keepaliveCountMax: this.options.keepaliveCountMax ?? 2,
        algorithms: { serverHostKey: hostKeyOrder as NonNullable<ConnectConfig['algorithms']>['serverHostKey'] },
        hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
          verdict = { ...this.judgeHostKey(knownHosts, hop, key), keyType: keyTypeOf(key) };
          if (hop.role === 'host') this._fingerprint = verdict.fingerprint;
          verify(verdict.status === 'trusted' && gen === this.generation);
        },
        authHandler: (_left, _partial, next) => {
          const method = methods[tried.length];
          if (!method) {
            next(false as never);
            return;
          }
          tried.push(method);
          const auth: AnyAuthMethod =
            method === 'publickey'
              ? { type: 'publickey', username: hop.user, key: creds.key! }
              : { type: 'agent', username: hop.user, agent: creds.agentSock! };
          next(auth);
        },
      };
      try {
        client.connect(config);
      } catch (err) {
        // ssh2 throws synchronously on bad config; nothing was sent.
        this.handshaking.delete(client);
        sock.destroy();
        reject(new AppError(SshErrorCode.CONNECT_FAILED, `could not start SSH: ${(err as Error).message}`, { cause: err }));
      }
    });
  }

  /** known_hosts first (authoritative); then keys the operator confirmed in the console. */
  private judgeHostKey(knownHosts: KnownHosts, hop: Hop, key: Buffer): HostKeyVerdict & { source?: 'known_hosts' | 'console' } {
    const v = knownHosts.check(hop.host, hop.port, key);
    if (v.status !== 'unknown') return { ...v, source: 'known_hosts' };
    const stored = this.trustStore.lookup(knownHostsName(hop.host, hop.port));
    if (stored.length === 0) return v;
    if (stored.some((s) => s.fingerprint === v.fingerprint)) return { status: 'trusted', fingerprint: v.fingerprint };
    return { status: 'changed', fingerprint: v.fingerprint, knownFingerprints: [...new Set(stored.map((s) => s.fingerprint))], source: 'console' };
  }

  private openChannel(client: Client, srcIp: string, srcPort: number, dstHost: string, dstPort: number, openTimeoutMs: number): Promise<ClientChannel> {
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

  private classifyFailure(hop: Hop, verdict: (HostKeyVerdict & { keyType: string; source?: 'known_hosts' | 'console' }) | null, err: ClientError | null, tried: string[], creds: Credentials): AppError {
    const where = `${hop.role === 'jump' ? 'jump host ' : ''}${hop.user}@${hop.host}:${hop.port}`;
    const endpoint = knownHostsName(hop.host, hop.port);
    if (verdict && verdict.status !== 'trusted') {
      const known = verdict.status === 'changed' ? verdict.knownFingerprints : [];
      this._problem = {
        status: verdict.status,
        role: hop.role,
        endpoint,
        keyType: verdict.keyType,
        fingerprint: verdict.fingerprint,
        knownFingerprints: known,
        knownSource: verdict.source ?? null,
      };
      const details = { fingerprint: verdict.fingerprint, endpoint, role: hop.role, keyType: verdict.keyType };
      if (verdict.status === 'unknown') {
        return new AppError(SshErrorCode.HOST_KEY_UNKNOWN, `${where}: host key ${verdict.fingerprint} (${verdict.keyType}) is not known; confirm it to connect`, {
          details,
        });
      }
      if (verdict.status === 'changed') {
        return new AppError(
          SshErrorCode.HOST_KEY_CHANGED,
          `${where}: HOST KEY CHANGED — presented ${verdict.fingerprint}, ${verdict.source === 'console' ? 'confirmed earlier in the console' : 'known_hosts has'} ${known.join(', ')}. Refusing to connect; someone may be intercepting the connection, or the host was reinstalled.`,
          { details: { ...details, knownFingerprints: known, knownSource: verdict.source ?? 'known_hosts' } },
        );
      }
      return new AppError(SshErrorCode.HOST_KEY_REVOKED, `${where}: host key ${verdict.fingerprint} is marked @revoked`, { details });
    }
    const level = err?.level;
    if (level === 'client-authentication') {
      if (tried.length === 0 && creds.keySkipped) return creds.keySkipped;
      const names = tried.map((m) => (m === 'publickey' ? `publickey (${creds.keyFile})` : 'ssh-agent'));
      const skipped = creds.keySkipped ? `; key ${creds.keyFile} not offered: ${creds.keySkipped.code}` : '';
      return new AppError(SshErrorCode.AUTH_FAILED, `${where}: authentication failed; tried ${names.join(', ') || 'nothing'}${skipped}`, {
        details: { methodsTried: tried, role: hop.role, ...(creds.keySkipped ? { keySkipped: creds.keySkipped.code } : {}) },
        cause: err,
      });
    }
    if (level === 'client-timeout') {
      return new AppError(SshErrorCode.TIMEOUT, `${where}: no SSH handshake within ${this.options.readyTimeoutMs ?? 15_000} ms`, {
        retryable: true,
        details: { role: hop.role },
        cause: err,
      });
    }
    const code = err?.code;
    return new AppError(SshErrorCode.CONNECT_FAILED, `${where}: ${code ? `${code} ` : ''}${err?.message ?? 'connection closed during handshake'}`, {
      retryable: true,
      details: { role: hop.role, ...(code ? { errno: code } : {}) },
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

  private async dropClients(): Promise<void> {
    const clients = [this.client, this.jumpClient, ...this.handshaking].filter((c): c is Client => c !== null);
    this.client = null;
    this.jumpClient = null;
    this.handshaking.clear();
    if (clients.length === 0) return;
    const closed = Promise.all(this.closedPromises);
    this.closedPromises = [];
    for (const c of clients) {
      try {
        c.end();
      } catch {
        // already gone
      }
    }
    // Real time on purpose: the socket is real whatever clock drives the session logic.
    let timer: Disposable | undefined;
    const forced = new Promise<void>((resolve) => {
      timer = systemClock.setTimeout(() => {
        for (const c of clients) c.destroy();
        resolve();
      }, 1_000);
    });
    await Promise.race([closed, forced]);
    await timer?.dispose();
  }
}
