import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { LifecycleService, type LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import type { ActionView, FleetSnapshot } from '../../../../src-preload/contract/index.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';
import { until } from '../../../helpers/until.js';
import { urlClient } from '../../../helpers/upstream.js';

// A console stopped in the middle of an approved restart (the process gone,
// its database left as it was): the next start closes the action as
// interrupted with each step's fate, runs nothing again, and offers a check
// of the service's real state that is audited and changes nothing.

const TARGET: LifecycleTargetConfig = {
  label: 'h1', serviceId: 'qwen', upstream: 'h1/qwen', kind: 'vllm', model: 'Q', remoteHost: '127.0.0.1', remotePort: 8000,
  driver: 'vllm-sleep', routerBaseUrl: null, restartCommand: 'docker restart {service}', sleepLevel: 1,
};

let clock: FakeClock;
let file: string;
const stores: Store[] = [];
/** Every call that could change the server, from every console started on the file. */
let calls: string[];
/** Resolves the hung restart command of the first console (never, unless a test wants it to). */
let hang: Promise<never>;

const snapshot = (): FleetSnapshot => ({
  at: clock.now(),
  hosts: [{
    label: 'h1', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
    gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null,
    services: [{ id: 'qwen', kind: 'vllm', model: 'Q', aliases: [], slots: 4, remotePort: 8000, tunnel: { state: 'up', localUrl: null, lastError: null }, health: 'ok', sleep: 'awake', requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0, stale: false, staleReason: null }],
  }],
});

/** One console process on `file`: its own connection, its own service. */
function startConsole(opts: { standing?: boolean } = {}): { service: LifecycleService; store: Store; notices: string[] } {
  const store = openStore({ file, clock, logger: silentLogger });
  stores.push(store);
  const notices: string[] = [];
  const service = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => [TARGET],
    fleet: {
      state: () => fleetStateOf(snapshot()),
      upstream: () => urlClient('http://127.0.0.1:9'),
      exec: (_l, c) => {
        calls.push(`exec ${c}`);
        return hang;
      },
    },
    proxy: { drain: () => { calls.push('drain'); return Promise.resolve({ drained: 0, aborted: 0 }); }, resume: () => undefined, load: () => ({ inFlight: 0, queued: 0 }) },
    onAction: () => undefined, onStanding: () => undefined, notify: (n) => notices.push(n.title),
    osUser: () => 'dana',
    options: { verifyDeadlineMs: () => 10, drainDeadlineMs: 10 },
  });
  if (opts.standing) service.grantStanding({ upstream: 'h1/qwen', kind: 'restart', durationMinutes: 60, typedLabel: 'h1', caller: 'test' });
  return { service, store, notices };
}

/** Approves a restart in the first console and leaves it with its command sent and unanswered, as a kill -9 would. */
async function crashMidRestart(): Promise<ActionView> {
  const first = startConsole();
  const { action } = first.service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'test' });
  first.service.approve({ id: action.id, nonce: action.nonce!, typedLabel: 'h1', caller: 'test' });
  // The direct-client wait polls on the clock; the command is sent once it ends.
  await until(() => {
    clock.advance(50);
    return calls.some((c) => c.startsWith('exec'));
  });
  expect(first.service.get(action.id).state).toBe('running');
  // The process is gone: nothing of it runs again (its store is left open, as a killed process leaves its file).
  return action;
}

beforeEach(() => {
  clock = new FakeClock();
  file = join(mkdtempSync(join(tmpdir(), 'gc-lc-int-')), 'db.sqlite');
  calls = [];
  hang = new Promise<never>(() => undefined);
});
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

