// Connections to model servers: keep-alive settings that stay inside what the
// server allows, and the one test for "this request failed on a connection the
// server had already closed, before it read the request" — the only failure
// that is retried, once, on a fresh connection. The proxy's upstream pools and
// the benchmark client both use it, so it sits in core/, in no capability.
//
// llama-server (cpp-httplib) closes a connection 5 s after its last answer and
// after 100 requests, and says so: `Keep-Alive: timeout=5, max=100`, the 100th
// answer with `Connection: close`. A request written while that close is on its
// way meets a FIN (undici: UND_ERR_SOCKET "other side closed") or, when the
// server closes with the request unread, an RST (ECONNRESET, EPIPE on write).
//
// Every dispatcher core makes to a model server goes through one connector,
// which also reaches the console's own tunnels: a URL whose host is a
// registered tunnel name (core/base/tunnel-hosts.ts) connects to that tunnel's
// private Unix socket; any other name under the tunnels' domain fails with
// UPSTREAM_TUNNEL_UNKNOWN (never a DNS lookup); everything else is TCP.
import type { Socket } from 'node:net';
import { Agent, buildConnector, Client, Pool } from 'undici';
import { AppError, isTunnelHostName, tunnelHosts, type TunnelHosts } from './base/index.js';

/**
 * Idle keep-alive connections are closed by us after this long. Below cpp-httplib's 5 s, so we close
 * first; undici's own default is 4 s too, but a hint is read as `timeout − 2 s` and capped here, so no
 * server can stretch it: `timeout=5` gives 3 s, `timeout=600` gives 4 s.
 */
export const KEEP_ALIVE_MS = 4_000;

/**
 * Requests per connection. undici marks a socket for closing only once `maxRequestsPerClient` requests
 * are behind it (its counter starts at 0), so N allows N + 1 requests, the last one sent with
 * `Connection: close`. 90 → 91 requests: under cpp-httplib's 100 even when something between us and
 * the server drops its `Connection: close`. The cost is one connect per 91 requests (a TCP handshake on
 * loopback, an SSH channel open through a tunnel).
 */
export const MAX_REQUESTS_PER_CONNECTION = 90;

const CONNECT_TIMEOUT_MS = 10_000;

export const UpstreamDispatchErrorCode = {
  /** A URL named a tunnel this console does not hold (closed since, or another console's). */
  TUNNEL_UNKNOWN: 'UPSTREAM_TUNNEL_UNKNOWN',
} as const;
export type UpstreamDispatchErrorCode = (typeof UpstreamDispatchErrorCode)[keyof typeof UpstreamDispatchErrorCode];

declare module './base/index.js' {
  interface ErrorCodeRegistry {
    upstreamDispatch: UpstreamDispatchErrorCode;
  }
}

/**
 * undici's connector for TCP, and for a registered tunnel name its private socket. Connectors for
 * sockets are made once per path (a tunnel's path is fixed for its life).
 */
export function tunnelAwareConnector(tunnels: TunnelHosts = tunnelHosts, timeoutMs = CONNECT_TIMEOUT_MS): buildConnector.connector {
  const tcp = buildConnector({ timeout: timeoutMs });
  const bySocket = new Map<string, buildConnector.connector>();
  return (options, callback) => {
    if (!isTunnelHostName(options.hostname)) return tcp(options, callback);
    const path = tunnels.socketPathOf(options.hostname);
    if (path === null) {
      const err = new AppError(UpstreamDispatchErrorCode.TUNNEL_UNKNOWN, `no open tunnel of this console is named ${options.hostname} (closed since, or never this console's)`, {
        retryable: true,
        details: { host: options.hostname },
      });
      queueMicrotask(() => callback(err, null));
      return;
    }
    let unix = bySocket.get(path);
    if (!unix) {
      if (bySocket.size > 256) bySocket.clear();
      unix = buildConnector({ timeout: timeoutMs, socketPath: path });
      bySocket.set(path, unix);
    }
    return unix(options, callback);
  };
}

