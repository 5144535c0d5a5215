import type { Client, ClientChannel } from 'ssh2';
import { AppError, toAppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { execOnClient, streamOnClient, type ExecOptions, type ExecResult } from './exec.js';
import type { ExecStream, ExecStreamOptions } from './exec-stream.js';
import { openForwardChannel } from './forward-channel.js';
import { endClients, openLink, watchLink, type Link, type LinkContext } from './link.js';
import type { SshConnectionOptions, SshHostTarget, SshSession, SshTransportInfo } from './session.js';
import { SessionCore } from './session-core.js';

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
 * The builtin transport: one SSH session per host over ssh2 (optionally
 * through one jump host). Host-key trust is decided in the handshake, before
 * any credential is offered. How a link opens, is watched and is dropped is
 * here; the states, retries and trust decisions are SessionCore's.
 */
export class SshConnection extends SessionCore implements SshSession {
  /** Epoch ms of the last byte received on the connected link. */
  private lastInboundAt: number | null = null;
  private client: Client | null = null;
  private jumpClient: Client | null = null;
  /** Clients of the attempt in flight (so disconnect() can cut a handshake short). */
  private readonly handshaking = new Set<Client>();
  private closedPromises: Promise<void>[] = [];

  constructor(target: SshHostTarget, options: SshConnectionOptions = {}) {
    super(target, options, 'ssh');
  }

  get hasLiveClient(): boolean {
    return this.client !== null || this.jumpClient !== null || this.handshaking.size > 0;
  }
  get transport(): SshTransportInfo {
    return { kind: 'builtin', why: this.options.transportWhy ?? 'builtin', client: 'ssh2', effective: null, commands: 'a channel each on the one SSH connection' };
  }
  get address(): string {
    return `${this.target.ssh.user}@${this.target.ssh.host}:${this.target.ssh.port}`;
  }

  silentForMs(): number | null {
    if (this._state !== 'connected' || this.lastInboundAt === null) return null;
    return Math.max(0, this.clock.now() - this.lastInboundAt);
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const client = this.requireClient();
    return execOnClient(client, command, this.clock, options);
  }

  /** A channel of its own on the one connection; see SshSession.execStream. */
  execStream(command: string, options: ExecStreamOptions = {}): ExecStream {
    return streamOnClient(this.requireClient(), command, options);
  }

  /** Opens a direct-tcpip channel, waiting a bounded time for a reconnect if needed. */
  async forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<ClientChannel> {
    await this.whenConnected(this.options.waitForConnectionMs ?? 5_000);
    const client = this.requireClient();
    return openForwardChannel(client, this.clock, srcIp, srcPort, dstHost, dstPort, this.options.channelOpenTimeoutMs ?? 10_000);
  }

  // --- internals -----------------------------------------------------------

  private requireClient(): Client {
    if (this._state !== 'connected' || !this.client) throw this.notConnected();
    return this.client;
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

  protected async attempt(state: 'connecting' | 'reconnecting', reason?: AppError): Promise<void> {
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
    this.becameConnected();
  }

  protected async dropLink(): Promise<void> {
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
