// What the degradation rules read of one telemetry tick: per service its
// generation rate, running and waiting requests and KV-cache use.
import { parseSeriesName, serviceSeries, type ServiceFigure } from '../../../src-preload/contract/index.js';

export interface ServiceTick {
  serviceId: string;
  model: string | null;
  genTokPerS: number | null;
  running: number | null;
  waiting: number | null;
  kvCachePct: number | null;
}

export interface HostAlertTick {
  host: string;
  /** `CODE: message` when the host's telemetry is stale this tick. */
  staleReason: string | null;
  services: ServiceTick[];
}

/** A telemetry tick (contract values) → alert input, reading `svc.<id>.*` series names. */
export function alertTickFromValues(
  host: string,
  staleReason: string | null,
  values: Readonly<Record<string, number | null>>,
  modelOf: (serviceId: string) => string | null,
): HostAlertTick {
  const ids = new Set<string>();
  for (const k of Object.keys(values)) {
    const name = parseSeriesName(k);
    if (name?.scope === 'svc') ids.add(name.serviceId);
  }
  const v = (id: string, f: ServiceFigure): number | null => values[serviceSeries(id, f)] ?? null;
  return {
    host,
    staleReason,
    services: [...ids].map((id) => ({
      serviceId: id,
      model: modelOf(id),
      genTokPerS: v(id, 'gen_tok_s'),
      running: v(id, 'running'),
      waiting: v(id, 'waiting'),
      kvCachePct: v(id, 'kv_pct'),
    })),
  };
}
