// What the alert rules read of one telemetry tick: per service its generation
// rate, running and waiting requests, KV-cache use, inter-token latency, its
// health and the proxy's figures for it; per host its SSH session and GPU
// temperatures. Optional fields are unknown when absent: a rule that needs
// one reads nothing (raises nothing, clears nothing).
import {
  gpuSeries,
  parseSeriesName,
  serviceSeries,
  type HostConnectionState,
  type ServiceFigure,
  type ServiceHealth,
  type TrafficClass,
  type UpstreamFigures,
} from '../../../src-preload/contract/index.js';

export interface ProxyClassTick {
  readonly class: TrafficClass;
  readonly waitP95Ms: number | null;
  readonly ttftP95Ms: number | null;
  /** Answers per second over the last minute (how many samples the p95s stand on). */
  readonly requestsPerS: number;
  readonly holdBudgetMs?: number;
}

/** The proxy's figures for one upstream (the contract's UpstreamFigures satisfies it). */
export interface ProxyTick {
  /** `draining`: a lifecycle action (restart, sleep) holds admission while it runs; the server is down on purpose. */
  readonly state?: string;
  readonly errors?: { readonly windowMs: number; readonly answered: number; readonly failed: number };
  readonly stalled?: readonly { readonly class: TrafficClass; readonly inFlightMs: number; readonly sinceByteMs: number }[];
  readonly classes: readonly ProxyClassTick[];
}

export interface ServiceTick {
  serviceId: string;
  model: string | null;
  genTokPerS: number | null;
  running: number | null;
  waiting: number | null;
  kvCachePct: number | null;
  /** Median inter-token latency (s), the server's own per-sequence figure (vLLM's histogram); null or absent when it has none. */
  itlP50S?: number | null;
  /** As the server answers it; absent when not known. */
  health?: ServiceHealth;
  /** Asleep on purpose (sleep level 1 or 2): not down, not slow. */
  asleep?: boolean;
  /** The proxy's figures for this upstream; absent when the proxy has none. */
  proxy?: ProxyTick | null;
}

export interface GpuTick {
  index: number;
  tempC: number | null;
  /** The driver's critical temperature when it reports one (AMD hwmon). */
  criticalC: number | null;
}

export interface HostAlertTick {
  host: string;
  /** `CODE: message` when the host's telemetry is stale this tick. */
  staleReason: string | null;
  /** The SSH session; absent when not known. */
  session?: HostConnectionState;
  services: ServiceTick[];
  gpus?: GpuTick[];
}

/** Parsed series names: the same few dozen names come every tick, so each is parsed once (bounded: cleared when it grows past any fleet's size). */
const parsedNames = new Map<string, ReturnType<typeof parseSeriesName>>();
function parsedName(k: string): ReturnType<typeof parseSeriesName> {
  let p = parsedNames.get(k);
  if (p === undefined) {
    if (parsedNames.size > 50_000) parsedNames.clear();
    parsedNames.set(k, (p = parseSeriesName(k)));
  }
  return p;
}

/** A telemetry tick (contract values) → alert input, reading `svc.<id>.*` and `gpu.<i>.temp_c` series names. */
export function alertTickFromValues(
  host: string,
  staleReason: string | null,
  values: Readonly<Record<string, number | null>>,
  modelOf: (serviceId: string) => string | null,
): HostAlertTick {
  const ids = new Set<string>();
  const gpus = new Set<number>();
  for (const k in values) {
    const name = parsedName(k);
    if (name?.scope === 'svc') ids.add(name.serviceId);
    else if (name?.scope === 'gpu' && name.figure === 'temp_c') gpus.add(name.index);
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
      itlP50S: v(id, 'itl_p50_s'),
    })),
    gpus: [...gpus].map((index) => ({ index, tempC: values[gpuSeries(index, 'temp_c')] ?? null, criticalC: null })),
  };
}

/** What the tick adds from the fleet's state of the host (the fleet's HostState satisfies it). */
export interface AlertHostReadings {
  readonly session: { readonly state: HostConnectionState };
  readonly services: readonly { readonly id: string; readonly health?: ServiceHealth; readonly sleepLevel?: 0 | 1 | 2 | null }[];
  readonly health?: { readonly faults: { readonly gpus: readonly { readonly gpuIndex: number; readonly temperatureCriticalC?: number | null }[] } | null } | null;
}

/** Adds the session, each service's health and sleep, the proxy's figures and the GPUs' critical temperatures. */
export function withReadings(tick: HostAlertTick, host: AlertHostReadings, proxy: readonly UpstreamFigures[]): HostAlertTick {
  const crit = new Map((host.health?.faults?.gpus ?? []).map((g) => [g.gpuIndex, g.temperatureCriticalC ?? null]));
  return {
    ...tick,
    session: host.session.state,
    gpus: (tick.gpus ?? []).map((g) => ({ ...g, criticalC: crit.get(g.index) ?? null })),
    services: tick.services.map((s) => {
      const state = host.services.find((x) => x.id === s.serviceId);
      const up = proxy.find((u) => u.label === tick.host && u.serviceId === s.serviceId);
      return {
        ...s,
        ...(state?.health !== undefined ? { health: state.health } : {}),
        asleep: state?.sleepLevel === 1 || state?.sleepLevel === 2,
        proxy: up ?? null,
      };
    }),
  };
}
