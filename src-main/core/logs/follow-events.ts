// Follows made through the contract: each follower's queue becomes
// `logs.batch` events (at most one per interval per follow, each bounded, so
// a chatty server costs the renderer a few events a second; what the view
// cannot take waits in the queue, and past its bound is dropped and counted),
// and `logs.ended` when it ends. A follow lives while it is renewed: a window
// that went away without unfollowing stops costing a channel within a lease.
import { AppError, DisposableStore, systemClock, type Clock, type Disposable } from '../base/index.js';
import type { EventSink } from '../channel.js';
import { LogsErrorCode } from './errors.js';
import type { FollowOptions, LogFollow, LogsService } from './logs-service.js';

export interface LogFollowEventsOptions {
  logs: LogsService;
  emit: EventSink;
  clock?: Clock;
  /** Default 200 ms. */
  batchIntervalMs?: number;
  /** Entries per event; default 500. */
  maxBatchEntries?: number;
  /** Default 60 s. */
  leaseMs?: number;
}

interface Held {
  follow: LogFollow;
  expiresAt: number;
  timer: Disposable | null;
  subscriptions: DisposableStore;
  /** The index of the next entry sent: a reader counts what a backed-up event stream skipped from the gap. */
  nextIndex: number;
}

export class LogFollowEvents implements Disposable {
  private readonly held = new Map<string, Held>();
  private readonly clock: Clock;
  private readonly sweep: Disposable;

  constructor(private readonly options: LogFollowEventsOptions) {
    this.clock = options.clock ?? systemClock;
    this.sweep = this.clock.setInterval(() => this.expire(), Math.max(1_000, Math.floor(this.leaseMs / 4)));
  }

  get leaseMs(): number {
    return this.options.leaseMs ?? 60_000;
  }

  async start(label: string, serviceId: string, options: FollowOptions): Promise<LogFollow> {
    const follow = await this.options.logs.follow(label, serviceId, options);
    const held: Held = { follow, expiresAt: this.clock.now() + this.leaseMs, timer: null, subscriptions: new DisposableStore(), nextIndex: 0 };
    this.held.set(follow.id, held);
    held.subscriptions.add(follow.queue.onDidQueue(() => this.schedule(held)));
    held.subscriptions.add(
      follow.queue.onDidEnd((error) => {
        this.flush(held);
        this.drop(held);
        this.options.emit('logs.ended', {
          followId: follow.id,
          error: error ? { code: error.code, message: error.message, retryable: error.retryable, details: error.details } : null,
          endIndex: held.nextIndex,
        });
      }),
    );
    // What the shared follow handed over at once (its backlog) goes out with the first batch.
    if (follow.queue.queued > 0) this.schedule(held);
    return follow;
  }

  /** Extends the leases of the follows named; the others are named as unknown (they ended). */
  renew(ids: readonly string[]): { renewed: string[]; unknown: string[] } {
    const renewed: string[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const h = this.held.get(id);
      if (!h) unknown.push(id);
      else {
        h.expiresAt = this.clock.now() + this.leaseMs;
        renewed.push(id);
      }
    }
    return { renewed, unknown };
  }

  stop(id: string): boolean {
    const h = this.held.get(id);
    if (!h) return false;
    this.options.logs.unfollow(id);
    return true;
  }

  /** Throws LOGS_FOLLOW_UNKNOWN for an id not held. */
  require(id: string): LogFollow {
    const h = this.held.get(id);
    if (!h) throw new AppError(LogsErrorCode.FOLLOW_UNKNOWN, `no follow ${id} (it ended, its lease ran out, or the console restarted)`, { details: { followId: id } });
    return h.follow;
  }

  dispose(): void {
    void this.sweep.dispose();
    for (const id of [...this.held.keys()]) this.stop(id);
  }

  private schedule(h: Held): void {
    if (h.timer || !this.held.has(h.follow.id)) return;
    h.timer = this.clock.setTimeout(() => {
      h.timer = null;
      this.flush(h);
      if (h.follow.queue.queued > 0) this.schedule(h);
    }, this.options.batchIntervalMs ?? 200);
  }

  private flush(h: Held): void {
    const entries = h.follow.queue.take(this.options.maxBatchEntries ?? 500);
    if (entries.length === 0) return;
    const firstIndex = h.nextIndex;
    h.nextIndex += entries.length;
    this.options.emit('logs.batch', { followId: h.follow.id, entries, queued: h.follow.queue.queued, firstIndex });
  }

  private drop(h: Held): void {
    this.held.delete(h.follow.id);
    void h.timer?.dispose();
    h.timer = null;
    void h.subscriptions.dispose();
  }

  private expire(): void {
    const now = this.clock.now();
    for (const h of [...this.held.values()]) if (h.expiresAt <= now) this.stop(h.follow.id);
  }
}
