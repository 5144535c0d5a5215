import type { Clock } from '../base/index.js';
import { TelemetryErrorCode } from './errors.js';
import type { HttpText } from './http-scrape.js';
import { looksLikeHtml } from './json-body.js';
import type { ServiceReading, SourceReading } from './readings.js';
import { serviceReadingFromVllm } from './reading-from-metrics.js';
import { staleFromError, staleReason, type HttpGet, type TelemetrySource } from './source.js';
import { parseVllmIsSleeping, parseVllmModels, parseVllmVersion, vllmMaxModelLen, vllmModelPath } from './vllm-endpoints.js';
import { readVllmExposition, type VllmExposition } from './vllm-metrics.js';
import { SampleLineMemo } from './prometheus.js';

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

/** Why a /metrics body gives no reading at all (then the service is stale); null when it gives one. */
function unusableExposition(x: VllmExposition): { code: TelemetryErrorCode; message: string } | null {
  if (x.vllmFamilies > 0) return null;
  if (x.families === 0 && x.parseErrors > 0) {
    const cut = x.cut ? ' (the body ends mid-line)' : '';
    return { code: TelemetryErrorCode.UNPARSEABLE, message: `GET /metrics: none of ${x.parseErrors} lines could be read as Prometheus text${cut}` };
  }
  if (x.cut) return { code: TelemetryErrorCode.UNPARSEABLE, message: 'GET /metrics: the body was cut before any vllm: series' };
  if (x.families === 0) return { code: TelemetryErrorCode.NOT_METRICS, message: 'GET /metrics answered an empty body' };
  return { code: TelemetryErrorCode.NOT_METRICS, message: `GET /metrics: ${x.families} metric families but no vllm: series (not a vLLM server?)` };
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
  private facts: { atMs: number; version: string | null; maxModelLen: number | null; modelPath: string | null } | null = null;
  private isSleepingMissing = false;
  /** The last exposition's sample lines, parsed: an unchanged line is not read again. */
  private readonly lines = new SampleLineMemo();

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
    const x = readVllmExposition(res.text, { maxBytes, memo: this.lines });
    const unusable = unusableExposition(x);
    if (unusable !== null) return { ok: false, atMs: at, stale: staleReason(unusable.code, unusable.message, at) };
    const m = x.metrics;

    const h = health.status === 'fulfilled' ? health.value : null;
    const s = sleeping.status === 'fulfilled' ? sleeping.value : null;
    if (s?.status === 404) this.isSleepingMissing = true;
    if (refreshFacts) {
      const v = version.status === 'fulfilled' ? version.value : null;
      const md = models.status === 'fulfilled' ? models.value : null;
      const cards = md?.status === 200 ? parseVllmModels(md.text) : null;
      this.facts = {
        atMs: now,
        version: v?.status === 200 ? parseVllmVersion(v.text) : (this.facts?.version ?? null),
        maxModelLen: md?.status === 200 ? vllmMaxModelLen(cards) : (this.facts?.maxModelLen ?? null),
        modelPath: md?.status === 200 ? vllmModelPath(cards) : (this.facts?.modelPath ?? null),
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
      modelPath: this.facts?.modelPath ?? null,
    };
    // A family read as null because of an issue is an item that could not be read.
    const issues = m.issues.slice(0, 5).map((i) => `${i.code}: ${i.message}`);
    if (x.parseErrors > 0) issues.push(`${TelemetryErrorCode.UNPARSEABLE}: GET /metrics: ${x.parseErrors} line(s) could not be read`);
    return { ok: true, atMs: at, service, unreadable: x.parseErrors + new Set(m.issues.map((i) => i.family)).size, issues };
  }
}
