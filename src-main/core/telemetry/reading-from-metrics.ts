import type { LlamaServerMetrics } from './llama-server-metrics.js';
import { emptyServiceReading, type ServiceReading } from './readings.js';
import type { VllmMetrics } from './vllm-metrics.js';

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
