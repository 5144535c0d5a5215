// One tunnel as the fleet holds it: a private end (a Unix socket in the
// console's 0700 folder, which the service's UpstreamClient is bound to) and a
// public gate on 127.0.0.1 for operators and their apps.
// On the openssh transport the master holds the private socket while the link
// is up; on the builtin one the console does.
import type { AppError } from '../base/index.js';
import { LocalForward, type ForwardChannelOpener, type LocalForwardOptions } from './local-forward.js';
import { MasterForward, canMasterListen, type MasterListener } from './master-forward.js';
import { TunnelGate } from './tunnel-gate.js';
import type { TunnelListener } from './tunnel-listener.js';
import type { TunnelSockets } from './tunnel-sockets.js';

export interface GatedTunnelOptions extends Omit<LocalForwardOptions, 'socketPath' | 'reclaimStale'> {
  /** Where the private socket goes. */
  sockets: TunnelSockets;
}

type PrivateEnd = Pick<LocalForward, 'activeStreams' | 'listening' | 'stats' | 'abortStreams' | 'close'>;

export class GatedTunnel implements TunnelListener {
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly inner: PrivateEnd,
    private readonly gate: TunnelGate,
    private readonly socketPath: string,
    private readonly sockets: TunnelSockets,
  ) {}

  static async open(session: ForwardChannelOpener | MasterListener, options: GatedTunnelOptions): Promise<GatedTunnel> {
    const { sockets, localPort, ...rest } = options;
    const socketPath = sockets.allocate();
    const privateOptions = { ...rest, socketPath, reclaimStale: (p: string) => sockets.reclaimStale(p) };
    const inner: PrivateEnd = canMasterListen(session) ? await MasterForward.open(session, privateOptions) : await LocalForward.open(session, privateOptions);
    let gate: TunnelGate;
    try {
      gate = await TunnelGate.open({ localPort, socketPath, retryAfterS: options.retryAfterS, logger: options.logger });
    } catch (err) {
      await inner.close();
      sockets.remove(socketPath);
      throw err;
    }
    return new GatedTunnel(inner, gate, socketPath, sockets);
  }

  get localPort(): number {
    return this.gate.localPort;
  }
  get url(): string {
    return this.gate.url;
  }
  get privateSocketPath(): string {
    return this.socketPath;
  }
  get activeStreams(): number {
    return this.inner.activeStreams;
  }
  get listening(): boolean {
    return this.gate.listening && this.inner.listening;
  }
  get stats(): { opened: number; failed: number; lastError: AppError | null; refused: number } {
    return { ...this.inner.stats, refused: this.gate.stats.refused };
  }
  /** What the public gate did: requests passed, refused, failed on the way to the private socket. */
  get gateStats(): { passed: number; refused: number; failed: number } {
    return this.gate.stats;
  }

  abortStreams(err: AppError): number {
    return this.inner.abortStreams(err);
  }

  /** The public port first (no new requests), then the private end; its socket file goes last. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.gate.close();
      await this.inner.close();
      this.sockets.remove(this.socketPath);
    })();
    return this.closing;
  }

  dispose(): Promise<void> {
    return this.close();
  }
}
