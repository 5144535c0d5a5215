import { createHash } from 'node:crypto';

/** `SHA256:<base64 without padding>` of the public key blob, exactly as `ssh-keygen -l` prints it. */
export function sha256Fingerprint(keyBlob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '');
}

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;

export function isSha256Fingerprint(value: string): boolean {
  return FINGERPRINT.test(value);
}
