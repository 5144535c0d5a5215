// After an action: does the server really look the way the action promised?
// Each check is retried until it holds or the deadline passes; what was seen
// last is reported either way, so a failure says what the console observed.
// A check may also say that waiting is pointless (a ghost still on the port):
// verification stops there with its coded error.
import type { ActionKind } from '../../../src-preload/contract/index.js';
import { toAppError, type AppError, type Clock } from '../base/index.js';
import type { CheckOutcome, DriverCheck, DriverIo, LifecycleDriver, LifecycleTargetConfig } from './drivers/index.js';
import { looksLikeGibberish } from './probe.js';
import type { LifecycleFleet } from './ports.js';
import type { FleetState } from '../fleet/index.js';

export interface VerifyContext {
  kind: ActionKind;
  target: LifecycleTargetConfig;
  driver: LifecycleDriver;
  io: DriverIo;
  fleet: LifecycleFleet;
  clock: Clock;
  /** The driver's checks for this run (from verificationChecks; their `before` already done). Default: made here. */
  checks?: DriverCheck[];
  /** Host GPU memory in use before the action (MiB), null when not measured. */
  vramBeforeMiB: number | null;
  /** The action's calls ended at this time; only GPU figures polled after it count. */
  stepsEndedAt: number;
  deadlineAt: number;
  pollMs: number;
  vramMinDeltaMiB: number;
  /** How long after the calls the old state may still be seen (see CheckTiming.settleMs). Default 2 s. */
  settleMs?: number;
  /**
   * A restart: how long to wait, once the server passed its checks, for a GPU reading taken
   * after that (a few fleet polls). Default 5 s.
   */
  memoryWaitMs?: number;
  /** What verification waits for now (the first check not yet holding), each time it changes. */
  onProgress?: (text: string) => void;
  signal?: AbortSignal;
}

export interface VerifyResult {
  ok: boolean;
  observed: string[];
  /** A check that cannot come right by waiting (LIFECYCLE_GHOST_PROCESS, …); null otherwise. */
  error: AppError | null;
}

export interface HostMemory {
  usedMiB: number;
  /** When the GPU reading was taken (the reading's own time, not the poll's end). */
  at: number;
  /** GTT (system memory the GPU maps, AMD APUs above all) is counted in `usedMiB`. */
  withGtt: boolean;
}

/**
 * Host-wide GPU memory in use (MiB) from the fleet's last GPU reading, with the
 * time that reading was taken: VRAM, plus GTT where the host reports it (on an
 * APU the model lives there, not in the BIOS carve-out). The host's `updatedAt`
 * is only a fallback for a state without a GPU source: it moves with every
 * poll that read a service, even when the GPU figures are older.
 */
export function hostVram(fleet: LifecycleFleet, label: string): HostMemory | null {
  return hostVramIn(fleet.state(), label);
}

export function hostVramIn(state: FleetState, label: string): HostMemory | null {
  const host = state.hosts.find((h) => h.label === label);
  const at = host?.gpus.source ? host.gpus.source.atMs : (host?.updatedAt ?? null);
  if (!host || host.gpus.stale !== null || host.gpus.readings.length === 0 || at === null) return null;
  let used = 0;
  let withGtt = false;
  for (const g of host.gpus.readings) {
    if (g.memoryUsedMiB === null) return null;
    used += g.memoryUsedMiB;
    if (typeof g.gttUsedMiB === 'number') {
      used += g.gttUsedMiB;
      withGtt = true;
    }
  }
  return { usedMiB: used, at, withGtt };
}

const CALL_TIMEOUT_MS = 5_000;
const DEFAULT_SETTLE_MS = 2_000;
const DEFAULT_MEMORY_WAIT_MS = 5_000;
const PROGRESS_EVERY_MS = 2_000;

/** The checks of `kind` with `driver`: its own, or sleep state, /health and a completion probe. */
export function verificationChecks(driver: LifecycleDriver, kind: ActionKind, target: LifecycleTargetConfig): DriverCheck[] {
  return driver.checks?.(kind) ?? defaultChecks(driver, kind, target);
}

/** What the proposal's verify step says, from the same checks. */
export function verificationText(driver: LifecycleDriver, kind: ActionKind, target: LifecycleTargetConfig): string {
  const parts = verificationChecks(driver, kind, target).map((c) => c.text);
  if (kind === 'sleep' || kind === 'offload') parts.push('GPU memory in use falls');
  if (kind === 'wake') parts.push('GPU memory in use rises');
  return `verify (${driver.name}): ${parts.join('; ')}; then re-open admission`;
}

