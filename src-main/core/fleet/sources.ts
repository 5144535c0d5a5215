import { healthPathOf, type HostConfig, type ServiceConfig } from '../config/index.js';
import type { Clock, OnPremGuard } from '../base/index.js';
import { upstreamKey, type UpstreamClient } from '../upstream/index.js';
import {
  AmdGpuSource,
  LlamaServerHttpSource,
  NvidiaSmiSource,
  OpenAiHealthSource,
  SglangHttpSource,
  TeiHttpSource,
  VllmHttpSource,
  httpGetFor,
  type ExecRunner,
  type HttpGet,
  type GpuToolKind,
  type SourceReading,
  type TelemetrySource,
} from '../telemetry/index.js';

// Which telemetry sources a host runs (ARCHITECTURE §8): one GPU source per
// vendor tool, one per model service by kind. The fleet owns the sessions and
// tunnels; the sources only read through what they are handed.

export interface ScrapeSettings {
  timeoutMs: number;
  maxBytes: number;
  /** Counts (and refuses) the operator's Test when its public URL is off this machine (tunnel clients are on it by construction). */
  offPrem?: OnPremGuard;
}

export interface PollSettings extends ScrapeSettings {
  execTimeoutMs: number;
}

/**
 * A service's source as the fleet sees it: `reset` when the server behind it
 * went away (live counters start afresh); `backfill` when it can read the
 * recent past (Prometheus: one range query), to seed the windowed figures;
 * `detail` says what it reads.
 */
export type ServiceSource = TelemetrySource & {
  reset?(): void;
  backfill?(options: { windowMs: number }): Promise<SourceReading[]>;
  readonly detail?: string;
};

/** The HTTP source of a service, reading through its tunnel's client. */
export function tunnelServiceSource(
  host: HostConfig,
  service: ServiceConfig,
  client: UpstreamClient,
  clock: Clock,
  settings: ScrapeSettings,
  /** The host's collector may answer the reads instead of the tunnel (fleet/collector.ts). */
  route: (tunnel: HttpGet) => HttpGet = (tunnel) => tunnel,
): ServiceSource {
  const get = route(httpGetFor(client, { timeoutMs: settings.timeoutMs }));
  const options = { id: upstreamKey(host.label, service.id), get, clock, maxBytes: settings.maxBytes };
  switch (service.kind) {
    case 'vllm':
      return new VllmHttpSource(options);
    case 'llama-server':
      return new LlamaServerHttpSource({ ...options, model: service.model });
    case 'sglang':
      return new SglangHttpSource({ ...options, healthPath: healthPathOf(service) });
    case 'tei':
      return new TeiHttpSource({ ...options, healthPath: healthPathOf(service) });
    case 'openai':
      return new OpenAiHealthSource({ ...options, healthPath: healthPathOf(service) });
  }
}

/** The GPU source of a host for one tool, over the host's SSH exec. */
export function execGpuSource(host: HostConfig, tool: GpuToolKind, exec: ExecRunner, clock: Clock, settings: PollSettings): TelemetrySource {
  const options = { id: `${host.label}/gpus`, exec, clock, timeoutMs: settings.execTimeoutMs, maxOutputBytes: 256 * 1024 };
  return tool === 'nvidia-smi' ? new NvidiaSmiSource(options) : new AmdGpuSource({ ...options, tool });
}

/** What each source reads, for the "where from" line of the UI. */
export const SOURCE_DETAIL: Record<string, string> = {
  vllm: 'GET /metrics, /health, /is_sleeping, /version, /v1/models',
  'llama-server': 'GET /health, /slots, /props, /metrics, /models',
  sglang: 'GET /metrics, /health, /v1/models, /get_server_info',
  tei: 'GET /metrics, /health, /info',
  openai: 'GET /v1/models (health only)',
  'nvidia-smi': 'nvidia-smi --query-gpu, --query-compute-apps',
  'amd-smi': 'amd-smi metric --json',
  'rocm-smi': 'rocm-smi --json',
  'amd-sysfs': '/sys/class/drm/card*/device (mem_info_*, gpu_busy_percent, hwmon)',
};
