// What the fleet's state says about one service: its sleep level (what
// a plan is made for) and the before/after figures the audit rows record.
import { serviceStateOf, type FleetState } from '../fleet/index.js';
import type { LifecycleTargetConfig } from './drivers/index.js';
import type { LifecycleFleet } from './ports.js';
import { hostVramIn } from './verify.js';

export function sleepLevel(fleet: LifecycleFleet, target: LifecycleTargetConfig): 0 | 1 | 2 | null {
  return sleepLevelIn(fleet.state(), target);
}

/** The service's sleep level in one state of the fleet. */
export function sleepLevelIn(state: FleetState, target: LifecycleTargetConfig): 0 | 1 | 2 | null {
  return serviceStateOf(state, target.label, target.serviceId)?.service.sleepLevel ?? null;
}

/**
 * What the audit rows record as before/after. The GPU figure carries the time
 * its reading was taken: the last one may predate the moment recorded (a
 * restart's "after" can be a reading from while the model loaded).
 */
export function observe(fleet: LifecycleFleet, target: LifecycleTargetConfig): Record<string, unknown> {
  const state = fleet.state();
  const host = state.hosts.find((h) => h.label === target.label);
  const svc = host?.services.find((s) => s.id === target.serviceId);
  const memory = hostVramIn(state, target.label);
  return { sleep: svc?.sleep ?? 'unknown', health: svc?.health ?? 'unknown', vramUsedMiB: memory?.usedMiB ?? null, vramReadAt: memory?.at ?? null, host: host?.session.state ?? 'unknown' };
}
