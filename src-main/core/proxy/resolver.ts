// Where an upstream is reachable now: the fleet answers from the state it
// keeps, so the proxy can ask on every request (and again after a queue wait).
import type { UpstreamSpec } from './registry.js';

export type UpstreamAvailability =
  | { ok: true; url: string }
  | { ok: false; code: 'tunnel_down' | 'model_sleeping'; message: string; retryAfterS: number; extra?: Record<string, unknown> };

/** Where an upstream is reachable now; cheap, no I/O (the fleet keeps the state). */
export interface UpstreamResolver {
  resolve(spec: UpstreamSpec): UpstreamAvailability;
}
