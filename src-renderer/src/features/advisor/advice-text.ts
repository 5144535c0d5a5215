// Words for the advisor panel: the caps fields an advice changes, and why an upstream has none.
import type { AdvisorVerdict, PoolCaps } from '../../../../src-preload/contract/index.js';

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
