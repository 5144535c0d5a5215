import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../../src-main/core/base/index.js';
import type { DriverCheck, DriverIo, LifecycleDriver, LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/drivers/index.js';
import type { LifecycleFleet } from '../../../../src-main/core/lifecycle/ports.js';
import { hostVram, verifyAction, type VerifyContext } from '../../../../src-main/core/lifecycle/verify.js';
import type { FleetSnapshot, GpuView } from '../../../../src-preload/contract/index.js';
import { urlClient } from '../../../helpers/upstream.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// Issue #27 finding 4: the evidence of a restart on an AMD APU said "GPU memory
// (VRAM + GTT): 137 MiB in use on strix" — a reading taken while the model was
// loading — though 18.6 GiB were back seconds later. The memory line of a
// restart must come from a GPU reading taken after the server passed its
// checks, or say that none was read; never a mid-load figure.

interface Gpu {
  gttMiB: number;
  /** When the GPU command answered (the reading's own time). */
  readAt: number;
}

const APU = (gttMiB: number): GpuView => ({
  index: 0, uuid: null, name: 'AMD Radeon 8060S', memoryUsedMiB: 100, memoryTotalMiB: 512, utilizationPct: 0, powerW: null, powerLimitW: null,
  temperatureC: null, vendor: 'amd', gttUsedMiB: gttMiB - 100, gttTotalMiB: 98_304,
});

function fakeFleet(state: { gpu: Gpu | null; polledAt: number }): LifecycleFleet {
  const snapshot = (): FleetSnapshot => ({
    at: Date.now(),
    hosts: [{
      label: 'strix', address: 'ops@strix', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
      gpus: state.gpu ? [APU(state.gpu.gttMiB)] : [], gpuStale: false, gpuStaleReason: null,
      gpuSource: state.gpu ? { kind: 'amd-sysfs', atMs: state.gpu.readAt, detail: null } : null,
      services: [],
      // The poll's end: later than the GPU reading whenever a service answered in the same poll.
      updatedAt: state.polledAt,
    }],
  });
  return { state: () => fleetStateOf(snapshot()), upstream: () => urlClient('http://127.0.0.1:1'), exec: () => Promise.reject(new Error('no exec here')) };
}

const target = { label: 'strix', serviceId: 'coder', model: 'qwen3-coder' } as unknown as LifecycleTargetConfig;
const driver = { name: 'llama-server' } as unknown as LifecycleDriver;
const io = {} as DriverIo;

/** /health answers 503 "Loading model" `loadingPolls` times, then 200; `onHealthy` runs when it first holds. */
function healthCheck(loadingPolls: number, onHealthy: () => void): DriverCheck {
  let polls = 0;
  return {
    name: 'health',
    text: 'GET /health answers 200',
    run() {
      if (polls++ < loadingPolls) return Promise.resolve({ ok: false, line: 'health: HTTP 503 Loading model' });
      onHealthy();
      return Promise.resolve({ ok: true, line: 'health: HTTP 200' });
    },
  };
}

function context(fleet: LifecycleFleet, checks: DriverCheck[], over: Partial<VerifyContext> = {}): VerifyContext {
  const now = Date.now();
  return {
    kind: 'restart', target, driver, io, fleet, clock: systemClock, checks,
    vramBeforeMiB: 18_700, stepsEndedAt: now, deadlineAt: now + 5_000, pollMs: 10, vramMinDeltaMiB: 512, memoryWaitMs: 400, ...over,
  };
}

describe('restart verification reads GPU memory after the server passed its checks', () => {
  it('a reading taken mid-load is not the evidence; the one taken after the checks is', async () => {
    const state = { gpu: null as Gpu | null, polledAt: 0 };
    const fleet = fakeFleet(state);
    const stepsEndedAt = Date.now();
    // Polled while the weights were loading, after the restart command ended.
    state.gpu = { gttMiB: 137, readAt: stepsEndedAt + 1 };
    state.polledAt = stepsEndedAt + 2;
    let healthyAt = 0;
    const checks = [
      healthCheck(3, () => {
        healthyAt = Date.now();
        // the next GPU poll answers 60 ms later, the model in GTT
        setTimeout(() => Object.assign(state, { gpu: { gttMiB: 18_642, readAt: Date.now() }, polledAt: Date.now() }), 60);
      }),
    ];
    const progress: string[] = [];
    const r = await verifyAction(context(fleet, checks, { stepsEndedAt, onProgress: (t) => progress.push(t) }));
    expect(r.ok).toBe(true);
    const memory = r.observed.find((l) => /memory|VRAM/.test(l))!;
    expect(memory).toMatch(/^GPU memory \(VRAM \+ GTT\): 18642 MiB in use on strix, read \d\.\d s after the server passed its checks \(not compared for a restart\)$/);
    expect(r.observed.join('\n')).not.toContain('137');
    expect(healthyAt).toBeGreaterThan(0);
    // what the action showed while it waited: the server loading, then the memory read
    expect(progress[0]).toBe('verifying: health: HTTP 503 Loading model');
    expect(progress.at(-1)).toBe('checks passed; waiting for a GPU reading taken after them');
  });

  it('no GPU reading after the checks within the wait: the evidence says so and gives no figure; the restart stays verified', async () => {
    const state = { gpu: null as Gpu | null, polledAt: 0 };
    const fleet = fakeFleet(state);
    const stepsEndedAt = Date.now();
    state.gpu = { gttMiB: 137, readAt: stepsEndedAt + 1 };
    // Services keep answering: the poll time moves on, the GPU reading does not (its command hangs).
    const ticking = setInterval(() => (state.polledAt = Date.now()), 5);
    try {
      const t0 = Date.now();
      const r = await verifyAction(context(fleet, [healthCheck(2, () => undefined)], { stepsEndedAt, memoryWaitMs: 150 }));
      expect(r.ok).toBe(true);
      expect(r.observed.at(-1)).toBe('GPU memory: not read after the restart (no GPU reading of strix within 0.1 s after the server passed its checks; not compared for a restart)');
      expect(r.observed.join('\n')).not.toMatch(/\d+ MiB/);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    } finally {
      clearInterval(ticking);
    }
  });

  it('a restart whose checks never pass records no memory figure either', async () => {
    const state = { gpu: { gttMiB: 137, readAt: Date.now() + 1 } as Gpu | null, polledAt: Date.now() };
    const r = await verifyAction(context(fakeFleet(state), [healthCheck(1_000, () => undefined)], { deadlineAt: Date.now() + 80 }));
    expect(r.ok).toBe(false);
    expect(r.observed).toEqual(['✗ health: HTTP 503 Loading model', 'GPU memory: not read after the restart (the server did not pass its checks)']);
  });

  it("a host's figures are timed by the GPU reading, not by the poll that read its services", () => {
    const fleet = fakeFleet({ gpu: { gttMiB: 137, readAt: 1_000 }, polledAt: 9_000 });
    expect(hostVram(fleet, 'strix')).toEqual({ usedMiB: 137, at: 1_000, withGtt: true });
  });
});
