import type { Histogram, SleepState } from './vllm-metrics.js';

// What a source reads in one scrape, normalised across server kinds and GPU
// vendors. Every figure that may be unknown is null — never a made-up zero.

export interface StaleReason {
  /** A TELEMETRY_* code (or the transport's own code, e.g. SSH_EXEC_TIMEOUT). */
  code: string;
  message: string;
  atMs: number;
}

export type ServiceHealth = 'ok' | 'loading' | 'down' | 'unknown';

export interface ServiceReading {
  kind: 'vllm' | 'llama-server';
  modelName: string | null;
  version: string | null;
  health: ServiceHealth;
  sleepState: SleepState;
  running: number | null;
  waiting: number | null;
  /** 0..1, averaged across data-parallel engines. */
  kvCacheUsage: number | null;
  kvCapacityTokens: number | null;
  /** Tokens held in the KV cache when the server says so directly (llama-server slots); else derived. */
  kvTokensInUse: number | null;
  /** Serving context length: vLLM max_model_len, llama-server per-slot n_ctx. */
  maxModelLen: number | null;
  promptTokensTotal: number | null;
  generationTokensTotal: number | null;
  prefixCacheQueries: number | null;
  prefixCacheHits: number | null;
  /** Finished requests (all reasons), a counter. */
  requestsFinishedTotal: number | null;
  ttft: Histogram | null;
  itl: Histogram | null;
  e2e: Histogram | null;
  engineCount: number;
}

export interface GpuProcess {
  pid: number | null;
  name: string | null;
  usedMemoryMiB: number | null;
}

export interface GpuReading {
  index: number;
  uuid: string | null;
  name: string;
  vendor: 'nvidia' | 'amd';
  memoryUsedMiB: number | null;
  memoryTotalMiB: number | null;
  utilizationPct: number | null;
  powerW: number | null;
  powerLimitW: number | null;
  temperatureC: number | null;
  /** null when unknown (field not queried / not supported). */
  migEnabled: boolean | null;
  /** null when processes were not read in this scrape. */
  processes: GpuProcess[] | null;
}

export type SourceReading =
  | {
      ok: true;
      atMs: number;
      service?: ServiceReading;
      gpus?: GpuReading[];
      /** Lines / items the parsers could not read (a partial result is still ok). */
      unreadable: number;
    }
  | { ok: false; atMs: number; stale: StaleReason };

export function emptyServiceReading(kind: ServiceReading['kind']): ServiceReading {
  return {
    kind,
    modelName: null,
    version: null,
    health: 'unknown',
    sleepState: 'unknown',
    running: null,
    waiting: null,
    kvCacheUsage: null,
    kvCapacityTokens: null,
    kvTokensInUse: null,
    maxModelLen: null,
    promptTokensTotal: null,
    generationTokensTotal: null,
    prefixCacheQueries: null,
    prefixCacheHits: null,
    requestsFinishedTotal: null,
    ttft: null,
    itl: null,
    e2e: null,
    engineCount: 1,
  };
}
