// Stage: endpoint. The HTTP path names one endpoint (GET /v1/models/{id}
// included) and the method must be that endpoint's; else 400 invalid_path,
// 404 not_found or 405 method_not_allowed. ("Endpoint" is the HTTP side;
// which replicas serve a model is its placement, in registry.ts.)
import type { IncomingMessage } from 'node:http';
import { ENDPOINT_PATH, wire, type Endpoint, type Exchange } from '../exchange.js';
import { fail, ok, type StageResult } from './stage.js';

export interface EndpointMatch {
  endpoint: Endpoint;
  /** The path without its query. */
  path: string;
  /** The id in GET /v1/models/{id}, percent-decoded; null for every other endpoint. */
  modelId: string | null;
}

interface EndpointRule {
  endpoint: Endpoint;
  method: 'GET' | 'POST';
}

const ENDPOINTS = new Map<string, EndpointRule>([
  [ENDPOINT_PATH.chat, { endpoint: 'chat', method: 'POST' }],
  [ENDPOINT_PATH.completions, { endpoint: 'completions', method: 'POST' }],
  [ENDPOINT_PATH.embeddings, { endpoint: 'embeddings', method: 'POST' }],
  [ENDPOINT_PATH.models, { endpoint: 'models', method: 'GET' }],
  [ENDPOINT_PATH.queue, { endpoint: 'queue', method: 'GET' }],
  [ENDPOINT_PATH.health, { endpoint: 'health', method: 'GET' }],
  [ENDPOINT_PATH.metrics, { endpoint: 'metrics', method: 'GET' }],
]);

const MODEL_PREFIX = `${ENDPOINT_PATH.models}/`;

/** Records the endpoint on `ex` as soon as the path names one (so a 405 is counted against it). */
export function matchEndpoint(ex: Exchange, req: IncomingMessage): StageResult<EndpointMatch> {
  const rawUrl = req.url ?? '';
  const q = rawUrl.indexOf('?');
  const path = q >= 0 ? rawUrl.slice(0, q) : rawUrl;
  // GET /v1/models/{id} (openai-node's models.retrieve; an id with a slash may come encoded or not).
  if (path.includes('%') && !isValidPercentEncoding(path)) {
    return fail(wire(400, 'invalid_path', 'the request path holds a malformed percent-escape', { headers: { 'x-should-retry': 'false' } }));
  }
  const modelId = path.startsWith(MODEL_PREFIX) && path.length > MODEL_PREFIX.length ? safeDecode(path.slice(MODEL_PREFIX.length)) : null;
  const rule = modelId !== null ? ENDPOINTS.get(ENDPOINT_PATH.models) : ENDPOINTS.get(path);
  if (!rule) return fail(wire(404, 'not_found', `no endpoint ${req.method ?? ''} ${path.slice(0, 200)}`));
  ex.endpoint = rule.endpoint;
  if (req.method !== rule.method) {
    return fail(wire(405, 'method_not_allowed', `${path} takes ${rule.method}`, { headers: { allow: rule.method } }));
  }
  return ok({ endpoint: rule.endpoint, path, modelId });
}

/** A path segment, percent-decoded; null when it is not valid percent-encoding or holds a NUL. */
function safeDecode(segment: string): string | null {
  try {
    const s = decodeURIComponent(segment);
    return s.length > 0 && s.length <= 256 && !s.includes('\0') ? s : null;
  } catch {
    return null;
  }
}

/** Every `%` starts two hex digits and the bytes they spell are UTF-8. */
function isValidPercentEncoding(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
