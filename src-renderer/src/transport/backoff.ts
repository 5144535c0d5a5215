/** Reconnect delay: 0.5 s doubling to a 10 s ceiling, with up to 20 % jitter so tabs do not stampede. */
export const BACKOFF_INITIAL_MS = 500;
export const BACKOFF_MAX_MS = 10_000;

export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** Math.max(0, attempt));
  const jitter = 1 - 0.2 * random();
  return Math.round(Math.min(BACKOFF_MAX_MS, base) * jitter);
}
