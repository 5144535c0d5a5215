import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { LifecycleService, type LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { ActionViewSchema, type ActionView, type FleetSnapshot } from '../../../../src-preload/contract/index.js';
import { urlClient } from '../../../helpers/upstream.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// Through the action queue, with a fake fleet (the engine's counts, re-read
// every 100 ms) and a fake proxy: the proposal says how many requests come
// through the proxy and how many from direct tunnel clients, and follows
// along while it waits; an approved restart drains the proxy, then waits for
// the direct clients at the engine — until they are done, or until the
// drain deadline, saying how many were still running. The restart command
// itself fails here (exit 1): what matters is what happened before it.

const T: LifecycleTargetConfig = {
  label: 'h1', serviceId: 'qwen', upstream: 'h1/qwen', kind: 'vllm', model: 'Q', remoteHost: '127.0.0.1', remotePort: 8000,
  driver: 'vllm-sleep', routerBaseUrl: null, restartCommand: 'docker restart {service}', sleepLevel: 1,
};
const DEADLINE_MS = 4_000;

let clock: FakeClock;
let store: Store;
let service: LifecycleService;
let engine: { running: number; waiting: number };
let proxyLoad: { inFlight: number; queued: number };
let drainMs: number;
let events: { at: number; what: string }[];
let published: ActionView[];
let readAt: number;
let polling: boolean;

const snapshot = (): FleetSnapshot => ({
  at: clock.now(),
  hosts: [{
    label: 'h1', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
    gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null,
    services: [{
      id: 'qwen', kind: 'vllm', model: 'Q', aliases: [], slots: 4, remotePort: 8000, tunnel: { state: 'up', localUrl: 'http://127.0.0.1:41000', lastError: null },
      health: 'ok', sleep: 'awake', requestsRunning: engine.running, requestsWaiting: engine.waiting, kvCachePct: 0, generationTokensPerS: 40, promptTokensPerS: 0,
      stale: false, staleReason: null, source: { kind: 'vllm', atMs: readAt, detail: 'GET /metrics' },
    }],
  }],
});

beforeEach(() => {
  clock = new FakeClock();
  readAt = clock.now();
  polling = true;
  clock.setInterval(() => polling && (readAt = clock.now()), 100); // the fleet's poll
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-direct-')), 'db.sqlite'), clock, logger: silentLogger });
  engine = { running: 0, waiting: 0 };
  proxyLoad = { inFlight: 0, queued: 0 };
  drainMs = 300;
  events = [];
  published = [];
  service = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => [T],
    fleet: {
      state: () => fleetStateOf(snapshot()),
      upstream: () => urlClient('http://127.0.0.1:9'),
      exec: (_l, command) => {
        events.push({ at: clock.now(), what: `exec ${command}` });
        return Promise.resolve({ exitCode: 1, signal: null, stdout: '', stderr: 'no docker here', truncated: false });
      },
    },
    proxy: {
      drain: () => {
        events.push({ at: clock.now(), what: 'drain' });
        return new Promise((resolve) => {
          clock.setTimeout(() => {
            // the proxy's own requests are done: the engine no longer counts them
            engine.running = Math.max(0, engine.running - proxyLoad.inFlight);
            proxyLoad = { inFlight: 0, queued: proxyLoad.queued };
            events.push({ at: clock.now(), what: 'drained' });
            resolve({ drained: 2, aborted: 0 });
          }, drainMs);
        });
      },
      resume: () => void events.push({ at: clock.now(), what: 'resume' }),
      load: () => proxyLoad,
    },
    onAction: (v) => void published.push(v),
    onStanding: () => undefined,
    notify: () => undefined,
    options: { drainDeadlineMs: DEADLINE_MS, engineMaxAgeMs: 3_000, pollMs: 50 },
  });
});
afterEach(async () => {
  await service.dispose();
  store.close();
});

/** Lets the action run, moving the fake clock 10 ms at a time (`onStep` changes the world as it goes). */
async function settle(id: string, onStep: (elapsedMs: number) => void = () => undefined): Promise<ActionView> {
  let done: ActionView | null = null;
  void service.settled(id).then((v) => (done = v));
  for (let t = 0; t < 60_000 && done === null; t += 10) {
    onStep(t);
    clock.advance(10);
    await new Promise((r) => setImmediate(r));
  }
  if (done === null) throw new Error('the action did not settle');
  return done;
}

const restart = () => {
  const { action } = service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'test' });
  service.approve({ id: action.id, nonce: action.nonce!, typedLabel: 'h1', caller: 'test' });
  return action;
};
const audit = (id: string, type: string) => store.audit.list({ limit: 200 }).find((e) => e.payload.actionId === id && e.type === type)!;

