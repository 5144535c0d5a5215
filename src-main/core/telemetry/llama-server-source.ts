import { TelemetryErrorCode } from './errors.js';
import type { HttpText } from './http-scrape.js';
import { looksLikeHtml } from './json-body.js';
import { LiveTokenCounter } from './llama-live-tokens.js';
import {
  llamaHealthFromResponse,
  llamaSlotsTokensInUse,
  parseLlamaProps,
  parseLlamaRouterModels,
  parseLlamaSlots,
  MAX_LLAMA_SLOTS,
  type LlamaProps,
  type LlamaRouterModel,
  type LlamaSlot,
} from './llama-server-endpoints.js';
import { readLlamaServerMetrics } from './llama-server-metrics.js';
import { parsePrometheusText } from './prometheus.js';
import { emptyServiceReading, type ServiceReading, type SourceReading } from './readings.js';
import { staleFromError, staleReason, type TelemetrySource } from './source.js';
import type { HttpServiceSourceOptions } from './vllm-source.js';

const SMALL = 1024 * 1024;

async function settle(p: Promise<HttpText>): Promise<HttpText | null> {
  try {
    return await p;
  } catch {
    return null;
  }
}

export interface LlamaServerSourceOptions extends HttpServiceSourceOptions {
  /** The configured model name: picks its entry (and routes /props, /slots, /metrics) in router mode. */
  model?: string;
}

/**
 * A llama-server through its tunnel (wire-formats §4): `/health` is required
 * (503 "Loading model" → stale with TELEMETRY_SERVER_LOADING); `/slots` gives
 * running requests, context in use per slot (the KV estimate) and the live
 * progress of running requests; `/props` the serving context, slot count,
 * build and `is_sleeping`; `/metrics` (only with `--metrics`; 501 otherwise,
 * then not asked again until the facts are refreshed) the finished-request
 * token counters and the deferred count; `/models` now and then, to notice
 * router mode, whose model states then come every scrape.
 */
export class LlamaServerHttpSource implements TelemetrySource {
  readonly kind = 'llama-server' as const;
  readonly id: string;
  private metricsMissing = false;
  private slotsMissing = false;
  private router = false;
  private factsAt: number | null = null;
  private readonly live = new LiveTokenCounter();

  constructor(private readonly options: LlamaServerSourceOptions) {
    this.id = options.id;
  }

  /** The server went away (SSH dropped, restart): live progress starts afresh. */
  reset(): void {
    this.live.reset();
    this.factsAt = null;
  }

