// What a service row and the host view say about a service beyond its raw
// figures: how it sleeps, whether the server agrees with the config on slots,
// data-parallel engines, cache figures and their scope. Pure, unit-tested.
import { SERVICE_KIND_NAME, type RouterModelView, type ServiceView } from '../../../../src-preload/contract/index.js';
import type { BadgeTone } from '../../components/badge-tone.js';
import { DASH, formatDuration, formatPct } from '../../format/format.js';
import { sleepBadge } from './service-state.js';

export interface SleepView {
  readonly tone: BadgeTone;
  readonly text: string;
  /** A line under the badge ("sleeps by itself when idle"), or null. */
  readonly note: string | null;
  readonly title: string;
  /** Whether the console may offer to put it to sleep or wake it (a proposal). */
  readonly offersSleepWake: boolean;
}

const AUTOMATIC_TITLE = 'llama-server sleeps (unloads its weights) after --sleep-idle-seconds without requests and wakes by itself on the next one; the console does not control it.';

export function sleepView(s: Pick<ServiceView, 'sleep' | 'sleepControl' | 'kind'>): SleepView {
  const control = s.sleepControl ?? 'manual';
  if (control === 'automatic') {
    const asleep = s.sleep === 'asleep-1' || s.sleep === 'asleep-2';
    return {
      tone: s.sleep === 'awake' ? 'ok' : asleep ? 'info' : 'neutral',
      text: s.sleep === 'awake' ? 'awake' : asleep ? 'asleep · unloaded' : 'sleep ?',
      note: asleep ? 'wakes by itself on a request' : 'sleeps by itself when idle',
      title: AUTOMATIC_TITLE,
      offersSleepWake: false,
    };
  }
  if (control === 'none') {
    const b = s.sleep === 'unknown' ? { tone: 'neutral' as const, text: 'no sleep mode' } : sleepBadge(s.sleep);
    return { ...b, note: null, title: 'This server has no sleep mode.', offersSleepWake: false };
  }
  const b = sleepBadge(s.sleep);
  if (s.kind === 'llama-server') {
    // router mode: the model is loaded or unloaded on request; there are no sleep levels
    const asleep = s.sleep === 'asleep-1' || s.sleep === 'asleep-2';
    return { ...b, text: asleep ? 'asleep · unloaded' : b.text, note: null, title: 'llama-server router: the model is loaded or unloaded on request (the console can propose it).', offersSleepWake: true };
  }
  return { ...b, note: null, title: 'Sleep level reported by the server (vLLM sleep endpoints; the console can propose sleep or wake).', offersSleepWake: true };
}

export interface LoadingView {
  /** Where the state comes from: "/health: 503 Loading model". */
  readonly note: string;
  /** "for 12 s"; null when the start is not known. */
  readonly since: string | null;
  readonly title: string;
}

export const LOADING_TITLE =
  'GET /health answers 503 "Loading model": the server is loading its weights (after a restart, or brought back) and takes requests once loaded. Its figures are unknown until then; the proxy holds or refuses requests meanwhile.';

/** What a service that is loading its model shows instead of its sleep state and figures; null when it is not loading. */
export function loadingView(s: Pick<ServiceView, 'health' | 'loadingSince'>, nowMs: number): LoadingView | null {
  if (s.health !== 'loading') return null;
  const since = s.loadingSince ?? null;
  return { note: '/health: 503 Loading model', since: since === null ? null : `for ${formatDuration(Math.max(0, nowMs - since))}`, title: LOADING_TITLE };
}

/** "server reports 2 slots, config says 4" when the server's own count differs from the configured one. */
export function slotMismatch(s: Pick<ServiceView, 'slots' | 'slotsReported'>): string | null {
  const reported = s.slotsReported;
  if (reported === null || reported === undefined || reported === s.slots) return null;
  return `server reports ${reported} slot${reported === 1 ? '' : 's'}, config says ${s.slots}`;
}

/** "2 engines" for a data-parallel vLLM server; null for one engine or unknown. */
export function enginesLabel(s: Pick<ServiceView, 'engines'>): string | null {
  return typeof s.engines === 'number' && s.engines > 1 ? `${s.engines} engines` : null;
}

