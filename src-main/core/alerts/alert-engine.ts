import type { Alert, AlertContextLine, AlertEvent, AlertKind, AlertSeverity, Baseline, LogFailureKind } from '../../../src-preload/contract/index.js';
import { LogFailureKindSchema } from '../../../src-preload/contract/index.js';
import { Emitter, type Clock, type Disposable } from '../base/index.js';
import { upstreamKey } from '../upstream/index.js';
import type { HostAlertTick, ServiceTick } from './alert-tick.js';
import { healthRound, HostEventMemory, type HealthFinding, type HostHealthAlertInput } from './health-rules.js';
import { DEFAULT_HOST_ALERT_SETTINGS, type HostAlertSettings } from './settings.js';

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
// From host health (health-rules.ts): disk_low (with hysteresis),
// gpu_process_unknown, gpu_throttle, gpu_fault (pending retirement: a state;
// Xid / ECC rise: events) and host_rebooted (an event). From service logs:
// log_failure (an event, rate-limited per service). An event-like alert is
// raised at once and clears by itself `eventHoldMs` after its last event.

export interface AlertThresholds {
  warnBelowFraction: number;
  criticalBelowFraction: number;
  kvCachePct: number;
  sustainMs: number;
  clearMs: number;
  waitingWindowMs: number;
  staleAfterMs: number;
  /** A low disk or an unknown GPU process must be seen this long before it is raised. */
  healthSustainMs: number;
}

export const DEFAULT_ALERT_THRESHOLDS: AlertThresholds = {
  warnBelowFraction: 0.3,
  criticalBelowFraction: 0.5,
  kvCachePct: 95,
  sustainMs: 60_000,
  clearMs: 30_000,
  waitingWindowMs: 60_000,
  staleAfterMs: 30_000,
  healthSustainMs: 30_000,
};

interface Condition {
  severity: AlertSeverity;
  message: string;
  value: number | null;
  threshold: number | null;
  model: string | null;
  gpuIndex?: number | null;
  command?: string | null;
  context?: readonly AlertContextLine[];
}

/** Who an alert is about: `part` tells apart several alerts of one kind on one host or service (a disk, a PID, a GPU). */
interface Subject {
  kind: AlertKind;
  host: string;
  serviceId: string | null;
  part?: string;
}

/** Failure lines one read of a service's log found (the log watcher's LogFailureFound satisfies it). */
export interface LogFailureInput {
  readonly host: string;
  readonly serviceId: string;
  /** Lines the classifier flagged in this read. */
  readonly matched: number;
  readonly kinds: readonly LogFailureKind[];
  /** The flagged lines and a few around them, masked and bounded. */
  readonly context: readonly AlertContextLine[];
}

/** Failures that stop a server or lose its GPU; the rest (a traceback, a refused request) warn. */
const CRITICAL_LOG_FAILURES: ReadonlySet<LogFailureKind> = new Set<LogFailureKind>(['cuda-oom', 'engine-dead', 'model-load-failed', 'port-in-use', 'disk-full', 'nccl-error', 'xid']);

const idOf = (s: Subject): string => `${s.kind}:${s.host}${s.serviceId === null ? '' : `/${s.serviceId}`}${s.part === undefined ? '' : `#${s.part}`}`;

interface Track {
  kind: AlertKind;
  host: string;
  serviceId: string | null;
  part?: string;
  /** Event-like alerts: when the current rate-limit window began (the raise, or the last renewal). */
  windowStart?: number;
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
  private readonly eventMemory = new Map<string, HostEventMemory>();
  private readonly emitter = new Emitter<AlertEvent>();
  readonly onDidChange = this.emitter.on.bind(this.emitter);
  readonly thresholds: AlertThresholds;

