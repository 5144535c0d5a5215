import { AppError } from '../base/index.js';
import { SecretsErrorCode } from './errors.js';

/** Secret names are ids like `ssh.passphrase.l20-poc` or `upstream.apikey.qwen`, never values. */
export function checkKey(key: string): void {
  if (!/^[a-z][a-z0-9._-]{0,127}$/i.test(key)) {
    throw new AppError(SecretsErrorCode.INVALID_KEY, 'a secret name must be 1–128 letters, digits, dots, dashes or underscores');
  }
}
