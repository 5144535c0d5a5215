// upstream: how the console calls model servers. One UpstreamClient per
// service endpoint (made by the fleet when a tunnel opens, handed out by its
// UpstreamKey) or per configured URL: one keep-alive rule, one stale-connection
// retry, deadlines, body caps, the on-prem guard and one error classifier.
export { upstreamKey, splitUpstreamKey, type UpstreamKey } from './key.js';
export { UpstreamErrorCode } from './errors.js';
export { classifyUpstreamError, upstreamCodeOf, type ClassifyContext } from './classify.js';
export {
  UpstreamClient,
  type UpstreamAnswer,
  type UpstreamCall,
  type UpstreamClientOptions,
  type UpstreamEndpoint,
  type UpstreamStream,
  type UpstreamTextCall,
} from './client.js';
export { KEEP_ALIVE_MS, MAX_CONNECTIONS_PER_ENDPOINT, MAX_REQUESTS_PER_CONNECTION, bytesReadBefore, isConnectionClosed, isStaleConnectionFailure } from './dispatch.js';
