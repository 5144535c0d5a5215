// The JSON bodies of llama-server b10573 (fixtures under
// test/fixtures/llama-server/): error objects in their two key orders, the
// sampling params every slot and /props carry, /props, /v1/models and the
// /slots entries. Pure functions of what the simulator knows.

import type { IncomingHttpHeaders } from 'node:http';
import type { LlamaServiceProfile } from './profiles.js';
import { hashString } from './text-gen.js';

/** `build_info` and every response's `system_fingerprint`. */
export const LLAMA_BUILD_INFO = 'b10573-d775b89';

export type LlamaErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'server_error'
  | 'not_supported_error'
  | 'unavailable_error'
  | 'exceed_context_size_error';

/** format_error_response (nlohmann json, keys sorted): `{"error":{"code","message","type"}}`, HTTP status = code. */
export function llamaError(code: number, message: string, type: LlamaErrorType, extra: Record<string, unknown> = {}) {
  return { error: { code, message, type, ...extra } };
}

/** The HTTP layer's own bodies (loading, API key) are written literally: message, type, code. */
export const LOADING_BODY = { error: { message: 'Loading model', type: 'unavailable_error', code: 503 } };
export const PUBLIC_PATHS = new Set(['/health', '/v1/health', '/models', '/v1/models', '/api/tags']);
export const MODEL_PATHS = new Set(['/models', '/v1/models', '/api/tags']);
export const LOADING_HTML = '<!doctype html><html><head><title>llama.cpp</title></head><body>Loading model...</body></html>';

/** `--api-key`: a Bearer token or X-Api-Key that matches; every request passes without one. */
export function llamaAuthorized(profile: LlamaServiceProfile, headers: IncomingHttpHeaders): boolean {
  const key = profile.apiKey;
  if (!key) return true;
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
  return bearer === key || headers['x-api-key'] === key;
}

/** Process-Start-Time-Unix: llama.cpp sends its monotonic start time, not a wall-clock time (SOURCE.txt). */
export function processStartMark(serviceId: string, pid: number | null): number {
  return 1_000_000_000 + (hashString(`${serviceId}/${pid ?? 0}`) % 300_000_000);
}

export const INVALID_API_KEY_BODY = { error: { message: 'Invalid API Key', type: 'authentication_error', code: 401 } };

const SAMPLERS = ['penalties', 'dry', 'top_n_sigma', 'top_k', 'typ_p', 'top_p', 'min_p', 'xtc', 'temperature'];

/** The sampling params of a slot (or of /props' default_generation_settings), in the server's key order. */
export function samplingParams(over: { seed?: number; temperature?: number; topP?: number; topK?: number; maxTokens?: number; stream?: boolean; ignoreEos?: boolean; chatFormat?: string; reasoningFormat?: string } = {}) {
  const maxTokens = over.maxTokens ?? -1;
  return {
    seed: over.seed ?? 4294967295,
    temperature: over.temperature ?? 0.800000011920929,
    dynatemp_range: 0,
    dynatemp_exponent: 1,
    top_k: over.topK ?? 40,
    top_p: over.topP ?? 0.949999988079071,
    min_p: 0.05000000074505806,
    top_n_sigma: -1,
    xtc_probability: 0,
    xtc_threshold: 0.10000000149011612,
    typical_p: 1,
    repeat_last_n: 64,
    repeat_penalty: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    dry_multiplier: 0,
    dry_base: 1.75,
    dry_allowed_length: 2,
    dry_penalty_last_n: 64,
    mirostat: 0,
    mirostat_tau: 5,
    mirostat_eta: 0.10000000149011612,
    adaptive_target: -1,
    adaptive_decay: 0.8999999761581421,
    max_tokens: maxTokens,
    n_predict: maxTokens,
    n_keep: 0,
    n_discard: 0,
    ignore_eos: over.ignoreEos ?? false,
    stream: over.stream ?? false,
    n_probs: 0,
    min_keep: 0,
    chat_format: over.chatFormat ?? 'Content-only',
    reasoning_format: over.reasoningFormat ?? 'none',
    reasoning_in_content: false,
    generation_prompt: '',
    samplers: [...SAMPLERS],
    'speculative.types': 'none',
    timings_per_token: false,
    post_sampling_probs: false,
    backend_sampling: false,
    lora: [] as unknown[],
  };
}

