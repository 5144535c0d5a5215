// Sends one admitted request to its upstream with undici's dispatch API and
// relays the answer as it arrives: backpressure from the client pauses the
// upstream, a client that leaves aborts the upstream request (freeing its
// slot), and the usage is read on the way for accounting. A request that met a
// connection the upstream had just closed is sent once more on a fresh one of
// the same UpstreamClient (the rule: isStaleConnectionFailure in core/upstream).
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { fireAndForget, silentLogger, type Logger } from '../base/index.js';
import { isStaleConnectionFailure } from '../upstream/index.js';
import { baseHeaders, writeError, wire, type Exchange } from './exchange.js';
import type { WireError } from './errors.js';
import { SseRelay, usageFromBody, type Usage } from './sse.js';
import { MAX_STORED_BYTES } from './idempotency.js';

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

const PASS_HEADERS = ['content-type', 'content-length', 'cache-control'];
/** Largest non-streaming body parsed for its usage. */
const MAX_USAGE_PARSE_BYTES = 16 * 1024 * 1024;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function forward(ex: Exchange, req: ForwardRequest): Promise<ForwardResult> {
  const { res } = ex;
  return new Promise<ForwardResult>((resolve) => {
    let controller: Dispatcher.DispatchController | null = null;
    let abortedBy: 'client' | 'drain' | null = null;
    let relay: SseRelay | null = null;
    let mode: 'sse' | 'plain' | 'error-frame' | 'early' = 'plain';
    let status = 0;
    let usage: Usage | null = null;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let keep = false;
    const captured: Buffer[] = [];
    let capturedBytes = 0;
    let captureHeaders: Record<string, string> = {};
    let settled = false;
    let waitingDrain = false;
    let retried = false;
    /** The retry's own connection, closed when the request ends. */
    let fresh: Dispatcher | null = null;
    const logger = req.logger ?? silentLogger;

    /** Set when a tunnel refusal (its own 502/503) is read to hand back as `early`. */
    let tunnelRefusal: { status: number; retryAfterS: number; code: string } | null = null;

    // Positional, and one object literal of a fixed shape: this runs once per request.
    const finish = (completed: boolean, failure: ForwardResult['failure'], early: WireError | null = null) => {
      if (settled) return;
      settled = true;
      ex.abort = null;
      if (fresh) fireAndForget(completed ? fresh.close() : fresh.destroy(), logger, 'closing the retry connection');
      const copy = req.capture && capturedBytes <= MAX_STORED_BYTES && completed ? { status, headers: captureHeaders, body: Buffer.concat(captured) } : null;
      resolve({ completed, failure, usage, captured: copy, retried, early });
    };

    /**
     * A stream's status and headers, held until its first event when another replica could still take
     * the request: a replica that dies between its headers and its first token (vLLM sends headers at
     * once) has then sent the client nothing, and the request can go elsewhere.
     */
    let heldHead: { status: number; headers: Record<string, string | number> } | null = null;
    /** Something of the upstream's answer was written to the client. */
    let relayed = false;
    const releaseHead = () => {
      if (!heldHead) return;
      const h = heldHead;
      heldHead = null;
      res.writeHead(h.status, h.headers);
    };

    const out = (data: string | Buffer) => {
      if (data.length === 0 || res.destroyed) return;
      releaseHead();
      relayed = true;
      const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
      ex.bytesOut += bytes;
      if (req.capture && capturedBytes <= MAX_STORED_BYTES) {
        capturedBytes += bytes;
        captured.push(typeof data === 'string' ? Buffer.from(data) : data);
      }
      if (!res.write(data) && controller && !waitingDrain) {
        waitingDrain = true;
        controller.pause();
        res.once('drain', () => {
          waitingDrain = false;
          controller?.resume();
        });
      }
    };

    ex.abort = (why) => {
      if (abortedBy || settled) return;
      abortedBy = why;
      const reason = new Error(why === 'client' ? 'client went away' : 'upstream draining');
      if (controller) controller.abort(reason);
      // The retry may still be connecting: cutting its connection ends it now, not at its connect timeout.
      else if (fresh) fireAndForget(fresh.destroy(reason), logger, 'cutting the retry connection');
    };

    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(req.body.length),
      accept: 'application/json, text/event-stream',
    };
    if (req.apiKey) headers['authorization'] = `Bearer ${req.apiKey}`;

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (abortedBy) c.abort(new Error('aborted before start'));
      },
      onResponseStart(_c, statusCode, h) {
        status = statusCode;
        const contentType = header(h, 'content-type') ?? '';
        const isSse = contentType.startsWith('text/event-stream');
        const tunnelCode = header(h, 'x-gpu-console-error');
        if (req.deferEarly && tunnelCode !== undefined && (statusCode === 502 || statusCode === 503)) {
          // The console's own tunnel answered: the request never reached the server. Read it, hand it back.
          tunnelRefusal = { status: statusCode, retryAfterS: parseRetryAfterS(header(h, 'retry-after')) ?? 1, code: tunnelCode };
          keep = true;
          mode = 'early';
          return;
        }
        if (ex.committed) {
          // Our SSE headers are out already: a 200 stream continues it, anything else becomes an error frame.
          mode = statusCode === 200 && isSse ? 'sse' : 'error-frame';
        } else {
          mode = isSse ? 'sse' : 'plain';
          const outHeaders = baseHeaders(ex);
          for (const name of PASS_HEADERS) {
            const v = header(h, name);
            if (v !== undefined && !(isSse && name === 'content-length')) outHeaders[name] = v;
          }
          // Retry-After in whole seconds (a date becomes seconds, a bogus value is dropped) with retry-after-ms;
          // an upstream refusal without one gets one: its 429 from our queue, a 503 5 s, a 502/504 1 s.
          let retryS = parseRetryAfterS(header(h, 'retry-after'));
          if (retryS === null && RETRYABLE.has(statusCode)) retryS = statusCode === 429 ? (req.rateLimitRetryAfterS?.() ?? 1) : statusCode === 503 ? 5 : 1;
          if (retryS !== null) {
            outHeaders['retry-after'] = String(retryS);
            outHeaders['retry-after-ms'] = String(retryS * 1000);
            ex.retryAfterS = retryS;
          }
          if (isSse) {
            outHeaders['cache-control'] = 'no-cache';
            outHeaders['x-accel-buffering'] = 'no';
          }
          captureHeaders = { 'content-type': contentType || 'application/json' };
          if (retryS !== null) {
            captureHeaders['retry-after'] = String(retryS);
            captureHeaders['retry-after-ms'] = String(retryS * 1000);
          }
          ex.sse = isSse;
          ex.status = statusCode;
          if (req.deferEarly && isSse && statusCode === 200) {
            heldHead = { status: statusCode, headers: outHeaders };
          } else {
            res.writeHead(statusCode, outHeaders);
            // Headers go out with the first event when it came in the same read (one write
            // instead of two); otherwise right after this read, so clients see them at once.
            if (isSse) queueMicrotask(() => {
              if (!res.headersSent && !res.destroyed) res.flushHeaders();
            });
          }
        }
        if (mode === 'sse') relay = new SseRelay(req.stripUsage);
        const declared = Number(header(h, 'content-length') ?? '0');
        keep = mode === 'error-frame' || (mode === 'plain' && contentType.includes('json') && declared <= MAX_USAGE_PARSE_BYTES);
      },
      onResponseData(_c, chunk) {
        if (ex.ttftMs === null && mode !== 'early') ex.ttftMs = req.monotonic() - ex.t0;
        if (keep) {
          keptBytes += chunk.length;
          if (keptBytes <= MAX_USAGE_PARSE_BYTES) kept.push(chunk);
          else keep = false;
        }
        if (mode === 'sse') out(relay!.push(chunk));
        else if (mode === 'plain') out(chunk);
      },
      onResponseEnd() {
        if (tunnelRefusal) {
          finish(false, 'upstream', tunnelError(tunnelRefusal, Buffer.concat(kept).toString('utf8')));
          return;
        }
        if (mode === 'sse') {
          out(relay!.end());
          releaseHead();
          usage = relay!.usage;
          // llama-server ends a failed generation with an error event and no [DONE]: relayed, and noted on the row.
          if (relay!.errorEvent !== null && ex.errorCode === null) ex.errorCode = 'upstream_error_event';
        } else if (mode === 'plain' && keep) {
          usage = usageFromBody(Buffer.concat(kept));
        }
        if (mode === 'error-frame') {
          const body = Buffer.concat(kept).toString('utf8');
          let message = `the upstream answered ${status}`;
          try {
            const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
            const m = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.message ?? parsed.error);
            if (typeof m === 'string') message = m;
          } catch {
            // not JSON: keep the generic message
          }
          writeError(ex, wire(status >= 400 ? status : 502, status === 429 ? 'queue_full' : 'upstream_unreachable', message));
          ex.errorCode = 'upstream_error';
        } else if (!res.writableEnded) {
          res.end();
        }
        if (ex.status >= 400 && ex.errorCode === null) ex.errorCode = 'upstream_error';
        finish(true, null);
      },
      onResponseError(_c, err) {
        if (abortedBy) {
          finish(false, abortedBy);
          return;
        }
        // Nothing of this attempt reached the client (no status yet, so no header or byte was relayed;
        // SSE keep-alives written while queued are ours, not the upstream's): send it once more.
        if (!retried && status === 0 && isStaleConnectionFailure(err, false)) {
          retry(err);
          return;
        }
        const code = (err as { code?: string }).code ?? '';
        const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
        // A held stream head, or SSE keep-alives of our own, mean the client has seen nothing of the upstream yet.
        if (req.deferEarly && !relayed && !timeout && (status === 0 || tunnelRefusal || heldHead || (ex.committed && mode === 'sse'))) {
          heldHead = null;
          // Never reached the server, or no byte of its answer reached the client: the caller decides.
          finish(false, 'upstream', wire(502, 'upstream_unreachable', `the upstream could not be reached: ${err.message}`, { retryAfterS: 1 }));
          return;
        }
        if (heldHead) {
          // The stream's head was held and nothing followed it: nothing is out yet, so a plain error answer.
          heldHead = null;
          writeError(ex, timeout ? wire(504, 'upstream_timeout', `the upstream did not answer in time (${code})`, { retryAfterS: 1 }) : wire(502, 'upstream_reset', `the upstream broke off its answer: ${err.message}`, { retryAfterS: 1 }));
          finish(false, 'upstream');
          return;
        }
        if (!res.headersSent || ex.committed) {
          if (status === 0 || ex.committed) {
            writeError(
              ex,
              timeout
                ? wire(504, 'upstream_timeout', `the upstream did not answer in time (${code})`, { retryAfterS: 1 })
                : status === 0
                  ? wire(502, 'upstream_unreachable', `the upstream could not be reached: ${err.message}`, { retryAfterS: 1 })
                  : wire(502, 'upstream_reset', `the upstream broke off its answer: ${err.message}`),
            );
          }
        } else if (mode === 'sse' && !res.writableEnded) {
          // Mid-stream: the client has seen chunks; end with an error frame so it knows the answer is incomplete.
          writeError(ex, wire(502, 'upstream_reset', `the upstream broke off the stream: ${err.message}`));
        } else {
          ex.status = 502;
          ex.errorCode = 'upstream_reset';
          res.destroy();
        }
        finish(false, 'upstream');
      },
    };

    const send = (dispatcher: Dispatcher, reset: boolean) => {
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
          handler,
        );
      } catch (err) {
        writeError(ex, wire(502, 'upstream_unreachable', `the upstream could not be reached: ${(err as Error).message}`, { retryAfterS: 1 }));
        finish(false, 'upstream');
      }
    };

    const retry = (err: Error) => {
      retried = true;
      retriesTotal++;
      controller = null;
      logger.debug('upstream closed a kept-alive connection under the request; sending it again on a fresh connection', {
        id: ex.id,
        origin: req.origin,
        code: (err as { code?: string }).code ?? null,
        error: err.message,
      });
      try {
        fresh = req.freshConnection(req.origin);
      } catch (e) {
        writeError(ex, wire(502, 'upstream_unreachable', `the upstream could not be reached: ${(e as Error).message}`, { retryAfterS: 1 }));
        finish(false, 'upstream');
        return;
      }
      // `reset`: this connection carries this request only (Connection: close), so it is never a reused one.
      send(fresh, true);
    };

    send(req.dispatcher, false);
  });
}

const RETRYABLE = new Set([429, 502, 503, 504]);

/** Retry-After as whole seconds ≥ 1: delta-seconds, or an HTTP-date from now; null when absent or bogus. */
export function parseRetryAfterS(value: string | undefined, nowMs = Date.now()): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d{1,7}$/.test(v)) return Math.max(1, Number(v));
  if (!/[a-z]/i.test(v)) return null;
  const at = Date.parse(v);
  if (!Number.isFinite(at)) return null;
  return Math.min(86_400, Math.max(1, Math.ceil((at - nowMs) / 1000)));
}

/** The tunnel's own refusal (its JSON names an SSH_* code) as the proxy's 503 tunnel_down. */
function tunnelError(t: { status: number; retryAfterS: number; code: string }, body: string): WireError {
  let message = `the tunnel answered ${t.status} (${t.code})`;
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string') message = `${t.code}: ${m}`;
  } catch {
    // keep the generic message
  }
  return wire(503, 'tunnel_down', message, { retryAfterS: t.retryAfterS, extra: { tunnel_error: t.code } });
}
