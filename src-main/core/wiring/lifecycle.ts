// Builds the lifecycle capability's services for the app and registers their
// lifetimes and events. Called once from app.ts, after the proxy: disposed
// before it, so a running action can still resume admission.
import type { ActionKind, ActionView, LifecycleTarget, StandingApprovalView } from '../../../src-preload/contract/index.js';
import { toDisposable } from '../base/index.js';
import { LifecyclePolicies, LifecycleService, lifecycleTargets, type LifecycleOptions } from '../lifecycle/index.js';
import type { AppContext } from '../app-context.js';
import type { ProxyWiring } from './proxy.js';

export interface LifecycleWiring {
  readonly service: LifecycleService;
  readonly policies: LifecyclePolicies;
  list(limit: number): { actions: ActionView[]; standing: StandingApprovalView[]; targets: LifecycleTarget[] };
  /** Proposals waiting for approval. */
  pendingApprovals(): number;
  propose(upstream: string, kind: ActionKind, reason: string | undefined, caller: string): { action: ActionView; collapsed: boolean };
  approve(input: { id: string; nonce: string; typedLabel?: string; displayName?: string }, caller: string): ActionView;
  reject(input: { id: string; nonce: string; reason: string }, caller: string): ActionView;
  grantStanding(input: { upstream: string; kind: ActionKind; durationMinutes: number; typedLabel?: string }, caller: string): StandingApprovalView;
  revokeStanding(id: string, caller: string): StandingApprovalView;
}

export async function wireLifecycle(ctx: AppContext, proxy: ProxyWiring | null = null, options: LifecycleOptions = {}): Promise<LifecycleWiring> {
  const { store, config, fleet, clock } = ctx;
  const logger = ctx.logger.child('lifecycle');
  const load = (upstream: string) => {
    if (!proxy) return null;
    const u = proxy.snapshot().upstreams.find((x) => x.upstream === upstream);
    return u ? { inFlight: u.inFlight, queued: u.queued } : null;
  };
  const service = new LifecycleService({
    store,
    clock,
    logger,
    targets: () => lifecycleTargets(config.current),
    fleet,
    proxy: proxy ? { drain: (u, o, a) => proxy.drain(u, o, a), resume: (u, a) => proxy.resume(u, a), load } : null,
    onAction: (view) => ctx.emit('action.changed', view),
    onStanding: (view) => ctx.emit('action.standing', view),
    notify: (input) => ctx.notify(input),
    options,
  });
  ctx.disposables.add(service);
  const policies = new LifecyclePolicies({ service, clock, logger, config: () => config.current, load });
  ctx.disposables.add(fleet.onDidTick((snapshot) => policies.observe(snapshot)));
  if (proxy) {
    proxy.setSleepHooks({ onSleepingRequest: (u) => policies.sleepingRequest(u), expectedWakeMs: (u) => service.expectedWakeMs(u) });
    ctx.disposables.add(toDisposable(() => proxy.setSleepHooks(null)));
  }
  await Promise.resolve();
  return {
    service,
    policies,
    list: (limit) => service.list(limit),
    pendingApprovals: () => service.pendingCount(),
    propose: (upstream, kind, reason, caller) => service.propose({ upstream, kind, reason, proposer: ctx.operatorActor(caller) }),
    approve: (input, caller) => service.approve({ ...input, caller }),
    reject: (input, caller) => service.reject({ ...input, caller }),
    grantStanding: (input, caller) => service.grantStanding({ ...input, caller }),
    revokeStanding: (id, caller) => service.revokeStanding(id, caller),
  };
}
