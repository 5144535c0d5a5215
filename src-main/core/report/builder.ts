// Assembles the evidence of one report from the store and live checks. Every
// fact comes from a source handed in (ReportSources), so the builder is tested
// with fakes and the wiring decides where the facts live.
import { randomUUID } from 'node:crypto';
import {
  EVIDENCE_SCHEMA_VERSION,
  EvidenceSchema,
  SILENCE_MAX_MS,
  type ActionView,
  type AuditCoverage,
  type BenchRun,
  type DamagedRun,
  type DecisionKind,
  type Evaluation,
  type Evidence,
  type EvidenceAction,
  type EvidenceAlert,
  type EvidenceAlertHistory,
  type EvidenceChart,
  type EvidenceCost,
  type EvidenceHostState,
  type EvidenceRun,
  type HostCost,
  type HostHealth,
  type HostSecurity,
  type InventoryHost,
  type ReportRequest,
  type SeriesResult,
  decisionFacts,
  hostSeries,
  parseSeriesName,
} from '../../../src-preload/contract/index.js';
import { ALERT_ROW_PREFIXES, HISTORY_LOOKBACK_MS, alertHistoryFrom, silencesFromAudit } from '../alerts/index.js';
import { AppError } from '../base/index.js';
import type { AuditEvent } from '../store/index.js';
import { ReportErrorCode, stopIfCancelled } from './errors.js';
import { autoGates, manualGates, type OnPremFacts } from './gates.js';
import { logExcerpts, type ServiceLogReader } from './log-excerpts.js';
import type { GateMark } from './repository.js';

export interface ReportHost {
  label: string;
  pricePerHourUsd: number | null;
}

export interface ReportSources {
  now(): number;
  actor: string;
  console: Evidence['console'];
  /** Hosts of the inventory, in order. */
  hosts(): ReportHost[];
  /** Live inventory and security checks of one host; never throws for a host that is down. */
  liveChecks(label: string): Promise<{ inventory: InventoryHost; security: HostSecurity }>;
  /** Inventory from config and the last snapshot, without contacting the host (request.live = false). */
  offlineInventory(label: string): InventoryHost;
  /** Audit rows with ts in [fromMs, toMs), oldest first, optionally only types starting with one of the prefixes. */
  auditEvents(fromMs: number, toMs: number, typePrefixes?: readonly string[]): AuditEvent[];
  auditCoverage(fromMs: number, toMs: number): AuditCoverage;
  benchRuns(fromMs: number, toMs: number): { run: BenchRun; evaluation: Evaluation }[];
  /** Stored runs in the window that no longer read as runs (left out of the report, and said so). */
  damagedBenchRuns?(fromMs: number, toMs: number): DamagedRun[];
  trafficEvaluation(fromMs: number, toMs: number): Evaluation;
  actions(fromMs: number, toMs: number): ActionView[];
  /** The host view's cost figures of `host` over [fromMs, toMs) (`cost.summary`'s function). */
  hostCost(host: string, fromMs: number, toMs: number): HostCost;
  /**
   * Series of a host covering the window (the finest stored range that spans it). With `anyOf`, `present`
   * may say per bucket whether any series matching it holds a value (read without their columns); absent,
   * the builder looks at the series returned.
   */
  series(host: string, fromMs: number, toMs: number, metrics: string[], anyOf?: string[]): ReportSeries | null;
  gateMarks(): ReadonlyMap<string, GateMark>;
  /** Router URLs of the chosen hosts and the console's off-prem refusals, for the on-prem gate; absent: that gate is unverified. */
  onPrem?(hosts: readonly string[]): OnPremFacts;
  /** A host's health, GPU processes and faults as the fleet holds them at export (each part with its reading time). */
  hostState?(label: string): EvidenceHostState;
  /** A service's log lines from a time on, masked and bounded (request.includeLogs); absent: none can be included. */
  serviceLogs?: ServiceLogReader;
  /** Reports progress of the slow part (live checks), `done` of `total` hosts. */
  onProgress?(step: string, done: number, total: number): void;
  /** Fires when the caller gives up: the build stops before its next host or section. */
  signal?: AbortSignal;
}

/** A host's series for the report: charts read `series`; telemetry coverage reads `present` when given. */
export type ReportSeries = SeriesResult & { present?: readonly boolean[] };

/** What the charts draw (generation, each GPU's VRAM) and the cost reads (generation, busy). */
const CHART_SERIES = [hostSeries('gen_tok_s'), hostSeries('busy_pct'), 'gpu.*.vram_used_mib'];
/** A bucket counts as fresh telemetry when any of these holds a value in it. */
const FRESH_SERIES = [hostSeries('gen_tok_s'), hostSeries('busy_pct'), 'gpu.*'];

