import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { errors, Pool, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Exchange } from '../../../../src-main/core/proxy/exchange.js';
import { forward, staleConnectionRetries, type ForwardRequest } from '../../../../src-main/core/proxy/upstream-exchange.js';
import { UpstreamClient, bytesReadBefore, isStaleConnectionFailure } from '../../../../src-main/core/upstream/index.js';

/** The keep-alive pool of an upstream client of `origin` (one connection), as the proxy dispatches on it. */
const createUpstreamPool = (origin: string, connections: number): Dispatcher => UpstreamClient.forUrl(origin, { onPrem: null, purpose: 'proxy' }, { connections }).dispatcher;

// The retry-once rule for a request that meets a kept-alive connection the
// upstream had just closed: the classifier, and forward() against scripted
// dispatchers (what the client sees, how often it is sent, on what).

const closed = (message: string, bytesRead: number | null) =>
  Object.assign(new errors.SocketError(message), { socket: bytesRead === null ? null : { bytesRead, bytesWritten: 100 } });
const sysError = (code: string, bytesRead?: number) =>
  Object.assign(new Error(`read ${code}`), { code }, bytesRead === undefined ? {} : { socket: { bytesRead } });

describe('isStaleConnectionFailure', () => {
  it('is a close or reset, before the answer, on a connection that had read earlier answers', () => {
    expect(isStaleConnectionFailure(closed('other side closed', 512), false)).toBe(true);
    expect(isStaleConnectionFailure(closed('closed', 512), false)).toBe(true);
    expect(isStaleConnectionFailure(sysError('ECONNRESET', 512), false)).toBe(true);
    expect(isStaleConnectionFailure(sysError('EPIPE', 512), false)).toBe(true);
  });

  it('is not once the answer began', () => {
    expect(isStaleConnectionFailure(closed('other side closed', 512), true)).toBe(false);
    expect(isStaleConnectionFailure(sysError('ECONNRESET', 512), true)).toBe(false);
  });

  it('is not on a fresh connection (nothing read before), nor when the error does not say what was read', () => {
    expect(isStaleConnectionFailure(closed('other side closed', 0), false)).toBe(false);
    expect(isStaleConnectionFailure(closed('other side closed', null), false)).toBe(false);
    expect(isStaleConnectionFailure(sysError('ECONNRESET'), false)).toBe(false);
    expect(isStaleConnectionFailure(sysError('EPIPE'), false)).toBe(false);
  });

  it('is not a timeout, an abort, a refused connect or an unparsable answer', () => {
    const reused = { socket: { bytesRead: 512 } };
    expect(isStaleConnectionFailure(Object.assign(new errors.HeadersTimeoutError(), reused), false)).toBe(false);
    expect(isStaleConnectionFailure(Object.assign(new errors.BodyTimeoutError(), reused), false)).toBe(false);
    expect(isStaleConnectionFailure(Object.assign(new errors.ConnectTimeoutError(), reused), false)).toBe(false);
    expect(isStaleConnectionFailure(Object.assign(new errors.RequestAbortedError(), reused), false)).toBe(false);
    expect(isStaleConnectionFailure(sysError('ECONNREFUSED', 512), false)).toBe(false);
    expect(isStaleConnectionFailure(sysError('ETIMEDOUT', 512), false)).toBe(false);
    expect(isStaleConnectionFailure(closed('bad response', 512), false)).toBe(false);
    expect(isStaleConnectionFailure(closed('destroyed', 512), false)).toBe(false);
    expect(isStaleConnectionFailure(new Error('other side closed'), false)).toBe(false);
    expect(isStaleConnectionFailure(null, false)).toBe(false);
  });
});

// --- the real socket: what undici's errors say ------------------------------

