// Replays a generated fleet trace into the alert engine on an injected clock,
// one poll round per tick, through telemetry's own mapping (hostValuesOf →
// alertTickOf), and scores the alerts against the trace's labels.
//
// A page is a raised alert with no incident (not a consequence of another)
// that no silence covers. Scoring per label: the alert of its rule on its
// subject, raised within the rule's sustain + one poll of the fault showing
// in the rule's figure (recall), paging once (one incident per cause) unless
// silenced; every other raise is a false alarm.
import type { Alert, AlertEvent, AlertKind, BaselineLevel } from '../../../src-preload/contract/index.js';
import { AlertEngine, DEFAULT_RULE_SETTINGS } from '../../../src-main/core/alerts/index.js';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { hostValuesOf } from '../../../src-main/core/telemetry/host-values.js';
import { alertTickOf } from '../../../src-main/core/telemetry/service.js';
import { FleetSim, type Fault, type HostSpec, type Label, type Load } from './fleet-sim.js';

export const T0 = Date.UTC(2026, 0, 5, 0, 0, 0);

export interface Trace {
  name: string;
  hosts: HostSpec[];
  load: Load;
  faults: Fault[];
  labels: Label[];
  durationMs: number;
  tickMs: number;
  baselines: { model: string; levels: BaselineLevel[] }[];
  seed: number;
  /** Stands in for the alert book's silences (a maintenance window). */
  silenced?: (a: Alert) => boolean;
}

export interface LabelResult {
  label: Label;
  raisedAt: number | null;
  /** From the fault showing in the rule's figure to the raise. */
  latencyMs: number | null;
  /** What the rule may take: its sustain (the degradation rule: its busy window) + one poll. */
  allowedMs: number;
  pages: number;
}

export interface ReplayResult {
  trace: string;
  ticks: number;
  events: AlertEvent[];
  labels: LabelResult[];
  falseAlarms: Alert[];
  /** Pages per label (cause); pages that match no label are false alarms. */
  pages: Alert[];
}

/** The time a rule needs before it may raise: its sustain, or for throughput the busy seconds its window needs. */
export function ruleSustainMs(rule: AlertKind): number {
  if (rule === 'throughput') return DEFAULT_RULE_SETTINGS.throughput.busyMs;
  const r = (DEFAULT_RULE_SETTINGS as unknown as Record<string, { sustainMs: number } | undefined>)[rule];
  return r?.sustainMs ?? 0;
}

const matches = (a: Alert, l: Label): boolean => a.kind === l.rule && a.host === l.host && (l.serviceId === null || a.serviceId === l.serviceId);

export function replay(trace: Trace): ReplayResult {
  const clock = new FakeClock(T0);
  const engine = new AlertEngine(clock);
  for (const b of trace.baselines) engine.setBaseline(b.model, b.levels.at(-1)!.perSeqTokPerS * b.levels.at(-1)!.concurrency, 'benchmark', b.levels);
  const events: AlertEvent[] = [];
  engine.onDidChange((e) => events.push(e));
  // Fault times are from the trace's start; the sim runs on the clock's time.
  const sim = new FleetSim(trace.hosts, (s, t) => trace.load(s, t - T0), trace.faults.map((f) => ({ ...f, fromMs: T0 + f.fromMs, toMs: T0 + f.toMs })), trace.seed);
  const modelOf = (label: string) => (id: string) => trace.hosts.find((h) => h.label === label)?.services.find((s) => s.id === id)?.model ?? null;
  let ticks = 0;
  const visible = new Map<Label, number>();
  for (let t = 0; t < trace.durationMs; t += trace.tickMs) {
    if (t > 0) clock.advance(trace.tickMs);
    const round = sim.tick(T0 + t);
    for (const l of trace.labels) if (l.visibleWhen && !visible.has(l) && t >= l.fromMs && l.visibleWhen(round)) visible.set(l, T0 + t);
    engine.observe(round.readings.hosts.map((h) => alertTickOf(h, hostValuesOf(h), round.proxy, modelOf(h.label))));
    ticks++;
  }
  return score(trace, events, ticks, visible);
}

function score(trace: Trace, events: AlertEvent[], ticks: number, visibleAt: ReadonlyMap<Label, number>): ReplayResult {
  const raised = events.filter((e) => e.type === 'raised').map((e) => e.alert);
  const silenced = trace.silenced ?? (() => false);
  const pages = raised.filter((a) => a.incident === undefined && !silenced(a));
  const used = new Set<Alert>();
  const labels = trace.labels.map((l): LabelResult => {
    const from = T0 + l.fromMs;
    const hit = raised.find((a) => matches(a, l) && a.raisedAt >= from && a.raisedAt <= T0 + l.toMs + 120_000);
    if (hit) used.add(hit);
    const visible = visibleAt.get(l) ?? T0 + (l.visibleAtMs ?? l.fromMs);
    return {
      label: l,
      raisedAt: hit?.raisedAt ?? null,
      latencyMs: hit ? hit.raisedAt - visible : null,
      allowedMs: ruleSustainMs(l.rule) / (l.busyShare ?? 1) + trace.tickMs,
      pages: pages.filter((a) => matches(a, l) && a.raisedAt >= from && a.raisedAt <= T0 + l.toMs + 120_000).length,
    };
  });
  // A consequence tied to its cause (incident set) is not a false alarm: it is the same incident.
  const falseAlarms = raised.filter((a) => !used.has(a) && a.incident === undefined);
  return { trace: trace.name, ticks, events, labels, falseAlarms, pages };
}
