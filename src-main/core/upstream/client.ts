// One client per endpoint. A service's client is made by the fleet when its
// tunnel opens, bound to that tunnel's private socket (so it is on this machine
// by construction and nothing else can be dialled through it) and closed with
// the tunnel; a configured URL (a router's admin API, Prometheus, a benchmark
// target) gets a client of its own, checked against the on-prem rule once, when
// it is made. Every call to a model server goes through one: the keep-alive
// rule and the one stale-connection retry (dispatch.ts), a deadline by
// AbortSignal, a cap on what is read, and one classifier (classify.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { Client, Dispatcher, Pool } from 'undici';
import { AppError, describeUrlTarget, offPremError, type OffPremPurpose, type OnPremGuard } from '../base/index.js';
import { classifyUpstreamError } from './classify.js';
import { createEndpointPool, createFreshConnection, isStaleConnectionFailure, type ConnectTarget } from './dispatch.js';
import { UpstreamErrorCode } from './errors.js';
import type { UpstreamKey } from './key.js';

export type UpstreamEndpoint =
  | { readonly kind: 'tunnel'; readonly key: UpstreamKey; readonly socketPath: string }
  | { readonly kind: 'url'; readonly url: string };

export interface UpstreamCall {
  method?: 'GET' | 'POST';
  /** Path and query from the endpoint's root (a URL client's own path prefix is put before it). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer | null;
  /** Whole-call deadline (connect, headers, body): an AbortSignal, and undici's own timers set to match. */
  deadlineMs: number;
  /** The caller's signal: its abort is UPSTREAM_CANCELLED. */
  signal?: AbortSignal;
  /** A connection of its own, closed afterwards and never retried: for calls that must not run twice (admin POSTs). */
  freshConnection?: boolean;
}

export interface UpstreamTextCall extends UpstreamCall {
  /** Most bytes of the answer read. */
  maxBodyBytes: number;
  /** Past the cap: `fail` (UPSTREAM_TOO_LARGE) or `truncate` (keep the first maxBodyBytes, `truncated` set). Default fail. */
  overflow?: 'fail' | 'truncate';
}

export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The answer went on past maxBodyBytes (overflow `truncate`); the rest was not read. */
  truncated: boolean;
  /** The first attempt met a kept-alive connection the server had closed; this answer came from the one retry. */
  retried: boolean;
}

/** An answer whose body the caller reads as it arrives (a benchmark's stream). */
export interface UpstreamStream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Dispatcher.ResponseData['body'];
  retried: boolean;
  /** The coded error of a failure while reading the body (the call's deadline and signal known). */
  classify(err: unknown): ReturnType<typeof classifyUpstreamError>;
  /** Call when the body is read or abandoned: closes the retry's own connection, if there was one. */
  release(): Promise<void>;
}

export interface UpstreamClientOptions {
  /** Most connections at once (default MAX_CONNECTIONS_PER_ENDPOINT; null: no bound). */
  connections?: number | null;
  connectTimeoutMs?: number;
}

/** The Host a tunnel client sends: what a client on the GPU host would send to the server (never looked up). */
function tunnelOrigin(remoteHost: string, remotePort: number): string {
  const host = remoteHost.includes(':') ? `[${remoteHost}]` : remoteHost;
  try {
    return new URL(`http://${host}:${remotePort}`).origin;
  } catch {
    return `http://127.0.0.1:${remotePort}`;
  }
}

export class UpstreamClient {
  /** What the client reaches, for messages and evidence: `gpu-a/qwen (SSH tunnel)` or `http://127.0.0.1:9000/admin`. Not a URL to dial. */
  readonly target: string;
  private readonly pool: Pool;
  private readonly connect: ConnectTarget;
  private readonly basePath: string;
  private closedFor: 'close' | 'destroy' | null = null;

