import type { Alert, AlertEvent, AlertKind, AlertSeverity, Baseline } from '../../../src-preload/contract/telemetry.js';
import { parseSeriesName, serviceSeries, type ServiceFigure } from '../../../src-preload/contract/index.js';
import { Emitter, type Clock, type Disposable } from '../base/index.js';
import { upstreamKey } from '../upstream/index.js';

// Degradation alerts. Each rule turns a host's tick into a condition with a
// severity (or none); a condition must hold for `sustainMs` before it is raised
// and must be absent for `clearMs` before it is cleared, so one odd sample
// neither raises nor clears. Events go to subscribers (the lead writes them to
// the audit log and pushes `alert.changed`).
//
// Rules:
// - throughput: generation tok/s below the model's baseline by ≥30 % (warning)
//   or ≥50 % (critical) while requests are running (idle is not slow);
// - kv_cache: KV-cache use above 95 %;
// - waiting_growing: requests waiting > 0 and higher at the end of the window
//   than at its start, never dropping to 0 in between;
// - host_stale: the host's telemetry could not be read.

export interface ServiceTick {
  serviceId: string;
  model: string | null;
  genTokPerS: number | null;
  running: number | null;
  waiting: number | null;
  kvCachePct: number | null;
}

export interface HostAlertTick {
  host: string;
  /** `CODE: message` when the host's telemetry is stale this tick. */
  staleReason: string | null;
  services: ServiceTick[];
}

export interface AlertThresholds {
  warnBelowFraction: number;
  criticalBelowFraction: number;
  kvCachePct: number;
  sustainMs: number;
  clearMs: number;
  waitingWindowMs: number;
  staleAfterMs: number;
}

export const DEFAULT_ALERT_THRESHOLDS: AlertThresholds = {
  warnBelowFraction: 0.3,
  criticalBelowFraction: 0.5,
  kvCachePct: 95,
  sustainMs: 60_000,
  clearMs: 30_000,
  waitingWindowMs: 60_000,
  staleAfterMs: 30_000,
};

interface Condition {
  severity: AlertSeverity;
  message: string;
  value: number | null;
  threshold: number | null;
  model: string | null;
}

interface Track {
  kind: AlertKind;
  host: string;
  serviceId: string | null;
  /** When the condition began (of any severity); null while absent. */
  since: number | null;
  /** When the worst severity began. */
  criticalSince: number | null;
  absentSince: number | null;
  last: Condition | null;
  alert: Alert | null;
}

export class AlertEngine implements Disposable {
  private readonly baselines = new Map<string, Baseline>();
  private readonly tracks = new Map<string, Track>();
  private readonly waitingHistory = new Map<string, { at: number; waiting: number }[]>();
  private readonly emitter = new Emitter<AlertEvent>();
  readonly onDidChange = this.emitter.on.bind(this.emitter);
  readonly thresholds: AlertThresholds;

  constructor(
    private readonly clock: Clock,
    thresholds: Partial<AlertThresholds> = {},
  ) {
    this.thresholds = { ...DEFAULT_ALERT_THRESHOLDS, ...thresholds };
  }

  setBaseline(model: string, tokPerS: number, source: Baseline['source'] = 'manual'): Baseline {
    const b: Baseline = { model, tokPerS, source, setAt: this.clock.now() };
    this.baselines.set(model, b);
    return b;
  }

  /**
   * A baseline read back from the store: it keeps the time it was set (the
   * operator or benchmark that set it then, not this start of the console).
   */
  restoreBaseline(stored: Baseline): Baseline {
    const b: Baseline = { model: stored.model, tokPerS: stored.tokPerS, source: stored.source, setAt: stored.setAt };
    this.baselines.set(b.model, b);
    return b;
  }

  clearBaseline(model: string): void {
    this.baselines.delete(model);
  }

  listBaselines(): Baseline[] {
    return [...this.baselines.values()];
  }

  /** Alerts currently raised, newest first. */
  list(): Alert[] {
    return [...this.tracks.values()]
      .map((t) => t.alert)
      .filter((a): a is Alert => a !== null)
      .sort((a, b) => b.raisedAt - a.raisedAt);
  }

  /** Feed one tick of every host; hosts missing from `hosts` are left as they are. */
  observe(hosts: readonly HostAlertTick[]): void {
    const now = this.clock.now();
    for (const h of hosts) {
      this.step('host_stale', h.host, null, now, h.staleReason === null ? null : { severity: 'warning', message: `telemetry stale: ${h.staleReason}`, value: null, threshold: null, model: null });
      for (const s of h.services) {
        this.step('throughput', h.host, s.serviceId, now, this.throughput(s));
        this.step('kv_cache', h.host, s.serviceId, now, this.kvCache(s));
        this.step('waiting_growing', h.host, s.serviceId, now, this.waiting(h.host, s, now));
      }
    }
  }

