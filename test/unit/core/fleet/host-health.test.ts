import { describe, expect, it } from 'vitest';
import { AppError, FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { DEFAULT_DISK_THRESHOLDS, diskThresholdsOf } from '../../../../src-main/core/config/index.js';
import { healthViewOf } from '../../../../src-main/core/fleet/health-view.js';
import { HostHealthMonitor, healthSettingsOf, learnedModelCaches, type HostReboot } from '../../../../src-main/core/fleet/host-health.js';
import { SshErrorCode } from '../../../../src-main/core/ssh/index.js';
import type { ExecRunner } from '../../../../src-main/core/telemetry/index.js';

const BOOT_A = '7d1c467f-343e-4a6c-bc22-2432f86f0b1e';
const BOOT_B = '0f4b3c2a-1111-4a6c-bc22-2432f86f0b1e';

function answer(bootId: string, uptimeS: number, full: boolean): string {
  return [
    '@v 1',
    `@boot_id ${bootId}`,
    `@uptime ${uptimeS}.50 100.00`,
    '@loadavg 1.25 1.00 0.75 2/300 999',
    '@nproc 16',
    '@meminfo',
    'MemTotal:       65536000 kB',
    'MemAvailable:   32768000 kB',
    'SwapTotal:       8388604 kB',
    'SwapFree:        8388604 kB',
    ...(full ? ['@docker_root /var/lib/docker'] : []),
    '@df root /',
    'Filesystem         1-blocks        Used   Available Capacity Mounted on',
    '/dev/nvme0n1p2 1967317819392 1959266504704 8051314688     100% /',
    ...(full ? ['@du 0 29675483136 /home/ops/.cache/huggingface'] : []),
    '@end',
    '',
  ].join('\n');
}

function world(settings = healthSettingsOf(undefined, undefined)) {
  const clock = new FakeClock(1_700_000_000_000);
  const commands: string[] = [];
  let reply: (command: string) => Promise<string> = async (c) => answer(BOOT_A, 1000, c.includes(' full '));
  const exec: ExecRunner = async (command) => {
    commands.push(command);
    return { exitCode: 0, signal: null, stdout: await reply(command), stderr: '', truncated: false };
  };
  const reboots: HostReboot[] = [];
  const monitor = new HostHealthMonitor('l20-poc', settings, exec, clock, silentLogger, (r) => reboots.push(r));
  return { clock, commands, reboots, monitor, setReply: (f: typeof reply) => (reply = f) };
}

describe('HostHealthMonitor', () => {
  it('defaults: every 15 s, du of ~/.cache/huggingface every 10 min; fleet settings under the host\'s', () => {
    expect(healthSettingsOf(undefined, undefined)).toEqual({ intervalMs: 15_000, cacheSizeIntervalMs: 600_000, cacheSizeTimeoutS: 60, modelCache: ['~/.cache/huggingface'], modelCacheConfigured: false, kernelLog: 'auto', disk: DEFAULT_DISK_THRESHOLDS });
    expect(healthSettingsOf({ modelCache: ['/srv/hf'] }, { intervalMs: 30_000, modelCache: ['/data'] })).toMatchObject({ intervalMs: 30_000, modelCache: ['/srv/hf'] });
    expect(healthSettingsOf({ kernelLog: 'dmesg' }, { kernelLog: 'off' }).kernelLog).toBe('dmesg');
  });

  it('runs a full round first, then fast rounds on its interval, a full one again after cacheSizeIntervalMs', async () => {
    const w = world();
    expect(w.monitor.due()).toBe(true);
    await w.monitor.run('nvidia');
    expect(w.monitor.due()).toBe(false);
    w.clock.advance(15_000);
    expect(w.monitor.due()).toBe(true);
    await w.monitor.run('nvidia');
    w.clock.advance(600_000);
    await w.monitor.run('nvidia');
    expect(w.commands.map((c) => / gpu-console-health (\w+) /.exec(c)?.[1])).toEqual(['full', 'fast', 'full']);
    // Docker's root, learned in a full round, is watched by df in the fast ones.
    expect(w.commands[1]).toContain(' docker /var/lib/docker');
    const s = w.monitor.state();
    expect(s.figures).toMatchObject({ cpuCount: 16, load1: 1.25, memAvailableBytes: 32768000 * 1024, swapTotalBytes: 8388604 * 1024 });
    expect(s.figures!.disks[0]).toMatchObject({ kind: 'root', freeBytes: 8051314688 });
    expect(s.cacheSizes).toEqual([{ path: '/home/ops/.cache/huggingface', bytes: 29675483136, error: null }]);
    expect(s.docker).toEqual({ rootDir: '/var/lib/docker', why: null });
    expect(s.stale).toBeNull();
  });

  it('a new boot id is a reboot, reported once; the first reading is only the baseline', async () => {
    const w = world();
    await w.monitor.run('nvidia');
    w.clock.advance(15_000);
    await w.monitor.run('nvidia');
    expect(w.reboots).toEqual([]);
    w.setReply(async (c) => answer(BOOT_B, 42, c.includes(' full ')));
    w.clock.advance(15_000);
    await w.monitor.run('nvidia');
    w.clock.advance(15_000);
    await w.monitor.run('nvidia');
    expect(w.reboots).toEqual([{ label: 'l20-poc', previousBootId: BOOT_A, bootId: BOOT_B, uptimeS: 42.5, atMs: 1_700_000_030_000 }]);
    expect(w.monitor.state().rebootedAtMs).toBe(1_700_000_030_000);
    // After a reboot the caches and Docker's root are read again at once.
    expect(w.commands.map((c) => / gpu-console-health (\w+) /.exec(c)?.[1])).toEqual(['full', 'fast', 'fast', 'full']);
  });

  it('a failed round keeps the last figures with the coded cause; a reply that is not the command\'s is FLEET_HEALTH_EXEC_FAILED', async () => {
    const w = world();
    await w.monitor.run('nvidia');
    w.setReply(async () => {
      throw new AppError(SshErrorCode.EXEC_TIMEOUT, 'exec timed out after 10000 ms');
    });
    w.clock.advance(15_000);
    await w.monitor.run('nvidia');
    expect(w.monitor.state()).toMatchObject({ stale: { code: 'SSH_EXEC_TIMEOUT' }, figures: { cpuCount: 16 } });
    w.setReply(async () => 'sh: 1: Syntax error\n');
    w.clock.advance(15_000);
    await w.monitor.run('nvidia');
    expect(w.monitor.state().stale).toMatchObject({ code: 'FLEET_HEALTH_EXEC_FAILED' });
  });

  it('intervalMs 0 turns it off', () => {
    const w = world({ ...healthSettingsOf(undefined, undefined), intervalMs: 0 });
    expect(w.monitor.due()).toBe(false);
  });
});

describe('a disk\'s margin in the view', () => {
  it('is judged against the host\'s own alerts.disk over the fleet\'s over 10 GiB or 10 %: one verdict for card, status, alert and report', async () => {
    // 8.05 GB free of 1.97 TB: 0.41 % free, low by the defaults.
    const byDefault = world();
    await byDefault.monitor.run('nvidia');
    const v = healthViewOf(byDefault.monitor.state());
    expect(v.disks.find((d) => d.kind === 'root')).toMatchObject({ margin: 'low' });
    expect(v.diskThreshold).toEqual({ freeGiB: 10, freePct: 10 });
    // The host's own 5 GiB wins over the fleet's 50 GiB; its 0.3 % over the fleet's 20 %.
    const t = diskThresholdsOf({ freeGiB: 5, freePct: 0.3 }, { freeGiB: 50, freePct: 20 });
    const relaxed = world(healthSettingsOf(undefined, undefined, t));
    await relaxed.monitor.run('nvidia');
    const r = healthViewOf(relaxed.monitor.state());
    expect(r.disks.find((d) => d.kind === 'root')).toMatchObject({ margin: 'ok' });
    expect(r.diskThreshold).toEqual({ freeGiB: 5, freePct: 0.3 });
    // Fleet-wide only: the fleet's 50 GiB applies.
    const strict = world(healthSettingsOf(undefined, undefined, diskThresholdsOf(undefined, { freeGiB: 50 })));
    await strict.monitor.run('nvidia');
    expect(healthViewOf(strict.monitor.state()).diskThreshold).toEqual({ freeGiB: 50, freePct: 10 });
  });
});

describe('model caches learned from what the servers say they loaded', () => {
  it('the folder of each model file or folder, the whole HF / llama.cpp cache a model lies in, the default while a server names none; server text that is no absolute path is not used', () => {
    expect(learnedModelCaches(['/srv/models/Qwen3-Coder-30B-A3B-Q4_K_M.gguf', '/srv/models/Qwen3-32B-Q8_0.gguf'])).toEqual(['/srv/models']);
    expect(learnedModelCaches(['/data/hf/models/BAAI/bge-m3/', '/home/ops/.cache/huggingface/hub/models--Qwen--Qwen3/snapshots/abc/model.safetensors'])).toEqual(['/data/hf/models/BAAI', '/home/ops/.cache/huggingface']);
    expect(learnedModelCaches(['/home/ops/.cache/llama.cpp/unsloth_Qwen3-GGUF_q4.gguf', null])).toEqual(['/home/ops/.cache/llama.cpp', '~/.cache/huggingface']);
    expect(learnedModelCaches(['Qwen/Qwen3.6-27B-FP8', 'models/x.gguf', '/srv/a\n/evil', `/${'x'.repeat(1100)}/m.gguf`])).toEqual(['~/.cache/huggingface']);
    expect(learnedModelCaches([])).toEqual(['~/.cache/huggingface']);
  });

  it('watches the learned caches beside the default until df finds them (measured at once when they change), drops one the host does not have (a path inside a container), and a configured list always wins', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const commands: string[] = [];
    let paths: (string | null)[] = [null];
    const exec: ExecRunner = async (command) => {
      commands.push(command);
      // df for each cache the command names: /models is not on this host, the others are.
      const caches = [...command.slice(command.indexOf(' gpu-console-health ')).matchAll(/ cache ('[^']*'|\S+)/g)].map((m) => m[1]!.replace(/^'|'$/g, ''));
      const dfs = caches.flatMap((c) =>
        c === '/models'
          ? [`@df cache ${c}`, `df: ${c}: No such file or directory`]
          : [`@df cache ${c}`, 'Filesystem         1-blocks        Used   Available Capacity Mounted on', '/dev/nvme0n1p2 1967317819392 1959266504704 8051314688     100% /'],
      );
      const stdout = answer(BOOT_A, 1000, command.includes(' full ')).replace('@end', [...dfs, '@end'].join('\n'));
      return { exitCode: 0, signal: null, stdout, stderr: '', truncated: false };
    };
    const cachesOf = (c: string) => [...c.slice(c.indexOf(' gpu-console-health ')).matchAll(/ cache ('[^']*'|\S+)/g)].map((m) => m[1]!.replace(/^'|'$/g, ''));
    const monitor = new HostHealthMonitor('tri-gpu', healthSettingsOf(undefined, undefined), exec, clock, silentLogger, () => undefined, () => paths);
    await monitor.run('nvidia');
    expect(cachesOf(commands[0]!)).toEqual(['~/.cache/huggingface']);
    // The servers answer: a GGUF under /srv/models, and vLLM in Docker naming its container path.
    paths = ['/srv/models/q.gguf', '/models/Qwen3.6-27B-FP8'];
    clock.advance(15_000);
    await monitor.run('nvidia');
    expect(commands[1]).toMatch(/gpu-console-health full /);
    // Not yet found on the host: the default stays beside them, so a cache row never blinks out.
    expect(cachesOf(commands[1]!)).toEqual(['/srv/models', '/models', '~/.cache/huggingface']);
    // The container's path is no disk of the host's: not in the disks, said once in the issues.
    expect(monitor.state().figures!.disks.map((d) => d.path)).toEqual(['/', '/srv/models', '~/.cache/huggingface']);
    expect(monitor.state().issues.join('\n')).toMatch(/FLEET_HEALTH_PATH_MISSING: the servers name model paths this host does not have \(paths inside a container\?\): \/models;/);
    clock.advance(1_000); // the next poll, not a full interval later
    expect(monitor.due()).toBe(true);
    await monitor.run('nvidia');
    expect(commands[2]).toMatch(/gpu-console-health full /); // the caches changed again
    expect(cachesOf(commands[2]!)).toEqual(['/srv/models']);
    clock.advance(15_000);
    await monitor.run('nvidia');
    expect(commands[3]).toMatch(/gpu-console-health fast /);

    const configured = new HostHealthMonitor('tri-gpu', healthSettingsOf({ modelCache: ['/data/hf'] }, undefined), exec, clock, silentLogger, () => undefined, () => paths);
    await configured.run('nvidia');
    expect(cachesOf(commands[4]!)).toEqual(['/data/hf']);
  });
});

describe('HostHealthMonitor while the session is down', () => {
  it('keeps the last figures marked with the session\'s cause; the next good round clears it', async () => {
    const w = world();
    w.monitor.markStale({ code: 'SSH_NOT_CONNECTED', message: 'host is reconnecting' });
    expect(w.monitor.state().stale).toBeNull(); // nothing read yet: nothing to call stale
    await w.monitor.run('nvidia');
    w.monitor.markStale({ code: 'SSH_DISCONNECTED', message: 'link lost' });
    expect(w.monitor.state()).toMatchObject({ stale: { code: 'SSH_DISCONNECTED' }, figures: { cpuCount: 16 } });
    w.clock.advance(15_000);
    await w.monitor.run('nvidia');
    expect(w.monitor.state().stale).toBeNull();
  });
});
