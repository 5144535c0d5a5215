// End-to-end checks through a tunnel: the probe (GET /v1/models) that decides
// whether a tunnel is `up`, and the operator's Test (models, then a 1-token chat).
import type { TunnelTestResult, TunnelTestStep } from '../../../src-preload/contract/index.js';
import { AppError, OnPremErrorCode, type Clock } from '../base/index.js';
import { UpstreamErrorCode, type UpstreamClient } from '../upstream/index.js';
import { FleetErrorCode } from './errors.js';

export interface ProbeResult {
  ok: boolean;
  at: number;
  latencyMs: number;
  /** `CODE: message` when not ok. */
  error: { code: string; message: string } | null;
}

// The Test's answer crosses the contract (hosts.testTunnel): the contract declares it.
export type { TunnelTestResult, TunnelTestStep };

interface HttpOptions {
  timeoutMs: number;
}

const MAX_BODY = 1024 * 1024;

async function call(client: UpstreamClient, path: string, opts: HttpOptions, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
  try {
    const res = await client.request({
      method: body === undefined ? 'GET' : 'POST',
      path,
      headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      deadlineMs: opts.timeoutMs,
      maxBodyBytes: MAX_BODY,
      overflow: 'truncate',
    });
    let json: unknown = null;
    try {
      json = JSON.parse(res.text) as unknown;
    } catch {
      json = null;
    }
    return { status: res.status, json, text: res.text };
  } catch (err) {
    // The upstream classifier's verdict in the fleet's probe codes (the proxy's resolver reads FLEET_PROBE_TIMEOUT).
    const e = err instanceof AppError ? err : new AppError(FleetErrorCode.PROBE_FAILED, String(err));
    if (e.code === OnPremErrorCode.REFUSED) throw e;
    const timedOut = e.code === UpstreamErrorCode.TIMEOUT;
    const undiciCode = e.details['undiciCode'];
    throw new AppError(timedOut ? FleetErrorCode.PROBE_TIMEOUT : FleetErrorCode.PROBE_FAILED, e.message, {
      retryable: true,
      details: typeof undiciCode === 'string' ? { undiciCode } : {},
      cause: err,
    });
  }
}

