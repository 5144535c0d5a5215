// Idempotency-Key: one upstream run per (client, key). A repeat while the
// first runs waits for its answer; a repeat within the TTL gets the stored
// answer; a repeat with a different body is refused. Failed answers are
// shared with repeats that were waiting but not kept for later ones.
//
// Memory is bounded by bytes, not only by count: any client with a token can
// send keys, and answers run to megabytes (an embeddings batch). Overflow
// policy: a client over its share forgets its own oldest answers first; over
// the whole budget, the client holding the most bytes forgets its oldest. A
// forgotten key runs again on its next repeat (as after the TTL). An answer
// too large to keep is handed to the repeats already waiting and not kept.
// Entries are keyed by the token's id, so a new token that reuses a revoked
// token's name starts with nothing.
import { createHash } from 'node:crypto';
import type { Clock } from '../base/index.js';

export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  upstream: string | null;
}

interface Entry {
  client: string;
  fingerprint: string;
  done: StoredAnswer | null;
  /** `null`: the first was answered but its answer was not kept; the waiter runs it again. */
  waiters: Array<(answer: StoredAnswer | null) => void>;
  expiresAt: number;
  /** Bytes accounted for this entry (its key, fingerprint, headers, body and a fixed overhead). */
  bytes: number;
}

export type IdempotencyBegin =
  | { kind: 'first'; complete(answer: StoredAnswer | null): void }
  /** `answer` resolves to null when the first's answer was not kept: begin again. */
  | { kind: 'wait'; answer: Promise<StoredAnswer | null>; cancel(): void }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'conflict' };

export interface IdempotencyLimits {
  /** All kept answers together. */
  budgetBytes: number;
  /** One client's kept answers (a flood from one token evicts its own answers first). */
  perClientBytes: number;
  /** Entries, waiting or done (each costs a little besides its answer). */
  maxEntries: number;
}

export interface IdempotencyUsage extends IdempotencyLimits {
  entries: number;
  bytes: number;
  /** Clients with at least one entry. */
  clients: number;
  /** Finished answers forgotten before their TTL to stay within the limits, since start. */
  evicted: number;
  /** Answers not kept because one alone was over a limit, since start. */
  notKept: number;
}

/** Largest answer the proxy copies for replay; a larger one is relayed and not kept. */
export const MAX_STORED_BYTES = 8 * 1024 * 1024;

export const DEFAULT_IDEMPOTENCY_LIMITS: IdempotencyLimits = Object.freeze({
  budgetBytes: 64 * 1024 * 1024,
  perClientBytes: 16 * 1024 * 1024,
  maxEntries: 10_000,
});

/** What an entry costs besides its strings and body (Map slots, objects, closures), rounded up. */
const ENTRY_OVERHEAD_BYTES = 512;

export function fingerprintOf(path: string, body: Buffer): string {
  return createHash('sha256').update(path).update('\0').update(body).digest('hex');
}

function answerBytes(answer: StoredAnswer): number {
  let n = answer.body.length + (answer.upstream?.length ?? 0);
  for (const [k, v] of Object.entries(answer.headers)) n += k.length + v.length;
  return n;
}

export class IdempotencyCache {
  /** Every entry, oldest first. */
  private readonly entries = new Map<string, Entry>();
  /** Each client's entries, oldest first, and their bytes. */
  private readonly clients = new Map<string, { bytes: number; ids: Set<string> }>();
  private readonly limits: IdempotencyLimits;
  private totalBytes = 0;
  private evictedTotal = 0;
  private notKeptTotal = 0;

  constructor(
    private readonly clock: Clock,
    private ttlMs: number,
    limits: Partial<IdempotencyLimits> = {},
  ) {
    this.limits = { ...DEFAULT_IDEMPOTENCY_LIMITS, ...limits };
  }

  setTtl(ttlMs: number): void {
    this.ttlMs = ttlMs;
  }

  get size(): number {
    return this.entries.size;
  }

  usage(): IdempotencyUsage {
    return { ...this.limits, entries: this.entries.size, bytes: this.totalBytes, clients: this.clients.size, evicted: this.evictedTotal, notKept: this.notKeptTotal };
  }

