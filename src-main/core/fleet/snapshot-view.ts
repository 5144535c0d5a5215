// The edge: the contract's FleetSnapshot / HostView / ServiceView / GpuView,
// built from the fleet's own state for the channels (`fleet.snapshot`), the
// `fleet.tick` event and the bridges. Nothing inside the console reads these
// shapes (test/unit/architecture/fleet-state.test.ts): a field added here for a
// screen cannot become a routing or verification input.
import type { EngineView, ErrorSummary, FleetSnapshot, GpuView, HostView, ServiceView } from '../../../src-preload/contract/index.js';
import type { GpuReading } from '../telemetry/index.js';
import { causeText, type FleetState, type HostSessionState, type HostState, type ServiceState } from './state.js';
import { faultsOnGpu, gpuProcessesViewOf, healthViewOf, processesOnGpu } from './health-view.js';

const round1 = (v: number | null): number | null => (v === null ? null : Math.round(v * 10) / 10);

export function fleetSnapshotOf(state: FleetState): FleetSnapshot {
  return { at: state.at, hosts: state.hosts.map(hostViewOf) };
}

export function hostViewOf(h: HostState): HostView {
  const { ssh } = h.config;
  const s = h.session;
  return {
    label: h.label,
    address: `${ssh.user}@${ssh.host}:${ssh.port}`,
    state: s.state,
    lastError: s.lastError,
    nextRetryAt: s.nextRetryAt,
    hostKeyFingerprint: s.hostKeyFingerprint,
    hostKey: s.trustProblem ? { ...s.trustProblem, knownFingerprints: [...s.trustProblem.knownFingerprints] } : null,
    credentialPrompt: s.credentialPrompt,
    jumpHost: ssh.jumpHost ?? null,
    ...(s.transport ? { transport: { ...s.transport, effective: s.transport.effective ? { ...s.transport.effective } : null } } : {}),
    gpuModel: h.config.gpu?.model ?? h.gpus.readings[0]?.name ?? null,
    pricePerHourUsd: h.config.pricePerHourUsd ?? null,
    gpus: h.gpus.readings.map((g) => faultsOnGpu(processesOnGpu(gpuViewOf(g), h.gpuProcesses), h.health?.faults)),
    gpuStale: h.gpus.stale !== null,
    gpuStaleReason: causeText(h.gpus.stale),
    gpuVendor: h.gpus.vendor,
    gpuSource: h.gpus.source ? { ...h.gpus.source } : null,
    ...(h.gpus.issues.length > 0 ? { gpuIssues: [...h.gpus.issues] } : {}),
    ...(h.health ? { health: healthViewOf(h.health) } : {}),
    ...(h.gpuProcesses ? { gpuProcesses: gpuProcessesViewOf(h.gpuProcesses) } : {}),
    services: h.services.map((svc) => serviceViewOf(svc, h.session)),
    updatedAt: h.updatedAt,
    ...(h.config.tags && Object.keys(h.config.tags).length > 0 ? { tags: { ...h.config.tags } } : {}),
    read: { mode: h.read.mode, reason: causeText(h.read.reason), clockSkewS: h.read.clockSkewS },
  };
}

export function gpuViewOf(g: GpuReading): GpuView {
  const view: GpuView = {
    index: g.index,
    uuid: g.uuid,
    name: g.name,
    memoryUsedMiB: g.memoryUsedMiB,
    memoryTotalMiB: g.memoryTotalMiB,
    utilizationPct: g.utilizationPct,
    powerW: g.powerW,
    powerLimitW: g.powerLimitW,
    temperatureC: g.temperatureC,
    vendor: g.vendor,
  };
  if (g.gttUsedMiB !== undefined || g.gttTotalMiB !== undefined) {
    view.gttUsedMiB = g.gttUsedMiB ?? null;
    view.gttTotalMiB = g.gttTotalMiB ?? null;
  }
  return view;
}

/** `session`: the host's, whose error a tunnel shows while SSH is down. */
export function serviceViewOf(s: ServiceState, session: Pick<HostSessionState, 'state' | 'lastError'>): ServiceView {
  const c = s.config;
  const probe = s.tunnel.probe;
  const probeError: ErrorSummary | null = probe && !probe.ok && probe.error ? { ...probe.error, at: probe.at } : null;
  const test = s.tunnel.lastTest;
  return {
    id: c.id,
    kind: c.kind,
    model: c.model,
    aliases: [...c.aliases],
    slots: c.slots,
    remotePort: c.remotePort,
    tunnel: {
      state: s.tunnel.state,
      localUrl: s.tunnel.localUrl,
      lastError: s.tunnel.listenError ?? probeError ?? (session.state === 'connected' ? null : session.lastError),
      lastProbe: probe ? { ...probe, error: probe.error ? { ...probe.error } : null } : null,
      lastTest: test ? { ...test, steps: test.steps.map((st) => ({ ...st })), error: test.error ? { ...test.error } : null } : null,
      nextRetryAt: s.tunnel.nextRetryAt,
    },
    health: s.health,
    ...figuresView(s),
    ...(s.loadingSince !== null ? { loadingSince: s.loadingSince } : {}),
    ...(s.issues.length > 0 ? { issues: [...s.issues] } : {}),
    stale: s.stale !== null,
    staleReason: causeText(s.stale),
  };
}

type FigureFields = Omit<ServiceView, 'id' | 'kind' | 'model' | 'aliases' | 'slots' | 'remotePort' | 'tunnel' | 'health' | 'stale' | 'staleReason'>;

/**
 * The one mapper from a reading (and its derived figures) to the figures of a service view. The last good
 * figures stay (with `stale` set) when a reading fails; before the first one, every figure is null — never a
 * made-up zero.
 */
export function figuresView(s: ServiceState): FigureFields {
  const { reading, figures } = s;
  const router = reading?.routerModels ?? null;
  const perEngine: EngineView[] | undefined =
    figures?.perEngine && figures.perEngine.length > 1
      ? figures.perEngine.map((e) => ({
          engine: e.engine,
          requestsRunning: e.running,
          requestsWaiting: e.waiting,
          kvCachePct: round1(e.kvCachePct),
          generationTokensPerS: e.genTokPerS,
        }))
      : undefined;
  return {
    sleep: s.sleep,
    requestsRunning: figures?.running ?? reading?.running ?? null,
    requestsWaiting: figures?.waiting ?? reading?.waiting ?? null,
    kvCachePct: round1(figures?.kvCachePct ?? null),
    generationTokensPerS: figures?.genTokPerS ?? null,
    promptTokensPerS: figures?.promptTokPerS ?? null,
    source: s.source ? { ...s.source } : null,
    version: reading?.version ?? null,
    kvCacheEstimated: reading?.kvEstimated ?? false,
    sleepControl: s.sleepControl,
    slotsReported: reading?.slotsReported ?? null,
    engines: reading ? reading.engineCount : null,
    ...(perEngine ? { perEngine } : {}),
    prefixHitPct: round1(figures?.prefixHitPct ?? null),
    prefixHitScope: figures?.prefixHitScope ?? null,
    promptCacheReusePct: round1(figures?.promptCacheReusePct ?? null),
    specAcceptancePct: round1(figures?.specAcceptancePct ?? null),
    rateBasis: figures?.rateBasis ?? null,
    routerModels: router ? router.map((m) => ({ ...m })) : null,
  };
}
