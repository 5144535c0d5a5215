import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { pipeline, type Duplex } from 'node:stream';
import { AppError, silentLogger, type Disposable, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';

/** Opens one channel to the far side; SshConnection.forwardOut fits (it waits for reconnects). */
export interface ForwardChannelOpener {
  forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<Duplex>;
}

export interface LocalForwardOptions {
  /** 0 or undefined: any free port. */
  localPort?: number;
  remoteHost: string;
  remotePort: number;
  logger?: Logger;
}

/**
 * `ssh -L` in-process: a listener on 127.0.0.1 only, each accepted socket piped
 * both ways (with backpressure) through its own direct-tcpip channel. The
 * listener outlives SSH reconnects; a socket accepted while SSH is down waits
 * as long as the opener does, then is closed.
 */
export class LocalForward implements Disposable {
  private readonly server: Server;
  private readonly streams = new Set<{ socket: Socket; channel?: Duplex }>();
  private readonly logger: Logger;
  private _localPort = 0;
  private closed = false;
  /** Streams opened since start and failures, for diagnostics. */
  private _opened = 0;
  private _failed = 0;
  private _lastError: AppError | null = null;

  private constructor(
    private readonly opener: ForwardChannelOpener,
    private readonly options: LocalForwardOptions,
  ) {
    this.logger = (options.logger ?? silentLogger).child(`forward:${options.remoteHost}:${options.remotePort}`);
    this.server = createServer({ pauseOnConnect: true }, (socket) => this.accept(socket));
  }

  static async open(opener: ForwardChannelOpener, options: LocalForwardOptions): Promise<LocalForward> {
    const forward = new LocalForward(opener, options);
    await forward.listen();
    return forward;
  }

  get localPort(): number {
    return this._localPort;
  }
  get url(): string {
    return `http://127.0.0.1:${this._localPort}`;
  }
  get activeStreams(): number {
    return this.streams.size;
  }
  get listening(): boolean {
    return this.server.listening;
  }
  get stats(): { opened: number; failed: number; lastError: AppError | null } {
    return { opened: this._opened, failed: this._failed, lastError: this._lastError };
  }

  private listen(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(
          new AppError(SshErrorCode.FORWARD_LISTEN_FAILED, `cannot listen on 127.0.0.1:${this.options.localPort ?? 0} (${err.code ?? err.message})`, {
            details: { localPort: this.options.localPort ?? 0, errno: err.code },
            cause: err,
          }),
        );
      };
      this.server.once('error', onError);
      this.server.listen({ host: '127.0.0.1', port: this.options.localPort ?? 0, exclusive: true }, () => {
        this.server.off('error', onError);
        this.server.on('error', (err) => this.logger.warn('listener error', { message: err.message }));
        this._localPort = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    const entry: { socket: Socket; channel?: Duplex } = { socket };
    this.streams.add(entry);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (!entry.channel) this.streams.delete(entry);
    });
    this.opener.forwardOut('127.0.0.1', socket.remotePort ?? 0, this.options.remoteHost, this.options.remotePort).then(
      (channel) => {
        if (this.closed || socket.destroyed) {
          channel.destroy();
          this.streams.delete(entry);
          socket.destroy();
          return;
        }
        entry.channel = channel;
        this._opened++;
        // socket → channel → socket; either side ending or failing tears down both.
        pipeline(socket, channel, socket, (err) => {
          this.streams.delete(entry);
          if (err && (err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
            this.logger.debug('stream ended with error', { message: err.message });
          }
          socket.destroy();
          channel.destroy();
        });
        socket.resume();
      },
      (err: unknown) => {
        this._failed++;
        this._lastError = err instanceof AppError ? err : new AppError(SshErrorCode.FORWARD_FAILED, String(err));
        this.logger.debug('channel open failed', { message: this._lastError.message });
        this.streams.delete(entry);
        socket.destroy();
      },
    );
  }

  /** Stops listening and closes every open stream at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const serverClosed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const { socket, channel } of this.streams) {
      channel?.destroy();
      socket.destroy();
    }
    this.streams.clear();
    await serverClosed;
  }

  dispose(): Promise<void> {
    return this.close();
  }
}
