import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { loadKeyFile, loadPrivateKey } from '../../../../src-main/core/ssh/index.js';

const dir = mkdtempSync(join(tmpdir(), 'keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadPrivateKey', () => {
  it('loads an unencrypted key', async () => {
    const file = join(dir, 'plain');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
    expect((await loadPrivateKey(file)).length).toBeGreaterThan(100);
  });

  it('says a passphrase is required for an encrypted key', async () => {
    const file = join(dir, 'enc');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret-pass', '-f', file]);
    await expect(loadPrivateKey(file)).rejects.toMatchObject({ code: 'SSH_PASSPHRASE_REQUIRED' });
    expect((await loadPrivateKey(file, 'secret-pass')).length).toBeGreaterThan(100);
  });

  it('reports a missing file and a file that is not a key as SSH_KEY_UNREADABLE with a reason', async () => {
    await expect(loadPrivateKey(join(dir, 'nope'))).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE', details: { reason: 'ENOENT' } });
    const junk = join(dir, 'junk');
    writeFileSync(junk, 'this is not a key\n');
    const err = await loadPrivateKey(junk).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
    expect((err as { details: { reason: string } }).details.reason).toMatch(/.+/);
  });

  it('refuses a public key given as identityFile', async () => {
    const file = join(dir, 'pubonly');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
    await expect(loadPrivateKey(`${file}.pub`)).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
  });

  it('reads PKCS#8 keys (BEGIN PRIVATE KEY), which ssh2 alone cannot: RSA, ECDSA and ed25519, plain and encrypted', async () => {
    const cases = [
      ['rsa', generateKeyPairSync('rsa', { modulusLength: 2048 })],
      ['ecdsa-sha2-nistp256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
      ['ssh-ed25519', generateKeyPairSync('ed25519')],
    ] as const;
    for (const [type, pair] of cases) {
      const plain = join(dir, `pk8-${type}`);
      writeFileSync(plain, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      const { key } = await loadKeyFile(plain);
      expect(key.type).toBe(type === 'rsa' ? 'ssh-rsa' : type);
      // The key signs for the public half node derives from the same file.
      const data = Buffer.from('evidence');
      const sig = key.sign(data, type === 'rsa' ? 'sha256' : undefined);
      expect(sig).toBeInstanceOf(Buffer);
      if (type === 'ssh-ed25519') expect(verify(null, data, createPublicKey(pair.privateKey), sig as Buffer)).toBe(true);
      if (type === 'rsa') expect(verify('sha256', data, createPublicKey(pair.privateKey), sig as Buffer)).toBe(true);

      const enc = join(dir, `pk8-enc-${type}`);
      writeFileSync(enc, pair.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'night shift' }));
      await expect(loadKeyFile(enc)).rejects.toMatchObject({ code: 'SSH_PASSPHRASE_REQUIRED' });
      await expect(loadKeyFile(enc, 'wrong')).rejects.toMatchObject({ code: 'SSH_PASSPHRASE_INCORRECT' });
      expect((await loadKeyFile(enc, 'night shift')).key.getPublicSSH().equals(key.getPublicSSH())).toBe(true);
    }
    // ssh-keygen derives the same public key from the PKCS#8 RSA file.
    const rsa = join(dir, 'pk8-rsa');
    const fromKeygen = execFileSync('ssh-keygen', ['-y', '-f', rsa], { encoding: 'utf8' }).trim().split(' ')[1];
    expect((await loadKeyFile(rsa)).key.getPublicSSH().toString('base64')).toBe(fromKeygen);
  });

  it('names an unsupported PKCS#8 key type', async () => {
    const file = join(dir, 'pk8-x25519');
    writeFileSync(file, generateKeyPairSync('x25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await expect(loadPrivateKey(file)).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE', message: expect.stringContaining('x25519') });
  });
});
