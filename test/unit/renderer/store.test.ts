import { describe, expect, it } from 'vitest';
import type { AppInfo } from '../../../src-preload/contract/index.js';
import { fleetTotals } from '../../../src-renderer/src/features/fleet/fleet-summary.js';
import { attachTokHistory, serviceKey, TokHistory } from '../../../src-renderer/src/features/fleet/tok-history.js';
import { reduceConfigChanged } from '../../../src-renderer/src/store/app-slice.js';
import { hostByLabel, recordTickGap, reduceHostStatus, reduceSnapshot, selectHostLabels, selectPollIntervalMs, TICK_GAPS_KEPT } from '../../../src-renderer/src/store/fleet-slice.js';
import { replaceEqualDeep } from '../../../src-renderer/src/store/share.js';
import { createAppStore } from '../../../src-renderer/src/store/store.js';
import { host, service, snapshot } from './fixtures/fleet.js';

const INFO: AppInfo = {
  name: 'GPU Console',
  version: '0.1.0',
  mode: 'web',
  demo: true,
  dataDir: '/tmp/d',
  configFile: null,
  configError: null,
  proxyUrl: null,
  startedAt: 0,
};

describe('fleet reducers', () => {
  it('takes the first snapshot and newer ones, never an older one', () => {
    const a = snapshot(1000, [host('a')]);
    const b = snapshot(2000, [host('a', { state: 'reconnecting' })]);
    expect(reduceSnapshot(null, a)).toBe(a);
    expect(reduceSnapshot(a, b)?.hosts[0]?.state).toBe('reconnecting');
    expect(reduceSnapshot(b, a)).toBe(b);
  });

  it('keeps unchanged hosts, GPUs and services identical so they skip re-rendering', () => {
    const prev = snapshot(1000, [host('a'), host('b')]);
    const nextB = host('b', { services: [service('qwen', { generationTokensPerS: 99 })] });
    const next = reduceSnapshot(prev, snapshot(2000, [host('a'), nextB]));
    expect(next).not.toBe(prev);
    expect(next?.hosts[0]).toBe(prev.hosts[0]);
    expect(next?.hosts[1]).not.toBe(prev.hosts[1]);
    expect(next?.hosts[1]?.gpus).toBe(prev.hosts[1]?.gpus);
    expect(next?.hosts[1]?.services[0]?.generationTokensPerS).toBe(99);
  });

  it('replaceEqualDeep returns the previous value when deep-equal and notices removed keys', () => {
    const prev = { a: [1, { b: null as number | null }] };
    expect(replaceEqualDeep(prev, { a: [1, { b: null }] })).toBe(prev);
    const shorter = replaceEqualDeep<Record<string, unknown>>({ x: 1, y: 2 }, { x: 1 });
    expect(shorter).toEqual({ x: 1 });
  });

  it('applies host.status to that host only', () => {
    const s = snapshot(1000, [host('a'), host('b')]);
    const next = reduceHostStatus(s, { label: 'b', state: 'failed', message: 'auth refused' });
    expect(next?.hosts[1]?.state).toBe('failed');
    expect(next?.hosts[0]).toBe(s.hosts[0]);
    expect(reduceHostStatus(s, { label: 'zzz', state: 'failed', message: null })).toBe(s);
    expect(reduceHostStatus(null, { label: 'a', state: 'failed', message: null })).toBeNull();
  });

  it('config.changed sets or clears the config error', () => {
    const error = { code: 'CONFIG_INVALID', message: 'bad port', retryable: false, details: {} };
    expect(reduceConfigChanged(INFO, { ok: false, error })?.configError).toEqual(error);
    expect(reduceConfigChanged({ ...INFO, configError: error }, { ok: true, error: null })?.configError).toBeNull();
    expect(reduceConfigChanged(null, { ok: true, error: null })).toBeNull();
  });
});

describe('app store', () => {
  it('updates once per tick and leaves other slices alone', () => {
    const store = createAppStore({ transportKind: 'web', theme: 'light' });
    let writes = 0;
    store.subscribe(() => writes++);
    const uiBefore = store.getState().ui;
    store.getState().applySnapshot(snapshot(1000, [host('l20-poc'), host('tri-gpu')]));
    expect(writes).toBe(1);
    expect(store.getState().ui).toBe(uiBefore);
    expect(selectHostLabels(store.getState())).toEqual(['l20-poc', 'tri-gpu']);
    expect(hostByLabel(store.getState(), 'tri-gpu')?.label).toBe('tri-gpu');
    store.getState().applySnapshot(snapshot(500, [host('old')]));
    expect(writes).toBe(1); // an older snapshot is not a write
  });

  it('host.status keeps the message; host ops record pending and errors', () => {
    const store = createAppStore({ transportKind: 'ipc' });
    store.getState().applySnapshot(snapshot(1, [host('a')]));
    store.getState().applyHostStatus({ label: 'a', state: 'failed', message: 'SSH_AUTH_FAILED' });
    expect(store.getState().fleet.statusMessages['a']).toBe('SSH_AUTH_FAILED');
    expect(hostByLabel(store.getState(), 'a')?.state).toBe('failed');
    store.getState().setHostOp('a', { pending: 'connect', error: null });
    expect(store.getState().fleet.ops['a']?.pending).toBe('connect');
  });

  it('ui slice: view, theme toggle, selected host', () => {
    const store = createAppStore({ transportKind: 'web' });
    expect(store.getState().ui).toEqual({ view: 'fleet', selectedHost: null, theme: 'dark' });
    store.getState().setView('audit');
    store.getState().toggleTheme();
    store.getState().selectHost('tri-gpu');
    expect(store.getState().ui).toEqual({ view: 'audit', selectedHost: 'tri-gpu', theme: 'light' });
  });

  it('app slice: info, info error, connection', () => {
    const store = createAppStore({ transportKind: 'web' });
    store.getState().setInfoError({ code: 'BRIDGE_TRANSPORT_FAILED', message: 'x', retryable: true, details: {} });
    store.getState().setInfo(INFO);
    expect(store.getState().app.info).toEqual(INFO);
    expect(store.getState().app.infoError).toBeNull();
    store.getState().setConnection({ status: 'lost', attempt: 2, nextRetryAt: 5, lastError: 'reset' });
    expect(store.getState().app.connection.status).toBe('lost');
  });
});

