// Evaluation figures of field-notes §5 over a set of settled requests (a
// benchmark run, or a window of the proxy's request rows). Every figure carries
// its formula; what cannot be computed is unavailable with a reason, never 0.
import type { Evaluation, Figure } from '../../../src-preload/contract/index.js';
import { costPerMillionBoth, shareGpuTime, type RequestSpan } from '../cost/index.js';

export interface EvalSample {
  /** Epoch ms when the request was sent. */
  startMs: number;
  totalMs: number | null;
  queueMs: number | null;
  ttftMs: number | null;
  failed: boolean;
  completionTokens: number | null;
  /** null: not schema-checked (no response_format, or no answer came back). */
  jsonOk: boolean | null;
  schemaOk: boolean | null;
  host: string | null;
}

export interface EvalInput {
  source: string;
  fromMs: number;
  toMs: number;
  samples: readonly EvalSample[];
  /** Price per hour of a host; null when not configured. */
  priceOf(host: string): number | null;
}

export const UNSTABLE_BELOW = 20;

function nearestRank(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  // A typed array sorts numerically without a comparator call per comparison: a 7-day window of
  // proxy rows (240k) sorts in ~15 ms instead of ~100 ms, and this runs five times per evaluation.
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

function fig(key: string, label: string, unit: string, formula: string, value: number | null, samples: number, reason: string | null, extra: Partial<Figure> = {}): Figure {
  const ok = value !== null && Number.isFinite(value);
  return {
    key,
    label,
    unit,
    formula,
    value: ok ? value : null,
    samples,
    unavailableReason: ok ? null : (reason ?? 'not computable'),
    unstable: false,
    estimate: false,
    ...extra,
  };
}

/** From the first request sent to the last one finished, within the window; null without traffic. */
function trafficSpan(samples: readonly EvalSample[], fromMs: number, toMs: number): { fromMs: number; toMs: number } | null {
  let first = Infinity;
  let last = -Infinity;
  for (const s of samples) {
    first = Math.min(first, s.startMs);
    last = Math.max(last, s.startMs + (s.totalMs ?? 0));
  }
  if (!Number.isFinite(first)) return null;
  const a = Math.max(fromMs, first);
  const b = Math.min(toMs, last);
  return b >= a ? { fromMs: a, toMs: b } : null;
}

export function evaluate(input: EvalInput): Evaluation {
  const { samples } = input;
  const settled = samples.length;
  const failed = samples.filter((s) => s.failed).length;
  const done = samples.filter((s) => !s.failed && s.totalMs !== null);
  const e2e = done.map((s) => s.totalMs! - (s.queueMs ?? 0));
  const ttft = done.map((s) => s.ttftMs).filter((v): v is number => v !== null);
  const latency = done.map((s) => s.totalMs!);
  const checked = samples.filter((s) => s.jsonOk !== null);
  const none = 'no completed requests';
  const figures: Figure[] = [];

  figures.push(
    fig('failureRate', 'Failure rate', '%', 'settled failed ÷ all settled requests', settled ? (failed / settled) * 100 : null, settled, 'no settled requests'),
  );
  const p95 = nearestRank(e2e, 95);
  figures.push(
    fig('p95E2e', 'P95 end-to-end', 'ms', 'nearest rank over (completed − queued); unstable below 20 samples', p95, e2e.length, none, {
      unstable: e2e.length > 0 && e2e.length < UNSTABLE_BELOW,
    }),
  );
  for (const [key, label, values, p] of [
    ['ttftP50', 'TTFT p50', ttft, 50],
    ['ttftP95', 'TTFT p95', ttft, 95],
    ['latencyP50', 'Latency p50', latency, 50],
    ['latencyP95', 'Latency p95', latency, 95],
  ] as const) {
    figures.push(
      fig(key, label, 'ms', `nearest rank (p${p}) over the requests' ${key.startsWith('ttft') ? 'time to first token' : 'total latency'}`, nearestRank(values, p), values.length, values === ttft && done.length > 0 ? 'no streamed answers (TTFT needs streaming)' : none, {
        unstable: p === 95 && values.length > 0 && values.length < UNSTABLE_BELOW,
      }),
    );
  }
  const noSchema = 'no schema-checked answers (the run had no response_format, or no answer came back)';
  figures.push(
    fig('jsonRate', 'First-pass JSON rate', '%', 'responses that parse, first attempt ÷ attempts that got a response', checked.length ? (checked.filter((s) => s.jsonOk).length / checked.length) * 100 : null, checked.length, noSchema),
    fig('schemaRate', 'First-pass schema rate', '%', 'responses that validate against the schema, first attempt ÷ attempts that got a response', checked.length ? (checked.filter((s) => s.schemaOk).length / checked.length) * 100 : null, checked.length, noSchema),
  );
  const rate = throughput(done, trafficSpan(samples, input.fromMs, input.toMs));
  figures.push(rate.figure, ...costFigures(input, done, rate));
  return { source: input.source, fromMs: input.fromMs, toMs: input.toMs, figures };
}

interface Throughput {
  figure: Figure;
  /** Completion tokens of the requests that reported a count; null when none did. */
  tokens: number | null;
  /** Seconds of the span that had traffic; null without traffic. */
  spanSeconds: number | null;
}

/**
 * A rate over the time that had traffic: a window of an hour with six minutes
 * of requests is not an hour of work (issue #27 finding 3). Requests without a
 * token count are left out, and the formula says how many.
 */
function throughput(done: readonly EvalSample[], span: { fromMs: number; toMs: number } | null): Throughput {
  const counted = done.filter((s) => s.completionTokens !== null);
  const tokens = counted.length ? counted.reduce((n, s) => n + s.completionTokens!, 0) : null;
  const spanSeconds = span === null ? null : (span.toMs - span.fromMs) / 1000;
  const uncounted = done.length - counted.length;
  const spanText = spanSeconds === null ? 'no traffic' : `${(spanSeconds / 60).toFixed(1)} min from the first request sent to the last one finished`;
  const left = uncounted ? `; ${uncounted} of ${done.length} completed requests reported no token count and are not in it` : '';
  const figure = fig(
    'outputTokPerS',
    'Aggregate output tok/s',
    'tok/s',
    `completion tokens ÷ the span that had traffic (${spanText}), not the whole window${left}`,
    tokens !== null && spanSeconds !== null && spanSeconds > 0 ? tokens / spanSeconds : null,
    counted.length,
    tokens === null ? 'no completion tokens recorded' : 'the traffic took no measurable time',
  );
  return { figure, tokens, spanSeconds };
}

const BUSY_FORMULA = 'price per hour ÷ (3600 × output tok/s over busy time) × 10⁶';
const SPAN_FORMULA = 'price per hour ÷ (3600 × output tok/s over the span that had traffic, idle gaps between requests included) × 10⁶';

/** GPU time shared among concurrent requests per host (never counted twice) × price; per 1M over busy time and over the traffic span. */
function costFigures(input: EvalInput, done: readonly EvalSample[], rate: Throughput): Figure[] {
  const spans: RequestSpan[] = [];
  for (const s of done) {
    if (s.host !== null) spans.push({ startMs: s.startMs, endMs: s.startMs + s.totalMs!, model: null, client: '', completionTokens: s.completionTokens, host: s.host });
  }
  const { gpuSeconds, busySecondsByHost } = shareGpuTime(spans, { fromMs: input.fromMs, toMs: input.toMs });
  const hosts = [...new Set(spans.map((s) => s.host))];
  const prices = hosts.map((h) => input.priceOf(h));
  const priced = hosts.length > 0 && prices.every((p) => p !== null && p > 0);
  let reason: string | null = null;
  if (done.length === 0) reason = 'no completed requests';
  else if (hosts.length === 0) reason = 'the serving host is not known (not a console target)';
  else if (!priced) reason = 'no price configured for the host';
  let usd = 0;
  if (priced) spans.forEach((s, i) => (usd += ((input.priceOf(s.host) ?? 0) * gpuSeconds[i]!) / 3600));
  const out = [
    fig('costPerRequest', 'GPU cost per request', 'USD', 'price per hour × the request’s share of GPU time ÷ 3600 (time shared among concurrent requests), averaged', priced && spans.length ? usd / spans.length : null, spans.length, reason, { estimate: true }),
  ];
  if (hosts.length === 1 && priced) {
    const busy = busySecondsByHost.get(hosts[0]!) ?? null;
    const both = costPerMillionBoth(prices[0]!, { outputTokens: rate.tokens, busySeconds: busy, reservedSeconds: rate.spanSeconds });
    const toFig = (key: string, label: string, e: typeof both.usageBased, formula: string) => fig(key, label, 'USD/1M tok', formula, e.value, done.length, e.unavailableReason, { estimate: true });
    out.push(
      toFig('costPerMillionBusy', 'Cost per 1M output tokens (busy time)', both.usageBased, BUSY_FORMULA),
      toFig('costPerMillionReserved', 'Cost per 1M output tokens (span with traffic)', both.reservationBased, SPAN_FORMULA),
    );
  } else {
    const why = hosts.length > 1 ? 'requests were served by several hosts; see per-host cost' : (reason ?? 'not computable');
    out.push(
      fig('costPerMillionBusy', 'Cost per 1M output tokens (busy time)', 'USD/1M tok', BUSY_FORMULA, null, done.length, why, { estimate: true }),
      fig('costPerMillionReserved', 'Cost per 1M output tokens (span with traffic)', 'USD/1M tok', SPAN_FORMULA, null, done.length, why, { estimate: true }),
    );
  }
  return out;
}
