// Key material of the demo fleet: one ed25519 client key (what the console
// authenticates with) and one ed25519 host key per demo host, kept in the
// fleet's folder so fingerprints survive restarts, plus the known_hosts file.
// Never log key contents.

import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';

const { utils } = ssh2;

export interface KeyPairFiles {
  privateKey: string;
  publicKey: ParsedKey;
  /** `ssh-ed25519 AAAA...` */
  publicLine: string;
}

function parseSingle(text: string): ParsedKey | null {
  const parsed = utils.parseKey(text);
  if (parsed instanceof Error) return null;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return key ?? null;
}

/** `SHA256:<base64 without padding>` of the public key blob, as `ssh-keygen -l` prints. */
export function fingerprintOf(publicBlob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(publicBlob).digest('base64').replace(/=+$/, '');
}

export function publicLineOf(key: ParsedKey): string {
  return `${key.type} ${key.getPublicSSH().toString('base64')}`;
}

/** Loads `<dir>/<name>` or, when missing or unreadable, generates a fresh ed25519 pair there (mode 0600). */
export async function loadOrCreateKey(dir: string, name: string, comment: string): Promise<KeyPairFiles & { path: string }> {
  const path = join(dir, name);
  try {
    const text = await readFile(path, 'utf8');
    const key = parseSingle(text);
    if (key && key.isPrivateKey() && key.type === 'ssh-ed25519') {
      await chmod(path, 0o600);
      return { path, privateKey: text, publicKey: key, publicLine: publicLineOf(key) };
    }
  } catch {
    // missing or unreadable: regenerate below
  }
  const { pair, key } = generateEd25519(comment);
  await writeFile(path, pair.private, { mode: 0o600 });
  await chmod(path, 0o600);
  await writeFile(`${path}.pub`, pair.public.trim() + '\n', { mode: 0o600 });
  return { path, privateKey: pair.private, publicKey: key, publicLine: publicLineOf(key) };
}

/** ssh-ed25519 public blob: string "ssh-ed25519" (4+11) + string key (4+32). */
const ED25519_BLOB_BYTES = 51;

/**
 * ssh2's keygen strips leading zero bytes from the raw public key, so about
 * 1 in 256 generated ed25519 pairs is malformed (mscdex/ssh2#1390, #1513) and
 * neither ssh2 nor OpenSSH can load it. Draw again until the pair parses.
 */
export function generateEd25519(comment: string): { pair: { private: string; public: string }; key: ParsedKey } {
  for (let attempt = 0; attempt < 32; attempt++) {
    const pair = utils.generateKeyPairSync('ed25519', { comment });
    const key = parseSingle(pair.private);
    const pub = parseSingle(pair.public);
    if (key && pub && key.getPublicSSH().length === ED25519_BLOB_BYTES && pub.getPublicSSH().equals(key.getPublicSSH())) {
      return { pair, key };
    }
  }
  throw new Error('could not generate a well-formed ed25519 key pair');
}

export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

/** OpenSSH known_hosts: `[127.0.0.1]:<port> ssh-ed25519 AAAA...` per host. */
export function knownHostsText(entries: { port: number; publicLine: string }[]): string {
  return entries.map((e) => `[127.0.0.1]:${e.port} ${e.publicLine}\n`).join('');
}
