// The slices that hold server state for the Actions, Benchmarks and Reports
// views and the notifications bell (fed by store/wire.ts).
import { describe, expect, it } from 'vitest';
import type { ActionView, BenchProgress, ConsoleNotificationView, StandingApprovalView } from '../../../src-preload/contract/index.js';
import { reduceActionChanged, reduceStandingChanged } from '../../../src-renderer/src/store/actions-slice.js';
import { NOTIFICATIONS_KEPT } from '../../../src-renderer/src/store/notifications-slice.js';
import { createAppStore } from '../../../src-renderer/src/store/store.js';

function action(id: string, overrides: Partial<ActionView> = {}): ActionView {
  return {
    id,
    kind: 'sleep',
    upstream: 'l20/qwen',
    label: 'l20',
    serviceId: 'qwen',
    model: 'qwen',
    driver: 'vllm-sleep',
    state: 'proposed',
    proposer: 'cli',
    reason: 'idle',
    repeats: 0,
    nonce: 'n0nce-123',
    requiresTypedLabel: false,
    expectedEffect: 'sleeps',
    expectedDowntimeMs: 1000,
    downtimeBasis: 'estimate',
    steps: [],
    inFlight: 0,
    queued: 0,
    createdAt: 1,
    expiresAt: 2,
    decidedAt: null,
    decision: null,
    approver: null,
    standingApprovalId: null,
    rejectedBy: null,
    rejectReason: null,
    withdrawnBy: null,
    withdrawReason: null,
    startedAt: null,
    finishedAt: null,
    progress: null,
    drained: null,
    aborted: null,
    observed: [],
    error: null,
    ...overrides,
  };
}

const standing = (id: string, uses = 0): StandingApprovalView => ({
  id,
  kind: 'wake',
  upstream: 'l20/qwen',
  grantedBy: 'alice',
  grantedAt: 1,
  expiresAt: 2,
  revokedAt: null,
  uses,
});

const notice = (id: number, outcome: ConsoleNotificationView['outcome'] = 'sent'): ConsoleNotificationView => ({
  id,
  key: `k${id}`,
  severity: 'info',
  title: `t${id}`,
  body: 'b',
  route: 'actions',
  at: id,
  outcome,
});

const progress = (runId: string, state: BenchProgress['state'], done = 0): BenchProgress => ({
  runId,
  name: runId,
  state,
  phase: 'level',
  level: 1,
  levelIndex: 0,
  levelCount: 1,
  done,
  total: 10,
  errors: 0,
  elapsedMs: 0,
  etaMs: null,
  message: null,
});

describe('actions slice', () => {
  it('replaces a changed action in place, puts a new one first, and a changed standing approval first', () => {
    const a = action('act_aaaaaa');
    const b = action('act_bbbbbb');
    expect(reduceActionChanged([a, b], action('act_bbbbbb', { state: 'running' })).map((x) => [x.id, x.state])).toEqual([
      ['act_aaaaaa', 'proposed'],
      ['act_bbbbbb', 'running'],
    ]);
    expect(reduceActionChanged([a], b).map((x) => x.id)).toEqual(['act_bbbbbb', 'act_aaaaaa']);
    expect(reduceStandingChanged([standing('sa_111111'), standing('sa_222222')], standing('sa_222222', 1)).map((s) => [s.id, s.uses])).toEqual([
      ['sa_222222', 1],
      ['sa_111111', 0],
    ]);
  });

  it('an actions.list answer replaces the list; events merge into it', () => {
    const store = createAppStore({ transportKind: 'web' });
    store.getState().applyActionChanged(action('act_early0'));
    store.getState().setActionsList({ actions: [action('act_aaaaaa')], standing: [standing('sa_111111')], targets: [] });
    store.getState().applyActionChanged(action('act_aaaaaa', { state: 'approved' }));
    store.getState().applyStandingChanged(standing('sa_222222'));
    const s = store.getState().actions;
    expect(s.list.map((a) => [a.id, a.state])).toEqual([['act_aaaaaa', 'approved']]);
    expect(s.standing.map((x) => x.id)).toEqual(['sa_222222', 'sa_111111']);
  });
});

describe('bench slice', () => {
  it('keeps the latest progress; the placeholder after bench.start never hides the run’s own events', () => {
    const store = createAppStore({ transportKind: 'web' });
    store.getState().startBenchProgress(progress('r1', 'running'));
    expect(store.getState().bench.progress?.runId).toBe('r1');
    store.getState().applyBenchProgress(progress('r2', 'running', 3));
    store.getState().applyBenchProgress(progress('r2', 'completed', 10));
    store.getState().startBenchProgress(progress('r2', 'running'));
    expect(store.getState().bench.progress).toMatchObject({ runId: 'r2', state: 'completed', done: 10 });
  });
});

describe('reports slice', () => {
  it('keeps the latest report.progress', () => {
    const store = createAppStore({ transportKind: 'web' });
    expect(store.getState().reports.progress).toBeNull();
    const p = { exportId: 'e1', step: 'evidence', done: 1, total: 4, state: 'running', message: null } as const;
    store.getState().applyReportProgress(p);
    expect(store.getState().reports.progress).toBe(p);
  });
});

describe('notifications slice', () => {
  it('lists newest first up to the limit, counts unseen notices, and keeps the settings', () => {
    const store = createAppStore({ transportKind: 'web' });
    const s = () => store.getState();
    s().setNotificationList({ notifications: [notice(2), notice(1)], settings: { doNotDisturb: true, until: 99 } });
    expect(s().notifications.unseen).toBe(0);
    for (let i = 3; i < 3 + NOTIFICATIONS_KEPT; i++) s().applyNotice(notice(i, i % 2 ? 'sent' : 'folded'));
    expect(s().notifications.items).toHaveLength(NOTIFICATIONS_KEPT);
    expect(s().notifications.items[0]?.id).toBe(2 + NOTIFICATIONS_KEPT);
    expect(s().notifications.latest?.id).toBe(2 + NOTIFICATIONS_KEPT);
    expect(s().notifications.unseen).toBe(NOTIFICATIONS_KEPT);
    s().markNotificationsSeen();
    expect(s().notifications.unseen).toBe(0);
    expect(s().notifications.settings).toEqual({ doNotDisturb: true, until: 99 });
    s().setNotificationSettings({ doNotDisturb: false, until: null });
    expect(s().notifications.settings.doNotDisturb).toBe(false);
  });

  it('records each native-notification click as a new request, even for the same route', () => {
    const store = createAppStore({ transportKind: 'web' });
    const seen: string[] = [];
    store.subscribe((state, prev) => {
      if (state.notifications.openRequest !== prev.notifications.openRequest && state.notifications.openRequest) seen.push(state.notifications.openRequest.route);
    });
    store.getState().applyNotificationOpen({ route: 'hosts/l20' });
    store.getState().applyNotificationOpen({ route: 'hosts/l20' });
    expect(seen).toEqual(['hosts/l20', 'hosts/l20']);
  });
});