export async function verifyAction(v: VerifyContext): Promise<VerifyResult> {
  const checks = v.checks ?? verificationChecks(v.driver, v.kind, v.target);
  // A restart's memory is not compared, only recorded: read once the server passed its checks (memoryAfterRestart).
  if (v.kind !== 'restart') return untilChecksHold(v, [...checks, vramCheck(v)]);
  const held = await untilChecksHold(v, checks);
  if (!held.ok) return { ...held, observed: [...held.observed, 'GPU memory: not read after the restart (the server did not pass its checks)'] };
  v.onProgress?.('checks passed; waiting for a GPU reading taken after them');
  return { ...held, observed: [...held.observed, await memoryAfterRestart(v, v.clock.now())] };
}

/** Runs `all` until every one holds, one says waiting is pointless, or the deadline passes. */
async function untilChecksHold(v: VerifyContext, all: readonly DriverCheck[]): Promise<VerifyResult> {
  const seen = new Map<string, CheckOutcome>();
  const callTimeout = () => Math.max(500, Math.min(CALL_TIMEOUT_MS, v.deadlineAt - v.clock.now()));
  const settleMs = v.settleMs ?? DEFAULT_SETTLE_MS;
  // Progress is saved and published: told when the check waited for changes, else at most every PROGRESS_EVERY_MS.
  const told = { name: '', at: Number.NEGATIVE_INFINITY };

  for (;;) {
    // One pass in order: a check whose `after` checks now hold is tried in the same pass.
    for (const c of all) {
      if (seen.get(c.name)?.ok) continue;
      if (c.after && !c.after.every((n) => seen.get(n)?.ok)) continue;
      const out = await c.run(v.io, { timeoutMs: callTimeout(), sinceStepsMs: v.clock.now() - v.stepsEndedAt, settleMs });
      seen.set(c.name, out);
      if (out.fatal) return { ok: false, observed: lines(all, seen), error: out.fatal };
    }
    if (all.every((c) => seen.get(c.name)?.ok)) return { ok: true, observed: all.map((c) => seen.get(c.name)!.line), error: null };
    if (v.clock.now() >= v.deadlineAt || v.signal?.aborted) return { ok: false, observed: lines(all, seen), error: null };
    // "health: HTTP 503 Loading model …" while a llama-server loads: the action's progress says so.
    const waiting = all.find((c) => seen.get(c.name)?.ok === false);
    const now = v.clock.now();
    if (waiting && v.onProgress && (told.name !== waiting.name || now - told.at >= PROGRESS_EVERY_MS)) {
      Object.assign(told, { name: waiting.name, at: now });
      v.onProgress(`verifying: ${seen.get(waiting.name)!.line}`);
    }
    await pause(v.clock, v.pollMs, v.signal);
  }
}

/**
 * The host's GPU memory after a restart, from a reading taken after the server
 * passed its checks (`heldAt`): one taken while the model was still loading
 * would put a mid-load figure into the evidence (137 MiB on an APU whose 18 GiB
 * were back seconds later). No such reading within the wait: the line says the
 * figure was not read, and gives none. A reading's time is when its command
 * answered; the checks end with a completion probe, so a GPU command answering
 * after them started after /health turned 200 unless it ran longer than the probe.
 */
async function memoryAfterRestart(v: VerifyContext, heldAt: number): Promise<string> {
  const label = v.target.label;
  if (v.vramBeforeMiB === null && hostVram(v.fleet, label) === null) return `GPU memory: not measured (no GPU reading of ${label})`;
  const waitMs = v.memoryWaitMs ?? DEFAULT_MEMORY_WAIT_MS;
  const until = heldAt + waitMs;
  for (;;) {
    const now = hostVram(v.fleet, label);
    if (now !== null && now.at > heldAt) {
      const what = now.withGtt ? 'GPU memory (VRAM + GTT)' : 'VRAM';
      return `${what}: ${now.usedMiB} MiB in use on ${label}, read ${seconds(now.at - heldAt)} after the server passed its checks (not compared for a restart)`;
    }
    if (v.clock.now() >= until || v.signal?.aborted) {
      return `GPU memory: not read after the restart (no GPU reading of ${label} within ${seconds(waitMs)} after the server passed its checks; not compared for a restart)`;
    }
    await pause(v.clock, Math.min(v.pollMs, Math.max(1, until - v.clock.now())), v.signal);
  }
}

const seconds = (ms: number): string => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;