  /** `client` is the token's id (not its name): a re-issued name must not see the old token's answers. */
  begin(client: string, key: string, fingerprint: string): IdempotencyBegin {
    const id = `${client}\u0000${key}`;
    const now = this.clock.now();
    const existing = this.entries.get(id);
    if (existing && existing.done && existing.expiresAt <= now) this.remove(id, existing);
    const entry = this.entries.get(id);
    if (entry) {
      if (entry.fingerprint !== fingerprint) return { kind: 'conflict' };
      if (entry.done) return { kind: 'replay', answer: entry.done };
      return this.waitOn(entry);
    }
    this.sweep(now);
    const created: Entry = { client, fingerprint, done: null, waiters: [], expiresAt: Infinity, bytes: id.length + fingerprint.length + ENTRY_OVERHEAD_BYTES };
    this.add(id, created);
    return { kind: 'first', complete: (answer) => this.complete(id, created, answer) };
  }

  private waitOn(entry: Entry): IdempotencyBegin {
    let listener!: (a: StoredAnswer | null) => void;
    const answer = new Promise<StoredAnswer | null>((resolve) => {
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

  private complete(id: string, entry: Entry, answer: StoredAnswer | null): void {
    if (entry.done || !this.entries.has(id) || this.entries.get(id) !== entry) {
      // Completed twice, or already forgotten (sweep of a full cache never drops a waiting entry, but be safe).
      for (const w of entry.waiters.splice(0)) w(answer);
      return;
    }
    const waiters = entry.waiters.splice(0);
    const size = answer === null ? 0 : answerBytes(answer);
    const keep = answer !== null && answer.status < 300 && entry.bytes + size <= Math.min(this.limits.perClientBytes, this.limits.budgetBytes);
    if (!keep) {
      if (answer === null || answer.status < 300) this.notKeptTotal++;
      this.remove(id, entry);
    } else {
      entry.done = answer;
      entry.expiresAt = this.clock.now() + this.ttlMs;
      this.grow(entry, size);
      if (this.totalBytes > this.limits.budgetBytes) this.dropExpired(this.clock.now());
      this.enforce(id, entry);
    }
    for (const w of waiters) w(answer);
  }

  private add(id: string, entry: Entry): void {
    this.entries.set(id, entry);
    let c = this.clients.get(entry.client);
    if (!c) this.clients.set(entry.client, (c = { bytes: 0, ids: new Set() }));
    c.ids.add(id);
    c.bytes += entry.bytes;
    this.totalBytes += entry.bytes;
  }

  private grow(entry: Entry, bytes: number): void {
    entry.bytes += bytes;
    this.clients.get(entry.client)!.bytes += bytes;
    this.totalBytes += bytes;
  }

  private remove(id: string, entry: Entry): void {
    if (this.entries.get(id) !== entry) return;
    this.entries.delete(id);
    const c = this.clients.get(entry.client)!;
    c.ids.delete(id);
    c.bytes -= entry.bytes;
    this.totalBytes -= entry.bytes;
    if (c.ids.size === 0) this.clients.delete(entry.client);
  }

  /** Within the client's share, then within the budget; never drops `keep` (it fits alone) or a waiting entry. */
  private enforce(keepId: string, keep: Entry): void {
    const own = this.clients.get(keep.client)!;
    while (own.bytes > this.limits.perClientBytes && this.evictOldest(own.ids, keepId)) this.evictedTotal++;
    while (this.totalBytes > this.limits.budgetBytes) {
      let largest: { bytes: number; ids: Set<string> } | null = null;
      for (const c of this.clients.values()) if (!largest || c.bytes > largest.bytes) largest = c;
      if (!largest || !this.evictOldest(largest.ids, keepId)) {
        // The largest holds only waiting entries and `keep`: take from anyone.
        if (!this.evictOldest(this.entries.keys(), keepId)) break;
      }
      this.evictedTotal++;
    }
  }

  private evictOldest(ids: Iterable<string>, keepId: string): boolean {
    for (const id of ids) {
      const e = this.entries.get(id)!;
      if (id === keepId || !e.done) continue;
      this.remove(id, e);
      return true;
    }
    return false;
  }

  private dropExpired(now: number): void {
    for (const [id, e] of this.entries) if (e.done && e.expiresAt <= now) this.remove(id, e);
  }

  private sweep(now: number): void {
    if (this.entries.size < this.limits.maxEntries) return;
    this.dropExpired(now);
    // Still full: forget the oldest finished answers (Map keeps insertion order).
    for (const [id, e] of this.entries) {
      if (this.entries.size < this.limits.maxEntries) break;
      if (e.done) {
        this.remove(id, e);
        this.evictedTotal++;
      }
    }
  }
}
