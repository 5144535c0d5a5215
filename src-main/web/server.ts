// The headless bridge: serves the built renderer and the contract over HTTP on
// 127.0.0.1 only. Calls are `POST /api/<channel>` with a JSON body; events
// stream from `GET /api/events` as SSE, the high-rate ticks delta-coded per
// connection (tick-codec.ts; `POST /api/events/resync` asks one stream for a
// keyframe, the stream named by the `x-gpu-console-stream` header its
// response carried). Every /api request needs the per-start
// token in `x-gpu-console-token`; every request must carry a loopback Host
// header naming our port (DNS-rebinding defence).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { BridgeErrorCode, EVENTS_RESYNC_PATH, parseStrict, ResyncRequestSchema } from '../../src-preload/contract/index.js';
import type { Api } from '../core/api.js';
import { AppError, type Logger } from '../core/base/index.js';
import { EventStreams } from './event-streams.js';
import { NO_BODY, readJsonBody, sendError, sendJson } from './http-answers.js';
import { serveStatic } from './static-files.js';

export { MAX_BODY_BYTES } from './http-answers.js';
export { SSE_MAX_BUFFERED_BYTES } from './event-streams.js';

export const TOKEN_HEADER = 'x-gpu-console-token';
/**
 * Set by the `gpu-console` command so that what it does through a running console is audited as
 * `@cli`. Only a holder of the token (ready.json, 0600: the same OS user) can send it.
 */
export const CALLER_HEADER = 'x-gpu-console-caller';

export interface WebBridgeOptions {
  api: Api;
  rendererDir: string;
  port?: number;
  /** Fixed token for tests; by default 32 random bytes per start. */
  token?: string;
  logger: Logger;
}

export interface WebBridge {
  readonly port: number;
  readonly token: string;
  /** The URL an operator opens: token in the fragment, so it never reaches logs or Referer headers. */
  readonly url: string;
  readonly origin: string;
  close(): Promise<void>;
}

const STATUS_BY_CODE: Record<string, number> = {
  [BridgeErrorCode.UNAUTHORIZED]: 401,
  [BridgeErrorCode.FORBIDDEN_HOST]: 403,
  [BridgeErrorCode.BAD_REQUEST]: 400,
  [BridgeErrorCode.INVALID_PATH]: 400,
  [BridgeErrorCode.INVALID_INPUT]: 400,
  [BridgeErrorCode.UNKNOWN_CHANNEL]: 404,
  [BridgeErrorCode.INVALID_OUTPUT]: 500,
  [BridgeErrorCode.INTERNAL]: 500,
  INTERNAL_ASSERTION: 500,
};

function tokensEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function startWebBridge(options: WebBridgeOptions): Promise<WebBridge> {
  const { api, logger } = options;
  const token = options.token ?? randomBytes(32).toString('hex');
  const sockets = new Set<Socket>();
  const events = new EventStreams(api);
  let port = 0;

  const allowedHost = (host: string | undefined): boolean =>
    host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}`;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error('web bridge request failed', { error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) sendError(res, 500, BridgeErrorCode.INTERNAL, 'internal error');
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!allowedHost(req.headers.host)) {
      sendError(res, 403, BridgeErrorCode.FORBIDDEN_HOST, 'forbidden Host header');
      return;
    }
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
      await handleApi(req, res, url);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 405, BridgeErrorCode.BAD_REQUEST, 'method not allowed');
      return;
    }
    await serveStatic(options.rendererDir, req, res, url);
  }

  async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const given = req.headers[TOKEN_HEADER];
    if (typeof given !== 'string' || !tokensEqual(given, token)) {
      sendError(res, 401, BridgeErrorCode.UNAUTHORIZED, `missing or wrong ${TOKEN_HEADER} header`);
      return;
    }
    if (url.pathname === '/api/events') {
      if (req.method !== 'GET') return sendError(res, 405, BridgeErrorCode.BAD_REQUEST, 'use GET for /api/events');
      events.open(req, res);
      return;
    }
    if (url.pathname === EVENTS_RESYNC_PATH) {
      if (req.method !== 'POST') return sendError(res, 405, BridgeErrorCode.BAD_REQUEST, `use POST for ${EVENTS_RESYNC_PATH}`);
      const input = await readJsonBody(req, res);
      if (input === NO_BODY) return;
      const parsed = parseStrict(ResyncRequestSchema, input);
      if (!parsed.ok) return sendError(res, 400, BridgeErrorCode.INVALID_INPUT, `invalid resync request: ${parsed.message}`);
      const encoder = events.encoder(parsed.data.stream);
      if (!encoder) return sendError(res, 404, BridgeErrorCode.UNKNOWN_STREAM, 'no open event stream has this id');
      encoder.resync(parsed.data.channel);
      sendJson(res, 200, { ok: true, data: {} });
      return;
    }
    let channel: string;
    try {
      channel = decodeURIComponent(url.pathname.slice('/api/'.length));
    } catch {
      sendError(res, 400, BridgeErrorCode.INVALID_PATH, 'the channel name holds a malformed percent-escape');
      return;
    }
    if (req.method !== 'POST') return sendError(res, 405, BridgeErrorCode.BAD_REQUEST, `use POST for /api/${channel}`);
    const input = await readJsonBody(req, res);
    if (input === NO_BODY) return;
    // The call's work stops when the client goes away before its answer (a closed tab, an aborted fetch).
    const controller = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) controller.abort(new AppError(BridgeErrorCode.CLIENT_GONE, 'the client closed the connection'));
    };
    res.once('close', onClose);
    const caller = req.headers[CALLER_HEADER] === 'cli' ? 'cli' : 'web';
    const result = await api.invoke(channel, input, { caller, signal: controller.signal });
    if (controller.signal.aborted) return;
    const status = result.ok ? 200 : (STATUS_BY_CODE[result.error.code] ?? 422);
    sendJson(res, status, result);
  }

  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolvePromise();
    });
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  logger.info('web bridge listening', { origin });

  let closing: Promise<void> | null = null;
  return {
    port,
    token,
    origin,
    url: `${origin}/#token=${token}`,
    close: () => {
      closing ??= new Promise<void>((resolveClose) => {
        events.endAll();
        server.close(() => resolveClose());
        // Idle keep-alive sockets would hold close() open; end them.
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
