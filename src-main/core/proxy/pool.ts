// The priority pool of one upstream: a fixed number of slots, per-class caps,
// and one bounded FIFO queue per class. Dispatch order is interactive, system,
// batch; system and batch never take the slots reserved for interactive.
// Every waiter leaves with a lease or a coded refusal — never silently.
import type { PoolCaps } from '../../../src-preload/contract/index.js';
import { AppError, type Clock, type Disposable } from '../base/index.js';
import { CLASS_ORDER, perClass, type TrafficClass } from './classes.js';
import { ProxyErrorCode } from './errors.js';

export interface PoolLimits {
  slots: number;
  caps: PoolCaps;
}

export interface PoolPolicy {
  holdBudgetMs: Record<TrafficClass, number>;
  queueBound: Record<TrafficClass, number>;
}

/** Why an upstream drains, for the Retry-After of requests refused meanwhile. */
export interface DrainInfo {
  /** Epoch ms when in-flight work is cut. */
  deadlineAt: number;
  /** What the drain is for: a restart is expected back; a sleep or offload leaves it asleep; else unknown. */
  purpose: 'restart' | 'sleep' | 'offload' | 'maintenance';
  /** How long the action after the drain is expected to take (ms); null when unknown. */
  expectedActionMs: number | null;
}

export interface Lease {
  readonly cls: TrafficClass;
  /** Monotonic ms when the slot was granted. */
  readonly grantedAt: number;
  /** Gives the slot back; idempotent. `served` false: the upstream never answered (not a service-time sample). */
  release(served?: boolean): void;
}

export interface QueueTicket {
  /** 1 = next to be served (counting waiters of higher classes ahead). */
  position(): number;
  /** Expected wait from the measured service times; null before any was measured. */
  etaMs(): number | null;
  readonly lease: Promise<Lease>;
  /** Leaves the queue (client went away); the lease promise rejects with PROXY_CANCELLED. */
  cancel(): void;
}

interface Waiter {
  cls: TrafficClass;
  enqueuedAt: number;
  resolve(lease: Lease): void;
  reject(err: AppError): void;
  timer: Disposable | null;
  done: boolean;
}

/** Defaults from a slot count: a quarter (at least one, when there are two or more) reserved for interactive. */
export function defaultCaps(slots: number): PoolCaps {
  const reservedInteractive = slots >= 2 ? Math.max(1, Math.floor(slots / 4)) : 0;
  return { reservedInteractive, interactive: slots, system: Math.max(1, Math.ceil(slots / 2)), batch: slots - reservedInteractive };
}

export function validateCaps(slots: number, caps: PoolCaps): string | null {
  if (caps.reservedInteractive > slots) return `reservedInteractive (${caps.reservedInteractive}) exceeds the ${slots} slots`;
  for (const cls of CLASS_ORDER) if (caps[cls] > slots) return `${cls} cap (${caps[cls]}) exceeds the ${slots} slots`;
  if (caps.interactive < 1) return 'interactive must be allowed at least one slot';
  return null;
}

const EWMA_ALPHA = 0.2;

export class PriorityPool {
  private limits: PoolLimits;
  private readonly inFlight = perClass(() => 0);
  private total = 0;
  private readonly queues = perClass((): Waiter[] => []);
  private draining = false;
  private serviceMsEwma: number | null = null;
  private drainWaiters: Array<() => void> = [];

  constructor(
    readonly key: string,
    limits: PoolLimits,
    private policy: PoolPolicy,
    private readonly clock: Clock,
    private readonly monotonic: () => number,
  ) {
    this.limits = { slots: limits.slots, caps: { ...limits.caps } };
  }

  get slots(): number {
    return this.limits.slots;
  }

  get caps(): PoolCaps {
    return { ...this.limits.caps };
  }

  get isDraining(): boolean {
    return this.draining;
  }

  get serviceMsEstimate(): number | null {
    return this.serviceMsEwma;
  }

  inFlightOf(cls: TrafficClass): number {
    return this.inFlight[cls];
  }

  queuedOf(cls: TrafficClass): number {
    return this.queues[cls].length;
  }

  get inFlightTotal(): number {
    return this.total;
  }

  get queuedTotal(): number {
    return this.queues.interactive.length + this.queues.system.length + this.queues.batch.length;
  }

  /**
   * Slots a request of `cls` could take now: what the slot count, its class cap and the interactive
   * reserve leave, less the waiters of this and higher classes ahead of it (0 when it would queue).
   */
  freeSlots(cls: TrafficClass): number {
    if (this.draining) return 0;
    const { slots, caps } = this.limits;
    let free = Math.min(slots - this.total, caps[cls] - this.inFlight[cls]);
    if (cls !== 'interactive') free = Math.min(free, slots - caps.reservedInteractive - (this.total - this.inFlight.interactive));
    for (const c of CLASS_ORDER) {
      free -= this.queues[c].length;
      if (c === cls) break;
    }
    return Math.max(0, free);
  }

  /** Set while draining: when the drain cuts in-flight work, and what follows it (the lifecycle action). */
  drainInfo: DrainInfo | null = null;

  setLimits(limits: PoolLimits): void {
    this.limits = { slots: limits.slots, caps: { ...limits.caps } };
    this.pump();
  }

  setPolicy(policy: PoolPolicy): void {
    this.policy = policy;
  }

  /**
   * A slot now (fast path, no promise) when nobody of this or a higher class
   * waits and the caps allow it; otherwise null.
   */
  tryAcquire(cls: TrafficClass): Lease | null {
    if (this.draining) return null;
    for (const c of CLASS_ORDER) {
      if (this.queues[c].length > 0) return null;
      if (c === cls) break;
    }
    return this.admissible(cls) ? this.grant(cls) : null;
  }

