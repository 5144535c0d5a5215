// A token bucket per limit (requests a minute, tokens a minute): it holds up to
// one minute's allowance, refills continuously at perMinute / 60 000 per ms, and
// may go below zero when a settled request used more than it reserved (the debt
// is paid by waiting). Times are monotonic milliseconds handed in by the caller.

export class TokenBucket {
  private level: number;
  private at: number;

  /** `level`: what it starts with (default full; a changed limit carries the old bucket's level). */
  constructor(
    readonly perMinute: number,
    now: number,
    level: number = perMinute,
  ) {
    this.level = Math.min(perMinute, level);
    this.at = now;
  }

  private refill(now: number): void {
    if (now > this.at) {
      this.level = Math.min(this.perMinute, this.level + ((now - this.at) * this.perMinute) / 60_000);
      this.at = now;
    }
  }

  /**
   * Milliseconds until `amount` fits (0: now). An amount over a minute's allowance waits for a full bucket
   * (it could never fit otherwise). Rounded up to whole seconds by the caller, a client that waits that long
   * is admitted: the refill over the wait is at least what was missing.
   */
  waitMs(amount: number, now: number): number {
    this.refill(now);
    const missing = Math.min(amount, this.perMinute) - this.level;
    // A hair under (float rounding of the refill) counts as there.
    return missing <= 1e-9 ? 0 : (missing * 60_000) / this.perMinute;
  }

  take(amount: number, now: number): void {
    this.refill(now);
    this.level -= amount;
  }

  /** Returns part of a reservation (never above a minute's allowance), or charges more when `amount` < 0. */
  give(amount: number, now: number): void {
    this.refill(now);
    this.level = Math.min(this.perMinute, this.level + amount);
  }

  /** What is there now (for tests and figures). */
  available(now: number): number {
    this.refill(now);
    return this.level;
  }
}

/** Whole seconds for Retry-After: never 0 for a refusal, and never less than the wait. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
