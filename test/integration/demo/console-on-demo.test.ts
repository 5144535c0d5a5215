import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CONFIG_REASON } from '../../../src-main/demo/index.js';
import { startTestApp } from '../../helpers/app.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';

// What core knows of the demo fleet now that a bridge starts it (issue #28
// item 3): only plain data. The fleet's config says its hosts are simulated
// (fleet.simulated: the UI's and the report's "demo" come from it), and a
// config handed over by the bridge is not the file's: a reload is refused
// with the bridge's reason, an ssh-config import writes the file and says it
// was not loaded. The same marker in a config file is read like any field.

let dir: string;
let c: DemoConsole;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-console-on-demo-'));
  mkdirSync(join(dir, '.ssh'));
  writeFileSync(join(dir, '.ssh', 'config'), 'Host gpu-9\n  HostName 192.0.2.9\n  User ops\n  IdentityFile ~/.ssh/id_fleet\n');
  c = await startDemoConsole({ dataDir: join(dir, 'data'), home: dir, fleet: { timeScale: 100 } });
}, 30_000);

afterAll(async () => {
  await c?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a console on the demo fleet', () => {
  it("runs the fleet's config, marked simulated, and says so in app.info and the audit's console.started", () => {
    expect(c.app.config.current.fleet.simulated).toBe(true);
    expect(c.app.config.current.hosts.map((h) => h.label)).toEqual(['l20-poc', 'tri-gpu', 'strix']);
    expect(c.app.info()).toMatchObject({ demo: true, configFile: null });
    expect(c.app.store.audit.list({ type: 'console.started' })[0]).toMatchObject({ payload: { demo: true, configFile: null } });
  });

  it("refuses a reload with the bridge's reason (CONFIG_DEMO_MODE): the file is not the running config", async () => {
    expect(await c.call('config.reload', {})).toEqual({ ok: false, error: { code: 'CONFIG_DEMO_MODE', message: DEMO_CONFIG_REASON, retryable: false, details: {} } });
    expect(c.app.config.current.fleet.simulated).toBe(true);
  });

  it('an ssh-config import writes the file and says it was not loaded, naming why', async () => {
    const p = await c.call<{ previewId: string }>('hosts.importPreview', { source: { kind: 'default' } });
    const r = await c.call<{ added: string[]; reloaded: boolean; note: string | null }>('hosts.importApply', { previewId: p.previewId, labels: ['gpu-9'] });
    const file = join(dir, 'data', 'config.yaml');
    expect(r).toMatchObject({ added: ['gpu-9'], reloaded: false, note: `written to ${file}, not loaded: ${DEMO_CONFIG_REASON}` });
    expect(readFileSync(file, 'utf8')).toContain('gpu-9');
    expect(c.app.config.current.hosts.map((h) => h.label)).not.toContain('gpu-9');
  });
});

describe('the fleet.simulated marker in a config file', () => {
  const write = (name: string, config: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, stringify(config));
    return file;
  };

  it('is read like any field: app.info says demo, the file stays the running config', async () => {
    const file = write('simulated.yaml', { fleet: { simulated: true } });
    const t = await startTestApp({ dataDir: join(dir, 'sim'), configFile: file, home: dir });
    try {
      expect(t.app.info()).toMatchObject({ demo: true, configFile: file });
      expect(await t.call('config.reload', {})).toEqual({ ok: true, error: null });
    } finally {
      await t.dispose();
    }
  });

  it('is false by default, and anything but a boolean is CONFIG_INVALID naming fleet.simulated and its line', async () => {
    const plain = await startTestApp({ dataDir: join(dir, 'plain'), configFile: write('plain.yaml', { hosts: [] }), home: dir });
    try {
      expect(plain.app.info()).toMatchObject({ demo: false });
    } finally {
      await plain.dispose();
    }
    const bad = write('bad.yaml', { hosts: [], fleet: { simulated: 'yes' } });
    await expect(startTestApp({ dataDir: join(dir, 'bad'), configFile: bad, home: dir })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/bad\.yaml:3:\d+ fleet\.simulated: must be true or false/),
    });
  });
});
