import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../src-main/core/config/index.js';
import { SS_COMMAND, driverFor, lifecycleTargets, parseSsListeners } from '../../../src-main/core/lifecycle/index.js';
import { runLiveChecks } from '../../../src-main/core/report/index.js';
import { LiveCheckId } from '../../../src-main/core/report/live-checks.js';
import type { ExecResult } from '../../../src-main/core/ssh/index.js';
import {
  AMD_SYSFS_COMMAND,
  AmdGpuSource,
  GPU_DETECT_COMMAND,
  NvidiaSmiSource,
  WANTED_GPU_FIELDS,
  parseAmdSysfs,
  parseGpuDetect,
  type ExecRunner,
} from '../../../src-main/core/telemetry/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';

// The golden test of the console's SSH vocabulary against the demo fleet's
// (issue #28 item 3). The simulator owns its command strings (the shell loops
// it recognises, its nvidia-smi fields, its restart commands); every command
// the console sends to a host is taken here from core itself, or sent by
// core's own code (the GPU sources, the report's live checks, the lifecycle
// drivers' plans), and run on the demo hosts' command interpreter — the one
// their SSH exec runs. Each must get an answer of the shape the console reads.
// A console command changed on one side only (a new field, another loop, other
// quoting) fails here loudly, instead of the demo answering "command not
// found" and the fleet view going quiet.

let dir: string;
let fleet: DemoFleet;
let config: Config;
/** Every command the console's code sent, by host, with the exit code the demo answered. */
const sent: { host: string; command: string; code: number | null }[] = [];

/** The demo host's interpreter as the console's exec: an ExecRunner for the sources, an SSH exec for the live checks. */
function execOn(host: string): ExecRunner & ((command: string, options: unknown) => Promise<ExecResult>) {
  return async (command: string) => {
    const r = await fleet.host(host).run(command);
    sent.push({ host, command, code: r.code });
    return { exitCode: r.code, signal: null, stdout: r.stdout, stderr: r.stderr, truncated: false };
  };
}

const NVIDIA = ['l20-poc', 'tri-gpu'];
const AMD = ['strix'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-vocabulary-'));
  fleet = await startDemoFleet({ dir, timeScale: 1000 });
  config = ConfigSchema.parse(fleet.config);
}, 30_000);