  async scrape(signal?: AbortSignal): Promise<SourceReading> {
    const { get, clock } = this.options;
    const maxBytes = this.options.maxBytes ?? 8 * 1024 * 1024;
    const now = clock.now();
    const refreshFacts = this.factsAt === null || now - this.factsAt >= (this.options.factsEveryMs ?? 300_000);
    if (refreshFacts) {
      this.metricsMissing = false;
      this.slotsMissing = false;
    }
    const q = this.router && this.options.model ? `?model=${encodeURIComponent(this.options.model)}` : '';
    // The reading is as of when /slots and /metrics answered (what rates divide by), not when the slowest GET did.
    let countersAt: number | null = null;
    const stamp = (p: Promise<HttpText | null>) =>
      p.then((v) => {
        if (v !== null) countersAt = Math.max(countersAt ?? 0, clock.now());
        return v;
      });
    const [health, slots, props, metrics, models] = await Promise.allSettled([
      get('/health', { maxBytes: SMALL, signal }),
      this.slotsMissing ? Promise.resolve(null) : stamp(settle(get(`/slots${q}`, { maxBytes: SMALL, signal }))),
      settle(get(`/props${q}`, { maxBytes: SMALL, signal })),
      this.metricsMissing ? Promise.resolve(null) : stamp(settle(get(`/metrics${q}`, { maxBytes, signal }))),
      refreshFacts || this.router ? settle(get('/models', { maxBytes: SMALL, signal })) : Promise.resolve(null),
    ]);
    const at = clock.now();
    if (refreshFacts) this.factsAt = now;
    const md = models.status === 'fulfilled' ? models.value : null;
    const routerModels = md?.status === 200 ? parseLlamaRouterModels(md.text) : null;
    if (md !== null) this.router = routerModels !== null;

    if (health.status === 'rejected') {
      this.live.reset();
      return { ok: false, atMs: at, stale: staleFromError(health.reason, at) };
    }
    const state = llamaHealthFromResponse(health.value.status, health.value.text);
    if (state === 'loading') {
      this.live.reset();
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.SERVER_LOADING, 'llama-server is loading the model (HTTP 503)', at) };
    }
    if (state === 'down') {
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.HTTP_STATUS, `GET /health: HTTP ${health.value.status}`, at) };
    }

    let unreadable = 0;
    const notes: string[] = [];
    const service: ServiceReading = { ...emptyServiceReading('llama-server'), health: 'ok', routerModels };
    const sr = slots.status === 'fulfilled' ? slots.value : null;
    if (sr?.status === 501 || sr?.status === 404) this.slotsMissing = true;
    let slotList: LlamaSlot[] | null = null;
    if (sr?.status === 200) {
      const sl = parseLlamaSlots(sr.text);
      if (sl === null) {
        unreadable++;
        notes.push(`${TelemetryErrorCode.UNEXPECTED_SHAPE}: GET /slots did not answer a slot list (at most ${MAX_LLAMA_SLOTS} slot objects); KV use and running requests unknown`);
      } else {
        slotList = sl.slots;
        unreadable += sl.unreadable;
        if (sl.unreadable > 0) notes.push(`${TelemetryErrorCode.UNEXPECTED_SHAPE}: GET /slots: ${sl.unreadable} entr${sl.unreadable === 1 ? 'y is' : 'ies are'} not a slot`);
      }
    } else if (sr !== null && !this.slotsMissing) {
      notes.push(`${TelemetryErrorCode.HTTP_STATUS}: GET /slots: HTTP ${sr.status}`);
    }
    const pr = props.status === 'fulfilled' && props.value?.status === 200 ? parseLlamaProps(props.value.text) : null;
    if (props.status === 'fulfilled' && props.value?.status === 200 && pr === null) {
      unreadable++;
      notes.push(`${TelemetryErrorCode.UNEXPECTED_SHAPE}: GET /props did not answer the props object; sleep state and version unknown`);
    }
    if (slotList) applySlots(service, slotList);
    if (pr) applyProps(service, pr);
    const own = routerModels?.find((m) => m.id === this.options.model) ?? null;
    if (own) service.sleepState = routerSleep(own);

    const mr = metrics.status === 'fulfilled' ? metrics.value : null;
    if (mr?.status === 501 || mr?.status === 404) this.metricsMissing = true;
    const { finishedGen, finishedPrompt, errors } = mr?.status === 200 && !looksLikeHtml(mr.text) ? readMetrics(mr.text, maxBytes, service, notes) : NO_METRICS;
    unreadable += errors;
    this.addTotals(service, slotList, finishedGen, finishedPrompt);
    if (service.kvTokensInUse !== null && service.kvCapacityTokens !== null && service.kvCapacityTokens > 0) {
      service.kvCacheUsage = Math.min(1, service.kvTokensInUse / service.kvCapacityTokens);
      service.kvEstimated = true;
    }
    return { ok: true, atMs: countersAt ?? at, service, unreadable, issues: notes };
  }

  /** Finished counters plus the slots' live progress, on one basis; null totals when one of the two failed this time. */
  private addTotals(service: ServiceReading, slotList: LlamaSlot[] | null, finishedGen: number | null, finishedPrompt: number | null): void {
    if (slotList !== null && finishedGen !== null) {
      const totals = this.live.push(slotList, finishedGen, finishedPrompt);
      service.generationTokensTotal = totals.generated;
      service.promptTokensTotal = totals.prompt;
      service.countersIncludeLive = true;
    } else if (slotList !== null && this.metricsMissing) {
      const totals = this.live.pushSlotsOnly(slotList);
      service.generationTokensTotal = totals.generated;
      service.promptTokensTotal = totals.prompt;
      service.countersIncludeLive = true;
    } else if (slotList === null && this.slotsMissing) {
      service.generationTokensTotal = finishedGen;
      service.promptTokensTotal = finishedPrompt;
    }
    // Otherwise one of the two failed this time: the totals are unknown for this reading rather than
    // on another basis (counters alone read lower than counters + progress: a rate would see a restart, then a spike).
  }
}

