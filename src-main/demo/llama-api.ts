// The completion endpoints of a simulated llama-server, in the shapes of
// b10573 (fixtures chat.json, chat-stream.txt): OpenAI chat and text
// completions, streaming or not; `usage` in a last `choices: []` chunk only
// with stream_options.include_usage; `timings` on the last chunk (or the
// body); errors as {"error":{code,message,type}} with the HTTP status = code.
// A streamed answer sends its headers with the first token, as the server
// waits for the first result so that an early error can still be a status.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, readBody } from './http-util.js';
import type { LlamaEngine, LlamaResult } from './llama-engine.js';
import { LLAMA_BUILD_INFO, llamaError, samplingParams, type LlamaErrorType } from './llama-shapes.js';
import type { LlamaServiceProfile } from './profiles.js';
import { createPrng, estimateTextTokens, generateTokens, hashString, naturalLength } from './text-gen.js';

export interface LlamaApiContext {
  readonly profile: LlamaServiceProfile;
  nowMs(): number;
  engine(): LlamaEngine;
  /** A completion request arrived: resets the idle timer and, when asleep, waits for the model to load again. */
  wake(): Promise<void>;
  /** A fresh request id seed (unique per process). */
  nextSeed(): number;
}

export class LlamaHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(typeof body === 'object' && body !== null ? JSON.stringify(body) : String(body));
  }
}

export function llamaFail(code: number, message: string, type: LlamaErrorType, extra: Record<string, unknown> = {}): LlamaHttpError {
  return new LlamaHttpError(code, llamaError(code, message, type, extra));
}

const invalid = (message: string) => llamaFail(400, message, 'invalid_request_error');

export function sendLlamaJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The body as JSON; what nlohmann::json says about text that is not (a server_error, HTTP 500). */
export async function readLlamaJson(req: IncomingMessage): Promise<unknown> {
  let text: string;
  try {
    text = (await readBody(req)).toString('utf8');
  } catch (err) {
    if (err instanceof HttpError) throw llamaFail(413, err.message, 'invalid_request_error');
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    const column = at ? Number(at[1]) + 1 : text.length + 1;
    const what = text.trim() === '' || /end of JSON input/i.test(message) ? "unexpected end of input; expected '[', '{', or a literal" : 'invalid literal';
    throw llamaFail(500, `[json.exception.parse_error.101] parse error at line 1, column ${column}: syntax error while parsing value - ${what}`, 'server_error');
  }
}

/** Template tokens per chat message and per conversation (role markers, generation prompt). */
const PER_MESSAGE_TOKENS = 4;
const PER_CHAT_TOKENS = 3;
const IMAGE_TOKENS = 1200;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function bodyObject(body: unknown): Json {
  if (!isObject(body)) throw llamaFail(500, `[json.exception.type_error.306] cannot use value() with ${Array.isArray(body) ? 'array' : typeof body}`, 'server_error');
  return body;
}

/** The checks of oaicompat_chat_params_parse, with its messages. */
function chatPromptTokens(body: Json): number {
  if (!('messages' in body)) throw invalid("'messages' is required");
  const messages = body['messages'];
  if (!Array.isArray(messages)) throw invalid(`Expected 'messages' to be an array, got ${JSON.stringify(messages)}`);
  let tokens = PER_CHAT_TOKENS;
  for (const msg of messages) {
    if (!isObject(msg)) throw invalid(`Expected 'message' to be an object, got ${JSON.stringify(msg)}`);
    if (!('role' in msg)) throw invalid(`Missing 'role' in message: ${JSON.stringify(msg)}`);
    const role = msg['role'];
    if (role !== 'assistant' && !('content' in msg)) throw invalid("All non-assistant messages must contain 'content'");
    tokens += PER_MESSAGE_TOKENS;
    const content = msg['content'];
    if (typeof content === 'string') tokens += estimateTextTokens(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (!isObject(part)) continue;
        if (part['type'] === 'text' && typeof part['text'] === 'string') tokens += estimateTextTokens(part['text']);
        else if (part['type'] === 'image_url') tokens += IMAGE_TOKENS;
      }
    }
  }
  return tokens;
}

