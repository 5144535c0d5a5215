// A real FleetResolver over a fake fleet: the proxy's refusals for hosts that
// reconnect, wait for trust, changed their key or failed, and for services that
// sleep, come from the resolver's own calibration, not from a hand-written
// Unavailable. The fleet is one host with one service, as a FleetSnapshot.
import type { FleetSnapshot, HostView, ServiceView } from '../../../src-preload/contract/index.js';
import { silentLogger, systemClock, type Clock } from '../../../src-main/core/base/index.js';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { FleetResolver } from '../../../src-main/core/proxy/fleet-resolver.js';
import type { WakeEstimates } from '../../../src-main/core/proxy/index.js';
import { urlClient } from '../../helpers/upstream.js';
import { fleetStateOf } from '../../helpers/fleet-state.js';

export function serviceView(id: string, patch: Partial<ServiceView> = {}): ServiceView {
  return {
    id,
    kind: 'vllm',
    model: 'M',
    aliases: [],
    slots: 4,
    remotePort: 8000,
    tunnel: { state: 'up', localUrl: null, lastError: null },
    health: 'ok',
    sleep: 'awake',
    requestsRunning: 0,
    requestsWaiting: 0,
    kvCachePct: null,
    generationTokensPerS: null,
    promptTokensPerS: null,
    stale: false,
    staleReason: null,
    sleepControl: 'manual',
    ...patch,
  };
}

export function hostView(label: string, services: ServiceView[], patch: Partial<HostView> = {}): HostView {
  return {
    label,
    address: '127.0.0.1',
    state: 'connected',
    lastError: null,
    nextRetryAt: null,
    hostKeyFingerprint: 'SHA256:test',
    hostKey: null,
    gpuModel: null,
    pricePerHourUsd: null,
    gpus: [],
    gpuStale: false,
    gpuStaleReason: null,
    services,
    updatedAt: null,
    ...patch,
  };
}

export interface FakeFleetOptions {
  /** Where the service's tunnel listens (a stub upstream). */
  url: string;
  label?: string;
  serviceId?: string;
  host?: Partial<HostView>;
  service?: Partial<ServiceView>;
  /** False: the tunnel has no listener (FleetService.upstream throws, as it does then). */
  tunnelOpen?: boolean;
  /** Wake estimates; default: none measured. */
  estimates?: WakeEstimates;
  /** A standing approval to wake on request; default none. */
  wakeAllowed?: boolean;
  clock?: Clock;
}

export interface FakeFleet {
  resolver: FleetResolver;
  snapshot: FleetSnapshot;
  /** Upstreams a request asked to wake (FleetResolver.requestWake → onDidWantWake). */
  wakeRequests: string[];
}

export function fakeFleet(o: FakeFleetOptions): FakeFleet {
  const label = o.label ?? 'h';
  const serviceId = o.serviceId ?? 's';
  const clock = o.clock ?? systemClock;
  // FleetResolver reads only the service's client from the fleet; the rest comes from the snapshot it remembers.
  const fleet: Pick<FleetService, 'upstream'> = {
    upstream: (key) => {
      if (o.tunnelOpen === false || key !== `${label}/${serviceId}`) throw new Error(`the tunnel to ${key} is not open`);
      return urlClient(o.url);
    },
  };
  const estimates: WakeEstimates = o.estimates ?? { expectedWakeMs: () => null, wasMeasured: () => false };
  const resolver = new FleetResolver(fleet as FleetService, estimates, { allowed: () => o.wakeAllowed ?? false }, clock, silentLogger);
  const wakeRequests: string[] = [];
  resolver.onDidWantWake((w) => wakeRequests.push(w.upstream));
  const snapshot: FleetSnapshot = { at: clock.now(), hosts: [hostView(label, [serviceView(serviceId, o.service)], o.host)] };
  resolver.remember(fleetStateOf(snapshot));
  return { resolver, snapshot, wakeRequests };
}
