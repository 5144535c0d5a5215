// What the fleet publishes inside the console: its own typed model, not the
// UI's. The proxy routes by it, telemetry records its numbers, lifecycle drains
// and verifies against it, the report reads its last readings. The contract's
// FleetSnapshot is built from it once, at the edge (snapshot-view.ts), so a
// field added for a screen never becomes a routing or verification input.
// Immutable: a new object per change, so a consumer may compare by identity.
import type { CredentialPrompt, ErrorSummary, FigureSource, HostConnectionState, ServiceHealth, SleepState, TunnelState } from '../../../src-preload/contract/index.js';
import type { HostConfig, ServiceConfig } from '../config/index.js';
import type { HostKeyProblem, RecoveryExpectation, SshTransportInfo } from '../ssh/index.js';
import type { GpuReading, GpuToolKind, ServiceFigures, ServiceReading } from '../telemetry/index.js';
import type { UpstreamKey } from '../upstream/index.js';
import type { ProbeResult, TunnelTestResult } from './tunnel-probe.js';
import type { HostHealthState } from './host-health.js';
import type { HostReadState } from './collector.js';
import type { MatchedGpuProcess, ProcessFlag } from './gpu-process-match.js';

/** Why a figure is not current: the coded cause (FLEET_*, SSH_*, UPSTREAM_*, TELEMETRY_*), never a sentence to match. */
export interface StaleCause {
  readonly code: string;
  readonly message: string;
}

/** Where a group of figures was read, and when. */
export interface ReadingSource {
  /** The tool or server kind (`nvidia-smi`, `vllm`…), or `prometheus` when read from one. */
  readonly kind: FigureSource['kind'];
  readonly detail: string | null;
  readonly atMs: number | null;
}

export interface TunnelStatus {
  readonly state: TunnelState;
  /** The public port apps and operators use; null while no listener. */
  readonly localUrl: string | null;
  /** Why the listener could not open; null otherwise. */
  readonly listenError: ErrorSummary | null;
  /** The last end-to-end probe (GET /v1/models) since SSH (re)connected; its error code is typed (FLEET_PROBE_TIMEOUT…). */
  readonly probe: ProbeResult | null;
  readonly lastTest: TunnelTestResult | null;
  /** When SSH tries again, while it reconnects. */
  readonly nextRetryAt: number | null;
}

export interface ServiceState {
  readonly key: UpstreamKey;
  readonly id: string;
  readonly config: ServiceConfig;
  readonly tunnel: TunnelStatus;
  /** As the server answers it; `unknown` while the host is down and the figures come through the tunnel. */
  readonly health: ServiceHealth;
  readonly sleep: SleepState;
  /** 1 or 2 while asleep, 0 awake, null unknown. */
  readonly sleepLevel: 0 | 1 | 2 | null;
  /** `automatic`: the server wakes itself on a request (llama-server --sleep-idle-seconds); `none`: it cannot sleep. */
  readonly sleepControl: 'manual' | 'automatic' | 'none';
  /** Since when the server answers that it loads its model; null otherwise. */
  readonly loadingSince: number | null;
  /** The last good reading and its own time (kept, with `stale`, while readings fail). */
  readonly reading: ServiceReading | null;
  readonly readingAt: number | null;
  /** Windowed figures derived from the readings (rates, latency percentiles, hit rates, KV tokens); last good ones while stale. */
  readonly figures: ServiceFigures | null;
  /** Why the figures are not current; null when the last reading succeeded. */
  readonly stale: StaleCause | null;
  readonly issues: readonly string[];
  readonly source: ReadingSource | null;
  /** False: the figures come from elsewhere (Prometheus) and keep coming while SSH is down. */
  readonly throughTunnel: boolean;
}

export interface HostSessionState {
  readonly state: HostConnectionState;
  /** The coded error of the last failed attempt (cleared once connected). */
  readonly lastError: ErrorSummary | null;
  readonly nextRetryAt: number | null;
  /** While down: whether the link is expected back by itself and when it is tried next (the proxy holds on it); null otherwise. */
  readonly recovery: RecoveryExpectation | null;
  readonly hostKeyFingerprint: string | null;
  /** The host key the console would not accept, waiting on a person. */
  readonly trustProblem: HostKeyProblem | null;
  readonly credentialPrompt: CredentialPrompt | null;
  readonly transport: SshTransportInfo | null;
}

export interface HostGpuState {
  readonly readings: readonly GpuReading[];
  /** Why the GPU figures are not current; null when the last read succeeded. */
  readonly stale: StaleCause | null;
  readonly vendor: 'nvidia' | 'amd' | null;
  readonly tool: GpuToolKind | null;
  readonly source: ReadingSource | null;
  readonly issues: readonly string[];
}

/** Each GPU's processes with the configured service each belongs to, and what an operator should look at. */
export interface HostGpuProcessesState {
  readonly processes: readonly MatchedGpuProcess[];
  /** Memory held by no configured service, a second listener or a stale process on a service's port. */
  readonly flags: readonly ProcessFlag[];
  /** When the GPU process list was read (nvidia-smi --query-compute-apps every few GPU polls; AMD: DRM fdinfo with the health round). */
  readonly atMs: number | null;
  /** When the process table and listeners they were matched against were read (the health round). */
  readonly matchedAtMs: number | null;
}

export interface HostState {
  readonly label: string;
  readonly config: HostConfig;
  readonly session: HostSessionState;
  readonly gpus: HostGpuState;
  /** Disk, memory, load, uptime and boot id over SSH (fleet/host-health.ts); null when health polling is off. */
  readonly health: HostHealthState | null;
  /** Null before both a GPU process list and a process table were read. */
  readonly gpuProcesses: HostGpuProcessesState | null;
  readonly services: readonly ServiceState[];
  /** When a poll last brought something current. */
  readonly updatedAt: number | null;
  /** How the host is read: one collector exec a poll, or through tunnels (and why). */
  readonly read: HostReadState;
}

export interface FleetState {
  readonly at: number;
  readonly hosts: readonly HostState[];
}

/** A service's state by its key, or null when no host has it. */
export function serviceStateOf(state: FleetState, label: string, serviceId: string): { host: HostState; service: ServiceState } | null {
  const host = state.hosts.find((h) => h.label === label);
  const service = host?.services.find((s) => s.id === serviceId);
  return host && service ? { host, service } : null;
}

export function sleepLevelOf(sleep: SleepState): 0 | 1 | 2 | null {
  return sleep === 'asleep-1' ? 1 : sleep === 'asleep-2' ? 2 : sleep === 'awake' ? 0 : null;
}

/**
 * Whether a server wakes by itself on a request: vLLM never does; llama-server does unless it routes
 * models; SGLang, TEI and other OpenAI-compatible servers have no sleep mode the console knows of.
 */
export function sleepControlOf(kind: ServiceConfig['kind'], reading: ServiceReading | null): 'manual' | 'automatic' | 'none' {
  switch (kind) {
    case 'vllm':
      return 'manual';
    case 'llama-server':
      return (reading?.routerModels ?? null) !== null ? 'manual' : 'automatic';
    case 'sglang':
    case 'tei':
    case 'openai':
      return 'none';
  }
}

/** `CODE: message`, the one way a cause is written for a person. */
export const causeText = (cause: StaleCause | null): string | null => (cause === null ? null : `${cause.code}: ${cause.message}`);
