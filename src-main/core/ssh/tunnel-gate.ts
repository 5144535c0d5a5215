// A tunnel's public port: the 127.0.0.1 address the console shows operators
// and hands to their apps. It is an HTTP gate in front of the tunnel's private
// socket: requests tunnel-paths.ts allows go on (bodies streamed both ways with
// backpressure, server-sent events unbuffered, keep-alive to the socket,
// WebSocket upgrades spliced), the rest are answered 403 here and the model
// server never sees them. The console's own callers do not pass through it.
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError, silentLogger, type Logger } from '../base/index.js';
import { SshErrorCode, TunnelGateErrorCode, TunnelPathErrorCode } from './errors.js';
import { checkTunnelHost, checkTunnelRequest, type TunnelVerdict } from './tunnel-paths.js';

/** Idle keep-alive connections to the private socket: below the engines' 5 s (Node also reads their hint, minus 1 s). */
const IDLE_KEEP_ALIVE_MS = 4_000;

/** Per hop, never forwarded (RFC 9110 §7.6.1), plus what this hop answers itself (Expect, Date). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect']);

export interface TunnelGateOptions {
  /** 0 or undefined: any free port on 127.0.0.1. */
  localPort?: number;
  /** The tunnel's private end. */
  socketPath: string;
  /** Seconds a client should wait before retrying, sent with the gate's own 502/503. Default 1. */
  retryAfterS?: () => number;
  idleKeepAliveMs?: number;
  logger?: Logger;
}