afterAll(async () => {
  await fleet?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the console's commands on the demo hosts", () => {
  it('GPU detection (GPU_DETECT_COMMAND) finds nvidia-smi on the NVIDIA hosts and the amdgpu sysfs files on the AMD host', async () => {
    for (const host of [...NVIDIA, ...AMD]) {
      const r = await execOn(host)(GPU_DETECT_COMMAND, {});
      expect(r.exitCode, `${host}: ${r.stderr}`).toBe(0);
      expect(parseGpuDetect(r.stdout).tool, host).toBe(NVIDIA.includes(host) ? 'nvidia-smi' : 'amd-sysfs');
    }
  });

  it("nvidia-smi as the fleet's source runs it (field probe, query, compute apps): every wanted field known, every GPU read", async () => {
    for (const host of NVIDIA) {
      const source = new NvidiaSmiSource({ id: `${host}/gpu`, exec: execOn(host), clock: systemClock, appsEvery: 1 });
      const reading = await source.scrape();
      expect(reading.ok, JSON.stringify(reading)).toBe(true);
      if (!reading.ok) continue;
      const profile = config.hosts.find((h) => h.label === host)!;
      expect(reading.gpus).toHaveLength(profile.gpu!.count);
      expect(reading.unreadable).toBe(0);
      // The probe kept every field the console asks for: the demo's --help-query-gpu lists them all.
      expect(source.queryFields).toEqual(WANTED_GPU_FIELDS);
      const again = await source.scrape();
      expect(again.ok).toBe(true);
    }
  });

  it('the amdgpu sysfs read (AMD_SYSFS_COMMAND), as the fleet\'s source and as a plain command, reads every card', async () => {
    for (const host of AMD) {
      const direct = await execOn(host)(AMD_SYSFS_COMMAND, {});
      expect(direct.exitCode).toBe(0);
      const parsed = parseAmdSysfs(direct.stdout);
      expect(parsed?.errors).toBe(0);
      expect(parsed?.gpus).toHaveLength(config.hosts.find((h) => h.label === host)!.gpu!.count);
      expect(parsed?.gpus[0]).toMatchObject({ memoryUsedMiB: expect.any(Number), powerW: expect.any(Number), temperatureC: expect.any(Number) });
      const reading = await new AmdGpuSource({ id: `${host}/gpu`, exec: execOn(host), clock: systemClock, tool: 'amd-sysfs' }).scrape();
      expect(reading.ok, JSON.stringify(reading)).toBe(true);
    }
  });

  it("the report's live checks (nvidia-smi or sysfs, ss, sshd -T) pass on every host from the commands' answers alone", async () => {
    for (const host of config.hosts) {
      const noTunnel = () => {
        throw new Error('no tunnel in this test');
      };
      // A variable, not a literal: the checks' HTTP side (tunnel client or URL) is not what this test pins.
      const deps = { exec: execOn(host.label), upstream: noTunnel, serviceUrl: noTunnel, apiKey: async () => null, hostKeyFingerprint: 'SHA256:test', connection: 'connected', clock: systemClock };
      const { security } = await runLiveChecks(host, deps);
      const verdict = (id: string) => security.checks.find((c) => c.id === id);
      expect(verdict(LiveCheckId.GPU_VISIBLE), host.label).toMatchObject({ verdict: 'pass' });
      expect(verdict(LiveCheckId.PASSWORD_AUTH), host.label).toMatchObject({ verdict: 'pass' });
      expect(verdict(LiveCheckId.ROOT_LOGIN), host.label).toMatchObject({ verdict: 'pass' });
      for (const s of host.services) expect(verdict(LiveCheckId.portLoopback(s.id)), `${host.label}/${s.id}`).toMatchObject({ verdict: 'pass' });
    }
  });

  it("the lifecycle's ghost check (SS_COMMAND) sees each service's port held by a process", async () => {
    for (const host of config.hosts) {
      const r = await execOn(host.label)(SS_COMMAND, {});
      expect(r.exitCode).toBe(0);
      for (const s of host.services) {
        const listing = parseSsListeners(r.stdout, s.remotePort);
        expect(listing.listening, `${host.label}/${s.id}`).toBe(true);
        expect(listing.holders.length, `${host.label}/${s.id}`).toBeGreaterThan(0);
      }
    }
  });

  it("every restart the lifecycle plans for the demo's config runs on its host and restarts that service", async () => {
    const targets = lifecycleTargets(config).filter((t) => driverFor(t).supports('restart'));
    expect(targets.map((t) => t.upstream).sort()).toEqual(config.hosts.flatMap((h) => h.services.map((s) => `${h.label}/${s.id}`)).sort());
    for (const t of targets) {
      const host = fleet.host(t.label);
      const pidsOf = () => (t.kind === 'vllm' ? host.simulator(t.serviceId).state().pids : [host.llamaServer(t.serviceId).state().pid]);
      const before = pidsOf();
      const steps = driverFor(t).plan('restart', { sleepLevel: 0 }).filter((s) => s.kind === 'ssh');
      expect(steps.length, t.upstream).toBeGreaterThan(0);
      for (const step of steps) {
        const r = await execOn(t.label)(step.command, {});
        expect(r.exitCode, `${t.upstream}: ${step.command} → ${r.stderr}`).toBe(0);
      }
      expect(pidsOf(), t.upstream).not.toEqual(before);
    }
  }, 30_000);

  it('and nothing the console sent was answered "command not found" or a shell syntax error', () => {
    expect(sent.length).toBeGreaterThan(10);
    // nvidia-smi on the AMD host is the live checks' own probe for "no NVIDIA here" (then sysfs); plain `sshd -T` fails for a non-root user, as on a real host.
    const expectedFailures = (s: (typeof sent)[number]) => (AMD.includes(s.host) && s.command.startsWith('nvidia-smi ') && s.code === 127) || (s.command === 'sshd -T' && s.code === 1);
    expect(sent.filter((s) => s.code !== 0 && !expectedFailures(s))).toEqual([]);
  });
});
