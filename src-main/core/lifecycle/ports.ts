import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import type { Disposable } from '../base/index.js';
import type { ExecOptions, ExecResult } from '../ssh/index.js';

/** What the lifecycle capability needs from the fleet (FleetService satisfies it). */
export interface LifecycleFleet {
  snapshot(): FleetSnapshot;
  tunnelUrl(label: string, serviceId: string): string;
  /**
   * A loopback URL on one of the tunnels' public ports (a router's admin API reached through a tunnel) as the
   * same URL on that tunnel's private end, which passes admin paths; any other URL unchanged.
   */
  privateUrlOf?(url: string): string;
  exec(label: string, command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Each published snapshot (what the proxy learns sleep states from); absent in tests that poll `snapshot`. */
  onDidTick?(listener: (snapshot: FleetSnapshot) => void): Disposable;
}

/** What it needs from the proxy (wiring/proxy.ts satisfies it); null when no proxy runs. */
export interface LifecycleProxy {
  /** `purpose`: what follows the drain, so requests refused meanwhile get a fitting Retry-After (a restart: deadline + its expected time). */
  drain(upstream: string, options: { deadlineMs: number; purpose?: 'restart' | 'sleep' | 'offload' }, actor: string): Promise<{ drained: number; aborted: number }>;
  resume(upstream: string, actor: string): void;
  /** Requests running and waiting on that upstream now; null when the proxy does not know it. */
  load(upstream: string): { inFlight: number; queued: number } | null;
}
