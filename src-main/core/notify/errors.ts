// Stable codes of the notify capability (callers match the code, never the text).
export const NotifyErrorCode = {
  /** No channel with that id (config.yaml or the console's own). */
  CHANNEL_UNKNOWN: 'NOTIFY_CHANNEL_UNKNOWN',
  /** The channel is the operator's config.yaml's: change it there. */
  CHANNEL_READ_ONLY: 'NOTIFY_CHANNEL_READ_ONLY',
  /** The channel does not pass its schema; the message names the field. */
  CHANNEL_INVALID: 'NOTIFY_CHANNEL_INVALID',
  /** A channel that signs or authenticates has no secret given and none stored under its name. */
  SECRET_MISSING: 'NOTIFY_SECRET_MISSING',
} as const;
