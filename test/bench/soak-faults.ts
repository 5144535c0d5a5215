// The soak's faults, one at a time in rotation: link cut, model server killed
// and restarted, sshd restarted, a host-key change (refused, then the real key
// restored), the console's own SIGTERM and restart, a full data disk. Each
// holds for `holdMs`, is undone, and is done when a request for the netns
// model is served through the proxy again (the recovery clients see).
import { execFileSync } from 'node:child_process';
import { rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { bridgeCall } from '../helpers/console-process.js';
import { oneRequest, type TrafficOptions } from './soak-traffic.js';
import { NETNS_LABEL, NETNS_MODEL, type SoakWorld } from './soak-world.js';

export const FAULTS = ['link-cut', 'server-kill', 'sshd-restart', 'hostkey-change', 'console-restart', 'full-disk'] as const;
export type FaultName = (typeof FAULTS)[number];

export interface FaultRecord {
  name: FaultName;
  startMs: number;
  /** When a request for the netns model was served again (null: not within the deadline). */
  recoveredMs: number | null;
  notes: string[];
  /** Shutdown figures of a console-restart. */
  shutdown?: { drainMs: number; code: number | string; lines: string[]; leftBehind: string[]; readyMs: number };
}

export interface FaultContext {
  world: SoakWorld;
  configFile: string;
  holdMs: number;
  traffic: TrafficOptions;
  /** The soak's own console-down windows (the console-restart fault opens and closes one). */
  downWindows: Array<[number, number]>;
  onConsoleRestarted: () => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until a request for the netns model is served (the recovery a client sees); its time, or null past the deadline. */
async function recovered(ctx: FaultContext, deadlineMs = 90_000): Promise<number | null> {
  const end = performance.now() + deadlineMs;
  while (performance.now() < end) {
    const x = await oneRequest(ctx.traffic, 'interactive', NETNS_MODEL);
    if (x.kind === 'served') return performance.now();
    await sleep(500);
  }
  return null;
}

interface HostLite {
  label: string;
  state: string;
  lastError: { code: string } | null;
}

async function netnsHost(ctx: FaultContext): Promise<HostLite | null> {
  const ui = ctx.world.console?.ui;
  if (!ui) return null;
  const r = await bridgeCall<{ hosts: HostLite[] }>(ui, 'fleet.snapshot', {}).catch(() => null);
  return r?.ok ? (r.data.hosts.find((h) => h.label === NETNS_LABEL) ?? null) : null;
}

async function hostkeyChange(ctx: FaultContext, rec: FaultRecord): Promise<void> {
  const { world } = ctx;
  await world.restartSshd(true);
  world.cliRun(['hosts', 'reconnect', NETNS_LABEL]);
  const until = performance.now() + ctx.holdMs;
  let seen: string | null = null;
  while (performance.now() < until) {
    const h = await netnsHost(ctx);
    if (h?.lastError?.code === 'SSH_HOST_KEY_CHANGED') seen ??= `refused as SSH_HOST_KEY_CHANGED after ${((performance.now() - rec.startMs) / 1000).toFixed(1)} s (state ${h.state})`;
    await sleep(500);
  }
  rec.notes.push(seen ?? 'NOT seen as SSH_HOST_KEY_CHANGED while the new key was presented');
  await world.restartSshd(false);
  const r = world.cliRun(['hosts', 'reconnect', NETNS_LABEL]);
  if (r.code !== 0) rec.notes.push(`hosts reconnect after the key was restored: exit ${r.code}: ${r.out.trim().slice(0, 200)}`);
}

async function consoleRestart(ctx: FaultContext, rec: FaultRecord): Promise<void> {
  const { world } = ctx;
  const window: [number, number] = [performance.now(), Infinity];
  ctx.downWindows.push(window);
  const stop = await world.stopConsole();
  await sleep(Math.min(ctx.holdMs, 5_000));
  const run = await world.startConsole(ctx.configFile);
  window[1] = performance.now();
  ctx.onConsoleRestarted();
  rec.shutdown = { ...stop, readyMs: run.readyMs };
  rec.notes.push(`SIGTERM → exit ${stop.code} in ${(stop.drainMs / 1000).toFixed(2)} s; ready again in ${(run.readyMs / 1000).toFixed(1)} s`);
  if (stop.leftBehind.length > 0) rec.notes.push(`LEFT BEHIND after exit: ${stop.leftBehind.join('; ')}`);
}

/** Fills the data folder's tmpfs to the last byte for `holdMs`, then frees it. */
async function fullDisk(ctx: FaultContext, rec: FaultRecord): Promise<void> {
  const { world } = ctx;
  if (!world.hasTmpfs) {
    rec.notes.push('skipped: the data folder is not on a tmpfs of its own (mount failed)');
    return;
  }
  const filler = join(world.dataDir, 'soak-filler.bin');
  const fs = statfsSync(world.dataDir);
  const free = fs.bavail * fs.bsize;
  try {
    execFileSync('fallocate', ['-l', String(free), filler], { stdio: 'pipe' });
  } catch {
    // fallocate refuses the last partial page on some kernels: dd writes until ENOSPC
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' });
    } catch {
      // ENOSPC: the disk is full, as wanted
    }
  }
  const left = statfsSync(world.dataDir);
  rec.notes.push(`filled ${(free / 1048576).toFixed(0)} MiB; ${left.bavail * left.bsize} bytes left`);
  await sleep(ctx.holdMs);
  const alive = world.console?.child.exitCode === null;
  rmSync(filler, { force: true });
  rec.notes.push(alive ? 'console kept running through it' : 'the CONSOLE EXITED while the disk was full');
}

export async function runFault(ctx: FaultContext, name: FaultName): Promise<FaultRecord> {
  const { world, holdMs } = ctx;
  const rec: FaultRecord = { name, startMs: performance.now(), recoveredMs: null, notes: [] };
  switch (name) {
    case 'link-cut':
      world.ns!.linkDown();
      await sleep(holdMs);
      world.ns!.linkUp();
      break;
    case 'server-kill':
      world.modelServer!.kill('SIGKILL');
      await sleep(holdMs);
      await world.startModelServer();
      break;
    case 'sshd-restart':
      await world.sshd!.kill();
      await sleep(holdMs);
      await world.restartSshd(false);
      break;
    case 'hostkey-change':
      await hostkeyChange(ctx, rec);
      break;
    case 'console-restart':
      await consoleRestart(ctx, rec);
      break;
    case 'full-disk':
      await fullDisk(ctx, rec);
      break;
  }
  rec.recoveredMs = await recovered(ctx);
  return rec;
}
