import type { Disposable } from '../base/index.js';
import type { FleetState } from '../fleet/index.js';
import type { ExecOptions, ExecResult } from '../ssh/index.js';
import type { UpstreamClient, UpstreamKey } from '../upstream/index.js';

/** What the lifecycle capability needs from the fleet (FleetService satisfies it). */
export interface LifecycleFleet {
  /** The fleet as of now: sessions, sleep levels, readings with their own times. */
  state(): FleetState;
  /** The client of a service's tunnel; throws FLEET_TUNNEL_NOT_READY while it is not open. */
  upstream(key: UpstreamKey): UpstreamClient;
  /**
   * A loopback URL on one of the tunnels' public ports (a router's admin API reached through a tunnel) as
   * that tunnel's client (its private end passes admin paths) and the URL's path; null for any other URL.
   */
  upstreamAt?(url: string): { client: UpstreamClient; path: string } | null;
  exec(label: string, command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Each published state (the object the proxy routes by); absent in tests that poll `state`. */
  onDidChange?(listener: (state: FleetState) => void): Disposable;
}

/** What it needs from the proxy (wiring/proxy.ts satisfies it); null when no proxy runs. */
export interface LifecycleProxy {
  /** `purpose`: what follows the drain, so requests refused meanwhile get a fitting Retry-After (a restart: deadline + its expected time). */
  drain(upstream: string, options: { deadlineMs: number; purpose?: 'restart' | 'sleep' | 'offload' }, actor: string): Promise<{ drained: number; aborted: number }>;
  resume(upstream: string, actor: string): void;
  /** Requests running and waiting on that upstream now; null when the proxy does not know it. */
  load(upstream: string): { inFlight: number; queued: number } | null;
}
