import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { readyFilePath, writeReadyFile } from '../../../src-main/core/instance/index.js';
import { runCli } from '../../../src-main/cli/run.js';
import { createOutput } from '../../../src-main/cli/output.js';
import { DEMO_CONFIG_REASON, startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { startWebBridge, type WebBridge } from '../../../src-main/web/index.js';
import { FleetSnapshotSchema, type FleetSnapshot } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/until.js';

// `gpu-console status` (issue #29 item 6) against a running console on the
// demo fleet, reached the way the CLI reaches one: ready.json and the web
// bridge. Each host prints its disks, RAM, swap, load, uptime and GPU
// processes; a full disk is flagged LOW naming the threshold, a ghost process
// is named "not a configured service" with the command to run; --json is the
// contract's snapshot with the same figures.

let dir: string;
let demo: DemoFleet;
let core: TestApp;
let bridge: WebBridge;

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const output = createOutput(args.includes('--json'), { stdout: (s) => (out += s), stderr: (s) => (err += s) });
  const code = await runCli([...args, '--data-dir', dir], output);
  return { code, out, err };
}

const snapshot = () => core.call<FleetSnapshot>('fleet.snapshot', {});
const cacheOf = (label: string) => (label === 'strix' ? '/srv/models' : label === 'tri-gpu' ? '/models/google' : '/home/ops/.cache/huggingface');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-cli-status-'));
  demo = await startDemoFleet({ dir: join(dir, 'demo'), timeScale: 1000 });
  core = await startTestApp({ dataDir: dir, configFile: null, pollIntervalMs: 250, givenConfig: { config: { ...demo.config, health: { intervalMs: 5_000 } }, reason: DEMO_CONFIG_REASON } });
  bridge = await startWebBridge({ api: core.api, rendererDir: dir, port: 0, logger: silentLogger });
  writeReadyFile(readyFilePath(dir), { ui: bridge.url, proxy: null, pid: process.pid });
  // Every host read, with the model cache it settles on (strix: the folder its llama-server's GGUF is in;
  // tri-gpu: its vLLM's /models/<org> folders; l20-poc: the default, once the container path its vLLM in
  // Docker names is found not on the host).
  await until(async () => (await snapshot()).hosts.every((h) => h.health?.atMs != null && h.gpuProcesses !== undefined && (h.gpus[0]?.processes?.length ?? 0) > 0 && h.health.disks.some((d) => d.kind === 'cache' && d.path === cacheOf(h.label))), { timeoutMs: 40_000 });
}, 70_000);

