// Stable codes of the logs capability. The renderer and the CLI match these,
// never a message; each message names the cause and the fix.

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
} as const;
export type LogsErrorCode = (typeof LogsErrorCode)[keyof typeof LogsErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    logs: LogsErrorCode;
  }
}
