// Evaluation figures of field-notes §5 over a set of settled requests (a
// benchmark run, or a window of the proxy's request rows). Every figure carries
// its formula; what cannot be computed is unavailable with a reason, never 0.
import type { Evaluation, Figure } from '../../../src-preload/contract/index.js';
import { costPerMillionBoth, shareGpuTimeColumns } from '../cost/index.js';

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

/**
 * The same requests as columns, index i being one request: what a window of a
 * week of proxy rows is read into without an object per row. A missing number
 * is NaN; jsonOk / schemaOk are -1 (not checked), 0 or 1.
 */
export interface EvalColumns {
  startMs: Float64Array;
  totalMs: Float64Array;
  queueMs: Float64Array;
  ttftMs: Float64Array;
  failed: Uint8Array;
  completionTokens: Float64Array;
  jsonOk: Int8Array;
  schemaOk: Int8Array;
  host: readonly (string | null)[];
}

export interface EvalColumnsInput extends Omit<EvalInput, 'samples'> {
  columns: EvalColumns;
}

const num = (v: number | null): number => (v === null ? NaN : v);
const flag = (v: boolean | null): number => (v === null ? -1 : v ? 1 : 0);

export function sampleColumns(samples: readonly EvalSample[]): EvalColumns {
  const n = samples.length;
  const c: EvalColumns = {
    startMs: new Float64Array(n),
    totalMs: new Float64Array(n),
    queueMs: new Float64Array(n),
    ttftMs: new Float64Array(n),
    failed: new Uint8Array(n),
    completionTokens: new Float64Array(n),
    jsonOk: new Int8Array(n),
    schemaOk: new Int8Array(n),
    host: samples.map((s) => s.host),
  };
  samples.forEach((s, i) => {
    c.startMs[i] = s.startMs;
    c.totalMs[i] = num(s.totalMs);
    c.queueMs[i] = num(s.queueMs);
    c.ttftMs[i] = num(s.ttftMs);
    c.failed[i] = s.failed ? 1 : 0;
    c.completionTokens[i] = num(s.completionTokens);
    c.jsonOk[i] = flag(s.jsonOk);
    c.schemaOk[i] = flag(s.schemaOk);
  });
  return c;
}

export const UNSTABLE_BELOW = 20;

/** Nearest rank over values sorted ascending (a typed array sorts without a comparator call per comparison). */
function nearestRank(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null;
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
function trafficSpan(c: EvalColumns, fromMs: number, toMs: number): { fromMs: number; toMs: number } | null {
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < c.startMs.length; i++) {
    first = Math.min(first, c.startMs[i]!);
    last = Math.max(last, c.startMs[i]! + (Number.isNaN(c.totalMs[i]!) ? 0 : c.totalMs[i]!));
  }
  if (!Number.isFinite(first)) return null;
  const a = Math.max(fromMs, first);
  const b = Math.min(toMs, last);
  return b >= a ? { fromMs: a, toMs: b } : null;
}

export function evaluate(input: EvalInput): Evaluation {
  const { samples, ...rest } = input;
  return evaluateColumns({ ...rest, columns: sampleColumns(samples) });
}

/** The indexes of completed requests (not failed, with a total time), and the values the percentiles read, sorted. */
function completed(c: EvalColumns): { done: Uint32Array; e2e: Float64Array; ttft: Float64Array; latency: Float64Array } {
  const n = c.startMs.length;
  const done = new Uint32Array(n);
  const e2e = new Float64Array(n);
  const ttft = new Float64Array(n);
  let d = 0;
  let t = 0;
  for (let i = 0; i < n; i++) {
    if (c.failed[i] || Number.isNaN(c.totalMs[i]!)) continue;
    done[d] = i;
    e2e[d] = c.totalMs[i]! - (Number.isNaN(c.queueMs[i]!) ? 0 : c.queueMs[i]!);
    d++;
    if (!Number.isNaN(c.ttftMs[i]!)) ttft[t++] = c.ttftMs[i]!;
  }
  const latency = new Float64Array(d);
  for (let k = 0; k < d; k++) latency[k] = c.totalMs[done[k]!]!;
  return { done: done.subarray(0, d), e2e: e2e.subarray(0, d).sort(), ttft: ttft.subarray(0, t).sort(), latency: latency.sort() };
}