const servers: Server[] = [];
const pools: Dispatcher[] = [];
afterEach(async () => {
  await Promise.allSettled(pools.splice(0).map((p) => p.destroy()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** Answers requests on each connection until `nth` (1-based), which it meets with `how`. */
async function closingServer(nth: number, how: 'fin' | 'rst'): Promise<string> {
  const server = createServer((socket: Socket) => {
    let n = 0;
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      while (buf.includes('\r\n\r\n')) {
        buf = buf.slice(buf.indexOf('\r\n\r\n') + 4);
        if (++n === nth) {
          if (how === 'rst') socket.resetAndDestroy();
          else socket.end();
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nKeep-Alive: timeout=5, max=100\r\n\r\nok');
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function secondRequestError(pool: Dispatcher): Promise<unknown> {
  pools.push(pool);
  const first = await pool.request({ path: '/', method: 'GET' });
  expect(await first.body.text()).toBe('ok');
  return pool.request({ path: '/', method: 'GET' }).then(
    () => null,
    (err: unknown) => err,
  );
}

describe('what undici reports when a reused connection is closed under a request', () => {
  it('a FIN: UND_ERR_SOCKET "other side closed" with the bytes read earlier — retryable', async () => {
    const err = await secondRequestError(createUpstreamPool(await closingServer(2, 'fin'), 1));
    expect((err as { code?: string }).code).toBe('UND_ERR_SOCKET');
    expect(bytesReadBefore(err)).toBeGreaterThan(0);
    expect(isStaleConnectionFailure(err, false)).toBe(true);
  });

  it('an RST: ECONNRESET, whose socket figures our pool records — retryable', async () => {
    const err = await secondRequestError(createUpstreamPool(await closingServer(2, 'rst'), 1));
    expect((err as { code?: string }).code).toBe('ECONNRESET');
    expect(bytesReadBefore(err)).toBeGreaterThan(0);
    expect(isStaleConnectionFailure(err, false)).toBe(true);
  });

  it('the same RST through a plain undici Pool says nothing of its socket — not retried', async () => {
    const err = await secondRequestError(new Pool(await closingServer(2, 'rst'), { connections: 1 }));
    expect((err as { code?: string }).code).toBe('ECONNRESET');
    expect(bytesReadBefore(err)).toBeNull();
    expect(isStaleConnectionFailure(err, false)).toBe(false);
  });

  it('the first request of a fresh connection closed: nothing read before — not retried', async () => {
    const pool = createUpstreamPool(await closingServer(1, 'fin'), 1);
    pools.push(pool);
    const err = await pool.request({ path: '/', method: 'GET' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as { code?: string }).code).toBe('UND_ERR_SOCKET');
    expect(bytesReadBefore(err)).toBe(0);
    expect(isStaleConnectionFailure(err, false)).toBe(false);
  });
});

// --- forward() against scripted dispatchers ---------------------------------

class FakeResponse extends EventEmitter {
  statusCode = 0;
  headers: Record<string, string | number> = {};
  headersSent = false;
  destroyed = false;
  writableEnded = false;
  private readonly chunks: string[] = [];
  writeHead(status: number, headers: Record<string, string | number> = {}) {
    this.statusCode = status;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }
  flushHeaders() {}
  write(d: string | Buffer) {
    this.headersSent = true;
    this.chunks.push(d.toString());
    return true;
  }
  end(d?: string | Buffer) {
    if (d !== undefined) this.write(d);
    this.writableEnded = true;
    return this;
  }
  destroy() {
    this.destroyed = true;
    return this;
  }
  get body(): string {
    return this.chunks.join('');
  }
}

type Step =
  | { fail: Error }
  | { answer: { status: number; contentType: string; chunks: string[] } }
  | { startThenFail: { status: number; contentType: string; chunk: string; err: Error } }
  | { hang: true };

/** A Dispatcher that plays one scripted step per dispatch. */
class ScriptedDispatcher {
  readonly calls: Dispatcher.DispatchOptions[] = [];
  closes = 0;
  destroys = 0;
  private hanging: Dispatcher.DispatchHandler | null = null;
  constructor(private readonly steps: Step[]) {}

  /** A request it holds unanswered (a connect that takes its time). */
  get holding(): boolean {
    return this.hanging !== null;
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.calls.push(opts);
    const step = this.steps.shift();
    if (!step) throw new Error('no step left');
    setImmediate(() => this.play(step, handler));
    return true;
  }

  private play(step: Step, h: Dispatcher.DispatchHandler) {
    const c = controller();
    const json = (ct: string): IncomingHttpHeaders => ({ 'content-type': ct });
    if ('hang' in step) {
      this.hanging = h;
      return;
    }
    if ('fail' in step) {
      h.onResponseError?.(c, step.fail);
      return;
    }
    h.onRequestStart?.(c, {});
    if ('answer' in step) {
      h.onResponseStart?.(c, step.answer.status, json(step.answer.contentType));
      for (const piece of step.answer.chunks) h.onResponseData?.(c, Buffer.from(piece));
      h.onResponseEnd?.(c, {});
      return;
    }
    h.onResponseStart?.(c, step.startThenFail.status, json(step.startThenFail.contentType));
    h.onResponseData?.(c, Buffer.from(step.startThenFail.chunk));
    h.onResponseError?.(c, step.startThenFail.err);
  }

  close(): Promise<void> {
    this.closes++;
    return Promise.resolve();
  }

  destroy(err?: Error): Promise<void> {
    this.destroys++;
    const h = this.hanging;
    this.hanging = null;
    if (h) h.onResponseError?.(controller(), err ?? new errors.ClientDestroyedError());
    return Promise.resolve();
  }
}

function controller(): Dispatcher.DispatchController {
  return { aborted: false, paused: false, reason: null, abort() {}, pause() {}, resume() {} };
}

const COMPLETION = JSON.stringify({ choices: [{ index: 0, message: { content: 'fresh' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } });
const SSE = 'data: {"choices":[{"index":0,"delta":{"content":"fresh"}}]}\n\ndata: [DONE]\n\n';
const stale = () => closed('other side closed', 4096);

function setup(pooledSteps: Step[], freshSteps: Step[][] = []) {
  const res = new FakeResponse();
  const ex = new Exchange(res as unknown as ServerResponse, 0, Date.now());
  const pooled = new ScriptedDispatcher(pooledSteps);
  const opened: ScriptedDispatcher[] = [];
  const origins: string[] = [];
  const req: ForwardRequest = {
    dispatcher: pooled as unknown as Dispatcher,
    freshConnection: (origin) => {
      origins.push(origin);
      const d = new ScriptedDispatcher(freshSteps[opened.length] ?? []);
      opened.push(d);
      return d as unknown as Dispatcher;
    },
    origin: 'http://127.0.0.1:8000',
    path: '/v1/chat/completions',
    body: Buffer.from('{"model":"M"}'),
    apiKey: null,
    headersTimeoutMs: 1000,
    idleTimeoutMs: 1000,
    stripUsage: false,
    monotonic: () => 0,
    capture: false,
  };
  return { res, ex, pooled, opened, origins, req };
}

describe('forward() and the retry', () => {
  it('retries once, on a fresh connection of its own, and the client sees only the retry’s answer', async () => {
    const before = staleConnectionRetries();
    const { res, ex, pooled, opened, origins, req } = setup([{ fail: stale() }], [[{ answer: { status: 200, contentType: 'application/json', chunks: [COMPLETION] } }]]);
    const result = await forward(ex, req);
    expect(result).toMatchObject({ completed: true, failure: null, retried: true, usage: { promptTokens: 3, completionTokens: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(COMPLETION);
    expect(pooled.calls).toHaveLength(1);
    expect(origins).toEqual(['http://127.0.0.1:8000']);
    expect(opened[0]!.calls).toHaveLength(1);
    expect(opened[0]!.calls[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', reset: true });
    expect(Buffer.from(opened[0]!.calls[0]!.body as Buffer).toString()).toBe('{"model":"M"}');
    expect(opened[0]!.closes).toBe(1);
    expect(staleConnectionRetries() - before).toBe(1);
  });

  it('an ECONNRESET whose socket had read earlier answers is retried the same way', async () => {
    const { res, ex, req } = setup([{ fail: sysError('ECONNRESET', 900) }], [[{ answer: { status: 200, contentType: 'application/json', chunks: [COMPLETION] } }]]);
    expect(await forward(ex, req)).toMatchObject({ completed: true, retried: true });
    expect(res.body).toBe(COMPLETION);
  });

  it('is not retried once the status line arrived: the stream ends with an error frame', async () => {
    const { res, ex, opened, req } = setup([{ startThenFail: { status: 200, contentType: 'text/event-stream', chunk: 'data: {"choices":[]}\n\n', err: stale() } }]);
    const result = await forward(ex, req);
    expect(result).toMatchObject({ completed: false, failure: 'upstream', retried: false });
    expect(opened).toHaveLength(0);
    expect(res.body).toContain('upstream_reset');
  });

  it('is not retried twice: the fresh connection failing too is a 502', async () => {
    const { res, ex, opened, req } = setup([{ fail: stale() }], [[{ fail: stale() }]]);
    const result = await forward(ex, req);
    expect(result).toMatchObject({ completed: false, failure: 'upstream', retried: true });
    expect(opened).toHaveLength(1);
    expect(opened[0]!.calls).toHaveLength(1);
    expect(opened[0]!.destroys).toBe(1);
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('upstream_unreachable');
  });

  it('is not retried when the failed connection was a fresh one (nothing read before)', async () => {
    const { res, ex, opened, req } = setup([{ fail: closed('other side closed', 0) }]);
    expect(await forward(ex, req)).toMatchObject({ completed: false, failure: 'upstream', retried: false });
    expect(opened).toHaveLength(0);
    expect(res.statusCode).toBe(502);
  });

  it('timeouts are not retried', async () => {
    const headers = Object.assign(new errors.HeadersTimeoutError(), { socket: { bytesRead: 4096 } });
    const { res, ex, opened, req } = setup([{ fail: headers }]);
    expect(await forward(ex, req)).toMatchObject({ completed: false, failure: 'upstream', retried: false });
    expect(opened).toHaveLength(0);
    expect(res.statusCode).toBe(504);
    expect(res.body).toContain('upstream_timeout');
  });

  it('retries behind SSE keep-alives already sent to a queued client: the stream continues', async () => {
    const { res, ex, req } = setup([{ fail: stale() }], [[{ answer: { status: 200, contentType: 'text/event-stream', chunks: [SSE] } }]]);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': keep-alive\n\n');
    ex.committed = true;
    ex.sse = true;
    const result = await forward(ex, req);
    expect(result).toMatchObject({ completed: true, retried: true });
    expect(res.body).toBe(': keep-alive\n\n' + SSE);
  });

  it('a client that leaves while the retry connects cuts the retry’s connection at once', async () => {
    const { ex, opened, req } = setup([{ fail: stale() }], [[{ hang: true }]]);
    const done = forward(ex, req);
    while (!opened[0]?.holding) await new Promise((r) => setImmediate(r));
    ex.abort?.('client');
    expect(await done).toMatchObject({ completed: false, failure: 'client', retried: true });
    expect(opened[0]!.destroys).toBeGreaterThanOrEqual(1);
  });
});
