import { z } from 'zod';
import { ModelNameSchema } from './primitives.js';
import { TrafficClassSchema, type UpstreamState } from './proxy.js';

export { PlaygroundErrorCode } from './codes.js';

// Contract channels of the playground: a chat with any model or group the
// proxy knows, sent through the proxy's own port like any client's (queued,
// logged and counted under the client `console:playground`). The call answers
// when the answer is complete; streamed text arrives before that as
// `playground.progress` events (skippable: the call's answer holds it all).

/** Longest message, system prompt included (characters). */
export const PLAYGROUND_MAX_MESSAGE_CHARS = 100_000;
/** Most turns sent in one conversation. */
export const PLAYGROUND_MAX_TURNS = 200;
/** Highest max_tokens the panel asks for; the proxy's per-model ceiling may clamp or refuse lower. */
export const PLAYGROUND_MAX_TOKENS_LIMIT = 131_072;

export const PlaygroundRunIdSchema = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, { error: '8 to 64 letters, digits, "_" or "-"' });

export const PlaygroundTurnSchema = z
  .object({
    role: z.enum(['user', 'assistant']),
    content: z.string().max(PLAYGROUND_MAX_MESSAGE_CHARS),
  })
  .strict();
export type PlaygroundTurn = z.infer<typeof PlaygroundTurnSchema>;

export const PlaygroundSendSchema = z
  .object({
    /** Chosen by the panel, so its progress events can be told apart before the call answers. */
    runId: PlaygroundRunIdSchema,
    model: ModelNameSchema,
    class: TrafficClassSchema.default('interactive'),
    stream: z.boolean().default(true),
    /** ≤ 0 is refused PLAYGROUND_INVALID_MAX_TOKENS (named), not a schema error. */
    maxTokens: z.number().int().max(PLAYGROUND_MAX_TOKENS_LIMIT),
    /** Null: the server's default. Outside 0–2 is refused PLAYGROUND_INVALID_TEMPERATURE. */
    temperature: z.number().nullable().default(null),
    systemPrompt: z.string().max(PLAYGROUND_MAX_MESSAGE_CHARS).default(''),
    /** The conversation so far, the new user turn last. */
    turns: z.array(PlaygroundTurnSchema).min(1).max(PLAYGROUND_MAX_TURNS),
  })
  .strict();
export type PlaygroundSend = z.input<typeof PlaygroundSendSchema>;

/** A refusal or failure the answer carried: the proxy's own (429 queue_full, 503 model_sleeping…) or the server's. */
export const PlaygroundAnswerErrorSchema = z
  .object({
    /** The wire code (`queue_full`, `tunnel_down`…), or HTTP_<status> when the body named none. */
    code: z.string(),
    message: z.string(),
    /** The answer's Retry-After (seconds); null when it sent none. */
    retryAfterS: z.number().nullable(),
    /** True when it came inside a stream that had begun (the status line said 200). */
    inStream: z.boolean(),
  })
  .strict();
export type PlaygroundAnswerError = z.infer<typeof PlaygroundAnswerErrorSchema>;

export const PlaygroundAnswerSchema = z
  .object({
    runId: z.string(),
    /** The proxy's own request id (X-GPU-Console-Request-Id): the request's row in the Proxy view. Null when no answer came. */
    requestId: z.string().nullable(),
    /** The proxy's X-Upstream: the replica (`label/serviceId`) that answered; null when none was chosen. */
    upstream: z.string().nullable(),
    /** The model the upstream serves (the answer's `model`); null when unknown. */
    model: z.string().nullable(),
    status: z.number().int().nullable(),
    /** What the proxy did to max_tokens (X-GPU-Console-Max-Tokens: "default 512", "clamped 9000→4096"); null: sent as asked. */
    maxTokensNote: z.string().nullable(),
    text: z.string(),
    finishReason: z.string().nullable(),
    error: PlaygroundAnswerErrorSchema.nullable(),
    stream: z.boolean(),
    /** From sending to the first content chunk (queue wait included); null unstreamed or with no content. */
    ttftMs: z.number().nonnegative().nullable(),
    /** From sending to the end of the answer. */
    totalMs: z.number().nonnegative(),
    /** The proxy's X-Queue-Ms; null when absent. */
    queueMs: z.number().nonnegative().nullable(),
    /** From the answer's usage block; null when the server sent none (never counted from chunks). */
    promptTokens: z.number().int().nonnegative().nullable(),
    completionTokens: z.number().int().nonnegative().nullable(),
    /**
     * Completion tokens per second: streamed, over the decode (first to last content chunk, first token
     * excluded); unstreamed, over the whole answer. Null when usage or timing cannot give it.
     */
    tokensPerS: z.number().nonnegative().nullable(),
    tokensPerSBasis: z.enum(['decode', 'end_to_end']).nullable(),
  })
  .strict();
export type PlaygroundAnswer = z.infer<typeof PlaygroundAnswerSchema>;

/** Streamed text as it arrives (batched, a few events a second), and the request's identity once its headers came. */
export const PlaygroundProgressSchema = z
  .object({
    runId: z.string(),
    /** 0, 1, 2… per run: a gap means events were skipped (the call's answer still holds the whole text). */
    seq: z.number().int().nonnegative(),
    /** Text since the previous event. */
    text: z.string(),
    requestId: z.string().nullable(),
    upstream: z.string().nullable(),
  })
  .strict();
export type PlaygroundProgress = z.infer<typeof PlaygroundProgressSchema>;

export const playgroundInvokeChannels = {
  /**
   * Sends one conversation through the proxy and answers when the answer is complete. Aborting the
   * call (the panel's Stop) closes the request: the proxy records the client gone (499).
   */
  'playground.send': { input: PlaygroundSendSchema, output: PlaygroundAnswerSchema },
} as const;

export const playgroundEventChannels = {
  'playground.progress': PlaygroundProgressSchema,
} as const;

/**
 * The replicas of a name that are asleep when none of them could answer now (ready, or draining with
 * a Retry-After of its own); empty when the name is not asleep. The one rule for main's refusal
 * (PLAYGROUND_MODEL_SLEEPING) and the panel's "asleep" mark.
 */
export function asleepReplicas(replicas: readonly string[], stateOf: (upstream: string) => UpstreamState | undefined): string[] {
  const asleep = replicas.filter((r) => stateOf(r) === 'sleeping');
  const couldAnswer = replicas.some((r) => stateOf(r) === 'ready' || stateOf(r) === 'draining');
  return couldAnswer ? [] : asleep;
}
