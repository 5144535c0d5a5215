// The host view's data outside React: lines per panel, loaded from a series
// query and extended by live ticks; charts subscribe and get setOption
// updates directly — a tick never re-renders a component.
import type { HostTick, SeriesRange, SeriesResult } from '../../../../src-preload/contract/telemetry.js';
import { SERIES_RANGES } from '../../../../src-preload/contract/telemetry.js';
import { appendTick, firstKnownMs, isLiveRange, panelSeries, type PanelDef, type Point } from './host-panels.js';

/** The x range the charts show; `fitted` when it was cut to the data (less data than the range). */
export interface ChartWindow {
  fromMs: number;
  toMs: number;
  fitted?: boolean;
}

export type PanelListener = (lines: ReadonlyMap<string, Point[]>, window: ChartWindow) => void;

/**
 * The range, cut to start at the first known sample when the data span is
 * shorter (a fresh start): the live data then fills the chart instead of a
 * strip at its right edge, and nothing is drawn before the data begins. A few
 * seconds at least, so a single first sample still has an axis.
 */
export function fitWindow(fromMs: number, toMs: number, firstMs: number | null, minSpanMs = 5_000): ChartWindow {
  if (firstMs === null || firstMs <= fromMs) return { fromMs, toMs };
  const start = Math.max(fromMs, Math.min(firstMs, toMs - minSpanMs));
  return start > fromMs ? { fromMs: start, toMs, fitted: true } : { fromMs, toMs };
}

export class HostSeriesFeed {
  private readonly lines = new Map<string, Map<string, Point[]>>();
  private readonly listeners = new Map<string, Set<PanelListener>>();
  private range: SeriesRange;
  private toMs = 0;

  constructor(
    readonly host: string,
    private readonly panels: readonly PanelDef[],
    range: SeriesRange,
  ) {
    this.range = range;
  }

  window(): ChartWindow {
    return fitWindow(this.toMs - SERIES_RANGES[this.range].spanMs, this.toMs, firstKnownMs(this.lines.values()));
  }

  linesOf(panelId: string): ReadonlyMap<string, Point[]> {
    return this.lines.get(panelId) ?? new Map();
  }

  /** Replace everything with a query's answer (range change, reload). */
  load(result: SeriesResult): void {
    this.range = result.range;
    this.toMs = result.toMs;
    for (const p of this.panels) this.lines.set(p.id, panelSeries(p, result));
    for (const p of this.panels) this.emit(p.id);
  }

  /** One live tick of this host; ignored for ranges that do not move live. */
  pushTick(tick: HostTick, atMs: number): void {
    if (tick.host !== this.host || !isLiveRange(this.range) || atMs <= this.toMs - 1) return;
    this.toMs = atMs;
    for (const p of this.panels) {
      const lines = this.lines.get(p.id) ?? new Map<string, Point[]>();
      this.lines.set(p.id, lines);
      appendTick(lines, p, tick, atMs, this.range);
      this.emit(p.id);
    }
  }

  subscribe(panelId: string, listener: PanelListener): () => void {
    let set = this.listeners.get(panelId);
    if (!set) {
      set = new Set();
      this.listeners.set(panelId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  private emit(panelId: string): void {
    const set = this.listeners.get(panelId);
    if (!set) return;
    const lines = this.linesOf(panelId);
    const w = this.window();
    for (const l of [...set]) l(lines, w);
  }
}
