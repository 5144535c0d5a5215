// SSHSIG signing and verification in process, with keys made here by
// node:crypto (no ssh-keygen): round trips per key type, tampering, namespace,
// hash algorithms, coded key errors, and allowed_signers lines.
// test/integration/report/sshsig-openssh.test.ts checks the same against OpenSSH.
import { createHash, generateKeyPairSync, randomBytes, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allowedSignersLine, findAllowedSigner, parseAllowedSigners } from '../../../../src-main/core/report/allowed-signers.js';
import { loadSigner, verifySshsig } from '../../../../src-main/core/report/sshsig.js';
import { ReportErrorCode } from '../../../../src-main/core/report/errors.js';

const NS = 'gpu-console-evidence';
const dir = mkdtempSync(join(tmpdir(), 'gpu-console-sshsig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// ── an independent SSH wire encoder, written from PROTOCOL.sshsig ─────────

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const str = (v: Buffer | string): Buffer => {
  const b = Buffer.from(v);
  return Buffer.concat([u32(b.length), b]);
};
const mpint = (v: Buffer): Buffer => {
  let i = 0;
  while (i < v.length && v[i] === 0) i++;
  const t = v.subarray(i);
  return str(t.length && t[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), t]) : t);
};
const b64u = (s: string): Buffer => Buffer.from(s, 'base64url');

/** The SSH public key blob of a node:crypto key. */
function publicBlob(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty === 'OKP') return Buffer.concat([str('ssh-ed25519'), str(b64u(jwk.x!))]);
  if (jwk.kty === 'RSA') return Buffer.concat([str('ssh-rsa'), mpint(b64u(jwk.e!)), mpint(b64u(jwk.n!))]);
  const curve = { 'P-256': 'nistp256', 'P-384': 'nistp384', 'P-521': 'nistp521' }[jwk.crv!]!;
  const point = Buffer.concat([Buffer.from([4]), b64u(jwk.x!), b64u(jwk.y!)]);
  return Buffer.concat([str(`ecdsa-sha2-${curve}`), str(curve), str(point)]);
}

