import { AppError } from '../base/index.js';
import { SecretsErrorCode } from './errors.js';

/** Secret names are ids like `ssh.passphrase.l20-poc` or `upstream.apikey.qwen`, never values. */
export function checkKey(key: string): void {
  if (!/^[a-z][a-z0-9._-]{0,127}$/i.test(key)) {
    throw new AppError(SecretsErrorCode.INVALID_KEY, 'a secret name must be 1–128 letters, digits, dots, dashes or underscores');
  }
}

/**
 * Names a capability keeps for itself: written and deleted only by that capability, never through the
 * secrets.* channels. A console notification channel's URL lives at `notify.<id>.url` (notify's urlKey):
 * whoever could rewrite it could send that channel's secret to a URL of their choosing.
 */
const INTERNAL_KEYS: readonly { pattern: RegExp; owner: string }[] = [
  { pattern: /^notify\.[^.]+\.url$/i, owner: "a notification channel's URL: change it in Notifications (notifications.saveChannel)" },
];

/** Refuses a name that belongs to a capability's own bookkeeping (SECRETS_NAME_RESERVED). */
export function checkWritableKey(key: string): void {
  const internal = INTERNAL_KEYS.find((k) => k.pattern.test(key));
  if (internal) {
    throw new AppError(SecretsErrorCode.NAME_RESERVED, `name: ${key} is kept by the console itself (${internal.owner})`, { details: { field: 'name', name: key } });
  }
}