  private constructor(
    readonly endpoint: UpstreamEndpoint,
    /** The origin of this client's own dispatcher (the Host it sends); only for dispatch() on `dispatcher`. */
    readonly dispatchOrigin: string,
    basePath: string,
    options: UpstreamClientOptions,
  ) {
    this.connect = { socketPath: endpoint.kind === 'tunnel' ? endpoint.socketPath : null, connectTimeoutMs: options.connectTimeoutMs };
    this.pool = createEndpointPool(dispatchOrigin, this.connect, options.connections);
    this.basePath = basePath.replace(/\/+$/, '');
    this.target = endpoint.kind === 'tunnel' ? `${endpoint.key} (SSH tunnel)` : `${describeUrlTarget(endpoint.url)}${this.basePath}`;
  }

  /** The client of a service's tunnel (on this machine by construction); `remote` is where the tunnel ends on the host. */
  static forTunnel(key: UpstreamKey, socketPath: string, remote: { host: string; port: number }, options: UpstreamClientOptions = {}): UpstreamClient {
    return new UpstreamClient({ kind: 'tunnel', key, socketPath }, tunnelOrigin(remote.host, remote.port), '', options);
  }

  /**
   * The client of a configured URL (its path is a prefix of every call). With `onPrem`, a URL off this
   * machine is refused here — counted for `purpose` — with ONPREM_REFUSED, before anything connects;
   * `onPrem: null` is for what is no model server (a Prometheus the operator runs anywhere).
   */
  static forUrl(url: string, check: { onPrem: OnPremGuard | null; purpose: OffPremPurpose }, options: UpstreamClientOptions = {}): UpstreamClient {
    let u: URL | null;
    try {
      u = new URL(url);
    } catch {
      u = null;
    }
    // The guard first, so that whatever is refused (an unparsable URL too) is counted, as before any client.
    if (check.onPrem && !check.onPrem.check(u ?? url, check.purpose)) throw offPremError(u ?? url, check.purpose);
    if (u === null || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
      throw new AppError(UpstreamErrorCode.INVALID_URL, `${describeUrlTarget(url)} is not an http(s) URL`, { details: { purpose: check.purpose } });
    }
    return new UpstreamClient({ kind: 'url', url: u.href }, u.origin, u.pathname, options);
  }

  get key(): UpstreamKey | null {
    return this.endpoint.kind === 'tunnel' ? this.endpoint.key : null;
  }

  /** The keep-alive pool, for a caller that dispatches and relays itself (the proxy's forward). */
  get dispatcher(): Dispatcher {
    return this.pool;
  }

  get closed(): boolean {
    return this.closedFor !== null;
  }

  /** `GET /metrics` against this client, for messages: `GET http://127.0.0.1:9090/api/v1/query` or `GET /metrics through the tunnel to gpu-a/qwen`. */
  where(path: string, method = 'GET'): string {
    const p = path.split('?')[0] ?? path;
    return this.endpoint.kind === 'tunnel' ? `${method} ${p} through the tunnel to ${this.endpoint.key}` : `${method} ${this.target}${p}`;
  }

  /** The path a call sends (this client's prefix, then the call's own). */
  fullPath(path: string): string {
    return `${this.basePath}${path.startsWith('/') ? path : `/${path}`}`;
  }

  /** A connection of its own to this endpoint (the one retry); the caller destroys it when its request ends. */
  openFreshConnection(): Client {
    return createFreshConnection(this.dispatchOrigin, this.connect);
  }

  /** One call, its answer read into text up to the cap. Throws a coded AppError (UPSTREAM_*, or ONPREM_REFUSED). */
  async request(call: UpstreamTextCall): Promise<UpstreamAnswer> {
    const s = await this.stream(call);
    const parts: Buffer[] = [];
    let size = 0;
    let truncated = false;
    try {
      for await (const chunk of s.body) {
        const buf = chunk as Buffer;
        if (size + buf.length > call.maxBodyBytes) {
          if (call.overflow !== 'truncate') {
            throw new AppError(UpstreamErrorCode.TOO_LARGE, `the answer is larger than ${call.maxBodyBytes} bytes`, {
              details: { where: this.where(call.path, call.method), maxBytes: call.maxBodyBytes },
            });
          }
          parts.push(buf.subarray(0, call.maxBodyBytes - size));
          truncated = true;
          break;
        }
        size += buf.length;
        parts.push(buf);
      }
    } catch (err) {
      throw s.classify(err);
    } finally {
      // The rest of an answer over the cap is not read: its connection goes.
      if (!s.body.readableEnded) s.body.destroy();
      await s.release();
    }
    return { status: s.status, headers: s.headers, text: Buffer.concat(parts).toString('utf8'), truncated, retried: s.retried };
  }