/** Gaps in telemetry at least this long are listed as stale periods. */
const STALE_GAP_MS = 60_000;
const MAX_CHART_POINTS = 400;

export async function buildEvidence(request: ReportRequest, src: ReportSources): Promise<Evidence> {
  stopIfCancelled(src.signal);
  const all = src.hosts();
  const known = new Set(all.map((h) => h.label));
  const unknownHosts = request.hosts.filter((h) => !known.has(h));
  if (unknownHosts.length) {
    throw new AppError(ReportErrorCode.UNKNOWN_HOST, `no host ${unknownHosts.map((h) => `"${h}"`).join(', ')} in the inventory`, { details: { hosts: unknownHosts } });
  }
  const hosts = request.hosts.length ? all.filter((h) => request.hosts.includes(h.label)) : all;
  const labels = hosts.map((h) => h.label);
  const inHosts = (target: string | null) => target !== null && labels.includes(target.split('/')[0] ?? '');
  const want = new Set(request.sections);
  const { fromMs, toMs } = request;
  const notes: string[] = [];
  const generatedAt = src.now();
  if (fromMs > generatedAt) notes.push('The window starts in the future: nothing can have been recorded in it.');
  if (hosts.length === 0) notes.push('No host is selected or configured.');

  // Live checks first: they are the slow part and feed inventory, security and gates.
  const { inventory, security } = want.has('inventory') || want.has('security') || want.has('gates') ? await hostChecks(request, hosts, src, want, notes) : NO_CHECKS;

  const charts: EvidenceChart[] = [];
  const seriesByHost = new Map<string, ReportSeries | null>();
  const seriesOf = (host: string) => {
    if (!seriesByHost.has(host)) seriesByHost.set(host, src.series(host, fromMs, toMs, CHART_SERIES, FRESH_SERIES));
    return seriesByHost.get(host) ?? null;
  };

  // The fleet's last host-health reading of each host, with its own time; the disk gate reads it even when the section is not shown.
  const hostStates = want.has('health') || want.has('gates') ? hostStatesOf(hosts, src, notes) : null;
  let health: HostHealth[] | null = null;
  if (want.has('health')) {
    const connectionEvents = src.auditEvents(fromMs, toMs, ['host.', 'ssh.', 'tunnel.']);
    health = hosts.map((h) => hostHealth(h.label, seriesOf(h.label), connectionEvents, fromMs, Math.min(toMs, generatedAt)));
    for (const h of hosts) charts.push(...hostCharts(h.label, seriesOf(h.label)));
  }

  const benchmarks = want.has('benchmarks') ? benchmarkRuns(src, fromMs, toMs, labels, charts, notes) : null;
  const trafficEvaluation = want.has('benchmarks') ? src.trafficEvaluation(fromMs, toMs) : null;

  let cost: EvidenceCost[] | null = null;
  if (want.has('cost')) {
    // The host view's own figures for this window (one cost function), cut at the build time.
    cost = hosts.map((h) => costRow(h, src.hostCost(h.label, fromMs, Math.min(toMs, generatedAt))));
    const unseen = cost.filter((c) => c.windowSeconds > 0 && c.observedSeconds === 0).map((c) => c.host);
    if (unseen.length) notes.push(`The console holds no reading of ${unseen.join(', ')} in the window: ${unseen.length === 1 ? 'its' : 'their'} cost figures are unavailable, not zero.`);
  }

  let lifecycle: Evidence['lifecycle'] = null;
  if (want.has('lifecycle')) {
    const actions = src.actions(fromMs, toMs).filter((a) => labels.includes(a.label));
    lifecycle = lifecycleFacts(actions);
    notes.push(...decisionMismatches(actions, src.auditEvents(fromMs, generatedAt + 1, ['lifecycle.'])));
  }

  const alerts = want.has('alerts') ? alertEvents(src, fromMs, toMs, inHosts) : null;
  const alertHistory = want.has('alerts') ? alertHistoryOf(src, fromMs, toMs, inHosts, labels) : null;
  // Log text only when the operator asked for it; never otherwise.
  const logs = request.includeLogs
    ? await logExcerpts(src.actions(fromMs, toMs).filter((a) => labels.includes(a.label)), src.serviceLogs, generatedAt, notes, src.signal)
    : null;

  const audit = src.auditCoverage(fromMs, toMs);
  if (audit.fromSeq === null) notes.push('The audit log holds no event in the window.');

  const base = {
    schema: EVIDENCE_SCHEMA_VERSION,
    id: randomUUID(),
    title: request.title ?? `Evidence report — ${labels.length === all.length ? 'all hosts' : labels.join(', ')}`,
    generatedAt,
    generatedBy: src.actor,
    console: src.console,
    window: { fromMs, toMs },
    hosts: labels,
    sections: REPORT_ORDER.filter((s) => want.has(s)),
    notes,
    inventory: want.has('inventory') ? inventory : null,
    security: want.has('security') ? security : null,
    health,
    hostState: want.has('health') ? hostStates : null,
    benchmarks,
    trafficEvaluation,
    cost,
    lifecycle,
    alerts,
    alertHistory,
    logExcerpts: logs,
    charts: charts.map(capPoints),
    audit,
  };
  // Gates see every measured fact, including sections not shown.
  const gates = want.has('gates')
    ? [...autoGates({ ...base, inventory, security: security ?? null, hostState: hostStates, gates: null }, src.onPrem?.(labels)), ...manualGates(src.gateMarks())]
    : null;
  return EvidenceSchema.parse({ ...base, gates });
}

