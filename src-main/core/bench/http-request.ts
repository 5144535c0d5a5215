// One benchmark request with exact timing: queue wait (the proxy's X-Queue-Ms),
// time to the first content token, every gap between content chunks, total
// latency, usage from the server, finish reason and a coded error. Never
// throws: a failure is a result with an error code. A request that met a
// kept-alive connection the server had just closed is sent once more on a fresh
// one, as the proxy does (isStaleConnectionFailure); its times count from the
// first attempt.
import { errors as undiciErrors, request, type Dispatcher } from 'undici';
import { isStaleConnectionFailure, openFreshConnection } from '../upstream-dispatch.js';
import { RequestErrorCode } from './errors.js';

export interface RequestSpec {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  stream: boolean;
  timeoutMs: number;
  signal: AbortSignal;
  /** Keep-alive dispatcher (createKeepAliveAgent). */
  dispatcher: Dispatcher;
  /** Opens the connection of its own for the one retry; closed when the request ends (default: a one-shot Client). */
  freshConnection?: (origin: string) => Dispatcher;
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
  const timeout = AbortSignal.timeout(spec.timeoutMs);
  const signal = AbortSignal.any([spec.signal, timeout]);
  const body = JSON.stringify(spec.body);
  const send = (dispatcher: Dispatcher, reset: boolean) =>
    request(spec.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...spec.headers },
      body,
      dispatcher,
      signal,
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      // The retry's connection carries this request only (Connection: close): never a reused one.
      ...(reset ? { reset: true } : {}),
    });
  let fresh: Dispatcher | null = null;
  try {
    let res: Dispatcher.ResponseData;
    try {
      res = await send(spec.dispatcher, false);
    } catch (err) {
      // request() rejects only before the status line: no byte of the answer was seen.
      if (signal.aborted || !isStaleConnectionFailure(err, false)) throw err;
      out.retried = true;
      retriesTotal++;
      fresh = (spec.freshConnection ?? openFreshConnection)(new URL(spec.url).origin);
      res = await send(fresh, true);
    }
    out.status = res.statusCode;
    const q = res.headers['x-queue-ms'];
    if (typeof q === 'string' && /^\d+(\.\d+)?$/.test(q)) out.queueMs = Number(q);
    if (res.statusCode >= 400) {
      const text = (await readCapped(res.body, MAX_ERROR_BYTES).catch(() => null))?.text ?? '';
      out.totalMs = spec.now() - t0;
      out.errorCode = errorCodeOf(res.statusCode, text);
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
    if (timeout.aborted || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
      out.errorCode = RequestErrorCode.TIMEOUT;
      out.errorMessage = `no complete answer within ${spec.timeoutMs} ms`;
      return out;
    }
    out.errorCode = out.status === null ? RequestErrorCode.CONNECTION : RequestErrorCode.BAD_STREAM;
    out.errorMessage = (err as Error).message;
    return out;
  } finally {
    // Its one request has ended (answer read, or failed): nothing else will use it.
    await fresh?.destroy().catch(() => undefined);
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
