import type { ActionKind } from '../../../src-preload/contract/index.js';

/** Which measured history a duration belongs to: a level-2 wake is not a level-1 wake. */
export type TimingVariant = 'sleep-1' | 'sleep-2' | 'offload' | 'wake-1' | 'wake-2' | 'restart';

export function variantOf(kind: ActionKind, sleepLevel: 1 | 2, currentLevel: 0 | 1 | 2 | null): TimingVariant {
  switch (kind) {
    case 'sleep':
      return sleepLevel === 1 ? 'sleep-1' : 'sleep-2';
    case 'offload':
      return 'offload';
    case 'wake':
      return currentLevel === 1 ? 'wake-1' : 'wake-2';
    case 'restart':
      return 'restart';
  }
}

/** Before anything is measured (field notes: level-1 wake 2.5–4 s, level-2 ≈23 s, restart 2–10 min). */
export const DEFAULT_DURATION_MS: Record<TimingVariant, number> = {
  'sleep-1': 5_000,
  'sleep-2': 5_000,
  offload: 5_000,
  'wake-1': 5_000,
  'wake-2': 30_000,
  restart: 300_000,
};

const NAMES: Record<TimingVariant, string> = {
  'sleep-1': 'level-1 sleep',
  'sleep-2': 'level-2 sleep',
  offload: 'offload (level 2)',
  'wake-1': 'level-1 wake',
  'wake-2': 'level-2 wake',
  restart: 'restart',
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** Expected duration (the slowest of the last measurements, or the default) and the sentence it comes from. */
export function estimate(variant: TimingVariant, measuredMs: readonly number[]): { expectedMs: number; basis: string } {
  if (measuredMs.length === 0) {
    return { expectedMs: DEFAULT_DURATION_MS[variant], basis: `no ${NAMES[variant]} measured yet; estimate ${seconds(DEFAULT_DURATION_MS[variant])}` };
  }
  const ordered = [...measuredMs].sort((a, b) => a - b);
  return { expectedMs: ordered[ordered.length - 1]!, basis: `${NAMES[variant]} took ${ordered.map(seconds).join(', ')}` };
}
