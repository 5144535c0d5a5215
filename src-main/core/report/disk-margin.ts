// The disk margin: how much free space a watched disk (root, a model cache,
// Docker's root) must keep. One rule for the report's gate and the CLI's flag,
// so the two can never disagree about the same `df` figures. Field notes §1:
// the proof-of-concept's system disk had 8.0 GiB free after image, model and
// compile cache, and that margin was listed as a blocker — below either bound.
import type { DiskView } from '../../../src-preload/contract/index.js';

export interface DiskThreshold {
  /** Low when free space falls below this many bytes… */
  minFreeBytes: number;
  /** …or below this share of the filesystem (0–100). */
  minFreePct: number;
}

const GIB = 1024 ** 3;

/** Issue #29 item 5's default: 10 GiB or 10 % free, whichever is hit first. */
export const DEFAULT_DISK_THRESHOLD: Readonly<DiskThreshold> = Object.freeze({ minFreeBytes: 10 * GIB, minFreePct: 10 });

export type DiskMarginVerdict = 'ok' | 'low' | 'unknown';

/** Low when free is below either bound; unknown when df gave no figure (never read as 0 free). */
export function diskMargin(disk: Pick<DiskView, 'freeBytes' | 'totalBytes'>, t: DiskThreshold = DEFAULT_DISK_THRESHOLD): DiskMarginVerdict {
  const { freeBytes, totalBytes } = disk;
  if (freeBytes === null) return 'unknown';
  if (freeBytes < t.minFreeBytes) return 'low';
  // Without a total only the byte bound can be judged, and it passed.
  if (totalBytes !== null && totalBytes > 0 && (freeBytes / totalBytes) * 100 < t.minFreePct) return 'low';
  return 'ok';
}

/** `10 GiB or 10 % free`, for the gate's and the CLI's explanation. */
export function thresholdText(t: DiskThreshold = DEFAULT_DISK_THRESHOLD): string {
  return `${formatBytes(t.minFreeBytes)} or ${t.minFreePct} % free`;
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
