import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, silentLogger } from '../../../src-main/core/base/index.js';
import { matchGpuProcesses } from '../../../src-main/core/fleet/gpu-process-match.js';
import { GpuFaultsTracker } from '../../../src-main/core/fleet/gpu-faults.js';
import { healthCommand } from '../../../src-main/core/fleet/host-health-command.js';
import { parseHealthOutput } from '../../../src-main/core/fleet/host-health-parse.js';
import { HostHealthMonitor, healthSettingsOf, type HostReboot } from '../../../src-main/core/fleet/host-health.js';
import { freePort } from '../../helpers/ssh-tools.js';
import { until } from '../../helpers/until.js';
import { HAVE_SSH_PARTS, loopbackWorld, TRANSPORTS, type LoopbackWorld } from '../logs/sessions.js';

// The real health command over a real sshd on loopback (both transports),
// against this machine's own df, /proc, ss and ps: every figure read and
// plausible, the boot id this machine's and stable, and a real listener's
// process matched to a "service" on its port while an unrelated process is
// named as holding memory for no service.

let world: LoopbackWorld;
let server: ChildProcess;
let sleeper: ChildProcess;
let port: number;

beforeAll(async () => {
  if (!HAVE_SSH_PARTS) return;
  world = await loopbackWorld();
  port = await freePort();
  // A stand-in model server: a process listening on 127.0.0.1:<port>.
  server = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${port}, '127.0.0.1', () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
  sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
}, 30_000);

afterAll(async () => {
  server?.kill();
  sleeper?.kill();
  await world?.dispose();
});

describe.skipIf(!HAVE_SSH_PARTS)('host health on a real sshd, this machine as the host', () => {
  for (const transport of TRANSPORTS) {
    it(`${transport}: two rounds read every figure, plausibly, with one boot id`, async () => {
      const session = world.session(transport);
      await session.connect();
      const reboots: HostReboot[] = [];
      const monitor = new HostHealthMonitor('local', healthSettingsOf({ modelCache: ['~', '/tmp'], cacheSizeTimeoutS: 30 }, undefined), (c, o) => session.exec(c, o), systemClock, silentLogger, (r) => reboots.push(r));
      await monitor.run(null);
      const first = monitor.state();
      expect(first.stale, JSON.stringify(first.stale)).toBeNull();
      const f = first.figures!;
      expect(f.bootId).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      expect(f.uptimeS!).toBeGreaterThan(0);
      expect(f.cpuCount).toBe(Number(execFileSync('nproc', { encoding: 'utf8' }).trim()));
      expect(f.load1).not.toBeNull();
      expect(f.memTotalBytes!).toBeGreaterThan(f.memAvailableBytes!);
      expect(f.memAvailableBytes!).toBeGreaterThan(0);
      expect(f.swapTotalBytes).not.toBeNull();
      expect(f.swapFreeBytes!).toBeLessThanOrEqual(f.swapTotalBytes!);
      expect(f.disks.map((d) => d.kind)).toEqual(['root', 'cache', 'cache']);
      for (const d of f.disks) {
        expect(d.error, d.path).toBeNull();
        expect(d.totalBytes!, d.path).toBeGreaterThan(d.freeBytes!);
        expect(d.freeBytes!, d.path).toBeGreaterThan(0);
        expect(d.usedBytes!, d.path).toBeGreaterThan(0);
      }
      // ~ became the SSH user's home on the host, by the host's shell (the test sshd gives sessions a home of their own).
      const home = join(world.sshd.dir, 'home');
      expect(f.disks[1]!.path).toBe(home);
      expect(first.cacheSizes.map((c) => c.path)).toEqual([home, '/tmp']);
      expect(first.cacheSizes.every((c) => c.error !== null || (c.bytes ?? 0) > 0)).toBe(true);
      const parsed = monitor.parsed!;
      expect(parsed.listeners!.some((l) => l.port === world.sshd.port)).toBe(true);
      expect(parsed.processes!.some((p) => p.pid === server.pid)).toBe(true);

      const t = systemClock.now();
      await until(() => systemClock.now() - t > 5, { timeoutMs: 1_000 });
      await monitor.run(null);
      const second = monitor.state();
      expect(second.stale).toBeNull();
      expect(second.figures!.bootId).toBe(f.bootId);
      expect(second.atMs!).toBeGreaterThan(first.atMs!);
      expect(reboots).toEqual([]);
      await session.dispose();
    }, 30_000);
  }

  it("matches a real listener's process to the service on its port; an unrelated process holding memory is named", async () => {
    const session = world.session('builtin');
    await session.connect();
    const monitor = new HostHealthMonitor('local', healthSettingsOf({ modelCache: ['/tmp'] }, undefined), (c, o) => session.exec(c, o), systemClock, silentLogger, () => undefined);
    await monitor.run('nvidia');
    const h = monitor.parsed!;
    const result = matchGpuProcesses({
      gpus: [{ index: 0, processes: [{ pid: server.pid!, name: 'node', usedMemoryMiB: 2048 }, { pid: sleeper.pid!, name: 'sleep', usedMemoryMiB: 1024 }] }],
      processes: h.processes,
      listeners: h.listeners,
      services: [{ id: 'svc', remoteHost: '127.0.0.1', remotePort: port, health: 'ok' }],
      sshUser: 'root',
    });
    expect(result.processes.find((p) => p.pid === server.pid)).toMatchObject({ serviceId: 'svc', user: 'root' });
    expect(result.flags).toEqual([
      { code: 'FLEET_GPU_PROCESS_UNKNOWN', message: `PID ${sleeper.pid} sleep holds 1.0 GiB on GPU0 — not a configured service`, pid: sleeper.pid, serviceId: null, gpuIndex: 0, command: `kill ${sleeper.pid}` },
    ]);
    await session.dispose();
  }, 30_000);

  it('the kernel log as the SSH user may read it: the source this machine allows, its Xid lines; nvidia-smi missing is a coded issue, the rest read', async () => {
    const session = world.session('builtin');
    await session.connect();
    const monitor = new HostHealthMonitor('local', healthSettingsOf({ modelCache: ['/tmp'] }, undefined), (c, o) => session.exec(c, o), systemClock, silentLogger, () => undefined);
    await monitor.run('nvidia');
    const state = monitor.state();
    expect(state.stale).toBeNull();
    const faults = state.faults!;
    // What this machine's own tools say for root (the test sshd's user).
    const journal = spawnSync('journalctl', ['-k', '-b', '-q', '-n', '1', '--no-pager'], { encoding: 'utf8' });
    const dmesg = spawnSync('dmesg', ['--time-format', 'iso'], { encoding: 'utf8' });
    const expected = journal.status === 0 && journal.stdout.trim() !== '' ? 'journalctl' : dmesg.status === 0 ? 'dmesg' : null;
    expect(faults.kernelLog!.source).toBe(expected);
    expect(faults.kernelLog!.why === null).toBe(expected !== null);
    const xidLines = (expected === 'dmesg' ? dmesg.stdout : '').split('\n').filter((l) => l.includes('NVRM: Xid')).length;
    expect(faults.kernelLog!.xids).toHaveLength(Math.min(32, xidLines));
    if (spawnSync('sh', ['-c', 'command -v nvidia-smi']).status !== 0) expect(faults.issues[0]).toMatch(/^FLEET_FAULTS_QUERY_FAILED: nvidia-smi fault query exited 127/);
    expect(state.figures!.memTotalBytes).toBeGreaterThan(0);
    await session.dispose();
  }, 30_000);
});

