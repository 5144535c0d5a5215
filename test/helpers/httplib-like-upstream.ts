// An OpenAI-ish model server that handles its connections the way llama-server
// (cpp-httplib) does: one request at a time per connection, every answer but the
// last says `Keep-Alive: timeout=5, max=100`, the 100th says `Connection: close`
// and the connection is closed after it, and a connection idle for 5 s is
// closed — with whatever request is arriving at that moment unread (the client
// then sees a FIN or an RST). The idle time is an option, so tests can make
// those closes race their requests often; the header keeps announcing 5 s, as a
// server behind something that closes earlier would.
//
// Plain node modules (and undici, for the load driver at the end) only, so the
// netns model server fixture can load it too (test/fixtures/ssh/model-server.mjs,
// MODEL_SERVER_HTTPLIB_IDLE_MS).
//
//   GET  /v1/models             one model
//   POST /v1/chat/completions   JSON, or SSE (`stream: true`) chunks, usage when asked, [DONE]
//   GET  /health                {"status":"ok"}
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { request, type Dispatcher } from 'undici';

export interface HttplibLikeOptions {
  /** Idle connections are closed after this long (cpp-httplib: keep_alive_timeout 5 s). */
  idleTimeoutMs?: number;
  /**
   * How long a new connection may take to send its first request (default 5 s, cpp-httplib's
   * timeout). Kept apart from idleTimeoutMs so that a short idle time in a test closes only
   * connections that served answers: a loaded test process can pause longer than it between a
   * connect and the first read, and that is not the race under test.
   */
  firstRequestTimeoutMs?: number;
  /** Requests per connection; the last answer carries Connection: close (cpp-httplib: keep_alive_max_count 100). */
  maxRequests?: number;
  /** What `Keep-Alive: timeout=` announces, in seconds (default 5, whatever idleTimeoutMs is). */
  announcedTimeoutS?: number;
  model?: string;
  /** Content chunks of an answer when the request does not ask for fewer with max_tokens. */
  tokens?: number;
  /** Gap between two SSE chunks (0: the next turn of the event loop). */
  tokenGapMs?: number;
  host?: string;
  port?: number;
}

export interface HttplibLikeStats {
  connections: number;
  /** Complete requests read (each one started by the server). */
  requests: number;
  chat: number;
  streamed: number;
  /** Connections closed for being idle (an RST when a request was arriving unread, else a FIN). */
  idleCloses: number;
  /** Connections closed after their last allowed request. */
  maxCloses: number;
  /** Connections the client closed first (its keep-alive ran out). */
  closedByClient: number;
  /** Requests that came with Connection: close (the client's own request limit). */
  clientAskedClose: number;
  /** The most requests one connection carried. */
  maxOnOneConnection: number;
}

export interface HttplibLikeUpstream {
  url: string;
  port: number;
  stats: HttplibLikeStats;
  close(): Promise<void>;
}

interface ParsedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** One request off the front of `buf`, or null when it has not all arrived; 'bad' when it cannot be read. */
function parseRequest(buf: Buffer): { req: ParsedRequest; rest: Buffer } | 'bad' | null {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) return buf.length > 64 * 1024 ? 'bad' : null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const [method, path] = lines[0]!.split(' ');
  if (!method || !path) return 'bad';
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  if (headers['transfer-encoding']) return 'bad'; // not needed by these tests
  const length = Number(headers['content-length'] ?? 0);
  if (!Number.isInteger(length) || length < 0) return 'bad';
  const start = end + HEAD_END.length;
  if (buf.length < start + length) return null;
  return { req: { method, path, headers, body: buf.subarray(start, start + length) }, rest: buf.subarray(start + length) };
}

