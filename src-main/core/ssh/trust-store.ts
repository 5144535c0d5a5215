// The console's own record of host keys an operator confirmed, next to (never
// instead of) the user's known_hosts. Keyed by the name OpenSSH would look up:
// `host` on port 22, `[host]:port` otherwise.

export interface TrustedHostKey {
  /** `knownHostsName(host, port)`. */
  endpoint: string;
  keyType: string;
  fingerprint: string;
  /** Epoch ms of the confirmation. */
  confirmedAt: number;
  /** Who confirmed it (audit actor). */
  actor: string;
}

export interface HostKeyTrustStore {
  lookup(endpoint: string): readonly TrustedHostKey[];
  add(entry: TrustedHostKey): void;
  /** Drops every key recorded for an endpoint; true when there was one. */
  forget(endpoint: string): boolean;
}

/** In memory only: for tests and for sessions built without the app's store. */
export class MemoryTrustStore implements HostKeyTrustStore {
  private readonly entries = new Map<string, TrustedHostKey[]>();

  lookup(endpoint: string): readonly TrustedHostKey[] {
    return this.entries.get(endpoint.toLowerCase()) ?? [];
  }

  add(entry: TrustedHostKey): void {
    const key = entry.endpoint.toLowerCase();
    const list = (this.entries.get(key) ?? []).filter((e) => e.fingerprint !== entry.fingerprint);
    this.entries.set(key, [...list, entry]);
  }

  forget(endpoint: string): boolean {
    return this.entries.delete(endpoint.toLowerCase());
  }

  all(): TrustedHostKey[] {
    return [...this.entries.values()].flat();
  }
}

/**
 * A trust store over any key → JSON storage (the app passes store.settings).
 * The whole list lives under one key; it is small (one entry per host key).
 */
export class KeyValueTrustStore implements HostKeyTrustStore {
  constructor(
    private readonly kv: { get<T>(key: string): T | undefined; set(key: string, value: unknown): void },
    private readonly key = 'ssh.trustedHostKeys',
  ) {}

  private read(): TrustedHostKey[] {
    const raw = this.kv.get<unknown>(this.key);
    if (!Array.isArray(raw)) return [];
    return raw.filter(
      (e): e is TrustedHostKey =>
        typeof e === 'object' &&
        e !== null &&
        typeof (e as TrustedHostKey).endpoint === 'string' &&
        typeof (e as TrustedHostKey).fingerprint === 'string' &&
        typeof (e as TrustedHostKey).keyType === 'string',
    );
  }

  lookup(endpoint: string): readonly TrustedHostKey[] {
    const name = endpoint.toLowerCase();
    return this.read().filter((e) => e.endpoint.toLowerCase() === name);
  }

  add(entry: TrustedHostKey): void {
    const name = entry.endpoint.toLowerCase();
    const rest = this.read().filter((e) => !(e.endpoint.toLowerCase() === name && e.fingerprint === entry.fingerprint));
    this.kv.set(this.key, [...rest, entry]);
  }

  forget(endpoint: string): boolean {
    const name = endpoint.toLowerCase();
    const all = this.read();
    const rest = all.filter((e) => e.endpoint.toLowerCase() !== name);
    if (rest.length === all.length) return false;
    this.kv.set(this.key, rest);
    return true;
  }
}
