// The report capability as the console runs it: its evidence sources read the
// store, the fleet, telemetry, bench runs and lifecycle actions; live checks
// go over each host's SSH session and tunnels at export time.
import { join } from 'node:path';
import { userInfo } from 'node:os';
import {
  type ActionView,
  type AuditCoverage,
  type BenchRun,
  type DamagedRun,
  type Evaluation,
  type HostCost,
  type InventoryHost,
  type SeriesQuery,
  type SeriesResult,
} from '../../../src-preload/contract/index.js';
import type { Clock, Logger, OffPremCounter } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { ConfigService } from '../config/index.js';
import type { FleetService } from '../fleet/index.js';
import { upstreamKey } from '../upstream/index.js';
import type { PdfPrinter, SecretStore } from '../ports.js';
import type { Store } from '../store/index.js';
import { hostStateOf, serviceLogReader, type LogTail } from './host-state-facts.js';
import { runLiveChecks } from './live-checks.js';
import { inventoryFromState, sessionFacts } from './fleet-facts.js';
import type { ReportSources } from './builder.js';
import { reportSeriesReads, type ReportSeriesStore } from './series-window.js';
import { ReportRepository } from './repository.js';
import { ReportService } from './service.js';

export interface ConsoleReportDeps {
  store: Store;
  config: ConfigService;
  fleet: Pick<FleetService, 'state' | 'exec' | 'upstream'>;
  secrets: SecretStore;
  series: ReportSeriesStore;
  bench: {
    /** The runs overlapping a window, oldest first: each a run, or what is damaged in a row that no longer reads as one. */
    repo: { runsOverlapping(fromMs: number, toMs: number): ({ ok: true; run: BenchRun } | { ok: false; damaged: DamagedRun })[] };
    evaluateRun(id: string): Evaluation;
    evaluateWindow(fromMs: number, toMs: number): Evaluation;
  };
  /** The host view's cost function (TelemetryService): a report's cost rows are its figures for the report's window. */
  cost: { hostCostOver(host: string, fromMs: number, toMs: number, series?: (q: SeriesQuery) => SeriesResult): HostCost };
  actions: { proposedBetween(fromMs: number, toMs: number): ActionView[] };
  pdf: PdfPrinter | null;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
  version: string;
  mode: 'electron' | 'web';
  dataDir: string;
  home: string;
  /** The logs capability: lines around lifecycle actions, only when an export asks for them. Absent: none can be included. */
  logs?: LogTail;
  /**
   * The app's off-prem counter: its counts feed the on-prem gate (the live checks go through the fleet's
   * tunnel clients, on this machine by construction). Absent: the gate is unverified (nothing counts refusals).
   */
  offPrem?: Pick<OffPremCounter, 'check' | 'counts'>;
}

const MAX_AUDIT_ROWS = 50_000;

export function createConsoleReport(deps: ConsoleReportDeps): ReportService {
  const { store, fleet, config, clock, logger } = deps;
  const repo = new ReportRepository(store.db);

  // The audit log and the bench runs are the store's and bench's tables: read through their own queries.
  const runsIn = (fromMs: number, toMs: number) => deps.bench.repo.runsOverlapping(fromMs, toMs);

  const hostConfig = (label: string) => config.current.hosts.find((h) => h.label === label);
  // The fleet's last state of a host: its session and last readings (no host is asked again for them).
  const hostState = (label: string) => fleet.state().hosts.find((h) => h.label === label);
  const offlineInventory = (label: string): InventoryHost => inventoryFromState(hostConfig(label)!, hostState(label));

  const apiKey = async (label: string, serviceId: string): Promise<string | null> => {
    const ref = config.current.proxy.upstreams?.[upstreamKey(label, serviceId)]?.apiKeyRef;
    return ref ? await deps.secrets.get(ref) : null;
  };

  const auditCoverage = (fromMs: number, toMs: number): AuditCoverage => {
    const span = store.audit.seqSpan(fromMs, toMs);
    // The rows since the last full walk (the scheduled check's, or an earlier build's) are walked now; the
    // report says when the full walk ran.
    const verified = store.audit.verifyRecent();
    const head = verified.ok ? verified.head : verified.lastGood;
    return {
      fromSeq: span.fromSeq,
      toSeq: span.toSeq,
      headSeq: head?.seq ?? null,
      headHash: head?.hash ?? null,
      chainVerified: verified.ok,
      chainProblem: verified.ok ? null : `row ${verified.brokenAt}: ${verified.reason}`,
      fullWalk: verified.fullWalk,
    };
  };

  const sources = (actor: string): ReportSources => {
    const reads = reportSeriesReads(deps.series, clock, logger);
    return {
      now: () => clock.now(),
      actor,
      // The config in force says whether its hosts are simulated (the demo fleet's config sets fleet.simulated).
      console: { version: deps.version, mode: deps.mode, demo: config.current.fleet.simulated },
      hosts: () => config.current.hosts.map((h) => ({ label: h.label, pricePerHourUsd: h.pricePerHourUsd ?? null })),
      offlineInventory,
      liveChecks: async (label) => {
        // Fresh at export, through the fleet's own SSH exec and each service's UpstreamClient.
        return runLiveChecks(hostConfig(label)!, {
          exec: (command, opts) => fleet.exec(label, command, opts),
          upstream: (serviceId) => fleet.upstream(upstreamKey(label, serviceId)),
          apiKey: (serviceId) => apiKey(label, serviceId),
          ...sessionFacts(hostState(label)),
          clock,
        });
      },
      auditEvents: (fromMs, toMs, prefixes) => store.audit.between({ fromMs, toMs, typePrefixes: prefixes ?? [], limit: MAX_AUDIT_ROWS }),
      auditCoverage,
      benchRuns: (fromMs, toMs) => runsIn(fromMs, toMs).flatMap((r) => (r.ok ? [{ run: r.run, evaluation: deps.bench.evaluateRun(r.run.id) }] : [])),
      damagedBenchRuns: (fromMs, toMs) => runsIn(fromMs, toMs).flatMap((r) => (r.ok ? [] : [r.damaged])),
      trafficEvaluation: (fromMs, toMs) => deps.bench.evaluateWindow(fromMs, toMs),
      actions: (fromMs, toMs) => deps.actions.proposedBetween(fromMs, toMs),
      series: reads.series,
      hostCost: (label, fromMs, toMs) => deps.cost.hostCostOver(label, fromMs, toMs, reads.reader(label)),
      gateMarks: () => repo.gateMarks(),
      hostState: (label) => hostStateOf(label, hostState(label)),
      ...(deps.logs ? { serviceLogs: serviceLogReader(deps.logs) } : {}),
      onPrem: (labels) => ({
        routers: config.current.hosts
          .filter((h) => labels.includes(h.label))
          .flatMap((h) => h.services.flatMap((s) => (s.lifecycle?.routerBaseUrl ? [{ target: upstreamKey(h.label, s.id), url: s.lifecycle.routerBaseUrl }] : []))),
        offPremCalls: deps.offPrem?.counts() ?? null,
      }),
    };
  };

  let principal = 'operator';
  try {
    principal = userInfo().username || principal;
  } catch {
    // no passwd entry: keep the generic principal
  }

  return new ReportService({
    repo,
    audit: store.audit,
    clock,
    logger,
    sources,
    pdf: deps.pdf,
    defaultDir: join(deps.dataDir, 'reports'),
    principal,
    db: store.db,
    emitProgress: (p) => deps.emit('report.progress', p),
    agentSocket: () => process.env.SSH_AUTH_SOCK,
    home: deps.home,
  });
}
