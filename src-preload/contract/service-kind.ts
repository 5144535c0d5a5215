import { z } from 'zod';

// The kinds of model server a service may be (config `kind`). vLLM and
// llama-server have engine figures and lifecycle drivers of their own; SGLang
// and TEI (text-embeddings-inference) export Prometheus figures the console
// maps onto the same readings; `openai` is any other OpenAI-compatible server:
// proxied and health-checked, its figures are only what the proxy measures.

export const SERVICE_KINDS = ['vllm', 'llama-server', 'sglang', 'tei', 'openai'] as const;

export const ServiceKindSchema = z.enum(SERVICE_KINDS, { error: `must be one of: ${SERVICE_KINDS.join(', ')}` });
export type ServiceKind = z.infer<typeof ServiceKindSchema>;

/** The server's name as the UI writes it. */
export const SERVICE_KIND_NAME: Record<ServiceKind, string> = {
  vllm: 'vLLM',
  'llama-server': 'llama-server',
  sglang: 'SGLang',
  tei: 'TEI',
  openai: 'OpenAI-compatible server',
};

/** Kinds whose server exports no engine figures: what the UI shows of them is measured at the console's proxy. */
export function hasEngineFigures(kind: ServiceKind): boolean {
  return kind !== 'openai';
}

/** Kinds that serve embeddings only (no chat or completions). */
export function servesEmbeddingsOnly(kind: ServiceKind): boolean {
  return kind === 'tei';
}
