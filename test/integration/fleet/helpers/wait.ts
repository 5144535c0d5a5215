import type { FleetSnapshot } from '../../../../src-preload/contract/index.js';
import type { FleetService } from '../../../../src-main/core/fleet/index.js';

/** Resolves with the first tick whose snapshot satisfies `predicate` (event-driven, no sleeps). */
export function waitForTick(fleet: FleetService, predicate: (s: FleetSnapshot) => boolean, timeoutMs = 8_000): Promise<FleetSnapshot> {
  return new Promise((resolve, reject) => {
    let last: FleetSnapshot | null = null;
    const timer = setTimeout(() => {
      void sub.dispose();
      reject(new Error(`no matching tick within ${timeoutMs} ms; last: ${JSON.stringify(last, null, 1)?.slice(0, 3000)}`));
    }, timeoutMs);
    const sub = fleet.onDidTick((s) => {
      last = s;
      if (!predicate(s)) return;
      clearTimeout(timer);
      void sub.dispose();
      resolve(s);
    });
  });
}
