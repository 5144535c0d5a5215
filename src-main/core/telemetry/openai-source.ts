import type { Clock } from '../base/index.js';
import { TelemetryErrorCode } from './errors.js';
import { healthOf } from './metrics-page.js';
import { emptyServiceReading, type SourceReading } from './readings.js';
import { staleFromError, type HttpGet, type TelemetrySource } from './source.js';

export interface OpenAiHealthSourceOptions {
  id: string;
  get: HttpGet;
  clock: Clock;
  /** GET path whose 2xx answer means up (config healthPath; default /v1/models). */
  healthPath: string;
}

const SMALL = 256 * 1024;

/**
 * Any other OpenAI-compatible server (kind openai): the console knows no figures of it, so the
 * source reads its health only and every engine figure stays unknown; what the UI shows of its
 * traffic is measured at the console's proxy. No answer at all makes the reading stale.
 */
export class OpenAiHealthSource implements TelemetrySource {
  readonly kind = 'openai' as const;
  readonly id: string;

  constructor(private readonly options: OpenAiHealthSourceOptions) {
    this.id = options.id;
  }

  /** What it reads, for the "where from" line: health only, the figures are the proxy's. */
  get detail(): string {
    return `GET ${this.options.healthPath} (health only: the server exports no figures the console reads; its traffic is measured at the proxy)`;
  }

  async scrape(signal?: AbortSignal): Promise<SourceReading> {
    const { get, clock, healthPath } = this.options;
    try {
      const res = await get(healthPath, { maxBytes: SMALL, signal });
      const at = clock.now();
      const health = healthOf(res);
      const issues = health === 'ok' ? [] : [`${TelemetryErrorCode.HTTP_STATUS}: GET ${healthPath}: HTTP ${res.status}`];
      return { ok: true, atMs: at, service: { ...emptyServiceReading('openai'), health }, unreadable: 0, issues };
    } catch (err) {
      const at = clock.now();
      return { ok: false, atMs: at, stale: staleFromError(err, at) };
    }
  }
}
