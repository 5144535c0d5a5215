// Which requests are captured, and the tap that sees their bodies go by. The
// decision to look is made at arrival (capture on, sampled or failures wanted);
// the decision to keep, when the request is answered (it failed, or was
// sampled, for a model and token the config names). Until then a tap holds
// references to at most maxBodyBytes of each body and copies nothing: a request
// that succeeds while only failures are captured leaves with its tap unread.
import { ServerResponse, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Config } from '../config/index.js';
import { BodyTee } from './capture-body.js';
import { ENDPOINT_PATH, type Exchange } from './exchange.js';
import { ModelRegistry } from './registry.js';

/** The proxy's two calls: at arrival, and once the request's row is made. */
export interface CaptureHooks {
  begin(ex: Exchange, req: IncomingMessage): void;
  end(ex: Exchange): void;
}

/** A request answered and chosen for keeping; bodies as kept (not yet redacted: the store does that). */
export interface PendingCapture {
  ts: number;
  requestId: string;
  traceId: string | null;
  client: string;
  model: string | null;
  upstream: string | null;
  endpoint: string;
  status: number;
  errorCode: string | null;
  reason: 'failure' | 'sample';
  /** The token the client sent, redacted wherever it appears. */
  clientToken: string | null;
  request: PendingBody;
  answer: PendingBody;
}

export interface PendingBody {
  bytes: Buffer;
  sizeBytes: number;
  truncated: boolean;
  headers: Readonly<Record<string, string | number | readonly string[] | undefined>>;
}

export interface CaptureSink {
  add(capture: PendingCapture): void;
}

/** One request's tap: the body stage feeds `request`, the wrapped response feeds the answer. */
export class RequestTap {
  readonly requestBody: BodyTee;
  readonly answerBody: BodyTee;
  answerHeaders: Record<string, string | number | readonly string[] | undefined> = {};

  constructor(
    cap: number,
    readonly sampled: boolean,
    readonly requestHeaders: IncomingHttpHeaders,
  ) {
    this.requestBody = new BodyTee(cap);
    this.answerBody = new BodyTee(cap);
  }

  request(chunk: Buffer): void {
    this.requestBody.push(chunk);
  }
}

/** Failed, as the capture config means it: an error status (499: the client cut it), or an error noted on a 200 (an error event in a stream). */
export function isFailedAnswer(ex: Pick<Exchange, 'status' | 'errorCode'>): boolean {
  return ex.status >= 400 || ex.errorCode !== null;
}

const MODEL_ENDPOINTS: ReadonlySet<Exchange['endpoint']> = new Set(['chat', 'completions', 'embeddings']);
const MODEL_ANSWER_TYPE = /^\s*(application\/json|text\/event-stream)\b/i;

/**
 * A 200 from a model endpoint that is not JSON or an event stream (a gateway's HTML page, plain
 * text): the client got something it cannot parse. Read from the answer's head, so it costs nothing.
 */
export function unexpectedAnswerType(ex: Pick<Exchange, 'status' | 'endpoint'>, answerHeaders: RequestTap['answerHeaders']): boolean {
  if (ex.status !== 200 || !MODEL_ENDPOINTS.has(ex.endpoint)) return false;
  const type = answerHeaders['content-type'];
  return !MODEL_ANSWER_TYPE.test(typeof type === 'string' ? type : '');
}

export class CaptureRecorder implements CaptureHooks {
  private matcherFor: Config | null = null;
  private wantedModels: ReadonlySet<string> | null = null;
  private wantedTokens: ReadonlySet<string> | null = null;
  private registry: ModelRegistry | null = null;

  constructor(
    private readonly config: () => Config,
    private readonly sink: CaptureSink,
    private readonly random: () => number = Math.random,
  ) {}

  begin(ex: Exchange, req: IncomingMessage): void {
    const c = this.config().proxy.capture;
    if (!c.enabled) return;
    const sampled = c.sampleRate > 0 && this.random() < c.sampleRate;
    if (!sampled && !c.failures) return;
    const tap = new RequestTap(c.maxBodyBytes, sampled, req.headers);
    ex.capture = tap;
    if (ex.res instanceof TappedResponse) taps.set(ex.res, tap);
    else tapAnswer(ex.res, tap);
  }

  end(ex: Exchange): void {
    const tap = ex.capture;
    if (!(tap instanceof RequestTap)) return;
    ex.capture = null;
    taps.delete(ex.res);
    const config = this.config();
    const c = config.proxy.capture;
    if (!c.enabled) return;
    const garbled = unexpectedAnswerType(ex, tap.answerHeaders);
    const reason = c.failures && (garbled || isFailedAnswer(ex)) ? 'failure' : tap.sampled ? 'sample' : null;
    if (reason === null || !this.matches(config, ex)) return;
    this.sink.add(pendingOf(ex, tap, reason, garbled ? 'unexpected_content_type' : null));
  }

  /** A model the config names (by any of its names: alias, group or served model) and a token it names; empty lists name all. */
  private matches(config: Config, ex: Exchange): boolean {
    if (this.matcherFor !== config) this.rebuild(config);
    if (this.wantedTokens && !this.wantedTokens.has(ex.client.toLowerCase())) return false;
    if (!this.wantedModels) return true;
    if (ex.model === null) return false;
    if (this.wantedModels.has(ex.model.toLowerCase())) return true;
    const chain = this.registry!.lookup(ex.model)?.chain ?? [];
    return chain.some((m) => this.wantedModels!.has(m.toLowerCase()));
  }

