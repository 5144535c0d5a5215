// Passphrases the operator typed for encrypted keys. Main-process memory only:
// never written to disk, the store, a log or an event; gone at exit.

export interface PassphraseProvider {
  get(keyPath: string): string | undefined;
  set(keyPath: string, passphrase: string): void;
  forget(keyPath: string): void;
}

export class MemoryPassphraseCache implements PassphraseProvider {
  private readonly byPath = new Map<string, string>();

  get(keyPath: string): string | undefined {
    return this.byPath.get(keyPath);
  }

  set(keyPath: string, passphrase: string): void {
    this.byPath.set(keyPath, passphrase);
  }

  forget(keyPath: string): void {
    this.byPath.delete(keyPath);
  }

  clear(): void {
    this.byPath.clear();
  }

  /** Never print the values. */
  toJSON(): { keys: number } {
    return { keys: this.byPath.size };
  }
}
