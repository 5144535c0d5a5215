import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOutput } from '../../../src-main/cli/output.js';
import { runCli } from '../../../src-main/cli/run.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { readyFilePath, writeReadyFile } from '../../../src-main/core/instance/index.js';
import { DEFAULT_DEMO_FAULTS, DEMO_CONFIG_REASON, startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { startWebBridge, type WebBridge } from '../../../src-main/web/index.js';
import type { Alert, AlertHistory, Silence } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/until.js';

// `gpu-console alerts` against a running console on the demo fleet, reached
// the way the CLI reaches one (ready.json, the web bridge): list, ack,
// silence, unsilence and history, human and --json; bad input exits non-zero
// with the reason (usage 2, the console's code 1) and changes nothing.

let dir: string;
let demo: DemoFleet;
let core: TestApp;
let bridge: WebBridge;

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const output = createOutput(args.includes('--json'), { stdout: (s) => (out += s), stderr: (s) => (err += s) });
  const code = await runCli(['alerts', ...args, '--data-dir', dir], output);
  return { code, out, err };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-cli-alerts-'));
  demo = await startDemoFleet({ dir: join(dir, 'demo'), timeScale: 1000, faults: DEFAULT_DEMO_FAULTS });
  core = await startTestApp({
    dataDir: dir,
    configFile: null,
    pollIntervalMs: 250,
    alertThresholds: { healthSustainMs: 1_000, clearMs: 1_000 },
    givenConfig: { config: { ...demo.config, health: { intervalMs: 5_000 } }, reason: DEMO_CONFIG_REASON },
  });
  bridge = await startWebBridge({ api: core.api, rendererDir: dir, port: 0, logger: silentLogger });
  writeReadyFile(readyFilePath(dir), { ui: bridge.url, proxy: null, pid: process.pid });
  await until(async () => (await core.call<{ alerts: Alert[] }>('alerts.list', {})).alerts.some((a) => a.kind === 'gpu_fault' && a.host === 'tri-gpu'), {
    timeoutMs: 30_000,
    what: "tri-gpu's Xid alert",
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await core?.dispose();
  await demo?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('bad input exits non-zero naming what is wrong, and sets nothing', async () => {
  const tenYears = await cli(['silence', 'gpu_fault', '--host', 'tri-gpu', '--for', '10y', '--reason', 'forever']);
  expect(tenYears.code).toBe(2);
  expect(tenYears.err).toMatch(/--for must be a duration .*"10y"/);
  const negative = await cli(['silence', 'gpu_fault', '--host', 'tri-gpu', '--for', '-5m', '--reason', 'past']);
  expect(negative.code).toBe(2);
  expect(negative.err).toMatch(/"-5m"/);
  const rule = await cli(['silence', 'gpu_melted', '--host', 'tri-gpu', '--for', '2h', '--reason', 'x y z']);
  expect(rule.code).toBe(2);
  expect(rule.err).toMatch(/unknown rule "gpu_melted"/);
  const host = await cli(['silence', 'gpu_fault', '--host', 'nowhere', '--for', '2h', '--reason', 'maintenance', '--json']);
  expect(host.code).toBe(1);
  expect(host.err).toMatch(/ALERTS_SILENCE_SCOPE_UNKNOWN: host "nowhere"/);
  expect(JSON.parse(host.out)).toMatchObject({ ok: false, error: { code: 'ALERTS_SILENCE_SCOPE_UNKNOWN', details: { field: 'host' } } });
  const ack = await cli(['ack', 'gpu_fault:nowhere']);
  expect(ack.code).toBe(1);
  expect(ack.err).toMatch(/ALERTS_UNKNOWN_ALERT/);
  expect((await core.call<{ silences: Silence[] }>('alerts.list', {})).silences).toEqual([]);
});

it('list, ack, silence, unsilence and history through the running console', async () => {
  const listed = await cli(['list', '--json']);
  expect(listed.code).toBe(0);
  const fault = (JSON.parse(listed.out) as { alerts: Alert[] }).alerts.find((a) => a.kind === 'gpu_fault' && a.host === 'tri-gpu')!;
  const human = await cli(['list']);
  expect(human.out).toMatch(new RegExp(`gpu_fault\\s+tri-gpu\\s+since `));
  expect(human.out).toContain(`id ${fault.id}`);

  const acked = await cli(['ack', fault.id, '--note', 'RMA opened']);
  expect(acked.code).toBe(0);
  expect(acked.out).toMatch(/acknowledged by operator:.+@cli at .*: RMA opened/);

  const set = await cli(['silence', 'gpu_fault', '--host', 'tri-gpu', '--for', '2h', '--reason', 'waiting for the RMA', '--json']);
  expect(set.code).toBe(0);
  const silence = JSON.parse(set.out) as Silence;
  expect(silence).toMatchObject({ rule: 'gpu_fault', host: 'tri-gpu', reason: 'waiting for the RMA', by: expect.stringMatching(/@cli$/) });
  expect(silence.until - silence.createdAt).toBe(7_200_000);
  const after = await cli(['list']);
  expect(after.out).toMatch(new RegExp(`SILENCED by ${silence.id} until .*: waiting for the RMA`));
  expect(after.out).toContain('silences in force');

  const history = await cli(['history', '--since', '1h', '--json']);
  const h = JSON.parse(history.out) as AlertHistory;
  expect(h.alerts.find((a) => a.id === fault.id)).toMatchObject({ ackBy: expect.stringMatching(/@cli$/), silencedBy: silence.id });
  expect(h.changes.map((c) => c.summary)).toContain('silenced gpu_fault on tri-gpu for 2 h — waiting for the RMA');
  const historyText = await cli(['history']);
  expect(historyText.out).toMatch(/silenced gpu_fault on tri-gpu for 2 h/);

  const ended = await cli(['unsilence', silence.id]);
  expect(ended.code).toBe(0);
  expect(ended.out).toMatch(/^ended: .* ended .* by operator:.+@cli/);
  const audit = (await core.call<{ events: { type: string; actor: string }[] }>('audit.list', { limit: 100 })).events;
  expect(audit.filter((e) => ['alert.acknowledged', 'alerts.silence.set', 'alerts.silence.ended'].includes(e.type)).map((e) => [e.type, e.actor.endsWith('@cli')])).toEqual([
    ['alerts.silence.ended', true],
    ['alerts.silence.set', true],
    ['alert.acknowledged', true],
  ]);
}, 30_000);

it('list and ack need the running console (open alerts live there): without one, a clear code, not "no open alerts"', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'gc-cli-alerts-none-'));
  try {
    let err = '';
    const output = createOutput(false, { stdout: () => undefined, stderr: (s) => (err += s) });
    expect(await runCli(['alerts', 'list', '--data-dir', empty], output)).toBe(1);
    expect(err).toMatch(/CLI_NO_RUNNING_CONSOLE/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
