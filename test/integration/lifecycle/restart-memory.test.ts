import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import type { ActionView } from '../../../src-preload/contract/index.js';
import { until } from '../../helpers/until.js';

// Issue #27 finding 4 on the demo's AMD APU host `strix`: llama-server's
// weights live in GTT and fill it while the model loads (1.5 s down, 14 s
// loading, here at a tenth of that). The restart's evidence must give the
// memory of the loaded model, read after the server passed its checks — not
// the near-empty GTT of a reading taken mid-load. Meanwhile the fleet shows
// the service `loading` (finding 7).

let app: App;
let c: DemoConsole | undefined;
let api: Api;

async function call<T>(channel: string, input: unknown): Promise<T> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code });
  return r.data as T;
}

const strix = () => app.fleet.snapshot().hosts.find((h) => h.label === 'strix');
const gttMiB = () => strix()?.gpus[0]?.gttUsedMiB ?? null;

beforeAll(async () => {
  c = await startDemoConsole({
    dataDir: mkdtempSync(join(tmpdir(), 'gc-restart-memory-')),
    fleet: { timeScale: 10 }, proxyPort: 0, pollIntervalMs: 150,
  });
  app = c.app;
  api = c.api;
  await until(() => strix()?.services[0]?.health === 'ok' && (gttMiB() ?? 0) > 18_000, { timeoutMs: 20_000 });
}, 40_000);

afterAll(async () => {
  await c?.dispose();
});

describe('a llama-server restart on an APU', () => {
  it("records the loaded model's GPU memory, read after the server passed its checks", async () => {
    const loaded = gttMiB()!;
    const { action } = await call<{ action: ActionView }>('actions.propose', { upstream: 'strix/coder', kind: 'restart', reason: 'test' });
    await call('actions.approve', { id: action.id, nonce: action.nonce, typedLabel: 'strix', displayName: 'Test Operator' });
    // What the action said while it ran, and how the fleet showed the service, sampled every 20 ms.
    const progress = new Set<string>();
    const shown = new Set<string>();
    const settled = app.lifecycle.service.settled(action.id);
    let finished = false;
    void settled.finally(() => (finished = true));
    while (!finished) {
      const p = app.lifecycle.service.get(action.id).progress;
      if (p) progress.add(p);
      const svc = strix()?.services.find((x) => x.id === 'coder');
      if (svc) shown.add(`${svc.health} ${svc.sleep} ${svc.generationTokensPerS ?? '—'} ${svc.stale ? 'stale' : 'fresh'}${svc.health === 'loading' ? ` ${svc.source?.detail}` : ''}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const done = await settled;
    expect([...progress].some((p) => /^verifying: health: HTTP 503 Loading model/.test(p)), [...progress].join('\n')).toBe(true);
    expect(done.state, `${done.error} ${done.observed.join('; ')}`).toBe('verified');
    // Finding 7: while it loaded, the service was `loading` from /health, with no sleep state or rate from before.
    expect([...shown], [...shown].join('\n')).toContain('loading unknown — fresh GET /health: HTTP 503 "Loading model"');
    expect([...shown].filter((x) => x.startsWith('loading')).every((x) => x.startsWith('loading unknown — fresh'))).toBe(true);
    const line = done.observed.find((l) => l.startsWith('GPU memory'))!;
    const m = /^GPU memory \(VRAM \+ GTT\): (\d+) MiB in use on strix, read \d+\.\d s after the server passed its checks/.exec(line);
    expect(m, line).not.toBeNull();
    // VRAM carve-out + GTT of the loaded model: within a few percent of what it held before the restart.
    expect(Number(m![1])).toBeGreaterThan(loaded * 0.95);
    // The same line is what the audit chain signs.
    const verified = app.store.audit.list({ limit: 200 }).find((e) => e.type === 'lifecycle.verified' && e.payload.actionId === action.id)!;
    expect(JSON.stringify(verified.payload)).toContain(line);
    // Its "after" figure says when that reading was taken.
    expect(verified.payload.after).toMatchObject({ vramUsedMiB: expect.any(Number), vramReadAt: expect.any(Number) });
  }, 30_000);
});
