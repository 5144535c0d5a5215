// Why a host needs a look, in words, worst first: the fleet overview's
// "trouble first" order and the reason line on each tile. A pure function of
// the host's view, its open alerts and the proxy's queue, so the order can be
// tested and the same words reach every tile.
import { GPU_HOT_WARN_C_DEFAULT, type Alert, type HostView, type ProxyStats } from '../../../../../src-preload/contract/index.js';

/** A GPU at or above this is marked hot: the gpu_hot rule's default (a host's own override is not in its view). */
export const HOT_GPU_C = GPU_HOT_WARN_C_DEFAULT;

export type TroubleKind =
  | 'down'
  | 'trust'
  | 'stale'
  | 'service-down'
  | 'alert-critical'
  | 'hot'
  | 'throttle'
  | 'asleep-waiting'
  | 'alert-warning'
  | 'connecting'
  | 'loading';

/** Lower is worse; hosts are ordered by their worst trouble, then by name. */
export const TROUBLE_RANK: Record<TroubleKind, number> = {
  down: 0,
  trust: 1,
  stale: 2,
  'service-down': 3,
  'alert-critical': 4,
  hot: 5,
  throttle: 5,
  'asleep-waiting': 6,
  'alert-warning': 7,
  connecting: 8,
  loading: 9,
};

/** The rank of a host with nothing to say. */
export const NO_TROUBLE = 100;

export interface Trouble {
  readonly kind: TroubleKind;
  readonly text: string;
}

/** A host's open alerts, counted for its tile. */
export interface HostAlertSummary {
  readonly open: number;
  readonly critical: number;
  /** The worst alert's message (critical first, then the newest). */
  readonly top: string | null;
}

export const NO_ALERTS: HostAlertSummary = { open: 0, critical: 0, top: null };

/** Open alerts per host label. */
export function alertSummaries(alerts: readonly Alert[]): Map<string, HostAlertSummary> {
  const by = new Map<string, Alert[]>();
  for (const a of alerts) {
    const list = by.get(a.host);
    if (list) list.push(a);
    else by.set(a.host, [a]);
  }
  const out = new Map<string, HostAlertSummary>();
  for (const [host, list] of by) {
    list.sort((x, y) => (x.severity === y.severity ? y.raisedAt - x.raisedAt : x.severity === 'critical' ? -1 : y.severity === 'critical' ? 1 : 0));
    out.set(host, { open: list.length, critical: list.filter((a) => a.severity === 'critical').length, top: list[0]?.message ?? null });
  }
  return out;
}

/** Per host label: the proxy's queued requests for each of its services that is asleep (`serviceId → queued`). */
export function queuedWhileAsleep(stats: ProxyStats | null): Map<string, ReadonlyMap<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const u of stats?.upstreams ?? []) {
    if (u.state !== 'sleeping' || u.queued <= 0) continue;
    let m = out.get(u.label);
    if (!m) out.set(u.label, (m = new Map()));
    m.set(u.serviceId, u.queued);
  }
  return out;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function linkTrouble(host: HostView): Trouble | null {
  const code = host.lastError ? `: ${host.lastError.code}` : '';
  switch (host.state) {
    case 'failed':
      return host.hostKey && host.hostKey.status !== 'unknown' ? { kind: 'trust', text: `host key ${host.hostKey.status}` } : { kind: 'down', text: `link down${code}` };
    case 'reconnecting':
      return { kind: 'down', text: `link lost${code}` };
    case 'disconnected':
      return { kind: 'down', text: 'disconnected' };
    case 'awaiting-trust':
      return { kind: 'trust', text: 'host key to confirm' };
    case 'connecting':
      return { kind: 'connecting', text: 'connecting' };
    default:
      return null;
  }
}

function gpuTroubles(host: HostView): Trouble[] {
  const out: Trouble[] = [];
  const hot = host.gpus.filter((g) => g.temperatureC !== null && g.temperatureC >= HOT_GPU_C);
  if (hot.length > 0) {
    const worst = hot.reduce((a, b) => ((b.temperatureC ?? 0) > (a.temperatureC ?? 0) ? b : a));
    out.push({ kind: 'hot', text: `GPU ${worst.index} ${Math.round(worst.temperatureC ?? 0)} °C${hot.length > 1 ? ` (+${hot.length - 1} hot)` : ''}` });
  }
  const slow = host.gpus.filter((g) => g.faults?.slowdownSinceMs != null);
  if (slow.length > 0) out.push({ kind: 'throttle', text: `GPU ${slow.map((g) => g.index).join(', ')} throttling` });
  return out;
}

function serviceTroubles(host: HostView, asleep: ReadonlyMap<string, number> | undefined): Trouble[] {
  const out: Trouble[] = [];
  const down = host.services.filter((s) => s.health === 'down');
  if (down.length > 0) out.push({ kind: 'service-down', text: `${down.map((s) => s.id).join(', ')} down` });
  const stale = host.services.filter((s) => s.stale && s.health !== 'down');
  if (host.gpuStale || stale.length > 0) {
    const what = [host.gpuStale ? 'GPUs' : null, ...stale.map((s) => s.id)].filter((x): x is string => x !== null);
    out.push({ kind: 'stale', text: `${what.join(', ')} stale` });
  }
  for (const [serviceId, queued] of asleep ?? []) out.push({ kind: 'asleep-waiting', text: `${serviceId} asleep, ${plural(queued, 'request')} waiting` });
  const loading = host.services.filter((s) => s.health === 'loading');
  if (loading.length > 0) out.push({ kind: 'loading', text: `${loading.map((s) => s.id).join(', ')} loading` });
  return out;
}

function alertTroubles(alerts: HostAlertSummary): Trouble[] {
  if (alerts.open === 0) return [];
  // The tile's flag shows the count; the words are the worst alert's own.
  const text = alerts.top ?? plural(alerts.open, 'open alert');
  return [{ kind: alerts.critical > 0 ? 'alert-critical' : 'alert-warning', text }];
}

/**
 * What is wrong with a host, worst first. A host whose link is down says only
 * that about its link (its last figures are old, not a second problem), but
 * keeps its open alerts.
 */
export function hostTroubles(host: HostView, alerts: HostAlertSummary = NO_ALERTS, asleep?: ReadonlyMap<string, number>): Trouble[] {
  const link = linkTrouble(host);
  const list: Trouble[] = link ? [link] : [];
  if (host.state === 'connected') list.push(...serviceTroubles(host, asleep), ...gpuTroubles(host));
  list.push(...alertTroubles(alerts));
  return list.sort((a, b) => TROUBLE_RANK[a.kind] - TROUBLE_RANK[b.kind]);
}

export function troubleRank(troubles: readonly Trouble[]): number {
  return troubles.length === 0 ? NO_TROUBLE : TROUBLE_RANK[troubles[0]!.kind];
}
