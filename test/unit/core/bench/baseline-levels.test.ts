import { describe, expect, it } from 'vitest';
import { perSequenceLevels } from '../../../../src-main/core/bench/console-bench.js';
import type { BenchRun } from '../../../../src-preload/contract/index.js';

// Issue #30 item 1: a benchmark run becomes a baseline of per-sequence speed
// by concurrency (each complete level's output tok/s ÷ its concurrency), so
// the degradation rule compares like with like.

type Level = BenchRun['levels'][number];
const level = (p: Partial<Level>): Level => ({ phase: 'level', level: 1, partial: false, outputTokPerS: 30, ...p }) as Level;
const run = (levels: Level[], scenario: Partial<NonNullable<BenchRun['scenario']>> | null = { mode: 'closed' }) =>
  ({ levels, scenario }) as unknown as Pick<BenchRun, 'levels' | 'scenario'>;

describe('bench baseline levels', () => {
  it('every complete closed-loop level gives its per-sequence speed; partial levels and those without a figure do not', () => {
    const levels = perSequenceLevels(
      run([level({ level: 1, outputTokPerS: 30 }), level({ level: 2, outputTokPerS: 56 }), level({ level: 4, outputTokPerS: 96 }), level({ level: 8, outputTokPerS: 150, partial: true }), level({ level: 16, outputTokPerS: null })]),
    );
    expect(levels).toEqual([
      { concurrency: 1, perSeqTokPerS: 30 },
      { concurrency: 2, perSeqTokPerS: 28 },
      { concurrency: 4, perSeqTokPerS: 24 },
    ]);
  });

  it("the stability loop gives its own level at the scenario's stability concurrency and wins over a sweep level there", () => {
    const levels = perSequenceLevels(run([level({ level: 4, outputTokPerS: 96 }), level({ phase: 'stability', level: 4, outputTokPerS: 71.5 })], { mode: 'closed', stability: { requests: 100, concurrency: 4 } }));
    expect(levels).toEqual([{ concurrency: 4, perSeqTokPerS: 71.5 / 4 }]);
  });

  it('an open-loop run: its levels are arrival rates, not loads — only its stability loop counts', () => {
    expect(perSequenceLevels(run([level({ level: 2.5, outputTokPerS: 80 })], { mode: 'open' }))).toEqual([]);
    expect(perSequenceLevels(run([level({ level: 2.5, outputTokPerS: 80 }), level({ phase: 'stability', level: 3, outputTokPerS: 60 })], { mode: 'open', stability: { requests: 50, concurrency: 3 } }))).toEqual([
      { concurrency: 3, perSeqTokPerS: 20 },
    ]);
  });
});
