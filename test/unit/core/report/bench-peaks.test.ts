import { describe, expect, it } from 'vitest';
import { EvidenceSchema, type Peaks } from '../../../../src-preload/contract/index.js';
import { renderMarkdown } from '../../../../src-main/core/report/render-markdown.js';
import { sampleEvidence } from '../../../fixtures/report/evidence-sample.js';

// #27.6: the report's bench section names VRAM and GTT side by side; on an AMD
// APU the model lives in GTT. Unknown is "—", never 0.

const SHA = 'c0ffee'.repeat(10) + 'abcd';

function withPeaks(peaks: Peaks): string {
  const e = sampleEvidence();
  const run = e.benchmarks![0]!;
  const evidence = EvidenceSchema.parse({ ...e, benchmarks: [{ ...run, peaks }] });
  const md = renderMarkdown(evidence, { evidenceSha256: SHA });
  const line = md.split('\n').find((l) => l.startsWith('Peaks'));
  if (!line) throw new Error('no peaks line');
  return line;
}

describe('bench peaks in the report', () => {
  it('an AMD APU run: VRAM carve-out and GTT', () => {
    expect(withPeaks({ vramMiB: 120, gttMiB: 18_642, gpuUtilPct: 100, powerW: 97, kvCachePct: null, samples: 3 })).toBe(
      'Peaks over 3 telemetry samples: VRAM 120 MiB, GTT 18,642 MiB, GPU utilisation 100 %, power 97 W.',
    );
  });

  it('an NVIDIA run (no GTT) and a run stored before GTT was kept: GTT —', () => {
    expect(withPeaks({ vramMiB: 38_751, gttMiB: null, gpuUtilPct: null, powerW: null, kvCachePct: null, samples: 2 })).toBe('Peaks over 2 telemetry samples: VRAM 38,751 MiB, GTT —.');
    expect(withPeaks({ vramMiB: 38_751, gpuUtilPct: null, powerW: null, kvCachePct: null, samples: 2 })).toContain('VRAM 38,751 MiB, GTT —');
  });

  it('no samples: said so, no figures', () => {
    expect(withPeaks({ vramMiB: null, gttMiB: null, gpuUtilPct: null, powerW: null, kvCachePct: null, samples: 0 })).toBe('Peaks: no telemetry samples during the run.');
  });
});
