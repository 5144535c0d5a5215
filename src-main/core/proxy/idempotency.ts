// Idempotency-Key: one upstream run per (client, key). A repeat while the
// first runs waits for its answer; a repeat within the TTL gets the stored
// answer; a repeat with a different body is refused. Failed answers are
// shared with repeats that were waiting but not kept for later ones.
import { createHash } from 'node:crypto';
import type { Clock } from '../base/index.js';

export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  upstream: string | null;
}

interface Entry {
  fingerprint: string;
  done: StoredAnswer | null;
  waiters: Array<(answer: StoredAnswer) => void>;
  expiresAt: number;
}

export type IdempotencyBegin =
  | { kind: 'first'; complete(answer: StoredAnswer): void }
  | { kind: 'wait'; answer: Promise<StoredAnswer>; cancel(): void }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'conflict' };

/** Largest answer kept for replay. */
export const MAX_STORED_BYTES = 8 * 1024 * 1024;
const MAX_ENTRIES = 10_000;

export function fingerprintOf(path: string, body: Buffer): string {
  return createHash('sha256').update(path).update('\0').update(body).digest('hex');
}

export class IdempotencyCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private ttlMs: number,
  ) {}

  setTtl(ttlMs: number): void {
    this.ttlMs = ttlMs;
  }

  get size(): number {
    return this.entries.size;
  }

  begin(client: string, key: string, fingerprint: string): IdempotencyBegin {
    const id = `${client}\u0000${key}`;
    const now = this.clock.now();
    const existing = this.entries.get(id);
    if (existing && existing.done && existing.expiresAt <= now) this.entries.delete(id);
    const entry = this.entries.get(id);
    if (entry) {
      if (entry.fingerprint !== fingerprint) return { kind: 'conflict' };
      if (entry.done) return { kind: 'replay', answer: entry.done };
      let listener!: (a: StoredAnswer) => void;
      const answer = new Promise<StoredAnswer>((resolve) => {
        listener = resolve;
        entry.waiters.push(resolve);
      });
      return {
        kind: 'wait',
        answer,
        cancel: () => {
          const i = entry.waiters.indexOf(listener);
          if (i >= 0) entry.waiters.splice(i, 1);
        },
      };
    }
    this.sweep(now);
    const created: Entry = { fingerprint, done: null, waiters: [], expiresAt: Infinity };
    this.entries.set(id, created);
    return {
      kind: 'first',
      complete: (answer) => {
        if (created.done) return;
        created.done = answer;
        created.expiresAt = this.clock.now() + this.ttlMs;
        for (const w of created.waiters.splice(0)) w(answer);
        if (answer.status >= 300 && this.entries.get(id) === created) this.entries.delete(id);
      },
    };
  }

  private sweep(now: number): void {
    if (this.entries.size < MAX_ENTRIES) return;
    for (const [id, e] of this.entries) if (e.done && e.expiresAt <= now) this.entries.delete(id);
    // Still full: forget the oldest finished answers (Map keeps insertion order).
    for (const [id, e] of this.entries) {
      if (this.entries.size < MAX_ENTRIES) break;
      if (e.done) this.entries.delete(id);
    }
  }
}
