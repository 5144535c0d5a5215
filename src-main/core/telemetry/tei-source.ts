import type { Clock } from '../base/index.js';
import { TelemetryErrorCode } from './errors.js';
import { healthOf, readMetricsPage, settle } from './metrics-page.js';
import type { SourceReading } from './readings.js';
import { staleFromError, type HttpGet, type TelemetrySource } from './source.js';
import { parseTeiInfo, readTeiMetrics, serviceReadingFromTei, type TeiInfo } from './tei-metrics.js';

export interface TeiSourceOptions {
  id: string;
  get: HttpGet;
  clock: Clock;
  /** Where health is read (any 2xx is up). Default /health. */
  healthPath?: string;
  maxBytes?: number;
  /** How often /info is read again. Default 5 min. */
  factsEveryMs?: number;
}

const SMALL = 256 * 1024;

/** A TEI server through its tunnel: /metrics (required), its health path each scrape, /info now and then. */
export class TeiHttpSource implements TelemetrySource {
  readonly kind = 'tei' as const;
  readonly id: string;
  private info: { atMs: number; value: TeiInfo | null } | null = null;

  constructor(private readonly options: TeiSourceOptions) {
    this.id = options.id;
  }

  /** What it reads, for the "where from" line. */
  get detail(): string {
    return `GET /metrics, ${this.options.healthPath ?? '/health'}, /info`;
  }

  async scrape(signal?: AbortSignal): Promise<SourceReading> {
    const { get, clock } = this.options;
    const maxBytes = this.options.maxBytes ?? 8 * 1024 * 1024;
    const now = clock.now();
    const refresh = this.info === null || now - this.info.atMs >= (this.options.factsEveryMs ?? 300_000);
    const [metrics, health, info] = await Promise.allSettled([
      get('/metrics', { maxBytes, signal }),
      settle(get(this.options.healthPath ?? '/health', { maxBytes: SMALL, signal })),
      refresh ? settle(get('/info', { maxBytes: SMALL, signal })) : Promise.resolve(null),
    ]);
    const at = clock.now();
    if (metrics.status === 'rejected') return { ok: false, atMs: at, stale: staleFromError(metrics.reason, at) };
    const page = readMetricsPage(metrics.value, at, { maxBytes, isOwn: (n) => n.startsWith('te_'), notOwnHint: 'no te_ series: not a text-embeddings-inference server?' });
    if (!page.ok) return { ok: false, atMs: at, stale: page.stale };
    if (refresh) {
      const i = info.status === 'fulfilled' ? info.value : null;
      this.info = { atMs: now, value: i?.status === 200 ? parseTeiInfo(i.text) : (this.info?.value ?? null) };
    }
    const m = readTeiMetrics(page.families);
    const service = { ...serviceReadingFromTei(m, this.info?.value ?? null), health: healthOf(health.status === 'fulfilled' ? health.value : null) };
    const issues = m.issues.slice(0, 5).map((i) => `${i.code}: ${i.message}`);
    if (page.parseErrors > 0) issues.push(`${TelemetryErrorCode.UNPARSEABLE}: GET /metrics: ${page.parseErrors} line(s) could not be read`);
    return { ok: true, atMs: at, service, unreadable: page.parseErrors + m.issues.length, issues };
  }
}
