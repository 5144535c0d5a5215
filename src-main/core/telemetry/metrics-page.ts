import { TelemetryErrorCode } from './errors.js';
import type { HttpText } from './http-scrape.js';
import { looksLikeHtml } from './json-body.js';
import { parsePrometheusText, type MetricFamily } from './prometheus.js';
import { staleReason } from './source.js';
import type { StaleReason } from './readings.js';

// A server's /metrics answer checked before its families are read (SGLang,
// TEI): the page must be Prometheus text holding at least one of the server's
// own families, else the reading is stale with a coded reason saying which.

export type MetricsPage = { ok: true; families: MetricFamily[]; parseErrors: number } | { ok: false; stale: StaleReason };

export interface MetricsPageOptions {
  maxBytes: number;
  /** Whether a family is the server's own (`sglang:`, `te_`). */
  isOwn: (name: string) => boolean;
  /** What a page without them may mean, e.g. "not an SGLang server, or started without --enable-metrics?". */
  notOwnHint: string;
}

export function readMetricsPage(res: HttpText, atMs: number, o: MetricsPageOptions): MetricsPage {
  const stale = (code: string, message: string): MetricsPage => ({ ok: false, stale: staleReason(code, message, atMs) });
  if (res.status !== 200) return stale(TelemetryErrorCode.HTTP_STATUS, `GET /metrics: HTTP ${res.status}`);
  if (looksLikeHtml(res.text)) return stale(TelemetryErrorCode.NOT_METRICS, 'GET /metrics answered an HTML page, not metrics');
  const parsed = parsePrometheusText(res.text, { maxBytes: o.maxBytes });
  const own = parsed.families.filter((f) => o.isOwn(f.name)).length;
  if (own > 0) return { ok: true, families: parsed.families, parseErrors: parsed.errors };
  if (parsed.families.length === 0 && parsed.errors > 0) {
    return stale(TelemetryErrorCode.UNPARSEABLE, `GET /metrics: none of ${parsed.errors} lines could be read as Prometheus text`);
  }
  if (parsed.families.length === 0) return stale(TelemetryErrorCode.NOT_METRICS, 'GET /metrics answered an empty body');
  return stale(TelemetryErrorCode.NOT_METRICS, `GET /metrics: ${parsed.families.length} metric families but none of the server's own (${o.notOwnHint})`);
}

/** A settled GET: the answer, or null when it failed (an optional endpoint never fails the reading). */
export async function settle(p: Promise<HttpText>): Promise<HttpText | null> {
  try {
    return await p;
  } catch {
    return null;
  }
}

/** up when the answer is any 2xx, down for any other answer or none. */
export function healthOf(res: HttpText | null): 'ok' | 'down' {
  return res !== null && res.status >= 200 && res.status < 300 ? 'ok' : 'down';
}
