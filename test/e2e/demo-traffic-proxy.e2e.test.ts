import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, bridgeCall, startConsole, type RunningConsole } from '../helpers/console-process.js';

// The demo's background traffic is half through the console's own proxy (the
// Proxy view shows pools, classes and clients, not zeros) and half direct.
// Its client tokens live in the demo folder and are reused across restarts.

interface Row { client: string; class: string | null; status: number | null }
interface Token { name: string; revokedAt: number | null }

describe('demo traffic through the proxy', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-demo-traffic-'));
  let proc: RunningConsole | null = null;

  afterAll(async () => {
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const rows = async (): Promise<Row[]> => {
    const r = await bridgeCall<{ rows: Row[] }>(proc!.ui, 'proxy.requests', { limit: 500 });
    return r.ok ? r.data.rows : [];
  };
  const tokens = async (): Promise<Token[]> => {
    const r = await bridgeCall<{ tokens: Token[] }>(proc!.ui, 'proxy.listTokens', {});
    return r.ok ? r.data.tokens : [];
  };

  it('sends interactive and batch requests through the proxy under their own client tokens', async () => {
    assertBuilt();
    proc = await startConsole(['--demo', '--data-dir', dataDir]);
    const seen = async () => new Set((await rows()).filter((r) => r.status !== null && r.status < 400).map((r) => `${r.client}/${r.class}`));
    await expect.poll(seen, { timeout: 45_000, interval: 1000 }).toEqual(new Set(['demo-app-chat/interactive', 'demo-app-batch/batch']));
    expect((await tokens()).filter((t) => t.revokedAt === null).map((t) => t.name).sort()).toEqual(['demo-app-batch', 'demo-app-chat']);
    // The tokens are kept for the demo only, readable by the user alone.
    expect(statSync(join(dataDir, 'demo', 'traffic-tokens.json')).mode & 0o777).toBe(0o600);
  }, 90_000);

  it('reuses its tokens after a restart: no new or revoked tokens pile up', async () => {
    await proc!.stop();
    proc = await startConsole(['--demo', '--data-dir', dataDir]);
    const before = (await rows()).length;
    await expect.poll(async () => (await rows()).length, { timeout: 45_000, interval: 1000 }).toBeGreaterThan(before);
    const all = await tokens();
    expect(all.map((t) => t.name).sort()).toEqual(['demo-app-batch', 'demo-app-chat']);
    expect(all.every((t) => t.revokedAt === null)).toBe(true);
  }, 90_000);
});
