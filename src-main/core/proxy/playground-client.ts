// One playground request to the proxy's own port, read as a client reads it:
// the proxy's headers (its own request id, X-Upstream, X-Queue-Ms, what it did
// to max_tokens, Retry-After), the
// streamed chunks with their arrival times (one monotonic read per piece), the
// usage block, and a refusal or an in-stream error frame as data. Figures come
// from the answer's own timestamps and usage; with no usage block the token
// figures stay unknown (never counted from chunks, never 0).
import { StringDecoder } from 'node:string_decoder';
import type { IncomingHttpHeaders } from 'node:http';
import { PlaygroundErrorCode, type PlaygroundAnswer, type PlaygroundAnswerError, type TrafficClass } from '../../../src-preload/contract/index.js';
import { AppError, isCancellation } from '../base/index.js';
import type { UpstreamClient, UpstreamStream } from '../upstream/index.js';

/** Longest answer text kept (characters); a longer answer is cut and said so. */
export const MAX_ANSWER_CHARS = 2_000_000;
/** Longest unstreamed answer body read (bytes). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Of an error answer, this much is read to find its code. */
const MAX_ERROR_BYTES = 64 * 1024;
/** Longest SSE event held while waiting for its end. */
const MAX_EVENT_CHARS = 1 << 20;

export interface ChatCall {
  client: Pick<UpstreamClient, 'stream'>;
  /** The chat completions path on the client. */
  path: string;
  authorization: string;
  cls: TrafficClass;
  body: Record<string, unknown>;
  stream: boolean;
  deadlineMs: number;
  signal: AbortSignal;
  /** Monotonic milliseconds. */
  now: () => number;
  /** The proxy's headers arrived: which request this is and which replica took it. */
  onHeaders?: (ids: { requestId: string | null; upstream: string | null }) => void;
  onText?: (text: string) => void;
}

export type ChatAnswer = Omit<PlaygroundAnswer, 'runId'>;

interface Chunk {
  model?: unknown;
  choices?: { delta?: { content?: unknown }; message?: { content?: unknown }; finish_reason?: unknown }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  error?: { code?: unknown; type?: unknown; message?: unknown; retry_after_s?: unknown };
}

/** What a streamed or unstreamed answer told so far. */
class AnswerReader {
  text = '';
  model: string | null = null;
  finishReason: string | null = null;
  promptTokens: number | null = null;
  completionTokens: number | null = null;
  error: PlaygroundAnswerError | null = null;
  firstContentAt: number | null = null;
  lastContentAt: number | null = null;

  constructor(private readonly onText: ((text: string) => void) | undefined) {}

  /** One chat completion object (a stream's chunk, or the whole unstreamed answer) that arrived at `at`. */
  take(chunk: Chunk, at: number, inStream: boolean): void {
    if (chunk.error && typeof chunk.error === 'object') {
      this.error = errorOf(chunk.error, null, inStream);
      return;
    }
    if (typeof chunk.model === 'string') this.model = chunk.model;
    if (chunk.usage && typeof chunk.usage === 'object') {
      this.promptTokens = count(chunk.usage.prompt_tokens) ?? this.promptTokens;
      this.completionTokens = count(chunk.usage.completion_tokens) ?? this.completionTokens;
    }
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      const content = choice.delta?.content ?? choice.message?.content;
      if (typeof content === 'string' && content.length > 0) this.add(content, at);
      if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    }
  }

  private add(content: string, at: number): void {
    this.firstContentAt ??= at;
    this.lastContentAt = at;
    const room = MAX_ANSWER_CHARS - this.text.length;
    if (room <= 0) return;
    const piece = content.length > room ? content.slice(0, room) : content;
    this.text += piece;
    this.onText?.(piece);
    if (piece.length < content.length) this.error ??= { code: 'answer_too_large', message: `the answer went past ${MAX_ANSWER_CHARS} characters; the rest is not shown`, retryAfterS: null, inStream: true };
  }
}

function count(x: unknown): number | null {
  return typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : null;
}

