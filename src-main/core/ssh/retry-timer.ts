// When a session's next automatic attempt runs: exponential backoff with
// jitter over consecutive failures, started over on success or by the operator.
import { backoffDelayMs, type Clock, type Disposable } from '../base/index.js';

type BackoffOptions = NonNullable<Parameters<typeof backoffDelayMs>[1]>;

export class RetryTimer {
  private attempt = 0;
  private timer: Disposable | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly backoff: () => BackoffOptions,
  ) {}

  /** True while a retry is scheduled and has not fired yet. */
  get pending(): boolean {
    return this.timer !== null;
  }

  /** Replaces any scheduled retry with `run` after the next backoff delay; returns the epoch ms it fires at. */
  schedule(run: () => void): number {
    const delay = backoffDelayMs(this.attempt++, this.backoff());
    const at = this.clock.now() + delay;
    void this.timer?.dispose();
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      run();
    }, delay);
    return at;
  }

  /** The link came up: the next failure waits the shortest delay again. */
  reset(): void {
    this.attempt = 0;
  }

  /** Cancels a scheduled retry and starts the backoff over. */
  stop(): void {
    void this.timer?.dispose();
    this.timer = null;
    this.attempt = 0;
  }
}
