// The proxy's own /metrics in Prometheus text format (for an existing Grafana).
import type { ProxyStats, StorageHealth } from '../../../src-preload/contract/index.js';
import { OFF_PREM_PURPOSES, type OffPremCounts } from '../base/index.js';
import { CLASS_ORDER, type TrafficClass } from './classes.js';
import type { InFlightView } from './in-flight.js';

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** What the server knows beside its snapshot: the hold budgets in force, and each upstream's requests in flight now. */
export interface ProxyMetricsExtra {
  holdBudgetMs?: Readonly<Record<TrafficClass, number>>;
  inFlight?: ReadonlyMap<string, InFlightView>;
  /** The proxy's own 429/503 refusals, keyed `upstream|code|held` (held: waited for a recovery first). */
  refusals?: ReadonlyMap<string, number>;
}

/** `offPrem`: the app's OffPremCounter counts; without them every purpose reads 0. */
export function renderProxyMetrics(
  stats: ProxyStats,
  answered: ReadonlyMap<string, number>,
  unstored: ReadonlyMap<string, number> = new Map(),
  offPrem: Readonly<Partial<OffPremCounts>> = {},
  extra: ProxyMetricsExtra = {},
): string {
  const lines: string[] = [];
  const family = (name: string, type: 'counter' | 'gauge' | 'summary', help: string) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

  family('gpu_console_proxy_requests_total', 'counter', 'Requests answered by the proxy, by upstream, class and HTTP status.');
  for (const [key, n] of answered) {
    const [upstream, cls, status] = key.split('|');
    lines.push(`gpu_console_proxy_requests_total{upstream="${esc(upstream!)}",class="${esc(cls!)}",status="${status}"} ${n}`);
  }
  family(
    'gpu_console_proxy_refusals_total',
    'counter',
    'The proxy\'s own refusals (503, 429, each with Retry-After), by upstream, code and whether the request was held for a recovery first (held="false": refused at once).',
  );
  for (const [key, n] of extra.refusals ?? []) {
    const [upstream, code, held] = key.split('|');
    lines.push(`gpu_console_proxy_refusals_total{upstream="${esc(upstream!)}",code="${esc(code!)}",held="${held}"} ${n}`);
  }
  family(
    'gpu_console_proxy_unstored_requests_total',
    'counter',
    'Answers to requests without a valid token, and health/metrics scrapes: counted, not kept in the request log. By endpoint and reason.',
  );
  for (const [key, n] of unstored) {
    const [endpoint, reason] = key.split('|');
    lines.push(`gpu_console_proxy_unstored_requests_total{endpoint="${esc(endpoint!)}",reason="${esc(reason!)}"} ${n}`);
  }
  family(
    'gpu_console_offprem_calls_total',
    'counter',
    'Outbound calls refused because their URL was off this machine (upstreams are reached only through the SSH tunnels or loopback), by purpose.',
  );
  for (const purpose of OFF_PREM_PURPOSES) lines.push(`gpu_console_offprem_calls_total{purpose="${purpose}"} ${offPrem[purpose] ?? 0}`);
  if (stats.requestLog) renderRequestLog(lines, family, stats.requestLog);
  family('gpu_console_proxy_slots', 'gauge', 'Slots of each upstream pool.');
  for (const u of stats.upstreams) lines.push(`gpu_console_proxy_slots{upstream="${esc(u.upstream)}"} ${u.slots}`);
  family('gpu_console_proxy_in_flight', 'gauge', 'Requests holding a slot.');
  for (const u of stats.upstreams) for (const c of u.classes) lines.push(`gpu_console_proxy_in_flight{upstream="${esc(u.upstream)}",class="${c.class}"} ${c.inFlight}`);
  family('gpu_console_proxy_queue_depth', 'gauge', 'Requests waiting for a slot.');
  for (const u of stats.upstreams) for (const c of u.classes) lines.push(`gpu_console_proxy_queue_depth{upstream="${esc(u.upstream)}",class="${c.class}"} ${c.queued}`);
  // Quantiles over a sliding minute: a summary (Prometheus refuses a `quantile` label on a gauge); no _sum/_count, as no running totals are kept.
  family('gpu_console_proxy_queue_wait_seconds', 'summary', 'Queue wait over the last minute (quantiles).');
  for (const u of stats.upstreams) {
    for (const c of u.classes) {
      for (const [q, v] of [['0.5', c.waitP50Ms], ['0.95', c.waitP95Ms]] as const) {
        if (v !== null) lines.push(`gpu_console_proxy_queue_wait_seconds{upstream="${esc(u.upstream)}",class="${c.class}",quantile="${q}"} ${v / 1000}`);
      }
    }
  }
  family('gpu_console_proxy_ttft_seconds', 'summary', 'Time to the first byte of the answer over the last minute (quantiles).');
  for (const u of stats.upstreams) {
    for (const c of u.classes) {
      for (const [q, v] of [['0.5', c.ttftP50Ms], ['0.95', c.ttftP95Ms]] as const) {
        if (v !== null) lines.push(`gpu_console_proxy_ttft_seconds{upstream="${esc(u.upstream)}",class="${c.class}",quantile="${q}"} ${v / 1000}`);
      }
    }
  }
  renderAlertFigures(lines, family, extra);
  return lines.join('\n') + '\n';
}

