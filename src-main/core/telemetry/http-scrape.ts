import { request, type Dispatcher } from 'undici';
import { AppError } from '../base/index.js';
import { TelemetryErrorCode } from './errors.js';
import { parsePrometheusText } from './prometheus.js';
import { readVllmMetrics, type VllmMetrics } from './vllm-metrics.js';
import { readLlamaServerMetrics, type LlamaServerMetrics } from './llama-server-metrics.js';

export interface HttpScrapeOptions {
  /** Pass the owner's Agent so its sockets close with it; default: undici's global one. */
  dispatcher?: Dispatcher;
  /** Idle deadlines for headers and for the body. Default 3 s each. */
  timeoutMs?: number;
  /** Body size cap. Default 8 MiB. */
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface HttpText {
  status: number;
  text: string;
}

function wrap(err: unknown, url: string): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || (err as Error).name === 'TimeoutError';
  return new AppError(timeout ? TelemetryErrorCode.SCRAPE_TIMEOUT : TelemetryErrorCode.SCRAPE_FAILED, `GET ${url}: ${code ? `${code} ` : ''}${message}`, {
    retryable: true,
    details: code ? { undiciCode: code } : {},
    cause: err,
  });
}

/** GET with deadlines and a body cap; any failure is a coded AppError. */
export async function fetchText(url: string, options: HttpScrapeOptions = {}): Promise<HttpText> {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
  try {
    const res = await request(url, {
      method: 'GET',
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: options.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > maxBytes) {
        res.body.destroy();
        throw new AppError(TelemetryErrorCode.BODY_TOO_LARGE, `GET ${url}: body larger than ${maxBytes} bytes`, {
          details: { maxBytes },
        });
      }
      chunks.push(buf);
    }
    return { status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') };
  } catch (err) {
    throw wrap(err, url);
  }
}

export interface VllmScrape {
  metrics: VllmMetrics;
  /** Lines of the exposition that could not be read. */
  parseErrors: number;
}

async function scrapeFamilies(baseUrl: string, options: HttpScrapeOptions): Promise<ReturnType<typeof parsePrometheusText>> {
  const url = `${baseUrl}/metrics`;
  const res = await fetchText(url, options);
  if (res.status !== 200) {
    throw new AppError(TelemetryErrorCode.HTTP_STATUS, `GET ${url}: HTTP ${res.status}`, {
      retryable: true,
      details: { status: res.status },
    });
  }
  return parsePrometheusText(res.text, { maxBytes: options.maxBytes });
}

/** `GET <baseUrl>/metrics` → vLLM figures. Non-200 is TELEMETRY_HTTP_STATUS. */
export async function scrapeVllmMetrics(baseUrl: string, options: HttpScrapeOptions = {}): Promise<VllmScrape> {
  const parsed = await scrapeFamilies(baseUrl, options);
  return { metrics: readVllmMetrics(parsed.families), parseErrors: parsed.errors };
}

export interface LlamaServerScrape {
  metrics: LlamaServerMetrics;
  parseErrors: number;
}

/** `GET <baseUrl>/metrics` of a llama-server (needs `--metrics`). */
export async function scrapeLlamaServerMetrics(baseUrl: string, options: HttpScrapeOptions = {}): Promise<LlamaServerScrape> {
  const parsed = await scrapeFamilies(baseUrl, options);
  return { metrics: readLlamaServerMetrics(parsed.families), parseErrors: parsed.errors };
}

/** `GET <baseUrl>/health`: 200 → ok, any other status → down; transport failures throw. */
export async function probeHealth(baseUrl: string, options: HttpScrapeOptions = {}): Promise<'ok' | 'down'> {
  const res = await fetchText(`${baseUrl}/health`, { ...options, maxBytes: 64 * 1024 });
  return res.status === 200 ? 'ok' : 'down';
}
