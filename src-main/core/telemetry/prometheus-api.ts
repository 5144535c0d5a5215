import { z } from 'zod';
import { AppError } from '../base/index.js';
import type { UpstreamClient } from '../upstream/index.js';
import { PrometheusErrorCode, TelemetryErrorCode } from './errors.js';
import { fetchText } from './http-scrape.js';
import { looksLikeHtml, parseJsonBody } from './json-body.js';
import { parseSampleValue } from './prometheus.js';

// A bounded client for the Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`):
// a deadline per query (also sent as the query's own `timeout`, so Prometheus
// stops evaluating too), a cap on the answer, the answer checked with zod, and
// every failure a coded AppError. Plus the PromQL text helpers: string
// escaping and the config's matcher templates (`host="{host}"`).

export interface PromPoint {
  /** Milliseconds since the epoch, on Prometheus's clock. */
  tMs: number;
  value: number;
}

export interface PromSeries {
  /** All labels, `__name__` included when the series has one. */
  labels: Record<string, string>;
  points: PromPoint[];
}

/** One series' value at one evaluation time. */
export interface PromSample {
  labels: Record<string, string>;
  value: number;
}

export interface PromResult {
  series: PromSeries[];
  /** Result items that could not be read (native histograms, bad values). */
  unreadable: number;
  warnings: string[];
}

export interface PrometheusClientOptions {
  /** The client of Prometheus's base URL, e.g. `http://127.0.0.1:9090` (a path prefix is kept). */
  client: UpstreamClient;
  timeoutMs: number;
  /** Cap on one answer. Default 8 MiB. */
  maxBytes?: number;
}

const SampleSchema = z.tuple([z.number(), z.string()]);
const VectorItemSchema = z.object({ metric: z.record(z.string(), z.string()), value: SampleSchema });
const MatrixItemSchema = z.object({ metric: z.record(z.string(), z.string()), values: z.array(SampleSchema) });
const AnswerSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('success'),
    data: z.object({ resultType: z.enum(['vector', 'matrix', 'scalar', 'string']), result: z.unknown() }),
    warnings: z.array(z.string()).optional(),
  }),
  z.object({ status: z.literal('error'), errorType: z.string().optional(), error: z.string().optional() }),
]);

const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

function readPoint(p: z.infer<typeof SampleSchema>): PromPoint | null {
  const value = parseSampleValue(p[1]);
  return value === null || !Number.isFinite(p[0]) ? null : { tMs: Math.round(p[0] * 1000), value };
}

function readResult(resultType: string, result: unknown): PromResult | null {
  if ((resultType !== 'vector' && resultType !== 'matrix') || !Array.isArray(result)) return null;
  const series: PromSeries[] = [];
  let unreadable = 0;
  for (const item of result) {
    if (resultType === 'vector') {
      const v = VectorItemSchema.safeParse(item);
      const point = v.success ? readPoint(v.data.value) : null;
      if (!v.success || point === null) unreadable++;
      else series.push({ labels: v.data.metric, points: [point] });
    } else {
      const m = MatrixItemSchema.safeParse(item);
      if (!m.success) {
        unreadable++;
        continue;
      }
      const points: PromPoint[] = [];
      for (const p of m.data.values) {
        const point = readPoint(p);
        if (point === null) unreadable++;
        else points.push(point);
      }
      series.push({ labels: m.data.metric, points });
    }
  }
  return { series, unreadable, warnings: [] };
}

/** Seconds as Prometheus takes them (`time`, `start`, `end`). */
const seconds = (ms: number): string => (ms / 1000).toFixed(3);

export class PrometheusClient {
  constructor(private readonly options: PrometheusClientOptions) {}

  /** The address shown in stale reasons (no query string, no credentials). */
  get where(): string {
    return this.options.client.target;
  }

  /** Instant query at Prometheus's own "now" (no clock of ours is sent, so skew does not matter). */
  instant(query: string, signal?: AbortSignal): Promise<PromResult> {
    return this.get('/api/v1/query', { query }, signal);
  }

  range(query: string, range: { startMs: number; endMs: number; stepMs: number }, signal?: AbortSignal): Promise<PromResult> {
    return this.get('/api/v1/query_range', { query, start: seconds(range.startMs), end: seconds(range.endMs), step: seconds(range.stepMs) }, signal);
  }

