// How long a wake of a sleeping upstream will take, from the wakes measured on
// it (the actions table), else the field-notes defaults. The proxy reads it
// for Retry-After; it needs nothing of the action queue, so it is built first.
import type Database from 'better-sqlite3';
import type { LifecycleTargetConfig } from './drivers/index.js';
import { sleepLevel } from './observe.js';
import type { LifecycleFleet } from './ports.js';
import { createActionRepository, type ActionRepository } from './repository.js';
import { estimate, variantOf } from './timing.js';

export interface WakeEstimatesDeps {
  db: Database.Database;
  targets(): readonly LifecycleTargetConfig[];
  fleet: LifecycleFleet;
}

export class StoredWakeEstimates {
  private readonly repo: ActionRepository;

  constructor(private readonly deps: WakeEstimatesDeps) {
    this.repo = createActionRepository(deps.db);
  }

  /** Expected wake time of a sleeping upstream; null if it is not a lifecycle target. */
  expectedWakeMs(upstream: string): number | null {
    const target = this.deps.targets().find((t) => t.upstream === upstream);
    if (!target) return null;
    const variant = variantOf('wake', target.sleepLevel, sleepLevel(this.deps.fleet, target));
    return estimate(variant, this.repo.durations(upstream, variant, 3)).expectedMs;
  }

  /** True when a wake of this upstream's current depth has been measured (else the estimate is a default). */
  wasMeasured(upstream: string): boolean {
    const target = this.deps.targets().find((t) => t.upstream === upstream);
    if (!target) return false;
    const variant = variantOf('wake', target.sleepLevel, sleepLevel(this.deps.fleet, target));
    return this.repo.durations(upstream, variant, 1).length > 0;
  }

  /** Expected restart time (the slowest of the last three measured, else the default); null if not a lifecycle target. */
  expectedRestartMs(upstream: string): number | null {
    if (!this.deps.targets().some((t) => t.upstream === upstream)) return null;
    return estimate('restart', this.repo.durations(upstream, 'restart', 3)).expectedMs;
  }
}
