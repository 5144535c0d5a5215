/**
 * Turns samples of a monotonically increasing counter into a rate per second.
 *
 * - The first sample gives null (nothing to compare with).
 * - A value lower than the previous one means the server restarted and its
 *   counter began again at zero. We cannot know when in the interval that
 *   happened, so that interval gives null (skipped) and the new value becomes
 *   the baseline; the next sample gives an honest rate again.
 * - Samples that do not move time forward, and non-finite values, give null and
 *   leave the baseline as it was.
 */
export class CounterRate {
  private last: { value: number; atMs: number } | null = null;
  private _resets = 0;

  get resets(): number {
    return this._resets;
  }

  push(value: number, atMs: number): number | null {
    if (!Number.isFinite(value) || !Number.isFinite(atMs)) return null;
    const prev = this.last;
    if (prev === null) {
      this.last = { value, atMs };
      return null;
    }
    if (atMs <= prev.atMs) return null;
    this.last = { value, atMs };
    if (value < prev.value) {
      this._resets++;
      return null;
    }
    return ((value - prev.value) * 1000) / (atMs - prev.atMs);
  }

  reset(): void {
    this.last = null;
  }
}
