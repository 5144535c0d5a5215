// "Where from · how old" for a group of figures: the scraper (or Prometheus)
// that read them and the age of the reading. A reading older than a few polls
// is flagged, so an operator never takes a frozen figure for a live one.
import type { FigureSource, FigureSourceKind } from '../../../src-preload/contract/index.js';
import { formatAgo, formatTimestamp } from './format.js';

/** What the operator reads for each source: the tool, or the endpoint the figures mostly come from. */
export const SOURCE_NAME: Readonly<Record<FigureSourceKind, string>> = {
  vllm: 'vLLM /metrics',
  'llama-server': 'llama-server /slots',
  sglang: 'SGLang /metrics',
  tei: 'TEI /metrics',
  openai: 'health check',
  'nvidia-smi': 'nvidia-smi',
  'amd-smi': 'amd-smi',
  'rocm-smi': 'rocm-smi',
  'amd-sysfs': 'amdgpu sysfs',
  prometheus: 'Prometheus',
};

/** Used until the renderer has seen two ticks (the console's default poll interval). */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** A reading older than this many poll intervals is shown in the warning colour. */
export const OLD_AFTER_POLLS = 3;
/**
 * Added to the limit: the page's clock moves in whole seconds and a reading
 * takes a moment to arrive, so a healthy 1 s poll often reads "2 s ago"; without
 * it the line would flicker into the warning colour on every slow scrape.
 */
export const AGE_SLACK_MS = 1_000;

export type SourceTone = 'fresh' | 'old' | 'none';

export interface SourceLineView {
  /** "nvidia-smi · 1 s ago", "Prometheus · no reading yet". */
  readonly text: string;
  readonly tone: SourceTone;
  /** What was read, when, and why it is flagged. */
  readonly title: string;
  /** Age of the reading in ms (0 when the clocks disagree by a little), null before the first one. */
  readonly ageMs: number | null;
}

/** The age past which a reading is flagged: a few poll intervals (and the slack). */
export function oldAfterMs(pollIntervalMs: number | null | undefined): number {
  const poll = typeof pollIntervalMs === 'number' && Number.isFinite(pollIntervalMs) && pollIntervalMs > 0 ? pollIntervalMs : DEFAULT_POLL_INTERVAL_MS;
  return OLD_AFTER_POLLS * poll + AGE_SLACK_MS;
}

export function sourceLine(source: FigureSource, nowMs: number, pollIntervalMs: number | null | undefined): SourceLineView {
  const name = SOURCE_NAME[source.kind] ?? source.kind;
  const what = source.detail ? `${name}: ${source.detail}` : name;
  if (source.atMs === null || !Number.isFinite(source.atMs)) {
    return { text: `${name} · no reading yet`, tone: 'none', title: `${what}. No good reading yet: figures are unknown.`, ageMs: null };
  }
  const ageMs = Math.max(0, nowMs - source.atMs);
  const limit = oldAfterMs(pollIntervalMs);
  const old = ageMs > limit;
  const read = `read ${formatTimestamp(source.atMs)} (${formatAgo(source.atMs, nowMs)})`;
  return {
    text: `${name} · ${formatAgo(source.atMs, nowMs)}`,
    tone: old ? 'old' : 'fresh',
    title: old ? `${what}. Last ${read}, older than ${OLD_AFTER_POLLS} polls (${Math.round((limit - AGE_SLACK_MS) / 1000)} s): the figures may be out of date.` : `${what}. ${read}.`,
    ageMs,
  };
}

/**
 * The console's poll interval as the renderer sees it: the median gap between
 * fleet snapshots (one per poll), so a late or doubled tick does not move it.
 * Null until there is a gap to measure.
 */
export function medianGapMs(gaps: readonly number[]): number | null {
  const known = gaps.filter((g) => Number.isFinite(g) && g > 0).sort((a, b) => a - b);
  if (known.length === 0) return null;
  const mid = Math.floor(known.length / 2);
  return known.length % 2 === 1 ? known[mid]! : (known[mid - 1]! + known[mid]!) / 2;
}
