import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, SampleLineMemo } from '../../../../src-main/core/telemetry/prometheus.js';
import { readVllmExposition } from '../../../../src-main/core/telemetry/vllm-metrics.js';
import { ROOT } from '../../../helpers/imports.js';

// A source's memo of its previous exposition's sample lines (issue #31: the
// parse ran for every line of every scrape): what it gives back must be what
// a fresh parse reads, line for line, whatever changed in between.

const dir = join(ROOT, 'test/fixtures/vllm');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.txt'))
  .map((f) => readFileSync(join(dir, f), 'utf8'));

/** The exposition a poll later: every tenth value line's value moved on. */
const later = (text: string): string => text.split('\n').map((l, i) => (i % 10 === 3 && /^vllm:\S+ \d/.test(l) ? l.replace(/ (\S+)$/, ' 12345') : l)).join('\n');

describe('SampleLineMemo', () => {
  it('reads what a fresh parse reads, poll after poll, through changed, broken and duplicated lines', () => {
    const memo = new SampleLineMemo();
    const sequence = [...fixtures, ...fixtures.map(later), fixtures[0]!, `${fixtures[0]!}\nvllm:x{a="b} 1\nvllm:y 1\nvllm:y 1\n`, fixtures[0]!];
    for (const text of sequence) expect(parsePrometheusText(text, { memo })).toEqual(parsePrometheusText(text));
    for (const text of sequence) expect(readVllmExposition(text, { memo })).toEqual(readVllmExposition(text));
  });

  it('hands back an unchanged line as the same sample, and reads a changed one again', () => {
    const memo = new SampleLineMemo();
    const first = parsePrometheusText('# TYPE a gauge\na{x="1"} 1\nb 2\n', { memo });
    const second = parsePrometheusText('# TYPE a gauge\na{x="1"} 1\nb 3\n', { memo });
    expect(second.families[0]!.samples[0]).toBe(first.families[0]!.samples[0]);
    expect(second.families[1]!.samples[0]).not.toBe(first.families[1]!.samples[0]);
    expect(second.families[1]!.samples[0]!.value).toBe(3);
  });

  it('keeps only the last exposition: a line absent from it is read afresh', () => {
    const memo = new SampleLineMemo();
    const first = parsePrometheusText('a 1\nb 2\n', { memo });
    parsePrometheusText('b 2\n', { memo });
    const third = parsePrometheusText('a 1\n', { memo });
    expect(third.families[0]!.samples[0]).toEqual(first.families[0]!.samples[0]);
    expect(third.families[0]!.samples[0]).not.toBe(first.families[0]!.samples[0]);
  });
});