/** An unencrypted openssh-key-v1 file for an ed25519 key (ssh2 reads no PKCS#8). */
function opensshEd25519(privateKey: KeyObject): string {
  const jwk = privateKey.export({ format: 'jwk' });
  const seed = b64u(jwk.d!);
  const pk = b64u(jwk.x!);
  const pub = Buffer.concat([str('ssh-ed25519'), str(pk)]);
  let priv = Buffer.concat([u32(0x01020304), u32(0x01020304), str('ssh-ed25519'), str(pk), str(Buffer.concat([seed, pk])), str('test key')]);
  const pad: number[] = [];
  for (let i = 1; (priv.length + pad.length) % 8 !== 0; i++) pad.push(i);
  priv = Buffer.concat([priv, Buffer.from(pad)]);
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0', 'latin1'), str('none'), str('none'), str(''), u32(1), str(pub), str(priv)]);
  const lines = body.toString('base64').match(/.{1,70}/g)!;
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

interface TestKey {
  file: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  type: string;
}

function makeKey(name: string, kind: 'ed25519' | 'P-256' | 'P-384' | 'P-521' | 'rsa', passphrase?: string): TestKey {
  const file = join(dir, name);
  let pair: { privateKey: KeyObject; publicKey: KeyObject };
  let pem: string;
  const cipher = passphrase ? { cipher: 'aes-256-cbc', passphrase } : {};
  if (kind === 'ed25519') {
    pair = generateKeyPairSync('ed25519');
    pem = opensshEd25519(pair.privateKey);
  } else if (kind === 'rsa') {
    pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    pem = pair.privateKey.export({ type: 'pkcs1', format: 'pem', ...cipher }) as string;
  } else {
    pair = generateKeyPairSync('ec', { namedCurve: kind });
    pem = pair.privateKey.export({ type: 'sec1', format: 'pem', ...cipher }) as string;
  }
  writeFileSync(file, pem, { mode: 0o600 });
  const type = publicBlob(pair.publicKey).subarray(4, 4 + publicBlob(pair.publicKey).readUInt32BE(0)).toString();
  return { file, ...pair, type };
}

function fingerprintOf(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

function dearmor(armored: string): Buffer {
  return Buffer.from(armored.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

function armor(blob: Buffer): string {
  return `-----BEGIN SSH SIGNATURE-----\n${blob.toString('base64').match(/.{1,70}/g)!.join('\n')}\n-----END SSH SIGNATURE-----\n`;
}

/** An SSHSIG made by the test's own encoder (for hash algorithms and signature algorithms our signer never uses). */
function handSigned(key: TestKey, message: Buffer, opts: { hashAlg: string; sigAlg: string; signHash: string | null; namespace?: string }): string {
  const ns = opts.namespace ?? NS;
  const h = createHash(opts.hashAlg).update(message).digest();
  const toSign = Buffer.concat([Buffer.from('SSHSIG'), str(ns), str(''), str(opts.hashAlg), str(h)]);
  const raw = cryptoSign(opts.signHash, toSign, key.privateKey);
  const sig = Buffer.concat([str(opts.sigAlg), str(raw)]);
  const blob = Buffer.concat([Buffer.from('SSHSIG'), u32(1), str(publicBlob(key.publicKey)), str(ns), str(''), str(opts.hashAlg), str(sig)]);
  return armor(blob);
}

const keys = {
  ed25519: makeKey('ed25519', 'ed25519'),
  p256: makeKey('p256', 'P-256'),
  p384: makeKey('p384', 'P-384'),
  p521: makeKey('p521', 'P-521'),
  rsa: makeKey('rsa', 'rsa'),
};
const message = Buffer.from('{"schema":"gpu-console.evidence-manifest/1","files":[]}');

describe('loadSigner + verifySshsig round trip', () => {
  it.each(Object.entries(keys))('%s: signs, and the signature verifies with the embedded key', async (_name, key) => {
    const signer = await loadSigner(key.file);
    const blob = publicBlob(key.publicKey);
    expect(signer.keyType).toBe(key.type);
    expect(signer.publicKeyLine).toBe(`${key.type} ${blob.toString('base64')}`);
    expect(signer.fingerprint).toBe(fingerprintOf(blob));

    const armored = signer.sign(message, NS);
    const lines = armored.split('\n');
    expect(lines[0]).toBe('-----BEGIN SSH SIGNATURE-----');
    expect(lines.at(-2)).toBe('-----END SSH SIGNATURE-----');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(1, -2).every((l) => l.length <= 70 && l.length > 0)).toBe(true);
    expect(lines.slice(1, -3).every((l) => l.length === 70)).toBe(true);

    expect(verifySshsig(message, armored, NS)).toEqual({ ok: true, publicKeyLine: signer.publicKeyLine, fingerprint: signer.fingerprint });
  });

  it('writes the SSHSIG layout: magic, version 1, the key, namespace, empty reserved, sha512', async () => {
    const signer = await loadSigner(keys.rsa.file);
    const blob = dearmor(signer.sign(message, NS));
    const pub = publicBlob(keys.rsa.publicKey);
    const head = Buffer.concat([Buffer.from('SSHSIG'), u32(1), str(pub), str(NS), str(''), str('sha512')]);
    expect(blob.subarray(0, head.length).equals(head)).toBe(true);
    // RSA signs with rsa-sha2-512, never SHA-1.
    expect(blob.subarray(head.length + 4 + 4, head.length + 8 + 'rsa-sha2-512'.length).toString()).toBe('rsa-sha2-512');
  });

  it('does not show the private key when the signer is serialized', async () => {
    const signer = await loadSigner(keys.p256.file);
    expect(JSON.stringify(signer)).not.toMatch(/PRIVATE/);
  });
});

describe('verifySshsig rejects', () => {
  it.each(Object.entries(keys))('%s: one flipped bit in the message or in the signature value', async (_name, key) => {
    const signer = await loadSigner(key.file);
    const armored = signer.sign(message, NS);
    const changed = Buffer.from(message);
    changed[10]! ^= 0x01;
    expect(verifySshsig(changed, armored, NS)).toEqual({ ok: false, reason: 'the signature does not match the message and key' });

    const blob = dearmor(armored);
    blob[blob.length - 2]! ^= 0x01; // inside the signature bytes (r ‖ s for ECDSA: s)
    expect(verifySshsig(message, armor(blob), NS).ok).toBe(false);
  });

  it('a signature for another namespace', async () => {
    const signer = await loadSigner(keys.ed25519.file);
    const armored = signer.sign(message, 'file');
    const result = verifySshsig(message, armored, NS);
    expect(result).toEqual({ ok: false, reason: 'signature namespace is "file", expected "gpu-console-evidence"' });
  });

  it('a signature whose embedded key was swapped for another key', async () => {
    const signer = await loadSigner(keys.ed25519.file);
    const blob = dearmor(signer.sign(message, NS));
    const other = generateKeyPairSync('ed25519');
    const swapped = Buffer.from(blob);
    publicBlob(other.publicKey).copy(swapped, 6 + 4 + 4); // after magic, version and the length: same-size blob
    expect(verifySshsig(message, armor(swapped), NS)).toMatchObject({ ok: false, reason: 'the signature does not match the message and key' });
  });

  it.each([
    ['empty text', ''],
    ['no armor', 'hello'],
    ['bad base64', '-----BEGIN SSH SIGNATURE-----\n@@@@\n-----END SSH SIGNATURE-----\n'],
    ['wrong magic', armor(Buffer.from('NOTSIG\0\0\0\x01'))],
    ['truncated', armor(Buffer.from('SSHSIG\0\0\0\x01\0\0\0\x33abc'))],
  ])('malformed input without throwing: %s', (_name, text) => {
    const result = verifySshsig(message, text, NS);
    expect(result.ok).toBe(false);
    expect((result as { reason: string }).reason).toMatch(/.+/);
  });

  it('an unsupported version and an unknown hash algorithm', () => {
    const v2 = Buffer.concat([Buffer.from('SSHSIG'), u32(2)]);
    expect(verifySshsig(message, armor(v2), NS)).toEqual({ ok: false, reason: 'unsupported SSHSIG version 2' });
    const md5 = handSigned(keys.ed25519, message, { hashAlg: 'md5', sigAlg: 'ssh-ed25519', signHash: null });
    expect(verifySshsig(message, md5, NS)).toEqual({ ok: false, reason: 'unsupported hash algorithm "md5"' });
  });

  it('an RSA signature made with SHA-1 (ssh-rsa), as OpenSSH does', () => {
    const sha1 = handSigned(keys.rsa, message, { hashAlg: 'sha512', sigAlg: 'ssh-rsa', signHash: 'sha1' });
    expect(verifySshsig(message, sha1, NS)).toMatchObject({ ok: false, reason: expect.stringMatching(/ssh-rsa is not allowed/) });
  });
});

describe('verifySshsig accepts what other signers make', () => {
  it('sha256 message hashes and rsa-sha2-256 signatures', () => {
    const ed = handSigned(keys.ed25519, message, { hashAlg: 'sha256', sigAlg: 'ssh-ed25519', signHash: null });
    expect(verifySshsig(message, ed, NS)).toMatchObject({ ok: true, fingerprint: fingerprintOf(publicBlob(keys.ed25519.publicKey)) });
    const rsa = handSigned(keys.rsa, message, { hashAlg: 'sha256', sigAlg: 'rsa-sha2-256', signHash: 'sha256' });
    expect(verifySshsig(message, rsa, NS)).toMatchObject({ ok: true });
  });

  it('armor with CRLF line ends and surrounding text', async () => {
    const signer = await loadSigner(keys.p384.file);
    const armored = signer.sign(message, NS).replace(/\n/g, '\r\n');
    expect(verifySshsig(message, `note\r\n${armored}`, NS)).toMatchObject({ ok: true });
  });
});

describe('loadSigner errors', () => {
  const passphrase = 'correct horse battery';
  const encrypted = makeKey('p256-encrypted', 'P-256', passphrase);

  it('an encrypted key without a passphrase is SIGNING_KEY_ENCRYPTED, naming the file', async () => {
    const err = await loadSigner(encrypted.file).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ReportErrorCode.SIGNING_KEY_ENCRYPTED, details: { path: encrypted.file } });
    expect((err as Error).message).toContain(encrypted.file);
  });

  it('a wrong passphrase is SIGNING_KEY_PASSPHRASE_INCORRECT and the passphrase appears nowhere', async () => {
    const wrong = 'not the passphrase';
    const err = await loadSigner(encrypted.file, wrong).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ReportErrorCode.SIGNING_KEY_PASSPHRASE_INCORRECT });
    expect((err as Error).message).toContain(encrypted.file);
    expect(JSON.stringify(err)).not.toContain(wrong);
    expect((err as Error).message).not.toContain(wrong);
  });

  it('the right passphrase signs', async () => {
    const signer = await loadSigner(encrypted.file, passphrase);
    expect(verifySshsig(message, signer.sign(message, NS), NS)).toMatchObject({ ok: true, fingerprint: signer.fingerprint });
  });

  it('a missing file and a file that is no key are SIGNING_KEY_UNREADABLE', async () => {
    const missing = join(dir, 'nope');
    await expect(loadSigner(missing)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_UNREADABLE, details: { path: missing, reason: 'ENOENT' } });
    const junk = join(dir, 'junk');
    writeFileSync(junk, randomBytes(64), { mode: 0o600 });
    await expect(loadSigner(junk)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_UNREADABLE, message: expect.stringContaining(junk) });
  });
});

