import type { Alert, AlertContextLine, AlertEvent, Baseline, BaselineLevel, LogFailureKind } from '../../../src-preload/contract/index.js';
import { LogFailureKindSchema } from '../../../src-preload/contract/index.js';
import { Emitter, type Clock, type Disposable } from '../base/index.js';
import { upstreamKey } from '../upstream/index.js';
import type { AlertsConfig, HostAlertsConfig } from '../config/index.js';
import type { HostAlertTick, ServiceTick } from './alert-tick.js';
import { healthRound, HostEventMemory, type HealthFinding, type HostHealthAlertInput } from './health-rules.js';
import { Incidents } from './incidents.js';
import { RecentSeries } from './recent-series.js';
import { baseRuleSettings, RuleResolver, type AlertThresholds, type RuleSettings } from './rule-settings.js';
import { DegradationWindow, degradationVerdict } from './rules/degradation.js';
import { gpuHotFinding, hostStaleFinding, SessionDrops } from './rules/host-rules.js';
import { errorRateFinding, hangingFinding, kvCacheFinding, queueWaitFindings, serviceDownFinding, ttftFindings, WaitingHistory, type Finding } from './rules/service-rules.js';
import { DEFAULT_HOST_ALERT_SETTINGS, type HostAlertSettings } from './settings.js';
import { AlertTracks, idOf, type Condition, type Subject } from './tracks.js';

// The alert engine: each tick of each host goes through the rules (rules/),
// each rule's verdict through its track (tracks.ts: sustained before raised,
// absent for a while before cleared, 'unknown' leaves it as it was), causes
// and consequences through the incidents (incidents.ts), and every change out
// as an AlertEvent (alert-delivery.ts audits, pushes and notifies it).
//
// Rules per tick (settings per rule, host and model: rule-settings.ts):
// - throughput: per-sequence speed below the baseline at a comparable load (rules/degradation.ts);
// - kv_cache, waiting_growing, service_down, error_rate, hanging_requests,
//   ttft_slow, queue_wait (rules/service-rules.ts);
// - host_stale, gpu_hot, tunnel_flapping (rules/host-rules.ts).
// From host health (health-rules.ts): disk_low (with hysteresis),
// gpu_process_unknown, gpu_throttle, gpu_fault (pending retirement: a state;
// Xid / ECC rise: events) and host_rebooted (an event). From service logs:
// log_failure (an event, rate-limited per service). An event-like alert is
// raised at once and clears by itself `eventHoldMs` after its last event.

export type { AlertThresholds };

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

/** Where the rules' settings come from (config's current value satisfies it); read on every tick, resolved once per value. */
export interface AlertRulesSource {
  readonly alerts?: AlertsConfig | undefined;
  readonly hosts: readonly { readonly label: string; readonly alerts?: HostAlertsConfig | undefined }[];
}

/** Failures that stop a server or lose its GPU; the rest (a traceback, a refused request) warn. */
const CRITICAL_LOG_FAILURES: ReadonlySet<LogFailureKind> = new Set<LogFailureKind>(['cuda-oom', 'engine-dead', 'model-load-failed', 'port-in-use', 'disk-full', 'nccl-error', 'xid']);

/** The window a figure's recent series covers when its rule has none of its own. */
const DEFAULT_SERIES_WINDOW_MS = 120_000;

interface ServiceMemory {
  degradation: DegradationWindow;
  waiting: WaitingHistory;
}

export class AlertEngine implements Disposable {
  private readonly baselines = new Map<string, Baseline>();
  private readonly emitter = new Emitter<AlertEvent>();
  private readonly series = new RecentSeries();
  private readonly tracks = new AlertTracks(this.emitter, this.series);
  private readonly incidents = new Incidents();
  private readonly serviceMemory = new Map<string, ServiceMemory>();
  private readonly sessionDrops = new Map<string, SessionDrops>();
  private readonly eventMemory = new Map<string, HostEventMemory>();
  private readonly base: RuleSettings;
  private resolver: { source: AlertRulesSource | null; resolver: RuleResolver } | null = null;
  readonly onDidChange = this.emitter.on.bind(this.emitter);
  readonly thresholds: AlertThresholds;

