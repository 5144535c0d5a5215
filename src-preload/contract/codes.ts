// Error codes that cross the contract and that the renderer or the CLI match
// (never as string literals: test/unit/architecture/error-codes.test.ts).
// Every other capability declares its codes in its own errors.ts in core.

/** Codes the bridges themselves produce; capabilities add their own prefixes. */
export const BridgeErrorCode = {
  UNKNOWN_CHANNEL: 'CONTRACT_UNKNOWN_CHANNEL',
  INVALID_INPUT: 'CONTRACT_INVALID_INPUT',
  INVALID_OUTPUT: 'CONTRACT_INVALID_OUTPUT',
  UNAUTHORIZED: 'BRIDGE_UNAUTHORIZED',
  FORBIDDEN_HOST: 'BRIDGE_FORBIDDEN_HOST',
  FORBIDDEN_SENDER: 'BRIDGE_FORBIDDEN_SENDER',
  BAD_REQUEST: 'BRIDGE_BAD_REQUEST',
  /** A web-bridge call whose body is over its size limit. */
  BODY_TOO_LARGE: 'BRIDGE_BODY_TOO_LARGE',
  /** The web client closed the connection before the answer (the call's signal aborts with it). */
  CLIENT_GONE: 'BRIDGE_CLIENT_GONE',
  /** A path the web bridge serves nothing at. */
  NOT_FOUND: 'BRIDGE_NOT_FOUND',
  /** A path with a malformed percent-escape. */
  INVALID_PATH: 'BRIDGE_INVALID_PATH',
  TRANSPORT: 'BRIDGE_TRANSPORT_FAILED',
  /** A resync named an event stream the bridge does not have (closed, or never opened). */
  UNKNOWN_STREAM: 'BRIDGE_UNKNOWN_STREAM',
  /** The caller aborted the call before its answer (its signal); the core stops at its next step. */
  CANCELLED: 'BRIDGE_CANCELLED',
  INTERNAL: 'INTERNAL_ERROR',
} as const;
export type BridgeErrorCode = (typeof BridgeErrorCode)[keyof typeof BridgeErrorCode];

/** Stable codes of the report capability; callers match the code, not the message. */
export const ReportErrorCode = {
  /** The output folder cannot be created or written (permissions, read-only disk, a file in the way). */
  OUTPUT_UNWRITABLE: 'REPORT_OUTPUT_UNWRITABLE',
  /** An output folder that does not exist, with missing parents outside the home and data folders: not created there. */
  OUTPUT_DIR_REFUSED: 'REPORT_OUTPUT_DIR_REFUSED',
  SIGNING_KEY_UNREADABLE: 'REPORT_SIGNING_KEY_UNREADABLE',
  SIGNING_KEY_ENCRYPTED: 'REPORT_SIGNING_KEY_ENCRYPTED',
  SIGNING_KEY_PASSPHRASE_INCORRECT: 'REPORT_SIGNING_KEY_PASSPHRASE_INCORRECT',
  SIGNING_KEY_UNSUPPORTED: 'REPORT_SIGNING_KEY_UNSUPPORTED',
  /** A key file that is not the operator's own signing key: a host or system key, another user's, or readable by others. */
  SIGNING_KEY_REFUSED: 'REPORT_SIGNING_KEY_REFUSED',
  /** No SSH_AUTH_SOCK, or the agent does not answer or refuses to sign. */
  SIGNING_AGENT_UNAVAILABLE: 'REPORT_SIGNING_AGENT_UNAVAILABLE',
  SIGNING_KEY_NOT_IN_AGENT: 'REPORT_SIGNING_KEY_NOT_IN_AGENT',
  /** A signer principal that cannot be written into allowed_signers (empty, quotes, commas, control characters). */
  SIGNER_PRINCIPAL_INVALID: 'REPORT_SIGNER_PRINCIPAL_INVALID',
  /** No PDF printer in this host (no Electron, no Chromium found). */
  PDF_UNAVAILABLE: 'REPORT_PDF_UNAVAILABLE',
  PDF_FAILED: 'REPORT_PDF_FAILED',
  /** A folder given to verify holds no manifest.json, or it does not parse. */
  MANIFEST_INVALID: 'REPORT_MANIFEST_INVALID',
  SIGNATURE_INVALID: 'REPORT_SIGNATURE_INVALID',
  UNKNOWN_HOST: 'REPORT_UNKNOWN_HOST',
  UNKNOWN_GATE: 'REPORT_UNKNOWN_GATE',
  EXPORT_RUNNING: 'REPORT_EXPORT_RUNNING',
  /** The caller went away or cancelled: the export stopped and left no folder. */
  CANCELLED: 'REPORT_CANCELLED',
} as const;
export type ReportErrorCode = (typeof ReportErrorCode)[keyof typeof ReportErrorCode];

