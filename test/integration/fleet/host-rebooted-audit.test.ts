import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_CONFIG_REASON, startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/until.js';

// A reboot seen by host health (issue #29 item 2) is evidence: the whole
// console on the demo fleet writes one `host.rebooted` audit row (HostService,
// from the fleet's onDidReboot) with both boot ids, and the audit chain still verifies.

let dir: string;
let demo: DemoFleet;
let core: TestApp;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-reboot-audit-'));
  demo = await startDemoFleet({ dir: join(dir, 'demo'), timeScale: 1000 });
  // The demo's config with the shortest health interval the config takes.
  core = await startTestApp({ dataDir: dir, configFile: null, pollIntervalMs: 250, givenConfig: { config: { ...demo.config, health: { intervalMs: 5_000 } }, reason: DEMO_CONFIG_REASON } });
}, 30_000);

afterAll(async () => {
  await core?.dispose();
  await demo?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('a demo host rebooted: one host.rebooted row with the old and new boot id', async () => {
  const bootOf = async () => (await core.call<FleetSnapshot>('fleet.snapshot', {})).hosts.find((h) => h.label === 'strix')?.health?.bootId ?? null;
  await until(async () => (await bootOf()) !== null, { timeoutMs: 15_000 });
  const before = await bootOf();
  demo.host('strix').reboot();
  await until(async () => core.app.store.audit.list({ type: 'host.rebooted' }).length > 0, { timeoutMs: 15_000 });
  const rows = core.app.store.audit.list({ type: 'host.rebooted' });
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ actor: 'system', target: 'strix', payload: { previousBootId: before, bootId: await bootOf() } });
  expect(rows[0]!.payload).toMatchObject({ uptimeS: expect.any(Number) });
  expect(core.app.store.audit.verify().ok).toBe(true);
}, 40_000);