  constructor(
    private readonly clock: Clock,
    thresholds: Partial<AlertThresholds> = {},
    /** The host's disk, throttle, hold and rate-limit settings (config's `alerts` over defaults). */
    private readonly settingsOf: (host: string) => HostAlertSettings = () => DEFAULT_HOST_ALERT_SETTINGS,
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
    const { sustainMs, clearMs, staleAfterMs } = this.thresholds;
    for (const h of hosts) {
      const stale = h.staleReason === null ? null : { severity: 'warning' as const, message: `telemetry stale: ${h.staleReason}`, value: null, threshold: null, model: null };
      // host_stale is sustained by its own threshold
      this.step({ kind: 'host_stale', host: h.host, serviceId: null }, now, stale, staleAfterMs, clearMs);
      for (const s of h.services) {
        const subject = (kind: AlertKind): Subject => ({ kind, host: h.host, serviceId: s.serviceId });
        this.step(subject('throughput'), now, this.throughput(s), sustainMs, clearMs);
        this.step(subject('kv_cache'), now, this.kvCache(s), sustainMs, clearMs);
        this.step(subject('waiting_growing'), now, this.waiting(h.host, s, now), sustainMs, clearMs);
      }
    }
    this.expireEvents(now);
  }

  /**
   * One health round of each host: state findings are sustained and cleared as
   * the degradation rules are (disks with their hysteresis), events raised at
   * once. A kind the round could not read (stale, faults not read yet) is left as it was.
   */
  observeHealth(hosts: readonly HostHealthAlertInput[]): void {
    const now = this.clock.now();
    for (const h of hosts) {
      const settings = this.settingsOf(h.label);
      let memory = this.eventMemory.get(h.label);
      if (memory === undefined) this.eventMemory.set(h.label, (memory = new HostEventMemory()));
      const isActive = (part: string) => this.tracks.get(idOf({ kind: 'disk_low', host: h.label, serviceId: null, part }))?.alert != null;
      const round = healthRound(h, settings, memory, now, isActive);
      const present = new Set<string>();
      for (const f of round.states) {
        const subject = { kind: f.kind, host: h.label, serviceId: f.serviceId, part: f.part };
        present.add(idOf(subject));
        // A throttle's minute is in its condition already; a pending retirement is news at once.
        const sustain = f.kind === 'disk_low' || f.kind === 'gpu_process_unknown' ? this.thresholds.healthSustainMs : 0;
        this.step(subject, now, conditionOf(f), sustain, this.thresholds.clearMs);
      }
      for (const [id, t] of [...this.tracks]) {
        if (t.host !== h.label || t.windowStart !== undefined || present.has(id) || !round.read.has(t.kind)) continue;
        this.step({ kind: t.kind, host: t.host, serviceId: t.serviceId, part: t.part }, now, null, 0, this.thresholds.clearMs);
      }
      for (const f of round.events) this.event({ kind: f.kind, host: h.label, serviceId: f.serviceId, part: f.part }, now, conditionOf(f), 1, settings);
    }
    this.expireEvents(now);
  }