/** Waits `ms`, or less if `signal` aborts; the abort listener goes with the wait (one per poll would pile up). */
function pause(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const onAbort = () => {
      void t.dispose();
      resolve();
    };
    const t = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Every check's last line, failures marked; a check never tried says what it waited for. */
function lines(all: readonly DriverCheck[], seen: ReadonlyMap<string, CheckOutcome>): string[] {
  return all.map((c) => {
    const out = seen.get(c.name);
    if (out) return out.ok ? out.line : `✗ ${out.line}`;
    return `✗ ${c.notAttempted ?? `${c.name}: not attempted (${(c.after ?? []).join(' and ')} did not hold in time)`}`;
  });
}

function defaultChecks(driver: LifecycleDriver, kind: ActionKind, target: LifecycleTargetConfig): DriverCheck[] {
  const expectAsleep = kind === 'sleep' || kind === 'offload';
  const checks: DriverCheck[] = [
    {
      name: 'sleep',
      text: expectAsleep ? 'engine reports asleep' : 'engine reports awake',
      async run(io, t) {
        try {
          const sleeping = await driver.readSleeping(io, t.timeoutMs);
          if (sleeping === null) return { ok: true, line: `sleep state: not readable with the ${driver.name} driver` };
          return { ok: sleeping === expectAsleep, line: `sleep state: ${sleeping ? 'asleep' : 'awake'} (expected ${expectAsleep ? 'asleep' : 'awake'})` };
        } catch (err) {
          return { ok: false, line: `sleep state: unreadable (${toAppError(err).message})` };
        }
      },
    },
    {
      name: 'health',
      text: 'GET /health answers 200',
      async run(io, t) {
        try {
          const r = await io.http('GET', { path: '/health' }, null, t.timeoutMs);
          return { ok: r.status === 200, line: `health: HTTP ${r.status}` };
        } catch (err) {
          return { ok: false, line: `health: no answer (${toAppError(err).message})` };
        }
      },
    },
  ];
  if (kind === 'wake' || kind === 'restart') {
    checks.push({
      name: 'probe',
      // Says what is checked, not the hoped-for result: the same words stand beside a failed probe in reports.
      text: 'completion probe: 8 tokens after "The capital of France is", failed if they read as gibberish',
      after: ['sleep', 'health'],
      notAttempted: 'probe: not attempted (server not healthy and awake in time)',
      run: (io, t) => completionProbe(io, target.model, t.timeoutMs),
    });
  }
  return checks;
}

/** Sleep, offload, wake: memory must fall or rise by the threshold, in a GPU reading taken after the calls. */
function vramCheck(v: VerifyContext): DriverCheck {
  const run = (): CheckOutcome => {
    const now = hostVram(v.fleet, v.target.label);
    const what = now?.withGtt ? 'GPU memory (VRAM + GTT)' : 'VRAM';
    if (v.vramBeforeMiB === null) return { ok: true, line: 'VRAM: not measured before the action (no GPU reading); not compared' };
    if (!now || now.at <= v.stepsEndedAt) {
      return { ok: false, line: `${what}: no GPU reading since the action yet (before: ${v.vramBeforeMiB} MiB)` };
    }
    const delta = now.usedMiB - v.vramBeforeMiB;
    const falls = v.kind === 'sleep' || v.kind === 'offload';
    const ok = falls ? delta <= -v.vramMinDeltaMiB : delta >= v.vramMinDeltaMiB;
    return {
      ok,
      line: `${what}: ${v.vramBeforeMiB} → ${now.usedMiB} MiB (${delta >= 0 ? '+' : ''}${delta} MiB; expected to ${falls ? 'fall' : 'rise'} by ≥ ${v.vramMinDeltaMiB} MiB)`,
    };
  };
  return { name: 'vram', text: 'GPU memory', run: () => Promise.resolve(run()) };
}

async function completionProbe(io: DriverIo, model: string, timeoutMs: number): Promise<CheckOutcome> {
  try {
    const body = JSON.stringify({ model, prompt: 'The capital of France is', max_tokens: 8, temperature: 0 });
    const r = await io.http('POST', { path: '/v1/completions' }, body, timeoutMs);
    if (r.status === 400 && /embedding|does not support/i.test(r.text)) {
      const e = await io.http('POST', { path: '/v1/embeddings' }, JSON.stringify({ model, input: 'probe' }), timeoutMs);
      const vec = e.status === 200 ? ((JSON.parse(e.text) as { data?: { embedding?: unknown }[] }).data?.[0]?.embedding ?? null) : null;
      const ok = Array.isArray(vec) && vec.length > 0 && vec.every((x) => typeof x === 'number' && Number.isFinite(x));
      return { ok, line: ok ? `probe: embedding of ${vec.length} dimensions` : `probe: embeddings answered HTTP ${e.status} without a usable vector` };
    }
    if (r.status !== 200) return { ok: false, line: `probe: HTTP ${r.status} ${r.text.slice(0, 120)}` };
    const text = (JSON.parse(r.text) as { choices?: { text?: string }[] }).choices?.[0]?.text ?? '';
    if (looksLikeGibberish(text)) return { ok: false, line: `probe: answered gibberish ${JSON.stringify(text.slice(0, 60))} (weights not valid)` };
    return { ok: true, line: `probe: answered ${JSON.stringify(text.slice(0, 60))}` };
  } catch (err) {
    return { ok: false, line: `probe: ${toAppError(err).message}` };
  }
}
