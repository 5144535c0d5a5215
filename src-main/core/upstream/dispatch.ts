// Connections to model servers: keep-alive settings that stay inside what the
// server allows, and the one test for "this request failed on a connection the
// server had already closed, before it read the request" — the only failure
// that is retried, once, on a fresh connection. Only UpstreamClient (client.ts)
// makes dispatchers; everyone else reaches a server through one.
//
// llama-server (cpp-httplib) closes a connection 5 s after its last answer and
// after 100 requests, and says so: `Keep-Alive: timeout=5, max=100`, the 100th
// answer with `Connection: close`. A request written while that close is on its
// way meets a FIN (undici: UND_ERR_SOCKET "other side closed") or, when the
// server closes with the request unread, an RST (ECONNRESET, EPIPE on write).
import type { Socket } from 'node:net';
import { buildConnector, Client, Pool } from 'undici';

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

/**
 * Connections one endpoint's pool may hold at once. undici opens them only as requests need them, so
 * this is a ceiling, not a cost: the proxy's admission keeps its own far below it (slots per
 * upstream); a benchmark's closed-loop level may go to 1,024 workers, each with a request in flight.
 */
export const MAX_CONNECTIONS_PER_ENDPOINT = 1_024;

export const CONNECT_TIMEOUT_MS = 10_000;

/** Where a pool's connections go: TCP to the origin's host, or a Unix socket (a tunnel's private end). */
export interface ConnectTarget {
  /** The tunnel's private socket; null: TCP to the origin. */
  socketPath: string | null;
  connectTimeoutMs?: number;
}

interface SocketFigures {
  bytesRead: number;
}

/** Figures of the socket an ECONNRESET/EPIPE came from (Node's socket errors carry none). */
const figuresOfError = new WeakMap<object, SocketFigures>();

/**
 * undici's connector for the target, plus: an error of the socket (ECONNRESET, EPIPE) is remembered
 * with what the socket had read by then, as undici's SocketError carries it in `err.socket`. The
 * listener goes in first, so the figures are there before undici hands the error to the request.
 * A socket connector ignores the origin's host: the name in a tunnel client's origin is never looked up.
 */
function connectorFor(target: ConnectTarget): buildConnector.connector {
  const timeout = target.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const base = buildConnector(target.socketPath === null ? { timeout } : { timeout, socketPath: target.socketPath });
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

/** The keep-alive pool of one endpoint: the one keep-alive rule, for every caller of that endpoint. */
export function createEndpointPool(origin: string, target: ConnectTarget, connections: number | null = MAX_CONNECTIONS_PER_ENDPOINT): Pool {
  return new Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    maxRequestsPerClient: MAX_REQUESTS_PER_CONNECTION,
    connect: connectorFor(target),
  });
}

/**
 * A connection of its own (the one retry, or a call that must never ride a reused socket): a Client
 * with one socket that is never reused (send with `reset: true`); whoever opens it closes it when the
 * request has ended.
 */
export function createFreshConnection(origin: string, target: ConnectTarget): Client {
  return new Client(origin, { pipelining: 1, connect: connectorFor(target) });
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
 * connect (the server is gone) or is served by the restarted server. Calls that must not run twice
 * (lifecycle admin POSTs) go on a connection of their own instead, and are never retried.
 */
export function isStaleConnectionFailure(err: unknown, answerStarted: boolean): boolean {
  if (answerStarted || !isConnectionClosed(err)) return false;
  const read = bytesReadBefore(err);
  return read !== null && read > 0;
}
