// The OpenAI-compatible endpoints of a simulated vLLM server: chat and text
// completions (streaming or not, usage, include_usage) and embeddings. Every
// token goes through the Engine, so latency, queueing and /metrics are real
// consequences of what was served.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Engine, SequenceStats } from './engine.js';
import type { FinishReason } from './engine-metrics.js';
import { badRequest, HttpError, notFound, readJson, sendJson } from './http-util.js';
import type { VllmServiceProfile } from './profiles.js';
import {
  embeddingFor,
  estimateTextTokens,
  generateJsonTokens,
  generateTokens,
  hashString,
  naturalLength,
} from './text-gen.js';

export interface ApiContext {
  readonly profile: VllmServiceProfile;
  nowMs(): number;
  engine(): Engine;
  /** False after level-2 sleep woken without reload_weights: output is gibberish (vllm#29341). */
  weightsValid(): boolean;
  /** Throws a 503 HttpError while the engine sleeps. */
  assertServing(): void;
  /** Prompt tokens already cached for this prompt key (and remembers it). */
  cachedTokens(promptKey: string, promptTokens: number): number;
  nextId(prefix: string): string;
}

/** Template tokens per chat message and per conversation (role markers, generation prompt). */
const PER_MESSAGE_TOKENS = 4;
const PER_CHAT_TOKENS = 3;
/** What a vision model spends on one page image (order of magnitude for Qwen2.5-VL at ~1 MP). */
const IMAGE_TOKENS = 1200;

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const ChatMessage = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
});
const Common = {
  model: z.string().optional(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  max_tokens: z.number().int().nullish(),
  max_completion_tokens: z.number().int().nullish(),
  seed: z.number().int().nullish(),
  temperature: z.number().nullish(),
  /** vLLM's `ignore_eos`: keep generating until max_tokens (benchmarks use it for exact output lengths). */
  ignore_eos: z.boolean().nullish(),
};
const ChatRequest = z.looseObject({
  ...Common,
  messages: z.array(ChatMessage).min(1),
  response_format: z
    .looseObject({ type: z.string(), json_schema: z.looseObject({ schema: z.unknown().optional() }).nullish() })
    .nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  /**
   * Demo-only test hook (not a vLLM field): makes a structured-output answer
   * wrong on purpose, so benchmark schema checks can be tested — `non-json`
   * answers prose, `schema-mismatch` answers JSON that does not fit the schema.
   * A truncated answer needs no hook: a small max_tokens cuts the JSON.
   */
  demo_fault: z.enum(['non-json', 'schema-mismatch']).nullish(),
});
const CompletionRequest = z.looseObject({ ...Common, prompt: z.union([z.string(), z.array(z.string()).min(1)]) });
const EmbeddingRequest = z.looseObject({
  model: z.string().optional(),
  input: z.union([z.string(), z.array(z.string()).min(1)]),
  encoding_format: z.enum(['float', 'base64']).nullish(),
});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw badRequest(`Invalid request: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'bad body'}`);
  }
  return r.data;
}

function checkModel(ctx: ApiContext, model: string | undefined): string {
  const served = ctx.profile.servedModelName;
  if (model !== undefined && model !== served) throw notFound(`The model \`${model}\` does not exist.`);
  return served;
}

function usageOf(stats: SequenceStats) {
  return {
    prompt_tokens: stats.promptTokens,
    total_tokens: stats.promptTokens + stats.completionTokens,
    completion_tokens: stats.completionTokens,
    prompt_tokens_details: null,
  };
}

interface Plan {
  tokens: string[];
  outputTokens: number;
  doneReason: 'stop' | 'length';
}