function header(h: IncomingHttpHeaders, name: string): string | null {
  const v = h[name];
  return typeof v === 'string' && v.length > 0 ? v : null;
}

function retryAfterOf(h: IncomingHttpHeaders): number | null {
  const v = header(h, 'retry-after');
  return v !== null && /^\d{1,9}$/.test(v) ? Number(v) : null;
}

function errorOf(e: NonNullable<Chunk['error']>, retryAfterS: number | null, inStream: boolean): PlaygroundAnswerError {
  const code = typeof e.code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(e.code) ? e.code : typeof e.type === 'string' ? e.type.slice(0, 64) : 'stream_error';
  const inFrame = typeof e.retry_after_s === 'number' && e.retry_after_s >= 0 ? e.retry_after_s : null;
  return { code, message: typeof e.message === 'string' ? e.message.slice(0, 2_000) : '', retryAfterS: retryAfterS ?? inFrame, inStream };
}

/** The refusal an error answer carries: its OpenAI-shaped body's code, or HTTP_<status>. */
export function refusalOf(status: number, headers: IncomingHttpHeaders, text: string): PlaygroundAnswerError {
  const retryAfterS = retryAfterOf(headers);
  try {
    const body = JSON.parse(text) as Chunk;
    if (body.error && typeof body.error === 'object') return errorOf(body.error, retryAfterS, false);
  } catch {
    // not JSON: the status says it
  }
  return { code: `HTTP_${status}`, message: text.slice(0, 300), retryAfterS, inStream: false };
}

async function readCapped(body: AsyncIterable<Buffer>, max: number): Promise<{ text: string; complete: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const piece of body) {
    if (size + piece.length > max) {
      parts.push(piece.subarray(0, max - size));
      return { text: Buffer.concat(parts).toString('utf8'), complete: false };
    }
    size += piece.length;
    parts.push(piece);
  }
  return { text: Buffer.concat(parts).toString('utf8'), complete: true };
}

/** Reads SSE events as they complete; each `data:` line's JSON goes to the reader with its piece's arrival time. */
export async function readEvents(body: AsyncIterable<Buffer>, reader: AnswerReader, now: () => number): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const piece of body) {
    const at = now();
    pending += decoder.write(piece);
    let end: RegExpExecArray | null;
    while ((end = /\r?\n\r?\n/.exec(pending)) !== null) {
      const event = pending.slice(0, end.index);
      pending = pending.slice(end.index + end[0].length);
      takeEvent(event, reader, at);
    }
    if (pending.length > MAX_EVENT_CHARS) {
      reader.error = { code: 'bad_stream', message: `a stream event went past ${MAX_EVENT_CHARS} characters without its end`, retryAfterS: null, inStream: true };
      return;
    }
  }
  if (pending.trim() !== '') takeEvent(pending, reader, now());
}

function takeEvent(event: string, reader: AnswerReader, at: number): void {
  for (const line of event.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]' || data === '') continue;
    try {
      reader.take(JSON.parse(data) as Chunk, at, true);
    } catch {
      // a line that is not JSON carries nothing the panel shows
    }
  }
}

/** Decode speed: tokens after the first over the time between the first and last content chunk. */
export function decodeTokensPerS(completionTokens: number | null, firstAt: number | null, lastAt: number | null): number | null {
  if (completionTokens === null || completionTokens < 2 || firstAt === null || lastAt === null || lastAt <= firstAt) return null;
  return (completionTokens - 1) / ((lastAt - firstAt) / 1000);
}

