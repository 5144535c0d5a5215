import type { MetricFamily } from './prometheus.js';

// llama-server `/metrics` (wire-formats §4.2 and the b10573 captures in
// test/fixtures/llama-server): unlabelled `llamacpp:*` families. No KV-cache
// figure and no sleep state. b10573 also counts prompt tokens reused from the
// cache (`prompt_tokens_total` then EXCLUDES them) and speculative decoding
// (draft tokens generated / accepted; all 0 without a draft model).

export interface LlamaServerMetrics {
  running: number | null;
  waiting: number | null;
  /** Prompt tokens evaluated (excluding cached ones, b10573). */
  promptTokensTotal: number | null;
  /** Prompt tokens reused from the prompt cache; null on builds without the counter. */
  promptTokensCachedTotal: number | null;
  generationTokensTotal: number | null;
  specDraftTokensTotal: number | null;
  specAcceptedTokensTotal: number | null;
}

function first(families: readonly MetricFamily[], ...names: string[]): number | null {
  for (const name of names) {
    const f = families.find((x) => x.name === name || x.name === `${name}_total` || `${x.name}_total` === name);
    const s = f?.samples.find((x) => !x.name.endsWith('_created') && Number.isFinite(x.value));
    if (s) return s.value;
  }
  return null;
}

export function readLlamaServerMetrics(families: readonly MetricFamily[]): LlamaServerMetrics {
  return {
    running: first(families, 'llamacpp:requests_processing'),
    waiting: first(families, 'llamacpp:requests_deferred'),
    promptTokensTotal: first(families, 'llamacpp:prompt_tokens_total'),
    promptTokensCachedTotal: first(families, 'llamacpp:prompt_tokens_cached_total'),
    generationTokensTotal: first(families, 'llamacpp:tokens_predicted_total'),
    specDraftTokensTotal: first(families, 'llamacpp:spec_decode_num_draft_tokens_total'),
    specAcceptedTokensTotal: first(families, 'llamacpp:spec_decode_num_accepted_tokens_total'),
  };
}
