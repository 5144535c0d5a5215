import type { Clock } from '../base/index.js';
import { TelemetryErrorCode } from './errors.js';
import type { HttpText } from './http-scrape.js';
import { looksLikeHtml } from './json-body.js';
import { parsePrometheusText } from './prometheus.js';
import type { ServiceReading, SourceReading } from './readings.js';
import { serviceReadingFromVllm } from './reading-from-metrics.js';
import { staleFromError, staleReason, type HttpGet, type TelemetrySource } from './source.js';
import { parseVllmIsSleeping, parseVllmModels, parseVllmVersion, vllmMaxModelLen } from './vllm-endpoints.js';
import { readVllmMetrics } from './vllm-metrics.js';

export interface HttpServiceSourceOptions {
  id: string;
  get: HttpGet;
  clock: Clock;
  /** Cap on /metrics. Default 8 MiB. */
  maxBytes?: number;
  /** How often the static facts (/version, /v1/models) are read again. Default 5 min. */
  factsEveryMs?: number;
}

const SMALL = 256 * 1024;

async function settle(p: Promise<HttpText>): Promise<HttpText | null> {
  try {
    return await p;
  } catch {
    return null;
  }
}

/**
 * A vLLM server through its tunnel: `/metrics` (required; its failure makes the
 * service stale), `/health` and `/is_sleeping` each scrape, `/version` and
 * `/v1/models` now and then. An endpoint that answers 404 (`/is_sleeping`
 * without dev mode) is not asked again until the facts are refreshed.
 */
export class VllmHttpSource implements TelemetrySource {
  readonly kind = 'vllm' as const;
  readonly id: string;
  private facts: { atMs: number; version: string | null; maxModelLen: number | null } | null = null;
  private isSleepingMissing = false;

  constructor(private readonly options: HttpServiceSourceOptions) {
    this.id = options.id;
  }

  async scrape(signal?: AbortSignal): Promise<SourceReading> {
    const { get, clock } = this.options;
    const maxBytes = this.options.maxBytes ?? 8 * 1024 * 1024;
    const now = clock.now();
    const refreshFacts = this.facts === null || now - this.facts.atMs >= (this.options.factsEveryMs ?? 300_000);
    if (refreshFacts) this.isSleepingMissing = false;
    const [metrics, health, sleeping, version, models] = await Promise.allSettled([
      get('/metrics', { maxBytes, signal }),
      settle(get('/health', { maxBytes: SMALL, signal })),
      this.isSleepingMissing ? Promise.resolve(null) : settle(get('/is_sleeping', { maxBytes: SMALL, signal })),
      refreshFacts ? settle(get('/version', { maxBytes: SMALL, signal })) : Promise.resolve(null),
      refreshFacts ? settle(get('/v1/models', { maxBytes: SMALL, signal })) : Promise.resolve(null),
    ]);
    const at = clock.now();
    if (metrics.status === 'rejected') return { ok: false, atMs: at, stale: staleFromError(metrics.reason, at) };
    const res = metrics.value;
    if (res.status !== 200) {
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.HTTP_STATUS, `GET /metrics: HTTP ${res.status}`, at) };
    }
    if (looksLikeHtml(res.text)) {
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.NOT_METRICS, 'GET /metrics answered an HTML page, not metrics', at) };
    }
    const parsed = parsePrometheusText(res.text, { maxBytes });
    if (parsed.families.length === 0 && parsed.errors > 0) {
      return {
        ok: false,
        atMs: at,
        stale: staleReason(TelemetryErrorCode.UNPARSEABLE, `GET /metrics: none of ${parsed.errors} lines could be read`, at),
      };
    }
    const m = readVllmMetrics(parsed.families);

    const h = health.status === 'fulfilled' ? health.value : null;
    const s = sleeping.status === 'fulfilled' ? sleeping.value : null;
    if (s?.status === 404) this.isSleepingMissing = true;
    if (refreshFacts) {
      const v = version.status === 'fulfilled' ? version.value : null;
      const md = models.status === 'fulfilled' ? models.value : null;
      this.facts = {
        atMs: now,
        version: v?.status === 200 ? parseVllmVersion(v.text) : (this.facts?.version ?? null),
        maxModelLen: md?.status === 200 ? vllmMaxModelLen(parseVllmModels(md.text)) : (this.facts?.maxModelLen ?? null),
      };
    }
    const isSleeping = s?.status === 200 ? parseVllmIsSleeping(s.text) : null;

    const service: ServiceReading = {
      ...serviceReadingFromVllm(m),
      version: this.facts?.version ?? null,
      health: h === null ? 'down' : h.status === 200 ? 'ok' : 'down',
      // The metric says which level; /is_sleeping only says whether.
      sleepState: m.sleepState !== 'unknown' ? m.sleepState : isSleeping === false ? 'awake' : isSleeping === true ? 'asleep-1' : 'unknown',
      maxModelLen: this.facts?.maxModelLen ?? null,
    };
    return { ok: true, atMs: at, service, unreadable: parsed.errors };
  }
}
