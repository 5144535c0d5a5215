import { readLlamaServerMetrics, type LlamaServerMetrics } from './llama-server-metrics.js';
import type { MetricFamily } from './prometheus.js';
import { emptyServiceReading, type ServiceReading } from './readings.js';
import { readSglangMetrics, serviceReadingFromSglang } from './sglang-metrics.js';
import { readTeiMetrics, serviceReadingFromTei } from './tei-metrics.js';
import { readVllmMetrics, type VllmMetrics } from './vllm-metrics.js';

// A `/metrics` scrape alone, as a ServiceReading: what a poller that reads only
// /metrics (the fleet's service monitor) hands to the ServiceDeriver. The HTTP
// sources add what the other endpoints say (health, version, slots).

export function serviceReadingFromVllm(m: VllmMetrics): ServiceReading {
  return {
    ...emptyServiceReading('vllm'),
    modelName: m.modelName,
    sleepState: m.sleepState,
    running: m.running,
    waiting: m.waiting,
    kvCacheUsage: m.kvCacheUsage,
    kvCapacityTokens: m.kvCapacityTokens,
    promptTokensTotal: m.promptTokensTotal,
    generationTokensTotal: m.generationTokensTotal,
    prefixCacheQueries: m.prefixCacheQueries,
    prefixCacheHits: m.prefixCacheHits,
    requestsFinishedTotal: m.requestsFinishedTotal,
    ttft: m.ttft,
    itl: m.itl,
    e2e: m.e2e,
    engineCount: m.engineCount,
    perEngine:
      m.perEngine?.map((e) => ({
        engine: e.engine,
        running: e.running,
        waiting: e.waiting,
        kvCacheUsage: e.kvCacheUsage,
        generationTokensTotal: e.generationTokensTotal,
      })) ?? null,
    promptTokensCachedTotal: m.promptTokensCachedTotal,
    specDraftTokensTotal: m.specDraftTokensTotal,
    specAcceptedTokensTotal: m.specAcceptedTokensTotal,
  };
}

export function serviceReadingFromLlama(m: LlamaServerMetrics): ServiceReading {
  return {
    ...emptyServiceReading('llama-server'),
    running: m.running,
    waiting: m.waiting,
    promptTokensTotal: m.promptTokensTotal,
    generationTokensTotal: m.generationTokensTotal,
  };
}

/** A /metrics page's families as the reading of a server of `kind` (openai: none the console knows). */
export function serviceReadingFromFamilies(kind: ServiceReading['kind'], families: readonly MetricFamily[]): ServiceReading {
  switch (kind) {
    case 'vllm':
      return serviceReadingFromVllm(readVllmMetrics(families));
    case 'llama-server':
      return serviceReadingFromLlama(readLlamaServerMetrics(families));
    case 'sglang':
      return serviceReadingFromSglang(readSglangMetrics(families));
    case 'tei':
      return serviceReadingFromTei(readTeiMetrics(families), null);
    case 'openai':
      return emptyServiceReading('openai');
  }
}
