import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_CONFIG_REASON, startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import type { ActionView, Evidence, FleetSnapshot } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/until.js';

// Issue #29 item 7 through the whole console on the demo fleet: a report's
// host health is what the fleet read (every host, its disks and matched GPU
// processes, the reading's own time), the disk-margin gate follows a full disk,
// and the log lines of a restart that ended in CUDA OOM are in the report only
// when asked for — read through the logs capability, masked there.

let dir: string;
let demo: DemoFleet;
let core: TestApp;

const preview = (request: Record<string, unknown>) => core.call<{ evidence: Evidence; html: string }>('reports.preview', { request });
const window = () => ({ fromMs: Date.now() - 3_600_000, toMs: Date.now() + 1, live: false, sections: ['health', 'lifecycle', 'gates'] });
const diskGate = (e: Evidence) => e.gates!.find((g) => g.id === 'auto.disk.margin')!;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-health-report-'));
  demo = await startDemoFleet({ dir: join(dir, 'demo'), timeScale: 20 });
  core = await startTestApp({ dataDir: dir, configFile: null, pollIntervalMs: 500, givenConfig: { config: { ...demo.config, health: { intervalMs: 5_000 } }, reason: DEMO_CONFIG_REASON } });
  const snap = () => core.call<FleetSnapshot>('fleet.snapshot', {});
  await until(async () => (await snap()).hosts.every((h) => h.health?.atMs != null && h.gpuProcesses !== undefined), { timeoutMs: 40_000, what: 'host health on every demo host' });
}, 90_000);

afterAll(async () => {
  await core?.dispose();
  await demo?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("every host's health at export, with its reading time; the disk margin passes, then fails on a full disk", async () => {
  const { evidence: e } = await preview(window());
  expect(e.hostState!.map((h) => h.host).sort()).toEqual(demo.config.hosts.map((h) => h.label).sort());
  for (const h of e.hostState!) {
    expect(h.health!.atMs, h.host).toBeLessThanOrEqual(e.generatedAt);
    expect(h.health!.disks.find((d) => d.kind === 'root')!.freeBytes, h.host).toBeGreaterThan(10 * 1024 ** 3);
    expect(h.gpus.flatMap((g) => g.processes ?? []).every((p) => p.serviceId !== null), h.host).toBe(true);
  }
  expect(diskGate(e).status).toBe('pass');
  expect(e.logExcerpts).toBeNull();

  demo.host('l20-poc').setDiskFull(true);
  try {
    await until(async () => diskGate((await preview(window())).evidence).status === 'fail', { timeoutMs: 20_000, what: 'the disk gate to fail' });
    const { evidence, html } = await preview(window());
    expect(diskGate(evidence).evidence).toMatch(/l20-poc: \/ 8\.0 GiB free of .* — LOW/);
    expect(html).toContain('<section id="hoststate"');
  } finally {
    demo.host('l20-poc').setDiskFull(false);
  }
}, 60_000);

it('a restart into CUDA OOM: its log lines are in the report only with includeLogs', async () => {
  const healthy = async () => (await core.call<FleetSnapshot>('fleet.snapshot', {})).hosts.find((h) => h.label === 'l20-poc')?.services.find((s) => s.id === 'qwen')?.health === 'ok';
  await until(healthy, { timeoutMs: 40_000, what: 'l20-poc/qwen healthy' });
  demo.host('l20-poc').setOomOnRestart('qwen', true);
  const { action } = await core.call<{ action: ActionView }>('actions.propose', { upstream: 'l20-poc/qwen', kind: 'restart', reason: 'test: restart into OOM', approveNow: { typedLabel: 'l20-poc' } });
  // A restart into OOM is verified only after its deadline; while it runs its lines run up to the build time.
  const started = async () => (await core.call<{ actions: ActionView[] }>('actions.list', {})).actions.find((a) => a.id === action.id)?.startedAt != null;
  await until(started, { timeoutMs: 30_000, intervalMs: 250, what: 'the restart to start' });
  let withLogs = await preview({ ...window(), includeLogs: true });
  const excerpt = () => withLogs.evidence.logExcerpts!.find((l) => l.actionId === action.id)!;
  await until(
    async () => {
      withLogs = await preview({ ...window(), includeLogs: true });
      return excerpt().lines.some((l) => l.failure === 'cuda-oom');
    },
    { timeoutMs: 60_000, intervalMs: 1_000, what: 'the OOM lines in the excerpt' },
  );
  const x = excerpt();
  expect(x).toMatchObject({ host: 'l20-poc', serviceId: 'qwen', kind: 'restart', problem: null });
  expect(x.source!.timestamps).toBe(true);
  expect(x.lines.some((l) => l.failure === 'cuda-oom'), JSON.stringify(x.lines.slice(-5))).toBe(true);
  expect(x.lines.every((l) => l.ts === null || (l.ts >= x.fromMs && l.ts <= x.toMs))).toBe(true);
  expect(withLogs.html).toMatch(/CUDA out of memory|OutOfMemoryError|cudaMalloc failed/);

  const without = await preview(window());
  expect(without.evidence.logExcerpts).toBeNull();
  expect(JSON.stringify(without.evidence) + without.html).not.toMatch(/out of memory|OutOfMemoryError|cudaMalloc failed/i);
}, 150_000);
