import { chmodSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError, silentLogger, type Disposable, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';

/** Opens one channel to the far side; SshConnection.forwardOut fits (it waits for reconnects). */
export interface ForwardChannelOpener {
  forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<Duplex>;
}

export interface LocalForwardOptions {
  /** 0 or undefined: any free port. Ignored with `socketPath`. */
  localPort?: number;
  /**
   * Listen on this Unix socket instead of 127.0.0.1 (a tunnel's private end; its folder keeps other
   * users out, the socket itself is made 0600 too).
   */
  socketPath?: string;
  /** A stale socket file at `socketPath` (nobody listening) is removed by this, then the bind is tried once more. */
  reclaimStale?: (path: string) => Promise<boolean>;
  remoteHost: string;
  remotePort: number;
  /**
   * The far side speaks HTTP: a stream that fails before the far side sent a
   * byte is answered with a 502/503 and a JSON error body naming the cause, so
   * curl and SDKs show why instead of "connection reset".
   */
  httpErrors?: boolean;
  /** Seconds a client should wait before retrying (sent as Retry-After with those errors); default 1. */
  retryAfterS?: () => number;
  logger?: Logger;
}

interface Stream {
  socket: Socket;
  channel?: Duplex;
  /** The far side has answered something: an error can no longer be written as an HTTP response. */
  answered: boolean;
}

/**
 * `ssh -L` in-process: a listener on 127.0.0.1 or on a Unix socket, each
 * accepted socket piped both ways (with backpressure) through its own
 * direct-tcpip channel. The listener outlives SSH reconnects; a socket
 * accepted while SSH is down waits as long as the opener does, then is closed
 * with a clear error.
 */
export class LocalForward implements Disposable {
  private readonly server: Server;
  private readonly streams = new Set<Stream>();
  /** Every accepted socket until it closes, including ones whose stream is done but whose client keeps the connection half-open. */
  private readonly sockets = new Set<Socket>();
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
    this.server = createServer({ pauseOnConnect: true, noDelay: true }, (socket) => this.accept(socket));
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
  /** The Unix socket it listens on; null when it listens on a port. */
  get socketPath(): string | null {
    return this.options.socketPath ?? null;
  }
  get activeStreams(): number {
    return this.streams.size;
  }
  get listening(): boolean {
    return this.server.listening;
  }
  /** Accepted connections still open (streaming, or idle keep-alive). */
  get openConnections(): number {
    return this.sockets.size;
  }
  get stats(): { opened: number; failed: number; lastError: AppError | null } {
    return { opened: this._opened, failed: this._failed, lastError: this._lastError };
  }

  private async listen(): Promise<void> {
    const path = this.options.socketPath;
    try {
      await this.bind();
    } catch (err) {
      const stale = path && (err as AppError).details?.['errno'] === 'EADDRINUSE' && (await this.options.reclaimStale?.(path));
      if (!stale) throw err;
      await this.bind();
    }
  }

  private bind(): Promise<void> {
    const path = this.options.socketPath;
    const where = path ?? `127.0.0.1:${this.options.localPort ?? 0}`;
    return new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(
          new AppError(SshErrorCode.FORWARD_LISTEN_FAILED, `cannot listen on ${where} (${err.code ?? err.message})`, {
            details: path ? { socketPath: path, errno: err.code } : { localPort: this.options.localPort ?? 0, errno: err.code },
            cause: err,
          }),
        );
      };
      this.server.once('error', onError);
      const onListening = (): void => {
        this.server.off('error', onError);
        this.server.on('error', (err) => this.logger.warn('listener error', { message: err.message }));
        // A named pipe (Windows) has an ACL, not a mode.
        if (path && process.platform !== 'win32') chmodSync(path, 0o600);
        else this._localPort = (this.server.address() as AddressInfo).port;
        resolve();
      };
      if (path) this.server.listen({ path, exclusive: true }, onListening);
      else this.server.listen({ host: '127.0.0.1', port: this.options.localPort ?? 0, exclusive: true }, onListening);
    });
  }

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    const entry: Stream = { socket, answered: false };
    this.streams.add(entry);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (!entry.channel) this.streams.delete(entry);
    });
    this.opener.forwardOut('127.0.0.1', socket.remotePort ?? 0, this.options.remoteHost, this.options.remotePort).then(
      (channel) => {
        if (this.closed || socket.destroyed || !this.streams.has(entry)) {
          channel.destroy();
          this.streams.delete(entry);
          socket.destroy();
          return;
        }
        entry.channel = channel;
        this._opened++;
        this.splice(entry, socket, channel);
      },
      (err: unknown) => {
        this._failed++;
        this._lastError = err instanceof AppError ? err : new AppError(SshErrorCode.FORWARD_FAILED, String(err));
        this.logger.debug('channel open failed', { message: this._lastError.message });
        this.streams.delete(entry);
        this.failStream(entry, this._lastError, 503);
      },
    );
  }

  /** socket ⇄ channel with backpressure (pipe pauses the faster side); either side failing tears down both. */
  private splice(entry: Stream, socket: Socket, channel: Duplex): void {
    socket.pipe(channel);
    channel.pipe(socket);
    channel.once('data', () => (entry.answered = true));
    let ended = false;
    channel.once('end', () => (ended = true));
    channel.on('error', (err: Error) => this.logger.debug('channel error', { message: err.message }));
    channel.once('close', () => {
      this.streams.delete(entry);
      if (ended) return; // pipe ends the socket once it has written everything
      if (!entry.answered && this.options.httpErrors) {
        this.failStream(entry, new AppError(SshErrorCode.DISCONNECTED, 'the tunnel closed before the model server answered'), 502);
      } else socket.destroy();
    });
    socket.once('close', () => {
      this.streams.delete(entry);
      channel.destroy();
    });
    socket.resume();
  }

  private failStream(entry: Stream, err: AppError, status: 502 | 503): void {
    const { socket } = entry;
    entry.channel?.destroy();
    if (socket.destroyed) return;
    if (!this.options.httpErrors || entry.answered || !socket.writable) {
      socket.destroy();
      return;
    }
    entry.answered = true;
    // Read and drop whatever the client still sends, so closing does not turn into a reset that hides the answer.
    socket.unpipe();
    socket.on('data', () => undefined);
    socket.resume();
    const body = JSON.stringify({ error: { code: err.code, message: err.message, type: 'tunnel_error' } });
    const reason = status === 502 ? 'Bad Gateway' : 'Service Unavailable';
    let retryS = 1;
    try {
      retryS = Math.max(1, Math.ceil(this.options.retryAfterS?.() ?? 1));
    } catch {
      // keep the default
    }
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `connection: close\r\nretry-after: ${retryS}\r\nretry-after-ms: ${retryS * 1000}\r\nx-gpu-console-error: ${err.code}\r\n\r\n${body}`,
    );
    // A client that never reads must not pin the socket.
    socket.setTimeout(2_000, () => socket.destroy());
  }

  /**
   * The SSH link is gone: every open stream fails now rather than when TCP
   * notices. A request still waiting for its answer gets an HTTP error naming `err`.
   */
  abortStreams(err: AppError): number {
    const streams = [...this.streams].filter((s) => s.channel);
    for (const entry of streams) {
      this.streams.delete(entry);
      this.failStream(entry, err, 502);
    }
    return streams.length;
  }

  /**
   * Stops taking new connections (the port is free for another listener at once); streams and
   * connections already accepted go on until they end, or until close().
   */
  stopAccepting(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      // close() calls back only once every connection is gone; the port itself is released now.
      setImmediate(resolve);
    });
  }

  /** Stops listening and closes every open stream at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const serverClosed = this.server.listening ? new Promise<void>((resolve) => this.server.close(() => resolve())) : Promise.resolve();
    for (const { socket, channel } of this.streams) {
      channel?.destroy();
      socket.destroy();
    }
    this.streams.clear();
    // server.close() waits for every connection: end those no stream tracks any more
    // (answered requests on keep-alive connections the client has not closed).
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await serverClosed;
  }

  dispose(): Promise<void> {
    return this.close();
  }
}
