import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetSnapshot } from '../../src-preload/contract/index.js';
import { assertBuilt, bridgeCall, runCliProcess, startConsole } from '../helpers/console-process.js';

// `serve --demo-hosts N`: a demo fleet of N synthetic 8-GPU hosts, each read
// through a real SSH session like any host (the scale benchmarks run on it).

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'gc-demo-hosts-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('serve --demo-hosts', () => {
  beforeAll(() => assertBuilt());

  it('starts N hosts of 8 GPUs and 2 services, every one connected over SSH and read', async () => {
    const c = await startConsole(['--demo-hosts', '5', '--demo-traffic', 'off', '--data-dir', tmp()]);
    try {
      let snap: FleetSnapshot | null = null;
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const r = await bridgeCall<FleetSnapshot>(c.ui, 'fleet.snapshot', {});
        if (r.ok) {
          snap = r.data;
          if (snap.hosts.every((h) => h.state === 'connected' && h.gpus.length === 8 && h.services.every((s) => !s.stale && s.source))) break;
        }
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(snap?.hosts.map((h) => h.label)).toEqual(['demo-001', 'demo-002', 'demo-003', 'demo-004', 'demo-005']);
      for (const h of snap!.hosts) {
        expect(h.state, h.label).toBe('connected');
        expect(h.gpus, h.label).toHaveLength(8);
        expect(h.gpus.every((g) => g.memoryTotalMiB !== null && g.memoryTotalMiB > 80_000), h.label).toBe(true);
        expect(h.services.map((s) => s.kind).sort(), h.label).toEqual(['llama-server', 'vllm']);
        expect(h.services.every((s) => !s.stale && s.tunnel.state === 'up'), h.label).toBe(true);
      }
    } finally {
      await c.stop();
    }
  }, 60_000);

  it.each([
    [['--demo-hosts', '0'], '--demo-hosts must be a whole number from 1 to 128, got "0"'],
    [['--demo-hosts', '129'], '--demo-hosts must be a whole number from 1 to 128, got "129"'],
    [['--demo-hosts', '2.5'], '--demo-hosts must be a whole number from 1 to 128, got "2.5"'],
    [['--demo-hosts', 'lots'], '--demo-hosts must be a whole number from 1 to 128, got "lots"'],
    [['--demo-hosts', '4', '--config', '/nonexistent.yaml'], '--demo-hosts starts a demo fleet; it cannot be combined with --config'],
  ])('refuses %j with a usage error naming the flag, and starts nothing', async (args, message) => {
    const dataDir = tmp();
    const r = await runCliProcess(['serve', ...args, '--data-dir', dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).not.toContain('GPU Console ready');
  });
});
