// Alert conditions read from a host's health round: low disks, GPU memory or
// a service's port held by a process the console does not know, GPU faults
// (Xid, a rise in uncorrected ECC, pages waiting to be retired), sustained
// slowdowns, reboots. The shapes below are what alerts reads of the fleet's
// HostState (which satisfies them; alerts may not import the fleet, which
// reaches alerts through telemetry). Unknown figures raise nothing and clear
// nothing: a stale round leaves every alert as it was.
import type { AlertContextLine, AlertKind, AlertSeverity } from '../../../src-preload/contract/index.js';
import { diskMarginOf } from '../config/index.js';
import type { DiskThresholds, HostAlertSettings } from './settings.js';

export interface DiskInput {
  readonly kind: string;
  readonly path: string;
  readonly mount: string | null;
  readonly totalBytes: number | null;
  readonly freeBytes: number | null;
}

export interface ProcessFlagInput {
  readonly code: string;
  readonly message: string;
  readonly pid: number | null;
  readonly serviceId: string | null;
  readonly gpuIndex: number | null;
  readonly command: string | null;
}

export interface GpuFaultInput {
  readonly gpuIndex: number;
  readonly eccUncorrectedVolatile: number | null;
  readonly retiredPagesPending: boolean | null;
  readonly throttleReasons: readonly string[] | null;
  readonly slowdownSinceMs: number | null;
  /** The driver's critical temperature (AMD hwmon), for gpu_hot; absent or null when unknown. */
  readonly temperatureCriticalC?: number | null;
}

export interface XidInput {
  readonly atMs: number;
  readonly xid: number;
  readonly pciBusId: string | null;
  readonly gpuIndex: number | null;
  readonly text: string;
}

/** What the health rules read of one host (the fleet's HostState satisfies it). */
export interface HostHealthAlertInput {
  readonly label: string;
  readonly health: {
    readonly stale: { readonly code: string } | null;
    readonly figures: { readonly disks: readonly DiskInput[] } | null;
    readonly rebootedAtMs: number | null;
    readonly faults: {
      readonly gpus: readonly GpuFaultInput[];
      readonly kernelLog: { readonly xids: readonly XidInput[] } | null;
    } | null;
  } | null;
  readonly gpuProcesses: { readonly flags: readonly ProcessFlagInput[] } | null;
}

/** Xids that mean the GPU or its memory failed (NVIDIA's Xid catalogue); the others (an app's fault, 13/31/43…) warn. */
const CRITICAL_XIDS = new Set([48, 63, 64, 74, 79, 92, 94, 95, 119, 120]);

/** One alert's subject and what it says. `part` tells apart several alerts of one kind on one host (a disk, a PID). */
export interface HealthFinding {
  readonly kind: AlertKind;
  readonly part: string;
  readonly serviceId: string | null;
  readonly gpuIndex: number | null;
  readonly severity: AlertSeverity;
  readonly message: string;
  readonly value: number | null;
  readonly threshold: number | null;
  readonly command: string | null;
  readonly context?: readonly AlertContextLine[];
}

/** The state-like findings of one round, and which kinds were read (a kind not read is left as it was). */
export interface HealthRound {
  readonly read: ReadonlySet<AlertKind>;
  readonly states: readonly HealthFinding[];
  readonly events: readonly HealthFinding[];
}

const GIB = 1024 ** 3;
const gib = (bytes: number): string => `${(bytes / GIB).toFixed(1)} GiB`;

/** Whether a disk is low; `active` (already raised) needs free above the thresholds plus the margin to stop being low. */
export function diskIsLow(freeBytes: number, totalBytes: number, t: DiskThresholds, active: boolean): boolean {
  return diskMarginOf(freeBytes, totalBytes, t, active) === 'low';
}

function diskFindings(disks: readonly DiskInput[], t: DiskThresholds, isActive: (part: string) => boolean): HealthFinding[] {
  const out: HealthFinding[] = [];
  const seen = new Set<string>();
  for (const d of disks) {
    if (d.freeBytes === null || d.totalBytes === null) continue;
    // The root, the cache and Docker's root are often one filesystem: one alert per mount.
    const part = `disk:${d.mount ?? d.path}`;
    if (seen.has(part)) continue;
    seen.add(part);
    if (!diskIsLow(d.freeBytes, d.totalBytes, t, isActive(part))) continue;
    const pct = d.totalBytes > 0 ? (d.freeBytes / d.totalBytes) * 100 : 0;
    out.push({
      kind: 'disk_low',
      part,
      serviceId: null,
      gpuIndex: null,
      severity: 'warning',
      message: `${d.kind} disk ${d.path}${d.mount && d.mount !== d.path ? ` (on ${d.mount})` : ''}: ${gib(d.freeBytes)} free of ${gib(d.totalBytes)} (${pct.toFixed(1)} %), below ${t.freePct} % or ${t.freeGiB} GiB`,
      value: Math.round((d.freeBytes / GIB) * 1000) / 1000,
      threshold: t.freeGiB,
      command: null,
    });
  }
  return out;
}

/** Every flag of the process matcher is one: memory held by no service, a second or a stale listener on a service's port. */
function processFindings(flags: readonly ProcessFlagInput[]): HealthFinding[] {
  return flags.map((f) => ({
    kind: 'gpu_process_unknown' as const,
    part: `${f.code}:${f.pid ?? '?'}:${f.serviceId ?? ''}:${f.gpuIndex ?? ''}`,
    serviceId: f.serviceId,
    gpuIndex: f.gpuIndex,
    severity: 'warning' as const,
    message: f.message,
    value: f.pid,
    threshold: null,
    command: f.command,
  }));
}

