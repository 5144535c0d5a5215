// kill -9 at random points (issue #33 item 2): the built console runs with the
// demo fleet and client traffic through its proxy (request-log batches), and in
// each round one more thing is under way — audit appends, a proposal's
// approval, a running restart, a report export, settings saves — when it is
// killed with SIGKILL after a random delay. Then, with it down: integrity_check
// ok, the audit chain verifies, no action ran twice, the settings agree with
// their audit rows; and after a start on the same folder: every action left
// open is shown interrupted with its steps, its old nonce is refused, every
// listed report is whole and no staging folder is left.
//
// Seeded: GPU_CONSOLE_CRASH_SEED=<n> repeats a run (the seed is printed, and
// named in every failure); GPU_CONSOLE_CRASH_ROUNDS=<n> for more rounds.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionView, FleetSnapshot, ReportExport } from '../../src-preload/contract/index.js';
import { createPrng } from '../../src-main/demo/text-gen.js';
import { assertBuilt, bridgeCall, startConsole, type RunningConsole } from '../helpers/console-process.js';
import { inspectDeadFolder } from '../helpers/crash-checks.js';
import { until } from '../helpers/until.js';

const SEED = Number(process.env.GPU_CONSOLE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const KINDS = ['audit', 'approval', 'restart', 'export', 'settings', 'traffic'] as const;
type Kind = (typeof KINDS)[number];
const ROUNDS = Number(process.env.GPU_CONSOLE_CRASH_ROUNDS ?? KINDS.length);
const RESTART = { upstream: 'tri-gpu/gemma', label: 'tri-gpu' };

const rand = createPrng(SEED);
const between = (lo: number, hi: number) => Math.floor(lo + rand() * (hi - lo));
/** Every kind once per six rounds, in a seeded order. */
const plan: Kind[] = Array.from({ length: ROUNDS }, (_, i) => i).reduce<Kind[]>((out, i) => {
  if (i % KINDS.length === 0) out.push(...[...KINDS].sort(() => rand() - 0.5));
  return out;
}, []).slice(0, ROUNDS);

const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-crash-'));
const ARGS = ['--demo', '--demo-traffic', 'off', '--demo-time-scale', '20', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'];
const log: string[] = [];
const say = (line: string) => log.push(line);
const context = () => `seed ${SEED} (GPU_CONSOLE_CRASH_SEED=${SEED} repeats it); rounds so far:\n${log.join('\n')}`;

async function call<T>(c: RunningConsole, channel: string, input: unknown): Promise<T> {
  const r = await bridgeCall<T>(c.ui, channel, input);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code}: ${r.error.message}`);
  return r.data;
}

/** Client traffic through the proxy until `stop` (each answer is a request-log row; errors after the kill are expected). */
function traffic(proxyUrl: string, token: string, stop: { done: boolean }): Promise<void> {
  const one = async (): Promise<void> => {
    while (!stop.done) {
      await fetch(`${proxyUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'qwen', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
        signal: AbortSignal.timeout(5_000),
      })
        .then((r) => r.arrayBuffer())
        .catch(() => new Promise((r) => setTimeout(r, 50)));
    }
  };
  return Promise.all([one(), one(), one()]).then(() => undefined);
}

/** Hosts connected, and the restart's service and the traffic's model healthy behind open tunnels. */
const ready = (f: FleetSnapshot): boolean =>
  f.hosts.every((h) => h.state === 'connected') &&
  [RESTART.upstream, 'l20-poc/qwen'].every((u) => {
    const [label, id] = u.split('/');
    const svc = f.hosts.find((h) => h.label === label)?.services.find((x) => x.id === id);
    return svc?.health === 'ok' && svc.tunnel.state === 'up';
  });

interface Approved {
  id: string;
  nonce: string;
}

/**
 * Runs the round's operation, recording the approvals it makes (their nonces); `arm()` marks the moment the
 * kill's delay counts from: the approve call for an approval, the run once approved for a restart, at once
 * for the rest.
 */
async function operate(kind: Kind, c: RunningConsole, approved: Approved[], round: number, stop: { done: boolean }, arm: () => void): Promise<void> {
  let i = 0;
  if (kind !== 'approval' && kind !== 'restart') arm();
  switch (kind) {
    case 'audit':
      while (!stop.done) await call(c, 'proxy.createToken', { name: `crash-${round}-${i++}`, maxClass: 'batch' });
      return;
    case 'settings':
      while (!stop.done) await call(c, 'budget.set', { monthlyUsd: 100 + round * 1000 + i++ });
      return;
    case 'export':
      await call<ReportExport>(c, 'reports.export', { request: { fromMs: Date.now() - 600_000, toMs: Date.now(), live: false }, formats: ['md', 'html', 'json'] });
      return;
    case 'approval':
    case 'restart': {
      const { action } = await call<{ action: ActionView }>(c, 'actions.propose', { upstream: RESTART.upstream, kind: 'restart', reason: `crash round ${round}` });
      if (action.state !== 'proposed' || !action.nonce) return;
      approved.push({ id: action.id, nonce: action.nonce });
      if (kind === 'approval') arm();
      await call(c, 'actions.approve', { id: action.id, nonce: action.nonce, typedLabel: RESTART.label });
      arm();
      return;
    }
    case 'traffic':
      return;
  }
}

/** How long after the round's operation starts the kill comes (ms), by kind. */
const KILL_WINDOW_MS: Record<Kind, [number, number]> = {
  // A call through the bridge takes tens of ms on a loaded machine: the early kills still land before the first write.
  audit: [100, 700],
  settings: [100, 700],
  export: [0, 1_500],
  approval: [0, 250],
  restart: [150, 3_000],
  traffic: [100, 1_200],
};