function completionPrompt(body: Json): string {
  const prompt = body['prompt'];
  if (prompt === undefined) throw invalid('"prompt" must be provided');
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === 'string')) return prompt.join('\n');
  throw invalid('"prompt" must be a string, a list of strings or a list of tokens');
}

interface Plan {
  tokens: string[];
  outputTokens: number;
  doneReason: 'stop' | 'length';
  /** The task's generation limit (-1: none): the request's max_tokens or the server's -n. */
  limit: number;
  requested: number;
}

function plan(ctx: LlamaApiContext, promptKey: string, promptTokens: number, body: Json): Plan {
  const nCtx = ctx.engine().nCtx;
  if (promptTokens >= nCtx) {
    throw llamaFail(400, `request (${promptTokens} tokens) exceeds the available context size (${nCtx} tokens), try increasing it`, 'exceed_context_size_error', {
      n_prompt_tokens: promptTokens,
      n_ctx: nCtx,
    });
  }
  const asked = num(body['max_completion_tokens']) ?? num(body['max_tokens']) ?? num(body['n_predict']);
  const requested = asked !== undefined && asked >= 0 ? Math.floor(asked) : -1;
  const cap = ctx.profile.nPredict;
  const limits = [requested, cap].filter((n) => n >= 0);
  const limit = limits.length > 0 ? Math.min(...limits) : -1;
  const room = nCtx - promptTokens;
  const natural = body['ignore_eos'] === true ? (limit >= 0 ? limit : room) : naturalLength(promptKey);
  const outputTokens = Math.max(1, Math.min(natural, limit >= 0 ? limit : Infinity, room));
  const seed = hashString(`${promptKey}/${String(body['seed'] ?? '')}/${String(body['temperature'] ?? '')}`);
  const tokens = generateTokens(Math.min(natural, outputTokens + 1), { seed }).slice(0, outputTokens);
  return { tokens, outputTokens, doneReason: outputTokens < natural ? 'length' : 'stop', limit, requested };
}

function idFor(prefix: string, seed: number): string {
  const next = createPrng(seed);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let id = prefix;
  for (let i = 0; i < 32; i++) id += alphabet[Math.floor(next() * alphabet.length)];
  return id;
}

function usageOf(r: LlamaResult) {
  return {
    completion_tokens: r.completionTokens,
    prompt_tokens: r.promptTokens,
    total_tokens: r.promptTokens + r.completionTokens,
    prompt_tokens_details: { cached_tokens: r.cachedTokens },
  };
}

/** The server measures in µs and prints ms with three decimals. */
const ms = (x: number) => Math.round(x * 1000) / 1000;

function timingsOf(r: LlamaResult) {
  const promptN = r.promptTokens - r.cachedTokens;
  const predictedN = r.completionTokens;
  const promptMs = ms(r.promptMs);
  const predictedMs = ms(r.predictedMs);
  return {
    cache_n: r.cachedTokens,
    prompt_n: promptN,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptN > 0 ? promptMs / promptN : 0,
    prompt_per_second: promptMs > 0 ? (1000 * promptN) / promptMs : 0,
    predicted_n: predictedN,
    predicted_ms: predictedMs,
    predicted_per_token_ms: predictedN > 0 ? predictedMs / predictedN : 0,
    predicted_per_second: predictedMs > 0 ? (1000 * predictedN) / predictedMs : 0,
  };
}

const reasonOf = (r: LlamaResult) => (r.reason === 'length' ? 'length' : 'stop');

interface Shape {
  idPrefix: string;
  /** One streamed choice: a token, the opening (role) chunk, or the closing one. */
  choice(part: { token?: string; role?: true; finish?: string }): Json;
  /** The non-streaming choice. */
  full(text: string, finish: string): Json;
  object: string;
  chunkObject: string;
}

const CHAT: Shape = {
  idPrefix: 'chatcmpl-',
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  choice: ({ token, role, finish }) => ({
    finish_reason: finish ?? null,
    index: 0,
    delta: role ? { role: 'assistant', content: null } : token !== undefined ? { content: token } : {},
  }),
  full: (text, finish) => ({ finish_reason: finish, index: 0, message: { role: 'assistant', content: text } }),
};