  /** Joins the class queue. Throws PROXY_QUEUE_FULL (bound reached) or PROXY_DRAINING at once. */
  enqueue(cls: TrafficClass, holdBudgetMs?: number): QueueTicket {
    if (this.draining) throw new AppError(ProxyErrorCode.DRAINING, `upstream ${this.key} is draining`, { retryable: true });
    const queue = this.queues[cls];
    if (queue.length >= this.policy.queueBound[cls]) {
      throw new AppError(ProxyErrorCode.QUEUE_FULL, `the ${cls} queue of ${this.key} is full (${queue.length} waiting)`, {
        retryable: true,
        details: { depth: queue.length },
      });
    }
    let resolve!: (lease: Lease) => void;
    let reject!: (err: AppError) => void;
    const lease = new Promise<Lease>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const waiter: Waiter = { cls, enqueuedAt: this.monotonic(), resolve, reject, timer: null, done: false };
    const budget = Math.min(this.policy.holdBudgetMs[cls], holdBudgetMs ?? Infinity);
    waiter.timer = this.clock.setTimeout(() => {
      this.remove(waiter);
      this.settle(waiter, null, new AppError(ProxyErrorCode.HOLD_TIMEOUT, `no ${cls} slot on ${this.key} within ${budget} ms`, {
        retryable: true,
        details: { holdBudgetMs: budget },
      }));
    }, budget);
    queue.push(waiter);
    this.pump();
    return {
      lease,
      position: () => this.positionOf(waiter),
      etaMs: () => this.etaFor(waiter),
      cancel: () => {
        if (waiter.done) return;
        this.remove(waiter);
        this.settle(waiter, null, new AppError(ProxyErrorCode.CANCELLED, 'the client left the queue'));
      },
    };
  }

  /**
   * Stops admitting new requests (PROXY_DRAINING). Requests already queued keep
   * waiting, within their hold budgets, for `resume()` — a restart or sleep
   * does not lose them — unless `refuseQueued` (shutdown, removed upstream)
   * answers them PROXY_DRAINING at once. Resolves once nothing is in flight.
   */
  drain(refuseQueued = false): Promise<void> {
    this.draining = true;
    if (refuseQueued) {
      for (const cls of CLASS_ORDER) {
        for (const w of this.queues[cls].splice(0)) {
          this.settle(w, null, new AppError(ProxyErrorCode.DRAINING, `upstream ${this.key} is draining`, { retryable: true }));
        }
      }
    }
    if (this.total === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  resume(): void {
    this.draining = false;
    this.drainInfo = null;
    this.pump();
  }

  /** How many waiters will be served before this one (1-based). */
  private positionOf(waiter: Waiter): number {
    if (waiter.done) return 0;
    let ahead = 0;
    for (const c of CLASS_ORDER) {
      if (c === waiter.cls) return ahead + this.queues[c].indexOf(waiter) + 1;
      ahead += this.queues[c].length;
    }
    return ahead + 1;
  }

  private etaFor(waiter: Waiter): number | null {
    const position = this.positionOf(waiter);
    if (position === 0) return 0;
    if (this.serviceMsEwma === null) return null;
    const usable = Math.max(1, this.usableSlots(waiter.cls));
    return Math.round(Math.ceil(position / usable) * this.serviceMsEwma);
  }

  private usableSlots(cls: TrafficClass): number {
    const { slots, caps } = this.limits;
    if (cls === 'interactive') return Math.min(slots, caps.interactive);
    return Math.min(caps[cls], slots - caps.reservedInteractive);
  }

  private admissible(cls: TrafficClass): boolean {
    const { slots, caps } = this.limits;
    if (this.total >= slots || this.inFlight[cls] >= caps[cls]) return false;
    if (cls === 'interactive') return true;
    return this.total - this.inFlight.interactive < slots - caps.reservedInteractive;
  }

  private grant(cls: TrafficClass): Lease {
    this.inFlight[cls]++;
    this.total++;
    const grantedAt = this.monotonic();
    let released = false;
    return {
      cls,
      grantedAt,
      release: (served = true) => {
        if (released) return;
        released = true;
        this.inFlight[cls]--;
        this.total--;
        if (served) {
          const ms = this.monotonic() - grantedAt;
          this.serviceMsEwma = this.serviceMsEwma === null ? ms : this.serviceMsEwma + EWMA_ALPHA * (ms - this.serviceMsEwma);
        }
        if (this.total === 0 && this.drainWaiters.length > 0) for (const r of this.drainWaiters.splice(0)) r();
        this.pump();
      },
    };
  }

  private pump(): void {
    if (this.draining) return;
    for (const cls of CLASS_ORDER) {
      const queue = this.queues[cls];
      while (queue.length > 0 && this.admissible(cls)) {
        const w = queue.shift()!;
        this.settle(w, this.grant(cls), null);
      }
    }
  }

  private remove(waiter: Waiter): void {
    const queue = this.queues[waiter.cls];
    const i = queue.indexOf(waiter);
    if (i >= 0) queue.splice(i, 1);
  }

  private settle(waiter: Waiter, lease: Lease | null, err: AppError | null): void {
    if (waiter.done) {
      lease?.release(false);
      return;
    }
    waiter.done = true;
    void waiter.timer?.dispose();
    if (lease) waiter.resolve(lease);
    else waiter.reject(err!);
  }
}
