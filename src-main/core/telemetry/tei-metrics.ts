import { z } from 'zod';
import { TelemetryErrorCode } from './errors.js';
import { finiteOrNull, parseJsonBody } from './json-body.js';
import { findFamily, histogramOf, sumOf } from './prom-families.js';
import type { MetricFamily } from './prometheus.js';
import { emptyServiceReading, type ServiceReading } from './readings.js';
import type { Histogram } from './vllm-engines.js';

// text-embeddings-inference's /metrics (test/fixtures/tei, names from its
// router and core crates) as the readings that make sense for an embedding
// server: the queue, requests finished, input tokens embedded and the request
// latency. No KV cache, no time to first token, no running-request count.

export interface TeiIssue {
  code: string;
  family: string;
  message: string;
}

export interface TeiMetrics {
  /** Inputs waiting for a batch (te_queue_size). */
  queued: number | null;
  /** Requests that finished, well or not (Σ te_request_success + Σ te_request_failure). */
  requestsFinishedTotal: number | null;
  requestFailuresTotal: number | null;
  /** Input tokens tokenized (te_request_input_length_sum). */
  inputTokensTotal: number | null;
  /** Whole request, arrival to answer (te_request_duration). */
  requestDuration: Histogram | null;
  /** Waiting for a batch (te_request_queue_duration). */
  queueDuration: Histogram | null;
  /** `te_` families on the page: 0 means this is not TEI's /metrics. */
  teiFamilies: number;
  issues: TeiIssue[];
}

export function readTeiMetrics(families: readonly MetricFamily[]): TeiMetrics {
  const issues: TeiIssue[] = [];
  const family = (name: string): MetricFamily | undefined => {
    const f = findFamily(families, name);
    if (!f) issues.push({ code: TelemetryErrorCode.FAMILY_MISSING, family: name, message: `GET /metrics: no ${name} series` });
    return f;
  };
  const success = sumOf(family('te_request_success'));
  // TEI registers a counter at its first increment: no te_request_failure beside te_request_success means none failed yet.
  const failures = sumOf(findFamily(families, 'te_request_failure')) ?? (success === null ? null : 0);
  const inputLength = family('te_request_input_length');
  return {
    queued: sumOf(family('te_queue_size')),
    requestsFinishedTotal: success === null || failures === null ? null : success + failures,
    requestFailuresTotal: failures,
    inputTokensTotal: sumOf(inputLength, (s) => s.name.endsWith('_sum')),
    requestDuration: histogramOf(family('te_request_duration')),
    queueDuration: histogramOf(findFamily(families, 'te_request_queue_duration')),
    teiFamilies: families.filter((f) => f.name.startsWith('te_')).length,
    issues,
  };
}

const InfoSchema = z.object({
  model_id: z.string(),
  version: z.string().nullish(),
  max_input_length: z.number().nullish(),
  max_concurrent_requests: z.number().nullish(),
});

export interface TeiInfo {
  modelId: string;
  version: string | null;
  maxInputLength: number | null;
  maxConcurrentRequests: number | null;
}

/** `GET /info`; null for a body that is not TEI's. */
export function parseTeiInfo(text: string): TeiInfo | null {
  const r = InfoSchema.safeParse(parseJsonBody(text));
  if (!r.success) return null;
  return {
    modelId: r.data.model_id,
    version: r.data.version ?? null,
    maxInputLength: finiteOrNull(r.data.max_input_length),
    maxConcurrentRequests: finiteOrNull(r.data.max_concurrent_requests),
  };
}

/** The reading a TEI scrape gives: queued inputs are its waiting requests, input tokens its prompt tokens. */
export function serviceReadingFromTei(m: TeiMetrics, info: TeiInfo | null): ServiceReading {
  return {
    ...emptyServiceReading('tei'),
    modelName: info?.modelId ?? null,
    version: info?.version ?? null,
    maxModelLen: info?.maxInputLength ?? null,
    waiting: m.queued,
    promptTokensTotal: m.inputTokensTotal,
    requestsFinishedTotal: m.requestsFinishedTotal,
    e2e: m.requestDuration,
  };
}
