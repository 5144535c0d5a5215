import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { DEMO_HOSTS, startDemoFleet, type DemoFleet, type HostProfile, type LlamaServiceProfile } from '../../../src-main/demo/index.js';
import { AMD_SYSFS_COMMAND, llamaHealthFromResponse, parseAmdSysfs, parseLlamaProps, parsePrometheusText, readLlamaServerMetrics } from '../../../src-main/core/telemetry/index.js';
import { fixtureJson } from '../../fixtures/llama-server/fixtures.js';
import { connectSsh, exec, forward, http } from './demo-client.js';

// llama-server's life on a fake clock (timeScale 1, so the profile's real
// seconds): strix restarts in 1.5 s down + 14 s loading; `sleepy` is strix
// with --sleep-idle-seconds 300 and a 6 s wake.

const STRIX = DEMO_HOSTS.find((h) => h.label === 'strix')!;
const SLEEPY: HostProfile = {
  ...STRIX,
  label: 'sleepy',
  hostname: 'sleepy',
  services: [{ ...(STRIX.services[0] as LlamaServiceProfile), sleepIdleSeconds: 300 }],
};
const RESTART = 'sudo systemctl restart llama-server.service';

let dir: string;
let clock: FakeClock;
let fleet: DemoFleet;
let strix: Client;
let sleepy: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-llama-life-'));
  clock = new FakeClock(Date.now());
  fleet = await startDemoFleet({ dir, clock, decodeSpeedFactor: 10, profiles: [STRIX, SLEEPY] });
  strix = await connectSsh(fleet, fleet.host('strix'));
  sleepy = await connectSsh(fleet, fleet.host('sleepy'));
});

afterAll(async () => {
  strix?.end();
  sleepy?.end();
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Moves the fake clock in steps, letting real I/O run between them, until `p` settles. */
async function drive<T>(p: Promise<T>, stepMs = 50, maxSteps = 4000): Promise<T> {
  let done = false;
  const settled = p.finally(() => (done = true));
  for (let i = 0; i < maxSteps && !done; i++) {
    clock.advance(stepMs);
    await new Promise((r) => setTimeout(r, 1));
  }
  return settled;
}

const tick = () => new Promise((r) => setTimeout(r, 20));
const listenerPid = async (client: Client): Promise<number | null> => {
  const m = /127\.0\.0\.1:8080 .*pid=(\d+)/.exec((await exec(client, 'ss -ltnpH')).stdout);
  return m ? Number(m[1]) : null;
};
const ask = (client: Client, content = 'Hello there.') =>
  http(client, 8080, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content }], max_tokens: 8 });

