// OpenSSH SSHSIG signatures (openssh PROTOCOL.sshsig), made and checked in
// process so that an export can be signed and verified without ssh-keygen, and
// `ssh-keygen -Y verify` accepts what we write. Keys: ed25519, ECDSA
// (nistp256/384/521) and RSA (signed with rsa-sha2-512), OpenSSH or PEM form.
//
// Wire format (all strings are uint32-length-prefixed):
//   blob   = "SSHSIG" ‖ uint32 1 ‖ string publickey ‖ string namespace ‖ string reserved
//            ‖ string hash_algorithm ‖ string signature
//   signed = "SSHSIG" ‖ string namespace ‖ string reserved ‖ string hash_algorithm ‖ string H(message)
//   signature = string algorithm ‖ string bytes   (ECDSA bytes: string(mpint r ‖ mpint s))

import { createHash, createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { AppError, assert, isAppError } from '../base/index.js';
import ssh2, { type ParsedKey } from 'ssh2';
import { loadKeyFile, sha256Fingerprint, SshErrorCode } from '../ssh/index.js';
import { ReportErrorCode } from './errors.js';
import { checkSigningKeyComment, checkSigningKeyFile, consoleUser, type SigningKeyOwner } from './signing-key.js';

export interface SshSigner {
  /** `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, … */
  keyType: string;
  /** `ssh-ed25519 AAAA…` (no comment), as in a .pub file or allowed_signers. */
  publicKeyLine: string;
  /** `SHA256:…` as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** Armored `-----BEGIN SSH SIGNATURE-----` text, as `ssh-keygen -Y sign` writes it (an agent answers asynchronously). */
  sign(message: Buffer, namespace: string): string | Promise<string>;
}

/** A signer holding the private key in this process: signs synchronously. */
export interface FileSigner extends SshSigner {
  sign(message: Buffer, namespace: string): string;
}

export type SshsigVerifyResult = { ok: true; publicKeyLine: string; fingerprint: string } | { ok: false; reason: string };

const MAGIC = Buffer.from('SSHSIG', 'latin1');
const SIG_VERSION = 1;
const ARMOR_BEGIN = '-----BEGIN SSH SIGNATURE-----';
const ARMOR_END = '-----END SSH SIGNATURE-----';
const ARMOR_LINE = 70;
const SIGN_HASH = 'sha512';
const HASH_ALGORITHMS = new Set(['sha256', 'sha512']);
/** OpenSSH refuses smaller RSA keys (SSH_RSA_MINIMUM_MODULUS_SIZE). */
const RSA_MIN_BITS = 1024;

const CURVES = {
  'ecdsa-sha2-nistp256': { curve: 'nistp256', jwk: 'P-256', hash: 'sha256', size: 32 },
  'ecdsa-sha2-nistp384': { curve: 'nistp384', jwk: 'P-384', hash: 'sha384', size: 48 },
  'ecdsa-sha2-nistp521': { curve: 'nistp521', jwk: 'P-521', hash: 'sha512', size: 66 },
} as const;
type EcdsaType = keyof typeof CURVES;
const isEcdsaType = (t: string): t is EcdsaType => Object.hasOwn(CURVES, t);

// ── signing ──────────────────────────────────────────────────────────────

/**
 * Reads a private key for signing. Errors name the file, never the passphrase
 * or key bytes: SIGNING_KEY_REFUSED (a host key, another user's, readable by
 * others: checked before a byte is read), SIGNING_KEY_UNREADABLE (also a FIFO,
 * a device, over 64 KiB), SIGNING_KEY_ENCRYPTED (no passphrase given),
 * SIGNING_KEY_PASSPHRASE_INCORRECT, SIGNING_KEY_UNSUPPORTED (DSA).
 */
export async function loadSigner(keyFile: string, passphrase?: string, owner: SigningKeyOwner = consoleUser()): Promise<FileSigner> {
  await checkSigningKeyFile(keyFile, owner);
  let parsed;
  try {
    parsed = (await loadKeyFile(keyFile, passphrase)).key;
  } catch (err) {
    throw signingKeyError(err, keyFile);
  }
  checkSigningKeyComment(keyFile, parsed.comment);
  const keyType = parsed.type;
  if (keyType !== 'ssh-ed25519' && keyType !== 'ssh-rsa' && !isEcdsaType(keyType)) {
    throw new AppError(ReportErrorCode.SIGNING_KEY_UNSUPPORTED, `signing key ${keyFile} is a ${keyType} key; use ed25519, ECDSA or RSA`, {
      details: { path: keyFile, keyType },
    });
  }
  const pem = parsed.getPrivatePEM();
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (err) {
    throw new AppError(ReportErrorCode.SIGNING_KEY_UNREADABLE, `signing key ${keyFile} could not be loaded for signing`, {
      details: { path: keyFile },
      cause: err,
    });
  }
  const publicBlob = parsed.getPublicSSH();
  return {
    keyType,
    publicKeyLine: `${keyType} ${publicBlob.toString('base64')}`,
    fingerprint: sha256Fingerprint(publicBlob),
    sign(message: Buffer, namespace: string): string {
      assert(namespace.length > 0, 'an SSHSIG namespace must not be empty');
      const signed = signedData(namespace, SIGN_HASH, createHash(SIGN_HASH).update(message).digest());
      return armoredSignature(publicBlob, namespace, sshSignature(keyType, privateKey, signed));
    },
  };
}

function armoredSignature(publicBlob: Buffer, namespace: string, signature: Buffer): string {
  return armor(Buffer.concat([MAGIC, uint32(SIG_VERSION), sshString(publicBlob), sshString(namespace), sshString(''), sshString(SIGN_HASH), sshString(signature)]));
}

/**
 * A signer whose key stays in ssh-agent (keys loaded with `ssh-add`, hardware
 * keys): the console never sees the private key or its passphrase. `choose`
 * picks a key by `SHA256:` fingerprint or by a word of its comment; without it
 * the agent's first ed25519, ECDSA or RSA key is used. Errors:
 * SIGNING_AGENT_UNAVAILABLE (no socket, or it does not answer), SIGNING_KEY_NOT_IN_AGENT.
 */
export async function agentSigner(socketPath: string | undefined, choose?: string): Promise<SshSigner> {
  if (!socketPath) {
    throw new AppError(ReportErrorCode.SIGNING_AGENT_UNAVAILABLE, 'no ssh-agent: SSH_AUTH_SOCK is not set for the console; start it from a shell with an agent, or sign with a key file');
  }
  const agent = new ssh2.OpenSSHAgent(socketPath);
  const keys = await new Promise<ParsedKey[]>((resolve, reject) => {
    agent.getIdentities((err, found) => (err ? reject(err) : resolve((found ?? []).filter((k): k is ParsedKey => typeof (k as ParsedKey).getPublicSSH === 'function'))));
  }).catch((err: unknown) => {
    throw new AppError(ReportErrorCode.SIGNING_AGENT_UNAVAILABLE, `the ssh-agent at ${socketPath} did not answer: ${(err as Error).message}`, { details: { socket: socketPath }, cause: err });
  });
  const usable = keys.filter((k) => k.type === 'ssh-ed25519' || k.type === 'ssh-rsa' || isEcdsaType(k.type));
  const fingerprintOf = (k: ParsedKey) => sha256Fingerprint(k.getPublicSSH());
  const key = choose
    ? usable.find((k) => fingerprintOf(k) === choose || (k.comment !== '' && k.comment.includes(choose)))
    : usable[0];
  if (!key) {
    const listed = usable.map((k) => `${fingerprintOf(k)}${k.comment ? ` (${k.comment})` : ''}`).join(', ') || 'none';
    throw new AppError(
      ReportErrorCode.SIGNING_KEY_NOT_IN_AGENT,
      choose ? `the ssh-agent holds no key matching "${choose}" (it holds: ${listed})` : 'the ssh-agent holds no ed25519, ECDSA or RSA key (add one with ssh-add)',
      { details: { socket: socketPath, keys: usable.map(fingerprintOf) } },
    );
  }
  const keyType = key.type;
  const publicBlob = key.getPublicSSH();
  return {
    keyType,
    publicKeyLine: `${keyType} ${publicBlob.toString('base64')}`,
    fingerprint: fingerprintOf(key),
    sign(message: Buffer, namespace: string): Promise<string> {
      assert(namespace.length > 0, 'an SSHSIG namespace must not be empty');
      const signed = signedData(namespace, SIGN_HASH, createHash(SIGN_HASH).update(message).digest());
      return new Promise<string>((resolve, reject) => {
        // ssh2 returns the signature bytes with the algorithm name stripped; put it back (RSA was asked for SHA-512).
        agent.sign(key, signed, { hash: 'sha512' }, (err, bytes) => {
          if (err || !bytes) {
            reject(new AppError(ReportErrorCode.SIGNING_AGENT_UNAVAILABLE, `the ssh-agent refused to sign: ${err?.message ?? 'no signature'}`, { cause: err }));
            return;
          }
          const algorithm = keyType === 'ssh-rsa' ? 'rsa-sha2-512' : keyType;
          resolve(armoredSignature(publicBlob, namespace, Buffer.concat([sshString(algorithm), sshString(bytes)])));
        });
      });
    },
  };
}

function signingKeyError(err: unknown, keyFile: string): AppError {
  const code = isAppError(err) ? err.code : undefined;
  const reason = isAppError(err) && typeof err.details['reason'] === 'string' ? err.details['reason'] : undefined;
  if (code === SshErrorCode.PASSPHRASE_REQUIRED) {
    return new AppError(ReportErrorCode.SIGNING_KEY_ENCRYPTED, `signing key ${keyFile} is encrypted; give its passphrase`, {
      details: { path: keyFile },
      cause: err,
    });
  }
  if (code === SshErrorCode.PASSPHRASE_INCORRECT) {
    return new AppError(ReportErrorCode.SIGNING_KEY_PASSPHRASE_INCORRECT, `the passphrase for signing key ${keyFile} is not correct`, {
      details: { path: keyFile },
      cause: err,
    });
  }
  return new AppError(
    ReportErrorCode.SIGNING_KEY_UNREADABLE,
    `signing key ${keyFile} cannot be read${reason ? ` (${reason})` : ''}`,
    { details: reason ? { path: keyFile, reason } : { path: keyFile }, cause: err },
  );
}

/** The SSH signature encoding (string algorithm ‖ string bytes) of `data`. */
function sshSignature(keyType: string, key: KeyObject, data: Buffer): Buffer {
  if (keyType === 'ssh-ed25519') {
    return Buffer.concat([sshString('ssh-ed25519'), sshString(cryptoSign(null, data, key))]);
  }
  if (keyType === 'ssh-rsa') {
    return Buffer.concat([sshString('rsa-sha2-512'), sshString(cryptoSign('sha512', data, key))]);
  }
  assert(isEcdsaType(keyType), `no signer for ${keyType}`);
  const { hash, size } = CURVES[keyType];
  // ieee-p1363 gives r ‖ s at fixed width; SSH wants them as two mpints.
  const rs = cryptoSign(hash, data, { key, dsaEncoding: 'ieee-p1363' });
  const inner = Buffer.concat([sshMpint(rs.subarray(0, size)), sshMpint(rs.subarray(size))]);
  return Buffer.concat([sshString(keyType), sshString(inner)]);
}

// ── verifying ────────────────────────────────────────────────────────────

/**
 * Checks an armored SSHSIG over `message` for `namespace` with the public key
 * the signature carries. Says nothing about whether that key is trusted: check
 * it against allowed_signers (findAllowedSigner). Never throws.
 */
export function verifySshsig(message: Buffer, armored: string, namespace: string): SshsigVerifyResult {
  try {
    const blob = dearmor(armored);
    if (typeof blob === 'string') return { ok: false, reason: blob };
    const r = new SshReader(blob);
    if (!r.raw(MAGIC.length).equals(MAGIC)) return { ok: false, reason: 'not an SSHSIG signature (bad magic)' };
    const version = r.uint32();
    if (version !== SIG_VERSION) return { ok: false, reason: `unsupported SSHSIG version ${version}` };
    const publicBlob = r.string();
    const sigNamespace = r.string().toString('utf8');
    r.string(); // reserved: not part of what is signed (OpenSSH signs an empty one)
    const hashAlg = r.string().toString('utf8');
    const signature = r.string();
    if (!r.done()) return { ok: false, reason: 'trailing bytes after the signature' };
    if (sigNamespace !== namespace) return { ok: false, reason: `signature namespace is "${sigNamespace}", expected "${namespace}"` };
    if (!HASH_ALGORITHMS.has(hashAlg)) return { ok: false, reason: `unsupported hash algorithm "${hashAlg}"` };

    const key = parsePublicBlob(publicBlob);
    if (typeof key === 'string') return { ok: false, reason: key };
    const digest = createHash(hashAlg).update(message).digest();
    const problem = checkSignature(key, signature, signedData(namespace, hashAlg, digest));
    if (problem) return { ok: false, reason: problem };
    return { ok: true, publicKeyLine: `${key.type} ${publicBlob.toString('base64')}`, fingerprint: sha256Fingerprint(publicBlob) };
  } catch (err) {
    if (err instanceof MalformedError) return { ok: false, reason: `malformed signature: ${err.message}` };
    return { ok: false, reason: `signature check failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

interface PublicKey {
  type: string;
  key: KeyObject;
}

/** The public key of an SSH key blob, or why it cannot be used. */
function parsePublicBlob(blob: Buffer): PublicKey | string {
  const r = new SshReader(blob);
  const type = r.string().toString('latin1');
  let jwk: Record<string, string>;
  if (type === 'ssh-ed25519') {
    const pk = r.string();
    if (pk.length !== 32) return 'malformed ed25519 public key';
    jwk = { kty: 'OKP', crv: 'Ed25519', x: pk.toString('base64url') };
  } else if (isEcdsaType(type)) {
    const { curve, jwk: crv, size } = CURVES[type];
    if (r.string().toString('latin1') !== curve) return `public key curve does not match ${type}`;
    const point = r.string();
    if (point.length !== 1 + 2 * size || point[0] !== 0x04) return `malformed ${type} public key point`;
    jwk = {
      kty: 'EC',
      crv,
      x: point.subarray(1, 1 + size).toString('base64url'),
      y: point.subarray(1 + size).toString('base64url'),
    };
  } else if (type === 'ssh-rsa') {
    const e = stripZeros(r.string());
    const n = stripZeros(r.string());
    if (n.length * 8 < RSA_MIN_BITS) return `RSA key of ${n.length * 8} bits is too small`;
    jwk = { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') };
  } else {
    return `unsupported public key type "${type}"`;
  }
  if (!r.done()) return 'trailing bytes after the public key';
  return { type, key: createPublicKey({ key: jwk, format: 'jwk' }) };
}

/** Null when `signature` (SSH encoding) is a valid signature of `data` by `pub`, else why not. */
function checkSignature(pub: PublicKey, signature: Buffer, data: Buffer): string | null {
  const r = new SshReader(signature);
  const alg = r.string().toString('latin1');
  const bytes = r.string();
  if (!r.done()) return 'trailing bytes after the signature value';
  let good: boolean;
  if (pub.type === 'ssh-ed25519') {
    if (alg !== 'ssh-ed25519') return `signature algorithm ${alg} does not fit an ssh-ed25519 key`;
    if (bytes.length !== 64) return 'malformed ed25519 signature';
    good = cryptoVerify(null, data, pub.key, bytes);
  } else if (pub.type === 'ssh-rsa') {
    // OpenSSH refuses SHA-1 (`ssh-rsa`) signatures in SSHSIG.
    const hash = alg === 'rsa-sha2-512' ? 'sha512' : alg === 'rsa-sha2-256' ? 'sha256' : null;
    if (!hash) return `signature algorithm ${alg} is not allowed for an RSA key (rsa-sha2-256 or rsa-sha2-512)`;
    good = cryptoVerify(hash, data, pub.key, bytes);
  } else if (isEcdsaType(pub.type)) {
    if (alg !== pub.type) return `signature algorithm ${alg} does not fit an ${pub.type} key`;
    const { hash, size } = CURVES[pub.type];
    const inner = new SshReader(bytes);
    const rVal = fixedWidth(inner.mpint(), size);
    const sVal = fixedWidth(inner.mpint(), size);
    if (!inner.done() || !rVal || !sVal) return 'malformed ECDSA signature';
    good = cryptoVerify(hash, data, { key: pub.key, dsaEncoding: 'ieee-p1363' }, Buffer.concat([rVal, sVal]));
  } else {
    return `unsupported public key type "${pub.type}"`;
  }
  return good ? null : 'the signature does not match the message and key';
}

// ── wire helpers ─────────────────────────────────────────────────────────

class MalformedError extends Error {}

class SshReader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}

  raw(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw new MalformedError('truncated');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  uint32(): number {
    return this.raw(4).readUInt32BE(0);
  }

  string(): Buffer {
    return this.raw(this.uint32());
  }

  /** A non-negative mpint as its unsigned big-endian bytes. */
  mpint(): Buffer {
    const b = this.string();
    if (b.length > 0 && (b[0]! & 0x80) !== 0) throw new MalformedError('negative mpint');
    return stripZeros(b);
  }

  done(): boolean {
    return this.pos === this.buf.length;
  }
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

function sshString(value: Buffer | string): Buffer {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([uint32(b.length), b]);
}

/** mpint of an unsigned big-endian integer: no leading zeros, one 0x00 when the top bit is set. */
function sshMpint(unsigned: Buffer): Buffer {
  const v = stripZeros(unsigned);
  return sshString(v.length > 0 && (v[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function stripZeros(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

function fixedWidth(b: Buffer, size: number): Buffer | null {
  if (b.length > size) return null;
  return Buffer.concat([Buffer.alloc(size - b.length), b]);
}

function signedData(namespace: string, hashAlg: string, digest: Buffer): Buffer {
  return Buffer.concat([MAGIC, sshString(namespace), sshString(''), sshString(hashAlg), sshString(digest)]);
}

function armor(blob: Buffer): string {
  const b64 = blob.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += ARMOR_LINE) lines.push(b64.slice(i, i + ARMOR_LINE));
  return `${ARMOR_BEGIN}\n${lines.join('\n')}\n${ARMOR_END}\n`;
}

/** The blob inside the armor, or why there is none. */
function dearmor(text: string): Buffer | string {
  const begin = text.indexOf(ARMOR_BEGIN);
  const end = text.indexOf(ARMOR_END);
  if (begin < 0 || end < begin) return 'not an armored SSH signature (BEGIN/END SSH SIGNATURE lines missing)';
  const body = text.slice(begin + ARMOR_BEGIN.length, end).replace(/\s+/g, '');
  if (!body || !/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) return 'the armored signature is not valid base64';
  return Buffer.from(body, 'base64');
}