export async function startHttplibLikeUpstream(options: HttplibLikeOptions = {}): Promise<HttplibLikeUpstream> {
  const idleTimeoutMs = options.idleTimeoutMs ?? 5_000;
  const firstRequestTimeoutMs = options.firstRequestTimeoutMs ?? 5_000;
  const maxRequests = options.maxRequests ?? 100;
  const announced = options.announcedTimeoutS ?? 5;
  const model = options.model ?? 'test-model';
  const tokens = options.tokens ?? 4;
  const tokenGapMs = options.tokenGapMs ?? 0;
  const stats: HttplibLikeStats = { connections: 0, requests: 0, chat: 0, streamed: 0, idleCloses: 0, maxCloses: 0, closedByClient: 0, clientAskedClose: 0, maxOnOneConnection: 0 };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, f: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
    return t;
  };
  let seq = 0;

  const server = createServer((socket) => {
    stats.connections++;
    sockets.add(socket);
    // Each SSE event is its own write: without this, Nagle and the peer's delayed ACK hold them 40 ms.
    socket.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let served = 0;
    let busy = false;
    let idle: NodeJS.Timeout | null = null;
    /** We are closing it (idle, or after its last answer). */
    let closing = false;
    const clearIdle = () => {
      if (idle) clearTimeout(idle);
      if (idle) timers.delete(idle);
      idle = null;
    };
    const armIdle = () => {
      clearIdle();
      idle = later(served === 0 ? firstRequestTimeoutMs : idleTimeoutMs, () => {
        idle = null;
        stats.idleCloses++;
        // A request still in the kernel's buffer is never read: the close becomes an RST, as with cpp-httplib.
        closing = true;
        socket.destroy();
      });
    };

    const head = (status: number, fields: Record<string, string>, last: boolean) => {
      const lines = [`HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Error'}`];
      for (const [k, v] of Object.entries(fields)) lines.push(`${k}: ${v}`);
      lines.push(last ? 'Connection: close' : `Keep-Alive: timeout=${announced}, max=${maxRequests}`);
      return lines.join('\r\n') + '\r\n\r\n';
    };

    const done = (last: boolean) => {
      served++;
      stats.maxOnOneConnection = Math.max(stats.maxOnOneConnection, served);
      if (last) {
        if (served >= maxRequests) stats.maxCloses++;
        closing = true;
        socket.end();
        return;
      }
      busy = false;
      next();
    };

    const json = (status: number, body: unknown, last: boolean) => {
      const text = JSON.stringify(body);
      socket.write(head(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) }, last) + text);
      done(last);
    };

    const chat = (req: ParsedRequest, last: boolean) => {
      stats.chat++;
      let parsed: { stream?: boolean; max_tokens?: number; stream_options?: { include_usage?: boolean } } = {};
      try {
        parsed = JSON.parse(req.body.toString('utf8')) as typeof parsed;
      } catch {
        json(400, { error: { code: 400, message: 'bad JSON', type: 'invalid_request_error' } }, last);
        return;
      }
      const n = Math.max(1, Math.min(tokens, parsed.max_tokens ?? tokens));
      const id = `chatcmpl-${++seq}`;
      const usage = { prompt_tokens: 7, completion_tokens: n, total_tokens: 7 + n };
      if (!parsed.stream) {
        const content = Array.from({ length: n }, (_, i) => `t${i}`).join(' ');
        json(200, { id, object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage }, last);
        return;
      }
      stats.streamed++;
      socket.write(head(200, { 'Content-Type': 'text/event-stream', 'Transfer-Encoding': 'chunked' }, last));
      const chunk = (text: string) => {
        if (!socket.destroyed) socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
      };
      const event = (data: unknown) => chunk(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
      const base = { id, object: 'chat.completion.chunk', created: 1, model };
      const frames: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] }];
      for (let i = 0; i < n; i++) frames.push({ ...base, choices: [{ index: 0, delta: { content: i === 0 ? 't0' : ` t${i}` }, finish_reason: null }] });
      frames.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      if (parsed.stream_options?.include_usage) frames.push({ ...base, choices: [], usage });
      frames.push('[DONE]');
      let i = 0;
      const pump = () => {
        if (socket.destroyed) return;
        event(frames[i++]);
        if (i < frames.length) {
          if (tokenGapMs > 0) later(tokenGapMs, pump);
          else setImmediate(pump);
          return;
        }
        if (!socket.destroyed) socket.write('0\r\n\r\n');
        done(last);
      };
      pump();
    };

    const handle = (req: ParsedRequest) => {
      stats.requests++;
      const askedClose = (req.headers['connection'] ?? '').toLowerCase() === 'close';
      if (askedClose) stats.clientAskedClose++;
      const last = served + 1 >= maxRequests || askedClose;
      const path = req.path.split('?')[0];
      if (req.method === 'GET' && path === '/v1/models') json(200, { object: 'list', data: [{ id: model, object: 'model', owned_by: 'llamacpp' }] }, last);
      else if (req.method === 'GET' && path === '/health') json(200, { status: 'ok' }, last);
      else if (req.method === 'POST' && path === '/v1/chat/completions') chat(req, last);
      else json(404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } }, last);
    };

    const next = () => {
      if (busy || socket.destroyed) return;
      const got = parseRequest(buf);
      if (got === 'bad') {
        socket.destroy();
        return;
      }
      if (got === null) {
        armIdle();
        return;
      }
      clearIdle();
      buf = got.rest;
      busy = true;
      handle(got.req);
    };

    socket.on('data', (d: Buffer) => {
      clearIdle();
      buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
      next();
    });
    socket.on('end', () => {
      if (!closing) stats.closedByClient++;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearIdle();
      sockets.delete(socket);
    });
    next();
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// --- a load that makes the idle closes race ---------------------------------