/** Stable codes of the logs capability (core/logs); the renderer and the CLI match these, never a message. */
export const LogsErrorCode = {
  /** The service names no log source and none follows from its lifecycle block (systemdUnit, compose). */
  NOT_CONFIGURED: 'LOGS_NOT_CONFIGURED',
  /** The source is not there: a file that does not exist, a container or compose service the host does not know. */
  SOURCE_MISSING: 'LOGS_SOURCE_MISSING',
  /** The SSH user may not read it: journalctl without the systemd-journal group, docker without the docker group, a file's mode. */
  NOT_PERMITTED: 'LOGS_NOT_PERMITTED',
  /** The tool the source needs (journalctl, docker, tail) is not on the host. */
  TOOL_MISSING: 'LOGS_TOOL_MISSING',
  /** The log command ended with a status the console does not know how to read. */
  COMMAND_FAILED: 'LOGS_COMMAND_FAILED',
  /** The SSH link went and the follow could not be resumed (the follow ends; a resumed one says so with a marker). */
  LINK_LOST: 'LOGS_LINK_LOST',
  /** A regex filter that does not compile (or is too long). */
  FILTER_INVALID: 'LOGS_FILTER_INVALID',
  /** More followers than the bound (per service, or in all). */
  TOO_MANY_FOLLOWERS: 'LOGS_TOO_MANY_FOLLOWERS',
  /** `since` asked of a source that carries no timestamps (a file, a command without `{since}`). */
  SINCE_UNSUPPORTED: 'LOGS_SINCE_UNSUPPORTED',
  /** Follow asked of a command source with no follow template. */
  FOLLOW_UNSUPPORTED: 'LOGS_FOLLOW_UNSUPPORTED',
  /** A follow id this console does not hold (ended, expired, or another start). */
  FOLLOW_UNKNOWN: 'LOGS_FOLLOW_UNKNOWN',
  /** A tail that took longer than its deadline. */
  TIMEOUT: 'LOGS_TIMEOUT',
  /** Marker code: lines dropped because a follower could not keep up (counted, never silent). */
  LINES_DROPPED: 'LOGS_LINES_DROPPED',
  /** Marker code: a follow that could not resume from its last line: lines of that span may be missing. */
  GAP: 'LOGS_GAP',
  /** Marker code, said by a reader: entries of a follow its event stream skipped while backed up (counted from the batches' indexes). */
  STREAM_BACKED_UP: 'LOGS_STREAM_BACKED_UP',
} as const;
export type LogsErrorCode = (typeof LogsErrorCode)[keyof typeof LogsErrorCode];