function planOutput(
  ctx: ApiContext,
  promptKey: string,
  promptTokens: number,
  body: { max_tokens?: number | null; max_completion_tokens?: number | null; seed?: number | null; temperature?: number | null; ignore_eos?: boolean | null },
  jsonSchema: unknown,
  fault?: 'non-json' | 'schema-mismatch' | null,
): Plan {
  const maxLen = ctx.profile.maxModelLen;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  if (maxTokens !== undefined && maxTokens < 1) throw badRequest(`max_tokens must be at least 1, got ${maxTokens}.`);
  if (promptTokens + (maxTokens ?? 0) > maxLen) {
    throw badRequest(
      `This model's maximum context length is ${maxLen} tokens. However, you requested ${promptTokens + (maxTokens ?? 0)} tokens ` +
        `(${promptTokens} in the messages, ${maxTokens ?? 0} in the completion). Please reduce the length of the messages or completion.`,
    );
  }
  const seed = hashString(`${promptKey}/${body.seed ?? ''}/${body.temperature ?? ''}`);
  const gibberish = !ctx.weightsValid();
  let tokens: string[];
  if (jsonSchema !== undefined && !gibberish && fault === 'schema-mismatch') tokens = generateJsonTokens({ type: 'array', items: { type: 'integer' } }, seed);
  else if (jsonSchema !== undefined && !gibberish && fault !== 'non-json') tokens = generateJsonTokens(jsonSchema, seed);
  else tokens = generateTokens(body.ignore_eos && maxTokens !== undefined ? maxTokens : naturalLength(promptKey), { seed, gibberish });
  const room = maxLen - promptTokens;
  const limit = Math.min(maxTokens ?? room, room);
  if (limit < tokens.length) return { tokens, outputTokens: limit, doneReason: 'length' };
  return { tokens, outputTokens: tokens.length, doneReason: 'stop' };
}

interface StreamShape {
  object: string;
  /** A chunk's choice for one token (or the closing choice when token is null). */
  choice(token: string | null, reason: FinishReason | null, first: boolean): Record<string, unknown>;
  /** The non-streaming body's choice. */
  full(text: string, reason: FinishReason): Record<string, unknown>;
  fullObject: string;
}

const CHAT_SHAPE: StreamShape = {
  object: 'chat.completion.chunk',
  fullObject: 'chat.completion',
  choice: (token, reason, first) => ({
    index: 0,
    delta: first ? { role: 'assistant', content: token ?? '' } : { content: token ?? '' },
    logprobs: null,
    finish_reason: reason,
    ...(reason ? { stop_reason: null } : {}),
  }),
  full: (text, reason) => ({
    index: 0,
    message: { role: 'assistant', content: text, refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning_content: null },
    logprobs: null,
    finish_reason: reason,
    stop_reason: null,
  }),
};

const COMPLETION_SHAPE: StreamShape = {
  object: 'text_completion',
  fullObject: 'text_completion',
  choice: (token, reason) => ({ index: 0, text: token ?? '', logprobs: null, finish_reason: reason, stop_reason: null }),
  full: (text, reason) => ({ index: 0, text, logprobs: null, finish_reason: reason, stop_reason: null, prompt_logprobs: null }),
};