  constructor(
    private readonly clock: Clock,
    thresholds: Partial<AlertThresholds> = {},
    /** The host's disk, throttle, hold and rate-limit settings (config's `alerts` over defaults). */
    private readonly settingsOf: (host: string) => HostAlertSettings = () => DEFAULT_HOST_ALERT_SETTINGS,
    /** Config's rule settings (`alerts.rules`, `hosts[].alerts.rules`, `alerts.models`); none: defaults over `thresholds`. */
    private readonly rulesSource: () => AlertRulesSource | null = () => null,
  ) {
    this.thresholds = { ...DEFAULT_ALERT_THRESHOLDS, ...thresholds };
    this.base = baseRuleSettings(this.thresholds);
  }

  /**
   * A baseline: per-sequence speed by load level. A manual one is one level: `tokPerS` aggregate
   * measured with `concurrency` requests running (each ran at tokPerS ÷ concurrency).
   */
  setBaseline(model: string, tokPerS: number, source: Baseline['source'] = 'manual', levels?: readonly BaselineLevel[], concurrency = 1): Baseline {
    const lv = levels !== undefined && levels.length > 0 ? [...levels] : [{ concurrency, perSeqTokPerS: tokPerS / concurrency }];
    const b: Baseline = { model, tokPerS, source, setAt: this.clock.now(), levels: lv };
    this.baselines.set(model, b);
    return b;
  }

  /**
   * A baseline read back from the store: it keeps the time it was set. One stored before
   * per-sequence levels is kept and shown but never compared (its load is unknown).
   */
  restoreBaseline(stored: Baseline): Baseline {
    const b: Baseline = { model: stored.model, tokPerS: stored.tokPerS, source: stored.source, setAt: stored.setAt, ...(stored.levels ? { levels: [...stored.levels] } : {}) };
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
    return this.tracks.list();
  }

  /** Feed one tick of every host; hosts missing from `hosts` are left as they are. */
  observe(hosts: readonly HostAlertTick[]): void {
    const now = this.clock.now();
    for (const h of hosts) {
      this.incidents.update(h, now, (id) => this.tracks.active(id) !== null);
      const hostRules = this.rulesOf(h.host, null);
      this.apply(hostStaleFinding(h, hostRules.host_stale), now);
      let drops = this.sessionDrops.get(h.host);
      if (drops === undefined) this.sessionDrops.set(h.host, (drops = new SessionDrops()));
      this.apply(drops.finding(h, now, hostRules.tunnel_flapping), now);
      for (const g of h.gpus ?? []) this.apply(gpuHotFinding(h.host, g, hostRules.gpu_hot), now);
      for (const s of h.services) this.observeService(h, s, now);
    }
    this.tracks.expireEvents(now);
  }

  private observeService(h: HostAlertTick, s: ServiceTick, now: number): void {
    const r = this.rulesOf(h.host, s.model);
    const key = upstreamKey(h.host, s.serviceId);
    let mem = this.serviceMemory.get(key);
    if (mem === undefined) this.serviceMemory.set(key, (mem = { degradation: new DegradationWindow(), waiting: new WaitingHistory() }));
    const subject = (kind: Subject['kind'], part?: string): Subject => ({ kind, host: h.host, serviceId: s.serviceId, ...(part !== undefined ? { part } : {}) });
    const t = r.throughput;
    const perSeq = mem.degradation.push(now, s, t.windowMs);
    const base = s.model === null ? undefined : this.baselines.get(s.model);
    const throughput: Finding = {
      subject: subject('throughput'),
      verdict: t.enabled ? degradationVerdict(mem.degradation, base, s, t) : null,
      sustainMs: t.sustainMs,
      clearMs: t.clearMs,
      windowMs: t.windowMs,
      point: { unit: 'tok/s per sequence', value: perSeq },
    };
    const findings: Finding[] = [
      throughput,
      kvCacheFinding(subject('kv_cache'), s, r.kv_cache),
      mem.waiting.finding(subject('waiting_growing'), s, now, r.waiting_growing),
      serviceDownFinding(subject('service_down'), h, s, r.service_down),
      errorRateFinding(subject('error_rate'), s, r.error_rate),
      hangingFinding(subject('hanging_requests'), s, r.hanging_requests),
      ...ttftFindings((part) => subject('ttft_slow', part), s, r.ttft_slow),
      ...queueWaitFindings((part) => subject('queue_wait', part), s, r.queue_wait),
    ];
    // A lifecycle action draining the service (an approved restart or sleep) is not news: what it does to the
    // figures meanwhile (queue waits, refused port) raises nothing new; the action's own audit and outcome say it.
    for (const f of findings) {
      const kind = f.subject.kind;
      const root = this.incidents.rootOf(h.host, s.serviceId, kind, now) ?? (kind === 'service_down' ? this.logCause(h.host, s.serviceId) : undefined);
      this.apply(f, now, root, this.incidents.drainHolds(h.host, s.serviceId, kind, now));
    }
  }

