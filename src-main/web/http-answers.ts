// How the web bridge answers and reads a request: JSON answers with the
// contract's error shape, and a JSON body read under MAX_BODY_BYTES.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BridgeErrorCode, type ContractError } from '../../src-preload/contract/index.js';
import { AppError } from '../core/base/index.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, code: BridgeErrorCode, message: string): void {
  const error: ContractError = { code, message, retryable: false, details: {} };
  sendJson(res, status, { ok: false, error });
}

export const NO_BODY: unique symbol = Symbol('no body');

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_BODY_BYTES) throw new AppError(BridgeErrorCode.BODY_TOO_LARGE, `body over ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new AppError(BridgeErrorCode.BODY_TOO_LARGE, `body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The request's JSON body ({} when empty), or NO_BODY once an error answer was sent. */
export async function readJsonBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    sendError(res, 415, BridgeErrorCode.BAD_REQUEST, 'content-type must be application/json');
    return NO_BODY;
  }
  let body: Buffer;
  try {
    body = await readBody(req);
  } catch (err) {
    sendError(res, 413, BridgeErrorCode.BODY_TOO_LARGE, err instanceof Error ? err.message : 'body too large');
    return NO_BODY;
  }
  if (body.length === 0) return {};
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    sendError(res, 400, BridgeErrorCode.BAD_REQUEST, 'body is not valid JSON');
    return NO_BODY;
  }
}