interface SocketFigures {
  bytesRead: number;
}

/** Figures of the socket an ECONNRESET/EPIPE came from (Node's socket errors carry none). */
const figuresOfError = new WeakMap<object, SocketFigures>();

/**
 * undici's connector, plus: an error of the socket (ECONNRESET, EPIPE) is remembered with what the
 * socket had read by then, as undici's SocketError carries it in `err.socket`. The listener goes in
 * first, so the figures are there before undici hands the error to the request.
 */
function connectorWithSocketFigures(): buildConnector.connector {
  const base = tunnelAwareConnector();
  return (options, callback) => {
    base(options, (err, socket) => {
      if (socket) {
        const s: Socket = socket;
        s.prependListener('error', (e: Error) => {
          if (!figuresOfError.has(e)) figuresOfError.set(e, { bytesRead: s.bytesRead });
        });
        callback(null, socket);
      } else {
        callback(err!, null);
      }
    });
  };
}

function keepAliveOptions() {
  return {
    pipelining: 1,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    maxRequestsPerClient: MAX_REQUESTS_PER_CONNECTION,
    connect: connectorWithSocketFigures(),
  };
}

/** The proxy's keep-alive pool to one upstream origin. */
export function createUpstreamPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, ...keepAliveOptions() });
}

/** A keep-alive agent for any origin (the benchmark client); `connections` per origin, null for no bound. */
export function createKeepAliveAgent(connections: number | null): Agent {
  return new Agent({ connections, ...keepAliveOptions() });
}

/**
 * An agent with the caller's own settings (the fleet's readings and probes, lifecycle drivers, report
 * checks) that reaches the console's tunnels like every other dispatcher here.
 */
export function createTunnelAgent(options: Omit<Agent.Options, 'connect'> = {}): Agent {
  return new Agent({ ...options, connect: tunnelAwareConnector() });
}

/**
 * A connection of its own for the one retry: a Client with one socket that is never reused (send with
 * `reset: true`); whoever opens it closes it when the request has ended.
 */
export function openFreshConnection(origin: string): Client {
  return new Client(origin, { pipelining: 1, connect: tunnelAwareConnector() });
}

/** Bytes the failed request's socket had read before the failure, or null when the error does not say. */
export function bytesReadBefore(err: unknown): number | null {
  if (typeof err !== 'object' || err === null) return null;
  const info = (err as { socket?: { bytesRead?: unknown } | null }).socket;
  if (info && typeof info.bytesRead === 'number') return info.bytesRead;
  return figuresOfError.get(err)?.bytesRead ?? null;
}

/** The connection was closed or reset under the request — not a timeout, not a refusal, not a bad answer. */
export function isConnectionClosed(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (code === 'UND_ERR_SOCKET') return message === 'other side closed' || message === 'closed';
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * The retry rule: a request is sent again, once, on a fresh connection when it failed
 *  - before any byte of its answer (`answerStarted` false: no status line yet),
 *  - because the connection was closed or reset (UND_ERR_SOCKET "other side closed"/"closed",
 *    ECONNRESET, EPIPE — never a timeout, an abort, a refused connect or an unparsable answer),
 *  - on a connection that had served earlier answers: its socket had read bytes before this
 *    request's answer began, which on a fresh connection is impossible.
 * An error that does not say what its socket read is not retried: a reset on a fresh connection
 * means the server dropped this very request (it crashed on it, or refuses it), and sending it
 * again would double what it did. Our dispatchers record the figures for ECONNRESET/EPIPE.
 *
 * What it cannot tell apart: a server that dies after reading a request on a reused connection,
 * before its first byte. That request is sent once more, on a new connection, which then fails at
 * connect (the server is gone) or is served by the restarted server.
 */
export function isStaleConnectionFailure(err: unknown, answerStarted: boolean): boolean {
  if (answerStarted || !isConnectionClosed(err)) return false;
  const read = bytesReadBefore(err);
  return read !== null && read > 0;
}
