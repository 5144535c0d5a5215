// Test fakes of the fleet's state, written as the UI's view. Many tests describe
// a fleet by what the screen shows (a service `asleep-1`, 3 requests running,
// stale with a reason); the console's capabilities read the fleet's own
// FleetState. `fleetStateOf` turns such a view into the state a FleetService
// would hold for it, so a fake keeps its view and the code under test reads
// typed fields: the view's figures become the state's derived figures (the
// last reading's gauges), its `CODE: message` reasons become coded causes,
// and a service view without `source` is taken as read at the snapshot's time.
import type { FleetSnapshot, HostView, ServiceView } from '../../src-preload/contract/index.js';
import type { HostConfig, ServiceConfig } from '../../src-main/core/config/index.js';
import { sleepControlOf, sleepLevelOf, type FleetState, type HostState, type ServiceState, type StaleCause } from '../../src-main/core/fleet/index.js';
import { emptyServiceReading, type GpuReading, type ServiceFigures, type ServiceReading } from '../../src-main/core/telemetry/index.js';
import { upstreamKey } from '../../src-main/core/upstream/index.js';

/** `CODE: message` as a cause; a reason without a code keeps its words under TELEMETRY_SCRAPE_FAILED. */
function causeOf(stale: boolean | undefined, reason: string | null | undefined): StaleCause | null {
  if (!stale && !reason) return null;
  if (!reason) return stale ? { code: 'TELEMETRY_SCRAPE_FAILED', message: 'scrape failed' } : null;
  const m = /^([A-Z][A-Z0-9_]+): ([\s\S]*)$/.exec(reason);
  return m ? { code: m[1]!, message: m[2]! } : { code: 'TELEMETRY_SCRAPE_FAILED', message: reason };
}

function figuresOf(v: Partial<ServiceView>, atMs: number): ServiceFigures | null {
  const known = [v.requestsRunning, v.requestsWaiting, v.kvCachePct, v.generationTokensPerS, v.promptTokensPerS, v.prefixHitPct].some((x) => x !== undefined && x !== null);
  if (!known && v.rateBasis == null) return null;
  return {
    atMs,
    running: v.requestsRunning ?? null,
    waiting: v.requestsWaiting ?? null,
    kvCachePct: v.kvCachePct ?? null,
    kvTokensInUse: null,
    kvCapacityTokens: null,
    promptTokPerS: v.promptTokensPerS ?? null,
    genTokPerS: v.generationTokensPerS ?? null,
    requestsPerS: null,
    prefixHitPct: v.prefixHitPct ?? null,
    prefixHitScope: v.prefixHitScope ?? null,
    specAcceptancePct: v.specAcceptancePct ?? null,
    promptCacheReusePct: v.promptCacheReusePct ?? null,
    rateBasis: v.rateBasis ?? null,
    perEngine: null,
    ttftP50S: null,
    ttftP95S: null,
    ttftP95LeS: null,
    itlP50S: null,
    itlP95S: null,
    e2eP50S: null,
    e2eP95S: null,
    latencySamples: 0,
  };
}

export function serviceStateFromView(label: string, v: Partial<ServiceView> & { id: string }, at: number, connected = true): ServiceState {
  const kind = v.kind ?? 'vllm';
  const config = { id: v.id, kind, model: v.model ?? 'M', aliases: v.aliases ?? [], slots: v.slots ?? 4, remotePort: v.remotePort ?? 8000, remoteHost: '127.0.0.1', localPort: 0 } as unknown as ServiceConfig;
  const readingAt = v.source === undefined ? at : (v.source?.atMs ?? null);
  const sleep = v.sleep ?? 'unknown';
  const reading = { ...emptyServiceReading(kind), sleepState: sleep, running: v.requestsRunning ?? null, waiting: v.requestsWaiting ?? null, version: v.version ?? null, health: v.health ?? 'unknown' };
  return {
    key: upstreamKey(label, v.id),
    id: v.id,
    config,
    tunnel: {
      state: v.tunnel?.state ?? (connected ? 'up' : 'reconnecting'),
      localUrl: v.tunnel?.localUrl ?? null,
      listenError: null,
      probe: v.tunnel?.lastProbe ? { ...v.tunnel.lastProbe } : null,
      lastTest: null,
      nextRetryAt: v.tunnel?.nextRetryAt ?? null,
    },
    health: v.health ?? 'unknown',
    sleep,
    sleepLevel: sleepLevelOf(sleep),
    sleepControl: v.sleepControl ?? 'manual',
    loadingSince: v.loadingSince ?? null,
    reading,
    readingAt,
    figures: figuresOf(v, readingAt ?? at),
    stale: causeOf(v.stale, v.staleReason),
    issues: v.issues ?? [],
    source: v.source ? { ...v.source } : v.source === null ? null : { kind, atMs: at, detail: null },
    throughTunnel: true,
  };
}

