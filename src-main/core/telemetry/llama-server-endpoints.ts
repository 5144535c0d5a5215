import { z } from 'zod';
import { finiteOrNull, parseJsonBody } from './json-body.js';
import type { ServiceHealth } from './readings.js';

// llama-server JSON endpoints (wire-formats §4.3), read leniently.

const NextTokenSchema = z
  .object({ has_next_token: z.boolean().nullish(), n_remain: z.number().nullish(), n_decoded: z.number().nullish() })
  .passthrough();

const SlotSchema = z
  .object({
    id: z.number(),
    n_ctx: z.number().nullish(),
    is_processing: z.boolean().nullish(),
    id_task: z.number().nullish(),
    speculative: z.boolean().nullish(),
    n_prompt_tokens: z.number().nullish(),
    n_prompt_tokens_processed: z.number().nullish(),
    n_prompt_tokens_cache: z.number().nullish(),
    // An object in the README; some late-2025/2026 builds wrap it in a one-element array.
    next_token: z.union([NextTokenSchema, z.array(NextTokenSchema)]).nullish(),
  })
  .passthrough();

export interface LlamaSlot {
  id: number;
  nCtx: number | null;
  isProcessing: boolean;
  /** The task the slot runs (or ran last); null on builds / idle slots without it. */
  taskId: number | null;
  /** The slot's sequence: prompt plus the tokens generated so far (not the prompt alone). */
  promptTokens: number | null;
  /** Prompt tokens evaluated so far (newer builds). */
  promptTokensProcessed: number | null;
  /** Prompt tokens reused from the slot's prompt cache (newest builds). */
  promptTokensCached: number | null;
  decodedTokens: number | null;
  speculative: boolean | null;
}

/** More slots than this is not a llama-server answer we trust (parallel is at most a few hundred). */
export const MAX_LLAMA_SLOTS = 4096;

export interface LlamaSlots {
  slots: LlamaSlot[];
  /** Array entries that were not slot objects. */
  unreadable: number;
}

export function parseLlamaSlots(text: string): LlamaSlots | null {
  const body = parseJsonBody(text);
  if (!Array.isArray(body) || body.length > MAX_LLAMA_SLOTS) return null;
  const slots: LlamaSlot[] = [];
  let unreadable = 0;
  for (const item of body) {
    const r = SlotSchema.safeParse(item);
    if (!r.success) {
      unreadable++;
      continue;
    }
    const s = r.data;
    const next = Array.isArray(s.next_token) ? s.next_token[0] : s.next_token;
    slots.push({
      id: s.id,
      nCtx: finiteOrNull(s.n_ctx),
      isProcessing: s.is_processing === true,
      taskId: finiteOrNull(s.id_task),
      promptTokens: finiteOrNull(s.n_prompt_tokens),
      promptTokensProcessed: finiteOrNull(s.n_prompt_tokens_processed),
      promptTokensCached: finiteOrNull(s.n_prompt_tokens_cache),
      decodedTokens: finiteOrNull(next?.n_decoded),
      speculative: typeof s.speculative === 'boolean' ? s.speculative : null,
    });
  }
  return { slots, unreadable };
}

/**
 * Tokens the busy slots hold. `n_prompt_tokens` is the slot's whole sequence, the prompt AND what it
 * generated so far (llama.cpp's `prompt.tokens.size()`: a sampled token joins it; b10573 showed 92 with
 * 20 prompt tokens and n_decoded 72), so n_decoded is not added to it; builds without the field show
 * n_decoded only (a lower bound). Null when no busy slot reports either.
 */
export function llamaSlotsTokensInUse(slots: readonly LlamaSlot[]): number | null {
  let total = 0;
  let known = false;
  for (const s of slots) {
    if (!s.isProcessing) continue;
    const held = s.promptTokens ?? s.decodedTokens;
    if (held === null) continue;
    total += held;
    known = true;
  }
  if (!known && slots.length > 0 && slots.every((s) => !s.isProcessing)) return 0;
  return known ? total : null;
}

const PropsSchema = z
  .object({
    default_generation_settings: z.object({ n_ctx: z.number().nullish() }).passthrough().nullish(),
    total_slots: z.number().nullish(),
    model_alias: z.string().nullish(),
    model_path: z.string().nullish(),
    build_info: z.string().nullish(),
    is_sleeping: z.boolean().nullish(),
  })
  .passthrough();

export interface LlamaProps {
  /** Per-slot serving context (`default_generation_settings.n_ctx`), not the training context. */
  nCtx: number | null;
  totalSlots: number | null;
  model: string | null;
  /** The loaded model's file as the server names it; null when it does not say. */
  modelPath: string | null;
  buildInfo: string | null;
  /** null on builds without the field (before --sleep-idle-seconds). */
  isSleeping: boolean | null;
}

export function parseLlamaProps(text: string): LlamaProps | null {
  const r = PropsSchema.safeParse(parseJsonBody(text));
  if (!r.success) return null;
  const p = r.data;
  return {
    nCtx: finiteOrNull(p.default_generation_settings?.n_ctx),
    totalSlots: finiteOrNull(p.total_slots),
    model: p.model_alias ?? p.model_path ?? null,
    modelPath: p.model_path ?? null,
    buildInfo: p.build_info ?? null,
    isSleeping: typeof p.is_sleeping === 'boolean' ? p.is_sleeping : null,
  };
}

/** `/health`: 200 ok; 503 with "Loading model" (or an unavailable_error) → loading; else down. */
export function llamaHealthFromResponse(status: number, text: string): ServiceHealth {
  if (status === 200) return 'ok';
  if (status === 503) {
    const body = parseJsonBody(text) as { error?: { message?: unknown; type?: unknown } } | undefined;
    const message = typeof body?.error?.message === 'string' ? body.error.message : '';
    if (/loading/i.test(message) || body?.error?.type === 'unavailable_error') return 'loading';
  }
  return 'down';
}

const ROUTER_STATUSES = new Set(['unloaded', 'loading', 'loaded', 'sleeping', 'downloading']);
const RouterModelsSchema = z
  .object({
    data: z
      .array(
        z
          .object({
            id: z.string(),
            status: z.object({ value: z.string().nullish(), failed: z.boolean().nullish() }).passthrough().nullish(),
          })
          .passthrough(),
      )
      .max(10_000),
  })
  .passthrough();

export interface LlamaRouterModel {
  id: string;
  status: 'unloaded' | 'loading' | 'loaded' | 'sleeping' | 'downloading' | 'failed' | 'unknown';
}

/**
 * Router mode `GET /models`: every entry carries `status.value`. A single-model
 * server answers the OpenAI list without `status`: that is not router mode (null).
 */
export function parseLlamaRouterModels(text: string): LlamaRouterModel[] | null {
  const r = RouterModelsSchema.safeParse(parseJsonBody(text));
  if (!r.success || r.data.data.length === 0) return null;
  if (!r.data.data.every((m) => m.status !== null && m.status !== undefined)) return null;
  return r.data.data.map((m) => {
    const value = m.status?.value ?? '';
    const status: LlamaRouterModel['status'] = m.status?.failed === true ? 'failed' : ROUTER_STATUSES.has(value) ? (value as LlamaRouterModel['status']) : 'unknown';
    return { id: m.id, status };
  });
}