describe('counts that include direct tunnel clients', () => {
  it('the proposal names both sides, and follows along while it waits for a person', () => {
    proxyLoad = { inFlight: 2, queued: 1 };
    engine = { running: 3, waiting: 1 };
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'test' });
    expect(ActionViewSchema.parse(action)).toMatchObject({ inFlight: 2, queued: 1 }); // the proxy's own, as before
    expect(action.load).toMatchObject({ engine: 'fresh', proxyInFlight: 2, direct: 1, inFlight: 3, engineWaiting: 1 });
    expect(action.load!.summary).toBe('3 in flight (2 through the proxy, 1 from direct tunnel clients), 1 waiting at the engine, 1 queued in the proxy');
    expect(action.steps[0]!.text).toMatch(/then cut the rest; within the same 4 s, wait for direct tunnel clients until the engine reports none running$/);
    expect(audit(action.id, 'lifecycle.proposed').payload.load).toMatchObject({ direct: 1, proxyInFlight: 2 });

    // The direct client finished: the next sweep re-publishes the waiting proposal; nothing changed → nothing published.
    engine = { running: 2, waiting: 0 };
    published = [];
    clock.advance(1_000);
    expect(published).toHaveLength(1);
    expect(service.get(action.id).load).toMatchObject({ direct: 0, inFlight: 2 });
    clock.advance(1_000);
    expect(published).toHaveLength(1);

    // The fleet stops reading the engine: after a few poll intervals the figure is said to be stale, not 0.
    polling = false;
    clock.advance(4_000);
    expect(service.get(action.id).load).toMatchObject({ engine: 'stale', direct: null, inFlight: null, engineRunning: 2 });
    expect(service.get(action.id).load!.summary).toBe("2 in flight through the proxy, 1 queued in the proxy; direct tunnel clients unknown: the engine's figure was read 4 s ago; it last said 2 running, 0 waiting");
    expect(published.at(-1)!.load!.engine).toBe('stale');
  });

  it('a restart waits, after the proxy drained, until the direct clients are done at the engine; then runs the command', async () => {
    proxyLoad = { inFlight: 2, queued: 0 };
    engine = { running: 3, waiting: 0 }; // 2 through the proxy, 1 direct
    const action = restart();
    const done = await settle(action.id, (t) => {
      if (t === 1_500) engine.running = 0; // the direct client's request finished
    });
    const progress = published.map((v) => v.progress ?? '');
    const at = (what: string) => events.find((e) => e.what.startsWith(what))!.at;
    expect(at('drained') - at('drain')).toBe(drainMs);
    expect(at('exec')).toBeGreaterThanOrEqual(at('drain') + 1_500); // not before the engine reported 0
    expect(at('exec')).toBeLessThan(at('drain') + 1_700);
    expect(done.directAtDrain).toMatchObject({ outcome: 'idle', running: 0, waiting: 0 });
    expect(done.directAtDrain!.waitedMs).toBeGreaterThanOrEqual(1_500 - drainMs);
    expect(progress).toContain('drained: 2 finished, 0 cut; waiting for direct tunnel clients at the engine');
    expect(progress.some((p) => /^drained: 2 finished, 0 cut; direct tunnel clients finished at the engine after 1\.\d s$/.test(p))).toBe(true);
    const drained = audit(action.id, 'lifecycle.drained');
    expect(drained.payload).toMatchObject({ drained: 2, aborted: 0, direct: { outcome: 'idle', running: 0 } });
    expect(drained.seq).toBeLessThan(audit(action.id, 'lifecycle.step').seq);
    expect(done.state).toBe('failed'); // the command itself (exit 1), after the drain
    expect(events.at(-1)!.what).toBe('resume');
  });

  it('at the drain deadline it goes ahead, never later, and the journal says how many direct requests were still running', async () => {
    drainMs = 1_000;
    proxyLoad = { inFlight: 2, queued: 0 };
    engine = { running: 3, waiting: 2 }; // 1 direct running, 2 waiting: they never finish
    const action = restart();
    const done = await settle(action.id);
    const at = (what: string) => events.find((e) => e.what.startsWith(what))!.at;
    expect(at('exec') - at('drain')).toBe(DEADLINE_MS); // one deadline for the proxy and the engine together
    expect(done.directAtDrain).toMatchObject({ outcome: 'deadline', running: 1, waiting: 2, waitedMs: DEADLINE_MS - drainMs });
    expect(done.directAtDrain!.text).toBe('went ahead at the drain deadline with 1 request still running at the engine from direct tunnel clients and 2 waiting');
    expect(published.some((v) => v.progress === `drained: 2 finished, 0 cut; ${done.directAtDrain!.text}`)).toBe(true);
    expect(audit(action.id, 'lifecycle.drained').payload).toMatchObject({ direct: { outcome: 'deadline', running: 1, waiting: 2 } });
  });

  it('an engine figure already old at proposal time is shown as stale, with what it last said', () => {
    proxyLoad = { inFlight: 0, queued: 0 };
    engine = { running: 1, waiting: 0 };
    readAt = clock.now() - 60_000;
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'test' });
    expect(action.load).toMatchObject({ engine: 'stale', direct: null, inFlight: null, engineRunning: 1 });
    expect(action.load!.summary).toBe("0 in flight through the proxy; direct tunnel clients unknown: the engine's figure was read 1 min ago; it last said 1 running, 0 waiting");
  });
});
