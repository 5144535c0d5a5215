// Words for the advisor panel: the caps fields an advice changes, and why an upstream has none.
import type { AdvisorList, AdvisorVerdict, PoolCaps } from '../../../../src-preload/contract/index.js';

export const CAPS_FIELDS: ReadonlyArray<{ key: keyof PoolCaps; label: string }> = [
  { key: 'reservedInteractive', label: 'Reserved for interactive' },
  { key: 'interactive', label: 'Interactive cap' },
  { key: 'system', label: 'System cap' },
  { key: 'batch', label: 'Batch cap' },
];

/** The fields an advice changes, with before and after. */
export function capsChanges(current: PoolCaps, proposed: PoolCaps): { key: keyof PoolCaps; label: string; from: number; to: number }[] {
  return CAPS_FIELDS.filter((f) => current[f.key] !== proposed[f.key]).map((f) => ({ ...f, from: current[f.key], to: proposed[f.key] }));
}

export const VERDICT_WORDS: Readonly<Record<AdvisorVerdict, string>> = {
  recommendation: 'advice below',
  balanced: 'balanced',
  insufficient_traffic: 'not enough traffic',
  gpu_limit: 'the GPU is the limit',
  slot_limit: 'the slots are the limit',
  no_gpu_figures: 'no GPU figures',
  rejected: 'advice rejected',
  not_ready: 'not ready',
};

export function windowWords(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** The verdict in words, then its first reason (once, where the reason already says it). */
export function verdictLine(verdict: AdvisorVerdict, first: string): string {
  const words = VERDICT_WORDS[verdict];
  return first.startsWith(words) ? first : `${words}: ${first}`;
}

/** Why the list is empty, in the words of the upstreams' verdicts. */
export function emptyReason(list: AdvisorList): string {
  const v = new Set(list.upstreams.map((u) => u.verdict));
  if (list.upstreams.length === 0) return 'no upstream behind the proxy yet';
  if (v.size === 1 && v.has('balanced')) return 'every upstream is balanced';
  if (v.size === 1 && v.has('insufficient_traffic')) return `not enough traffic in the last ${windowWords(list.windowMs)}`;
  return 'see each upstream below';
}
