// How a report states the audit chain's check (summary, audit section and gate say it alike).
import type { AuditCoverage } from '../../../src-preload/contract/index.js';
import { isoUtc } from './report-blocks.js';

/**
 * How the chain was walked: in full at the build, or in full up to a row at an earlier time (the console's
 * scheduled check) and from there at the build. A row changed before that point shows at the next full walk.
 */
export function chainHow(a: AuditCoverage): string {
  const w = a.fullWalk;
  if (w === undefined) return ' when the report was built';
  if (w === null || a.headSeq === null) return a.headSeq === null ? ' (the log is empty)' : ' when the report was built';
  if (w.throughSeq >= a.headSeq) return ` (rows 1–${w.throughSeq} walked in full at ${isoUtc(w.at)})`;
  return ` (rows 1–${w.throughSeq} walked in full at ${isoUtc(w.at)}; rows ${w.throughSeq + 1}–${a.headSeq} checked from that row when the report was built)`;
}
