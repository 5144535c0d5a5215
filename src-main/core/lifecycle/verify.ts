// After an action: does the server really look the way the action promised?
// Each check is retried until it holds or the deadline passes; what was seen
// last is reported either way, so a failure says what the console observed.
import type { ActionKind } from '../../../src-preload/contract/index.js';
import { toAppError, type Clock } from '../base/index.js';
import type { DriverIo, LifecycleDriver, LifecycleTargetConfig } from './drivers/index.js';
import { looksLikeGibberish } from './probe.js';
import type { LifecycleFleet } from './ports.js';

export interface VerifyContext {
  kind: ActionKind;
  target: LifecycleTargetConfig;
  driver: LifecycleDriver;
  io: DriverIo;
  fleet: LifecycleFleet;
  clock: Clock;
  /** Host VRAM in use before the action (MiB), null when not measured. */
  vramBeforeMiB: number | null;
  /** The action's calls ended at this time; only GPU figures polled after it count. */
  stepsEndedAt: number;
  deadlineAt: number;
  pollMs: number;
  vramMinDeltaMiB: number;
  signal?: AbortSignal;
}

export interface VerifyResult {
  ok: boolean;
  observed: string[];
}

/** Host-wide VRAM in use (MiB) from the fleet's last nvidia-smi, with the time it was polled. */
export function hostVram(fleet: LifecycleFleet, label: string): { usedMiB: number; at: number } | null {
  const host = fleet.snapshot().hosts.find((h) => h.label === label);
  if (!host || host.gpuStale || host.gpus.length === 0 || host.updatedAt === null) return null;
  let used = 0;
  for (const g of host.gpus) {
    if (g.memoryUsedMiB === null) return null;
    used += g.memoryUsedMiB;
  }
  return { usedMiB: used, at: host.updatedAt };
}

interface Check {
  name: string;
  ok: boolean;
  line: string;
}

const CALL_TIMEOUT_MS = 5_000;

export async function verifyAction(v: VerifyContext): Promise<VerifyResult> {
  const expectAsleep = v.kind === 'sleep' || v.kind === 'offload';
  const wantsProbe = v.kind === 'wake' || v.kind === 'restart';
  const checks = new Map<string, Check>();
  const set = (c: Check) => checks.set(c.name, c);
  const callTimeout = () => Math.max(500, Math.min(CALL_TIMEOUT_MS, v.deadlineAt - v.clock.now()));

  for (;;) {
    if (!checks.get('sleep')?.ok) {
      try {
        const sleeping = await v.driver.readSleeping(v.io, callTimeout());
        if (sleeping === null) set({ name: 'sleep', ok: true, line: `sleep state: not readable with the ${v.driver.name} driver` });
        else set({ name: 'sleep', ok: sleeping === expectAsleep, line: `sleep state: ${sleeping ? 'asleep' : 'awake'} (expected ${expectAsleep ? 'asleep' : 'awake'})` });
      } catch (err) {
        set({ name: 'sleep', ok: false, line: `sleep state: unreadable (${toAppError(err).message})` });
      }
    }
    if (!checks.get('health')?.ok) {
      try {
        const r = await v.io.http('GET', { path: '/health' }, null, callTimeout());
        set({ name: 'health', ok: r.status === 200, line: `health: HTTP ${r.status}` });
      } catch (err) {
        set({ name: 'health', ok: false, line: `health: no answer (${toAppError(err).message})` });
      }
    }
    if (wantsProbe && !checks.get('probe')?.ok && checks.get('health')?.ok && checks.get('sleep')?.ok) {
      set(await probe(v, callTimeout()));
    }
    if (!checks.get('vram')?.ok) set(vramCheck(v));

    const all = [...checks.values()];
    if (all.every((c) => c.ok) && (!wantsProbe || checks.has('probe'))) return { ok: true, observed: all.map((c) => c.line) };
    if (v.clock.now() >= v.deadlineAt || v.signal?.aborted) {
      if (wantsProbe && !checks.has('probe')) set({ name: 'probe', ok: false, line: 'probe: not attempted (server not healthy and awake in time)' });
      const lines = [...checks.values()].map((c) => (c.ok ? c.line : `✗ ${c.line}`));
      return { ok: false, observed: lines };
    }
    await new Promise<void>((resolve) => {
      const t = v.clock.setTimeout(resolve, v.pollMs);
      v.signal?.addEventListener('abort', () => {
        void t.dispose();
        resolve();
      }, { once: true });
    });
  }
}

function vramCheck(v: VerifyContext): Check {
  if (v.kind === 'restart') {
    const now = hostVram(v.fleet, v.target.label);
    return { name: 'vram', ok: true, line: now ? `VRAM: ${now.usedMiB} MiB in use on ${v.target.label} (not compared for a restart)` : 'VRAM: not measured' };
  }
  if (v.vramBeforeMiB === null) return { name: 'vram', ok: true, line: 'VRAM: not measured before the action (nvidia-smi unavailable); not compared' };
  const now = hostVram(v.fleet, v.target.label);
  if (!now || now.at <= v.stepsEndedAt) {
    return { name: 'vram', ok: false, line: `VRAM: no nvidia-smi reading since the action yet (before: ${v.vramBeforeMiB} MiB)` };
  }
  const delta = now.usedMiB - v.vramBeforeMiB;
  const falls = v.kind === 'sleep' || v.kind === 'offload';
  const ok = falls ? delta <= -v.vramMinDeltaMiB : delta >= v.vramMinDeltaMiB;
  return {
    name: 'vram',
    ok,
    line: `VRAM: ${v.vramBeforeMiB} → ${now.usedMiB} MiB (${delta >= 0 ? '+' : ''}${delta} MiB; expected to ${falls ? 'fall' : 'rise'} by ≥ ${v.vramMinDeltaMiB} MiB)`,
  };
}

async function probe(v: VerifyContext, timeoutMs: number): Promise<Check> {
  try {
    const body = JSON.stringify({ model: v.target.model, prompt: 'The capital of France is', max_tokens: 8, temperature: 0 });
    const r = await v.io.http('POST', { path: '/v1/completions' }, body, timeoutMs);
    if (r.status === 400 && /embedding|does not support/i.test(r.text)) {
      const e = await v.io.http('POST', { path: '/v1/embeddings' }, JSON.stringify({ model: v.target.model, input: 'probe' }), timeoutMs);
      const vec = e.status === 200 ? ((JSON.parse(e.text) as { data?: { embedding?: unknown }[] }).data?.[0]?.embedding ?? null) : null;
      const ok = Array.isArray(vec) && vec.length > 0 && vec.every((x) => typeof x === 'number' && Number.isFinite(x));
      return { name: 'probe', ok, line: ok ? `probe: embedding of ${vec.length} dimensions` : `probe: embeddings answered HTTP ${e.status} without a usable vector` };
    }
    if (r.status !== 200) return { name: 'probe', ok: false, line: `probe: HTTP ${r.status} ${r.text.slice(0, 120)}` };
    const text = (JSON.parse(r.text) as { choices?: { text?: string }[] }).choices?.[0]?.text ?? '';
    if (looksLikeGibberish(text)) return { name: 'probe', ok: false, line: `probe: answered gibberish ${JSON.stringify(text.slice(0, 60))} (weights not valid)` };
    return { name: 'probe', ok: true, line: `probe: answered ${JSON.stringify(text.slice(0, 60))}` };
  } catch (err) {
    return { name: 'probe', ok: false, line: `probe: ${toAppError(err).message}` };
  }
}
