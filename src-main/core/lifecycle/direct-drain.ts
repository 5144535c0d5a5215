// The drain's second half: once the proxy's own requests have finished (or
// were cut), wait until the engine reports nothing running or waiting — what
// is left there came from clients using the SSH tunnel directly — or until
// the drain's deadline, whichever is first. The fleet's view refreshes each
// poll tick; it is polled, never waited on past the deadline.
import type { DirectDrain } from '../../../src-preload/contract/index.js';
import { DisposableStore, type Clock } from '../base/index.js';
import { engineFigure, type EngineFigure } from './load.js';
import type { LifecycleFleet } from './ports.js';

export interface DirectDrainInput {
  clock: Clock;
  fleet: Pick<LifecycleFleet, 'state'>;
  target: { label: string; serviceId: string };
  /** The drain's deadline (ms epoch): the proxy's drain and this wait together never go past it. */
  deadlineAt: number;
  /**
   * Readings taken before this moment may still count the proxy's requests that
   * just finished, so only a later one can say "idle"; null when the proxy had none.
   */
  readAfter: number | null;
  pollMs: number;
  /** An engine figure older than this is stale (a few fleet poll intervals). */
  maxAgeMs: number;
  signal: AbortSignal;
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const requests = (n: number): string => `${n} request${n === 1 ? '' : 's'}`;

export function waitForDirectClients(input: DirectDrainInput): Promise<DirectDrain> {
  const { clock, fleet, target, deadlineAt, readAfter, pollMs, maxAgeMs, signal } = input;
  const startedAt = clock.now();
  return new Promise<DirectDrain>((resolve) => {
    const store = new DisposableStore();
    let last: EngineFigure | null = null;
    let settled = false;
    const finish = (outcome: DirectDrain['outcome'], f: EngineFigure | null): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      void store.dispose();
      const waitedMs = clock.now() - startedAt;
      resolve({ outcome, running: f?.running ?? null, waiting: f?.waiting ?? null, waitedMs, text: describe(outcome, f, waitedMs) });
    };
    const onAbort = (): void => finish('cancelled', last);
    const check = (): void => {
      const now = clock.now();
      const f = engineFigure(fleet.state(), target, now, maxAgeMs);
      last = f;
      // No usable figure, and none coming soon (never read, reading fails, host away): waiting cannot learn anything.
      if (f.state === 'unknown' || f.cause === 'failed' || f.cause === 'host') return finish('unknown', f);
      const current = f.state === 'fresh' && (readAfter === null || (f.readAt ?? 0) >= readAfter);
      if (current && (f.running ?? 0) + (f.waiting ?? 0) === 0) return finish('idle', f);
      if (now >= deadlineAt) finish('deadline', f);
    };
    if (signal.aborted) return finish('cancelled', null);
    signal.addEventListener('abort', onAbort, { once: true });
    check();
    if (settled) return;
    store.add(clock.setInterval(check, Math.max(1, pollMs)));
    store.add(
      clock.setTimeout(() => {
        check();
        finish('deadline', last);
      }, Math.max(0, deadlineAt - clock.now())),
    );
  });
}

function describe(outcome: DirectDrain['outcome'], f: EngineFigure | null, waitedMs: number): string {
  const running = f?.running ?? 0;
  const waiting = f?.waiting ?? 0;
  switch (outcome) {
    case 'idle':
      return waitedMs > 0 ? `direct tunnel clients finished at the engine after ${secs(waitedMs)}` : 'no direct tunnel clients at the engine';
    case 'deadline':
      return `went ahead at the drain deadline with ${requests(running)} still running at the engine from direct tunnel clients${waiting > 0 ? ` and ${waiting} waiting` : ''}${f?.state === 'fresh' ? '' : ` (${f?.note ?? 'engine figure not fresh'})`}`;
    case 'unknown':
      return `direct tunnel clients unknown (${f?.note ?? 'no engine figure'}); went ahead without waiting${f?.running ? ` — the engine last said ${f.running} running` : ''}`;
    case 'cancelled':
      return 'the wait for direct tunnel clients was cancelled (console shutting down)';
  }
}