function gpuStateFindings(gpus: readonly GpuFaultInput[], settings: HostAlertSettings, now: number): HealthFinding[] {
  const out: HealthFinding[] = [];
  for (const g of gpus) {
    if (g.slowdownSinceMs !== null && now - g.slowdownSinceMs >= settings.throttleAfterMs) {
      const s = Math.round((now - g.slowdownSinceMs) / 1000);
      out.push({
        kind: 'gpu_throttle',
        part: `gpu${g.gpuIndex}`,
        serviceId: null,
        gpuIndex: g.gpuIndex,
        severity: 'warning',
        message: `GPU${g.gpuIndex} has been slowed down for ${s} s (${(g.throttleReasons ?? []).join(', ') || 'slowdown'})`,
        value: s,
        threshold: Math.round(settings.throttleAfterMs / 1000),
        command: null,
      });
    }
    if (g.retiredPagesPending === true) {
      out.push({
        kind: 'gpu_fault',
        part: `gpu${g.gpuIndex}:pending`,
        serviceId: null,
        gpuIndex: g.gpuIndex,
        severity: 'warning',
        message: `GPU${g.gpuIndex}: a page retirement / row remap is pending until the driver reloads or the host reboots`,
        value: null,
        threshold: null,
        command: null,
      });
    }
  }
  return out;
}

/**
 * What one host's round shows. `memory` keeps what was seen before (Xids, ECC
 * counts, the last reboot) so only news is an event; the first round of a host
 * only sets it, except Xids logged within the hold (a fault just before the
 * console started still matters).
 */
export function healthRound(host: HostHealthAlertInput, settings: HostAlertSettings, memory: HostEventMemory, now: number, isActive: (part: string) => boolean): HealthRound {
  const read = new Set<AlertKind>();
  const states: HealthFinding[] = [];
  const events: HealthFinding[] = [];
  const h = host.health;
  if (h !== null && h.stale === null && h.figures !== null) {
    read.add('disk_low');
    states.push(...diskFindings(h.figures.disks, settings.disk, isActive));
  }
  if (host.gpuProcesses !== null && (h === null || h.stale === null)) {
    read.add('gpu_process_unknown');
    states.push(...processFindings(host.gpuProcesses.flags));
  }
  if (h?.faults && h.stale === null) {
    read.add('gpu_throttle');
    read.add('gpu_fault');
    states.push(...gpuStateFindings(h.faults.gpus, settings, now));
    events.push(...memory.faultEvents(h.faults, settings, now));
  }
  if (h !== null) events.push(...memory.rebootEvents(h.rebootedAtMs));
  return { read, states, events };
}

/** Per host: what the rules saw before, so an Xid, an ECC rise or a reboot is reported once. */
export class HostEventMemory {
  private xidSeenUpTo: number | null = null;
  private readonly ecc = new Map<number, number>();
  private rebootSeen: number | null | undefined = undefined;

  faultEvents(faults: NonNullable<NonNullable<HostHealthAlertInput['health']>['faults']>, settings: HostAlertSettings, now: number): HealthFinding[] {
    const out: HealthFinding[] = [];
    const xids = faults.kernelLog?.xids ?? [];
    const since = this.xidSeenUpTo ?? now - settings.eventHoldMs;
    for (const x of xids) if (x.atMs > since) out.push(xidFinding(x));
    if (faults.kernelLog !== null) this.xidSeenUpTo = Math.max(since, ...xids.map((x) => x.atMs));
    for (const g of faults.gpus) {
      const count = g.eccUncorrectedVolatile;
      if (count === null) continue;
      const before = this.ecc.get(g.gpuIndex);
      this.ecc.set(g.gpuIndex, count);
      if (before === undefined || count <= before) continue;
      out.push({
        kind: 'gpu_fault',
        part: `gpu${g.gpuIndex}:ecc`,
        serviceId: null,
        gpuIndex: g.gpuIndex,
        severity: 'critical',
        message: `GPU${g.gpuIndex}: volatile uncorrected ECC errors rose from ${before} to ${count}`,
        value: count,
        threshold: before,
        command: null,
      });
    }
    return out;
  }

  rebootEvents(rebootedAtMs: number | null): HealthFinding[] {
    const first = this.rebootSeen === undefined;
    const changed = rebootedAtMs !== null && rebootedAtMs !== this.rebootSeen;
    this.rebootSeen = rebootedAtMs;
    // rebootedAtMs is set only when the fleet saw a new boot id in this run, so even a first sight is news.
    if (!changed || (first && rebootedAtMs === null)) return [];
    return [
      {
        kind: 'host_rebooted',
        part: 'boot',
        serviceId: null,
        gpuIndex: null,
        severity: 'warning',
        message: `the host rebooted (new boot id seen at ${new Date(rebootedAtMs).toISOString()})`,
        value: null,
        threshold: null,
        command: null,
      },
    ];
  }
}

function xidFinding(x: XidInput): HealthFinding {
  const gpu = x.gpuIndex === null ? (x.pciBusId ? `PCI ${x.pciBusId}` : 'an unknown GPU') : `GPU${x.gpuIndex}`;
  return {
    kind: 'gpu_fault',
    part: `xid:${x.gpuIndex ?? x.pciBusId ?? '?'}`,
    serviceId: null,
    gpuIndex: x.gpuIndex,
    severity: CRITICAL_XIDS.has(x.xid) ? 'critical' : 'warning',
    message: `Xid ${x.xid} on ${gpu} (kernel log, ${new Date(x.atMs).toISOString()})`,
    value: x.xid,
    threshold: null,
    command: null,
    // The kernel's line itself stays in memory, like log lines: the audit row has the Xid number only.
    context: [{ text: x.text, ts: x.atMs, failure: 'xid' }],
  };
}
