import { createHmac, timingSafeEqual } from 'node:crypto';
import { sha256Fingerprint } from './fingerprint.js';

// A read-only view of an OpenSSH known_hosts file: plain and hashed host
// entries, `[host]:port` for non-22 ports, wildcards and negation, `@revoked`.
// `@cert-authority` lines are skipped (we do not accept host certificates yet).

export interface KnownHostEntry {
  marker: 'revoked' | null;
  /** Comma-separated patterns, or one hashed `|1|salt|hash` entry. */
  patterns: string[];
  keyType: string;
  keyBlob: Buffer;
  fingerprint: string;
  line: number;
}

export type HostKeyVerdict =
  | { status: 'trusted'; fingerprint: string }
  | { status: 'unknown'; fingerprint: string }
  | { status: 'changed'; fingerprint: string; knownFingerprints: string[] }
  | { status: 'revoked'; fingerprint: string };

/** The name OpenSSH looks up: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

function matchesHashed(entry: string, name: string): boolean {
  // |1|base64(salt)|base64(HMAC-SHA1(salt, name))
  const parts = entry.split('|');
  if (parts.length !== 4 || parts[1] !== '1') return false;
  const salt = Buffer.from(parts[2] ?? '', 'base64');
  const expected = Buffer.from(parts[3] ?? '', 'base64');
  if (salt.length === 0 || expected.length !== 20) return false;
  const actual = createHmac('sha1', salt).update(name).digest();
  return timingSafeEqual(actual, expected);
}

/** OpenSSH semantics: any negated match excludes; otherwise one positive match is enough. */
export function hostMatches(patterns: readonly string[], name: string): boolean {
  let positive = false;
  for (const pattern of patterns) {
    if (pattern.startsWith('|')) {
      if (matchesHashed(pattern, name)) positive = true;
      continue;
    }
    const negated = pattern.startsWith('!');
    const glob = negated ? pattern.slice(1) : pattern;
    if (globToRegExp(glob).test(name)) {
      if (negated) return false;
      positive = true;
    }
  }
  return positive;
}

export class KnownHosts {
  readonly entries: readonly KnownHostEntry[];
  /** Lines that could not be read (skipped, never fatal). */
  readonly malformedLines: number;

  private constructor(entries: KnownHostEntry[], malformed: number) {
    this.entries = entries;
    this.malformedLines = malformed;
  }

  static empty(): KnownHosts {
    return new KnownHosts([], 0);
  }

  static parse(text: string): KnownHosts {
    const entries: KnownHostEntry[] = [];
    let malformed = 0;
    const lines = text.split(/\r?\n/);
    lines.forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const fields = line.split(/\s+/);
      let marker: KnownHostEntry['marker'] = null;
      if (fields[0]?.startsWith('@')) {
        const m = fields.shift();
        if (m === '@cert-authority') return;
        if (m !== '@revoked') {
          malformed++;
          return;
        }
        marker = 'revoked';
      }
      const [hosts, keyType, keyB64] = fields;
      if (!hosts || !keyType || !keyB64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(keyB64)) {
        malformed++;
        return;
      }
      const keyBlob = Buffer.from(keyB64, 'base64');
      entries.push({
        marker,
        patterns: hosts.startsWith('|') ? [hosts] : hosts.split(','),
        keyType,
        keyBlob,
        fingerprint: sha256Fingerprint(keyBlob),
        line: i + 1,
      });
    });
    return new KnownHosts(entries, malformed);
  }

  /** Key types recorded for this host (so the client can ask the server for those first). */
  keyTypesFor(host: string, port: number): string[] {
    const name = knownHostsName(host, port);
    const types = this.entries.filter((e) => e.marker === null && hostMatches(e.patterns, name)).map((e) => e.keyType);
    return [...new Set(types)];
  }

  /**
   * Judges a presented key. A revoked key is refused for every host. A host
   * with entries none of which carries this key counts as changed, whatever the
   * key type: refusing loudly is the safe reading of a mismatch.
   */
  check(host: string, port: number, keyBlob: Buffer): HostKeyVerdict {
    const fingerprint = sha256Fingerprint(keyBlob);
    if (this.entries.some((e) => e.marker === 'revoked' && e.keyBlob.equals(keyBlob))) {
      return { status: 'revoked', fingerprint };
    }
    const name = knownHostsName(host, port);
    const forHost = this.entries.filter((e) => e.marker === null && hostMatches(e.patterns, name));
    if (forHost.length === 0) return { status: 'unknown', fingerprint };
    if (forHost.some((e) => e.keyBlob.equals(keyBlob))) return { status: 'trusted', fingerprint };
    return { status: 'changed', fingerprint, knownFingerprints: [...new Set(forHost.map((e) => e.fingerprint))] };
  }
}
