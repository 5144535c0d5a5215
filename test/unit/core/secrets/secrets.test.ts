import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EncryptedSecretStore,
  FileSecretStore,
  MemorySecretStore,
  type CipherBlobStore,
  type EncryptionBackend,
} from '../../../../src-main/core/secrets/index.js';

function fakeBackend(selected: string | undefined, available = true): EncryptionBackend & { encrypted: string[] } {
  const encrypted: string[] = [];
  return {
    encrypted,
    isEncryptionAvailable: () => available,
    selectedBackend: () => selected,
    // A reversible stand-in for the OS cipher: enough to prove the plaintext never reaches the blob store.
    encryptString: (plain) => {
      encrypted.push(plain);
      return Buffer.from([...Buffer.from(plain, 'utf8')].map((b) => b ^ 0x5a));
    },
    decryptString: (cipher) => Buffer.from([...cipher].map((b) => b ^ 0x5a)).toString('utf8'),
  };
}

function blobStore(): CipherBlobStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, keys: () => [...map.keys()], get: (k) => map.get(k), set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}

describe('EncryptedSecretStore', () => {
  it('persists through a real keyring backend, never storing the plaintext', async () => {
    const blobs = blobStore();
    const store = new EncryptedSecretStore(fakeBackend('gnome_libsecret'), blobs);
    expect(store.persistent).toBe(true);
    await store.set('ssh.passphrase.l20-poc', 'correct horse');
    expect([...blobs.map.values()].join()).not.toContain('correct horse');
    const again = new EncryptedSecretStore(fakeBackend('gnome_libsecret'), blobs);
    expect(await again.get('ssh.passphrase.l20-poc')).toBe('correct horse');
    expect(await again.list()).toEqual(['ssh.passphrase.l20-poc']);
  });

  it.each([['basic_text'], ['unknown']])('refuses to persist under %s and keeps the secret for this session only', async (backend) => {
    const blobs = blobStore();
    const store = new EncryptedSecretStore(fakeBackend(backend), blobs);
    expect(store.persistent).toBe(false);
    await expect(store.set('upstream.apikey.qwen', 'sk-live-123')).rejects.toMatchObject({ code: 'SECRETS_NOT_PERSISTENT' });
    expect(blobs.map.size).toBe(0);
    expect(await store.get('upstream.apikey.qwen')).toBe('sk-live-123');
    expect(await new EncryptedSecretStore(fakeBackend(backend), blobs).get('upstream.apikey.qwen')).toBeNull();
  });

  it('refuses to persist when encryption is unavailable', async () => {
    const store = new EncryptedSecretStore(fakeBackend(undefined, false), blobStore());
    expect(store.persistent).toBe(false);
    expect(store.notPersistentReason).toMatch(/no encryption/);
  });

  it('says clearly when a stored secret cannot be decrypted', async () => {
    const blobs = blobStore();
    const backend = fakeBackend('kwallet');
    const store = new EncryptedSecretStore({ ...backend, decryptString: () => { throw new Error('bad mac'); } }, blobs);
    await store.set('a.b', 'x');
    await expect(store.get('a.b')).rejects.toMatchObject({ code: 'SECRETS_UNREADABLE' });
  });

  it('rejects secret names that could be values', async () => {
    const store = new MemorySecretStore();
    await expect(store.set('sk-live 123 with spaces', 'x')).rejects.toMatchObject({ code: 'SECRETS_INVALID_KEY' });
  });
});

describe('FileSecretStore', () => {
  it('writes a 0600 file and reads it back', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gc-secrets-')), 'sub', 'secrets.json');
    const store = new FileSecretStore(file);
    await store.set('upstream.apikey.qwen', 'sk-1');
    await store.set('ssh.passphrase.a', 'pp');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await new FileSecretStore(file).get('upstream.apikey.qwen')).toBe('sk-1');
    expect(await store.list()).toEqual(['ssh.passphrase.a', 'upstream.apikey.qwen']);
    await store.delete('upstream.apikey.qwen');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'ssh.passphrase.a': 'pp' });
  });

  it('refuses a secrets file other users can read, and a corrupt one, without overwriting it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gc-secrets-'));
    const file = join(dir, 'secrets.json');
    writeFileSync(file, '{"a":"b"}');
    chmodSync(file, 0o644);
    await expect(new FileSecretStore(file).get('a')).rejects.toMatchObject({ code: 'SECRETS_INSECURE_FILE' });
    await expect(new FileSecretStore(file).set('c', 'd')).rejects.toMatchObject({ code: 'SECRETS_INSECURE_FILE' });
    expect(readFileSync(file, 'utf8')).toBe('{"a":"b"}');
    chmodSync(file, 0o600);
    writeFileSync(file, 'not json');
    await expect(new FileSecretStore(file).set('c', 'd')).rejects.toMatchObject({ code: 'SECRETS_UNREADABLE' });
    expect(readFileSync(file, 'utf8')).toBe('not json');
  });
});