/** What the slots tell: running requests, KV tokens in use and capacity, slot count, prompt-cache reuse. */
function applySlots(service: ServiceReading, slotList: LlamaSlot[]): void {
  service.running = slotList.filter((s) => s.isProcessing).length;
  service.kvTokensInUse = llamaSlotsTokensInUse(slotList);
  const ctx = slotList.map((s) => s.nCtx);
  service.kvCapacityTokens = ctx.length > 0 && ctx.every((c) => c !== null) ? ctx.reduce<number>((a, c) => a + (c ?? 0), 0) : null;
  service.slotsReported = slotList.length;
  service.promptCacheReuse = promptCacheReuse(slotList);
}

/** What /props tells: model, build, context, sleep state, slot count (and the KV capacity when the slots gave none). */
function applyProps(service: ServiceReading, pr: LlamaProps): void {
  service.modelName = pr.model;
  service.modelPath = pr.modelPath;
  service.version = pr.buildInfo;
  service.maxModelLen = pr.nCtx;
  service.sleepState = pr.isSleeping === null ? 'unknown' : pr.isSleeping ? 'asleep-2' : 'awake';
  if (pr.totalSlots !== null) service.slotsReported = pr.totalSlots;
  if (service.kvCapacityTokens === null && pr.nCtx !== null && pr.totalSlots !== null) service.kvCapacityTokens = pr.nCtx * pr.totalSlots;
}

const NO_METRICS = { finishedGen: null, finishedPrompt: null, errors: 0 };

/** /metrics: queue, finished token counters and speculative decoding onto `service`; the finished counters and unreadable lines back. */
function readMetrics(text: string, maxBytes: number, service: ServiceReading, notes: string[]): { finishedGen: number | null; finishedPrompt: number | null; errors: number } {
  const parsed = parsePrometheusText(text, { maxBytes });
  if (parsed.errors > 0) notes.push(`${TelemetryErrorCode.UNPARSEABLE}: GET /metrics: ${parsed.errors} line(s) could not be read`);
  const m = readLlamaServerMetrics(parsed.families);
  service.running = m.running ?? service.running;
  service.waiting = m.waiting;
  // b10573 counts cached prompt tokens apart; "prompt tokens" here means all of them, as vLLM's do.
  const finishedPrompt = m.promptTokensTotal === null ? null : m.promptTokensTotal + (m.promptTokensCachedTotal ?? 0);
  service.promptTokensCachedTotal = m.promptTokensCachedTotal;
  // The counters cover every request over the window; the slots only the running ones.
  if (m.promptTokensCachedTotal !== null) service.promptCacheReuse = null;
  // Drafts exist only with a draft model: all-zero counters are "no speculative decoding", not 0 % accepted.
  if (m.specDraftTokensTotal !== null && m.specDraftTokensTotal > 0) {
    service.specDraftTokensTotal = m.specDraftTokensTotal;
    service.specAcceptedTokensTotal = m.specAcceptedTokensTotal;
  }
  return { finishedGen: m.generationTokensTotal, finishedPrompt, errors: parsed.errors };
}

function routerSleep(m: LlamaRouterModel): ServiceReading['sleepState'] {
  switch (m.status) {
    case 'loaded':
      return 'awake';
    case 'sleeping':
    case 'unloaded':
      return 'asleep-2';
    default:
      return 'unknown';
  }
}

/** Cached ÷ prompt tokens over the running requests that report both; null when none does. */
function promptCacheReuse(slots: readonly LlamaSlot[]): number | null {
  let cached = 0;
  let prompt = 0;
  for (const s of slots) {
    if (!s.isProcessing || s.promptTokensCached === null || s.promptTokens === null) continue;
    // n_prompt_tokens counts the generated tokens too (see llamaSlotsTokensInUse).
    const promptOnly = s.promptTokens - Math.max(0, s.decodedTokens ?? 0);
    if (promptOnly <= 0) continue;
    cached += Math.min(s.promptTokensCached, promptOnly);
    prompt += promptOnly;
  }
  return prompt > 0 ? cached / prompt : null;
}
