import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_DEMO_FAULTS, DEMO_CONFIG_REASON, startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import type { Alert, AlertHistory, Silence } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/until.js';

// Acknowledge, silence and a shift's history through the contract on the demo
// fleet (issue #30 items 4 and 5): the built-in faults raise tri-gpu's
// gpu_fault (Xid) and gpu_process_unknown (the ghost process). A silence set
// before the ghost's alert is sustained keeps it from paging while it is
// listed with the silence; an acknowledgement is audited with who; the silence
// outlives a restart of the core; bad input is refused with a code.

let dir: string;
let demo: DemoFleet;
let core: TestApp;

const startCore = () =>
  startTestApp({
    dataDir: dir,
    configFile: null,
    pollIntervalMs: 250,
    alertThresholds: { healthSustainMs: 3_000, clearMs: 1_000 },
    givenConfig: { config: { ...demo.config, health: { intervalMs: 5_000 } }, reason: DEMO_CONFIG_REASON },
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-alert-book-'));
  demo = await startDemoFleet({ dir: join(dir, 'demo'), timeScale: 1000, faults: DEFAULT_DEMO_FAULTS });
  core = await startCore();
}, 60_000);

afterAll(async () => {
  await core?.dispose();
  await demo?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const list = () => core.call<{ alerts: Alert[]; silences: Silence[] }>('alerts.list', {});
const refusal = async (channel: string, input: unknown) => {
  try {
    await core.call(channel, input);
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  return null;
};
const audit = async (type: string) => (await core.call<{ events: { type: string; actor: string; target: string | null; payload: Record<string, unknown> }[] }>('audit.list', { limit: 200 })).events.filter((e) => e.type === type);

it('refuses bad silences with a code naming what is wrong, storing nothing', async () => {
  expect(await refusal('alerts.silence', { rule: 'gpu_fault', host: 'tri-gpu', forMs: -300_000, reason: 'past' })).toMatchObject({ code: 'CONTRACT_INVALID_INPUT', message: expect.stringContaining('at least 1 minute') });
  expect(await refusal('alerts.silence', { rule: 'gpu_fault', host: 'tri-gpu', forMs: 10 * 365 * 86_400_000, reason: 'ten years' })).toMatchObject({ code: 'CONTRACT_INVALID_INPUT', message: expect.stringContaining('at most 30 days') });
  expect(await refusal('alerts.silence', { rule: 'no_such_rule', forMs: 3_600_000, reason: 'x y z' })).toMatchObject({ code: 'CONTRACT_INVALID_INPUT' });
  expect(await refusal('alerts.silence', { rule: 'gpu_fault', forMs: 3_600_000, reason: '' })).toMatchObject({ code: 'CONTRACT_INVALID_INPUT', message: expect.stringContaining('say why') });
  expect(await refusal('alerts.silence', { rule: 'gpu_fault', host: 'nowhere', forMs: 3_600_000, reason: 'maintenance' })).toMatchObject({ code: 'ALERTS_SILENCE_SCOPE_UNKNOWN', message: expect.stringContaining('host "nowhere"') });
  expect(await refusal('alerts.ack', { id: 'gpu_fault:nowhere' })).toMatchObject({ code: 'ALERTS_UNKNOWN_ALERT' });
  expect(await refusal('alerts.unsilence', { id: 'sil-nope' })).toMatchObject({ code: 'ALERTS_UNKNOWN_SILENCE' });
  expect((await list()).silences).toEqual([]);
  expect(await audit('alerts.silence.set')).toEqual([]);
});

it('a silence keeps the ghost process alert from paging while it is listed with the silence; an ack is audited with who', async () => {
  const silence = await core.call<Silence>('alerts.silence', { rule: 'gpu_process_unknown', host: 'tri-gpu', forMs: 2 * 3_600_000, reason: 'known leftover, cleaning up after the shift' });
  expect(silence).toMatchObject({ rule: 'gpu_process_unknown', host: 'tri-gpu', by: expect.stringMatching(/^operator:.+@test$/), endedAt: null });
  let ghost: Alert | undefined;
  let fault: Alert | undefined;
  await until(
    async () => {
      const { alerts } = await list();
      ghost = alerts.find((a) => a.kind === 'gpu_process_unknown' && a.host === 'tri-gpu');
      fault = alerts.find((a) => a.kind === 'gpu_fault' && a.host === 'tri-gpu');
      return ghost !== undefined && fault !== undefined;
    },
    { timeoutMs: 30_000, what: 'tri-gpu gpu_process_unknown and gpu_fault raised' },
  );
  expect(ghost!.silencedBy).toBe(silence.id);
  expect(fault!.silencedBy).toBeNull();
  const set = await audit('alerts.silence.set');
  expect(set).toHaveLength(1);
  expect(set[0]!.actor).toMatch(/^operator:.+@test$/);
  expect(set[0]!.payload).toMatchObject({ silenceId: silence.id, reason: 'known leftover, cleaning up after the shift', until: silence.until });
  const { notifications } = await core.call<{ notifications: { key: string }[] }>('notifications.list', { limit: 200 });
  expect(notifications.map((n) => n.key)).toContain(`alert:${fault!.id}`);
  expect(notifications.map((n) => n.key)).not.toContain(`alert:${ghost!.id}`);
  expect((await audit('alert.raised')).find((e) => e.payload.alertId === ghost!.id)?.payload.silencedBy).toBe(silence.id);

  const acked = await core.call<Alert>('alerts.ack', { id: fault!.id, note: 'RMA ticket opened' });
  expect(acked.ack).toMatchObject({ by: expect.stringMatching(/@test$/), note: 'RMA ticket opened' });
  expect((await list()).alerts.find((a) => a.id === fault!.id)!.ack?.note).toBe('RMA ticket opened');
  expect((await audit('alert.acknowledged'))[0]).toMatchObject({ actor: expect.stringMatching(/@test$/), target: 'tri-gpu', payload: { alertId: fault!.id, kind: 'gpu_fault', host: 'tri-gpu' } });

  const history = await core.call<AlertHistory>('alerts.history', {});
  const entry = (id: string) => history.alerts.find((a) => a.id === id);
  expect(entry(fault!.id)).toMatchObject({ ackBy: expect.stringMatching(/@test$/), clearedAt: null });
  expect(entry(ghost!.id)).toMatchObject({ silencedBy: silence.id });
  expect(history.silences.map((s) => s.id)).toEqual([silence.id]);
  expect(history.changes.map((c) => c.type)).toContain('alerts.silence.set');
}, 60_000);

it('a restart keeps the silence in force; unsilence ends it, audited with who', async () => {
  const before = (await list()).silences;
  expect(before).toHaveLength(1);
  await core.dispose();
  core = await startCore();
  expect((await list()).silences).toEqual(before);
  const ended = await core.call<Silence>('alerts.unsilence', { id: before[0]!.id });
  expect(ended.endedBy).toMatch(/@test$/);
  expect((await list()).silences).toEqual([]);
  expect((await audit('alerts.silence.ended'))[0]).toMatchObject({ payload: { silenceId: before[0]!.id } });
}, 60_000);