describe('allowed_signers', () => {
  const line = (k: TestKey): string => `${k.type} ${publicBlob(k.publicKey).toString('base64')}`;

  it('writes a line limited to the evidence namespace, quoting a principal with spaces', () => {
    expect(allowedSignersLine('alice@example.com', `${line(keys.ed25519)} comment`)).toBe(
      `alice@example.com namespaces="gpu-console-evidence" ${line(keys.ed25519)}`,
    );
    expect(allowedSignersLine('Alice Smith', line(keys.ed25519))).toBe(`"Alice Smith" namespaces="gpu-console-evidence" ${line(keys.ed25519)}`);
  });

  it.each(['', '  ', 'a"b', 'a,b', 'a\nb'])('refuses the principal %j with SIGNER_PRINCIPAL_INVALID', (principal) => {
    expect(() => allowedSignersLine(principal, line(keys.ed25519))).toThrow(expect.objectContaining({ code: ReportErrorCode.SIGNER_PRINCIPAL_INVALID }));
  });

  it('parses what it writes, and finds the signer for its namespace only', () => {
    const text = [
      '# trusted evidence signers',
      '',
      allowedSignersLine('Alice Smith', line(keys.ed25519)),
      `bob,carol@example.com ${line(keys.p256)} bob's laptop`,
      `dave namespaces="git,file" ${line(keys.p384)}`,
      `*@example.com cert-authority ${line(keys.rsa)}`,
      `erin valid-after="20240101",namespaces="gpu-*" ${line(keys.p521)}`,
      'garbage line',
    ].join('\n');
    const entries = parseAllowedSigners(text);
    expect(entries.map((e) => [e.line, e.principals, e.namespaces, e.certAuthority])).toEqual([
      [3, ['Alice Smith'], ['gpu-console-evidence'], false],
      [4, ['bob', 'carol@example.com'], null, false],
      [5, ['dave'], ['git', 'file'], false],
      [6, ['*@example.com'], null, true],
      [7, ['erin'], ['gpu-*'], false],
    ]);
    expect(entries[4]!.options).toEqual({ 'valid-after': '20240101', namespaces: 'gpu-*' });

    expect(findAllowedSigner(entries, line(keys.ed25519), NS)?.line).toBe(3);
    expect(findAllowedSigner(entries, `${line(keys.p256)} any comment`, NS)?.line).toBe(4); // no namespaces= means any
    expect(findAllowedSigner(entries, line(keys.p384), NS)).toBeNull(); // listed for git and file only
    expect(findAllowedSigner(entries, line(keys.rsa), NS)).toBeNull(); // a CA key, not a signer key
    expect(findAllowedSigner(entries, line(keys.p521), NS)?.line).toBe(7); // pattern
    expect(findAllowedSigner(entries, line(keys.ed25519), 'file')).toBeNull();
    const stranger = generateKeyPairSync('ed25519').publicKey;
    expect(findAllowedSigner(entries, `ssh-ed25519 ${publicBlob(stranger).toString('base64')}`, NS)).toBeNull();
  });
});
