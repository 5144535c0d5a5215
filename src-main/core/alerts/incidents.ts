// One incident per cause. A host that is down (its SSH session not connected,
// or its host_stale alert raised) is the root of every alert of its services;
// a service that is down (health 'down' while its host is connected, or its
// service_down alert raised) is the root of its own other alerts (throughput,
// error rate, hanging requests, TTFT, queue wait…). While a root holds, and for
// `holdMs` after it ends (the proxy's error window still counts the outage's
// failures), a consequence is not raised; one raised before the root began is
// tied to it (`incident` = the root alert's id, an annotation: shown, never
// paged). So a host going down pages once, not once per service.
import { upstreamKey } from '../upstream/index.js';
import type { HostAlertTick } from './alert-tick.js';
import { idOf } from './tracks.js';

/** The proxy's error window: what a consequence's figure may still remember of the cause. */
export const DEFAULT_INCIDENT_HOLD_MS = 300_000;

interface Root {
  /** While the cause holds: null; after it ended: when. */
  endedAt: number | null;
}

export class Incidents {
  private readonly hosts = new Map<string, Root>();
  private readonly services = new Map<string, Root>();
  /** Lifecycle drains (the proxy's upstream state `draining`): not a cause of alerts, a reason to raise nothing new. */
  private readonly drains = new Map<string, Root>();

  constructor(private readonly holdMs: number = DEFAULT_INCIDENT_HOLD_MS) {}

  /** Reads this tick's causes; `raised(id)` tells whether a root alert is up. */
  update(h: HostAlertTick, now: number, raised: (id: string) => boolean): void {
    const hostId = idOf({ kind: 'host_stale', host: h.host, serviceId: null });
    const hostDown = (h.session !== undefined && h.session !== 'connected') || raised(hostId);
    mark(this.hosts, h.host, hostDown, now);
    for (const s of h.services) {
      const id = idOf({ kind: 'service_down', host: h.host, serviceId: s.serviceId });
      const down = (h.session === 'connected' && s.health === 'down' && s.asleep !== true) || raised(id);
      mark(this.services, upstreamKey(h.host, s.serviceId), down, now);
      if (s.proxy != null) mark(this.drains, upstreamKey(h.host, s.serviceId), s.proxy.state === 'draining', now);
    }
  }

  /**
   * Whether a lifecycle action holds what the service's figures say: while it drains (an approved restart
   * or sleep), and for `holdMs` after for the windowed figures (the proxy's error window counts the drain's
   * refusals). service_down is held during the drain only: a restart that failed pages at once.
   */
  drainHolds(host: string, serviceId: string, kind: string, now: number): boolean {
    const d = this.drains.get(upstreamKey(host, serviceId));
    if (d === undefined) return false;
    return d.endedAt === null || (kind !== 'service_down' && now - d.endedAt < this.holdMs);
  }

  /** The root alert id a service's alert of `kind` belongs to now; undefined when it is its own cause. */
  rootOf(host: string, serviceId: string | null, kind: string, now: number): string | undefined {
    if (serviceId === null) return undefined;
    if (this.holds(this.hosts.get(host), now)) return idOf({ kind: 'host_stale', host, serviceId: null });
    if (kind !== 'service_down' && this.holds(this.services.get(upstreamKey(host, serviceId)), now)) return idOf({ kind: 'service_down', host, serviceId });
    return undefined;
  }

  private holds(root: Root | undefined, now: number): boolean {
    return root !== undefined && (root.endedAt === null || now - root.endedAt < this.holdMs);
  }
}

function mark(roots: Map<string, Root>, key: string, down: boolean, now: number): void {
  const r = roots.get(key);
  if (down) roots.set(key, { endedAt: null });
  else if (r !== undefined && r.endedAt === null) r.endedAt = now;
}
