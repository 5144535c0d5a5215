import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEvent } from '../../../src-main/core/app.js';
import { createOutput } from '../../../src-main/cli/output.js';
import { runCli } from '../../../src-main/cli/run.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { readyFilePath, writeReadyFile } from '../../../src-main/core/instance/index.js';
import { StoreErrorCode, verifyAuditChain } from '../../../src-main/core/store/index.js';
import { DEMO_CONFIG_REASON, startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { startWebBridge, type WebBridge } from '../../../src-main/web/index.js';
import type { ActionView, StorageHealth, TelemetryTick } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { mountTmpfs, tmpfsRefusal, unmountTmpfs } from '../../helpers/tmpfs.js';
import { until } from '../../helpers/until.js';

// Issue #33 item 3: the data folder on a small filesystem (a tmpfs of a few MiB) filled up by a filler
// file while the console runs on the demo fleet. The proxy keeps serving (rows dropped and counted on
// /metrics and in its stats), telemetry ticks stay live, an approval is refused coded because it cannot
// be audited (and nothing runs), the storage health names the folder; once the filler is removed,
// writes resume by themselves, the approval goes through, and the file is intact (integrity_check, chain).

const TMPFS_SIZE = '8m';

const refusal = tmpfsRefusal();
const SKIP = refusal === null ? '' : ` (skipped: cannot mount a tmpfs here: ${refusal})`;
if (refusal !== null) console.warn(`full-disk test skipped: cannot mount a tmpfs: ${refusal}`);

/** Fills the filesystem under `dir` with one file until it refuses (ENOSPC); returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler.bin');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  try {
    for (;;) {
      try {
        writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        // Then the last few blocks, so not even a page is left.
        for (let size = 32 * 1024; size >= 512; size /= 2) {
          try {
            writeSync(fd, chunk.subarray(0, size));
          } catch {
            // this size does not fit: try half
          }
        }
        return path;
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(refusal !== null)(`a full data folder${SKIP}`, () => {
  let dataDir: string;
  let demoDir: string;
  let demo: DemoFleet;
  let c: TestApp;
  let bridge: WebBridge | undefined;
  const events: AppEvent[] = [];
  let token: string;
  let filler: string | null = null;
  let proposal: ActionView;

  const chat = async (): Promise<number> => {
    const r = await request(`${c.app.proxy.url()}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: 'qwen', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
    });
    await r.body.text();
    return r.statusCode;
  };
  const status = () => c.call<StorageHealth>('storage.status', {});
  /** `gpu-console status` as an operator runs it, reaching the console through ready.json and the web bridge. */
  const cliStatus = async (): Promise<string> => {
    let out = '';
    const code = await runCli(['status', '--data-dir', dataDir], createOutput(false, { stdout: (t) => (out += t), stderr: (t) => (out += t) }));
    expect(code).toBe(0);
    return out;
  };
  const metrics = async (): Promise<string> => {
    const r = await request(new URL('/metrics', c.app.proxy.url()!));
    return r.body.text();
  };
  const metric = (text: string, name: string): number | null => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const sleepOf = (upstream: string) => {
    const [label, id] = upstream.split('/');
    return c.app.fleet.snapshot().hosts.find((h) => h.label === label)?.services.find((s) => s.id === id)?.sleep;
  };

  beforeAll(async () => {
    const mounted = mountTmpfs(TMPFS_SIZE, 'gc-fulldisk-');
    if (mounted.error !== null) throw new Error(`cannot mount a tmpfs: ${mounted.error}`);
    dataDir = mounted.dir;
    demoDir = mkdtempSync(join(tmpdir(), 'gc-fulldisk-demo-'));
    demo = await startDemoFleet({ dir: demoDir, timeScale: 100 });
    const config = { ...demo.config, proxy: { ...demo.config.proxy, requestLog: { backlogRows: 4 } } };
    c = await startTestApp({ dataDir, configFile: null, givenConfig: { config, reason: DEMO_CONFIG_REASON }, proxyPort: 0, pollIntervalMs: 150, alertThresholds: { staleAfterMs: 1_000 } });
    c.app.onEvent((e) => void events.push(e));
    await until(() => sleepOf('l20-poc/qwen') === 'awake', { timeoutMs: 20_000, what: 'l20-poc/qwen awake' });
    await until(() => c.app.fleet.snapshot().hosts.some((h) => h.label === 'l20-poc' && !h.gpuStale && h.updatedAt !== null), { timeoutMs: 15_000 });
    token = c.app.proxy.createToken('full-disk', 'interactive', 'test').token;
    bridge = await startWebBridge({ api: c.api, rendererDir: demoDir, port: 0, logger: silentLogger });
    writeReadyFile(readyFilePath(dataDir), { ui: bridge.url, proxy: null, pid: process.pid });
  }, 60_000);

  afterAll(async () => {
    if (filler) rmSync(filler, { force: true });
    await bridge?.close();
    await c?.dispose();
    await demo?.dispose();
    if (demoDir) rmSync(demoDir, { recursive: true, force: true });
    if (!dataDir) return;
    unmountTmpfs(dataDir);
  }, 30_000);

  it('serves, keeps telemetry live and refuses approvals coded while the folder is full; resumes with nothing damaged', async () => {
    // Before: a request lands in the log, and a proposal waits (proposing is audited: done while there is room).
    expect(await chat()).toBe(200);
    await until(() => c.app.proxy.snapshot().requestLog?.written === 1, { what: 'the first row written' });
    ({ action: proposal } = await c.call<{ action: ActionView }>('actions.propose', { upstream: 'l20-poc/qwen', kind: 'sleep', reason: 'full-disk test' }));
    expect((await status()).state).toBe('ok');

    // The WAL is cut to nothing so the next commit must grow it, then the filesystem is filled.
    c.app.store.db.pragma('wal_checkpoint(TRUNCATE)');
    filler = fill(dataDir);
    expect(statfsSync(dataDir).bavail).toBe(0);
    const filledAt = Date.now();

    // The proxy keeps answering; its rows wait (4 at most), the rest are dropped and counted.
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) codes.push(await chat());
    expect(codes).toEqual(Array(12).fill(200));
    await until(async () => (await status()).failing.some((f) => f.writer === 'requests'), { what: 'the request log to report its failing writes' });
    const full = await status();
    expect(full).toMatchObject({ state: 'full', folder: dataDir });
    expect(full.since).toBeGreaterThanOrEqual(filledAt);
    expect(full.freeBytes).toBeLessThan(64 * 1024);
    expect(full.failing.find((f) => f.writer === 'requests')).toMatchObject({ code: 'SQLITE_FULL', pending: 4, dropped: expect.any(Number) });
    const stats = c.app.proxy.snapshot().requestLog!;
    expect(stats).toMatchObject({ written: 1, pending: 4 });
    expect(stats.dropped).toBeGreaterThanOrEqual(8);
    expect(stats.failingSince).not.toBeNull();
    const text = await metrics();
    expect(metric(text, 'gpu_console_request_log_dropped_total')).toBe(stats.dropped);
    expect(metric(text, 'gpu_console_request_log_write_failing')).toBe(1);
    expect(text).toContain(`gpu_console_storage_writable{folder="${dataDir}"} 0`);
    expect(metric(text, 'gpu_console_storage_free_bytes')).toBeLessThan(64 * 1024);
    // The banner's event said so, naming the folder.
    expect(events.some((e) => e.channel === 'storage.health' && (e.payload as StorageHealth).state === 'full' && (e.payload as StorageHealth).folder === dataDir)).toBe(true);

    // The CLI names the folder too.
    expect(await cliStatus()).toMatch(new RegExp(`^STORAGE: data folder ${dataDir} is full \\(\\d+ (B|KiB) free\\) since \\S+; dropping request-log rows \\(\\d+ dropped, 4 waiting\\)`, 'm'));

    // Telemetry: ticks keep coming with live figures while nothing can be stored.
    const ticksBefore = events.filter((e) => e.channel === 'telemetry.tick').length;
    await until(() => events.filter((e) => e.channel === 'telemetry.tick').length >= ticksBefore + 3, { what: 'three telemetry ticks on a full disk' });
    const lastTick = events.filter((e) => e.channel === 'telemetry.tick').at(-1)!.payload as TelemetryTick;
    const l20 = lastTick.hosts.find((h) => h.host === 'l20-poc')!;
    expect(Object.values(l20.values).some((v) => typeof v === 'number')).toBe(true);

    // An approval cannot be audited: refused, coded, naming the folder; nothing ran.
    const refused = await c.call('actions.approve', { id: proposal.id, nonce: proposal.nonce, displayName: 'Test Operator' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: StoreErrorCode.DISK_FULL, retryable: true, details: { folder: dataDir } });
    expect((refused as Error).message).toContain(dataDir);
    const listed = await c.call<{ actions: ActionView[] }>('actions.list', { limit: 10 });
    expect(listed.actions.find((a) => a.id === proposal.id)?.state).toBe('proposed');
    expect(demo.host('l20-poc').simulator('qwen').state().sleepState).toBe('awake');
    expect((await status()).failing.map((f) => f.writer)).toContain('audit');
    // So is a token: refused coded, and no unaudited token is left behind.
    const tokenRefused = await c.call('proxy.createToken', { name: 'while-full', maxClass: 'batch' }).catch((e: unknown) => e);
    expect(tokenRefused).toMatchObject({ code: StoreErrorCode.DISK_FULL, details: { folder: dataDir } });

    // Space returns: writes resume by themselves (the probe writes the recovery event), rows that waited land.
    rmSync(filler);
    filler = null;
    await until(async () => (await status()).state === 'ok', { timeoutMs: 15_000, what: 'storage health back to ok' });
    expect((await status()).recoveredAt).not.toBeNull();
    await until(() => c.app.proxy.snapshot().requestLog?.pending === 0, { what: 'the waiting rows written' });
    expect(await chat()).toBe(200);
    await until(() => c.app.proxy.requests({ limit: 100, outcome: 'all' }).length === 1 + 4 + 1, { what: 'rows: one before, four kept, one after' });
    const recovered = c.app.store.audit.list({ type: 'store.storage.recovered', limit: 5 });
    expect(recovered).toHaveLength(1);
    expect(recovered[0]!.payload).toMatchObject({ folder: dataDir, state: 'full', dropped: { requests: stats.dropped } });
    const after = await metrics();
    expect(metric(after, 'gpu_console_request_log_write_failing')).toBe(0);
    expect(metric(after, 'gpu_console_storage_writable')).toBe(1);
    expect(metric(after, 'gpu_console_storage_free_bytes')).toBeGreaterThan(1024 * 1024);
    expect(await cliStatus()).toMatch(new RegExp(`^storage: data folder ${dataDir}: writes land`, 'm'));

    expect((await c.call<{ tokens: { name: string }[] }>('proxy.listTokens', {})).tokens.map((t) => t.name)).toEqual(['full-disk']);

    // The same proposal, the same nonce: approved and run now.
    await c.call('actions.approve', { id: proposal.id, nonce: proposal.nonce, displayName: 'Test Operator' });
    const done = await c.app.lifecycle.service.settled(proposal.id);
    expect(done.state, done.error ?? '').toBe('verified');

    expect(c.app.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(c.app.store.audit.verify()).toMatchObject({ ok: true });
  }, 90_000);

  it('faults while full (a link cut, a server stopped): nothing throws out of a timer, the operator is told, the fleet recovers', async () => {
    c.app.store.db.pragma('wal_checkpoint(TRUNCATE)');
    filler = fill(dataDir);
    const host = demo.host('tri-gpu');
    host.setLinkCut(true);
    demo.host('strix').stopService('coder');
    const hostState = (label: string) => c.app.fleet.snapshot().hosts.find((h) => h.label === label)?.state;
    const cutAt = events.length;
    await until(() => hostState('tri-gpu') !== 'connected', { timeoutMs: 20_000, what: 'tri-gpu seen cut' });
    // The operator still hears of it: the notice does not wait on the audit row the full folder refuses.
    await until(() => events.slice(cutAt).some((e) => e.channel === 'notifications.notice' && JSON.stringify(e.payload).includes('tri-gpu')), { timeoutMs: 10_000, what: 'a notice for tri-gpu' });
    // And its alert is raised and pushed though its audit row cannot be written.
    await until(() => events.slice(cutAt).some((e) => e.channel === 'alert.changed' && (e.payload as { type: string; alert: { host: string } }).type === 'raised' && (e.payload as { alert: { host: string } }).alert.host === 'tri-gpu'), { timeoutMs: 15_000, what: 'an alert raised for tri-gpu' });
    await until(() => c.app.fleet.snapshot().hosts.find((h) => h.label === 'strix')?.services.find((s) => s.id === 'coder')?.health === 'down', { timeoutMs: 20_000, what: 'strix/coder seen down' });
    const ticks = events.filter((e) => e.channel === 'telemetry.tick').length;
    await until(() => events.filter((e) => e.channel === 'telemetry.tick').length >= ticks + 3, { what: 'ticks after the faults' });
    expect((await status()).state).toBe('full');
    host.setLinkCut(false);
    demo.host('strix').restartService('coder');
    rmSync(filler);
    filler = null;
    await until(async () => (await status()).state === 'ok', { timeoutMs: 15_000, what: 'storage health back to ok' });
    await until(() => hostState('tri-gpu') === 'connected', { timeoutMs: 30_000, what: 'tri-gpu back' });
    expect(c.app.store.audit.verify()).toMatchObject({ ok: true });
  }, 90_000);

  it('the file is intact after close: integrity_check ok, the audit chain verifies', async () => {
    await bridge?.close();
    await c.dispose();
    const db = new Database(join(dataDir, 'gpu-console.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(verifyAuditChain(db)).toMatchObject({ ok: true });
    } finally {
      db.close();
    }
  }, 30_000);
});
