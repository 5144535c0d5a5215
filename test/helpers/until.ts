// One poll-until-true for every test (issue #28 item 7). Thirteen copies had
// drifted apart: some said what they waited for, most said 'condition not met
// in time'; one counted loop turns, another failed through expect(). Prefer an
// event the code emits; poll only where the state has no event of its own.

export interface UntilOptions {
  /** How long to keep checking; default 10 s. */
  timeoutMs?: number;
  /** Pause between checks; default 20 ms. 0 still yields a macrotask turn, so streams and timers run between checks. */
  intervalMs?: number;
  /**
   * What is awaited, for the timeout's message; a function is called only on
   * timeout, so it can describe the state that was seen. Without it the
   * message quotes the predicate's source.
   */
  what?: string | (() => string);
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_INTERVAL_MS = 20;

/** Resolves once `predicate` holds; rejects after `timeoutMs` saying what it waited for. A throwing predicate fails at once. */
export async function until(predicate: () => boolean | Promise<boolean>, options: UntilOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${describeWait(options.what, predicate)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function describeWait(what: UntilOptions['what'], predicate: () => unknown): string {
  if (typeof what === 'function') return what();
  if (what !== undefined) return what;
  const source = String(predicate).replace(/\s+/g, ' ');
  return source.length > 300 ? `${source.slice(0, 300)}…` : source;
}