  /**
   * One call whose body the caller reads. Before the status line a failure is thrown coded; a request
   * that met a kept-alive connection the server had just closed is sent once more, on a fresh one.
   */
  async stream(call: UpstreamCall): Promise<UpstreamStream> {
    const where = this.where(call.path, call.method);
    const deadline = { signal: AbortSignal.timeout(call.deadlineMs), ms: call.deadlineMs };
    const signal = call.signal ? AbortSignal.any([call.signal, deadline.signal]) : deadline.signal;
    const ctx = { where, deadline, caller: call.signal, ...(this.endpoint.kind === 'tunnel' ? { tunnel: this.endpoint.key } : {}) };
    const classify = (err: unknown) => classifyUpstreamError(err, ctx);
    if (this.closedFor !== null) throw classify(Object.assign(new Error('closed'), { code: 'UND_ERR_DESTROYED' }));
    let fresh: Client | null = null;
    const release = async () => {
      const f = fresh;
      fresh = null;
      await f?.destroy().catch(() => undefined);
    };
    let retried = false;
    try {
      let res: Dispatcher.ResponseData;
      if (call.freshConnection) {
        fresh = this.openFreshConnection();
        res = await this.send(fresh, call, signal, true);
      } else {
        try {
          res = await this.send(this.pool, call, signal, false);
        } catch (err) {
          // request() rejects only before the status line: no byte of the answer was seen.
          if (signal.aborted || !isStaleConnectionFailure(err, false)) throw err;
          retried = true;
          fresh = this.openFreshConnection();
          res = await this.send(fresh, call, signal, true);
        }
      }
      return { status: res.statusCode, headers: res.headers, body: res.body, retried, classify, release };
    } catch (err) {
      await release();
      const e = classify(err);
      // The one retry failed too: the caller counts it as retried all the same.
      if (retried) e.details['retried'] = true;
      throw e;
    }
  }

  /** Lets calls in flight finish, then closes every connection. Later calls fail UPSTREAM_CLOSED. */
  async close(): Promise<void> {
    if (this.closedFor !== null) return;
    this.closedFor = 'close';
    await this.pool.close().catch(() => undefined);
  }

  /** Cuts every connection now (calls in flight fail UPSTREAM_CLOSED). */
  async destroy(): Promise<void> {
    if (this.closedFor === 'destroy') return;
    this.closedFor = 'destroy';
    await this.pool.destroy().catch(() => undefined);
  }

  private send(dispatcher: Dispatcher, call: UpstreamCall, signal: AbortSignal, reset: boolean): Promise<Dispatcher.ResponseData> {
    const body = call.body ?? null;
    return dispatcher.request({
      origin: this.dispatchOrigin,
      path: this.fullPath(call.path),
      method: call.method ?? 'GET',
      headers: body !== null && !hasHeader(call.headers, 'content-type') ? { 'content-type': 'application/json', ...call.headers } : (call.headers ?? {}),
      body,
      signal,
      headersTimeout: call.deadlineMs,
      bodyTimeout: call.deadlineMs,
      // A connection of its own carries this request only (Connection: close): never a reused one.
      ...(reset ? { reset: true } : {}),
    });
  }
}

function hasHeader(headers: Record<string, string> | undefined, name: string): boolean {
  return headers !== undefined && Object.keys(headers).some((k) => k.toLowerCase() === name);
}