/** An error body the forward itself wrote (tunnel down) or the server's own error message. */
function describeFailure(status: number, json: unknown, text: string): { code: string; message: string } {
  const err = (json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (err && typeof err.message === 'string') {
    return { code: typeof err.code === 'string' && /^[A-Z_]+$/.test(err.code) ? err.code : FleetErrorCode.PROBE_HTTP_STATUS, message: `HTTP ${status}: ${err.message}` };
  }
  return { code: FleetErrorCode.PROBE_HTTP_STATUS, message: `HTTP ${status}${text ? `: ${text.slice(0, 120)}` : ''}` };
}

/**
 * GET /v1/models through the tunnel: the cheapest request that proves the whole path to the model
 * server. `path` replaces it for a server without one (TEI) or whose health the operator named
 * (kind openai): any 2xx answer then passes.
 */
export async function probeTunnel(client: UpstreamClient, clock: Clock, opts: HttpOptions & { path?: string }): Promise<ProbeResult> {
  const started = performance.now();
  const at = clock.now();
  const path = opts.path ?? '/v1/models';
  try {
    const res = await call(client, path, opts);
    const latencyMs = round(performance.now() - started);
    const passed = path === '/v1/models' ? res.status === 200 : res.status >= 200 && res.status < 300;
    if (!passed) return { ok: false, at, latencyMs, error: describeFailure(res.status, res.json, res.text) };
    return { ok: true, at, latencyMs, error: null };
  } catch (err) {
    const e = err as AppError;
    return { ok: false, at, latencyMs: round(performance.now() - started), error: { code: e.code, message: e.message } };
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/**
 * The operator's Test: list the models, then ask for one token of chat, through `client` (the tunnel's
 * public port, as apps reach it). A TEI server (`embeddingsOnly`) has no model list and no chat: its
 * model is read from GET /info and one embedding is asked instead.
 */
export async function testTunnel(client: UpstreamClient, model: string, clock: Clock, opts: HttpOptions & { localUrl: string; embeddingsOnly?: boolean }): Promise<TunnelTestResult> {
  if (opts.embeddingsOnly === true) return testEmbeddingServer(client, model, clock, opts);
  const at = clock.now();
  const started = performance.now();
  const steps: TunnelTestStep[] = [];
  const done = (error: { code: string; message: string } | null): TunnelTestResult => ({
    ok: error === null,
    at,
    totalMs: round(performance.now() - started),
    localUrl: opts.localUrl,
    steps,
    error,
  });

  let t = performance.now();
  let chatModel = model;
  try {
    const res = await call(client, '/v1/models', opts);
    const ids = ((res.json as { data?: { id?: unknown }[] } | null)?.data ?? []).map((d) => d.id).filter((id): id is string => typeof id === 'string');
    const ok = res.status === 200 && ids.length > 0;
    if (ok && !ids.includes(model)) chatModel = ids[0]!;
    steps.push({
      name: 'models',
      ok,
      status: res.status,
      latencyMs: round(performance.now() - t),
      detail: ok ? `${ids.length} model${ids.length === 1 ? '' : 's'}: ${ids.slice(0, 3).join(', ')}` : describeFailure(res.status, res.json, res.text).message,
    });
    if (!ok) return done(res.status === 200 ? { code: FleetErrorCode.PROBE_FAILED, message: 'GET /v1/models listed no models' } : describeFailure(res.status, res.json, res.text));
  } catch (err) {
    const e = err as AppError;
    steps.push({ name: 'models', ok: false, status: null, latencyMs: round(performance.now() - t), detail: e.message });
    return done({ code: e.code, message: `GET /v1/models: ${e.message}` });
  }

  t = performance.now();
  try {
    const res = await call(client, '/v1/chat/completions', opts, {
      model: chatModel,
      messages: [{ role: 'user', content: 'Reply with OK.' }],
      max_tokens: 1,
      temperature: 0,
      stream: false,
    });
    const choices = (res.json as { choices?: unknown[] } | null)?.choices;
    const ok = res.status === 200 && Array.isArray(choices) && choices.length > 0;
    steps.push({
      name: 'chat',
      ok,
      status: res.status,
      latencyMs: round(performance.now() - t),
      detail: ok ? `1-token chat with ${chatModel} answered` : describeFailure(res.status, res.json, res.text).message,
    });
    if (!ok) return done(res.status === 200 ? { code: FleetErrorCode.PROBE_FAILED, message: 'chat answer had no choices' } : describeFailure(res.status, res.json, res.text));
  } catch (err) {
    const e = err as AppError;
    steps.push({ name: 'chat', ok: false, status: null, latencyMs: round(performance.now() - t), detail: e.message });
    return done({ code: e.code, message: `POST /v1/chat/completions: ${e.message}` });
  }
  return done(null);
}

/** The Test of a TEI server: GET /info names its model, then one embedding through POST /v1/embeddings. */
async function testEmbeddingServer(client: UpstreamClient, model: string, clock: Clock, opts: HttpOptions & { localUrl: string }): Promise<TunnelTestResult> {
  const at = clock.now();
  const started = performance.now();
  const steps: TunnelTestStep[] = [];
  const done = (error: { code: string; message: string } | null): TunnelTestResult => ({ ok: error === null, at, totalMs: round(performance.now() - started), localUrl: opts.localUrl, steps, error });
  const step = async (name: TunnelTestStep['name'], what: string, run: () => Promise<{ status: number; json: unknown; text: string }>, read: (json: unknown) => string | null) => {
    const t = performance.now();
    try {
      const res = await run();
      const detail = res.status === 200 ? read(res.json) : null;
      steps.push({ name, ok: detail !== null, status: res.status, latencyMs: round(performance.now() - t), detail: detail ?? describeFailure(res.status, res.json, res.text).message });
      if (detail !== null) return null;
      return res.status === 200 ? { code: FleetErrorCode.PROBE_FAILED, message: `${what} answered 200 without what it should hold` } : describeFailure(res.status, res.json, res.text);
    } catch (err) {
      const e = err as AppError;
      steps.push({ name, ok: false, status: null, latencyMs: round(performance.now() - t), detail: e.message });
      return { code: e.code, message: `${what}: ${e.message}` };
    }
  };
  const info = await step('models', 'GET /info', () => call(client, '/info', opts), (json) => {
    const id = (json as { model_id?: unknown } | null)?.model_id;
    return typeof id === 'string' ? `1 model: ${id} (GET /info)` : null;
  });
  if (info) return done(info);
  const embedded = await step('embeddings', 'POST /v1/embeddings', () => call(client, '/v1/embeddings', opts, { model, input: 'OK' }), (json) => {
    const v = (json as { data?: { embedding?: unknown }[] } | null)?.data?.[0]?.embedding;
    return Array.isArray(v) && v.length > 0 ? `1 embedding of ${v.length} dimensions` : null;
  });
  return done(embedded);
}
