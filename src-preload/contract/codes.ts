/** Codes the bridges themselves produce; capabilities add their own prefixes. */
export const BridgeErrorCode = {
  UNKNOWN_CHANNEL: 'CONTRACT_UNKNOWN_CHANNEL',
  INVALID_INPUT: 'CONTRACT_INVALID_INPUT',
  INVALID_OUTPUT: 'CONTRACT_INVALID_OUTPUT',
  UNAUTHORIZED: 'BRIDGE_UNAUTHORIZED',
  FORBIDDEN_HOST: 'BRIDGE_FORBIDDEN_HOST',
  FORBIDDEN_SENDER: 'BRIDGE_FORBIDDEN_SENDER',
  BAD_REQUEST: 'BRIDGE_BAD_REQUEST',
  /** A path with a malformed percent-escape. */
  INVALID_PATH: 'BRIDGE_INVALID_PATH',
  TRANSPORT: 'BRIDGE_TRANSPORT_FAILED',
  /** A resync named an event stream the bridge does not have (closed, or never opened). */
  UNKNOWN_STREAM: 'BRIDGE_UNKNOWN_STREAM',
  /** The caller aborted the call before its answer (its signal); the core stops at its next step. */
  CANCELLED: 'BRIDGE_CANCELLED',
  INTERNAL: 'INTERNAL_ERROR',
} as const;
