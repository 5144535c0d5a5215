// The proxy capability: the local OpenAI-compatible endpoint on 127.0.0.1
// with client tokens, per-upstream priority pools, queue visibility, streaming
// pass-through, idempotency, request accounting and graceful drain.
export { ProxyServer, type ProxyServerOptions, type UpstreamResolver, type UpstreamAvailability, type DrainResult } from './server.js';
export { ModelRegistry, type UpstreamSpec, type ModelEntry } from './registry.js';
export { PriorityPool, defaultCaps, validateCaps, type PoolLimits, type PoolPolicy, type Lease, type QueueTicket } from './pool.js';
export { RequestLog, type RequestRecord, type RequestLogOptions } from './request-log.js';
export { requestWindows, type AnsweredRequestRow, type RequestWindows } from './request-window.js';
export { createTokenRepository, hashToken, TOKEN_PREFIX, VERSION_CHECK_MS, type TokenRepository, type TokenCheck } from './tokens.js';
export { ClientLimits, estimateTokens, type ClientSpend } from './client-limits.js';
export { TokenBucket } from './token-buckets.js';
export { ClientBudget, type ClientBudgetDeps } from './client-budget.js';
export { applyPatch, mergeLimits, limitsDiff } from './client-policy.js';
export {
  DEFAULT_IDEMPOTENCY_LIMITS,
  IdempotencyCache,
  MAX_STORED_BYTES,
  fingerprintOf,
  type IdempotencyLimits,
  type IdempotencyUsage,
  type StoredAnswer,
} from './idempotency.js';
export { SseRelay, usageFromBody, type Usage } from './sse.js';
export { ClassStats, percentile } from './stats.js';
export { CLASS_ORDER, CLASS_RANK, allows, isTrafficClass, parsePriorityHeader, type TrafficClass } from './classes.js';
export { ProxyErrorCode, errorBody, errorType, type WireCode, type WireError } from './errors.js';
export { ProxyService, type ProxyServiceDeps, type WakeEstimates } from './service.js';
export { proxyChannels } from './channels.js';
export { Captures, type CapturesDeps } from './captures.js';
export { captureChannels } from './capture-channels.js';
export { PlaygroundService, type PlaygroundDeps, type PlaygroundProxyPort } from './playground.js';
export { PlaygroundIdentity, PLAYGROUND_CLIENT } from './playground-identity.js';
export { playgroundChannels } from './playground-channels.js';
