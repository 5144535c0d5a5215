// Stage: body. A JSON object naming a model, bounded in size (maxBodyBytes)
// and in time (bodyTimeoutMs); a client that leaves mid-body needs no answer.
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../base/index.js';
import { wire, type Exchange } from '../exchange.js';
import { DONE, fail, ok, type StageEnv, type StageResult } from './stage.js';

export interface JsonBody {
  /** The bytes as they came (for the idempotency fingerprint, and sent on when nothing is rewritten). */
  raw: Buffer;
  json: Record<string, unknown>;
  /** `json.model`: a non-empty string. */
  model: string;
}

type BodyFailure = 'too_large' | 'timeout' | 'client';

/**
 * 415 unsupported_media_type, 413 body_too_large, 408 body_timeout, 400 invalid_json /
 * invalid_request / missing_model; counts the bytes read on `ex`.
 */
export async function readJsonBody(ex: Exchange, req: IncomingMessage, env: StageEnv): Promise<StageResult<JsonBody>> {
  const contentType = (req.headers['content-type'] ?? '').toLowerCase();
  if (!/^application\/json\s*(;|$)/.test(contentType)) {
    req.resume();
    return fail(wire(415, 'unsupported_media_type', 'send the body as application/json', { headers: { connection: 'close' } }));
  }
  const raw = await readRaw(ex, req, env.settings.maxBodyBytes, env.settings.bodyTimeoutMs, env.clock);
  if (raw === 'client') return DONE;
  if (raw === 'too_large') {
    return fail(wire(413, 'body_too_large', `the body is over ${env.settings.maxBodyBytes} bytes`, { headers: { connection: 'close', 'x-should-retry': 'false' } }));
  }
  if (raw === 'timeout') {
    return fail(wire(408, 'body_timeout', `the body did not arrive within ${env.settings.bodyTimeoutMs} ms`, { headers: { connection: 'close' } }));
  }
  let json: Record<string, unknown>;
  try {
    const value = JSON.parse(raw.toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return fail(wire(400, 'invalid_request', 'the body must be a JSON object'));
    }
    json = value as Record<string, unknown>;
  } catch (err) {
    return fail(wire(400, 'invalid_json', `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}`));
  }
  const model = json['model'];
  if (typeof model !== 'string' || model.length === 0) {
    return fail(wire(400, 'missing_model', 'the body must name a model', { param: 'model' }));
  }
  return ok({ raw, json, model });
}

/** The whole body, or why it did not come; `ex.abort` cuts the read (the client left, or a shutdown). */
function readRaw(ex: Exchange, req: IncomingMessage, limit: number, timeoutMs: number, clock: Clock): Promise<Buffer | BodyFailure> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    return Promise.resolve('too_large');
  }
  return new Promise<Buffer | BodyFailure>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const timer = clock.setTimeout(() => settle('timeout'), timeoutMs);
    const settle = (failure: BodyFailure | null) => {
      if (done) return;
      done = true;
      void timer.dispose();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      ex.abort = null;
      if (failure) {
        if (failure !== 'client') req.resume();
        resolve(failure);
      } else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      ex.bytesIn = size;
      ex.capture?.request(chunk);
      if (size > limit) settle('too_large');
      else chunks.push(chunk);
    };
    const onEnd = () => settle(null);
    const onClose = () => settle('client');
    ex.abort = () => settle('client');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
}
