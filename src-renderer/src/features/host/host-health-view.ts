// Pure pieces of the host view's health section (issue #29 items 2–4): the
// disks table, model cache sizes, Docker's root, the per-GPU process table and
// the GPU faults panel, as rows of text. Unknown is "—" with why, never 0;
// faults the core has not read yet say "not read yet". Tested in
// test/unit/renderer/host/host-health-view.test.ts.
import type { DiskView, GpuFaultsView, HostHealthView, HostView, KernelLogView } from '../../../../src-preload/contract/index.js';
import { DASH, formatAgo, formatDuration, formatTemp } from '../../format/format.js';
import { formatBytes, isSlowdown, lowDiskFlag, usedPct } from '../fleet/host-health-facts.js';

const DISK_KIND: Readonly<Record<DiskView['kind'], string>> = { root: 'root', cache: 'model cache', docker: 'Docker root' };

export interface DiskRow {
  readonly key: string;
  readonly kind: string;
  readonly path: string;
  readonly mount: string;
  readonly freeTotal: string;
  readonly usedPct: number | null;
  readonly used: string;
  /** Why the figures are unknown (`CODE: message`); null when read. */
  readonly error: string | null;
  readonly flag: string | null;
}

export function diskRows(health: HostHealthView): DiskRow[] {
  return health.disks.map((d, i) => {
    const pct = usedPct(d);
    return {
      key: `${d.kind}-${d.path}-${i}`,
      kind: DISK_KIND[d.kind],
      path: d.path,
      mount: d.mount ?? DASH,
      freeTotal: d.freeBytes === null && d.totalBytes === null ? DASH : `${formatBytes(d.freeBytes)} / ${formatBytes(d.totalBytes)}`,
      usedPct: pct,
      used: pct === null ? DASH : `${pct.toFixed(0)}%`,
      error: d.error,
      flag: lowDiskFlag(d, health.diskThreshold),
    };
  });
}

/** The model caches' sizes with when `du` measured them. */
export function cacheRows(health: HostHealthView, nowMs: number): { path: string; size: string; title: string }[] {
  const age = health.cacheSizesAtMs === null ? null : formatAgo(health.cacheSizesAtMs, nowMs);
  return health.cacheSizes.map((c) => ({
    path: c.path,
    size: c.bytes === null ? DASH : formatBytes(c.bytes),
    title: c.bytes === null ? (c.error ?? (age === null ? 'Not measured yet: du runs every 10 min at low priority.' : 'du did not finish.')) : `du -sxb, measured ${age ?? DASH}`,
  }));
}

/** Docker's root folder, or why it is unknown; null when the host has no Docker figure at all. */
export function dockerText(health: HostHealthView): { text: string; known: boolean } | null {
  if (health.docker === null) return null;
  if (health.docker.rootDir !== null) return { text: health.docker.rootDir, known: true };
  return { text: health.docker.why ?? 'unknown', known: false };
}

export interface ProcessRow {
  readonly key: string;
  readonly gpu: number;
  readonly pid: string;
  readonly name: string;
  readonly user: string;
  readonly memory: string;
  /** The service it belongs to, or "not a configured service". */
  readonly service: string;
  readonly matched: boolean;
  readonly why: string;
}

/** Every GPU's processes as rows; null when no GPU has a process list yet. */
export function processRows(host: Pick<HostView, 'gpus'>): ProcessRow[] | null {
  if (host.gpus.every((g) => g.processes === undefined)) return null;
  return host.gpus.flatMap((g) =>
    (g.processes ?? []).map((p, i) => ({
      key: `${g.index}-${p.pid ?? 'x'}-${i}`,
      gpu: g.index,
      pid: p.pid === null ? DASH : String(p.pid),
      name: p.name ?? DASH,
      user: p.user ?? DASH,
      memory: p.usedMemoryMiB === null ? DASH : formatBytes(p.usedMemoryMiB * 1024 ** 2),
      service: p.serviceId ?? 'not a configured service',
      matched: p.serviceId !== null,
      why: p.why,
    })),
  );
}