/** Raw headers (name, value, name, value…) without those of this hop. */
function endToEnd(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

function jsonError(code: string, message: string): string {
  return JSON.stringify({ error: { code, message, type: 'tunnel_error' } });
}

export class TunnelGate {
  private readonly server: Server;
  private readonly agent: HttpAgent;
  private readonly sockets = new Set<Socket>();
  private readonly upgraded = new Set<Duplex>();
  private readonly logger: Logger;
  private _localPort = 0;
  private closed = false;
  private passed = 0;
  private refused = 0;
  private failed = 0;

  private constructor(private readonly options: TunnelGateOptions) {
    this.logger = (options.logger ?? silentLogger).child('tunnel-gate');
    this.agent = new HttpAgent({ keepAlive: true, timeout: options.idleKeepAliveMs ?? IDLE_KEEP_ALIVE_MS, scheduling: 'lifo' });
    this.server = createServer({ noDelay: true }, (req, res) => this.onRequest(req, res));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    this.server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
      this.refused++;
      socket.end(rawResponse(400, TunnelPathErrorCode.TARGET_REFUSED, 'the tunnel is not a proxy: CONNECT is refused'));
    });
  }

  static async open(options: TunnelGateOptions): Promise<TunnelGate> {
    const gate = new TunnelGate(options);
    await gate.listen();
    return gate;
  }

  get localPort(): number {
    return this._localPort;
  }
  get url(): string {
    return `http://127.0.0.1:${this._localPort}`;
  }
  get listening(): boolean {
    return this.server.listening;
  }
  /** Requests passed on, refused here, and failed between the gate and the private socket. */
  get stats(): { passed: number; refused: number; failed: number } {
    return { passed: this.passed, refused: this.refused, failed: this.failed };
  }

  private listen(): Promise<void> {
    const port = this.options.localPort ?? 0;
    return new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(
          new AppError(SshErrorCode.FORWARD_LISTEN_FAILED, `cannot listen on 127.0.0.1:${port} (${err.code ?? err.message})`, {
            details: { localPort: port, errno: err.code },
            cause: err,
          }),
        );
      };
      this.server.once('error', onError);
      this.server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
        this.server.off('error', onError);
        this.server.on('error', (err) => this.logger.warn('listener error', { message: err.message }));
        this._localPort = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** The Host first (a rebound name is refused whatever its path), then the request target. */
  private verdictFor(req: IncomingMessage): TunnelVerdict {
    return checkTunnelHost(req.headers.host, this._localPort) ?? checkTunnelRequest(req.method ?? 'GET', req.url ?? '');
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? 'GET';
    const verdict = this.verdictFor(req);
    if (!verdict.ok) return this.refuse(method, res, verdict);
    this.passed++;
    const headers = endToEnd(req.rawHeaders);
    // HTTP/1.1 to the server needs a Host (an HTTP/1.0 client may send none).
    if (req.headers.host === undefined) headers.push('Host', `127.0.0.1:${this._localPort}`);
    const up = httpRequest({ socketPath: this.options.socketPath, agent: this.agent, method, path: verdict.target, headers, setHost: false });
    up.on('response', (answer) => this.relay(answer, res, up));
    up.on('error', (err: NodeJS.ErrnoException) => this.upstreamFailed(res, err));
    // The client went away: so does its request to the server (an engine stops generating for nobody).
    res.once('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.once('error', () => up.destroy());
    req.pipe(up);
  }

  private relay(answer: IncomingMessage, res: ServerResponse, up: ReturnType<typeof httpRequest>): void {
    try {
      res.sendDate = false;
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.rawHeaders));
      // A stream (no length: chunked, SSE) gets its status and headers now, as its first event may be far off;
      // an answer of known length goes out with its body, in one write.
      if (answer.headers['content-length'] === undefined) res.flushHeaders();
    } catch (err) {
      answer.destroy();
      up.destroy();
      this.upstreamFailed(res, err as NodeJS.ErrnoException);
      return;
    }
    answer.pipe(res);
    // Cut short (the link dropped mid-stream): the client must see it cut, not a clean end.
    answer.once('close', () => {
      if (!answer.complete) res.destroy();
    });
    answer.once('error', () => res.destroy());
  }

  private refuse(method: string, res: ServerResponse, verdict: Extract<TunnelVerdict, { ok: false }>): void {
    this.refused++;
    this.logger.info('tunnel request refused', { method, code: verdict.code, status: verdict.status });
    const body = jsonError(verdict.code, verdict.message);
    // The request body is read and dropped by Node after the answer, so the connection stays usable.
    res.writeHead(verdict.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-gpu-console-error': verdict.code });
    res.end(body);
  }

  private upstreamFailed(res: ServerResponse, err: NodeJS.ErrnoException): void {
    this.failed++;
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    const unreachable = err.code === 'ENOENT' || err.code === 'ECONNREFUSED';
    const status = unreachable ? 503 : 502;
    const code = unreachable ? TunnelGateErrorCode.PRIVATE_UNREACHABLE : TunnelGateErrorCode.UPSTREAM_FAILED;
    const message = unreachable
      ? 'the tunnel is changing hands or closing (its private socket took no connection); try again'
      : `the tunnel closed before the model server answered (${err.code ?? err.message})`;
    this.logger.debug('request through the gate failed', { code, errno: err.code });
    const body = jsonError(code, message);
    const retryS = this.retryAfterS();
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'retry-after': String(retryS),
      'retry-after-ms': String(retryS * 1000),
      'x-gpu-console-error': code,
    });
    res.end(body);
  }

  private retryAfterS(): number {
    try {
      return Math.max(1, Math.ceil(this.options.retryAfterS?.() ?? 1));
    } catch {
      return 1;
    }
  }

  /** A WebSocket (vLLM's realtime API): checked like any request, then the two sockets are spliced. */
  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const method = req.method ?? 'GET';
    const verdict = this.verdictFor(req);
    socket.on('error', () => undefined);
    if (!verdict.ok || this.closed) {
      this.refused++;
      socket.end(verdict.ok ? rawResponse(503, TunnelGateErrorCode.PRIVATE_UNREACHABLE, 'the tunnel is closing') : rawResponse(verdict.status, verdict.code, verdict.message));
      return;
    }
    this.passed++;
    const up = connect(this.options.socketPath);
    this.upgraded.add(socket).add(up);
    const done = (): void => {
      socket.destroy();
      up.destroy();
      this.upgraded.delete(socket);
      this.upgraded.delete(up);
    };
    up.once('connect', () => {
      const lines = [`${method} ${verdict.target} HTTP/1.1`];
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) up.write(head);
      socket.pipe(up).pipe(socket);
    });
    up.once('error', (err: NodeJS.ErrnoException) => {
      this.failed++;
      if (up.bytesRead === 0 && socket.writable) socket.end(rawResponse(503, TunnelGateErrorCode.PRIVATE_UNREACHABLE, `the tunnel's private socket took no connection (${err.code ?? err.message})`));
      done();
    });
    up.once('close', done);
    socket.once('close', done);
  }

  /** Stops listening and ends every connection and request at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closed = this.server.listening ? new Promise<void>((resolve) => this.server.close(() => resolve())) : Promise.resolve();
    for (const s of this.sockets) s.destroy();
    for (const s of this.upgraded) s.destroy();
    this.sockets.clear();
    this.upgraded.clear();
    this.agent.destroy();
    await closed;
  }

  dispose(): Promise<void> {
    return this.close();
  }
}

function rawResponse(status: number, code: string, message: string): string {
  const body = jsonError(code, message);
  const reason = status === 403 ? 'Forbidden' : status === 400 ? 'Bad Request' : 'Service Unavailable';
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nx-gpu-console-error: ${code}\r\n\r\n${body}`;
}