type FamilyWriter = (name: string, type: 'counter' | 'gauge' | 'summary', help: string) => void;

/** The data folder's health: a full disk shows as writable 0 with what is left; free space unknown is left out, never 0. */
export function renderStorageMetrics(view: StorageHealth): string {
  const folder = `folder="${esc(view.folder)}"`;
  const lines = [
    '# HELP gpu_console_storage_writable 1 while the console\'s writes to its data folder land; 0 while the folder is full or refuses writes (request-log rows are dropped, audited changes refused).',
    '# TYPE gpu_console_storage_writable gauge',
    `gpu_console_storage_writable{${folder}} ${view.state === 'ok' ? 1 : 0}`,
    '# HELP gpu_console_storage_free_bytes What the data folder\'s filesystem has left for the console (absent when it cannot be measured).',
    '# TYPE gpu_console_storage_free_bytes gauge',
  ];
  if (view.freeBytes !== null) lines.push(`gpu_console_storage_free_bytes{${folder}} ${view.freeBytes}`);
  return lines.join('\n') + '\n';
}

/** The request log's rows: a full data folder shows here as dropped rows and a failing gauge, while the proxy keeps answering. */
function renderRequestLog(lines: string[], family: FamilyWriter, log: NonNullable<ProxyStats['requestLog']>): void {
  family('gpu_console_request_log_written_total', 'counter', 'Request-log rows written to the data folder since start.');
  lines.push(`gpu_console_request_log_written_total ${log.written}`);
  family('gpu_console_request_log_dropped_total', 'counter', 'Request-log rows dropped since start because the data folder refused writes (full disk, I/O error) for longer than the backlog holds.');
  lines.push(`gpu_console_request_log_dropped_total ${log.dropped}`);
  family('gpu_console_request_log_pending_rows', 'gauge', 'Request-log rows waiting in memory to be written.');
  lines.push(`gpu_console_request_log_pending_rows ${log.pending}`);
  family('gpu_console_request_log_write_failing', 'gauge', '1 while request-log writes fail (the data folder is full or refuses writes), else 0.');
  lines.push(`gpu_console_request_log_write_failing ${log.failingSince === null ? 0 : 1}`);
}

/**
 * The figures the Prometheus alerting rules (resources/prometheus/) read beside the ones above: hold
 * budgets (queue wait rule) and the silence and age of requests in flight (hanging rule). A class
 * with nothing in flight has no silence or age: its series is left out, never written as 0.
 */
function renderAlertFigures(lines: string[], family: FamilyWriter, extra: ProxyMetricsExtra): void {
  family('gpu_console_proxy_hold_budget_seconds', 'gauge', 'How long a request of the class may wait in the queue before it is refused (config proxy.holdBudgetMs).');
  if (extra.holdBudgetMs) for (const cls of CLASS_ORDER) lines.push(`gpu_console_proxy_hold_budget_seconds{class="${cls}"} ${extra.holdBudgetMs[cls] / 1000}`);
  const perClass = (name: string, help: string, pick: (c: NonNullable<InFlightView['byClass'][TrafficClass]>) => number) => {
    family(name, 'gauge', help);
    for (const [upstream, view] of extra.inFlight ?? []) {
      for (const cls of CLASS_ORDER) {
        const c = view.byClass[cls];
        if (c !== undefined) lines.push(`${name}{upstream="${esc(upstream)}",class="${cls}"} ${pick(c) / 1000}`);
      }
    }
  };
  perClass('gpu_console_proxy_request_silence_seconds', 'Longest time since the last byte from the upstream among the requests in flight (since it was sent, before the first byte); absent with none in flight.', (c) => c.longestSilenceMs);
  perClass('gpu_console_proxy_request_age_seconds', 'Longest time a request in flight has been with the upstream (queue wait not included); absent with none in flight.', (c) => c.longestInFlightMs);
  perClass(
    'gpu_console_proxy_silent_request_age_seconds',
    'How long the request with the longest silence has been with the upstream (the hanging rule judges silence and age on this one request); absent with none in flight.',
    (c) => c.silentInFlightMs,
  );
}
