/** Exponential backoff with full jitter: attempt 0 → about `initialMs`, capped at `maxMs`. */
export function backoffDelayMs(
  attempt: number,
  options: { initialMs?: number; maxMs?: number; factor?: number; jitter?: number; random?: () => number } = {},
): number {
  const initial = options.initialMs ?? 1_000;
  const max = options.maxMs ?? 30_000;
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.2;
  const random = options.random ?? Math.random;
  const base = Math.min(max, initial * Math.pow(factor, Math.max(0, attempt)));
  const spread = base * jitter;
  return Math.max(0, Math.min(max, Math.round(base - spread + random() * 2 * spread)));
}
