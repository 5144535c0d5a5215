// The report's and the CLI's reading of the one disk-margin rule
// (config/disk-margin.ts, which the host view and the disk_low alert read
// too): a disk's margin as the host view carries it, else judged by that rule
// against the host's thresholds (a view from an older console carries
// neither), and byte counts in words. Unknown is never read as 0 free.
import type { DiskView, HostHealthView } from '../../../src-preload/contract/index.js';
import { DEFAULT_DISK_THRESHOLDS, diskMarginOf, type DiskMargin, type DiskThresholds } from '../config/index.js';

export { diskThresholdText, type DiskMargin, type DiskThresholds } from '../config/index.js';

/** The thresholds the host's health was judged against (its alerts.disk over the fleet's over 10 GiB / 10 %). */
export function thresholdsOf(h: Pick<HostHealthView, 'diskThreshold'>): DiskThresholds {
  return h.diskThreshold ? { ...DEFAULT_DISK_THRESHOLDS, ...h.diskThreshold } : DEFAULT_DISK_THRESHOLDS;
}

/** A disk df could not read is unknown; else the view's own verdict, or the rule's on the view's figures. */
export function marginOf(d: DiskView, t: DiskThresholds): DiskMargin {
  if (d.error !== null) return 'unknown';
  return d.margin ?? diskMarginOf(d.freeBytes, d.totalBytes, t);
}

/** Bytes in binary units with one decimal (`8.0 GiB`); unknown is `—`, never 0. */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}
