import { TelemetryErrorCode } from './errors.js';
import type { HttpText } from './http-scrape.js';
import { looksLikeHtml } from './json-body.js';
import { llamaHealthFromResponse, llamaSlotsTokensInUse, parseLlamaProps, parseLlamaSlots } from './llama-server-endpoints.js';
import { readLlamaServerMetrics } from './llama-server-metrics.js';
import { parsePrometheusText } from './prometheus.js';
import { emptyServiceReading, type ServiceReading, type SourceReading } from './readings.js';
import { staleFromError, staleReason, type TelemetrySource } from './source.js';
import type { HttpServiceSourceOptions } from './vllm-source.js';

const SMALL = 1024 * 1024;

async function settle(p: Promise<HttpText>): Promise<HttpText | null> {
  try {
    return await p;
  } catch {
    return null;
  }
}

/**
 * A llama-server through its tunnel: `/health` is required (503 "Loading model"
 * → stale with TELEMETRY_SERVER_LOADING), `/slots` and `/props` give running
 * requests, context and tokens in use, `/metrics` (only with `--metrics`; 501
 * otherwise) adds token counters and the deferred count.
 */
export class LlamaServerHttpSource implements TelemetrySource {
  readonly kind = 'llama-server' as const;
  readonly id: string;
  private metricsMissing = false;

  constructor(private readonly options: HttpServiceSourceOptions) {
    this.id = options.id;
  }

  async scrape(signal?: AbortSignal): Promise<SourceReading> {
    const { get, clock } = this.options;
    const maxBytes = this.options.maxBytes ?? 8 * 1024 * 1024;
    const [health, slots, props, metrics] = await Promise.allSettled([
      get('/health', { maxBytes: SMALL, signal }),
      settle(get('/slots', { maxBytes: SMALL, signal })),
      settle(get('/props', { maxBytes: SMALL, signal })),
      this.metricsMissing ? Promise.resolve(null) : settle(get('/metrics', { maxBytes, signal })),
    ]);
    const at = clock.now();
    if (health.status === 'rejected') return { ok: false, atMs: at, stale: staleFromError(health.reason, at) };
    const state = llamaHealthFromResponse(health.value.status, health.value.text);
    if (state === 'loading') {
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.SERVER_LOADING, 'llama-server is loading the model (HTTP 503)', at) };
    }
    if (state === 'down') {
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.HTTP_STATUS, `GET /health: HTTP ${health.value.status}`, at) };
    }

    let unreadable = 0;
    const service: ServiceReading = { ...emptyServiceReading('llama-server'), health: 'ok' };
    const sl = slots.status === 'fulfilled' && slots.value?.status === 200 ? parseLlamaSlots(slots.value.text) : null;
    if (slots.status === 'fulfilled' && slots.value?.status === 200 && sl === null) unreadable++;
    const pr = props.status === 'fulfilled' && props.value?.status === 200 ? parseLlamaProps(props.value.text) : null;
    if (props.status === 'fulfilled' && props.value?.status === 200 && pr === null) unreadable++;
    if (sl) {
      unreadable += sl.unreadable;
      service.running = sl.slots.filter((s) => s.isProcessing).length;
      service.kvTokensInUse = llamaSlotsTokensInUse(sl.slots);
      const ctx = sl.slots.map((s) => s.nCtx);
      service.kvCapacityTokens = ctx.length > 0 && ctx.every((c) => c !== null) ? ctx.reduce<number>((a, c) => a + (c ?? 0), 0) : null;
    }
    if (pr) {
      service.modelName = pr.model;
      service.version = pr.buildInfo;
      service.maxModelLen = pr.nCtx;
      service.sleepState = pr.isSleeping === null ? 'unknown' : pr.isSleeping ? 'asleep-1' : 'awake';
      if (service.kvCapacityTokens === null && pr.nCtx !== null && pr.totalSlots !== null) service.kvCapacityTokens = pr.nCtx * pr.totalSlots;
    }
    const mr = metrics.status === 'fulfilled' ? metrics.value : null;
    if (mr?.status === 501 || mr?.status === 404) this.metricsMissing = true;
    if (mr?.status === 200 && !looksLikeHtml(mr.text)) {
      const parsed = parsePrometheusText(mr.text, { maxBytes });
      unreadable += parsed.errors;
      const m = readLlamaServerMetrics(parsed.families);
      service.running = m.running ?? service.running;
      service.waiting = m.waiting;
      service.promptTokensTotal = m.promptTokensTotal;
      service.generationTokensTotal = m.generationTokensTotal;
    }
    if (service.kvTokensInUse !== null && service.kvCapacityTokens !== null && service.kvCapacityTokens > 0) {
      service.kvCacheUsage = Math.min(1, service.kvTokensInUse / service.kvCapacityTokens);
    }
    return { ok: true, atMs: at, service, unreadable };
  }
}
