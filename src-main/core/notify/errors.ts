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
  /** `channel.secretRef` names a secret that is not this channel's own (another channel's, or another capability's). */
  SECRET_REF_FORBIDDEN: 'NOTIFY_SECRET_REF_FORBIDDEN',
  /** The kind or the URL's origin changed: the stored secret was given for the old destination, so it must be given again. */
  SECRET_DESTINATION_CHANGED: 'NOTIFY_SECRET_DESTINATION_CHANGED',
  /** A console channel's URL (or an address its host resolves to) is loopback, link-local, unspecified or a metadata address. */
  DESTINATION_REFUSED: 'NOTIFY_DESTINATION_REFUSED',
  /** A queued notice's channel was edited or removed before it went out: it is not sent with the new secret to the old URL. */
  CHANNEL_CHANGED: 'NOTIFY_CHANNEL_CHANGED',
} as const;
export type NotifyErrorCode = (typeof NotifyErrorCode)[keyof typeof NotifyErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    notify: NotifyErrorCode;
  }
}
