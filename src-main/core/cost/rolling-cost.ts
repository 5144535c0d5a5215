// Live cost per 1M output tokens from telemetry alone (no proxy rows needed:
// traffic that bypasses the proxy counts too). Over a rolling window each tick
// adds its generation (tok/s × seconds) and its time: busy time (some request
// in flight) shared equally among the host's busy services, so two models
// generating at once are not both charged the whole host.

export interface ServiceTick {
  id: string;
  genTokPerS: number | null;
  running: number | null;
}

export interface RollingCostFigures {
  /** Busy time only. */
  usageBasedUsdPerMTok: number | null;
  /** All observed time, idle included. */
  reservationBasedUsdPerMTok: number | null;
  /** Per service: its share of busy time ÷ its tokens. */
  perService: Map<string, number | null>;
}

interface Entry {
  atMs: number;
  seconds: number;
  busySeconds: number;
  tokens: Map<string, number>;
  shares: Map<string, number>;
}

/** A tick further than this from the previous one counts this long (a gap is not idle time we observed). */
const MAX_TICK_S = 5;

export class RollingCost {
  private readonly entries: Entry[] = [];
  private lastAtMs: number | null = null;

  constructor(readonly windowMs = 300_000) {}

  reset(): void {
    this.entries.length = 0;
    this.lastAtMs = null;
  }

  push(atMs: number, pricePerHourUsd: number | null, services: readonly ServiceTick[]): RollingCostFigures {
    const prev = this.lastAtMs;
    if (prev === null || atMs > prev) {
      this.lastAtMs = atMs;
      if (prev !== null) this.add(atMs, Math.min(MAX_TICK_S, (atMs - prev) / 1000), services);
    }
    while (this.entries.length > 0 && this.entries[0]!.atMs <= atMs - this.windowMs) this.entries.shift();
    return this.figures(pricePerHourUsd, services);
  }

  private add(atMs: number, seconds: number, services: readonly ServiceTick[]): void {
    const busy = services.filter((s) => (s.running ?? 0) > 0 || (s.genTokPerS ?? 0) > 0);
    const tokens = new Map<string, number>();
    for (const s of services) if (s.genTokPerS !== null && s.genTokPerS > 0) tokens.set(s.id, s.genTokPerS * seconds);
    const shares = new Map<string, number>(busy.map((s) => [s.id, seconds / busy.length]));
    this.entries.push({ atMs, seconds, busySeconds: busy.length > 0 ? seconds : 0, tokens, shares });
  }

  private figures(price: number | null, services: readonly ServiceTick[]): RollingCostFigures {
    let seconds = 0;
    let busy = 0;
    let tokens = 0;
    const svcTokens = new Map<string, number>();
    const svcSeconds = new Map<string, number>();
    for (const e of this.entries) {
      seconds += e.seconds;
      busy += e.busySeconds;
      for (const [id, n] of e.tokens) {
        tokens += n;
        svcTokens.set(id, (svcTokens.get(id) ?? 0) + n);
      }
      for (const [id, n] of e.shares) svcSeconds.set(id, (svcSeconds.get(id) ?? 0) + n);
    }
    const per = (secs: number, toks: number): number | null =>
      price === null || !(price > 0) || !(toks > 0) || !(secs > 0) ? null : ((price * secs) / 3600 / toks) * 1e6;
    const perService = new Map<string, number | null>();
    for (const s of services) perService.set(s.id, per(svcSeconds.get(s.id) ?? 0, svcTokens.get(s.id) ?? 0));
    return { usageBasedUsdPerMTok: per(busy, tokens), reservationBasedUsdPerMTok: per(seconds, tokens), perService };
  }
}
