import type { ServiceHealth, ServiceKind, SleepState } from '../../../src-preload/contract/index.js';
import type { Histogram } from './vllm-metrics.js';

// What a source reads in one scrape, normalised across server kinds and GPU
// vendors. Every figure that may be unknown is null — never a made-up zero.

export interface StaleReason {
  /** A TELEMETRY_* code (or the transport's own code, e.g. SSH_EXEC_TIMEOUT). */
  code: string;
  message: string;
  atMs: number;
}

export type { ServiceHealth };

export interface ServiceReading {
  kind: ServiceKind;
  modelName: string | null;
  /**
   * The model file or folder the server says it loaded (llama-server /props model_path; vLLM
   * /v1/models root when it is a path, not a hub id). Host health learns the model cache from it.
   */
  modelPath?: string | null;
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
  /** vLLM data-parallel engines, one entry per `engine` label; null when the label is absent. */
  perEngine: EngineReading[] | null;
  /** Prompt tokens served from the prefix / prompt cache, a counter (vLLM prompt_tokens_cached_total). */
  promptTokensCachedTotal: number | null;
  /** Speculative decoding counters (null when no drafts are configured). */
  specDraftTokensTotal: number | null;
  specAcceptedTokensTotal: number | null;
  /** KV use is an estimate (llama-server /slots context ÷ n_ctx), not the server's own gauge. */
  kvEstimated: boolean;
  /** Slots the server reports (llama-server total_slots / number of /slots entries). */
  slotsReported: number | null;
  /**
   * Token counters include the progress of running requests (llama-server: the
   * finished-request counters plus /slots n_decoded / n_prompt_tokens_processed
   * of the slots processing now), so a rate shows what is generated now.
   */
  countersIncludeLive: boolean;
  /** Share of the running requests' prompt tokens that came from the prompt cache (0..1); null when unknown. */
  promptCacheReuse: number | null;
  /** llama-server router mode (`GET /models`); null when not in router mode. */
  routerModels: { id: string; status: RouterModelStatus }[] | null;
}

export type RouterModelStatus = 'unloaded' | 'loading' | 'loaded' | 'sleeping' | 'downloading' | 'failed' | 'unknown';

export interface EngineReading {
  engine: string;
  running: number | null;
  waiting: number | null;
  /** 0..1 */
  kvCacheUsage: number | null;
  generationTokensTotal: number | null;
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
  /** AMD: GTT (system memory mapped for the GPU; most of an APU's model memory). */
  gttUsedMiB?: number | null;
  gttTotalMiB?: number | null;
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
      /** Why some figures are unknown in this partial reading, `CODE: message` each (at most a few). */
      issues?: string[];
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
    perEngine: null,
    promptTokensCachedTotal: null,
    specDraftTokensTotal: null,
    specAcceptedTokensTotal: null,
    kvEstimated: false,
    slotsReported: null,
    countersIncludeLive: false,
    promptCacheReuse: null,
    routerModels: null,
  };
}
