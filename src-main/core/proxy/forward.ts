// Sends one admitted request to its upstream with undici's dispatch API and
// relays the answer as it arrives: backpressure from the client pauses the
// upstream, a client that leaves aborts the upstream request (freeing its
// slot), and the usage is read on the way for accounting. A request that met a
// connection the upstream had just closed is sent once more on a fresh one
// (the rule: isStaleConnectionFailure in core/upstream-dispatch.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { fireAndForget, silentLogger, type Logger } from '../base/index.js';
import { isStaleConnectionFailure, openFreshConnection } from '../upstream-dispatch.js';
import { writeError, wire, type Exchange } from './exchange.js';
import { SseRelay, usageFromBody, type Usage } from './sse.js';
import { MAX_STORED_BYTES } from './idempotency.js';

export interface ForwardRequest {
  /** The keep-alive pool to the upstream (see createUpstreamPool). */
  dispatcher: Dispatcher;
  /** Opens the connection of its own for the one retry; closed by forward() when the request ends (default: a one-shot Client). */
  freshConnection?: (origin: string) => Dispatcher;
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
    let mode: 'sse' | 'plain' | 'error-frame' = 'plain';
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

    const finish = (result: Omit<ForwardResult, 'captured' | 'usage' | 'retried'>) => {
      if (settled) return;
      settled = true;
      ex.abort = null;
      if (fresh) fireAndForget(result.completed ? fresh.close() : fresh.destroy(), logger, 'closing the retry connection');
      resolve({
        ...result,
        retried,
        usage,
        captured: req.capture && capturedBytes <= MAX_STORED_BYTES && result.completed ? { status, headers: captureHeaders, body: Buffer.concat(captured) } : null,
      });
    };

    const out = (data: string | Buffer) => {
      if (data.length === 0 || res.destroyed) return;
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
        if (ex.committed) {
          // Our SSE headers are out already: a 200 stream continues it, anything else becomes an error frame.
          mode = statusCode === 200 && isSse ? 'sse' : 'error-frame';
        } else {
          mode = isSse ? 'sse' : 'plain';
          const outHeaders: Record<string, string | number> = { 'x-request-id': ex.id, 'x-queue-ms': Math.round(ex.queueMs), 'x-upstream': ex.upstream ?? '' };
          for (const name of PASS_HEADERS) {
            const v = header(h, name);
            if (v !== undefined && !(isSse && name === 'content-length')) outHeaders[name] = v;
          }
          const retryAfter = header(h, 'retry-after');
          if (retryAfter !== undefined && /^\d{1,6}$/.test(retryAfter)) outHeaders['retry-after'] = retryAfter;
          if (isSse) {
            outHeaders['cache-control'] = 'no-cache';
            outHeaders['x-accel-buffering'] = 'no';
          }
          captureHeaders = { 'content-type': contentType || 'application/json' };
          res.writeHead(statusCode, outHeaders);
          ex.sse = isSse;
          // Headers go out with the first event when it came in the same read (one write
          // instead of two); otherwise right after this read, so clients see them at once.
          if (isSse) queueMicrotask(() => {
            if (!res.headersSent && !res.destroyed) res.flushHeaders();
          });
          ex.status = statusCode;
        }
        if (mode === 'sse') relay = new SseRelay(req.stripUsage);
        const declared = Number(header(h, 'content-length') ?? '0');
        keep = mode === 'error-frame' || (mode === 'plain' && contentType.includes('json') && declared <= MAX_USAGE_PARSE_BYTES);
      },
      onResponseData(_c, chunk) {
        if (ex.ttftMs === null) ex.ttftMs = req.monotonic() - ex.t0;
        if (keep) {
          keptBytes += chunk.length;
          if (keptBytes <= MAX_USAGE_PARSE_BYTES) kept.push(chunk);
          else keep = false;
        }
        if (mode === 'sse') out(relay!.push(chunk));
        else if (mode === 'plain') out(chunk);
      },
      onResponseEnd() {
        if (mode === 'sse') {
          out(relay!.end());
          usage = relay!.usage;
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
        finish({ completed: true, failure: null });
      },
      onResponseError(_c, err) {
        if (abortedBy) {
          finish({ completed: false, failure: abortedBy });
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
        finish({ completed: false, failure: 'upstream' });
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
        finish({ completed: false, failure: 'upstream' });
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
        fresh = (req.freshConnection ?? openFreshConnection)(req.origin);
      } catch (e) {
        writeError(ex, wire(502, 'upstream_unreachable', `the upstream could not be reached: ${(e as Error).message}`, { retryAfterS: 1 }));
        finish({ completed: false, failure: 'upstream' });
        return;
      }
      // `reset`: this connection carries this request only (Connection: close), so it is never a reused one.
      send(fresh, true);
    };

    send(req.dispatcher, false);
  });
}