afterAll(async () => {
  await bridge?.close();
  await core?.dispose();
  await demo?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('gpu-console status: host health', () => {
  it('prints every host\'s disks, RAM, swap, load and matched GPU processes; nothing flagged on a healthy fleet', async () => {
    const { code, out } = await cli(['status']);
    expect(code).toBe(0);
    for (const h of demo.config.hosts) {
      const block = out.split(/\n(?=\S)/).find((b) => b.startsWith(h.label))!;
      expect(block, h.label).toMatch(/\n {2}disk root +\/ .*free \d+\.\d [GT]iB of \d+\.\d [GT]iB \(\d+\.\d %\)\n/);
      expect(block, h.label).toContain(`\n  disk cache  ${cacheOf(h.label)}`);
      expect(block, h.label).toMatch(/\n {2}ram \d+\.\d [MGT]iB used of \d+\.\d [GT]iB {2}swap \d+\.\d [KMGT]iB used of \d+\.\d [GT]iB\n/);
      expect(block, h.label).toMatch(/\n {2}load \d+\.\d\d \d+\.\d\d \d+\.\d\d on \d+ CPUs {2}up /);
      expect(block, h.label).toMatch(new RegExp(`\\n {2}gpu\\d+ pid \\d+ \\S+ {2}user \\S+ {2}\\d+ MiB {2}service (${h.services.map((s) => s.id).join('|')}) \\(`));
      expect(block, h.label).not.toContain('LOW');
      expect(block, h.label).not.toContain('FLAG');
      expect(block, h.label).not.toContain('not a configured service');
    }
  });

  it('a full disk is LOW naming the threshold; a ghost is "not a configured service" with its kill command; --json carries the same', async () => {
    const l20 = demo.host('l20-poc');
    l20.setDiskFull(true);
    const ghost = l20.setGhostProcess('qwen', true, { onPort: false })!;
    try {
      await until(async () => {
        const h = (await snapshot()).hosts.find((x) => x.label === 'l20-poc')!;
        return h.health!.disks.some((d) => d.kind === 'root' && d.freeBytes === 8 * 1024 ** 3) && h.gpuProcesses!.flags.some((f) => f.pid === ghost);
      }, { timeoutMs: 30_000 });
      const { code, out } = await cli(['status']);
      expect(code).toBe(0);
      const block = out.split(/\n(?=\S)/).find((b) => b.startsWith('l20-poc'))!;
      expect(block).toMatch(/\n {2}disk root +\/ .*free 8\.0 GiB of \d+\.\d [GT]iB \(\d+\.\d %\) {2}LOW: below 10 GiB or 10 % free\n/);
      expect(block).toContain(`pid ${ghost} VLLM::EngineCore`);
      expect(block).toMatch(new RegExp(`gpu0 pid ${ghost} VLLM::EngineCore {2}user \\S+ {2}9318 MiB {2}not a configured service`));
      expect(block).toContain(`FLAG FLEET_GPU_PROCESS_UNKNOWN: PID ${ghost} VLLM::EngineCore holds 9.1 GiB on GPU0 — not a configured service  — suggested (run it yourself): kill ${ghost}`);
      // Another host is unaffected.
      expect(out.split(/\n(?=\S)/).find((b) => b.startsWith('strix'))).not.toContain('LOW');

      const json = await cli(['status', '--json']);
      expect(json.code).toBe(0);
      const parsed = FleetSnapshotSchema.parse(JSON.parse(json.out));
      const host = parsed.hosts.find((h) => h.label === 'l20-poc')!;
      expect(host.health!.disks.find((d) => d.kind === 'root')!.freeBytes).toBe(8 * 1024 ** 3);
      expect(host.gpus[0]!.processes!.find((p) => p.pid === ghost)).toMatchObject({ serviceId: null, name: 'VLLM::EngineCore' });
      expect(host.gpuProcesses!.flags).toContainEqual(expect.objectContaining({ code: 'FLEET_GPU_PROCESS_UNKNOWN', command: `kill ${ghost}` }));
    } finally {
      l20.setDiskFull(false);
      l20.setGhostProcess('qwen', false);
    }
  }, 60_000);

  it('GPU faults when the host reports them: ECC and throttle per GPU, an Xid from the kernel log', async () => {
    const tri = demo.host('tri-gpu');
    tri.raiseXid({ gpuIndex: 1, xid: 79 });
    tri.setThermalThrottle(0, true);
    try {
      await until(async () => {
        const h = (await snapshot()).hosts.find((x) => x.label === 'tri-gpu')!;
        return (h.health?.kernelLog?.xids.some((x) => x.xid === 79) ?? false) && (h.gpus[0]?.faults?.throttleReasons?.includes('hw_thermal_slowdown') ?? false);
      }, { timeoutMs: 30_000 });
      const block = (await cli(['status'])).out.split(/\n(?=\S)/).find((b) => b.startsWith('tri-gpu'))!;
      expect(block).toMatch(/\n {2}gpu0 faults: ecc (on|off|—) .*throttle [a-z_,]*hw_thermal_slowdown[a-z_,]* since \d{4}-/);
      expect(block).toMatch(/\n {2}kernel log: read with (journalctl|dmesg), \d+ Xid event\(s\)\n/);
      expect(block).toMatch(/\n {2}Xid 79 at \d{4}-\S+ on gpu1: .*Xid.*79/);
    } finally {
      tri.setThermalThrottle(0, false);
    }
  }, 60_000);
});
