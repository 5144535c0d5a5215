import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';

function generated(fleet: DemoFleet, label: string, id: string): number {
  const m = fleet.host(label).simulator(id).metricsText().match(/^vllm:generation_tokens_total\{[^}]*\} ([0-9.e+]+)$/m);
  return m ? Number(m[1]) : NaN;
}

describe('demo background traffic', () => {
  let fleet: DemoFleet | null = null;
  afterEach(async () => {
    await fleet?.dispose();
    fleet = null;
  });

  it('is off by default: an untouched fleet serves nothing', async () => {
    fleet = await startDemoFleet({ dir: mkdtempSync(join(tmpdir(), 'gc-traffic-')), decodeSpeedFactor: 20 });
    await new Promise((r) => setTimeout(r, 3000));
    expect(generated(fleet, 'l20-poc', 'qwen')).toBe(0);
  });

  it('when on, the models serve real requests, and dispose stops it', async () => {
    fleet = await startDemoFleet({ dir: mkdtempSync(join(tmpdir(), 'gc-traffic-')), decodeSpeedFactor: 20, traffic: true });
    await expect.poll(() => generated(fleet!, 'l20-poc', 'qwen'), { timeout: 15_000, interval: 250 }).toBeGreaterThan(0);
    await expect.poll(() => generated(fleet!, 'tri-gpu', 'gemma'), { timeout: 15_000, interval: 250 }).toBeGreaterThan(0);
    // The llama-server on strix gets its share: prompts read and tokens generated, in its counters. (Not its
    // busy-slot gauge: at 20× decode speed a request can start and finish between two looks, as one CI run saw.)
    const coder = fleet.host('strix').llamaServer('coder');
    const counter = (name: string) => Number(new RegExp(`^llamacpp:${name} (\\S+)$`, 'm').exec(coder.metricsText())?.[1]);
    await expect.poll(() => counter('prompt_tokens_total'), { timeout: 20_000, interval: 250 }).toBeGreaterThan(0);
    await expect.poll(() => counter('tokens_predicted_total'), { timeout: 20_000, interval: 250 }).toBeGreaterThan(0);
    const sim = fleet.host('l20-poc').simulator('qwen');
    await fleet.dispose();
    expect(sim.listening).toBe(false);
    fleet = null;
  }, 60_000);
});
