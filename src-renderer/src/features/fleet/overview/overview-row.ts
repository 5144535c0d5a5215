// One host as the fleet overview shows it: the figures of its tile and the
// keys it is sorted, searched and grouped by. Built from the host's view (the
// snapshot's own figures; unknown stays null, never 0), its open alerts and
// the proxy's queue; rows are reused while their inputs are the same object,
// so a tick re-renders only the tiles whose host changed.
import type { GpuVendor, HostConnectionState, HostView } from '../../../../../src-preload/contract/index.js';
import { hostTroubles, NO_ALERTS, troubleRank, type HostAlertSummary, type Trouble } from './host-trouble.js';

export interface OverviewRow {
  readonly label: string;
  readonly host: HostView;
  readonly state: HostConnectionState;
  readonly vendor: GpuVendor | null;
  readonly servicesUp: number;
  readonly servicesTotal: number;
  readonly running: number | null;
  readonly waiting: number | null;
  readonly tokS: number | null;
  readonly pricePerHour: number | null;
  readonly vramPct: number | null;
  readonly utilPct: number | null;
  readonly hottestC: number | null;
  readonly alerts: HostAlertSummary;
  readonly troubles: readonly Trouble[];
  readonly rank: number;
  readonly models: readonly string[];
  readonly tags: Readonly<Record<string, string>>;
  /** Lower-cased text a search matches: label, address, models and aliases, service ids, tags (`name:value`). */
  readonly haystack: string;
}

function sumKnown(values: readonly (number | null)[]): number | null {
  let sum: number | null = null;
  for (const v of values) if (v !== null && Number.isFinite(v)) sum = (sum ?? 0) + v;
  return sum;
}

function gpuFigures(host: HostView): Pick<OverviewRow, 'vramPct' | 'utilPct' | 'hottestC'> {
  const used = sumKnown(host.gpus.map((g) => g.memoryUsedMiB));
  const total = sumKnown(host.gpus.map((g) => g.memoryTotalMiB));
  const utils = host.gpus.map((g) => g.utilizationPct).filter((u): u is number => u !== null);
  const temps = host.gpus.map((g) => g.temperatureC).filter((t): t is number => t !== null);
  return {
    vramPct: used !== null && total !== null && total > 0 ? (used / total) * 100 : null,
    utilPct: utils.length > 0 ? utils.reduce((a, b) => a + b, 0) / utils.length : null,
    hottestC: temps.length > 0 ? Math.max(...temps) : null,
  };
}

export function overviewRowOf(host: HostView, alerts: HostAlertSummary = NO_ALERTS, asleep?: ReadonlyMap<string, number>): OverviewRow {
  const live = host.state === 'connected' ? host.services.filter((s) => !s.stale) : [];
  const troubles = hostTroubles(host, alerts, asleep);
  const models = [...new Set(host.services.map((s) => s.model))];
  const tags = host.tags ?? {};
  const haystack = [
    host.label,
    host.address,
    ...host.services.flatMap((s) => [s.id, s.model, ...s.aliases]),
    ...Object.entries(tags).flatMap(([k, v]) => [`${k}:${v}`, v]),
  ]
    .join('\n')
    .toLowerCase();
  return {
    label: host.label,
    host,
    state: host.state,
    vendor: host.gpuVendor ?? host.gpus[0]?.vendor ?? null,
    servicesUp: host.state === 'connected' ? host.services.filter((s) => s.health === 'ok').length : 0,
    servicesTotal: host.services.length,
    running: sumKnown(live.map((s) => s.requestsRunning)),
    waiting: sumKnown(live.map((s) => s.requestsWaiting)),
    tokS: sumKnown(live.map((s) => s.generationTokensPerS)),
    pricePerHour: host.pricePerHourUsd,
    ...gpuFigures(host),
    alerts,
    troubles,
    rank: troubleRank(troubles),
    models,
    tags,
    haystack,
  };
}

/** Keeps each host's row while its view, alerts and queue are unchanged (same objects), so memoised tiles skip. */
export class OverviewRows {
  private readonly cache = new Map<string, { host: HostView; alerts: HostAlertSummary; asleep: ReadonlyMap<string, number> | undefined; row: OverviewRow }>();

  rows(hosts: readonly HostView[], alerts: ReadonlyMap<string, HostAlertSummary>, asleep: ReadonlyMap<string, ReadonlyMap<string, number>>): OverviewRow[] {
    const seen = new Set<string>();
    const out = hosts.map((host) => {
      seen.add(host.label);
      const a = alerts.get(host.label) ?? NO_ALERTS;
      const q = asleep.get(host.label);
      const hit = this.cache.get(host.label);
      if (hit && hit.host === host && sameAlerts(hit.alerts, a) && sameQueue(hit.asleep, q)) return hit.row;
      const row = overviewRowOf(host, a, q);
      this.cache.set(host.label, { host, alerts: a, asleep: q, row });
      return row;
    });
    for (const label of this.cache.keys()) if (!seen.has(label)) this.cache.delete(label);
    return out;
  }
}

const sameAlerts = (a: HostAlertSummary, b: HostAlertSummary): boolean => a === b || (a.open === b.open && a.critical === b.critical && a.top === b.top);

function sameQueue(a: ReadonlyMap<string, number> | undefined, b: ReadonlyMap<string, number> | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
