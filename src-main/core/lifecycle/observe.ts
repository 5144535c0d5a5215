// What the fleet's last snapshot says about one service: its sleep level (what
// a plan is made for) and the before/after figures the audit rows record.
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import type { LifecycleTargetConfig } from './drivers/index.js';
import type { LifecycleFleet } from './ports.js';
import { hostVram } from './verify.js';

const sleepLevelOf = (s: string | undefined): 0 | 1 | 2 | null => (s === 'awake' ? 0 : s === 'asleep-1' ? 1 : s === 'asleep-2' ? 2 : null);

export function sleepLevel(fleet: LifecycleFleet, target: LifecycleTargetConfig): 0 | 1 | 2 | null {
  return sleepLevelIn(fleet.snapshot(), target);
}

/** The service's sleep level in one snapshot. */
export function sleepLevelIn(snapshot: FleetSnapshot, target: LifecycleTargetConfig): 0 | 1 | 2 | null {
  const host = snapshot.hosts.find((h) => h.label === target.label);
  return sleepLevelOf(host?.services.find((s) => s.id === target.serviceId)?.sleep);
}

/**
 * What the audit rows record as before/after. The GPU figure carries the time
 * its reading was taken: the last one may predate the moment recorded (a
 * restart's "after" can be a reading from while the model loaded).
 */
export function observe(fleet: LifecycleFleet, target: LifecycleTargetConfig): Record<string, unknown> {
  const host = fleet.snapshot().hosts.find((h) => h.label === target.label);
  const svc = host?.services.find((s) => s.id === target.serviceId);
  const memory = hostVram(fleet, target.label);
  return { sleep: svc?.sleep ?? 'unknown', health: svc?.health ?? 'unknown', vramUsedMiB: memory?.usedMiB ?? null, vramReadAt: memory?.at ?? null, host: host?.state ?? 'unknown' };
}