describe(`kill -9 at random points (seed ${SEED})`, () => {
  let token = '';
  const approved: Approved[] = [];

  beforeAll(() => {
    assertBuilt();
    console.log(`crash-kill: seed ${SEED}, plan ${plan.join(', ')}`);
  });
  /** The console of the round under way: a failed check must not leave it running. */
  let current: RunningConsole | null = null;
  afterAll(() => {
    if (current && current.child.exitCode === null && current.child.signalCode === null) current.child.kill('SIGKILL');
    if (log.length) console.log(`crash-kill (seed ${SEED}):\n${log.join('\n')}`);
  });

  it('keeps the database, the audit chain, actions, reports and settings whole', async () => {
    for (const [round, kind] of plan.entries()) {
      const c = (current = await startConsole(ARGS, 30_000));
      const proxyUrl = c.output().match(/^GPU Console ready ui=\S+ proxy=(\S+)/m)![1]!;
      await checkAfterStart(c, approved, round);
      if (!token) token = (await call<{ token: string }>(c, 'proxy.createToken', { name: 'crash-traffic', maxClass: 'interactive' })).token;
      await until(async () => ready(await call<FleetSnapshot>(c, 'fleet.snapshot', {})), { timeoutMs: 20_000, what: 'the demo hosts connected and their services healthy' });

      const stop = { done: false };
      const load = traffic(proxyUrl, token, stop);
      const [lo, hi] = KILL_WINDOW_MS[kind];
      const delayMs = between(lo, hi);
      let armed = () => undefined as void;
      const armedAt = new Promise<void>((r) => (armed = r));
      const op = operate(kind, c, approved, round, stop, () => armed()).catch((err: unknown) => say(`  (${kind} stopped: ${(err as Error).message.slice(0, 120)})`));
      // An operation that fails before its moment (a refused proposal) still gets its kill.
      await Promise.race([armedAt, op]);
      await new Promise((r) => setTimeout(r, delayMs));
      c.child.kill('SIGKILL');
      await new Promise((r) => (c.child.exitCode !== null || c.child.signalCode !== null ? r(null) : c.child.once('exit', r)));
      stop.done = true;
      await Promise.all([op, load]);

      const staging = existsSync(join(dataDir, 'reports')) ? readdirSync(join(dataDir, 'reports')).filter((n) => n.endsWith('.partial')) : [];
      const dead = inspectDeadFolder(dataDir);
      say(
        `round ${round}: ${kind}, killed ${delayMs} ms in; ${dead.chain.count} audit events, ${dead.requests} request rows, ` +
          `open actions [${dead.openActions.join(', ')}], ${dead.exports.length} exports + [${staging.join(', ')}], budget ${JSON.stringify(dead.budget)}`,
      );
      expect(dead.integrity, context()).toEqual(['ok']);
      expect(dead.chain, context()).toMatchObject({ ok: true });
      expect(dead.ranTwice, context()).toEqual([]);
      expect(dead.budget.stored, context()).toBe(dead.budget.audited);
    }
    // The last start: what the kills left is shown as it is, then a clean stop.
    const c = (current = await startConsole(ARGS, 30_000));
    await checkAfterStart(c, approved, plan.length);
    expect(await c.stop(), context()).toBe(0);
    const end = inspectDeadFolder(dataDir);
    expect(end.integrity, context()).toEqual(['ok']);
    // The traffic was served (and logged) across the rounds: the request-log batches were really under way.
    expect(end.requests, context()).toBeGreaterThan(0);
  }, 240_000);
});

const told = new Set<string>();

/** After a start on the folder: nothing left open, the approvals' nonces spent, reports whole. */
async function checkAfterStart(c: RunningConsole, approved: readonly Approved[], round: number): Promise<void> {
  const { actions } = await call<{ actions: ActionView[] }>(c, 'actions.list', { limit: 500 });
  for (const a of approved) {
    const now = actions.find((x) => x.id === a.id);
    expect(now, context()).toBeDefined();
    // The kill came before the approval reached the console: still waiting, nothing decided (a later round may approve it).
    if (now!.state === 'proposed') {
      expect(now!.decision, context()).toBeNull();
      continue;
    }
    // Nothing the console started before a kill is running or about to run after a start.
    expect(['verified', 'failed', 'interrupted'], `${a.id} at round ${round}: ${now!.state}; ${context()}`).toContain(now!.state);
    if (now!.state === 'interrupted') {
      if (!told.has(a.id)) say(`  ${a.id} interrupted: ${now!.interruption!.steps.map((s) => `${s.kind} ${s.outcome}`).join(', ')}`);
      told.add(a.id);
      expect(now!.interruption?.steps.map((s) => s.kind), context()).toEqual(now!.steps.map((s) => s.kind));
      expect(now!.error, context()).toMatch(/not resumed/);
    }
    const again = await bridgeCall(c.ui, 'actions.approve', { id: a.id, nonce: a.nonce, typedLabel: RESTART.label });
    expect(again.ok ? 'approved again' : again.error.code, context()).toBe('LIFECYCLE_NONCE_USED');
  }
  const reports = join(dataDir, 'reports');
  const { exports } = await call<{ exports: ReportExport[] }>(c, 'reports.list', { limit: 100 });
  for (const e of exports) expect(existsSync(join(e.dir, 'manifest.json')), `${e.dir} listed without its manifest; ${context()}`).toBe(true);
  // The start-up sweep removes what a killed export left.
  await until(() => !existsSync(reports) || readdirSync(reports).every((n) => !n.endsWith('.partial')), { timeoutMs: 5_000, what: 'no staging folder left in reports/' });
}