// The real journalctl and dmesg as a user outside systemd-journal/adm on a kernel with dmesg_restrict=1
// (this machine's setting; Ubuntu's default): the coded why names the user, the group and dmesg's own message.
const canDropPrivileges = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0 && readFileSync('/proc/sys/kernel/dmesg_restrict', 'utf8').trim() === '1';
describe.skipIf(!canDropPrivileges)('the kernel log for an unprivileged user, real tools', () => {
  it('neither is permitted: no source, why says what would allow it', () => {
    const cmd = healthCommand({ mode: 'fast', gpuVendor: null, cacheSizeTimeoutS: 5, modelCache: ['/tmp'], dockerRoot: null, kernelLog: 'auto', kernelLogSinceS: null });
    const out = execFileSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'sh', '-c', cmd], { encoding: 'utf8', cwd: '/' });
    const f = new GpuFaultsTracker().apply(parseHealthOutput(out)!.faults, null, 1);
    expect(f.kernelLog).toMatchObject({ source: null, xids: [] });
    expect(f.kernelLog!.why).toContain('journalctl -k shows no kernel messages to nobody (groups: nogroup): add the SSH user to the systemd-journal (or adm) group: sudo usermod -aG systemd-journal nobody');
    expect(f.kernelLog!.why).toContain('dmesg: read kernel buffer failed: Operation not permitted (kernel.dmesg_restrict=1');
    expect(f.issues).toEqual([expect.stringMatching(/^FLEET_KERNEL_LOG_DENIED: journalctl -k shows no kernel messages to nobody/)]);
  });
});
