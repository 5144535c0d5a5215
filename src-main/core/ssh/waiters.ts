// The callers a session owes an answer: those waiting on the attempt in flight
// (connect), and those waiting, with a deadline, for the link to be up (tunnel
// streams opened during a reconnect).
import type { AppError, Clock } from '../base/index.js';

interface Waiter {
  resolve: () => void;
  reject: (err: AppError) => void;
}

/** Everyone who joined the attempt in flight; settled together when it ends. */
export class AttemptWaiters {
  private waiters: Waiter[] = [];

  next(): Promise<void> {
    return new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  settle(err: AppError | null): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) {
      if (err) w.reject(err);
      else w.resolve();
    }
  }
}

/** Waits for "connected", each with its own deadline. */
export class ConnectedWaiters {
  private readonly waiters = new Set<Waiter>();

  /** Resolves on resolveAll(); rejects on rejectAll() or, after `timeoutMs`, with `onTimeout()` (built then). */
  wait(clock: Clock, timeoutMs: number, onTimeout: () => AppError): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          void timer.dispose();
          resolve();
        },
        reject: (err) => {
          void timer.dispose();
          reject(err);
        },
      };
      const timer = clock.setTimeout(() => {
        this.waiters.delete(waiter);
        reject(onTimeout());
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  resolveAll(): void {
    for (const w of this.take()) w.resolve();
  }

  rejectAll(err: AppError): void {
    for (const w of this.take()) w.reject(err);
  }

  private take(): Waiter[] {
    const waiters = [...this.waiters];
    this.waiters.clear();
    return waiters;
  }
}
