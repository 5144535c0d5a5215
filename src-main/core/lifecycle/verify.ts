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
  at: number;
  /** GTT (system memory the GPU maps, AMD APUs above all) is counted in `usedMiB`. */
  withGtt: boolean;
}

/**
 * Host-wide GPU memory in use (MiB) from the fleet's last GPU reading, with the
 * time it was polled: VRAM, plus GTT where the host reports it (on an APU the
 * model lives there, not in the BIOS carve-out).
 */
export function hostVram(fleet: LifecycleFleet, label: string): HostMemory | null {
  const host = fleet.snapshot().hosts.find((h) => h.label === label);
  if (!host || host.gpuStale || host.gpus.length === 0 || host.updatedAt === null) return null;
  let used = 0;
  let withGtt = false;
  for (const g of host.gpus) {
    if (g.memoryUsedMiB === null) return null;
    used += g.memoryUsedMiB;
    if (typeof g.gttUsedMiB === 'number') {
      used += g.gttUsedMiB;
      withGtt = true;
    }
  }
  return { usedMiB: used, at: host.updatedAt, withGtt };
}

const CALL_TIMEOUT_MS = 5_000;
const DEFAULT_SETTLE_MS = 2_000;

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
  const all = [...(v.checks ?? verificationChecks(v.driver, v.kind, v.target)), vramCheck(v)];
  const seen = new Map<string, CheckOutcome>();
  const callTimeout = () => Math.max(500, Math.min(CALL_TIMEOUT_MS, v.deadlineAt - v.clock.now()));
  const settleMs = v.settleMs ?? DEFAULT_SETTLE_MS;

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
    await pause(v.clock, v.pollMs, v.signal);
  }
}

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

function vramCheck(v: VerifyContext): DriverCheck {
  const run = (): CheckOutcome => {
    const now = hostVram(v.fleet, v.target.label);
    const what = now?.withGtt ? 'GPU memory (VRAM + GTT)' : 'VRAM';
    if (v.kind === 'restart') {
      return { ok: true, line: now ? `${what}: ${now.usedMiB} MiB in use on ${v.target.label} (not compared for a restart)` : 'VRAM: not measured' };
    }
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