const NO_CHECKS = { inventory: null, security: null };

function hostStatesOf(hosts: readonly ReportHost[], src: ReportSources, notes: string[]): EvidenceHostState[] | null {
  if (!src.hostState) {
    notes.push('This console gives no host-health reading to reports: host health and the disk margin are not reported.');
    return null;
  }
  return hosts.map((h) => src.hostState!(h.label));
}

/** Each host's inventory and security checks: live (the slow part, with progress) or from the configuration and last readings. */
async function hostChecks(
  request: ReportRequest,
  hosts: readonly ReportHost[],
  src: ReportSources,
  want: ReadonlySet<string>,
  notes: string[],
): Promise<{ inventory: InventoryHost[] | null; security: HostSecurity[] | null }> {
  const inv: InventoryHost[] = [];
  const sec: HostSecurity[] = [];
  if (request.live) {
    let done = 0;
    src.onProgress?.('live checks', 0, hosts.length);
    const results = await Promise.all(
      hosts.map(async (h) => {
        stopIfCancelled(src.signal);
        const r = await src.liveChecks(h.label);
        stopIfCancelled(src.signal);
        src.onProgress?.('live checks', ++done, hosts.length);
        return r;
      }),
    );
    for (const r of results) {
      inv.push(r.inventory);
      sec.push(r.security);
      if (r.inventory.liveError) notes.push(`${r.inventory.label} could not be checked live: ${r.inventory.liveError}. Its checks are marked unverified.`);
    }
  } else {
    for (const h of hosts) inv.push(src.offlineInventory(h.label));
    notes.push('Live checks were not run: the inventory comes from the configuration and the last readings, and the security checks are unverified.');
  }
  return {
    inventory: want.has('inventory') || want.has('gates') ? inv : null,
    security: want.has('security') || want.has('gates') ? (request.live ? sec : []) : null,
  };
}

/** A host's generated tokens/s and VRAM charts over the window (none without readings). */
function hostCharts(label: string, s: SeriesResult | null): EvidenceChart[] {
  if (!s || s.t.length === 0) return [];
  const charts: EvidenceChart[] = [];
  const gen = s.series.find((c) => c.metric === hostSeries('gen_tok_s'));
  if (gen) charts.push(lineChart(`tok-${label}`, `${label}: generated tokens/s`, label, 'tok/s', s.t, [{ name: 'tok/s', values: gen.avg }]));
  const vram = s.series.flatMap((c) => {
    const n = parseSeriesName(c.metric);
    return n?.scope === 'gpu' && n.figure === 'vram_used_mib' ? [{ name: `GPU ${n.index}`, values: c.avg }] : [];
  });
  if (vram.length) charts.push(lineChart(`vram-${label}`, `${label}: VRAM used`, label, 'MiB', s.t, vram));
  return charts;
}

