// A tunnel's private end (a Unix socket in the console's own folder) held by
// OpenSSH while the link is up: the ControlMaster listens on the path
// (`-O forward -L <path>:host:port`), so request bytes of the console's own
// callers never pass through the console's event loop and cost what `ssh -L`
// costs. While the link is down the console holds the same path itself (a
// LocalForward over the session's forwardOut), so a request then waits for the
// reconnect or is answered 503 with Retry-After, as on the builtin transport;
// on reconnect the path goes back to the master.
import { AppError, silentLogger, type Disposable, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { LocalForward, type ForwardChannelOpener, type LocalForwardOptions } from './local-forward.js';
import type { SshConnectionState, SshStateChange } from './session.js';

/** What a session must offer for its master to own a tunnel's socket. */
export interface MasterListener extends ForwardChannelOpener {
  readonly state: SshConnectionState;
  onDidChangeState(listener: (change: SshStateChange) => void): Disposable;
  /** `ssh -O forward -L <socketPath>:dstHost:dstPort` on the current master. */
  masterListen(socketPath: string, dstHost: string, dstPort: number): Promise<void>;
  /** `ssh -O cancel` of the same; the master may already be gone. */
  masterUnlisten(socketPath: string, dstHost: string, dstPort: number): Promise<void>;
}

export function canMasterListen(session: object): session is MasterListener {
  return typeof (session as Partial<MasterListener>).masterListen === 'function';
}

/** How long a socket held by a dying master may take to be free again. */
const REBIND_TRIES = 30;
const REBIND_WAIT_MS = 100;

export type MasterForwardOptions = LocalForwardOptions & { socketPath: string };

export class MasterForward {
  private fallback: LocalForward | null = null;
  /** Console listeners that handed the socket over; their accepted connections run to their end. */
  private retired: LocalForward[] = [];
  private onMaster = false;
  private readonly path: string;
  private closed = false;
  private chain: Promise<void> = Promise.resolve();
  private subscription: Disposable | null = null;
  private readonly logger: Logger;
  private handovers = 0;

  private constructor(
    private readonly session: MasterListener,
    private readonly options: MasterForwardOptions,
  ) {
    this.path = options.socketPath;
    this.logger = (options.logger ?? silentLogger).child(`master-forward:${options.remoteHost}:${options.remotePort}`);
  }

  static async open(session: MasterListener, options: MasterForwardOptions): Promise<MasterForward> {
    const f = new MasterForward(session, options);
    // The console binds first and holds the socket until the master takes it.
    f.fallback = await LocalForward.open(session, options);
    f.subscription = session.onDidChangeState((c) => f.follow(c.state));
    if (session.state === 'connected') await f.enqueue(() => f.toMaster());
    return f;
  }

  get socketPath(): string {
    return this.path;
  }
  /** Streams through the console's own listeners (the master's are not counted: ssh holds them). */
  get activeStreams(): number {
    return (this.fallback?.activeStreams ?? 0) + this.retired.reduce((n, f) => n + f.activeStreams, 0);
  }
  get listening(): boolean {
    return this.onMaster || (this.fallback?.listening ?? false);
  }
  /** True while OpenSSH's master holds the socket. */
  get onMasterListener(): boolean {
    return this.onMaster;
  }
  get stats(): { opened: number; failed: number; lastError: AppError | null; handovers: number } {
    const all = [...(this.fallback ? [this.fallback] : []), ...this.retired];
    return {
      opened: all.reduce((n, f) => n + f.stats.opened, 0),
      failed: all.reduce((n, f) => n + f.stats.failed, 0),
      lastError: all.map((f) => f.stats.lastError).find((e) => e !== null) ?? null,
      handovers: this.handovers,
    };
  }

  abortStreams(err: AppError): number {
    return (this.fallback?.abortStreams(err) ?? 0) + this.retired.reduce((n, f) => n + f.abortStreams(err), 0);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    void this.subscription?.dispose();
    await this.chain.catch(() => undefined);
    if (this.onMaster) await this.session.masterUnlisten(this.path, this.options.remoteHost, this.options.remotePort).catch(() => undefined);
    this.onMaster = false;
    await Promise.all([this.fallback?.close(), ...this.retired.map((f) => f.close())]);
    this.fallback = null;
    this.retired = [];
  }

  dispose(): Promise<void> {
    return this.close();
  }

  private follow(state: SshConnectionState): void {
    if (this.closed) return;
    if (state === 'connected') void this.enqueue(() => this.toMaster());
    else void this.enqueue(() => this.toConsole());
  }

  /** One handover at a time, in the order the states came. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(step, step).catch((err: unknown) => this.logger.warn('tunnel handover failed', { message: (err as Error).message }));
    return this.chain;
  }

  private async toMaster(): Promise<void> {
    if (this.closed || this.onMaster || this.session.state !== 'connected') return;
    const fb = this.fallback;
    if (fb) {
      await fb.stopAccepting();
      this.fallback = null;
      this.retired.push(fb);
    }
    try {
      await this.session.masterListen(this.path, this.options.remoteHost, this.options.remotePort);
      this.onMaster = true;
      this.handovers++;
    } catch (err) {
      // The socket could not move (the master went meanwhile): the console keeps serving it.
      this.logger.warn('master did not take the tunnel socket; the console keeps it', { message: (err as Error).message });
      await this.rebind();
    }
    // Listeners with nothing left open are done.
    const idle = this.retired.filter((f) => f.openConnections === 0);
    this.retired = this.retired.filter((f) => f.openConnections > 0);
    await Promise.all(idle.map((f) => f.close()));
  }

  private async toConsole(): Promise<void> {
    if (this.closed || this.fallback) return;
    // A master that is gone took its listener with it; one still alive (reconnecting on a dead link) gives it back.
    if (this.onMaster) await this.session.masterUnlisten(this.path, this.options.remoteHost, this.options.remotePort).catch(() => undefined);
    this.onMaster = false;
    await this.rebind();
  }

  /** The console takes the socket back; a file a dead master left there is reclaimed by LocalForward. */
  private async rebind(): Promise<void> {
    let last: unknown = null;
    for (let i = 0; i < REBIND_TRIES && !this.closed; i++) {
      try {
        this.fallback = await LocalForward.open(this.session, this.options);
        return;
      } catch (err) {
        last = err;
        await new Promise((r) => setTimeout(r, REBIND_WAIT_MS));
      }
    }
    if (!this.closed) {
      throw new AppError(SshErrorCode.FORWARD_LISTEN_FAILED, `cannot listen on ${this.path} again after the master let it go: ${(last as Error | null)?.message ?? 'unknown'}`, {
        details: { socketPath: this.path },
      });
    }
  }
}