  private async get(path: string, params: Record<string, string>, signal?: AbortSignal): Promise<PromResult> {
    const { timeoutMs } = this.options;
    const search = new URLSearchParams({ ...params, timeout: `${timeoutMs}ms` });
    const deadline = AbortSignal.timeout(timeoutMs);
    let res;
    try {
      res = await fetchText(this.options.client, `${path}?${search.toString()}`, {
        timeoutMs,
        maxBytes: this.options.maxBytes ?? DEFAULT_MAX_BYTES,
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      });
    } catch (err) {
      if (signal?.aborted === true && !deadline.aborted) {
        throw new AppError(TelemetryErrorCode.SCRAPE_FAILED, `the query to Prometheus at ${this.where} was cancelled`, { cause: err });
      }
      throw this.transportError(err, deadline.aborted);
    }
    const body = parseJsonBody(res.text);
    const answer = AnswerSchema.safeParse(body);
    if (!answer.success) {
      if (res.status < 200 || res.status >= 300) {
        throw new AppError(TelemetryErrorCode.HTTP_STATUS, `Prometheus at ${this.where} answered HTTP ${res.status}`, { retryable: true, details: { status: res.status } });
      }
      if (looksLikeHtml(res.text)) {
        throw new AppError(TelemetryErrorCode.NOT_METRICS, `Prometheus at ${this.where} answered an HTML page, not the query API (is the URL right?)`, {
          retryable: true,
        });
      }
      const what = body === undefined ? 'is not JSON' : 'is JSON but not a Prometheus query answer';
      throw new AppError(TelemetryErrorCode.UNPARSEABLE, `the answer of Prometheus at ${this.where} ${what}: ${printable(res.text)}`, { retryable: true });
    }
    const a = answer.data;
    if (a.status === 'error') {
      throw new AppError(PrometheusErrorCode.QUERY_ERROR, `Prometheus at ${this.where} refused the query (${a.errorType ?? `HTTP ${res.status}`}): ${a.error ?? 'no reason given'}`, {
        retryable: a.errorType === 'timeout' || a.errorType === 'unavailable' || res.status >= 500,
        details: { status: res.status, errorType: a.errorType ?? null },
      });
    }
    const result = readResult(a.data.resultType, a.data.result);
    if (result === null) {
      throw new AppError(TelemetryErrorCode.UNPARSEABLE, `Prometheus at ${this.where} answered a ${a.data.resultType} of an unexpected shape`, { retryable: true });
    }
    result.warnings = a.warnings ?? [];
    return result;
  }

  private transportError(err: unknown, deadlinePassed: boolean): AppError {
    const e = err instanceof AppError ? err : null;
    const undiciCode = typeof e?.details['undiciCode'] === 'string' ? e.details['undiciCode'] : null;
    if (deadlinePassed || e?.code === TelemetryErrorCode.SCRAPE_TIMEOUT) {
      return new AppError(TelemetryErrorCode.SCRAPE_TIMEOUT, `Prometheus at ${this.where} did not answer within ${this.options.timeoutMs} ms`, {
        retryable: true,
        cause: err,
      });
    }
    if (e?.code === TelemetryErrorCode.BODY_TOO_LARGE) {
      return new AppError(TelemetryErrorCode.BODY_TOO_LARGE, `the answer of Prometheus at ${this.where} is larger than ${this.options.maxBytes ?? DEFAULT_MAX_BYTES} bytes`, {
        cause: err,
      });
    }
    const cause = ((e?.cause ?? err) ?? {}) as { code?: unknown; message?: unknown };
    const why = undiciCode ?? (typeof cause.code === 'string' ? cause.code : typeof cause.message === 'string' ? cause.message : String(err));
    return new AppError(TelemetryErrorCode.SCRAPE_FAILED, `Prometheus at ${this.where} is unreachable: ${why}`, {
      retryable: true,
      details: undiciCode ? { undiciCode } : {},
      cause: err,
    });
  }
}

/** A short, one-line excerpt of a body for a stale reason. */
function printable(text: string): string {
  const line = text.replace(/[\r\n\t]+/g, ' ').replace(/[^\x20-\x7e]/g, '?').trim();
  return line.length > 80 ? `${line.slice(0, 80)}…` : line || '(empty)';
}

/** A PromQL string literal: `"…"` with backslash, quote and control characters escaped. */
export function promqlString(value: string): string {
  return `"${value.replace(/[\\"\n\r\t]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]!)}"`;
}

/** RE2 metacharacters escaped, so that a value matches itself inside `=~"…"`. */
export function regexLiteral(value: string): string {
  return value.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

const PLACEHOLDER = /\{(host|service|model|port)\}/g;

/**
 * Fills `{host}`, `{service}`, `{model}`, `{port}` in a matcher template. Inside
 * a quoted string the value is escaped for it (and for a regex after `=~`/`!~`);
 * a placeholder written without quotes (`host={host}`) becomes a quoted string.
 */
export function fillMatchers(template: string, values: Partial<Record<'host' | 'service' | 'model' | 'port', string>>): string {
  return template.replace(PLACEHOLDER, (whole: string, name: 'host' | 'service' | 'model' | 'port', offset: number) => {
    const value = values[name];
    if (value === undefined) return whole;
    const before = template.slice(0, offset);
    const quotes = (before.replace(/\\./g, '').match(/"/g) ?? []).length;
    const insideString = quotes % 2 === 1;
    const operator = insideString ? /(=~|!~|!=|=)\s*"[^"]*$/.exec(before.replace(/\\./g, ''))?.[1] : /(=~|!~|!=|=)\s*$/.exec(before)?.[1];
    const text = operator === '=~' || operator === '!~' ? regexLiteral(value) : value;
    const quoted = promqlString(text);
    return insideString ? quoted.slice(1, -1) : quoted;
  });
}