/** nvidia-smi's clocks_event_reasons names in words. */
export const THROTTLE_WORDS: Readonly<Record<string, string>> = {
  gpu_idle: 'idle',
  applications_clocks_setting: 'application clocks',
  sw_power_cap: 'power cap (software)',
  hw_slowdown: 'HW slowdown',
  hw_thermal_slowdown: 'HW thermal slowdown',
  hw_power_brake_slowdown: 'power brake',
  sw_thermal_slowdown: 'thermal slowdown (software)',
  sync_boost: 'sync boost',
  thermal: 'thermal',
};

export interface FaultRow {
  readonly gpu: number;
  readonly ecc: string;
  /** An uncorrected error since the driver loaded (corrected ones are shown, not flagged). */
  readonly eccBad: boolean;
  readonly retired: string;
  readonly retiredPending: boolean;
  readonly throttle: string;
  readonly slowdown: boolean;
  readonly critical: string;
  readonly ras: string;
  readonly source: string;
}

const n = (v: number | null): string => (v === null ? DASH : String(v));

function eccText(f: GpuFaultsView): string {
  if (f.eccEnabled === false) return 'ECC off';
  if (f.eccCorrectedVolatile === null && f.eccUncorrectedVolatile === null && f.eccCorrectedAggregate === null && f.eccUncorrectedAggregate === null) return DASH;
  return `${n(f.eccUncorrectedVolatile)} uncorr. · ${n(f.eccCorrectedVolatile)} corr. (aggregate ${n(f.eccUncorrectedAggregate)} · ${n(f.eccCorrectedAggregate)})`;
}

function throttleText(f: GpuFaultsView, nowMs: number): string {
  if (f.throttleReasons === null) return DASH;
  if (f.throttleReasons.length === 0) return 'none';
  const words = f.throttleReasons.map((r) => THROTTLE_WORDS[r] ?? r).join(', ');
  return f.slowdownSinceMs !== null ? `${words} — slowdown for ${formatDuration(nowMs - f.slowdownSinceMs)}` : words;
}

/** One row per GPU that has fault figures; null when none has been read yet. */
export function faultRows(host: Pick<HostView, 'gpus'>, nowMs: number): FaultRow[] | null {
  const read = host.gpus.filter((g) => g.faults !== undefined);
  if (read.length === 0) return null;
  return read.map((g) => {
    const f = g.faults!;
    return {
      gpu: g.index,
      ecc: eccText(f),
      eccBad: (f.eccUncorrectedVolatile ?? 0) > 0,
      retired: `${f.retiredPages === null ? DASH : f.retiredPages}${f.retiredPagesPending ? ' · one pending: applies at the next GPU reset or reboot' : ''}`,
      retiredPending: f.retiredPagesPending === true,
      throttle: throttleText(f, nowMs),
      slowdown: (f.throttleReasons ?? []).some(isSlowdown),
      critical: formatTemp(f.temperatureCriticalC),
      ras: f.rasUncorrected === null && f.rasCorrected === null ? DASH : `${n(f.rasUncorrected)} uncorr. · ${n(f.rasCorrected)} corr.`,
      source: f.source,
    };
  });
}

/** How the kernel log is read for Xid events, in words; "not read yet" before the first fault reading. */
export function kernelLogStatus(kernelLog: KernelLogView | null | undefined): { text: string; readable: boolean | null } {
  if (kernelLog === undefined || kernelLog === null) return { text: 'Kernel log not read yet.', readable: null };
  if (kernelLog.source === null) return { text: kernelLog.why ?? 'The kernel log cannot be read.', readable: false };
  return { text: `Read with ${kernelLog.source === 'journalctl' ? 'journalctl -k' : 'dmesg'}: ${kernelLog.xids.length === 0 ? 'no Xid event' : `${kernelLog.xids.length} Xid event${kernelLog.xids.length === 1 ? '' : 's'}`}.`, readable: true };
}