export const KV_ESTIMATE_TITLE = 'Estimate: context tokens in use per slot ÷ n_ctx, from llama-server /slots (the server reports no KV-cache usage).';

/** The tooltip of a KV figure: how it was measured. */
export function kvTitle(s: Pick<ServiceView, 'kvCacheEstimated' | 'kind'>): string {
  if (s.kvCacheEstimated) return KV_ESTIMATE_TITLE;
  if (s.kind === 'vllm') return 'KV-cache usage reported by vLLM';
  if (s.kind === 'sglang') return 'KV-pool token usage reported by SGLang (sglang:token_usage)';
  return 'KV-cache usage';
}

/**
 * What a row says of figures its kind of server does not have, so a dash reads as "not exported"
 * rather than as a failed reading; null for the kinds with engine figures.
 */
export function figuresNote(s: Pick<ServiceView, 'kind'>): string | null {
  if (s.kind === 'openai') return `${SERVICE_KIND_NAME.openai}: no engine figures (health only); TTFT and latency are measured at the console's proxy`;
  if (s.kind === 'tei') return 'TEI embedding server: queue, requests, input tokens and latency; no KV cache, TTFT or generation';
  return null;
}

/** "42%", "42% since start" (the last window saw no queries), or "—". */
export function prefixHitText(s: Pick<ServiceView, 'prefixHitPct' | 'prefixHitScope'>): string {
  const pct = s.prefixHitPct ?? null;
  if (pct === null) return DASH;
  return s.prefixHitScope === 'cumulative' ? `${formatPct(pct, 1)} since start` : formatPct(pct, 1);
}

export function prefixHitTitle(s: Pick<ServiceView, 'prefixHitScope'>): string {
  return s.prefixHitScope === 'cumulative'
    ? 'Prefix-cache hit rate since the server started (no queries in the last window)'
    : 'Prefix-cache hit rate over the last window';
}

/** How the token rates were measured, for their tooltip. */
export function rateBasisTitle(s: Pick<ServiceView, 'rateBasis'>, what: string): string {
  if (s.rateBasis === 'live') return `${what}: includes the progress of running requests (llama-server /slots)`;
  if (s.rateBasis === 'counters') return `${what}: from the server's counters (finished work)`;
  return what;
}

/** "vllm 0.11.0" / "llama-server b6543"; the kind alone when the version is unknown. */
export function kindWithVersion(s: Pick<ServiceView, 'kind' | 'version'>): string {
  return s.version ? `${s.kind} ${s.version}` : s.kind;
}

export const ROUTER_MODEL_TONE: Readonly<Record<RouterModelView['status'], BadgeTone>> = {
  loaded: 'ok',
  loading: 'warn',
  downloading: 'warn',
  sleeping: 'info',
  unloaded: 'neutral',
  failed: 'error',
  unknown: 'neutral',
};

/** Figures of a service for the host view's list: label, text and tooltip; null entries are left out. */
export interface ServiceFigure {
  readonly id: string;
  readonly label: string;
  readonly text: string;
  readonly title: string;
  readonly value: number | null;
}

export function cacheFigures(s: ServiceView): ServiceFigure[] {
  const out: ServiceFigure[] = [
    { id: 'prefix-hit', label: 'Prefix hit', text: prefixHitText(s), title: prefixHitTitle(s), value: s.prefixHitPct ?? null },
    {
      id: 'prompt-cache',
      label: 'Prompt-cache reuse',
      text: formatPct(s.promptCacheReusePct ?? null, 1),
      title: 'Share of prompt tokens served from the prompt cache',
      value: s.promptCacheReusePct ?? null,
    },
  ];
  // Speculative decoding only where the server drafts tokens: no row otherwise, not a 0.
  if (s.specAcceptancePct !== null && s.specAcceptancePct !== undefined) {
    out.push({ id: 'spec-accept', label: 'Spec. acceptance', text: formatPct(s.specAcceptancePct, 1), title: 'Speculative decoding: accepted ÷ drafted tokens', value: s.specAcceptancePct });
  }
  return out;
}
