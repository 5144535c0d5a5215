// The benchmark now running (or last finished): the latest `bench.progress`.
import type { StateCreator } from 'zustand/vanilla';
import type { BenchProgress } from '../../../src-preload/contract/index.js';

export interface BenchSlice {
  bench: { progress: BenchProgress | null };
  applyBenchProgress(progress: BenchProgress): void;
  /** What the view shows once `bench.start` answers, unless the run's own events came first. */
  startBenchProgress(progress: BenchProgress): void;
}

export const createBenchSlice: StateCreator<BenchSlice, [], [], BenchSlice> = (set) => ({
  bench: { progress: null },
  applyBenchProgress: (progress) => set({ bench: { progress } }),
  startBenchProgress: (progress) => set((state) => (state.bench.progress?.runId === progress.runId ? state : { bench: { progress } })),
});
