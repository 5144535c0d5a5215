import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { SimGpu, type GpuShare } from '../../../src-main/demo/gpu-model.js';
import { DEMO_HOSTS } from '../../../src-main/demo/profiles.js';
import { generateJsonTokens, generateTokens, isGibberish, naturalLength } from '../../../src-main/demo/text-gen.js';

const L20 = DEMO_HOSTS[0]!.gpu;

function gpuWith(share: () => GpuShare) {
  const clock = new FakeClock();
  const gpu = new SimGpu('test', 0, L20, clock);
  gpu.attach({ gpuShare: share });
  return { clock, gpu };
}

describe('SimGpu', () => {
  it('follows the services on it: memory, utilisation, power, pstate', () => {
    let share: GpuShare = { process: null, busy: 0, resident: false };
    const { gpu } = gpuWith(() => share);
    const empty = gpu.sample();
    expect(empty).toMatchObject({ memoryUsedMiB: 0, utilizationGpuPct: 0, pstate: 'P8', processes: [] });
    expect(empty.memoryUsedMiB + empty.memoryFreeMiB + empty.memoryReservedMiB).toBe(46068);
    share = { process: { pid: 10, processName: 'VLLM::EngineCore', usedMemoryMiB: 38003 }, busy: 0, resident: true };
    const idle = gpu.sample();
    expect(idle.powerDrawW).toBeGreaterThan(55);
    expect(idle.powerDrawW).toBeLessThan(75);
    expect(idle.pstate).toBe('P0');
    share = { ...share, busy: 1 };
    const busy = gpu.sample();
    expect(busy.utilizationGpuPct).toBe(100);
    expect(busy.powerDrawW).toBeGreaterThan(245);
    expect(busy.powerDrawW).toBeLessThanOrEqual(L20.powerLimitW);
    expect(busy.memoryUsedMiB).toBe(38003);
  });

  it('lets temperature lag power (first-order, tens of seconds)', () => {
    let share: GpuShare = { process: { pid: 1, processName: 'x', usedMemoryMiB: 1000 }, busy: 0, resident: true };
    const { clock, gpu } = gpuWith(() => share);
    const cold = gpu.sample().temperatureC;
    share = { ...share, busy: 1 };
    gpu.sample();
    clock.advance(1_000);
    const after1s = gpu.sample().temperatureC;
    clock.advance(300_000);
    const hot = gpu.sample().temperatureC;
    expect(after1s - cold).toBeLessThan(3);
    expect(hot - cold).toBeGreaterThan(20);
  });
});

describe('text generation', () => {
  it('is deterministic and tells gibberish from words', () => {
    const a = generateTokens(30, { seed: 7 }).join('');
    expect(generateTokens(30, { seed: 7 }).join('')).toBe(a);
    expect(isGibberish(a)).toBe(false);
    expect(isGibberish(generateTokens(30, { seed: 7, gibberish: true }).join(''))).toBe(true);
    const n = naturalLength('hello');
    expect(n).toBeGreaterThanOrEqual(60);
    expect(n).toBeLessThanOrEqual(120);
  });

  it('writes JSON that matches a simple schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer', minimum: 1, maximum: 3 }, b: { enum: ['x', 'y'] }, c: { type: 'array', items: { type: 'boolean' }, minItems: 2, maxItems: 2 } } };
    const value = JSON.parse(generateJsonTokens(schema, 42).join(''));
    expect([1, 2, 3]).toContain(value.a);
    expect(['x', 'y']).toContain(value.b);
    expect(value.c).toHaveLength(2);
  });
});
