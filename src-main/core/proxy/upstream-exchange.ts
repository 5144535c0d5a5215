// Sends one admitted request to its upstream with undici's dispatch API and
// relays the answer as it arrives: backpressure from the client pauses the
// upstream, a client that leaves aborts the upstream request (freeing its
// slot), and the usage is read on the way for accounting. A request that met a
// connection the upstream had just closed is sent once more on a fresh one of
// the same UpstreamClient (the rule: isStaleConnectionFailure in core/upstream).
// One UpstreamExchange per request, undici's handler itself: its Phase says
// whether anything of the upstream reached the client yet, which decides
// between the one retry, handing the failure back (`early`) and answering it.
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { fireAndForget, silentLogger, type Logger } from '../base/index.js';
import { isStaleConnectionFailure } from '../upstream/index.js';
import { writeError, wire, type Exchange } from './exchange.js';
import type { WireError } from './errors.js';
import { SseRelay, usageFromBody, type Usage } from './sse.js';
import { MAX_STORED_BYTES } from './idempotency.js';
import { answerHead, errorFrame, header, parseRetryAfterS, timeoutError, timeoutKind, traceHeaders, tunnelError, type TimeoutFrom } from './upstream-answer.js';
import { HANDOVER_TRIES, HANDOVER_WAIT_MS, isSocketHandover } from './tunnel-handover.js';

export interface ForwardRequest {
  /** The keep-alive pool of the upstream's client (UpstreamClient.dispatcher). */
  dispatcher: Dispatcher;
  /** Opens the connection of its own for the one retry (UpstreamClient.openFreshConnection); closed by forward() when the request ends. */
  freshConnection: (origin: string) => Dispatcher;
  logger?: Logger;
  origin: string;
  path: string;
  body: Buffer;
  apiKey: string | null;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  /** The whole exchange, from the send to the last byte; none when absent (proxy.models.<m>.timeouts.totalMs). */
  totalTimeoutMs?: number | null;
  /** The config field each timeout came from, named in the error when it fires. */
  timeoutFrom?: TimeoutFrom;
  /** The proxy added include_usage: take the usage chunk out again. */
  stripUsage: boolean;
  monotonic: () => number;
  /** Keep a copy of what the client got (for idempotent replays). */
  capture: boolean;
  /**
   * A failure before any byte of the upstream reached the client — the connection refused or cut
   * before the status line (not a timeout: the upstream may be working on it), or the tunnel's own
   * 502/503 (`x-gpu-console-error`: the request never reached the server) — is not answered but
   * handed back as `early`, so the caller may send it to another replica.
   */
  deferEarly?: boolean;
  /** Retry-After (s) for an upstream's own 429 that carries none (the caller's queue knows best). */
  rateLimitRetryAfterS?: () => number;
  /** The dispatcher reaches a tunnel's private socket, which is briefly absent while it changes hands (tunnel-handover.ts). */
  tunnel?: boolean;
}

export interface ForwardResult {
  /** The upstream answered (any status) and the answer was relayed to the end. */
  completed: boolean;
  /** How it ended when not completed. */
  failure: 'client' | 'drain' | 'upstream' | null;
  usage: Usage | null;
  captured: { status: number; headers: Record<string, string>; body: Buffer } | null;
  /** The first attempt met a connection the upstream had closed; the answer came from the one retry. */
  retried: boolean;
  /** With `deferEarly`: the failure before anything reached the client, unanswered. */
  early: WireError | null;
}

let retriesTotal = 0;

/** Requests sent a second time, on a fresh connection, since the process started. */
export function staleConnectionRetries(): number {
  return retriesTotal;
}

/** Largest non-streaming body parsed for its usage. */
const MAX_USAGE_PARSE_BYTES = 16 * 1024 * 1024;

/**
 * Where one request stands with its upstream. The step between `sent` and a second `sent` is the one
 * retry on a fresh connection (retryOnFreshConnection); `done` and `failed` are settled.
 */
