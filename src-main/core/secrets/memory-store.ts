import type { SecretStore } from '../ports.js';
import { checkKey } from './keys.js';

/** Secrets for this session only (passphrases the operator chose not to remember, or no safe backend). */
export class MemorySecretStore implements SecretStore {
  readonly kind = 'memory';
  readonly persistent = false;
  private readonly values = new Map<string, string>();

  async get(key: string): Promise<string | null> {
    checkKey(key);
    return this.values.get(key) ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    checkKey(key);
    this.values.set(key, value);
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    this.values.delete(key);
  }

  async list(): Promise<string[]> {
    return [...this.values.keys()].sort();
  }
}