export function evaluateColumns(input: EvalColumnsInput): Evaluation {
  const c = input.columns;
  const settled = c.startMs.length;
  let failed = 0;
  let checked = 0;
  let jsonOk = 0;
  let schemaOk = 0;
  for (let i = 0; i < settled; i++) {
    failed += c.failed[i]!;
    if (c.jsonOk[i] === -1) continue;
    checked++;
    jsonOk += c.jsonOk[i] === 1 ? 1 : 0;
    schemaOk += c.schemaOk[i] === 1 ? 1 : 0;
  }
  const { done, e2e, ttft, latency } = completed(c);
  const none = 'no completed requests';
  const figures: Figure[] = [];

  figures.push(
    fig('failureRate', 'Failure rate', '%', 'settled failed ÷ all settled requests', settled ? (failed / settled) * 100 : null, settled, 'no settled requests'),
  );
  figures.push(
    fig('p95E2e', 'P95 end-to-end', 'ms', 'nearest rank over (completed − queued); unstable below 20 samples', nearestRank(e2e, 95), e2e.length, none, {
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
    fig('jsonRate', 'First-pass JSON rate', '%', 'responses that parse, first attempt ÷ attempts that got a response', checked ? (jsonOk / checked) * 100 : null, checked, noSchema),
    fig('schemaRate', 'First-pass schema rate', '%', 'responses that validate against the schema, first attempt ÷ attempts that got a response', checked ? (schemaOk / checked) * 100 : null, checked, noSchema),
  );
  const rate = throughput(c, done, trafficSpan(c, input.fromMs, input.toMs));
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
function throughput(c: EvalColumns, done: Uint32Array, span: { fromMs: number; toMs: number } | null): Throughput {
  let counted = 0;
  let sum = 0;
  for (const i of done) {
    if (Number.isNaN(c.completionTokens[i]!)) continue;
    counted++;
    sum += c.completionTokens[i]!;
  }
  const tokens = counted ? sum : null;
  const spanSeconds = span === null ? null : (span.toMs - span.fromMs) / 1000;
  const uncounted = done.length - counted;
  const spanText = spanSeconds === null ? 'no traffic' : `${(spanSeconds / 60).toFixed(1)} min from the first request sent to the last one finished`;
  const left = uncounted ? `; ${uncounted} of ${done.length} completed requests reported no token count and are not in it` : '';
  const figure = fig(
    'outputTokPerS',
    'Aggregate output tok/s',
    'tok/s',
    `completion tokens ÷ the span that had traffic (${spanText}), not the whole window${left}`,
    tokens !== null && spanSeconds !== null && spanSeconds > 0 ? tokens / spanSeconds : null,
    counted,
    tokens === null ? 'no completion tokens recorded' : 'the traffic took no measurable time',
  );
  return { figure, tokens, spanSeconds };
}

const BUSY_FORMULA = 'price per hour ÷ (3600 × output tok/s over busy time) × 10⁶';
const SPAN_FORMULA = 'price per hour ÷ (3600 × output tok/s over the span that had traffic, idle gaps between requests included) × 10⁶';

/** GPU time shared among concurrent requests per host (never counted twice) × price; per 1M over busy time and over the traffic span. */
function costFigures(input: EvalColumnsInput, done: Uint32Array, rate: Throughput): Figure[] {
  const c = input.columns;
  const withHost = Array.from(done).filter((i) => c.host[i] !== null);
  const startMs = new Float64Array(withHost.length);
  const endMs = new Float64Array(withHost.length);
  const host = withHost.map((i, k) => {
    startMs[k] = c.startMs[i]!;
    endMs[k] = c.startMs[i]! + c.totalMs[i]!;
    return c.host[i]!;
  });
  const { gpuSeconds, busySecondsByHost } = shareGpuTimeColumns({ startMs, endMs, host }, { fromMs: input.fromMs, toMs: input.toMs });
  const hosts = [...new Set(host)];
  const priceByHost = new Map(hosts.map((h) => [h, input.priceOf(h)]));
  const prices = hosts.map((h) => priceByHost.get(h)!);
  const priced = hosts.length > 0 && prices.every((p) => p !== null && p > 0);
  let reason: string | null = null;
  if (done.length === 0) reason = 'no completed requests';
  else if (hosts.length === 0) reason = 'the serving host is not known (not a console target)';
  else if (!priced) reason = 'no price configured for the host';
  let usd = 0;
  if (priced) host.forEach((h, k) => (usd += ((priceByHost.get(h) ?? 0) * gpuSeconds[k]!) / 3600));
  const spans = host.length;
  const out = [
    fig('costPerRequest', 'GPU cost per request', 'USD', 'price per hour × the request’s share of GPU time ÷ 3600 (time shared among concurrent requests), averaged', priced && spans ? usd / spans : null, spans, reason, { estimate: true }),
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