  private rebuild(config: Config): void {
    const c = config.proxy.capture;
    this.matcherFor = config;
    this.wantedTokens = c.tokens.length > 0 ? new Set(c.tokens.map((t) => t.toLowerCase())) : null;
    if (c.models.length === 0) {
      this.wantedModels = null;
      this.registry = null;
      return;
    }
    this.registry = ModelRegistry.fromConfig(config);
    const names = c.models.flatMap((n) => [n, ...(this.registry!.lookup(n)?.chain ?? [])]);
    this.wantedModels = new Set(names.map((n) => n.toLowerCase()));
  }
}

/** `note`: the capture's own reading of an answer the row calls fine (unexpected_content_type). */
function pendingOf(ex: Exchange, tap: RequestTap, reason: 'failure' | 'sample', note: string | null): PendingCapture {
  const body = (tee: BodyTee, headers: PendingBody['headers']): PendingBody => ({ bytes: tee.bytes(), sizeBytes: tee.sizeBytes, truncated: tee.truncated, headers });
  return {
    ts: ex.ts,
    requestId: ex.id,
    // The client's trace (its X-Request-Id or traceparent); null when ours, requestId, is the trace.
    traceId: ex.traceId,
    client: ex.client,
    model: ex.model,
    upstream: ex.upstream,
    endpoint: ENDPOINT_PATH[ex.endpoint],
    status: ex.status,
    errorCode: ex.errorCode ?? note,
    reason,
    clientToken: presentedToken(tap.requestHeaders),
    request: requestBodyOf(tap, body(tap.requestBody, tap.requestHeaders)),
    answer: body(tap.answerBody, tap.answerHeaders),
  };
}

/** A body refused by its declared length is never read: its size is the one it declared, none of it kept. */
function requestBodyOf(tap: RequestTap, read: PendingBody): PendingBody {
  const declared = Number(tap.requestHeaders['content-length'] ?? 0);
  if (read.sizeBytes > 0 || !Number.isSafeInteger(declared) || declared <= 0) return read;
  return { ...read, sizeBytes: declared, truncated: true };
}

function presentedToken(h: IncomingHttpHeaders): string | null {
  const bearer = /^\s*Bearer\s+(\S+)/i.exec(h.authorization ?? '')?.[1];
  if (bearer) return bearer;
  const key = h['x-api-key'];
  return typeof key === 'string' && key.length > 0 ? key : null;
}

type Chunk = string | Uint8Array;

/** Hands what a response is sent to its tap. */
function see(tap: RequestTap, chunk: unknown): void {
  if (typeof chunk === 'string') tap.answerBody.push(chunk);
  else if (chunk instanceof Uint8Array) tap.answerBody.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
}

/** The tap of each response being captured (kept beside the response, so no response changes shape). */
const taps = new WeakMap<ServerResponse, RequestTap>();

/**
 * The proxy's responses (createServer's ServerResponse option): each sees what it is sent — the head's
 * headers and every byte, whichever stage writes them (the proxy's own refusals, a relayed answer, an
 * SSE error frame) — when it has a tap. One class for every response; one without a tap pays a
 * WeakMap lookup per write.
 */
export class TappedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}

const tappedProto = TappedResponse.prototype as unknown as Record<'writeHead' | 'write' | 'end', (...a: unknown[]) => unknown>;
const baseProto = ServerResponse.prototype as unknown as Record<'writeHead' | 'write' | 'end', (...a: unknown[]) => unknown>;
tappedProto.writeHead = function (this: TappedResponse, status: unknown, ...rest: unknown[]) {
  const tap = taps.get(this);
  if (tap) for (const arg of rest) if (typeof arg === 'object' && arg !== null && !Array.isArray(arg)) tap.answerHeaders = arg as RequestTap['answerHeaders'];
  return baseProto.writeHead.call(this, status, ...rest);
};
tappedProto.write = function (this: TappedResponse, chunk: unknown, ...rest: unknown[]) {
  const tap = taps.get(this);
  if (tap) see(tap, chunk);
  return baseProto.write.call(this, chunk, ...rest);
};
tappedProto.end = function (this: TappedResponse, chunk?: unknown, ...rest: unknown[]) {
  const tap = taps.get(this);
  if (tap && typeof chunk !== 'function') see(tap, chunk);
  return baseProto.end.call(this, chunk, ...rest);
};

/** The same for a response of another class (a server made without TappedResponse): this one response's methods wrapped. */
function tapAnswer(res: ServerResponse, tap: RequestTap): void {
  const { writeHead, write, end } = res;
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    for (const arg of rest) if (typeof arg === 'object' && arg !== null && !Array.isArray(arg)) tap.answerHeaders = arg as RequestTap['answerHeaders'];
    return (writeHead as (...a: unknown[]) => ServerResponse).call(this, status, ...rest);
  } as ServerResponse['writeHead'];
  res.write = function (this: ServerResponse, chunk: Chunk, ...rest: unknown[]) {
    see(tap, chunk);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') see(tap, chunk);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as ServerResponse['end'];
}
