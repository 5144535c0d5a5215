// Stable codes of the one upstream classifier (client.ts): every failure of a
// call to a model server (or to a configured URL such as a router's admin API
// or Prometheus) is one of these, with the library's own code kept in
// `details.undiciCode` and the error itself as `cause`. Capabilities map them
// to their own codes where their contract names one (TELEMETRY_SCRAPE_TIMEOUT,
// FLEET_PROBE_TIMEOUT, LIFECYCLE_STEP_FAILED, BENCH_TIMEOUT…).

export const UpstreamErrorCode = {
  /** No answer (connect, headers or body) within the call's deadline. */
  TIMEOUT: 'UPSTREAM_TIMEOUT',
  /** The caller's own signal ended the call (a run cancelled, the console shutting down). */
  CANCELLED: 'UPSTREAM_CANCELLED',
  /** Nothing listens there (ECONNREFUSED; a tunnel's socket file gone: ENOENT). */
  REFUSED: 'UPSTREAM_REFUSED',
  /** The connection was closed or reset under the call (ECONNRESET, EPIPE, UND_ERR_SOCKET). */
  RESET: 'UPSTREAM_RESET',
  /** The answer is larger than the call's cap; the rest was not read. */
  TOO_LARGE: 'UPSTREAM_TOO_LARGE',
  /** The client was closed: its tunnel closed (a disconnect, a config change) or the console is stopping. */
  CLOSED: 'UPSTREAM_CLOSED',
  /** Anything else undici reported (a malformed answer, an invalid header). */
  FAILED: 'UPSTREAM_FAILED',
  /** A client was asked for something that is not an http(s) URL. */
  INVALID_URL: 'UPSTREAM_INVALID_URL',
} as const;

export type UpstreamErrorCode = (typeof UpstreamErrorCode)[keyof typeof UpstreamErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    upstream: UpstreamErrorCode;
  }
}