  /**
   * Failure lines from a service's log: one alert per service per
   * `logFailureEveryMs`; lines found within that window are counted into it
   * (a `repeat` change: no new notice), a failure after it renews the context.
   */
  observeLogFailure(found: LogFailureInput): void {
    if (found.matched <= 0) return;
    const now = this.clock.now();
    // The contract lists causes before consequences (an OOM before the dead engine and its traceback): that order reads best.
    const kinds = [...new Set(found.kinds)].sort((a, b) => LogFailureKindSchema.options.indexOf(a) - LogFailureKindSchema.options.indexOf(b));
    const critical = kinds.some((k) => CRITICAL_LOG_FAILURES.has(k));
    const cond: Condition = {
      severity: critical ? 'critical' : 'warning',
      // Names the kinds and counts, never the text: the message reaches the audit log and outside channels.
      message: `${kinds.join(', ')} in the log of ${found.serviceId} (${found.matched} line${found.matched === 1 ? '' : 's'})`,
      value: found.matched,
      threshold: null,
      model: null,
      context: found.context,
    };
    this.event({ kind: 'log_failure', host: found.host, serviceId: found.serviceId }, now, cond, found.matched, this.settingsOf(found.host));
    this.expireEvents(now);
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

  private step(subject: Subject, now: number, cond: Condition | null, sustain: number, clearMs: number): void {
    const id = idOf(subject);
    let t = this.tracks.get(id);
    if (t === undefined) {
      if (cond === null) return;
      t = { ...subject, since: null, criticalSince: null, absentSince: null, last: null, alert: null };
      this.tracks.set(id, t);
    }
    if (cond === null) {
      t.since = null;
      t.criticalSince = null;
      if (t.alert === null) {
        this.tracks.delete(id);
        return;
      }
      t.absentSince ??= now;
      if (now - t.absentSince >= clearMs) this.clear(id, t, now);
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
      t.alert = newAlert(id, subject, severity, cond, now);
      this.emitter.fire({ type: 'raised', at: now, alert: t.alert });
      return;
    }
    const changed = t.alert.severity !== severity;
    t.alert = { ...t.alert, ...extras(cond), severity, message: cond.message, value: cond.value, threshold: cond.threshold, updatedAt: now };
    if (changed) this.emitter.fire({ type: 'changed', at: now, alert: t.alert });
  }

  /** An event-like alert: raised at once, held `eventHoldMs` past its last event, renewed once per `logFailureEveryMs`. */
  private event(subject: Subject, now: number, cond: Condition, occurrences: number, settings: HostAlertSettings): void {
    const id = idOf(subject);
    const t = this.tracks.get(id);
    const holdUntil = now + settings.eventHoldMs;
    if (t?.alert == null) {
      const alert = { ...newAlert(id, subject, cond.severity, cond, now), count: occurrences, holdUntil };
      this.tracks.set(id, { ...subject, windowStart: now, since: now, criticalSince: null, absentSince: null, last: cond, alert });
      this.emitter.fire({ type: 'raised', at: now, alert });
      return;
    }
    const count = (t.alert.count ?? 1) + occurrences;
    const renew = now - (t.windowStart ?? t.alert.raisedAt) >= settings.logFailureEveryMs || cond.severity === 'critical' && t.alert.severity !== 'critical';
    if (!renew) {
      t.alert = { ...t.alert, count, holdUntil, updatedAt: now };
      this.emitter.fire({ type: 'changed', at: now, alert: t.alert, repeat: true });
      return;
    }
    t.windowStart = now;
    t.alert = { ...t.alert, ...extras(cond), severity: cond.severity, message: cond.message, value: cond.value, threshold: cond.threshold, count, holdUntil, updatedAt: now };
    this.emitter.fire({ type: 'changed', at: now, alert: t.alert });
  }

  private expireEvents(now: number): void {
    for (const [id, t] of [...this.tracks]) {
      if (t.windowStart !== undefined && t.alert?.holdUntil !== undefined && now >= t.alert.holdUntil) this.clear(id, t, now);
    }
  }

  private clear(id: string, t: Track, now: number): void {
    const alert = { ...t.alert!, updatedAt: now };
    this.tracks.delete(id);
    this.emitter.fire({ type: 'cleared', at: now, alert });
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

function extras(cond: Condition): Partial<Alert> {
  const out: Partial<Alert> = {};
  if (cond.gpuIndex !== undefined) out.gpuIndex = cond.gpuIndex;
  if (cond.command !== undefined) out.command = cond.command;
  if (cond.context !== undefined) out.context = [...cond.context];
  return out;
}

function newAlert(id: string, subject: Subject, severity: AlertSeverity, cond: Condition, now: number): Alert {
  const { kind, host, serviceId } = subject;
  return { id, kind, severity, host, serviceId, model: cond.model, message: cond.message, value: cond.value, threshold: cond.threshold, raisedAt: now, updatedAt: now, ...extras(cond) };
}

function conditionOf(f: HealthFinding): Condition {
  return { severity: f.severity, message: f.message, value: f.value, threshold: f.threshold, model: null, gpuIndex: f.gpuIndex, command: f.command, ...(f.context ? { context: f.context } : {}) };
}
