import type { MetricFamily } from './prometheus.js';

// llama-server `/metrics` (wire-formats §4.2): unlabelled `llamacpp:*` families.
// It exposes no KV-cache figure and no sleep state.

export interface LlamaServerMetrics {
  running: number | null;
  waiting: number | null;
  promptTokensTotal: number | null;
  generationTokensTotal: number | null;
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
    generationTokensTotal: first(families, 'llamacpp:tokens_predicted_total'),
  };
}
