// The host's health as an operator reads it (issue #29 items 2–4): root disk
// free with a low-disk flag in words, RAM, swap, load against CPUs, uptime, a
// recent reboot, and how many process flags and GPU faults the host shows.
// Pure: the host card and the host view render these; tested in
// test/unit/renderer/fleet/host-health-facts.test.ts. Unknown is "—" with the
// reason in `title`, never 0.
import { isSlowdownReason, type DiskView, type HostHealthView, type HostView } from '../../../../src-preload/contract/index.js';
import { DASH, formatAgo, formatDuration } from '../../format/format.js';

export const GIB = 1024 ** 3;
/** Field notes §1: 8.0 GiB free on / blocked the proof of concept. The alert's default (issue #29 item 5) is the same pair. */
export const LOW_DISK_FREE_BYTES = 10 * GIB;
export const LOW_DISK_FREE_PCT = 10;
/** A reboot is news for a day; after that the uptime says it. */
export const REBOOT_NEWS_MS = 24 * 3_600_000;

/** Bytes for a tight cell: "8.0 GiB", "69 GiB", "1.7 TiB"; unknown "—". */
export function formatBytes(bytes: number | null | undefined): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return DASH;
  const gib = bytes / GIB;
  if (gib >= 1024) return `${(gib / 1024).toFixed(1)} TiB`;
  if (gib >= 100) return `${gib.toFixed(0)} GiB`;
  if (gib >= 0.1 || gib === 0) return `${gib.toFixed(1)} GiB`;
  return `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
}

/** One figure: its text, why it is unknown (or where it is from), and a flag said in words. */
export interface Fact {
  readonly text: string;
  readonly title: string;
  readonly known: boolean;
  /** Words that say what is wrong ("low: below 10 GiB"), shown beside the figure; null when fine or unknown. */
  readonly flag: string | null;
  /** Raw figure for `data-value`; null when unknown. */
  readonly value: number | null;
}

const unknownFact = (why: string): Fact => ({ text: DASH, title: why, known: false, flag: null, value: null });

/** Why a host has no health figure at all; null when it has one to show. */
export function healthMissing(health: HostHealthView | undefined): string | null {
  if (health === undefined) return 'Host health is not read: polling is off for this host (health.intervalMs: 0) or the console is older.';
  if (health.atMs === null) return health.staleReason ? `Not read yet — ${health.staleReason}` : 'Not read yet — the first host-health round has not finished.';
  return null;
}

/**
 * The words for a low disk, or null. Whether it is low is core's verdict
 * (`disk.margin`, against the host's own `alerts.disk` thresholds: the same
 * rule the disk_low alert, `gpu-console status` and the report's gate use);
 * the defaults below only judge a reading from a console that sends no verdict.
 */
export function lowDiskFlag(disk: Pick<DiskView, 'freeBytes' | 'totalBytes' | 'margin'>, threshold: HostHealthView['diskThreshold'] = undefined): string | null {
  const { freeBytes: free, totalBytes: total } = disk;
  if (free === null) return null;
  const t = threshold ?? { freeGiB: LOW_DISK_FREE_BYTES / GIB, freePct: LOW_DISK_FREE_PCT };
  const pct = total !== null && total > 0 ? (free / total) * 100 : null;
  const belowBytes = free < t.freeGiB * GIB;
  const low = disk.margin !== undefined ? disk.margin === 'low' : belowBytes || (pct !== null && pct < t.freePct);
  if (!low) return null;
  if (belowBytes) return `low: ${formatBytes(free)} free, below ${t.freeGiB} GiB`;
  return `low: ${pct === null ? formatBytes(free) : `${pct.toFixed(1)}%`} free, below ${t.freePct}%`;
}

export function usedPct(disk: Pick<DiskView, 'usedBytes' | 'totalBytes'>): number | null {
  return disk.usedBytes !== null && disk.totalBytes !== null && disk.totalBytes > 0 ? (disk.usedBytes / disk.totalBytes) * 100 : null;
}

/** Root disk: "69 GiB free / 200 GiB", flagged when low. */
export function rootDiskFact(health: HostHealthView | undefined): Fact {
  const missing = healthMissing(health);
  if (missing !== null) return unknownFact(missing);
  const root = health!.disks.find((d) => d.kind === 'root');
  if (root === undefined) return unknownFact('The root filesystem was not in the last reading.');
  if (root.freeBytes === null) return unknownFact(root.error ?? 'df did not report the root filesystem.');
  const flag = lowDiskFlag(root, health!.diskThreshold);
  return {
    text: `${formatBytes(root.freeBytes)} free / ${formatBytes(root.totalBytes)}`,
    title: `Root filesystem ${root.mount ?? root.path}: ${formatBytes(root.freeBytes)} available to users of ${formatBytes(root.totalBytes)} (df -PB1)${flag ? ` — ${flag}` : ''}`,
    known: true,
    flag,
    value: root.freeBytes,
  };
}

/** RAM used (total − available) / total. */
export function memoryFact(health: HostHealthView | undefined): Fact {
  const missing = healthMissing(health);
  if (missing !== null) return unknownFact(missing);
  const { memTotalBytes: total, memAvailableBytes: avail } = health!;
  if (total === null || avail === null) return unknownFact('/proc/meminfo gave no MemTotal or MemAvailable.');
  return {
    text: `${formatBytes(total - avail)} / ${formatBytes(total)}`,
    title: `RAM used ${formatBytes(total - avail)} of ${formatBytes(total)}; ${formatBytes(avail)} available (/proc/meminfo). Sleep level 1 parks weights here.`,
    known: true,
    flag: avail / total < 0.05 ? `low: ${formatBytes(avail)} available` : null,
    value: total - avail,
  };
}

export function swapFact(health: HostHealthView | undefined): Fact {
  const missing = healthMissing(health);
  if (missing !== null) return unknownFact(missing);
  const { swapTotalBytes: total, swapFreeBytes: free } = health!;
  if (total === null || free === null) return unknownFact('/proc/meminfo gave no SwapTotal or SwapFree.');
  if (total === 0) return { text: 'none', title: 'No swap configured (SwapTotal 0).', known: true, flag: null, value: 0 };
  return { text: `${formatBytes(total - free)} / ${formatBytes(total)}`, title: `Swap used of total (/proc/meminfo)`, known: true, flag: null, value: total - free };
}

/** 1-minute load against the CPU count: "3.2 / 8 CPUs", flagged above the count. */
export function loadFact(health: HostHealthView | undefined): Fact {
  const missing = healthMissing(health);
  if (missing !== null) return unknownFact(missing);
  const { load1, load5, load15, cpuCount } = health!;
  if (load1 === null) return unknownFact('/proc/loadavg was not read.');
  const cpus = cpuCount === null ? `${DASH} CPUs` : `${cpuCount} CPUs`;
  return {
    text: `${load1.toFixed(2)} / ${cpus}`,
    title: `Load average 1/5/15 min: ${load1.toFixed(2)} ${load5?.toFixed(2) ?? DASH} ${load15?.toFixed(2) ?? DASH}; ${cpuCount === null ? 'CPU count unknown (nproc)' : `${cpuCount} CPUs (nproc)`}`,
    known: true,
    flag: cpuCount !== null && load1 > cpuCount ? 'above CPU count' : null,
    value: load1,
  };
}

export function uptimeFact(health: HostHealthView | undefined): Fact {
  const missing = healthMissing(health);
  if (missing !== null) return unknownFact(missing);
  const s = health!.uptimeS;
  if (s === null) return unknownFact('/proc/uptime was not read.');
  return { text: formatDuration(s * 1000), title: `Up ${formatDuration(s * 1000)} (/proc/uptime) as of the last reading; boot id ${health!.bootId ?? DASH}`, known: true, flag: null, value: s };
}

/** "rebooted 4 min ago" while the console saw a new boot id in the last day; null otherwise. */
export function rebootBadge(health: HostHealthView | undefined, nowMs: number): string | null {
  const at = health?.rebootedAtMs ?? null;
  if (at === null || nowMs - at > REBOOT_NEWS_MS) return null;
  return `rebooted ${formatAgo(at, nowMs)}`;
}

/** The figures are the last good ones (a failed round) or older than three rounds: say so with their age. */
export function staleNote(health: HostHealthView | undefined, nowMs: number): { text: string; title: string } | null {
  if (health === undefined || health.atMs === null) return null;
  const age = formatAgo(health.atMs, nowMs);
  if (health.staleReason !== null) return { text: `stale, read ${age}`, title: `The last host-health round failed (${health.staleReason}); these are the figures read ${age}.` };
  if (nowMs - health.atMs > 3 * Math.max(health.intervalMs, 5_000)) return { text: `old, read ${age}`, title: `No host-health reading since ${age} (every ${formatDuration(health.intervalMs)} expected).` };
  return null;
}

/** Counts the card shows: process flags and GPU faults; null where not read yet (faults: the FAULTS round). */
export interface FaultCounts {
  readonly processFlags: number | null;
  readonly xid: number | null;
  /** GPUs with an uncorrected ECC or RAS error, or a page retirement waiting for a reset (corrected errors alone are shown in the host view, not counted). */
  readonly ecc: number | null;
  /** GPUs with a slowdown throttle active (thermal, HW slowdown, power brake). */
  readonly throttling: number | null;
}

/** A throttle reason that means a slowdown (the contract's list; the others are normal under load). */
export function isSlowdown(reason: string): boolean {
  return isSlowdownReason(reason);
}

export function faultCounts(host: Pick<HostView, 'gpus' | 'gpuProcesses' | 'health'>): FaultCounts {
  const read = host.gpus.filter((g) => g.faults !== undefined);
  const faults = read.map((g) => g.faults!);
  const some = (pick: (f: (typeof faults)[number]) => boolean | null): number | null => (read.length === 0 ? null : faults.filter((f) => pick(f) === true).length);
  const kernelLog = host.health?.kernelLog ?? null;
  return {
    processFlags: host.gpuProcesses === undefined ? null : host.gpuProcesses.flags.length,
    xid: kernelLog === null || kernelLog.source === null ? null : kernelLog.xids.length,
    ecc: some((f) => (f.eccUncorrectedVolatile ?? 0) > 0 || f.retiredPagesPending === true || (f.rasUncorrected ?? 0) > 0),
    throttling: some((f) => f.throttleReasons === null ? null : f.throttleReasons.some(isSlowdown)),
  };
}