describe('llama-server restart', () => {
  it('is refused while down, 503 "Loading model" on every route but the model list while loading, then serves with fresh counters', async () => {
    const sim = fleet.host('strix').llamaServer('coder');
    const pid1 = await listenerPid(strix);
    expect(pid1).toBe(sim.state().pid);
    expect((await drive(ask(strix))).status).toBe(200);
    expect(readLlamaServerMetrics(parsePrometheusText((await http(strix, 8080, 'GET', '/metrics')).body).families).generationTokensTotal).toBe(8);

    const restarting = exec(strix, RESTART);
    await expect.poll(() => sim.state().process, { interval: 5 }).toBe('down');
    expect(await listenerPid(strix)).toBeNull();
    await expect(forward(strix, 8080)).rejects.toThrow(/Channel open failure/i);

    clock.advance(1500);
    expect(await restarting).toEqual({ stdout: '', stderr: '', code: 0 });
    const state = sim.state();
    expect(state.process).toBe('loading');
    expect(await listenerPid(strix)).toBe(state.pid);
    expect(state.pid).not.toBe(pid1);
    const health = await http(strix, 8080, 'GET', '/health');
    expect([health.status, JSON.parse(health.body)]).toEqual([503, fixtureJson('health-loading-503.json')]);
    expect(health.body).toBe('{"error":{"message":"Loading model","type":"unavailable_error","code":503}}');
    expect(llamaHealthFromResponse(health.status, health.body)).toBe('loading');
    for (const path of ['/slots', '/props', '/metrics']) expect((await http(strix, 8080, 'GET', path)).status, path).toBe(503);
    expect((await ask(strix)).status).toBe(503);
    const models = await http(strix, 8080, 'GET', '/v1/models');
    expect(models.status).toBe(200);
    expect(JSON.parse(models.body).data[0].meta).toBeNull();
    // GTT fills as the weights load.
    const gtt = async () => parseAmdSysfs((await exec(strix, AMD_SYSFS_COMMAND)).stdout).gpus[0]!.gttUsedMiB!;
    const early = await gtt();
    clock.advance(7000);
    expect(await gtt()).toBeGreaterThan(early + 5000);

    clock.advance(7000);
    await tick();
    expect(sim.state().process).toBe('up');
    expect((await http(strix, 8080, 'GET', '/health')).status).toBe(200);
    expect(JSON.parse((await http(strix, 8080, 'GET', '/v1/models')).body).data[0].meta).toMatchObject({ n_ctx: 131072 });
    expect(readLlamaServerMetrics(parsePrometheusText((await http(strix, 8080, 'GET', '/metrics')).body).families).generationTokensTotal).toBe(0);
  });

  it('ghostOnNextRestart: the old process keeps the port and answers, new ones fail to bind until it is killed', async () => {
    const sim = fleet.host('strix').llamaServer('coder');
    const before = await listenerPid(strix);
    sim.ghostOnNextRestart();
    expect(await exec(strix, RESTART)).toEqual({ stdout: '', stderr: '', code: 0 });
    expect(await listenerPid(strix)).toBe(before);
    expect(sim.state()).toMatchObject({ process: 'up', pid: before, ghost: true, lastFailedPid: expect.any(Number) });
    expect(sim.state().lastFailedPid).not.toBe(before);
    expect((await http(strix, 8080, 'GET', '/health')).status).toBe(200);
    expect((await drive(ask(strix))).status).toBe(200);

    // Still squatting: the next restart fails the same way.
    const failed = sim.state().lastFailedPid;
    expect((await exec(strix, RESTART)).code).toBe(0);
    expect(await listenerPid(strix)).toBe(before);
    expect(sim.state().lastFailedPid).not.toBe(failed);

    // The way out the console names: kill it, then restart.
    expect(await exec(strix, 'sudo kill 1')).toEqual({ stdout: '', stderr: 'bash: kill: (1) - No such process\n', code: 1 });
    expect(await exec(strix, `sudo kill ${before}`)).toEqual({ stdout: '', stderr: '', code: 0 });
    expect(sim.state()).toMatchObject({ process: 'down', pid: null, ghost: false });
    expect(await listenerPid(strix)).toBeNull();
    const restarted = new Promise<void>((resolve) => {
      const sub = sim.onDidChangeState.on(() => {
        void sub.dispose();
        resolve();
      });
    });
    const again = exec(strix, RESTART);
    await restarted; // the restart command reached the host
    clock.advance(1500);
    expect((await again).code).toBe(0);
    clock.advance(14_000);
    await tick();
    expect(sim.state()).toMatchObject({ process: 'up', ghost: false });
    const after = await listenerPid(strix);
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
  });
});

describe('llama-server --sleep-idle-seconds', () => {
  it('sleeps after the idle time, stays asleep for health/props/models/slots/metrics, wakes on a completion', async () => {
    const sim = fleet.host('sleepy').llamaServer('coder');
    const gtt = async () => parseAmdSysfs((await exec(sleepy, AMD_SYSFS_COMMAND)).stdout).gpus[0]!.gttUsedMiB!;
    const isSleeping = async () => parseLlamaProps((await http(sleepy, 8080, 'GET', '/props')).body)!.isSleeping;
    // A completion restarts the idle countdown when it finishes.
    expect((await drive(ask(sleepy), 10)).status).toBe(200);
    const awakeGtt = await gtt();
    expect(await isSleeping()).toBe(false);
    clock.advance(299_000);
    expect(await isSleeping()).toBe(false);
    clock.advance(2_000);
    expect(await isSleeping()).toBe(true);
    expect(sim.state().isSleeping).toBe(true);
    expect(await gtt()).toBeLessThan(1024);
    expect(awakeGtt).toBeGreaterThan(18_000);

    for (const path of ['/health', '/props', '/v1/models', '/slots', '/metrics']) {
      expect((await http(sleepy, 8080, 'GET', path)).status, path).toBe(200);
      clock.advance(10_000);
    }
    expect(await isSleeping()).toBe(true);

    const answer = ask(sleepy);
    await tick();
    clock.advance(3_000);
    await tick();
    expect(await isSleeping()).toBe(true); // still loading the model again
    expect((await drive(answer)).status).toBe(200);
    expect(await isSleeping()).toBe(false);
    expect(await gtt()).toBeGreaterThan(18_000);

    // Idle again: asleep again after another 300 s.
    clock.advance(301_000);
    expect(await isSleeping()).toBe(true);
  });
});
