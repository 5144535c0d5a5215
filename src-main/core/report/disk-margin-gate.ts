// The automatic "disk margin" gate (issue #29 item 7): every chosen host's root
// disk and model cache disks keep the configured free space (the disk_low
// alert's threshold), judged from the host-health reading the fleet held at
// export and its own reading time. A host whose figures were not read, are
// stale, or that df could not read is unverified, never pass.
import type { DiskView, EvidenceHostState, Gate, Verdict } from '../../../src-preload/contract/index.js';
import { DEFAULT_DISK_THRESHOLDS } from '../config/index.js';
import { diskThresholdText, formatBytes, marginOf, thresholdsOf, type DiskMargin, type DiskThresholds } from './disk-margin.js';
import { isoUtc } from './report-blocks.js';

export const DISK_MARGIN_GATE_ID = 'auto.disk.margin';
const LABEL = 'Disk margin on / and the model caches';
/** The case the threshold is named after, said in every verdict so an auditor can weigh it. */
const FIELD_NOTE =
  "field notes §1: a proof of concept's system disk had 8.0 GiB free after image, model and compile cache, and that margin was listed as a blocker";

interface HostVerdict {
  host: string;
  verdict: Verdict;
  text: string;
}

export function diskMarginGate(states: readonly EvidenceHostState[] | null): Gate {
  const verdicts = (states ?? []).map((s) => hostVerdict(s));
  const failed = verdicts.filter((v) => v.verdict === 'fail');
  const unverified = verdicts.filter((v) => v.verdict === 'unverified');
  const status: Verdict = states === null || verdicts.length === 0 ? 'unverified' : failed.length ? 'fail' : unverified.length ? 'unverified' : 'pass';
  const shown = failed.length ? [...failed, ...unverified] : verdicts;
  const body =
    states === null
      ? 'host health was not part of this report (the health section was not included)'
      : verdicts.length === 0
        ? 'no host'
        : shown.map((v) => `${v.host}: ${v.text}`).join('; ');
  const distinct = new Set((states ?? []).flatMap((s) => (s.health ? [diskThresholdText(thresholdsOf(s.health))] : [])));
  const rule = distinct.size <= 1 ? `free below ${[...distinct][0] ?? diskThresholdText(DEFAULT_DISK_THRESHOLDS)} is low` : "free below each host's threshold (its alerts.disk) is low";
  return {
    id: DISK_MARGIN_GATE_ID,
    label: LABEL,
    kind: 'auto',
    status,
    evidence: `${rule} (${FIELD_NOTE}). ${body}`,
    note: null,
    markedBy: null,
    markedAt: null,
  };
}

function hostVerdict(s: EvidenceHostState): HostVerdict {
  const h = s.health;
  if (h === null) return { host: s.host, verdict: 'unverified', text: 'host health is not read (polling off for this host)' };
  if (h.atMs === null) return { host: s.host, verdict: 'unverified', text: `host health not read yet${h.staleReason ? ` (${h.staleReason})` : ''}` };
  if (h.staleReason !== null) return { host: s.host, verdict: 'unverified', text: `the last reading (${isoUtc(h.atMs)}) is stale: ${h.staleReason}` };
  const disks = onePerMount(h.disks.filter((d) => d.kind === 'root' || d.kind === 'cache'));
  if (!disks.some((d) => d.kind === 'root')) return { host: s.host, verdict: 'unverified', text: `no reading of / (read ${isoUtc(h.atMs)})` };
  const t: DiskThresholds = thresholdsOf(h);
  const judged = disks.map((d) => ({ d, v: marginOf(d, t) }));
  const low = judged.filter((j) => j.v === 'low');
  const unknown = judged.filter((j) => j.v === 'unknown');
  const verdict: Verdict = low.length ? 'fail' : unknown.length ? 'unverified' : 'pass';
  const pick = low.length ? low : unknown.length ? unknown : judged;
  return { host: s.host, verdict, text: `${pick.map((j) => diskText(j.d, j.v)).join(', ')} (read ${isoUtc(h.atMs)})` };
}

/** Root and a cache on one filesystem are one margin: judged once, named by the first path. */
function onePerMount(disks: readonly DiskView[]): DiskView[] {
  const seen = new Set<string>();
  return disks.filter((d) => {
    const key = d.mount ?? `path:${d.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function diskText(d: DiskView, v: DiskMargin): string {
  if (v === 'unknown') return `${d.path} unknown${d.error ? ` (${d.error})` : ''}`;
  const pct = d.freeBytes !== null && d.totalBytes ? ` (${((d.freeBytes / d.totalBytes) * 100).toFixed(1)} %)` : '';
  return `${d.path} ${formatBytes(d.freeBytes)} free of ${formatBytes(d.totalBytes)}${pct}${v === 'low' ? ' — LOW' : ''}`;
}
