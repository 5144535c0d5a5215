import { AppError } from '../base/index.js';
import { UpstreamErrorCode, type UpstreamClient } from '../upstream/index.js';
import { TelemetryErrorCode } from './errors.js';
import { parsePrometheusText } from './prometheus.js';
import { readVllmMetrics, type VllmMetrics } from './vllm-metrics.js';
import { readLlamaServerMetrics, type LlamaServerMetrics } from './llama-server-metrics.js';

export interface HttpScrapeOptions {
  /** Deadline of the whole read (connect, headers, body). Default 3 s. */
  timeoutMs?: number;
  /** Body size cap. Default 8 MiB. */
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface HttpText {
  status: number;
  text: string;
}

/** The upstream classifier's verdict in telemetry's own codes (the stale reasons the UI and alerts show). */
function telemetryError(err: unknown, where: string, maxBytes: number): AppError {
  if (!(err instanceof AppError)) return new AppError(TelemetryErrorCode.SCRAPE_FAILED, `${where}: ${String(err)}`, { retryable: true, cause: err });
  const undiciCode = err.details['undiciCode'];
  switch (err.code) {
    case UpstreamErrorCode.TOO_LARGE:
      return new AppError(TelemetryErrorCode.BODY_TOO_LARGE, `${where}: body larger than ${maxBytes} bytes`, { details: { maxBytes }, cause: err });
    case UpstreamErrorCode.TIMEOUT:
      return new AppError(TelemetryErrorCode.SCRAPE_TIMEOUT, `${where}: ${err.message}`, { retryable: true, details: undiciCode ? { undiciCode } : {}, cause: err });
    default:
      return new AppError(TelemetryErrorCode.SCRAPE_FAILED, `${where}: ${err.message}`, { retryable: true, details: undiciCode ? { undiciCode } : {}, cause: err });
  }
}

/** GET `path` through the endpoint's client, with a deadline and a body cap; any failure is a coded AppError. */
export async function fetchText(client: UpstreamClient, path: string, options: HttpScrapeOptions = {}): Promise<HttpText> {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
  try {
    const res = await client.request({ path, deadlineMs: timeoutMs, maxBodyBytes: maxBytes, ...(options.signal ? { signal: options.signal } : {}) });
    return { status: res.status, text: res.text };
  } catch (err) {
    throw telemetryError(err, client.where(path), maxBytes);
  }
}

export interface VllmScrape {
  metrics: VllmMetrics;
  /** Lines of the exposition that could not be read. */
  parseErrors: number;
}

async function scrapeFamilies(client: UpstreamClient, options: HttpScrapeOptions): Promise<ReturnType<typeof parsePrometheusText>> {
  const res = await fetchText(client, '/metrics', options);
  if (res.status !== 200) {
    throw new AppError(TelemetryErrorCode.HTTP_STATUS, `${client.where('/metrics')}: HTTP ${res.status}`, {
      retryable: true,
      details: { status: res.status },
    });
  }
  return parsePrometheusText(res.text, { maxBytes: options.maxBytes });
}

/** `GET /metrics` → vLLM figures. Non-200 is TELEMETRY_HTTP_STATUS. */
export async function scrapeVllmMetrics(client: UpstreamClient, options: HttpScrapeOptions = {}): Promise<VllmScrape> {
  const parsed = await scrapeFamilies(client, options);
  return { metrics: readVllmMetrics(parsed.families), parseErrors: parsed.errors };
}

export interface LlamaServerScrape {
  metrics: LlamaServerMetrics;
  parseErrors: number;
}

/** `GET /metrics` of a llama-server (needs `--metrics`). */
export async function scrapeLlamaServerMetrics(client: UpstreamClient, options: HttpScrapeOptions = {}): Promise<LlamaServerScrape> {
  const parsed = await scrapeFamilies(client, options);
  return { metrics: readLlamaServerMetrics(parsed.families), parseErrors: parsed.errors };
}

/** `GET /health`: 200 → ok, any other status → down; transport failures throw. */
export async function probeHealth(client: UpstreamClient, options: HttpScrapeOptions = {}): Promise<'ok' | 'down'> {
  const res = await fetchText(client, '/health', { ...options, maxBytes: 64 * 1024 });
  return res.status === 200 ? 'ok' : 'down';
}
