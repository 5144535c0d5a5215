// Wake on request, as lifecycle rules it: a request to a sleeping model may
// wait for one wake when the service's policy wakes on demand, its driver can
// wake it, and an unexpired standing approval covers it (nobody has to approve
// now). It reads only the config and the standing approvals' table, so it is
// built before the proxy and handed to it; the proposal itself comes from the
// proxy's "wake wanted" event (ConsoleLifecycle), one path.
import type Database from 'better-sqlite3';
import type { Clock } from '../base/index.js';
import type { Config } from '../config/index.js';
import { driverFor } from './drivers/index.js';
import { createActionRepository, type ActionRepository } from './repository.js';
import { lifecycleTargets, policySettings } from './targets.js';

export interface WakePolicyDeps {
  db: Database.Database;
  config(): Config;
  clock: Clock;
}

export class StoredWakePolicy {
  private readonly repo: ActionRepository;

  constructor(private readonly deps: WakePolicyDeps) {
    this.repo = createActionRepository(deps.db);
  }

  allowed(upstream: string): boolean {
    const config = this.deps.config();
    if (!policySettings(config, upstream).wakeOnDemand) return false;
    const target = lifecycleTargets(config).find((t) => t.upstream === upstream);
    if (!target || !driverFor(target).supports('wake')) return false;
    const now = this.deps.clock.now();
    return this.repo.listStanding().some((s) => s.upstream === upstream && s.kind === 'wake' && s.revokedAt === null && s.expiresAt > now);
  }
}