type Phase =
  /** Dispatched (first attempt or the retry), no status line yet: nothing of the upstream reached the client. */
  | 'sent'
  /** The console's own tunnel answered 502/503: its body is read, then handed back as `early`. */
  | 'refusal'
  /** A stream's head is held until its first event: another replica could still take the request. */
  | 'held'
  /** The head is out (or our SSE head was already): the body flows to the client. */
  | 'relaying'
  | 'done'
  | 'failed';

/** What happens to the answer's body: relayed as events, relayed as bytes, read to become an error frame, or read only (a tunnel refusal). */
type BodyMode = 'sse' | 'plain' | 'error-frame' | 'none';

/** A tunnel refusal (its own 502/503), read to hand back as `early`. */
interface TunnelRefusal {
  status: number;
  retryAfterS: number;
  code: string;
}

export function forward(ex: Exchange, req: ForwardRequest): Promise<ForwardResult> {
  return new UpstreamExchange(ex, req).run();
}

/**
 * One request's exchange with its upstream: undici's handler for it (one object per request, its
 * state in fields rather than in closures) and the promise of how it ended.
 */
class UpstreamExchange implements Dispatcher.DispatchHandler {
  private phase: Phase = 'sent';
  private mode: BodyMode = 'plain';
  private controller: Dispatcher.DispatchController | null = null;
  private abortedBy: 'client' | 'drain' | null = null;
  private relay: SseRelay | null = null;
  private status = 0;
  private usage: Usage | null = null;
  /** The body as read (for its usage, an error frame or a tunnel refusal), while `keep` and under MAX_USAGE_PARSE_BYTES. */
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private keep = false;
  /** What the client got, for an idempotent replay (req.capture). */
  private readonly captured: Buffer[] = [];
  private capturedBytes = 0;
  private captureHeaders: Record<string, string> = {};
  private waitingDrain = false;
  private retried = false;
  /** Sends again while the tunnel's socket changes hands, and the pause before the next one. */
  private handovers = 0;
  private handoverTimer: ReturnType<typeof setTimeout> | null = null;
  /** The total deadline's timer, and whether it fired (the abort it causes is then a timeout). */
  private deadline: ReturnType<typeof setTimeout> | null = null;
  private deadlineFired = false;
  /** The retry's own connection, closed when the request ends. */
  private fresh: Dispatcher | null = null;
  private refusal: TunnelRefusal | null = null;
  /** The stream's status and headers while `held`. */
  private heldHead: { status: number; headers: Record<string, string | number> } | null = null;
  /** Something of the upstream's answer was written to the client. */
  private relayed = false;
  private resolve: ((r: ForwardResult) => void) | null = null;
  private readonly logger: Logger;
  private readonly res: Exchange['res'];

  constructor(
    private readonly ex: Exchange,
    private readonly req: ForwardRequest,
  ) {
    this.logger = req.logger ?? silentLogger;
    this.res = ex.res;
  }

  run(): Promise<ForwardResult> {
    return new Promise<ForwardResult>((resolve) => {
      this.resolve = resolve;
      this.ex.abort = (why) => this.abort(why);
      const total = this.req.totalTimeoutMs;
      if (total != null) this.deadline = setTimeout(() => this.onDeadline(), total);
      this.send(this.req.dispatcher, false);
    });
  }