/** The window's benchmark runs on the chosen hosts (a chart per sweep of two levels or more); damaged runs become notes. */
function benchmarkRuns(src: ReportSources, fromMs: number, toMs: number, labels: readonly string[], charts: EvidenceChart[], notes: string[]): EvidenceRun[] {
  const runs = src.benchRuns(fromMs, toMs).filter(({ run }) => run.host === null || labels.includes(run.host));
  const benchmarks: EvidenceRun[] = runs.map(({ run, evaluation }) => ({
    id: run.id,
    name: run.name,
    state: run.state,
    source: run.source,
    host: run.host,
    model: run.model,
    upstream: run.upstream,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    baseline: run.baseline,
    levels: run.levels,
    peaks: run.peaks,
    evaluation,
  }));
  for (const r of benchmarks) {
    const levels = r.levels.filter((l) => l.phase === 'level');
    if (levels.length >= 2) {
      charts.push({
        id: `bench-${r.id}`,
        title: `${r.name}: output tok/s by concurrency`,
        host: r.host,
        unit: 'tok/s',
        kind: 'bar',
        x: levels.map((l) => `c=${l.level}`),
        series: [{ name: 'output tok/s', values: levels.map((l) => l.outputTokPerS) }],
      });
    }
  }
  if (benchmarks.length === 0) notes.push('No benchmark run falls in the window.');
  for (const d of src.damagedBenchRuns?.(fromMs, toMs) ?? []) {
    if (d.host === null || labels.includes(d.host)) notes.push(`Benchmark run ${d.id}${d.name ? ` (${d.name})` : ''} is damaged and left out: ${d.problem}.`);
  }
  return benchmarks;
}

/** A report's alert history is bounded like its other tables. */
const MAX_HISTORY_ALERTS = 2000;

/**
 * The window's alerts as a shift reads them and the silences in force at some time in it, from the audit
 * log alone (what the report's audit coverage vouches for): raises up to a day before the window pair
 * with their clears in it; silences set up to their longest before it are found.
 */
function alertHistoryOf(src: ReportSources, fromMs: number, toMs: number, inHosts: (target: string | null) => boolean, labels: readonly string[]): EvidenceAlertHistory {
  const rows = src.auditEvents(fromMs - HISTORY_LOOKBACK_MS, toMs, ALERT_ROW_PREFIXES).filter((e) => inHosts(e.target));
  const { alerts, truncated } = alertHistoryFrom(rows, [], fromMs, toMs, MAX_HISTORY_ALERTS);
  const silences = silencesFromAudit(src.auditEvents(fromMs - SILENCE_MAX_MS, toMs, ['alerts.silence.'])).filter(
    (s) => s.createdAt < toMs && (s.endedAt ?? s.until) > fromMs && (s.host === null || labels.includes(s.host)),
  );
  return { alerts, silences, truncated };
}

/** Alerts raised, changed and cleared on the chosen hosts in the window, from the audit log. */
function alertEvents(src: ReportSources, fromMs: number, toMs: number, inHosts: (target: string | null) => boolean): EvidenceAlert[] {
  return src
    .auditEvents(fromMs, toMs, ['alert.'])
    .filter((e) => /^alert\.(raised|changed|cleared)$/.test(e.type) && inHosts(e.target))
    .map((e) => ({
      seq: e.seq,
      at: e.ts,
      event: e.type.slice('alert.'.length),
      target: e.target,
      kind: String(e.payload.kind ?? ''),
      severity: String(e.payload.severity ?? ''),
      message: String(e.payload.message ?? ''),
    }));
}

const REPORT_ORDER = ['inventory', 'security', 'health', 'benchmarks', 'cost', 'lifecycle', 'alerts', 'gates'] as const;

function costRow(h: ReportHost, c: HostCost): EvidenceCost {
  return {
    host: h.label,
    pricePerHourUsd: h.pricePerHourUsd,
    ...c.window,
    perMillionOutputUsageBased: c.perMillionOutputUsageBased,
    perMillionOutputReservationBased: c.perMillionOutputReservationBased,
  };
}

/** Each action with its decision worded by who made it; the counts from the final states. */
function lifecycleFacts(actions: readonly ActionView[]): NonNullable<Evidence['lifecycle']> {
  const list: EvidenceAction[] = actions.map((a) => {
    const d = decisionFacts(a);
    return {
      id: a.id,
      kind: a.kind,
      upstream: a.upstream,
      state: a.state,
      proposer: a.proposer,
      reason: a.reason,
      proposedAt: a.createdAt,
      decision: d.kind,
      approvedBy: d.kind === 'approved' ? d.by : null,
      rejectedBy: d.kind === 'rejected' ? d.by : null,
      withdrawnBy: d.kind === 'withdrawn' ? d.by : null,
      decisionReason: d.reason,
      decidedAt: a.decidedAt,
      finishedAt: a.finishedAt,
      drained: a.drained,
      aborted: a.aborted,
      observed: a.observed,
      error: a.error,
    };
  });
  const decided = (kind: EvidenceAction['decision']) => list.filter((a) => a.decision === kind).length;
  const inState = (state: string) => actions.filter((a) => a.state === state).length;
  return {
    actions: list,
    proposed: actions.length,
    approved: decided('approved'),
    rejected: decided('rejected'),
    withdrawn: decided('withdrawn'),
    expired: decided('expired'),
    pending: decided(null),
    verified: inState('verified'),
    failed: inState('failed'),
    drained: actions.reduce((n, a) => n + (a.drained ?? 0), 0),
    aborted: actions.reduce((n, a) => n + (a.aborted ?? 0), 0),
  };
}