export type SamplingParams = ReturnType<typeof samplingParams>;

export function slotContext(profile: LlamaServiceProfile): number {
  return Math.floor(profile.ctxSize / profile.parallel);
}

/** GET /props. */
export function propsBody(profile: LlamaServiceProfile, state: { isSleeping: boolean; mediaMarker: string }) {
  const m = profile.model;
  return {
    default_generation_settings: { params: samplingParams(), n_ctx: slotContext(profile) },
    total_slots: profile.parallel,
    model_alias: profile.alias,
    model_ftype: m.ftype,
    model_path: profile.modelPath,
    modalities: { vision: false, video: false, audio: false },
    media_marker: state.mediaMarker,
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: true,
    ui: true,
    ui_settings: {},
    chat_template: m.chatTemplate,
    chat_template_caps: {
      supports_object_arguments: false,
      supports_parallel_tool_calls: false,
      supports_preserve_reasoning: false,
      supports_reasoning_effort: false,
      supports_string_content: true,
      supports_system_role: true,
      supports_tool_calls: false,
      supports_tools: false,
      supports_typed_content: false,
    },
    bos_token: m.bosToken,
    eos_token: m.eosToken,
    build_info: LLAMA_BUILD_INFO,
    is_sleeping: state.isSleeping,
    cors_proxy_enabled: false,
  };
}

/** GET /v1/models (and /models): an Ollama-style list plus the OpenAI one; meta is null until the model is loaded. */
export function modelsBody(profile: LlamaServiceProfile, state: { loaded: boolean; nowSec: number }) {
  const m = profile.model;
  return {
    models: [
      {
        name: profile.alias,
        model: profile.alias,
        modified_at: '',
        size: '',
        digest: '',
        type: 'model',
        description: '',
        tags: [''],
        capabilities: ['completion'],
        parameters: '',
        details: { parent_model: '', format: 'gguf', family: '', families: [''], parameter_size: '', quantization_level: '' },
      },
    ],
    object: 'list',
    data: [
      {
        id: profile.alias,
        aliases: [profile.alias],
        tags: [] as string[],
        object: 'model',
        created: state.nowSec,
        owned_by: 'llamacpp',
        meta: state.loaded
          ? {
              vocab_type: m.vocabType,
              n_vocab: m.nVocab,
              n_ctx: slotContext(profile),
              n_ctx_train: m.nCtxTrain,
              n_embd: m.nEmbd,
              n_params: m.nParams,
              size: m.sizeBytes,
              ftype: m.ftype,
            }
          : null,
      },
    ],
  };
}

/** What a busy slot shows of its task. */
export interface SlotTaskView {
  idTask: number;
  /** `n_prompt_tokens`: the slot's whole sequence, the prompt and the tokens generated so far. */
  promptTokens: number;
  promptTokensProcessed: number;
  cachedTokens: number;
  params: SamplingParams;
  /** -1 when the task has no generation limit. */
  remaining: number;
  decoded: number;
}

/** One /slots entry: idle slots show only id, n_ctx, speculative, is_processing. */
export function slotBody(id: number, nCtx: number, task: SlotTaskView | null) {
  const base = { id, n_ctx: nCtx, speculative: false, is_processing: task !== null };
  if (task === null) return base;
  return {
    ...base,
    id_task: task.idTask,
    n_prompt_tokens: task.promptTokens,
    n_prompt_tokens_processed: task.promptTokensProcessed,
    n_prompt_tokens_cache: task.cachedTokens,
    params: task.params,
    next_token: [{ has_next_token: true, has_new_line: false, n_remain: task.remaining, n_decoded: task.decoded }],
  };
}
