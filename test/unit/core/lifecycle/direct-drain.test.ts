import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { waitForDirectClients } from '../../../../src-main/core/lifecycle/direct-drain.js';
import type { DirectDrain, FleetSnapshot } from '../../../../src-preload/contract/index.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// The drain's wait for direct tunnel clients: after the proxy's own requests
// finished, it polls the fleet's view until the engine reports nothing
// running or waiting, or goes ahead at the deadline saying how many were
// left — never later. A fake fleet "polls" the engine every 100 ms.

const POLL_MS = 100;

function fakeFleet(clock: FakeClock, engine: { running: number | null; waiting: number; stale?: boolean; host?: 'connected' | 'reconnecting' }) {
  let readAt = clock.now();
  let polls = 0;
  // The fleet's own poll: each tick re-reads the engine.
  clock.setInterval(() => {
    readAt = clock.now();
    polls++;
  }, POLL_MS);
  const snapshot = (): FleetSnapshot => ({
    at: clock.now(),
    hosts: [{
      label: 'h1', address: 'a', state: engine.host ?? 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
      gpus: [], gpuStale: false, gpuStaleReason: null, updatedAt: readAt,
      services: [{
        id: 'qwen', kind: 'vllm', model: 'Q', aliases: [], slots: 4, remotePort: 8000, tunnel: { state: 'up', localUrl: null, lastError: null },
        health: 'ok', sleep: 'awake', requestsRunning: engine.running, requestsWaiting: engine.waiting, kvCachePct: 0, generationTokensPerS: 1, promptTokensPerS: 0,
        stale: engine.stale ?? false, staleReason: engine.stale ? 'TELEMETRY_SCRAPE_FAILED: refused' : null, source: { kind: 'vllm', atMs: readAt, detail: null },
      }],
    }],
  });
  return { snapshot, state: () => fleetStateOf(snapshot()), polls: () => polls };
}

/** Runs the wait, advancing the fake clock in small steps until it resolves (or `limitMs` passes). */
async function drive(clock: FakeClock, wait: Promise<DirectDrain>, limitMs = 60_000, onStep?: (elapsed: number) => void): Promise<DirectDrain> {
  let result: DirectDrain | null = null;
  void wait.then((r) => (result = r));
  for (let t = 0; t <= limitMs && result === null; t += 10) {
    onStep?.(t);
    clock.advance(10);
    await Promise.resolve();
  }
  await Promise.resolve();
  if (result === null) throw new Error('the wait did not end');
  return result;
}

const base = (clock: FakeClock, fleet: ReturnType<typeof fakeFleet>, over: Partial<Parameters<typeof waitForDirectClients>[0]> = {}) =>
  waitForDirectClients({
    clock, fleet, target: { label: 'h1', serviceId: 'qwen' }, deadlineAt: clock.now() + 5_000, readAfter: null,
    pollMs: 50, maxAgeMs: 3_000, signal: new AbortController().signal, ...over,
  });