describe('an action the console stopped in the middle of', () => {
  it('is closed as interrupted at the next start with what was done, what was under way and what never ran', async () => {
    const action = await crashMidRestart();
    expect(calls.filter((c) => c.startsWith('exec'))).toEqual(['exec docker restart qwen']);

    const second = startConsole();
    const after = second.service.get(action.id);
    expect(after.state).toBe('interrupted');
    expect(after.error).toMatch(/not resumed/);
    expect(after.interruption).toMatchObject({ wasState: 'running', check: null });
    expect(after.interruption!.steps.map((s) => [s.kind, s.outcome])).toEqual([
      ['drain', 'done'],
      ['ssh', 'unknown'],
      ['verify', 'not-run'],
    ]);
    expect(after.interruption!.lastProgress).toMatch(/^step 1\/1: docker restart qwen/);
    expect(second.notices).toContain('INTERRUPTED: restart h1/qwen');

    const rows = second.store.audit.list({ limit: 100 }).filter((e) => e.payload.actionId === action.id);
    const interrupted = rows.find((r) => r.type === 'lifecycle.interrupted')!;
    expect(interrupted.payload).toMatchObject({ wasState: 'running', unknown: ['docker restart qwen'], notRun: [expect.stringMatching(/^verify/)] });
    expect(second.store.audit.verify().ok).toBe(true);
  });

  it('never runs twice: nothing is sent at the restart, its nonce is spent, and a third start changes nothing', async () => {
    const action = await crashMidRestart();
    const sent = calls.length;
    const second = startConsole();
    expect(calls.length).toBe(sent);
    const refused = (() => {
      try {
        second.service.approve({ id: action.id, nonce: action.nonce!, typedLabel: 'h1', caller: 'test' });
        return 'approved';
      } catch (err) {
        return (err as { code: string }).code;
      }
    })();
    expect(refused).toBe('LIFECYCLE_NONCE_USED');
    const third = startConsole();
    expect(calls.length).toBe(sent);
    expect(third.service.get(action.id).state).toBe('interrupted');
    const types = third.store.audit.list({ limit: 100 }).filter((e) => e.payload.actionId === action.id).map((e) => e.type);
    expect(types.filter((t) => t === 'lifecycle.running')).toHaveLength(1);
    expect(types.filter((t) => t === 'lifecycle.interrupted')).toHaveLength(1);
  });

  it('an approval left unrun (killed before the run started) is interrupted with every step not run', () => {
    const first = startConsole();
    const { action } = first.service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'test' });
    // What a kill right after the approval's transaction leaves: approved, nothing started.
    const rec = JSON.parse((first.store.db.prepare('SELECT view FROM actions WHERE id = ?').get(action.id) as { view: string }).view) as { view: ActionView };
    rec.view = { ...rec.view, state: 'approved', decision: 'approved', nonce: null };
    first.store.db.prepare('UPDATE actions SET state = ?, view = ? WHERE id = ?').run('approved', JSON.stringify(rec), action.id);

    const second = startConsole();
    const after = second.service.get(action.id);
    expect(after.interruption).toMatchObject({ wasState: 'approved', lastProgress: null });
    expect(after.interruption!.steps.every((s) => s.outcome === 'not-run')).toBe(true);
    expect(calls).toEqual([]);
  });

  it('Verify now reads the service and records what it saw (audited), leaving the action interrupted; refused on other states', async () => {
    const action = await crashMidRestart();
    const second = startConsole();
    let done: ActionView | null = null;
    void second.service.verifyNow(action.id, 'web').then((v) => (done = v));
    await until(() => {
      clock.advance(250);
      return done !== null;
    });
    const v = done! as ActionView;
    expect(v.state).toBe('interrupted');
    expect(v.interruption!.check).toMatchObject({ by: 'operator:dana@web', ok: false });
    // Nothing answers on port 9: the health line says so.
    expect(v.interruption!.check!.observed.some((l) => l.startsWith('✗ health'))).toBe(true);
    expect(second.service.get(action.id).interruption!.check!.ok).toBe(false);
    const checked = second.store.audit.list({ limit: 10 }).find((e) => e.type === 'lifecycle.checked')!;
    expect(checked).toMatchObject({ actor: 'operator:dana@web', payload: { actionId: action.id, state: 'interrupted', ok: false } });
    expect(calls.filter((c) => c.startsWith('exec'))).toHaveLength(1);

    const fresh = second.service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'test' }).action;
    await expect(second.service.verifyNow(fresh.id, 'web')).rejects.toMatchObject({ code: 'LIFECYCLE_NOT_INTERRUPTED' });
  });

  it('a standing approval does not run anything on that service until a person has looked (Verify now)', async () => {
    const action = await crashMidRestart();
    const second = startConsole({ standing: true });
    const sent = calls.length;
    const waiting = second.service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'policy:stuck' }).action;
    expect(waiting.state).toBe('proposed');
    expect(calls.length).toBe(sent);
    second.service.withdraw({ id: waiting.id, nonce: waiting.nonce!, caller: 'test' });

    let checked = false;
    void second.service.verifyNow(action.id, 'web').then(() => (checked = true));
    await until(() => {
      clock.advance(250);
      return checked;
    });
    const next = second.service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'policy:stuck' }).action;
    expect(next.state).not.toBe('proposed');
    expect(next.standingApprovalId).not.toBeNull();
  });
});
