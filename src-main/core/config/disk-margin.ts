// When a watched disk (root, a model cache, Docker's root) counts as low: the
// one rule the host card, the host view, `gpu-console status`, the disk_low
// alert and the report's disk-margin gate all read, with the thresholds in
// force for the host (its `alerts.disk` over the fleet-wide one over the
// defaults). Field notes §1: the proof of concept's system disk had 8.0 GiB
// free and that was listed as a blocker — below either default bound.
import type { DiskAlertConfig } from './alerts-schema.js';

export interface DiskThresholds {
  /** Free below this share of the filesystem (percent) is low… */
  readonly freePct: number;
  /** …and so is free below this many GiB (either one is enough). */
  readonly freeGiB: number;
  /** A low disk stops being low only once free is this much (percent of each bound) above both. */
  readonly clearMarginPct: number;
}

export const DEFAULT_DISK_THRESHOLDS: DiskThresholds = Object.freeze({ freePct: 10, freeGiB: 10, clearMarginPct: 10 });

const GIB = 1024 ** 3;

/** The host's own fields over the fleet's over the defaults, field by field. */
export function diskThresholdsOf(host: DiskAlertConfig | undefined, fleet: DiskAlertConfig | undefined): DiskThresholds {
  const d = DEFAULT_DISK_THRESHOLDS;
  return {
    freePct: host?.freePct ?? fleet?.freePct ?? d.freePct,
    freeGiB: host?.freeGiB ?? fleet?.freeGiB ?? d.freeGiB,
    clearMarginPct: host?.clearMarginPct ?? fleet?.clearMarginPct ?? d.clearMarginPct,
  };
}

export type DiskMargin = 'ok' | 'low' | 'unknown';

/**
 * `low` when free is below either bound; `unknown` when df gave no free figure
 * (never read as 0 free). Without a total only the byte bound can be judged.
 * `stillLow`: the disk is already flagged, so it must clear the bounds plus
 * the margin to be `ok` again (one odd reading neither raises nor clears).
 */
export function diskMarginOf(freeBytes: number | null, totalBytes: number | null, t: DiskThresholds, stillLow = false): DiskMargin {
  if (freeBytes === null) return 'unknown';
  const factor = stillLow ? 1 + t.clearMarginPct / 100 : 1;
  if (freeBytes < t.freeGiB * GIB * factor) return 'low';
  if (totalBytes !== null && totalBytes > 0 && (freeBytes / totalBytes) * 100 < t.freePct * factor) return 'low';
  return 'ok';
}

/** `10 GiB or 10 % free`, for the words beside a flag, the CLI and the report's gate. */
export function diskThresholdText(t: Pick<DiskThresholds, 'freeGiB' | 'freePct'>): string {
  return `${t.freeGiB} GiB or ${t.freePct} % free`;
}