/** Sends the chat and reads its answer. Throws only when no answer could be had (cancelled, unreachable). */
export async function sendChat(call: ChatCall): Promise<ChatAnswer> {
  const t0 = call.now();
  let res: UpstreamStream;
  try {
    res = await call.client.stream({
      method: 'POST',
      path: call.path,
      headers: { 'content-type': 'application/json', authorization: call.authorization, 'x-priority': call.cls },
      body: JSON.stringify(call.body),
      deadlineMs: call.deadlineMs,
      signal: call.signal,
    });
  } catch (err) {
    throw unreachable(err, call.signal);
  }
  // The proxy's own id names the row; X-Request-Id carries a client's trace when it sent one.
  const requestId = header(res.headers, 'x-gpu-console-request-id') ?? header(res.headers, 'x-request-id');
  const maxTokensNote = header(res.headers, 'x-gpu-console-max-tokens');
  const upstream = header(res.headers, 'x-upstream');
  const queue = header(res.headers, 'x-queue-ms');
  call.onHeaders?.({ requestId, upstream });
  const reader = new AnswerReader(call.onText);
  try {
    if (res.status >= 400) reader.error = refusalOf(res.status, res.headers, (await readCapped(res.body, MAX_ERROR_BYTES)).text);
    else if (call.stream) await readEvents(res.body, reader, call.now);
    else {
      const { text, complete } = await readCapped(res.body, MAX_BODY_BYTES);
      if (!complete) reader.error = { code: 'answer_too_large', message: `the answer is over ${MAX_BODY_BYTES} bytes; not read`, retryAfterS: null, inStream: false };
      else reader.take(parseAnswer(text), call.now(), false);
    }
  } catch (err) {
    if (call.signal.aborted) throw unreachable(err, call.signal);
    const coded = res.classify(err);
    reader.error = { code: coded.code, message: coded.message, retryAfterS: null, inStream: call.stream };
  } finally {
    if (!res.body.readableEnded) res.body.destroy();
    await res.release();
  }
  const totalMs = call.now() - t0;
  if (res.status < 400 && reader.error === null && reader.finishReason === null) {
    reader.error = { code: 'stream_cut', message: 'the answer ended without a finish reason', retryAfterS: null, inStream: call.stream };
  }
  return figures(reader, { requestId, upstream, maxTokensNote, status: res.status, stream: call.stream, t0, totalMs, queueMs: queue !== null && /^\d+(\.\d+)?$/.test(queue) ? Number(queue) : null });
}

function parseAnswer(text: string): Chunk {
  try {
    const body = JSON.parse(text) as unknown;
    return typeof body === 'object' && body !== null ? (body as Chunk) : {};
  } catch {
    return { error: { code: 'bad_answer', message: 'the answer is not JSON' } };
  }
}

function figures(
  r: AnswerReader,
  a: { requestId: string | null; upstream: string | null; maxTokensNote: string | null; status: number; stream: boolean; t0: number; totalMs: number; queueMs: number | null },
): ChatAnswer {
  const decode = a.stream ? decodeTokensPerS(r.completionTokens, r.firstContentAt, r.lastContentAt) : null;
  const endToEnd = !a.stream && r.completionTokens !== null && r.completionTokens > 0 && a.totalMs > 0 ? r.completionTokens / (a.totalMs / 1000) : null;
  const tokensPerS = decode ?? endToEnd;
  return {
    requestId: a.requestId,
    upstream: a.upstream,
    model: r.model,
    status: a.status,
    maxTokensNote: a.maxTokensNote,
    text: r.text,
    finishReason: r.finishReason,
    error: r.error,
    stream: a.stream,
    ttftMs: a.stream && r.firstContentAt !== null ? r.firstContentAt - a.t0 : null,
    totalMs: a.totalMs,
    queueMs: a.queueMs,
    promptTokens: r.promptTokens,
    completionTokens: r.completionTokens,
    tokensPerS,
    tokensPerSBasis: tokensPerS === null ? null : decode !== null ? 'decode' : 'end_to_end',
  };
}

/** No answer: a cancellation stays one (silent); anything else is the proxy unreachable, coded. */
function unreachable(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || isCancellation(err)) return err;
  const e = err instanceof AppError ? err : null;
  return new AppError(PlaygroundErrorCode.PROXY_UNREACHABLE, `the proxy did not answer: ${e?.message ?? String(err)}`, { retryable: true, cause: err });
}

export { AnswerReader };
