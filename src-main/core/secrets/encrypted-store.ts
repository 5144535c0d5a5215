// Secrets encrypted by the operating system's keychain (Electron's
// safeStorage in the desktop app). The backend is injected so this logic —
// above all the refusal to persist under Linux's `basic_text` fallback, which
// is obfuscation, not encryption — is tested without Electron.
import { AppError } from '../base/index.js';
import type { SecretStore } from '../ports.js';
import { SecretsErrorCode } from './errors.js';
import { checkKey } from './keys.js';

export interface EncryptionBackend {
  isEncryptionAvailable(): boolean;
  /** Linux only in Electron: 'basic_text' | 'gnome_libsecret' | 'kwallet' | … ; elsewhere undefined. */
  selectedBackend(): string | undefined;
  encryptString(plain: string): Buffer;
  decryptString(cipher: Buffer): string;
}

/** Where the encrypted blobs live (the settings table in practice). */
export interface CipherBlobStore {
  keys(): string[];
  get(key: string): string | undefined;
  set(key: string, base64: string): void;
  delete(key: string): void;
}

export type PersistenceVerdict = { persistent: true } | { persistent: false; reason: string };

export function persistenceVerdict(backend: EncryptionBackend): PersistenceVerdict {
  if (!backend.isEncryptionAvailable()) {
    return { persistent: false, reason: 'the operating system offers no encryption for stored secrets' };
  }
  const selected = backend.selectedBackend();
  if (selected === 'basic_text' || selected === 'unknown') {
    return {
      persistent: false,
      reason: 'no keyring is running (Electron would fall back to basic_text, which is not encryption); secrets are asked for each session',
    };
  }
  return { persistent: true };
}

export class EncryptedSecretStore implements SecretStore {
  readonly kind: string;
  readonly persistent: boolean;
  readonly notPersistentReason: string | null;
  private readonly session = new Map<string, string>();

  constructor(
    private readonly backend: EncryptionBackend,
    private readonly blobs: CipherBlobStore,
  ) {
    const verdict = persistenceVerdict(backend);
    this.persistent = verdict.persistent;
    this.notPersistentReason = verdict.persistent ? null : verdict.reason;
    this.kind = verdict.persistent ? `keychain:${backend.selectedBackend() ?? 'os'}` : 'memory (no keychain)';
  }

  async get(key: string): Promise<string | null> {
    checkKey(key);
    const inSession = this.session.get(key);
    if (inSession !== undefined) return inSession;
    if (!this.persistent) return null;
    const blob = this.blobs.get(key);
    if (blob === undefined) return null;
    try {
      return this.backend.decryptString(Buffer.from(blob, 'base64'));
    } catch (err) {
      throw new AppError(SecretsErrorCode.UNREADABLE, `the stored secret "${key}" cannot be decrypted (keychain changed?)`, { cause: err });
    }
  }

  /** Persists when the keychain is real; otherwise keeps the secret for this session and says so. */
  async set(key: string, value: string): Promise<void> {
    checkKey(key);
    if (!this.persistent) {
      this.session.set(key, value);
      throw new AppError(SecretsErrorCode.NOT_PERSISTENT, `not stored on disk: ${this.notPersistentReason}; kept for this session only`);
    }
    let cipher: Buffer;
    try {
      cipher = this.backend.encryptString(value);
    } catch (err) {
      throw new AppError(SecretsErrorCode.ENCRYPTION_FAILED, 'the keychain refused to encrypt the secret', { cause: err });
    }
    this.blobs.set(key, cipher.toString('base64'));
    this.session.delete(key);
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    this.session.delete(key);
    this.blobs.delete(key);
  }

  async list(): Promise<string[]> {
    return [...new Set([...this.session.keys(), ...(this.persistent ? this.blobs.keys() : [])])].sort();
  }
}