/** Stable codes of the alerts capability (core/alerts); the renderer and the CLI match these, never a message. */
export const AlertsErrorCode = {
  /** An alert id the console does not hold open now (cleared, or never raised). */
  UNKNOWN_ALERT: 'ALERTS_UNKNOWN_ALERT',
  /** A silence id the console does not know, or one that has already ended. */
  UNKNOWN_SILENCE: 'ALERTS_UNKNOWN_SILENCE',
  /** A silence whose scope names a host, service or model the configuration does not have. */
  SILENCE_SCOPE_UNKNOWN: 'ALERTS_SILENCE_SCOPE_UNKNOWN',
  /** More silences in force than the bound. */
  TOO_MANY_SILENCES: 'ALERTS_TOO_MANY_SILENCES',
  /** The capability part asked for is not wired in this console (a test or CLI core without it). */
  NOT_AVAILABLE: 'ALERTS_NOT_AVAILABLE',
} as const;
export type AlertsErrorCode = (typeof AlertsErrorCode)[keyof typeof AlertsErrorCode];

/** Stable codes of the parallelism advisor (core/advisor); the renderer and the CLI match these, never a message. */
export const AdvisorErrorCode = {
  /** A recommendation id the advisor has not issued, or one already applied or rejected. */
  UNKNOWN_RECOMMENDATION: 'ADVISOR_UNKNOWN_RECOMMENDATION',
  /** The upstream's caps (or slots) changed since the recommendation was computed: it is dropped, never applied. */
  STALE: 'ADVISOR_STALE',
} as const;
export type AdvisorErrorCode = (typeof AdvisorErrorCode)[keyof typeof AdvisorErrorCode];

/** Stable codes of the playground (core/proxy/playground*.ts); the renderer matches these, never a message. */
export const PlaygroundErrorCode = {
  /** No model, alias or group of that name in the proxy's table. */
  UNKNOWN_MODEL: 'PLAYGROUND_UNKNOWN_MODEL',
  /** Every replica of the model (or of each model of the group) is asleep: refused at once, not held for a wake. */
  MODEL_SLEEPING: 'PLAYGROUND_MODEL_SLEEPING',
  /** The last turn is not the operator's, or it is blank. */
  EMPTY_PROMPT: 'PLAYGROUND_EMPTY_PROMPT',
  INVALID_MAX_TOKENS: 'PLAYGROUND_INVALID_MAX_TOKENS',
  INVALID_TEMPERATURE: 'PLAYGROUND_INVALID_TEMPERATURE',
  /** The proxy is not listening (it failed to start, or the console is stopping). */
  PROXY_NOT_RUNNING: 'PLAYGROUND_PROXY_NOT_RUNNING',
  /** The proxy could not be reached or its answer could not be read (not a refusal: those are answers). */
  PROXY_UNREACHABLE: 'PLAYGROUND_PROXY_UNREACHABLE',
  /** A run with this id is already in flight. */
  RUN_IN_FLIGHT: 'PLAYGROUND_RUN_IN_FLIGHT',
} as const;
export type PlaygroundErrorCode = (typeof PlaygroundErrorCode)[keyof typeof PlaygroundErrorCode];

/** Codes of proxy.createToken / proxy.setToken refusals (nothing is stored when one is raised). */
export const TokenLimitErrorCode = {
  /** The field is set by config `proxy.clients.<name>`; change it there. details.fields */
  FIELD_FROM_CONFIG: 'PROXY_TOKEN_FIELD_FROM_CONFIG',
  /** The allow-list names models, aliases or groups the proxy does not serve. details.unknown */
  UNKNOWN_MODELS: 'PROXY_TOKEN_UNKNOWN_MODELS',
  /** A budget where no host serving the token's models has a price: its spend could never be known. */
  BUDGET_UNPRICED: 'PROXY_TOKEN_BUDGET_UNPRICED',
  /** An expiry at or before now. */
  EXPIRY_PAST: 'PROXY_TOKEN_EXPIRY_PAST',
  /** A limit the CLI could not read (a duration, a number). */
  INVALID_LIMIT: 'PROXY_TOKEN_INVALID_LIMIT',
} as const;
export type TokenLimitErrorCode = (typeof TokenLimitErrorCode)[keyof typeof TokenLimitErrorCode];
