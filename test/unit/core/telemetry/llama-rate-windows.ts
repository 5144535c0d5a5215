// What the llama-server rate tests compare: the console's figures at each
// reading against a reference measured apart from the console, over every
// window of at least 5 s between two readings.

/** One reading as the console showed it, with the reference at that moment. */
export interface ReplayPoint {
  atMs: number;
  /** The console's generation rate over the interval ending here (null: skipped). */
  genTokPerS: number | null;
  /** The console's KV figure, 0–100. */
  kvPct: number | null;
  /** Reference: tokens generated so far (what the clients received, or the simulator's own count). */
  generated: number;
  /** Reference: the server's own finished-request counter (tokens_predicted_total). */
  counter: number;
  /** Reference: tokens the busy slots hold ÷ their context, 0–100. */
  truthKvPct: number;
}

export interface RateWindow {
  fromMs: number;
  toMs: number;
  /** Time-weighted mean of the rates the console showed over the window's intervals. */
  console: number;
  /** Δ generated ÷ Δt. */
  truth: number;
  /** Δ counter ÷ Δt. */
  counter: number;
}

/** Reading times: every `ms`, or drawn between `minMs` and `maxMs` (seeded, so a failure can be replayed). */
export function spacing(fromMs: number, toMs: number, every: number | { minMs: number; maxMs: number; seed: number }): number[] {
  const out: number[] = [];
  let rand = typeof every === 'number' ? 0 : every.seed >>> 0;
  const step = (): number => {
    if (typeof every === 'number') return every;
    // xorshift32
    rand ^= rand << 13;
    rand ^= rand >>> 17;
    rand ^= rand << 5;
    rand >>>= 0;
    return every.minMs + ((rand % 10_000) / 10_000) * (every.maxMs - every.minMs);
  };
  for (let t = fromMs; t <= toMs; t += step()) out.push(t);
  return out;
}

/** Every window from one reading to the first reading at least `windowMs` later. */
export function rateWindows(points: readonly ReplayPoint[], windowMs = 5_000): RateWindow[] {
  const out: RateWindow[] = [];
  for (let i = 0; i < points.length; i++) {
    const a = points[i]!;
    const j = points.findIndex((p, k) => k > i && p.atMs - a.atMs >= windowMs);
    if (j < 0) break;
    const b = points[j]!;
    let weighted = 0;
    let ms = 0;
    for (let k = i + 1; k <= j; k++) {
      const r = points[k]!.genTokPerS;
      if (r === null) continue;
      const dt = points[k]!.atMs - points[k - 1]!.atMs;
      weighted += r * dt;
      ms += dt;
    }
    const dt = (b.atMs - a.atMs) / 1000;
    out.push({ fromMs: a.atMs, toMs: b.atMs, console: ms > 0 ? (weighted / ms) : NaN, truth: (b.generated - a.generated) / dt, counter: (b.counter - a.counter) / dt });
  }
  return out;
}

/** The largest relative error of the console against a reference over the windows. */
export function worstRelative(windows: readonly RateWindow[], ref: 'truth' | 'counter'): { error: number; window: RateWindow | null } {
  let worst = { error: 0, window: null as RateWindow | null };
  for (const w of windows) {
    const e = Number.isFinite(w.console) ? Math.abs(w.console - w[ref]) / w[ref] : Infinity;
    if (e > worst.error || worst.window === null) worst = { error: e, window: w };
  }
  return worst;
}

export function summary(windows: readonly RateWindow[]): string {
  const mean = (f: (w: RateWindow) => number) => windows.reduce((a, w) => a + f(w), 0) / windows.length;
  return `${windows.length} windows: console ${mean((w) => w.console).toFixed(1)} tok/s, reference ${mean((w) => w.truth).toFixed(1)}, server counter ${mean((w) => w.counter).toFixed(1)}; worst vs reference ${(100 * worstRelative(windows, 'truth').error).toFixed(1)} %, vs counter ${(100 * worstRelative(windows, 'counter').error).toFixed(1)} %`;
}
