// A host's GPU processes as the fleet publishes them: NVIDIA's from the GPU
// source's compute-apps query (kept between the polls that read it), AMD's
// from the health round's DRM fdinfo, each matched against the health round's
// process table and listeners. Recomputed only when one of its inputs changed.
import type { GpuProcess } from '../telemetry/index.js';
import { amdGpuProcesses, matchGpuProcesses, type GpuProcessInput, type MatchServiceInput } from './gpu-process-match.js';
import type { ParsedHealth } from './host-health-parse.js';
import type { HostGpuProcessesState } from './state.js';

/** The compute processes per GPU index as one nvidia-smi reading listed them. */
export interface GpuAppsReading {
  readonly atMs: number;
  readonly byGpu: ReadonlyMap<number, readonly GpuProcess[]>;
}

export interface GpuProcessSources {
  readonly vendor: 'nvidia' | 'amd' | null;
  readonly apps: GpuAppsReading | null;
  readonly health: ParsedHealth | null;
  readonly healthAtMs: number | null;
  readonly services: readonly MatchServiceInput[];
  readonly sshUser: string;
}

export class HostGpuProcesses {
  private key: readonly unknown[] = [];
  private last: HostGpuProcessesState | null = null;

  state(src: GpuProcessSources): HostGpuProcessesState | null {
    const key = [src.vendor, src.apps, src.health, ...src.services.map((s) => s.health)];
    if (key.length === this.key.length && key.every((k, i) => k === this.key[i])) return this.last;
    this.key = key;
    this.last = compute(src);
    return this.last;
  }
}

function compute(src: GpuProcessSources): HostGpuProcessesState | null {
  const h = src.health;
  let gpus: { index: number; processes: GpuProcessInput[] }[];
  let atMs: number | null;
  if (src.vendor === 'amd') {
    if (h?.drmClients == null || h.drmCards === null) return null;
    gpus = [...amdGpuProcesses(h.drmClients, h.drmCards, h.processes)].map(([index, processes]) => ({ index, processes }));
    atMs = src.healthAtMs;
  } else {
    if (src.apps === null) return null;
    gpus = [...src.apps.byGpu].map(([index, processes]) => ({ index, processes: [...processes] }));
    atMs = src.apps.atMs;
  }
  const matched = matchGpuProcesses({
    gpus,
    processes: h?.processes ?? null,
    listeners: h?.listeners ?? null,
    services: src.services,
    sshUser: src.sshUser,
    processListOlder: src.healthAtMs === null || (atMs !== null && src.healthAtMs < atMs),
  });
  return { processes: matched.processes, flags: matched.flags, atMs, matchedAtMs: src.healthAtMs };
}
