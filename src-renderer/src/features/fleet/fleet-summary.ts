// Fleet-wide figures for the summary strip. Sums are over known values only;
// if nothing is known the figure stays unknown (null), not zero.
import type { FleetSnapshot } from '../../../../src-preload/contract/index.js';

export interface FleetTotals {
  readonly hosts: number;
  readonly connected: number;
  readonly gpus: number;
  readonly services: number;
  readonly awake: number;
  readonly running: number | null;
  readonly waiting: number | null;
  readonly generationTokensPerS: number | null;
  readonly pricePerHourUsd: number | null;
}

function addKnown(sum: number | null, value: number | null): number | null {
  if (value === null || !Number.isFinite(value)) return sum;
  return (sum ?? 0) + value;
}

export function fleetTotals(snapshot: FleetSnapshot | null): FleetTotals {
  let connected = 0;
  let gpus = 0;
  let services = 0;
  let awake = 0;
  let running: number | null = null;
  let waiting: number | null = null;
  let tokens: number | null = null;
  let price: number | null = null;
  for (const host of snapshot?.hosts ?? []) {
    if (host.state === 'connected') connected++;
    gpus += host.gpus.length;
    price = addKnown(price, host.pricePerHourUsd);
    for (const service of host.services) {
      services++;
      if (service.sleep === 'awake') awake++;
      if (service.stale) continue;
      running = addKnown(running, service.requestsRunning);
      waiting = addKnown(waiting, service.requestsWaiting);
      tokens = addKnown(tokens, service.generationTokensPerS);
    }
  }
  return {
    hosts: snapshot?.hosts.length ?? 0,
    connected,
    gpus,
    services,
    awake,
    running,
    waiting,
    generationTokensPerS: tokens,
    pricePerHourUsd: price,
  };
}
