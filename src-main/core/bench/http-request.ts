// One benchmark request with exact timing: queue wait (the proxy's X-Queue-Ms),
// time to the first content token, every gap between content chunks, total
// latency, usage from the server, finish reason and a coded error. Never
// throws: a failure is a result with an error code. A request that met a
// kept-alive connection the server had just closed is sent once more on a fresh
// one by the target's UpstreamClient, as the proxy does; its times count from
// the first attempt.
import { AppError } from '../base/index.js';
import { UpstreamErrorCode, type UpstreamClient, type UpstreamStream } from '../upstream/index.js';
import { RequestErrorCode } from './errors.js';

export interface RequestSpec {
  /** The target's client: its keep-alive connections, the one retry, the deadline and the classifier. */
  client: Pick<UpstreamClient, 'stream'>;
  /** The chat completions path on it. */
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  stream: boolean;
  timeoutMs: number;
  signal: AbortSignal;
  /** Monotonic milliseconds (performance.now in production; injected in tests). */
  now: () => number;
}

export interface RequestOutcome {
  startMs: number;
  queueMs: number | null;
  ttftMs: number | null;
  totalMs: number | null;
  itlMs: number[];
  promptTokens: number | null;
  completionTokens: number | null;
  finishReason: string | null;
  status: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** The answer's text (content, not reasoning), for the structured-output checks. */
  text: string | null;
  /** Ended by the run's cancel: neither success nor failure. */
  cancelled: boolean;
}

interface Choice {
  delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null };
  message?: { content?: string | null };
  finish_reason?: string | null;
}
interface Chunk {
  choices?: Choice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { code?: string | number; type?: string; message?: string };
}

/** What runRequest says beyond the recorded outcome. */
export interface RequestRun extends RequestOutcome {
  /** The first attempt met a connection the server had closed; the answer came from the one retry. */
  retried: boolean;
}

const MAX_TEXT = 1_000_000;
/** Longest non-streamed answer read; a larger one is a BENCH_BAD_STREAM, not a process that grows with it. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Of an error answer only the start is kept (300 characters); this much is read to find its code. */
const MAX_ERROR_BYTES = 64 * 1024;
/** Longest stream line held while waiting for its newline. */
export const MAX_STREAM_LINE_CHARS = 1 << 20;

/** The body as text, up to `max` bytes; `complete` false when it went on (the rest is not read: the stream is destroyed). */
async function readCapped(body: AsyncIterable<Buffer>, max: number): Promise<{ text: string; complete: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  let complete = true;
  for await (const piece of body) {
    if (size + piece.length > max) {
      parts.push(piece.subarray(0, max - size));
      complete = false;
      break;
    }
    size += piece.length;
    parts.push(piece);
  }
  return { text: Buffer.concat(parts).toString('utf8'), complete };
}

let retriesTotal = 0;

/** Benchmark requests sent a second time, on a fresh connection, since the process started. */
export function benchConnectionRetries(): number {
  return retriesTotal;
}

