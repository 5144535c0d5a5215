import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import ssh2 from 'ssh2';
import { fingerprintOf, generateEd25519, knownHostsText, loadOrCreateKey } from '../../../src-main/demo/keys.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'demo-keys-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('demo keys', () => {
  it('creates an ed25519 OpenSSH key with mode 0600 and reuses it next time', async () => {
    const dir = tmp();
    const a = await loadOrCreateKey(dir, 'k', 'c');
    expect(statSync(a.path).mode & 0o777).toBe(0o600);
    expect(a.privateKey).toContain('BEGIN OPENSSH PRIVATE KEY');
    expect(a.publicLine).toMatch(/^ssh-ed25519 AAAA/);
    const b = await loadOrCreateKey(dir, 'k', 'c');
    expect(b.publicLine).toBe(a.publicLine);
  });

  it('regenerates an unreadable key file', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'k'), 'not a key');
    const k = await loadOrCreateKey(dir, 'k', 'c');
    expect(readFileSync(join(dir, 'k'), 'utf8')).toContain('BEGIN OPENSSH PRIVATE KEY');
    expect(k.publicKey.type).toBe('ssh-ed25519');
  });

  it('prints fingerprints like ssh-keygen -l and known_hosts lines for bracketed ports', () => {
    // ssh-keygen prints SHA256 of the key blob, base64 without padding.
    expect(fingerprintOf(Buffer.from('abc'))).toBe('SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0');
    expect(knownHostsText([{ port: 2222, publicLine: 'ssh-ed25519 AAAAX' }])).toBe('[127.0.0.1]:2222 ssh-ed25519 AAAAX\n');
  });
});

describe('generateEd25519', () => {
  it('never returns one of the malformed pairs ssh2 produces about 1 in 256 times (ssh2#1390)', () => {
    for (let i = 0; i < 600; i++) {
      const { pair } = generateEd25519('t');
      expect(ssh2.utils.parseKey(pair.private)).not.toBeInstanceOf(Error);
      expect(ssh2.utils.parseKey(pair.public)).not.toBeInstanceOf(Error);
    }
  });
});
