// Stable codes of the proxy capability. `ProxyErrorCode` is for the console's
// own calls (contract, CLI); `WireCode` is the `error.code` a client of the
// OpenAI-compatible endpoint sees in the body, in OpenAI's lower_snake style.
import type { TokenLimitErrorCode } from '../../../src-preload/contract/index.js';

export const ProxyErrorCode = {
  UNKNOWN_UPSTREAM: 'PROXY_UNKNOWN_UPSTREAM',
  INVALID_CAPS: 'PROXY_INVALID_CAPS',
  TOKEN_NAME_TAKEN: 'PROXY_TOKEN_NAME_TAKEN',
  UNKNOWN_TOKEN: 'PROXY_UNKNOWN_TOKEN',
  LISTEN_FAILED: 'PROXY_LISTEN_FAILED',
  QUEUE_FULL: 'PROXY_QUEUE_FULL',
  HOLD_TIMEOUT: 'PROXY_HOLD_TIMEOUT',
  DRAINING: 'PROXY_DRAINING',
  CANCELLED: 'PROXY_CANCELLED',
  NOT_RUNNING: 'PROXY_NOT_RUNNING',
  /** No captured request with that id (never captured, or deleted by the capture retention). */
  CAPTURE_NOT_FOUND: 'PROXY_CAPTURE_NOT_FOUND',
} as const;
export type ProxyErrorCode = (typeof ProxyErrorCode)[keyof typeof ProxyErrorCode];

export type WireCode =
  | 'not_found'
  | 'forbidden_host'
  | 'missing_host'
  | 'invalid_path'
  | 'invalid_idempotency_key'
  | 'missing_model'
  | 'method_not_allowed'
  | 'model_not_found'
  | 'missing_token'
  | 'invalid_token'
  | 'token_revoked'
  | 'invalid_priority'
  | 'class_not_allowed'
  | 'unsupported_media_type'
  | 'invalid_json'
  | 'invalid_request'
  | 'body_too_large'
  | 'body_timeout'
  | 'queue_full'
  | 'hold_timeout'
  | 'upstream_draining'
  | 'proxy_shutting_down'
  | 'model_sleeping'
  | 'model_waking'
  | 'model_restarting'
  | 'tunnel_down'
  | 'host_awaiting_trust'
  | 'host_key_changed'
  | 'host_failed'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'upstream_reset'
  | 'upstream_key_unavailable'
  | 'upstream_off_prem'
  | 'idempotency_conflict'
  | 'client_closed'
  | 'internal_error'
  // per-client limits (client-limits.ts)
  | 'model_not_allowed'
  | 'rate_limit_rpm'
  | 'rate_limit_tpm'
  | 'token_expired'
  | 'budget_exhausted'
  | 'invalid_request_id'
  | 'invalid_traceparent'
  | 'max_tokens_over_ceiling';

/** OpenAI's `error.type` for each HTTP status family, so SDKs classify our errors as they do OpenAI's. */
export function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 402) return 'insufficient_quota';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export interface WireError {
  status: number;
  code: WireCode;
  message: string;
  param?: string | null;
  /** Seconds; sent as Retry-After, and as retry-after-ms. */
  retryAfterS?: number;
  headers?: Record<string, string>;
  /** Extra fields inside `error` (depth, eta…), for clients that read them. */
  extra?: Record<string, unknown>;
}

export function errorBody(e: WireError): string {
  return JSON.stringify({
    error: { message: e.message, type: errorType(e.status), param: e.param ?? null, code: e.code, ...(e.extra ?? {}) },
  });
}

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    proxy: ProxyErrorCode;
    /** proxy.createToken / proxy.setToken refusals (the contract's codes.ts). */
    proxyTokens: TokenLimitErrorCode;
  }
}
