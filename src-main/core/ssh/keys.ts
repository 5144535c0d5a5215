import { readFile } from 'node:fs/promises';
import ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';
import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';

/**
 * Reads and checks a private key file before any connection is made, so that a
 * bad path, a broken file or a missing/wrong passphrase is a coded error the
 * operator can act on, not a throw from inside ssh2. Accepts what ssh2 reads:
 * ed25519, ECDSA and RSA in OpenSSH or PEM (PKCS#1/PKCS#8) form. The key bytes
 * and the passphrase are never logged and never put in an error.
 */
export async function loadPrivateKey(path: string, passphrase?: string): Promise<Buffer> {
  return (await loadKeyFile(path, passphrase)).data;
}

/** The file's bytes and the parsed key (ssh2 takes the parsed key as-is, so an encrypted key is decrypted once). */
export async function loadKeyFile(path: string, passphrase?: string): Promise<{ data: Buffer; key: ParsedKey }> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new AppError(SshErrorCode.KEY_UNREADABLE, `cannot read private key ${path} (${code})`, {
      details: { path, reason: code },
      cause: err,
    });
  }
  const parsed = ssh2.utils.parseKey(data, passphrase);
  if (parsed instanceof Error) {
    if (/passphrase/i.test(parsed.message) && !passphrase) {
      throw new AppError(SshErrorCode.PASSPHRASE_REQUIRED, `private key ${path} is encrypted and needs a passphrase`, {
        details: { path },
      });
    }
    if (passphrase && /passphrase|decrypt|integrity|malformed/i.test(parsed.message)) {
      throw new AppError(SshErrorCode.PASSPHRASE_INCORRECT, `the passphrase for private key ${path} is not correct`, {
        details: { path },
      });
    }
    throw new AppError(SshErrorCode.KEY_UNREADABLE, `private key ${path} could not be parsed: ${parsed.message}`, {
      details: { path, reason: parsed.message },
    });
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || !key.isPrivateKey()) {
    throw new AppError(SshErrorCode.KEY_UNREADABLE, `${path} holds no private key`, {
      details: { path, reason: 'no private key in file' },
    });
  }
  return { data, key };
}
