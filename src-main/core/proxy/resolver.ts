// Where an upstream is reachable now: the fleet answers from the state it
// keeps, so the proxy can ask on every request (and again after a queue wait).
// When it is not reachable the answer says why, how soon it should be back
// (a hold is only worth it when that fits the request's hold budget), or that
// a person must act first.
import type { UpstreamClient } from '../upstream/index.js';
import type { UpstreamSpec } from './registry.js';

/** Why a held request waits; sent in queue frames and X-Hold-Reason. */
export type HoldReason = 'reconnecting' | 'waking' | 'draining' | 'restarting';

export type UnavailableCode =
  | 'tunnel_down'
  | 'model_sleeping'
  | 'model_waking'
  | 'model_restarting'
  | 'host_awaiting_trust'
  | 'host_key_changed'
  | 'host_failed';

export interface Unavailable {
  ok: false;
  code: UnavailableCode;
  message: string;
  /** Seconds a client should wait before trying again (Retry-After). */
  retryAfterS: number;
  /**
   * Expected back by itself: how long from now, and why. Null when it will not
   * come back without a person (trust, a changed host key, a failed login, an
   * unapproved wake).
   */
  recovery?: { reason: HoldReason; expectedMs: number } | null;
  /** A person must act (confirm a key, approve a wake, fix credentials). */
  actionRequired?: boolean;
  extra?: Record<string, unknown>;
}

export type UpstreamAvailability =
  /**
   * `degraded`: the last end-to-end probe failed; other replicas are preferred while it lasts.
   * `client`: the endpoint's own client (the fleet's, bound to its tunnel; `url` then only describes it).
   * Without one, `url` is a loopback origin the proxy makes a client for, on-prem checked once.
   */
  | { ok: true; url: string; degraded?: boolean; client?: UpstreamClient }
  | Unavailable;

/** Where an upstream is reachable now; cheap, no I/O (the fleet keeps the state). */
export interface UpstreamResolver {
  resolve(spec: UpstreamSpec): UpstreamAvailability;
  /**
   * Called once when a request decides to wait for a sleeping upstream that may be woken
   * on request (a standing approval covers it): starts one wake, however many wait.
   */
  requestWake?(spec: UpstreamSpec): void;
  /** The context length the server last reported (vLLM max_model_len, llama-server n_ctx); null when unknown. */
  contextLength?(spec: UpstreamSpec): number | null;
  /** Subscribes to "the fleet's state changed" (each tick), so held requests re-check at once. */
  onDidChange?(listener: () => void): { dispose(): unknown };
}