const COMPLETION: Shape = {
  idPrefix: 'cmpl-',
  object: 'text_completion',
  chunkObject: 'text_completion',
  choice: ({ token, finish }) => ({ text: token ?? '', index: 0, logprobs: null, finish_reason: finish ?? null }),
  full: (text, finish) => ({ text, index: 0, logprobs: null, finish_reason: finish }),
};

function run(ctx: LlamaApiContext, req: IncomingMessage, res: ServerResponse, shape: Shape, p: Plan, promptKey: string, promptTokens: number, body: Json): void {
  const stream = body['stream'] === true;
  const includeUsage = isObject(body['stream_options']) && body['stream_options']['include_usage'] === true;
  const id = idFor(shape.idPrefix, ctx.nextSeed());
  const created = Math.floor(ctx.nowMs() / 1000);
  const model = ctx.profile.alias;
  // The streamed chunks put id after created; the full body puts it after usage (as b10573 does).
  const chunk = (choices: Json[], extra: Json = {}) => ({ choices, created, id, model, system_fingerprint: LLAMA_BUILD_INFO, object: shape.chunkObject, ...extra });
  const write = (payload: unknown) => {
    if (!res.writableEnded && !res.destroyed) res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  const openStream = () => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, { 'X-Accel-Buffering': 'no', 'Content-Type': 'text/event-stream' });
  };
  let finished = false;
  const handle = ctx.engine().submit({
    promptKey,
    promptTokens,
    outputTokens: p.outputTokens,
    doneReason: p.doneReason,
    limit: p.limit,
    params: samplingParams({
      seed: num(body['seed']),
      temperature: num(body['temperature']),
      topP: num(body['top_p']),
      topK: num(body['top_k']),
      maxTokens: p.requested,
      stream,
      ignoreEos: body['ignore_eos'] === true,
      chatFormat: shape === CHAT ? 'peg-native' : 'Content-only',
      reasoningFormat: shape === CHAT ? 'deepseek' : 'none',
    }),
    onToken: (index) => {
      if (!stream) return;
      if (index === 0) {
        openStream();
        if (shape === CHAT) write(chunk([shape.choice({ role: true })]));
      }
      write(chunk([shape.choice({ token: p.tokens[index]! })]));
    },
    onFinish: (r) => {
      finished = true;
      if (res.destroyed || res.writableEnded || r.reason === 'abort') return;
      const finish = reasonOf(r);
      if (stream) {
        openStream();
        if (includeUsage) {
          write(chunk([shape.choice({ finish })]));
          write(chunk([], { usage: usageOf(r), timings: timingsOf(r) }));
        } else {
          write(chunk([shape.choice({ finish })], { timings: timingsOf(r) }));
        }
        res.end('data: [DONE]\n\n');
        return;
      }
      const text = p.tokens.slice(0, r.completionTokens).join('');
      sendLlamaJson(res, 200, {
        choices: [shape.full(text, finish)],
        created,
        model,
        system_fingerprint: LLAMA_BUILD_INFO,
        object: shape.object,
        usage: usageOf(r),
        id,
        timings: timingsOf(r),
      });
    },
  });
  // A client that goes away cancels its task (the slot is freed, nothing counted).
  res.on('close', () => {
    if (!finished) handle.abort();
  });
  req.on('error', () => handle.abort());
}

export async function handleLlamaChat(ctx: LlamaApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = bodyObject(await readLlamaJson(req));
  const promptTokens = chatPromptTokens(body);
  const promptKey = JSON.stringify(body['messages']);
  const p = plan(ctx, promptKey, promptTokens, body);
  await ctx.wake();
  run(ctx, req, res, CHAT, p, promptKey, promptTokens, body);
}

export async function handleLlamaCompletion(ctx: LlamaApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = bodyObject(await readLlamaJson(req));
  const prompt = completionPrompt(body);
  const promptTokens = estimateTextTokens(prompt) + 1; // + BOS
  const p = plan(ctx, prompt, promptTokens, body);
  await ctx.wake();
  run(ctx, req, res, COMPLETION, p, prompt, promptTokens, body);
}