describe('the drain waits for direct tunnel clients at the engine', () => {
  it('nothing at the engine: goes ahead at once, without a timer', async () => {
    const clock = new FakeClock();
    const fleet = fakeFleet(clock, { running: 0, waiting: 0 });
    const r = await base(clock, fleet);
    expect(r).toEqual({ outcome: 'idle', running: 0, waiting: 0, waitedMs: 0, text: 'no direct tunnel clients at the engine' });
  });

  it('finishes when the engine goes to 0 (running and waiting), and says how long it waited', async () => {
    const clock = new FakeClock();
    const engine = { running: 2, waiting: 1 };
    const fleet = fakeFleet(clock, engine);
    const r = await drive(clock, base(clock, fleet), 10_000, (t) => {
      if (t === 800) engine.running = 1; // one finished; one still waiting
      if (t === 1_200) Object.assign(engine, { running: 1, waiting: 0 });
      if (t === 1_500) engine.running = 0;
    });
    expect(r.outcome).toBe('idle');
    expect(r.waitedMs).toBeGreaterThanOrEqual(1_500);
    expect(r.waitedMs).toBeLessThan(1_700); // within a poll or two of the engine reporting 0
    expect(r.text).toMatch(/^direct tunnel clients finished at the engine after 1\.[5-6] s$/);
  });

  it('goes ahead at the deadline, never later, and records how many were still running', async () => {
    const clock = new FakeClock();
    const fleet = fakeFleet(clock, { running: 3, waiting: 1 });
    const t0 = clock.now();
    const r = await drive(clock, base(clock, fleet, { deadlineAt: t0 + 2_000 }));
    expect(r).toMatchObject({ outcome: 'deadline', running: 3, waiting: 1, waitedMs: 2_000 });
    expect(r.text).toBe('went ahead at the drain deadline with 3 requests still running at the engine from direct tunnel clients and 1 waiting');
    // a deadline already past (the proxy's own drain used it up): at once
    const late = await base(clock, fleet, { deadlineAt: clock.now() - 1 });
    expect(late).toMatchObject({ outcome: 'deadline', running: 3, waitedMs: 0 });
  });

  it('after the proxy drained requests, a reading from before that is not believed to be idle', async () => {
    const clock = new FakeClock();
    const fleet = fakeFleet(clock, { running: 0, waiting: 0 });
    clock.advance(50); // the last poll was 50 ms ago; the proxy's requests ended just now
    const r = await drive(clock, base(clock, fleet, { readAfter: clock.now() }));
    expect(r.outcome).toBe('idle');
    expect(r.waitedMs).toBe(50); // the next poll, at 100 ms
  });

  it('no usable engine figure (never read, reading fails, host away): goes ahead at once, saying why and what it last said', async () => {
    const clock = new FakeClock();
    const never = await base(clock, fakeFleet(clock, { running: null, waiting: 0 }));
    expect(never).toMatchObject({ outcome: 'unknown', running: null, waitedMs: 0 });
    expect(never.text).toBe('direct tunnel clients unknown (the engine has not reported its request counts yet); went ahead without waiting');
    const failing = await base(clock, fakeFleet(clock, { running: 2, waiting: 0, stale: true }));
    expect(failing).toMatchObject({ outcome: 'unknown', running: 2 });
    expect(failing.text).toMatch(/^direct tunnel clients unknown \(the last reading failed \(TELEMETRY_SCRAPE_FAILED: refused\); .*\); went ahead without waiting — the engine last said 2 running$/);
    expect(await base(clock, fakeFleet(clock, { running: 1, waiting: 0, host: 'reconnecting' }))).toMatchObject({ outcome: 'unknown' });
  });

  it('a figure that is only old (a slow Prometheus sample) is waited on, until a fresh one or the deadline', async () => {
    const clock = new FakeClock();
    const fleet = fakeFleet(clock, { running: 0, waiting: 0 });
    const snapshot = fleet.snapshot;
    let frozen = true;
    const old = { ...fleet, snapshot: (): FleetSnapshot => {
      const s = snapshot();
      const svc = s.hosts[0]!.services[0]!;
      if (frozen) svc.source = { kind: 'prometheus', atMs: clock.now() - 10_000, detail: null };
      return s;
    } };
    old.state = () => fleetStateOf(old.snapshot());
    const r = await drive(clock, base(clock, old), 10_000, (t) => t === 700 && (frozen = false));
    expect(r.outcome).toBe('idle');
    expect(r.waitedMs).toBeGreaterThanOrEqual(700);
  });

  it('cancelled (console shutting down): resolves at once, timers gone', async () => {
    const clock = new FakeClock();
    const fleet = fakeFleet(clock, { running: 1, waiting: 0 });
    const abort = new AbortController();
    const pending = clock.pending;
    const wait = base(clock, fleet, { signal: abort.signal });
    expect(clock.pending).toBe(pending + 2); // its poll and its deadline
    abort.abort();
    expect(await wait).toMatchObject({ outcome: 'cancelled', running: 1 });
    expect(clock.pending).toBe(pending);
  });
});
