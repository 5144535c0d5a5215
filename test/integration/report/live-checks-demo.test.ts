import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostSecuritySchema, InventoryHostSchema, type FleetSnapshot } from '../../../src-preload/contract/index.js';
import { systemClock } from '../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { VLLM_VERSION } from '../../../src-main/demo/vllm-simulator.js';
import { SGLANG_VERSION, TEI_VERSION } from '../../../src-main/demo/engine-dialects.js';
import { FleetService } from '../../../src-main/core/fleet/index.js';
import { runLiveChecks, type LiveCheckResult } from '../../../src-main/core/report/live-checks.js';
import { waitForTick } from '../fleet/helpers/wait.js';
import { upstreamKey } from '../../../src-main/core/upstream/index.js';

// The live checks over the real path: FleetService's ssh2 sessions to the demo
// hosts (nvidia-smi, ss, sshd -T over exec) and its tunnels to the vLLM
// simulators. timeScale 1: a restarted service stays down for seconds, long
// enough to be seen down.

let dir: string;
let demo: DemoFleet;
let fleet: FleetService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'live-checks-demo-'));
  demo = await startDemoFleet({ dir, timeScale: 1 });
  fleet = new FleetService({ config: ConfigSchema.parse(demo.config), pollIntervalMs: 250 });
  fleet.start();
  await waitForTick(fleet, allUp);
});
afterAll(async () => {
  await fleet?.dispose();
  await demo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const allUp = (s: FleetSnapshot) =>
  s.hosts.length > 0 && s.hosts.every((h) => h.state === 'connected' && h.services.every((v) => v.tunnel.state === 'up'));

function check(label: string): Promise<LiveCheckResult> {
  const view = fleet.snapshot().hosts.find((h) => h.label === label)!;
  return runLiveChecks(fleet.hostConfig(label), {
    exec: (command, opts) => fleet.exec(label, command, opts),
    upstream: (serviceId) => fleet.upstream(upstreamKey(label, serviceId)),
    apiKey: async () => null,
    hostKeyFingerprint: view.hostKeyFingerprint,
    connection: view.state,
    clock: systemClock,
  });
}

const verdicts = (r: LiveCheckResult) => Object.fromEntries(r.security.checks.map((c) => [c.id, c.verdict]));
const evidence = (r: LiveCheckResult, id: string) => r.security.checks.find((c) => c.id === id)!.evidence;

describe('live checks on the demo fleet', () => {
  it('tri-gpu: every measurable check passes; auth is unverified (no key configured)', async () => {
    const r = await check('tri-gpu');
    expect(InventoryHostSchema.parse(r.inventory)).toEqual(r.inventory);
    expect(HostSecuritySchema.parse(r.security)).toEqual(r.security);
    const ids = demo.config.hosts.find((h) => h.label === 'tri-gpu')!.services.map((s) => s.id);
    expect(verdicts(r)).toEqual({
      'ssh.host-key': 'pass',
      'gpu.visible': 'pass',
      'sshd.password-auth': 'pass',
      'sshd.root-login': 'pass',
      ...Object.fromEntries(ids.flatMap((id) => [[`port.loopback.${id}`, 'pass'], [`api.health.${id}`, 'pass'], [`api.auth.${id}`, 'unverified']])),
    });
    expect(evidence(r, 'ssh.host-key')).toContain(demo.host('tri-gpu').hostKeyFingerprint);
    // ops is not root: plain sshd -T fails, sudo -n sshd -T answers.
    expect(evidence(r, 'sshd.password-auth')).toBe('sudo -n sshd -T: passwordauthentication no, kbdinteractiveauthentication no');
    expect(evidence(r, 'sshd.root-login')).toBe('sudo -n sshd -T: permitrootlogin without-password (root only with a key, never a password)');
    expect(evidence(r, `api.auth.${ids[0]}`)).toBe('no API key configured for this service');
    for (const s of demo.config.hosts.find((h) => h.label === 'tri-gpu')!.services) {
      expect(evidence(r, `port.loopback.${s.id}`)).toMatch(new RegExp(`^ss -ltnH: port ${s.remotePort} bound to 127\\.0\\.0\\.1 only: "LISTEN 0 2048 127\\.0\\.0\\.1:${s.remotePort} 0\\.0\\.0\\.0:\\*"$`));
    }

    expect(r.inventory).toMatchObject({ label: 'tri-gpu', connection: 'connected', liveError: null, hostKeyFingerprint: demo.host('tri-gpu').hostKeyFingerprint });
    expect(r.inventory.gpus).toHaveLength(3);
    expect(r.inventory.gpus.every((g) => g.name.includes('L40S') && g.memoryTotalMiB === 46068 && g.driverVersion === '570.133.20')).toBe(true);
    for (const s of r.inventory.services) {
      const sim = demo.host('tri-gpu').simulator(s.id);
      // Each kind's own version endpoint: vLLM /version, SGLang /get_server_info, TEI /info.
      expect(s.serverVersion).toBe(s.kind === 'sglang' ? SGLANG_VERSION : s.kind === 'tei' ? TEI_VERSION : VLLM_VERSION);
      expect(s.health).toBe('ok');
      // TEI has no /v1/models.
      expect(s.servedModels).toEqual(s.kind === 'tei' ? [] : [{ id: s.model, maxContext: sim.profile.maxModelLen }]);
      expect(s.config).toMatchObject({ id: s.id, remotePort: s.remotePort });
    }
  });

  it('l20-poc: a service that is restarting is seen down: nothing listens on its port and /health fails', async () => {
    const sim = demo.host('l20-poc').simulator('qwen');
    const restart = sim.restart();
    const r = await check('l20-poc');
    expect(verdicts(r)).toMatchObject({ 'gpu.visible': 'pass', 'port.loopback.qwen': 'fail', 'api.health.qwen': 'fail', 'sshd.root-login': 'pass' });
    expect(evidence(r, 'port.loopback.qwen')).toBe('ss -ltnH: nothing listens on TCP port 8000');
    expect(evidence(r, 'api.health.qwen')).toMatch(/^GET \/health: no answer through the tunnel/);
    expect(r.inventory.services[0]).toMatchObject({ health: 'down', serverVersion: null, servedModels: [] });
    void restart.initiated.catch(() => undefined);
  });

  it('a disconnected host gets liveError and every check unverified', async () => {
    await fleet.disconnect('tri-gpu');
    const r = await check('tri-gpu');
    expect(r.inventory.liveError).toBe('host not connected (SSH disconnected); live checks were not run');
    expect(r.security.checks.every((c) => c.verdict === 'unverified' && c.at === null)).toBe(true);
    expect(r.inventory.gpus).toEqual([]);
  });
});