  private throughput(s: ServiceTick): Condition | null {
    const base = s.model === null ? undefined : this.baselines.get(s.model);
    if (base === undefined || s.genTokPerS === null || s.running === null || s.running <= 0) return null;
    const drop = 1 - s.genTokPerS / base.tokPerS;
    const severity: AlertSeverity | null =
      drop >= this.thresholds.criticalBelowFraction ? 'critical' : drop >= this.thresholds.warnBelowFraction ? 'warning' : null;
    if (severity === null) return null;
    return {
      severity,
      model: s.model,
      value: s.genTokPerS,
      threshold: base.tokPerS * (1 - (severity === 'critical' ? this.thresholds.criticalBelowFraction : this.thresholds.warnBelowFraction)),
      message: `${s.model}: ${s.genTokPerS.toFixed(1)} tok/s is ${Math.round(drop * 100)}% below the baseline ${base.tokPerS.toFixed(1)} tok/s`,
    };
  }

  private kvCache(s: ServiceTick): Condition | null {
    if (s.kvCachePct === null || s.kvCachePct <= this.thresholds.kvCachePct) return null;
    return {
      severity: 'warning',
      model: s.model,
      value: s.kvCachePct,
      threshold: this.thresholds.kvCachePct,
      message: `KV cache ${s.kvCachePct.toFixed(1)}% full (above ${this.thresholds.kvCachePct}%)`,
    };
  }

  private waiting(host: string, s: ServiceTick, now: number): Condition | null {
    const key = upstreamKey(host, s.serviceId);
    const hist = this.waitingHistory.get(key) ?? [];
    this.waitingHistory.set(key, hist);
    if (s.waiting === null) return null;
    hist.push({ at: now, waiting: s.waiting });
    while (hist.length > 2 && hist[1]!.at <= now - this.thresholds.waitingWindowMs) hist.shift();
    const first = hist[0]!;
    if (now - first.at < this.thresholds.waitingWindowMs) return null;
    if (hist.some((p) => p.waiting <= 0) || s.waiting <= first.waiting) return null;
    return {
      severity: 'warning',
      model: s.model,
      value: s.waiting,
      threshold: first.waiting,
      message: `waiting requests grew from ${first.waiting} to ${s.waiting} over ${Math.round((now - first.at) / 1000)} s`,
    };
  }

  private step(kind: AlertKind, host: string, serviceId: string | null, now: number, cond: Condition | null): void {
    const id = `${kind}:${host}${serviceId === null ? '' : `/${serviceId}`}`;
    let t = this.tracks.get(id);
    if (t === undefined) {
      if (cond === null) return;
      t = { kind, host, serviceId, since: null, criticalSince: null, absentSince: null, last: null, alert: null };
      this.tracks.set(id, t);
    }
    // host_stale is sustained by its own threshold
    const sustain = kind === 'host_stale' ? this.thresholds.staleAfterMs : this.thresholds.sustainMs;
    if (cond === null) {
      t.since = null;
      t.criticalSince = null;
      if (t.alert === null) {
        this.tracks.delete(id);
        return;
      }
      t.absentSince ??= now;
      if (now - t.absentSince >= this.thresholds.clearMs) {
        const alert = { ...t.alert, updatedAt: now };
        this.tracks.delete(id);
        this.emitter.fire({ type: 'cleared', at: now, alert });
      }
      return;
    }
    t.absentSince = null;
    t.since ??= now;
    if (cond.severity === 'critical') t.criticalSince ??= now;
    else t.criticalSince = null;
    t.last = cond;
    // Sustained critical → critical; sustained (any severity) → at least warning.
    const severity: AlertSeverity | null =
      t.criticalSince !== null && now - t.criticalSince >= sustain ? 'critical' : now - t.since >= sustain ? 'warning' : null;
    if (severity === null) {
      if (t.alert !== null) t.alert = { ...t.alert, message: cond.message, value: cond.value, updatedAt: now };
      return;
    }
    if (t.alert === null) {
      t.alert = {
        id,
        kind,
        severity,
        host,
        serviceId,
        model: cond.model,
        message: cond.message,
        value: cond.value,
        threshold: cond.threshold,
        raisedAt: now,
        updatedAt: now,
      };
      this.emitter.fire({ type: 'raised', at: now, alert: t.alert });
      return;
    }
    const changed = t.alert.severity !== severity;
    t.alert = { ...t.alert, severity, message: cond.message, value: cond.value, threshold: cond.threshold, updatedAt: now };
    if (changed) this.emitter.fire({ type: 'changed', at: now, alert: t.alert });
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** A telemetry tick (contract values) → alert input, reading `svc.<id>.*` series names. */
export function alertTickFromValues(
  host: string,
  staleReason: string | null,
  values: Readonly<Record<string, number | null>>,
  modelOf: (serviceId: string) => string | null,
): HostAlertTick {
  const ids = new Set<string>();
  for (const k of Object.keys(values)) {
    const name = parseSeriesName(k);
    if (name?.scope === 'svc') ids.add(name.serviceId);
  }
  const v = (id: string, f: ServiceFigure): number | null => values[serviceSeries(id, f)] ?? null;
  return {
    host,
    staleReason,
    services: [...ids].map((id) => ({
      serviceId: id,
      model: modelOf(id),
      genTokPerS: v(id, 'gen_tok_s'),
      running: v(id, 'running'),
      waiting: v(id, 'waiting'),
      kvCachePct: v(id, 'kv_pct'),
    })),
  };
}