  /**
   * A critical failure in the service's log (CUDA OOM, a dead engine) is the cause of the server going
   * down: it paged already and says why, so service_down is held while it is (its hold, 15 min).
   */
  private logCause(host: string, serviceId: string): string | undefined {
    const id = idOf({ kind: 'log_failure', host, serviceId });
    return this.tracks.active(id)?.severity === 'critical' ? id : undefined;
  }

  /**
   * One finding through its track; a consequence of a root cause is not raised, and one already raised is
   * tied to it. `held`: nothing new is raised (a drain), an alert already up is judged as usual.
   */
  private apply(f: Finding, now: number, root?: string, held = false): void {
    const id = idOf(f.subject);
    if (f.point) this.series.push(id, f.point.unit, f.windowMs ?? DEFAULT_SERIES_WINDOW_MS, now, f.point.value);
    if (root === undefined || root === id) {
      this.tracks.step(f.subject, now, held && this.tracks.active(id) === null ? null : f.verdict, f, id);
      return;
    }
    if (this.tracks.active(id) === null) {
      // Not raised while its cause holds; a pending condition starts over afterwards.
      this.tracks.step(f.subject, now, null, f, id);
      return;
    }
    this.tracks.group(id, root, now);
    this.tracks.step(f.subject, now, f.verdict, { sustainMs: f.sustainMs, clearMs: f.clearMs, windowMs: f.windowMs, incident: root }, id);
  }

  private rulesOf(host: string, model: string | null): RuleSettings {
    const source = this.rulesSource();
    if (this.resolver === null || this.resolver.source !== source) {
      const hostOf = (label: string) => source?.hosts.find((x) => x.label === label)?.alerts;
      this.resolver = { source, resolver: new RuleResolver(this.base, source?.alerts, hostOf) };
    }
    return this.resolver.resolver.of(host, model);
  }

  /**
   * One health round of each host: state findings are sustained and cleared as
   * the degradation rules are (disks with their hysteresis), events raised at
   * once. A kind the round could not read (stale, faults not read yet) is left as it was.
   */
  observeHealth(hosts: readonly HostHealthAlertInput[]): void {
    const now = this.clock.now();
    const { healthSustainMs, clearMs } = this.thresholds;
    for (const h of hosts) {
      const settings = this.settingsOf(h.label);
      let memory = this.eventMemory.get(h.label);
      if (memory === undefined) this.eventMemory.set(h.label, (memory = new HostEventMemory()));
      const isActive = (part: string) => this.tracks.active(idOf({ kind: 'disk_low', host: h.label, serviceId: null, part })) !== null;
      const round = healthRound(h, settings, memory, now, isActive);
      const present = new Set<string>();
      for (const f of round.states) {
        const subject = { kind: f.kind, host: h.label, serviceId: f.serviceId, part: f.part };
        present.add(idOf(subject));
        // A throttle's minute is in its condition already; a pending retirement is news at once.
        const sustain = f.kind === 'disk_low' || f.kind === 'gpu_process_unknown' ? healthSustainMs : 0;
        this.tracks.step(subject, now, conditionOf(f), { sustainMs: sustain, clearMs });
      }
      for (const t of this.tracks.stateSubjectsOf(h.label)) {
        if (present.has(t.id) || !round.read.has(t.kind)) continue;
        this.tracks.step(t, now, null, { sustainMs: 0, clearMs });
      }
      for (const f of round.events) this.tracks.event({ kind: f.kind, host: h.label, serviceId: f.serviceId, part: f.part }, now, conditionOf(f), 1, settings);
    }
    this.tracks.expireEvents(now);
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
    // A failure logged by a server already down (or on a host that is) belongs to that incident.
    const root = this.incidents.rootOf(found.host, found.serviceId, 'log_failure', now);
    this.tracks.event({ kind: 'log_failure', host: found.host, serviceId: found.serviceId }, now, cond, found.matched, this.settingsOf(found.host), root);
    this.tracks.expireEvents(now);
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

function conditionOf(f: HealthFinding): Condition {
  return { severity: f.severity, message: f.message, value: f.value, threshold: f.threshold, model: null, gpuIndex: f.gpuIndex, command: f.command, ...(f.context ? { context: f.context } : {}) };
}