describe('fleet totals', () => {
  it('sums known figures only; unknown stays null, stale services are left out', () => {
    const totals = fleetTotals(
      snapshot(1, [
        host('a', { services: [service('x', { generationTokensPerS: 10, requestsWaiting: null })] }),
        host('b', {
          state: 'failed',
          pricePerHourUsd: null,
          services: [service('y', { generationTokensPerS: 5, stale: true }), service('z', { sleep: 'asleep-1', generationTokensPerS: null })],
        }),
      ]),
    );
    expect(totals).toMatchObject({ hosts: 2, connected: 1, gpus: 2, services: 3, awake: 2, generationTokensPerS: 10, pricePerHourUsd: 1, waiting: 0 });
    expect(fleetTotals(snapshot(1, [host('a', { services: [service('x', { generationTokensPerS: null })] })])).generationTokensPerS).toBeNull();
    expect(fleetTotals(null).hosts).toBe(0);
  });
});

describe('TokHistory', () => {
  it('records one point per service per new tick, keeps a window, and notifies subscribers', () => {
    const history = new TokHistory(10_000);
    const key = serviceKey('a', 'qwen');
    const seen: number[] = [];
    history.subscribe(key, (points) => seen.push(points.length));
    for (let t = 0; t <= 15_000; t += 1000) {
      history.record(snapshot(t, [host('a', { services: [service('qwen', { generationTokensPerS: t / 1000 })] })]));
    }
    history.record(snapshot(3000, [host('a')])); // late tick ignored
    const points = history.points(key);
    expect(points[0]?.[0]).toBe(5000);
    expect(points.at(-1)).toEqual([15_000, 15]);
    expect(points).toHaveLength(11);
    expect(seen).toHaveLength(16);
  });

  it('records a gap (null) for stale figures', () => {
    const history = new TokHistory();
    history.record(snapshot(1, [host('a', { services: [service('qwen', { stale: true, generationTokensPerS: 40 })] })]));
    expect(history.points(serviceKey('a', 'qwen'))).toEqual([[1, null]]);
  });

  it('is fed by a store subscription, once per snapshot', () => {
    const store = createAppStore({ transportKind: 'web' });
    const history = new TokHistory();
    const off = attachTokHistory(store, history);
    store.getState().applySnapshot(snapshot(1000, [host('a')]));
    store.getState().setView('audit'); // not a snapshot change
    store.getState().applySnapshot(snapshot(2000, [host('a')]));
    off();
    store.getState().applySnapshot(snapshot(3000, [host('a')]));
    expect(history.points(serviceKey('a', 'qwen')).map(([t]) => t)).toEqual([1000, 2000]);
  });
});

describe('poll interval as the renderer sees it', () => {
  it('records the gap between accepted snapshots, bounded, and none for old or repeated ones', () => {
    const a = snapshot(1000, [host('a')]);
    const b = snapshot(2000, [host('a')]);
    expect(recordTickGap([], null, a)).toEqual([]);
    expect(recordTickGap([], a, b)).toEqual([1000]);
    expect(recordTickGap([5], b, b)).toEqual([5]);
    expect(recordTickGap([5], b, a)).toEqual([5]);
    const many = Array.from({ length: TICK_GAPS_KEPT }, (_, i) => i + 1);
    expect(recordTickGap(many, a, b)).toEqual([...many.slice(1), 1000]);
  });

  it('the store measures the median gap of its ticks; unknown before two', () => {
    const store = createAppStore({ transportKind: 'web' });
    expect(selectPollIntervalMs(store.getState())).toBeNull();
    store.getState().applySnapshot(snapshot(1000, [host('a')]));
    expect(selectPollIntervalMs(store.getState())).toBeNull();
    for (const at of [2000, 3000, 3050, 4050, 9000]) store.getState().applySnapshot(snapshot(at, [host('a', { updatedAt: at })]));
    // gaps 1000, 1000, 50, 1000, 4950: one late tick and one early one do not move it
    expect(selectPollIntervalMs(store.getState())).toBe(1000);
    // an older snapshot arriving late is no gap
    store.getState().applySnapshot(snapshot(500, [host('a')]));
    expect(store.getState().fleet.tickGapsMs).toHaveLength(5);
  });
});
