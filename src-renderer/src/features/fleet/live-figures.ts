// Latest `telemetry.tick` value per host series (TTFT p95, cost per 1M tokens)
// for the fleet cards, kept outside the store: a cell subscribes to its own
// key and re-renders only when its value changes, never the card.
import type { TelemetryTick } from '../../../../src-preload/contract/telemetry.js';
import type { Transport } from '../../transport/index.js';

type Listener = () => void;

export class LiveFigures {
  private readonly values = new Map<string, number | null>();
  private readonly listeners = new Map<string, Set<Listener>>();

  static key(host: string, metric: string): string {
    return `${host}\u0000${metric}`;
  }

  /** undefined: never reported (no telemetry yet); null: unknown or stale. */
  get(key: string): number | null | undefined {
    return this.values.get(key);
  }

  record(tick: TelemetryTick): void {
    for (const h of tick.hosts) {
      for (const [metric, value] of Object.entries(h.values)) {
        const key = LiveFigures.key(h.host, metric);
        const v = value;
        if (this.values.get(key) === v) continue;
        this.values.set(key, v);
        const set = this.listeners.get(key);
        if (set) for (const l of [...set]) l();
      }
    }
  }

  subscribe(key: string, listener: Listener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(key);
    };
  }
}

const byTransport = new WeakMap<Transport, LiveFigures>();

/** One LiveFigures per transport, fed by its `telemetry.tick` events for the page's lifetime. */
export function liveFiguresFor(transport: Transport): LiveFigures {
  let live = byTransport.get(transport);
  if (live === undefined) {
    const created = new LiveFigures();
    transport.on('telemetry.tick', (tick) => created.record(tick));
    byTransport.set(transport, (live = created));
  }
  return live;
}

/** "850 ms", "1.25 s". */
export const formatSeconds = (s: number): string => (s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(s < 10 ? 2 : 1)} s`);
/** Always labelled an estimate. */
export const formatUsdPerMTok = (usd: number): string => `$${usd.toFixed(usd < 10 ? 2 : 1)} est.`;
