// Policies watch the fleet and PROPOSE; they never approve or execute. Each
// condition proposes once per episode (an idle stretch, a stuck stretch, a
// run of failed health checks) — a rejected proposal is not re-raised every
// tick; the next episode may propose again. Only what the service's driver
// can do is proposed: a llama-server that sleeps by itself
// (--sleep-idle-seconds) is never asked to sleep; in router mode an idle
// loaded model is proposed for unloading.
import { toAppError, type Clock, type Logger } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { FleetState, ServiceState } from '../fleet/index.js';
import type { LifecycleService } from './action-queue.js';
import { policySettings } from './targets.js';

interface Episode {
  idleSince: number | null;
  proposedSleep: boolean;
  proposedOffload: boolean;
  stuckSince: number | null;
  proposedStuck: boolean;
  healthFails: number;
  proposedUnhealthy: boolean;
}

export interface PolicyDeps {
  service: LifecycleService;
  clock: Clock;
  logger: Logger;
  config(): Config;
  /** Requests running and waiting at the proxy for the upstream (idle means none). */
  load(upstream: string): { inFlight: number; queued: number } | null;
}

export class LifecyclePolicies {
  private readonly episodes = new Map<string, Episode>();

  constructor(private readonly deps: PolicyDeps) {}

  /** One poll round of the fleet. */
  observe(state: FleetState): void {
    const now = this.deps.clock.now();
    const config = this.deps.config();
    for (const host of state.hosts) {
      if (host.session.state !== 'connected') continue;
      for (const svc of host.services) {
        const upstream = svc.key;
        const p = policySettings(config, upstream);
        const e = this.episode(upstream);
        if (svc.stale) continue;
        const load = this.deps.load(upstream);
        const { running, waiting } = requestCounts(svc);
        const busy = (running ?? 0) > 0 || (waiting ?? 0) > 0 || (load !== null && load.inFlight + load.queued > 0);

        // Idle → sleep, longer → offload; not where the server keeps its own idle timer (or has no sleep).
        const ownTimer = svc.sleepControl === 'automatic' || svc.sleepControl === 'none';
        const canSleep = !ownTimer && this.deps.service.supports(upstream, 'sleep');
        const canOffload = !ownTimer && this.deps.service.supports(upstream, 'offload');
        if (busy || svc.sleep === 'unknown' || (!canSleep && !canOffload)) {
          e.idleSince = null;
          e.proposedSleep = false;
          e.proposedOffload = false;
        } else {
          e.idleSince ??= now;
          const idleMin = (now - e.idleSince) / 60_000;
          if (canSleep && svc.sleep === 'awake' && p.idleSleepMinutes > 0 && idleMin >= p.idleSleepMinutes && !e.proposedSleep) {
            e.proposedSleep = true;
            this.propose(upstream, 'sleep', `idle for ${Math.round(idleMin)} min (policy: sleep after ${p.idleSleepMinutes} min)`, 'policy:idle-sleep');
          }
          if (canOffload && svc.sleep !== 'asleep-2' && p.idleOffloadMinutes > 0 && idleMin >= p.idleOffloadMinutes && !e.proposedOffload) {
            e.proposedOffload = true;
            this.propose(upstream, 'offload', `idle for ${Math.round(idleMin)} min (policy: offload after ${p.idleOffloadMinutes} min)`, 'policy:idle-offload');
          }
        }

        // Busy but producing no tokens → restart.
        const stuck = isStuck(svc) && this.deps.service.supports(upstream, 'restart');
        if (!stuck) {
          e.stuckSince = null;
          e.proposedStuck = false;
        } else {
          e.stuckSince ??= now;
          const s = (now - e.stuckSince) / 1000;
          if (p.stuckSeconds > 0 && s >= p.stuckSeconds && !e.proposedStuck) {
            e.proposedStuck = true;
            this.propose(upstream, 'restart', `${running} requests running but no tokens for ${Math.round(s)} s (policy: stuck after ${p.stuckSeconds} s)`, 'policy:stuck-restart');
          }
        }

        // Failing health N times in a row → restart.
        if (svc.health === 'down') e.healthFails += 1;
        else if (svc.health === 'ok') {
          e.healthFails = 0;
          e.proposedUnhealthy = false;
        }
        if (p.healthFailures > 0 && e.healthFails >= p.healthFailures && !e.proposedUnhealthy && this.deps.service.supports(upstream, 'restart')) {
          e.proposedUnhealthy = true;
          this.propose(upstream, 'restart', `health failed ${e.healthFails} times in a row (policy: restart after ${p.healthFailures})`, 'policy:unhealthy-restart');
        }
      }
    }
  }

  /** A request reached a sleeping model: one wake proposal however many requests. */
  sleepingRequest(upstream: string): void {
    // A llama-server that sleeps by itself also wakes by itself on that request: nothing to propose.
    if (!policySettings(this.deps.config(), upstream).wakeOnDemand || !this.deps.service.supports(upstream, 'wake')) return;
    this.propose(upstream, 'wake', 'a request arrived for the sleeping model (policy: wake on demand)', 'policy:wake-on-demand');
  }

  private propose(upstream: string, kind: 'wake' | 'sleep' | 'offload' | 'restart', reason: string, proposer: string): void {
    try {
      this.deps.service.propose({ upstream, kind, reason, proposer });
    } catch (err) {
      this.deps.logger.debug('policy did not propose', { upstream, kind, error: toAppError(err).message });
    }
  }

  private episode(upstream: string): Episode {
    let e = this.episodes.get(upstream);
    if (!e) {
      e = { idleSince: null, proposedSleep: false, proposedOffload: false, stuckSince: null, proposedStuck: false, healthFails: 0, proposedUnhealthy: false };
      this.episodes.set(upstream, e);
    }
    return e;
  }
}

/**
 * Requests running, neither prompt nor generated tokens moving, and the server
 * not asleep (a sleeping one answers nothing; waking is not being stuck).
 * llama-server's token counters move only when a request finishes, so its
 * zero counts only when the rate is live (from /slots progress).
 */
export function isStuck(svc: ServiceState): boolean {
  if (svc.sleep === 'asleep-1' || svc.sleep === 'asleep-2' || svc.health === 'down') return false;
  const f = svc.figures;
  if ((requestCounts(svc).running ?? 0) <= 0 || (f?.genTokPerS ?? null) !== 0) return false;
  if ((f?.promptTokPerS ?? 0) > 0) return false; // a long prompt being read is work
  return svc.config.kind !== 'llama-server' || f?.rateBasis === 'live';
}

/** Requests running and waiting at the engine: the windowed figures, else the last reading's gauges. */
function requestCounts(svc: ServiceState): { running: number | null; waiting: number | null } {
  return { running: svc.figures?.running ?? svc.reading?.running ?? null, waiting: svc.figures?.waiting ?? svc.reading?.waiting ?? null };
}
