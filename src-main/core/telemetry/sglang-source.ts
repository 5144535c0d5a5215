import { z } from 'zod';
import type { Clock } from '../base/index.js';
import { TelemetryErrorCode } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { healthOf, readMetricsPage, settle } from './metrics-page.js';
import type { SourceReading } from './readings.js';
import { readSglangMetrics, serviceReadingFromSglang } from './sglang-metrics.js';
import { staleFromError, type HttpGet, type TelemetrySource } from './source.js';
import { parseVllmModels, vllmMaxModelLen } from './vllm-endpoints.js';

export interface SglangSourceOptions {
  id: string;
  get: HttpGet;
  clock: Clock;
  /** Where health is read (any 2xx is up). Default /health. */
  healthPath?: string;
  /** Cap on /metrics. Default 8 MiB. */
  maxBytes?: number;
  /** How often the static facts (/v1/models, /get_server_info) are read again. Default 5 min. */
  factsEveryMs?: number;
}

const SMALL = 256 * 1024;
const ServerInfoSchema = z.object({ version: z.string() });

/**
 * An SGLang server through its tunnel: /metrics (needs --enable-metrics; its failure makes the
 * service stale), its health path each scrape, /v1/models (context length) and /get_server_info
 * (version) now and then.
 */
export class SglangHttpSource implements TelemetrySource {
  readonly kind = 'sglang' as const;
  readonly id: string;
  private facts: { atMs: number; version: string | null; maxModelLen: number | null } | null = null;

  constructor(private readonly options: SglangSourceOptions) {
    this.id = options.id;
  }

  /** What it reads, for the "where from" line. */
  get detail(): string {
    return `GET /metrics, ${this.options.healthPath ?? '/health'}, /v1/models, /get_server_info`;
  }

  async scrape(signal?: AbortSignal): Promise<SourceReading> {
    const { get, clock } = this.options;
    const maxBytes = this.options.maxBytes ?? 8 * 1024 * 1024;
    const now = clock.now();
    const refresh = this.facts === null || now - this.facts.atMs >= (this.options.factsEveryMs ?? 300_000);
    const [metrics, health, models, info] = await Promise.allSettled([
      get('/metrics', { maxBytes, signal }),
      settle(get(this.options.healthPath ?? '/health', { maxBytes: SMALL, signal })),
      refresh ? settle(get('/v1/models', { maxBytes: SMALL, signal })) : Promise.resolve(null),
      refresh ? settle(get('/get_server_info', { maxBytes: SMALL, signal })) : Promise.resolve(null),
    ]);
    const at = clock.now();
    if (metrics.status === 'rejected') return { ok: false, atMs: at, stale: staleFromError(metrics.reason, at) };
    const page = readMetricsPage(metrics.value, at, { maxBytes, isOwn: (n) => n.startsWith('sglang:'), notOwnHint: 'no sglang: series: not an SGLang server, or started without --enable-metrics?' });
    if (!page.ok) return { ok: false, atMs: at, stale: page.stale };
    if (refresh) {
      const md = models.status === 'fulfilled' ? models.value : null;
      const v = info.status === 'fulfilled' ? info.value : null;
      const version = v?.status === 200 ? ServerInfoSchema.safeParse(parseJsonBody(v.text)) : null;
      this.facts = {
        atMs: now,
        version: version?.success ? version.data.version : (this.facts?.version ?? null),
        maxModelLen: md?.status === 200 ? vllmMaxModelLen(parseVllmModels(md.text)) : (this.facts?.maxModelLen ?? null),
      };
    }
    const m = readSglangMetrics(page.families);
    const service = {
      ...serviceReadingFromSglang(m),
      health: healthOf(health.status === 'fulfilled' ? health.value : null),
      version: this.facts?.version ?? null,
      maxModelLen: this.facts?.maxModelLen ?? null,
    };
    const issues = m.issues.slice(0, 5).map((i) => `${i.code}: ${i.message}`);
    if (page.parseErrors > 0) issues.push(`${TelemetryErrorCode.UNPARSEABLE}: GET /metrics: ${page.parseErrors} line(s) could not be read`);
    return { ok: true, atMs: at, service, unreadable: page.parseErrors + m.issues.length, issues };
  }
}
