// Small HTTP helpers for the simulator: bounded body reading and the vLLM
// ≥0.10.1 error shape {"error":{message,type,param,code:<int status>}}.

import type { IncomingMessage, ServerResponse } from 'node:http';

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, 'BadRequestError', message);
export const notFound = (message: string) => new HttpError(404, 'NotFoundError', message);

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, 'BadRequestError', 'request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('Invalid JSON body: could not parse the request body as JSON.');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendEmpty(res: ServerResponse, status = 200): void {
  res.writeHead(status, { 'content-length': 0 });
  res.end();
}

export function errorBody(status: number, type: string, message: string) {
  return { error: { message, type, param: null, code: status } };
}

export function sendError(res: ServerResponse, err: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.status, errorBody(err.status, err.type, err.message));
}
