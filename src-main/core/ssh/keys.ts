import { createPrivateKey, randomBytes, type KeyObject } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';
import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';

/**
 * Reads and checks a private key file before any connection is made, so that a
 * bad path, a broken file or a missing/wrong passphrase is a coded error the
 * operator can act on, not a throw from inside ssh2. Accepts ed25519, ECDSA and
 * RSA in OpenSSH form and in PEM: PKCS#1 / SEC1 as ssh2 reads them, and PKCS#8
 * (`BEGIN PRIVATE KEY`, also encrypted), which ssh2 cannot read and which is
 * converted here first. The key bytes and the passphrase are never logged and
 * never put in an error.
 */
export async function loadPrivateKey(path: string, passphrase?: string): Promise<Buffer> {
  return (await loadKeyFile(path, passphrase)).data;
}

/**
 * The most a key or certificate file may hold. The largest key ssh-keygen makes (RSA 16384 bits) is about
 * 12.5 KiB in OpenSSH form, a certificate with many principals a few KiB; 64 KiB is far above any real one
 * and still nothing to read, so a wrong path (/dev/zero, a log file) is refused instead of filling memory.
 */
export const MAX_KEY_FILE_BYTES = 64 * 1024;

function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a folder';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a plain file';
}

function checkKeyStats(st: Stats, path: string, what: string): void {
  if (!st.isFile()) {
    const kind = kindOf(st);
    throw new AppError(SshErrorCode.KEY_NOT_A_FILE, `${what} ${path} is not a regular file (${kind})`, { details: { path, reason: `not a regular file: ${kind}` } });
  }
  if (st.size > MAX_KEY_FILE_BYTES) tooLarge(path, what);
}

function tooLarge(path: string, what: string): never {
  throw new AppError(SshErrorCode.KEY_TOO_LARGE, `${what} ${path} is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB: no key is that large`, {
    details: { path, reason: `larger than ${MAX_KEY_FILE_BYTES} bytes` },
  });
}

function unreadable(err: unknown, path: string, what: string): AppError {
  const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
  return new AppError(SshErrorCode.KEY_UNREADABLE, `cannot read ${what} ${path} (${code})`, { details: { path, reason: code }, cause: err });
}

/**
 * Checks, without reading it, that `path` (or the file a symlink there points to) is a regular file no
 * larger than MAX_KEY_FILE_BYTES: for files another program reads (a certificate ssh-keygen lists).
 */
export async function checkKeyFile(path: string, what = 'private key'): Promise<void> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (err) {
    throw unreadable(err, path, what);
  }
  checkKeyStats(st, path, what);
}

/**
 * Reads a key file the operator named, once checkKeyFile passes. It is opened non-blocking, so a FIFO
 * swapped in after the check cannot block the console, checked again on the open descriptor, and read
 * no further than the cap, so a file that grows meanwhile is still refused.
 */
export async function readKeyFile(path: string, what = 'private key'): Promise<Buffer> {
  await checkKeyFile(path, what);
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    throw unreadable(err, path, what);
  }
  try {
    checkKeyStats(await fh.stat(), path, what);
    const buf = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, total, buf.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > MAX_KEY_FILE_BYTES) tooLarge(path, what);
    }
    return buf.subarray(0, total);
  } catch (err) {
    throw err instanceof AppError ? err : unreadable(err, path, what);
  } finally {
    await fh.close();
  }
}

/** The file's bytes and the parsed key (ssh2 takes the parsed key as-is, so an encrypted key is decrypted once). */
export async function loadKeyFile(path: string, passphrase?: string): Promise<{ data: Buffer; key: ParsedKey }> {
  let data = await readKeyFile(path);
  if (PKCS8.test(data.toString('latin1', 0, 64))) data = pkcs8ToSsh2(data, path, passphrase);
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

const PKCS8 = /-----BEGIN (ENCRYPTED )?PRIVATE KEY-----/;

/**
 * A PKCS#8 PEM key re-encoded in a form ssh2 reads, unencrypted and in memory
 * only: RSA as PKCS#1, ECDSA as SEC1, ed25519 as an OpenSSH key.
 */
function pkcs8ToSsh2(data: Buffer, path: string, passphrase: string | undefined): Buffer {
  if (!passphrase && /-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(data.toString('latin1', 0, 64))) {
    throw new AppError(SshErrorCode.PASSPHRASE_REQUIRED, `private key ${path} is encrypted and needs a passphrase`, { details: { path } });
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: data, format: 'pem', ...(passphrase !== undefined ? { passphrase } : {}) });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (passphrase) throw new AppError(SshErrorCode.PASSPHRASE_INCORRECT, `the passphrase for private key ${path} is not correct`, { details: { path } });
    throw new AppError(SshErrorCode.KEY_UNREADABLE, `private key ${path} could not be parsed: ${(err as Error).message}`, { details: { path, reason: code || 'PKCS#8' } });
  }
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return Buffer.from(key.export({ type: 'pkcs1', format: 'pem' }));
    case 'ec':
      return Buffer.from(key.export({ type: 'sec1', format: 'pem' }));
    case 'ed25519':
      return opensshEd25519(key);
    default:
      throw new AppError(SshErrorCode.KEY_UNREADABLE, `private key ${path} is a ${key.asymmetricKeyType ?? 'unknown'} key; use ed25519, ECDSA or RSA`, {
        details: { path, reason: `unsupported key type ${key.asymmetricKeyType ?? 'unknown'}` },
      });
  }
}

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const str = (v: Buffer | string): Buffer => {
  const b = typeof v === 'string' ? Buffer.from(v) : v;
  return Buffer.concat([u32(b.length), b]);
};

/** An unencrypted `openssh-key-v1` file for an ed25519 KeyObject (PROTOCOL.key). */
function opensshEd25519(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d!, 'base64url');
  const pub = Buffer.from(jwk.x!, 'base64url');
  const publicBlob = Buffer.concat([str('ssh-ed25519'), str(pub)]);
  const check = randomBytes(4);
  let priv = Buffer.concat([check, check, str('ssh-ed25519'), str(pub), str(Buffer.concat([seed, pub])), str('')]);
  const pad: number[] = [];
  for (let i = 1; (priv.length + pad.length) % 8 !== 0; i++) pad.push(i);
  priv = Buffer.concat([priv, Buffer.from(pad)]);
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0', 'latin1'), str('none'), str('none'), str(''), u32(1), str(publicBlob), str(priv)]);
  const lines = body.toString('base64').match(/.{1,70}/g) ?? [];
  return Buffer.from(`-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`);
}
