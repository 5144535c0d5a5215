import type { FleetSnapshot, HostView } from '../../../src-preload/contract/index.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { ConfigSchema, type ConfigInput } from '../../../src-main/core/config/index.js';
import { FleetService, type FleetServiceOptions, type HostStateChange } from '../../../src-main/core/fleet/index.js';

type HostInput = NonNullable<ConfigInput['hosts']>[number];

export function startFleet(hosts: HostInput[], options: Partial<FleetServiceOptions> = {}): { fleet: FleetService; changes: HostStateChange[] } {
  const config = ConfigSchema.parse({ hosts });
  const fleet = new FleetService({
    config,
    logger: silentLogger,
    pollIntervalMs: 250,
    scrapeTimeoutMs: 2_000,
    ...options,
    sshOptions: { readyTimeoutMs: 4_000, backoff: { initialMs: 200, maxMs: 1_000 }, waitForConnectionMs: 1_500, ...options.sshOptions },
  });
  const changes: HostStateChange[] = [];
  fleet.onDidChangeHostState((c) => changes.push(c));
  fleet.start();
  return { fleet, changes };
}

/** Resolves with the host's view once `predicate` holds (checked on every tick and state change); no sleeps. */
export function waitHost(fleet: FleetService, label: string, predicate: (h: HostView) => boolean, timeoutMs = 8_000): Promise<HostView> {
  return new Promise((resolve, reject) => {
    const check = (s: FleetSnapshot): boolean => {
      const h = s.hosts.find((x) => x.label === label);
      if (h && predicate(h)) {
        cleanup();
        resolve(h);
        return true;
      }
      return false;
    };
    const timer = setTimeout(() => {
      cleanup();
      const h = fleet.snapshot().hosts.find((x) => x.label === label);
      reject(new Error(`${label}: condition not met within ${timeoutMs} ms; now ${JSON.stringify(h, null, 1)?.slice(0, 2500)}`));
    }, timeoutMs);
    const a = fleet.onDidTick(check);
    const b = fleet.onDidChangeHostState(() => check(fleet.snapshot()));
    const cleanup = () => {
      clearTimeout(timer);
      void a.dispose();
      void b.dispose();
    };
    check(fleet.snapshot());
  });
}

/** Handles the test's process holds (sockets, servers, timers), by kind: for leak checks. */
export function handleCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}
