// Rules judged per host from one tick: its telemetry could not be read, a GPU
// runs hot, its SSH session keeps dropping.
import type { HostConnectionState } from '../../../../src-preload/contract/index.js';
import type { GpuTick, HostAlertTick } from '../alert-tick.js';
import type { RuleSettings } from '../rule-settings.js';
import type { Finding } from './service-rules.js';

export function hostStaleFinding(h: HostAlertTick, r: RuleSettings['host_stale']): Finding {
  const subject = { kind: 'host_stale' as const, host: h.host, serviceId: null };
  const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: null };
  if (!r.enabled || h.staleReason === null) return { ...base, verdict: null };
  return { ...base, verdict: { severity: 'warning', message: `telemetry stale: ${h.staleReason}`, value: null, threshold: null, model: null } };
}

/** A GPU at or above the warning temperature; critical at the configured or the driver's critical temperature. */
export function gpuHotFinding(host: string, g: GpuTick, r: RuleSettings['gpu_hot']): Finding {
  const subject = { kind: 'gpu_hot' as const, host, serviceId: null, part: `gpu${g.index}` };
  const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: null, point: { unit: '°C', value: g.tempC } };
  if (!r.enabled) return { ...base, verdict: null };
  if (g.tempC === null) return { ...base, verdict: 'unknown' };
  const critical = r.criticalC ?? g.criticalC;
  const severity = critical !== null && g.tempC >= critical ? 'critical' : g.tempC >= r.warnC ? 'warning' : null;
  if (severity === null) return { ...base, verdict: null };
  const threshold = severity === 'critical' ? critical! : r.warnC;
  return {
    ...base,
    verdict: { severity, model: null, value: g.tempC, threshold, gpuIndex: g.index, message: `GPU${g.index} at ${g.tempC} °C (${severity === 'critical' ? 'critical' : 'warning'} at ${threshold} °C)` },
  };
}

/** States a session falls into when it drops on its own (a person's disconnect is `disconnected`, not a flap). */
const DROPPED: ReadonlySet<HostConnectionState> = new Set(['reconnecting', 'connecting', 'failed']);

/** One host's session drops (connected → reconnecting/connecting/failed) within the rule's window. */
export class SessionDrops {
  private last: HostConnectionState | undefined;
  private readonly drops: number[] = [];

  finding(h: HostAlertTick, now: number, r: RuleSettings['tunnel_flapping']): Finding {
    const subject = { kind: 'tunnel_flapping' as const, host: h.host, serviceId: null };
    if (h.session !== undefined) {
      if (this.last === 'connected' && DROPPED.has(h.session)) this.drops.push(now);
      this.last = h.session;
    }
    while (this.drops.length > 0 && this.drops[0]! <= now - r.windowMs) this.drops.shift();
    const n = this.drops.length;
    const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: r.windowMs, point: { unit: 'SSH drops in the window', value: h.session === undefined ? null : n } };
    if (!r.enabled) return { ...base, verdict: null };
    if (h.session === undefined) return { ...base, verdict: 'unknown' };
    if (n < r.reconnects) return { ...base, verdict: null };
    return {
      ...base,
      verdict: { severity: 'warning', model: null, value: n, threshold: r.reconnects, message: `the SSH session to ${h.host} dropped ${n} times in ${Math.round(r.windowMs / 60_000)} min (alert at ${r.reconnects})` },
    };
  }
}