export function hostStateFromView(v: Partial<HostView> & { label: string }, at: number): HostState {
  const state = v.state ?? 'connected';
  const config = { label: v.label, ssh: { user: 'u', host: '127.0.0.1', port: 22 }, services: [], pricePerHourUsd: v.pricePerHourUsd ?? undefined } as unknown as HostConfig;
  return {
    label: v.label,
    config,
    session: {
      state,
      lastError: v.lastError ?? null,
      nextRetryAt: v.nextRetryAt ?? null,
      // A view says nothing of the link's failures: no expectation (the resolver holds as it did).
      recovery: null,
      hostKeyFingerprint: v.hostKeyFingerprint ?? null,
      trustProblem: v.hostKey ?? null,
      credentialPrompt: v.credentialPrompt ?? null,
      transport: null,
    },
    gpus: {
      readings: (v.gpus ?? []).map((g) => ({ migEnabled: null, processes: null, ...g }) as GpuReading),
      stale: causeOf(v.gpuStale, v.gpuStaleReason),
      vendor: v.gpuVendor ?? null,
      tool: null,
      source: v.gpuSource ? { ...v.gpuSource } : null,
      issues: v.gpuIssues ?? [],
    },
    health: null,
    gpuProcesses: null,
    services: (v.services ?? []).map((s) => serviceStateFromView(v.label, s, at, state === 'connected')),
    updatedAt: v.updatedAt ?? null,
    read: readStateFromView(v.read),
  };
}

/** The view's `CODE: message` back into the fleet's cause (a view without `read` was not probed yet). */
function readStateFromView(r: HostView['read']): HostState['read'] {
  const cut = r?.reason?.indexOf(': ') ?? -1;
  const reason = r?.reason ? (cut > 0 ? { code: r.reason.slice(0, cut), message: r.reason.slice(cut + 2) } : { code: r.reason, message: '' }) : null;
  return { mode: r?.mode ?? 'probing', reason, clockSkewS: r?.clockSkewS ?? null };
}

/** The fleet's state for a snapshot written as the UI sees it (fields a fake leaves out are unknown). */
export function fleetStateOf(snapshot: { at: number; hosts: readonly (Partial<HostView> & { label: string })[] } | FleetSnapshot): FleetState {
  return { at: snapshot.at, hosts: snapshot.hosts.map((h) => hostStateFromView(h, snapshot.at)) };
}

/** A service's state from one reading and its derived figures, as the fleet's monitor holds it after that reading. */
export function serviceStateFromReading(
  label: string,
  config: ServiceConfig,
  reading: ServiceReading,
  figures: ServiceFigures | null,
  source: { kind: string; detail?: string },
  readingAt: number,
): ServiceState {
  const kind = source.kind === 'prometheus-api' ? 'prometheus' : config.kind;
  return {
    key: upstreamKey(label, config.id),
    id: config.id,
    config,
    tunnel: { state: 'up', localUrl: null, listenError: null, probe: null, lastTest: null, nextRetryAt: null },
    health: reading.health,
    sleep: reading.sleepState,
    sleepLevel: sleepLevelOf(reading.sleepState),
    sleepControl: sleepControlOf(config.kind, reading),
    loadingSince: null,
    reading,
    readingAt,
    figures,
    stale: null,
    issues: [],
    source: { kind, atMs: readingAt, detail: source.detail ?? null },
    throughTunnel: true,
  };
}