export interface LoadFailure {
  i: number;
  status: number | null;
  detail: string;
}

export interface ChatTarget {
  /** The chat completions URL (a proxy's, or the server's own). */
  url: string;
  headers: Record<string, string>;
  model: string;
  dispatcher: Dispatcher;
}

/** Chat request number i (streaming when i is even), read to its end; a LoadFailure unless it is the whole answer this server gives. */
export async function chatRequest(t: ChatTarget, i: number): Promise<LoadFailure | null> {
  const stream = i % 2 === 0;
  try {
    const res = await request(t.url, {
      method: 'POST',
      dispatcher: t.dispatcher,
      headers: { 'content-type': 'application/json', ...t.headers },
      body: JSON.stringify({ model: t.model, messages: [{ role: 'user', content: `q${i}` }], max_tokens: 4, stream }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return { i, status: res.statusCode, detail: text.slice(0, 300) };
    if (stream) {
      const ok = text.includes('"content":" t3"') && text.includes('"finish_reason":"stop"') && text.trimEnd().endsWith('data: [DONE]') && !text.includes('"error"');
      return ok ? null : { i, status: 200, detail: `bad stream: ${text.slice(-300)}` };
    }
    const body = JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> };
    return body.choices?.[0]?.message?.content === 't0 t1 t2 t3' ? null : { i, status: 200, detail: `bad answer: ${text.slice(0, 300)}` };
  } catch (err) {
    return { i, status: null, detail: (err as Error).message };
  }
}

/**
 * `total` chat requests, half streaming, from `concurrency` workers in rounds of `perRound` each;
 * after a round every worker waits for the others and all pause together, for idleMs − 1 …
 * idleMs − 20 ms (sweeping). Each connection's idle timer at the server started when it sent that
 * connection's last answer, up to a round's length before the round ended at the client, so somewhere
 * in the sweep the next request reaches the server just as its timer closes the connection.
 */
export async function driveRacingLoad(
  t: ChatTarget,
  o: { total: number; concurrency: number; perRound: number; idleMs: number },
): Promise<{ failures: LoadFailure[]; issued: number }> {
  const failures: LoadFailure[] = [];
  let issued = 0;
  for (let round = 0; issued < o.total; round++) {
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        for (let k = 0; k < o.perRound && issued < o.total; k++) {
          const f = await chatRequest(t, issued++);
          if (f) failures.push(f);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, Math.max(0, o.idleMs - 1 - (round % 20))));
  }
  return { failures, issued };
}