const DECISION_EVENTS: Readonly<Record<string, DecisionKind>> = {
  'lifecycle.approved': 'approved',
  'lifecycle.rejected': 'rejected',
  'lifecycle.withdrawn': 'withdrawn',
  'lifecycle.expired': 'expired',
};

/**
 * The audit log's decision event of each action against the action's own
 * record: any difference is named in the notes (a report never settles it
 * silently either way).
 */
function decisionMismatches(actions: readonly ActionView[], events: readonly AuditEvent[]): string[] {
  const logged = new Map<string, DecisionKind>();
  for (const e of events) {
    const kind = DECISION_EVENTS[e.type];
    const id = e.payload.actionId;
    if (kind !== undefined && typeof id === 'string' && !logged.has(id)) logged.set(id, kind);
  }
  const out: string[] = [];
  for (const a of actions) {
    const audit = logged.get(a.id) ?? null;
    if (audit !== a.decision) out.push(`Action ${a.id}: the audit log records ${audit ?? 'no decision'}, the action record says ${a.decision ?? 'no decision'}.`);
  }
  return out;
}

function hostHealth(label: string, s: ReportSeries | null, events: AuditEvent[], fromMs: number, toMs: number): HostHealth {
  const mine = events.filter((e) => e.target === label || e.target?.startsWith(`${label}/`));
  const connectionEvents = mine
    .filter((e) => /^(host\.|ssh\.hostkey\.)/.test(e.type))
    .map((e) => ({ at: e.ts, type: e.type, detail: typeof e.payload.message === 'string' ? e.payload.message : typeof e.payload.state === 'string' ? e.payload.state : '' }));
  const reconnects = mine.filter((e) => e.type === 'host.connection.lost' || e.type === 'host.reconnect').length;
  if (!s || s.t.length === 0 || toMs <= fromMs) {
    return { host: label, telemetryCoveragePct: null, stalePeriods: toMs > fromMs ? [{ fromMs, toMs, reason: 'no telemetry recorded' }] : [], reconnects, connectionEvents };
  }
  const step = s.stepMs;
  // A bucket counts as fresh when any series holds a value in it.
  const fresh: number[] = [];
  const present = s.present;
  for (let i = 0; i < s.t.length; i++) {
    const t = s.t[i]!;
    if (t + step <= fromMs || t >= toMs) continue;
    if (present ? present[i] === true : s.series.some((c) => c.avg[i] !== null && c.avg[i] !== undefined)) fresh.push(t);
  }
  const expected = Math.max(1, Math.ceil((toMs - fromMs) / step));
  const stale: { fromMs: number; toMs: number; reason: string }[] = [];
  let cursor = fromMs;
  for (const t of fresh) {
    if (t - cursor >= STALE_GAP_MS) stale.push({ fromMs: cursor, toMs: t, reason: cursor === fromMs ? 'no telemetry yet' : 'no telemetry' });
    cursor = Math.max(cursor, t + step);
  }
  if (toMs - cursor >= STALE_GAP_MS) stale.push({ fromMs: cursor, toMs, reason: 'no telemetry' });
  return {
    host: label,
    telemetryCoveragePct: Math.min(100, (fresh.length / expected) * 100),
    stalePeriods: stale,
    reconnects,
    connectionEvents,
  };
}

function lineChart(id: string, title: string, host: string, unit: string, t: number[], series: { name: string; values: (number | null)[] }[]): EvidenceChart {
  return { id, title, host, unit, kind: 'line', x: t, series };
}

/** Keeps charts small: at most MAX_CHART_POINTS points, each the mean of its group (nulls skipped). */
function capPoints(c: EvidenceChart): EvidenceChart {
  if (c.kind !== 'line' || c.x.length <= MAX_CHART_POINTS) return c;
  const group = Math.ceil(c.x.length / MAX_CHART_POINTS);
  const x: (number | string)[] = [];
  for (let i = 0; i < c.x.length; i += group) x.push(c.x[i]!);
  const series = c.series.map((s) => {
    const values: (number | null)[] = [];
    for (let i = 0; i < s.values.length; i += group) {
      let sum = 0;
      let n = 0;
      for (let j = i; j < Math.min(i + group, s.values.length); j++) {
        const v = s.values[j];
        if (v !== null && v !== undefined) {
          sum += v;
          n += 1;
        }
      }
      values.push(n ? sum / n : null);
    }
    return { name: s.name, values };
  });
  return { ...c, x, series };
}