  // --- undici's handler --------------------------------------------------------

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.abortedBy) c.abort(new Error('aborted before start'));
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, h: IncomingHttpHeaders): void {
    this.status = statusCode;
    const contentType = header(h, 'content-type') ?? '';
    const isSse = contentType.startsWith('text/event-stream');
    const tunnelCode = header(h, 'x-gpu-console-error');
    if (this.req.deferEarly && tunnelCode !== undefined && (statusCode === 502 || statusCode === 503)) {
      // The console's own tunnel answered: the request never reached the server. Read it, hand it back.
      this.refusal = { status: statusCode, retryAfterS: parseRetryAfterS(header(h, 'retry-after')) ?? 1, code: tunnelCode };
      this.keep = true;
      this.mode = 'none';
      this.phase = 'refusal';
      return;
    }
    this.phase = 'relaying';
    if (this.ex.committed) {
      // Our SSE headers are out already: a 200 stream continues it, anything else becomes an error frame.
      this.mode = statusCode === 200 && isSse ? 'sse' : 'error-frame';
    } else {
      this.mode = isSse ? 'sse' : 'plain';
      this.startAnswer(statusCode, h, contentType, isSse);
    }
    if (this.mode === 'sse') this.relay = new SseRelay(this.req.stripUsage);
    const declared = Number(header(h, 'content-length') ?? '0');
    this.keep = this.mode === 'error-frame' || (this.mode === 'plain' && contentType.includes('json') && declared <= MAX_USAGE_PARSE_BYTES);
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    const ex = this.ex;
    // One clock read per chunk: the first byte's time, and the last byte's (the hanging rule's silence).
    const t = this.req.monotonic();
    ex.lastByteAt = t;
    if (ex.ttftMs === null && this.phase !== 'refusal') ex.ttftMs = t - ex.t0;
    if (this.keep) {
      this.keptBytes += chunk.length;
      if (this.keptBytes <= MAX_USAGE_PARSE_BYTES) this.kept.push(chunk);
      else this.keep = false;
    }
    if (this.mode === 'sse') this.out(this.relay!.push(chunk));
    else if (this.mode === 'plain') this.out(chunk);
  }

  onResponseEnd(): void {
    const ex = this.ex;
    if (this.phase === 'refusal') {
      this.finish(false, 'upstream', tunnelError(this.refusal!, Buffer.concat(this.kept).toString('utf8')));
      return;
    }
    if (this.mode === 'sse') {
      const relay = this.relay!;
      this.out(relay.end());
      this.releaseHead();
      this.usage = relay.usage;
      // llama-server ends a failed generation with an error event and no [DONE]: relayed, and noted on the row.
      if (relay.errorEvent !== null && ex.errorCode === null) ex.errorCode = 'upstream_error_event';
    } else if (this.mode === 'plain' && this.keep) {
      this.usage = usageFromBody(Buffer.concat(this.kept));
    }
    if (this.mode === 'error-frame') {
      writeError(ex, errorFrame(this.status, Buffer.concat(this.kept).toString('utf8')));
      ex.errorCode = 'upstream_error';
    } else if (!this.res.writableEnded) {
      this.res.end();
    }
    if (ex.status >= 400 && ex.errorCode === null) ex.errorCode = 'upstream_error';
    this.finish(true, null);
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.deadlineFired) {
      this.failOn(err);
      return;
    }
    if (this.abortedBy) {
      this.finish(false, this.abortedBy);
      return;
    }
    // Nothing of this attempt reached the client (no status yet, so no header or byte was relayed;
    // SSE keep-alives written while queued are ours, not the upstream's): send it once more.
    if (!this.retried && this.phase === 'sent' && isStaleConnectionFailure(err, false)) {
      this.retryOnFreshConnection(err);
      return;
    }
    if (this.req.tunnel && this.phase === 'sent' && this.handovers < HANDOVER_TRIES && isSocketHandover(err)) {
      // Nothing was sent: the socket was not there (a reconnect hands it to the new master). Again shortly.
      this.handovers++;
      this.controller = null;
      this.handoverTimer = setTimeout(() => {
        this.handoverTimer = null;
        this.send(this.req.dispatcher, false);
      }, HANDOVER_WAIT_MS);
      return;
    }
    this.failOn(err);
  }

  // --- the steps ---------------------------------------------------------------

  private send(dispatcher: Dispatcher, reset: boolean): void {
    const req = this.req;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(req.body.length),
      accept: 'application/json, text/event-stream',
    };
    if (req.apiKey) headers['authorization'] = `Bearer ${req.apiKey}`;
    traceHeaders(this.ex, headers);
    try {
      dispatcher.dispatch(
        {
          origin: req.origin,
          path: req.path,
          method: 'POST',
          headers,
          body: req.body,
          headersTimeout: req.headersTimeoutMs,
          bodyTimeout: req.idleTimeoutMs,
          ...(reset ? { reset: true } : {}),
        },
        this,
      );
    } catch (err) {
      this.unreachable(err as Error);
    }
  }

  /** The one retry: the first attempt met a kept-alive connection the upstream had just closed. */
  private retryOnFreshConnection(err: Error): void {
    this.retried = true;
    retriesTotal++;
    this.controller = null;
    this.logger.debug('upstream closed a kept-alive connection under the request; sending it again on a fresh connection', {
      id: this.ex.id,
      origin: this.req.origin,
      code: (err as { code?: string }).code ?? null,
      error: err.message,
    });
    try {
      this.fresh = this.req.freshConnection(this.req.origin);
    } catch (e) {
      this.unreachable(e as Error);
      return;
    }
    // `reset`: this connection carries this request only (Connection: close), so it is never a reused one.
    this.send(this.fresh, true);
  }

  /** The head of an answer the client has not had yet: sent now, or held while a stream may still fail over. */
  private startAnswer(statusCode: number, h: IncomingHttpHeaders, contentType: string, isSse: boolean): void {
    const { ex, res } = this;
    const head = answerHead(ex, statusCode, h, contentType, isSse, this.req.rateLimitRetryAfterS);
    const outHeaders = head.headers;
    if (head.retryAfterS !== null) ex.retryAfterS = head.retryAfterS;
    this.captureHeaders = head.captureHeaders;
    ex.sse = isSse;
    ex.status = statusCode;
    if (this.req.deferEarly && isSse && statusCode === 200) {
      // A replica that dies between its headers and its first token (vLLM sends headers at once) has
      // then sent the client nothing, and the request can go elsewhere.
      this.heldHead = { status: statusCode, headers: outHeaders };
      this.phase = 'held';
      return;
    }
    res.writeHead(statusCode, outHeaders);
    // Headers go out with the first event when it came in the same read (one write
    // instead of two); otherwise right after this read, so clients see them at once.
    if (isSse) queueMicrotask(() => {
      if (!res.headersSent && !res.destroyed) res.flushHeaders();
    });
  }

  private releaseHead(): void {
    if (this.phase !== 'held') return;
    const h = this.heldHead!;
    this.heldHead = null;
    this.phase = 'relaying';
    this.res.writeHead(h.status, h.headers);
  }

  private out(data: Buffer): void {
    const res = this.res;
    if (data.length === 0 || res.destroyed) return;
    this.releaseHead();
    this.relayed = true;
    this.ex.bytesOut += data.length;
    if (this.req.capture && this.capturedBytes <= MAX_STORED_BYTES) {
      this.capturedBytes += data.length;
      this.captured.push(data);
    }
    if (!res.write(data) && this.controller && !this.waitingDrain) {
      this.waitingDrain = true;
      this.controller.pause();
      res.once('drain', () => {
        this.waitingDrain = false;
        this.controller?.resume();
      });
    }
  }

  private abort(why: 'client' | 'drain'): void {
    if (this.abortedBy || this.phase === 'done' || this.phase === 'failed') return;
    this.abortedBy = why;
    const reason = new Error(why === 'client' ? 'client went away' : 'upstream draining');
    if (this.controller) this.controller.abort(reason);
    else if (this.handoverTimer) {
      clearTimeout(this.handoverTimer);
      this.handoverTimer = null;
      this.finish(false, why);
    }
    // The retry may still be connecting: cutting its connection ends it now, not at its connect timeout.
    else if (this.fresh) fireAndForget(this.fresh.destroy(reason), this.logger, 'cutting the retry connection');
  }

  /** The total deadline passed: the upstream request is cut and answered as a timeout naming it. */
  private onDeadline(): void {
    this.deadline = null;
    if (this.abortedBy || this.phase === 'done' || this.phase === 'failed') return;
    this.deadlineFired = true;
    const reason = Object.assign(new Error('the total deadline passed'), { code: 'GPU_CONSOLE_TOTAL_TIMEOUT' });
    if (this.controller) {
      this.controller.abort(reason);
      return;
    }
    // Between attempts (a handover's pause, the retry connecting): nothing is in flight to abort.
    if (this.handoverTimer) clearTimeout(this.handoverTimer);
    this.handoverTimer = null;
    if (this.fresh) fireAndForget(this.fresh.destroy(reason), this.logger, 'cutting the retry connection');
    this.failOn(reason);
  }

  /** The upstream failed (not a client abort, not the retry): answer what the client can still be told, or hand it back. */
  private failOn(err: Error): void {
    const { ex, res } = this;
    const timeout = this.deadlineFired ? 'total' : timeoutKind(err);
    const phase = this.phase;
    const timedOut = timeout === null ? null : timeoutError(timeout, this.req);
    // A held stream head, or SSE keep-alives of our own, mean the client has seen nothing of the upstream yet.
    if (this.req.deferEarly && !this.relayed && !timeout && (phase === 'sent' || phase === 'refusal' || phase === 'held' || (ex.committed && this.mode === 'sse'))) {
      this.heldHead = null;
      // Never reached the server, or no byte of its answer reached the client: the caller decides.
      this.finish(false, 'upstream', wire(502, 'upstream_unreachable', `the upstream could not be reached: ${err.message}`, { retryAfterS: 1 }));
      return;
    }
    if (phase === 'held') {
      // The stream's head was held and nothing followed it: nothing is out yet, so a plain error answer.
      this.heldHead = null;
      writeError(ex, timedOut ?? wire(502, 'upstream_reset', `the upstream broke off its answer: ${err.message}`, { retryAfterS: 1 }));
      this.finish(false, 'upstream');
      return;
    }
    if (!res.headersSent || ex.committed) {
      if (phase === 'sent' || ex.committed) {
        writeError(
          ex,
          timedOut ??
            (phase === 'sent'
              ? wire(502, 'upstream_unreachable', `the upstream could not be reached: ${err.message}`, { retryAfterS: 1 })
              : wire(502, 'upstream_reset', `the upstream broke off its answer: ${err.message}`)),
        );
      }
    } else if (this.mode === 'sse' && !res.writableEnded) {
      // Mid-stream: the client has seen chunks; end with an error frame so it knows the answer is incomplete.
      writeError(ex, wire(502, 'upstream_reset', timedOut ? `the stream was cut: ${timedOut.message}` : `the upstream broke off the stream: ${err.message}`, timedOut?.extra ? { extra: timedOut.extra } : {}));
    } else {
      ex.status = 502;
      ex.errorCode = 'upstream_reset';
      res.destroy();
    }
    this.finish(false, 'upstream');
  }

  /** dispatch() threw, or the retry's connection could not be opened. */
  private unreachable(err: Error): void {
    writeError(this.ex, wire(502, 'upstream_unreachable', `the upstream could not be reached: ${err.message}`, { retryAfterS: 1 }));
    this.finish(false, 'upstream');
  }

  // Positional, and one object literal of a fixed shape: this runs once per request.
  private finish(completed: boolean, failure: ForwardResult['failure'], early: WireError | null = null): void {
    if (this.phase === 'done' || this.phase === 'failed') return;
    this.phase = completed ? 'done' : 'failed';
    this.ex.abort = null;
    if (this.deadline) clearTimeout(this.deadline);
    if (this.fresh) fireAndForget(completed ? this.fresh.close() : this.fresh.destroy(), this.logger, 'closing the retry connection');
    const copy = this.req.capture && this.capturedBytes <= MAX_STORED_BYTES && completed ? { status: this.status, headers: this.captureHeaders, body: Buffer.concat(this.captured) } : null;
    this.resolve!({ completed, failure, usage: this.usage, captured: copy, retried: this.retried, early });
  }
}
