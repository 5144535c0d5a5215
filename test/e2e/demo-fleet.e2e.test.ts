import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppInfo, FleetSnapshot } from '../../src-preload/contract/index.js';
import { CLI, assertBuilt, bridgeCall, runCliProcess, startConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';
import { until } from '../helpers/until.js';

// `gpu-console demo-fleet` (issue #28 item 3): the demo fleet as a process of
// its own writes a config file, and `serve --config` on that file reads its
// hosts as it reads real ones — SSH, tunnels, GPUs, services — with the
// simulated-fleet marker the file carries. Bad flags are usage errors naming
// the flag; a stop by signal is clean (its pid file gone, exit 0).

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'gc-demo-fleet-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Fleet {
  child: ChildProcess;
  ready: { config: string; hosts: string[]; pid: number };
  stderr: () => string;
}

/** Starts `demo-fleet --json …` and resolves on its ready line (an event, not a sleep). */
function startFleet(args: string[]): Promise<Fleet> {
  const child = spawn(process.execPath, [CLI, 'demo-fleet', '--json', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo-fleet printed no ready line in 30 s: ${out}${err}`)), 30_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('{"event":"ready"'));
      if (!line) return;
      clearTimeout(timer);
      resolve({ child, ready: JSON.parse(line) as Fleet['ready'], stderr: () => err });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`demo-fleet exited ${code} before it was ready: ${out}${err}`));
    });
  });
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe('gpu-console demo-fleet', () => {
  beforeAll(() => assertBuilt());

  it('writes a config that serve --config reads as a fleet: every host connected over SSH, its GPUs and services read', async () => {
    const work = tmp();
    const configFile = join(work, 'conf', 'demo.yaml');
    const fleet = await startFleet(['--write-config', configFile, '--data-dir', join(work, 'fleet'), '--time-scale', '100']);
    let console_: Awaited<ReturnType<typeof startConsole>> | null = null;
    try {
      expect(fleet.ready).toMatchObject({ config: configFile, hosts: ['l20-poc', 'tri-gpu', 'strix'] });
      // The config and the fleet's keys and known_hosts: 0600, in folders only this user may enter.
      const keys = join(work, 'fleet', 'demo-fleet');
      expect(mode(configFile)).toBe(0o600);
      expect(mode(dirname(configFile))).toBe(0o700);
      expect(mode(keys)).toBe(0o700);
      for (const f of readdirSync(keys)) expect(mode(join(keys, f)), f).toBe(0o600);

      console_ = await startConsole(['--config', configFile, '--data-dir', join(work, 'console')]);
      const ui = console_.ui;
      let snap: FleetSnapshot | null = null;
      const read = (s: FleetSnapshot) => s.hosts.length === 3 && s.hosts.every((h) => h.state === 'connected' && !h.gpuStale && h.gpus.length > 0 && h.services.every((v) => v.tunnel.state === 'up' && !v.stale && v.source));
      await until(
        async () => {
          const r = await bridgeCall<FleetSnapshot>(ui, 'fleet.snapshot', {});
          snap = r.ok ? r.data : null;
          return snap !== null && read(snap);
        },
        { timeoutMs: 40_000, intervalMs: 300, what: () => `every demo host read; saw ${JSON.stringify(snap?.hosts.map((h) => [h.label, h.state, h.gpus.length, h.services.map((s) => [s.id, s.tunnel.state, s.stale])]))}` },
      );
      expect(snap!.hosts.map((h) => h.label)).toEqual(['l20-poc', 'tri-gpu', 'strix']);
      expect(snap!.hosts.find((h) => h.label === 'tri-gpu')!.gpus).toHaveLength(3);
      // The console reads the file (a real config: reloads allowed) and says its hosts are simulated.
      const info = await bridgeCall<AppInfo>(ui, 'app.info', {});
      expect(info).toMatchObject({ ok: true, data: { demo: true, configFile } });
    } finally {
      await console_?.stop();
      fleet.child.kill('SIGTERM');
    }
    const code = await new Promise<number | null>((r) => (fleet.child.exitCode !== null ? r(fleet.child.exitCode) : fleet.child.once('exit', r)));
    expect(code, fleet.stderr()).toBe(0);
    expect(existsSync(join(work, 'fleet', 'demo-fleet', 'demo-fleet.pid'))).toBe(false);
  }, 120_000);

  it('refuses a second fleet on the same folder (it would rewrite the first one\'s known_hosts)', async () => {
    const work = tmp();
    const fleet = await startFleet(['--write-config', join(work, 'a.yaml'), '--data-dir', work, '--hosts', '1']);
    try {
      const r = await runCliProcess(['demo-fleet', '--write-config', join(work, 'b.yaml'), '--data-dir', work, '--hosts', '1']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`DEMO_FLEET_RUNNING: another demo fleet (pid ${fleet.ready.pid}) already uses`);
      expect(existsSync(join(work, 'b.yaml'))).toBe(false);
    } finally {
      fleet.child.kill('SIGINT');
      await new Promise((r) => fleet.child.once('exit', r));
    }
  }, 60_000);

  it.each([
    [['--hosts', '0', '--write-config', 'x.yaml'], '--hosts must be a whole number from 1 to 128, got "0"'],
    [['--hosts', '2.5', '--write-config', 'x.yaml'], '--hosts must be a whole number from 1 to 128, got "2.5"'],
    [['--hosts', '3'], '--write-config FILE is required'],
    [['--write-config', 'x.yaml', '--time-scale', 'fast'], '--time-scale must be a number from 1 to 10000, got "fast"'],
    [['--write-config', 'x.yaml', '--ssh-transport', 'telnet'], '--ssh-transport must be builtin, openssh or auto, got "telnet"'],
    [['--write-config', 'x.yaml', '--trafic'], "Unknown option '--trafic'"],
  ])('refuses %j with a usage error naming the flag, and starts nothing', async (args, message) => {
    const work = tmp();
    const r = await runCliProcess(['demo-fleet', ...args.map((a) => (a === 'x.yaml' ? join(work, a) : a)), '--data-dir', work]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).not.toContain('ready');
    expect(existsSync(join(work, 'x.yaml'))).toBe(false);
  });
});