export async function runRequest(spec: RequestSpec): Promise<RequestRun> {
  const t0 = spec.now();
  const out: RequestRun = {
    startMs: t0,
    queueMs: null,
    ttftMs: null,
    totalMs: null,
    itlMs: [],
    promptTokens: null,
    completionTokens: null,
    finishReason: null,
    status: null,
    errorCode: null,
    errorMessage: null,
    text: null,
    cancelled: false,
    retried: false,
  };
  let answer: UpstreamStream | null = null;
  try {
    // The client sends it once more on a fresh connection when it met one the server had just closed.
    answer = await spec.client.stream({
      method: 'POST',
      path: spec.path,
      headers: { 'content-type': 'application/json', ...spec.headers },
      body: JSON.stringify(spec.body),
      deadlineMs: spec.timeoutMs,
      signal: spec.signal,
    });
    if (answer.retried) {
      out.retried = true;
      retriesTotal++;
    }
    const res = answer;
    out.status = res.status;
    const q = res.headers['x-queue-ms'];
    if (typeof q === 'string' && /^\d+(\.\d+)?$/.test(q)) out.queueMs = Number(q);
    if (res.status >= 400) {
      const text = (await readCapped(res.body, MAX_ERROR_BYTES).catch(() => null))?.text ?? '';
      out.totalMs = spec.now() - t0;
      out.errorCode = errorCodeOf(res.status, text);
      out.errorMessage = text.slice(0, 300);
      return out;
    }
    if (spec.stream) await readStream(res.body, out, spec.now, t0);
    else {
      const { text, complete } = await readCapped(res.body, MAX_ANSWER_BYTES);
      if (!complete) {
        out.totalMs = spec.now() - t0;
        out.errorCode = RequestErrorCode.BAD_STREAM;
        out.errorMessage = `the answer is over ${MAX_ANSWER_BYTES} bytes; not read`;
        return out;
      }
      const body = JSON.parse(text) as Chunk;
      out.ttftMs = null; // not observable without streaming
      const choice = body.choices?.[0];
      out.text = choice?.message?.content ?? null;
      out.finishReason = choice?.finish_reason ?? null;
      out.promptTokens = body.usage?.prompt_tokens ?? null;
      out.completionTokens = body.usage?.completion_tokens ?? null;
    }
    out.totalMs = spec.now() - t0;
    if (out.finishReason === null && out.errorCode === null) {
      out.errorCode = RequestErrorCode.BAD_STREAM;
      out.errorMessage = 'the answer ended without a finish reason';
    }
    return out;
  } catch (err) {
    out.totalMs = spec.now() - t0;
    if (spec.signal.aborted) {
      out.cancelled = true;
      out.errorCode = null;
      return out;
    }
    // Before the status line the client threw it coded; while the body was read, the answer's classifier says.
    const coded = answer ? answer.classify(err) : err;
    if (!answer && coded instanceof AppError && coded.details['retried'] === true) {
      out.retried = true;
      retriesTotal++;
    }
    if (coded instanceof AppError && coded.code === UpstreamErrorCode.TIMEOUT) {
      out.errorCode = RequestErrorCode.TIMEOUT;
      out.errorMessage = `no complete answer within ${spec.timeoutMs} ms`;
      return out;
    }
    out.errorCode = out.status === null ? RequestErrorCode.CONNECTION : RequestErrorCode.BAD_STREAM;
    // What the library (or the JSON parser) said, as before the classifier wrapped it.
    out.errorMessage = (coded instanceof AppError && coded.cause instanceof Error ? coded.cause : (err as Error)).message;
    return out;
  } finally {
    if (answer && !answer.body.readableEnded) answer.body.destroy();
    // The retry's connection carried this one request: nothing else will use it.
    await answer?.release();
  }
}

async function readStream(body: AsyncIterable<Buffer>, out: RequestOutcome, now: () => number, t0: number): Promise<void> {
  let buffer = '';
  let last: number | null = null;
  let text = '';
  let chunks = 0;
  for await (const piece of body) {
    const at = now();
    buffer += piece.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') continue;
      let chunk: Chunk;
      try {
        chunk = JSON.parse(data) as Chunk;
      } catch {
        continue;
      }
      if (chunk.error) {
        out.errorCode = String(chunk.error.code ?? chunk.error.type ?? 'stream_error');
        out.errorMessage = chunk.error.message ?? null;
        continue;
      }
      if (chunk.usage) {
        out.promptTokens = chunk.usage.prompt_tokens ?? out.promptTokens;
        out.completionTokens = chunk.usage.completion_tokens ?? out.completionTokens;
      }
      for (const choice of chunk.choices ?? []) {
        const d = choice.delta;
        const piece = (d?.content ?? '') + (d?.reasoning_content ?? d?.reasoning ?? '');
        if (piece.length > 0) {
          chunks++;
          if (out.ttftMs === null) out.ttftMs = at - t0;
          else if (last !== null) out.itlMs.push(at - last);
          last = at;
          if (d?.content && text.length < MAX_TEXT) text += d.content;
        }
        if (choice.finish_reason) out.finishReason = choice.finish_reason;
      }
    }
    if (buffer.length > MAX_STREAM_LINE_CHARS) {
      out.errorCode = RequestErrorCode.BAD_STREAM;
      out.errorMessage = `a stream line went past ${MAX_STREAM_LINE_CHARS} characters without its end; not read further`;
      break;
    }
  }
  out.text = text;
  // Without a usage chunk, count content chunks (one token each on vLLM) rather than report nothing.
  if (out.completionTokens === null && chunks > 0) out.completionTokens = chunks;
}

/** A wire error code from the body (`{"error":{"code":"model_sleeping"}}`), else HTTP_<status>. */
function errorCodeOf(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; type?: unknown } };
    const code = body.error?.code;
    if (typeof code === 'string' && /^[a-z_A-Z0-9.-]{1,64}$/.test(code)) return code;
  } catch {
    // not JSON: fall through
  }
  return `HTTP_${status}`;
}