function runGeneration(
  ctx: ApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  shape: StreamShape,
  idPrefix: string,
  model: string,
  promptKey: string,
  promptTokens: number,
  plan: Plan,
  stream: boolean,
  includeUsage: boolean,
): void {
  // vLLM takes the request's id from its X-Request-Id header when one is sent (serving_engine.py
  // _base_request_id; serving_chat.py: id = "chatcmpl-" + it), so the answer's id names what the server received.
  const rid = req.headers['x-request-id'];
  const id = typeof rid === 'string' && rid !== '' ? idPrefix + rid : ctx.nextId(idPrefix);
  const created = Math.floor(ctx.nowMs() / 1000);
  const base = { id, object: shape.object, created, model };
  const usageNull = includeUsage ? { usage: null } : {};
  const write = (payload: unknown) => {
    if (!res.writableEnded && !res.destroyed) res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  let finished = false;
  if (stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
  }
  const handle = ctx.engine().submit({
    promptTokens,
    outputTokens: plan.outputTokens,
    doneReason: plan.doneReason,
    cachedPromptTokens: ctx.cachedTokens(promptKey, promptTokens),
    onToken: (index) => {
      if (stream) write({ ...base, choices: [shape.choice(plan.tokens[index]!, null, index === 0)], ...usageNull });
    },
    onFinish: (reason, stats) => {
      finished = true;
      if (res.destroyed || res.writableEnded) return;
      if (stream) {
        write({ ...base, choices: [shape.choice(null, reason, stats.completionTokens === 0)], ...usageNull });
        if (includeUsage) write({ ...base, choices: [], usage: usageOf(stats) });
        res.end('data: [DONE]\n\n');
        return;
      }
      const text = plan.tokens.slice(0, stats.completionTokens).join('');
      sendJson(res, 200, {
        id,
        object: shape.fullObject,
        created,
        model,
        choices: [shape.full(text, reason)],
        service_tier: null,
        system_fingerprint: null,
        usage: usageOf(stats),
        prompt_logprobs: null,
        kv_transfer_params: null,
      });
    },
  });
  // A client that goes away aborts its sequence (counted as finished_reason="abort").
  res.on('close', () => {
    if (!finished) handle.abort();
  });
  req.on('error', () => handle.abort());
}

function chatPromptTokens(messages: z.infer<typeof ChatMessage>[]): number {
  let tokens = PER_CHAT_TOKENS;
  for (const m of messages) {
    tokens += PER_MESSAGE_TOKENS;
    if (typeof m.content === 'string') tokens += estimateTextTokens(m.content);
    else if (Array.isArray(m.content)) {
      for (const part of m.content) {
        if (part.type === 'text') tokens += estimateTextTokens(part.text ?? '');
        else if (part.type === 'image_url' || part.type === 'input_image') tokens += IMAGE_TOKENS;
      }
    }
  }
  return tokens;
}

export async function handleChat(ctx: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parse(ChatRequest, await readJson(req));
  const model = checkModel(ctx, body.model);
  if (ctx.profile.kind !== 'generate') throw badRequest('The model does not support Chat Completions API');
  ctx.assertServing();
  const promptTokens = chatPromptTokens(body.messages);
  const promptKey = JSON.stringify(body.messages);
  const rf = body.response_format;
  const schema = rf?.type === 'json_schema' ? (rf.json_schema?.schema ?? {}) : rf?.type === 'json_object' ? { type: 'object' } : undefined;
  const plan = planOutput(ctx, promptKey, promptTokens, body, schema, body.demo_fault);
  runGeneration(ctx, req, res, CHAT_SHAPE, 'chatcmpl-', model, promptKey, promptTokens, plan, body.stream === true, body.stream_options?.include_usage === true);
}

export async function handleCompletion(ctx: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parse(CompletionRequest, await readJson(req));
  const model = checkModel(ctx, body.model);
  if (ctx.profile.kind !== 'generate') throw badRequest('The model does not support Completions API');
  ctx.assertServing();
  // Simplification: a list of prompts is served as one prompt (vLLM would answer one choice each).
  const prompt = Array.isArray(body.prompt) ? body.prompt.join('\n') : body.prompt;
  const promptTokens = estimateTextTokens(prompt) + 1; // + BOS
  const plan = planOutput(ctx, prompt, promptTokens, body, undefined);
  runGeneration(ctx, req, res, COMPLETION_SHAPE, 'cmpl-', model, prompt, promptTokens, plan, body.stream === true, body.stream_options?.include_usage === true);
}

export async function handleEmbeddings(ctx: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parse(EmbeddingRequest, await readJson(req));
  const model = checkModel(ctx, body.model);
  const dim = ctx.profile.embeddingDim;
  if (ctx.profile.kind !== 'embed' || dim === undefined) throw badRequest('The model does not support Embeddings API');
  ctx.assertServing();
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const tokenCounts = inputs.map((text) => estimateTextTokens(text) + 2); // + CLS/SEP
  const tooLong = tokenCounts.find((n) => n > ctx.profile.maxModelLen);
  if (tooLong !== undefined) {
    throw badRequest(`This model's maximum context length is ${ctx.profile.maxModelLen} tokens. However, you requested ${tooLong} tokens in the input for embedding generation. Please reduce the length of the input.`);
  }
  const handles: { abort(): void }[] = [];
  let aborted = false;
  res.on('close', () => {
    if (!res.writableEnded) {
      aborted = true;
      for (const h of handles) h.abort();
    }
  });
  const reasons = await Promise.all(
    inputs.map(
      (text, i) =>
        new Promise<FinishReason>((resolve) => {
          handles.push(
            ctx.engine().submit({
              promptTokens: tokenCounts[i]!,
              outputTokens: 0,
              doneReason: 'stop',
              cachedPromptTokens: ctx.cachedTokens(text, tokenCounts[i]!),
              onFinish: (reason) => resolve(reason),
            }),
          );
        }),
    ),
  );
  if (aborted || res.destroyed) return;
  if (reasons.some((r) => r === 'abort')) throw new HttpError(500, 'InternalServerError', 'The request was aborted by the engine.');
  const promptTokens = tokenCounts.reduce((a, b) => a + b, 0);
  sendJson(res, 200, {
    id: ctx.nextId('embd-'),
    object: 'list',
    created: Math.floor(ctx.nowMs() / 1000),
    model,
    data: inputs.map((text, index) => {
      const vector = embeddingFor(text, dim);
      const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
      return { index, object: 'embedding', embedding };
    }),
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, completion_tokens: 0, prompt_tokens_details: null },
  });
}

