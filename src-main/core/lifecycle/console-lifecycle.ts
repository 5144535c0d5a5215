// The lifecycle capability as the console runs it: the action queue (human
// approval, execution, verification) over the fleet and the proxy, and the
// policies that only propose — fed by the fleet's state, and by the proxy's
// "wake wanted" (a request for a sleeping model proposes one wake, however many arrive).
import type { ActionDraft, ActionKind, ActionView, LifecycleTarget, StandingApprovalView } from '../../../src-preload/contract/index.js';
import { DisposableStore, operatorActor, type Clock, type Disposable, type Logger, type OnPremGuard } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { ConfigService } from '../config/index.js';
import type { FleetState } from '../fleet/index.js';
import type { Notices } from '../notify/index.js';
import type { Store } from '../store/index.js';
import { LifecycleService, type LifecycleOptions } from './action-queue.js';
import { LifecyclePolicies } from './policies.js';
import type { LifecycleFleet, LifecycleProxy } from './ports.js';
import { lifecycleTargets } from './targets.js';

/** What the lifecycle reads of the proxy besides drain/resume: requests that met a sleeping model. */
export interface LifecycleProxyEvents extends LifecycleProxy {
  onDidWantWake(listener: (wanted: { upstream: string; standing: boolean }) => void): Disposable;
}

export interface ConsoleLifecycleDeps {
  store: Store;
  config: ConfigService;
  fleet: LifecycleFleet & { onDidRound(listener: (state: FleetState) => void): Disposable };
  proxy: LifecycleProxyEvents | null;
  notices: Notices;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
  options?: LifecycleOptions;
  /** Counts (and refuses) lifecycle calls outside loopback and the tunnels. */
  offPrem?: OnPremGuard | null;
}

export class ConsoleLifecycle implements Disposable {
  readonly service: LifecycleService;
  readonly policies: LifecyclePolicies;
  private readonly disposables = new DisposableStore();

  constructor(deps: ConsoleLifecycleDeps) {
    const { store, config, fleet, proxy, clock, logger } = deps;
    const load = (upstream: string) => proxy?.load(upstream) ?? null;
    this.service = new LifecycleService({
      store,
      clock,
      logger,
      targets: () => lifecycleTargets(config.current),
      fleet,
      proxy,
      onAction: (view) => deps.emit('action.changed', view),
      onStanding: (view) => deps.emit('action.standing', view),
      notify: (input) => deps.notices.notify(input),
      // The engine's counts go stale after a few of the fleet's poll intervals.
      options: { engineMaxAgeMs: 3 * (config.current.telemetry?.pollIntervalMs ?? 1_000), ...deps.options },
      offPrem: deps.offPrem ?? null,
    });
    this.disposables.add(this.service);
    this.policies = new LifecyclePolicies({ service: this.service, clock, logger, config: () => config.current, load });
    // Once per poll round: the policies count readings in a row (health failures), which an SSH change must not repeat.
    this.disposables.add(fleet.onDidRound((state) => this.policies.observe(state)));
    if (proxy) {
      this.disposables.add(
        proxy.onDidWantWake(({ upstream }) => {
          try {
            this.policies.sleepingRequest(upstream);
          } catch (err) {
            logger.warn('wake-on-request proposal failed', { upstream, error: (err as Error).message });
          }
        }),
      );
    }
  }

  list(limit: number): { actions: ActionView[]; standing: StandingApprovalView[]; targets: LifecycleTarget[] } {
    return this.service.list(limit);
  }

  /** Proposals waiting for approval. */
  pendingApprovals(): number {
    return this.service.pendingCount();
  }

  preview(upstream: string, kind: ActionKind): ActionDraft {
    return this.service.preview({ upstream, kind });
  }

  propose(
    upstream: string,
    kind: ActionKind,
    reason: string | undefined,
    caller: string,
    approveNow?: { typedLabel?: string; displayName?: string },
  ): { action: ActionView; collapsed: boolean } {
    return this.service.propose({ upstream, kind, reason, proposer: operatorActor(caller) }, approveNow ? { ...approveNow, caller } : undefined);
  }

  approve(input: { id: string; nonce: string; typedLabel?: string; displayName?: string }, caller: string): ActionView {
    return this.service.approve({ ...input, caller });
  }

  reject(input: { id: string; nonce: string; reason: string }, caller: string): ActionView {
    return this.service.reject({ ...input, caller });
  }

  withdraw(input: { id: string; nonce: string; reason?: string }, caller: string): ActionView {
    return this.service.withdraw({ ...input, caller });
  }

  /** Reads the real state of the service an interrupted action was changing (audited; changes nothing). */
  verifyNow(id: string, caller: string): Promise<ActionView> {
    return this.service.verifyNow(id, caller);
  }

  grantStanding(input: { upstream: string; kind: ActionKind; durationMinutes: number; typedLabel?: string }, caller: string): StandingApprovalView {
    return this.service.grantStanding({ ...input, caller });
  }

  revokeStanding(id: string, caller: string): StandingApprovalView {
    return this.service.revokeStanding(id, caller);
  }

  dispose(): Promise<void> {
    return this.disposables.dispose();
  }
}
