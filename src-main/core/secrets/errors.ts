export const SecretsErrorCode = {
  NOT_PERSISTENT: 'SECRETS_NOT_PERSISTENT',
  UNREADABLE: 'SECRETS_UNREADABLE',
  INSECURE_FILE: 'SECRETS_INSECURE_FILE',
  ENCRYPTION_FAILED: 'SECRETS_ENCRYPTION_FAILED',
  INVALID_KEY: 'SECRETS_INVALID_KEY',
  /** The name is one a capability keeps for itself (a notification channel's URL): not writable through secrets.*. */
  NAME_RESERVED: 'SECRETS_NAME_RESERVED',
} as const;
export type SecretsErrorCode = (typeof SecretsErrorCode)[keyof typeof SecretsErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    secrets: SecretsErrorCode;
  }
}
