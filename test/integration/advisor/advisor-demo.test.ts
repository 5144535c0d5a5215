import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdvisorList, PoolCaps } from '../../../src-preload/contract/index.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import { until } from '../../helpers/until.js';

// The advisor through the real path: the demo fleet (SSH tunnels, vLLM simulator, nvidia-smi
// over exec) behind the console's proxy, batch held to 2 of gemma's 8 slots and driven by 8
// looping clients. The advisor, on a 60 s window, must see batch queue while the GPUs have
// headroom and propose more batch slots; advisor.apply (through the contract) must change the
// proxy's caps and leave both audit rows with who.

const UPSTREAM = 'tri-gpu/gemma';
const NARROW: PoolCaps = { reservedInteractive: 2, interactive: 8, system: 4, batch: 2 };

let c: DemoConsole;
let dir: string;
let client: OpenAI;
let stop = false;
const loops: Promise<void>[] = [];
const changed: AdvisorList[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-advisor-'));
  c = await startDemoConsole({
    dataDir: dir,
    fleet: { timeScale: 1000, decodeSpeedFactor: 10 },
    pollIntervalMs: 250,
    proxyPort: 0,
    advisorSettings: { windowMs: 60_000, minRequests: 10, minSamples: 8, batchWaitMs: 300, evaluateEveryMs: 500 },
  });
  c.app.onEvent((e) => {
    if (e.channel === 'advisor.changed') changed.push(e.payload as AdvisorList);
  });
  await until(() => c.app.fleet.snapshot().hosts.every((h) => h.state === 'connected' && h.services.every((s) => s.tunnel.state === 'up')), { timeoutMs: 20_000 });
  c.app.proxy.setCaps(UPSTREAM, NARROW, 'test');
  client = new OpenAI({ baseURL: c.app.proxy.url()!, apiKey: c.app.proxy.createToken('advisor-load', 'interactive', 'test').token, maxRetries: 0 });
  for (let i = 0; i < 8; i++) {
    loops.push(
      (async () => {
        while (!stop) {
          await client.chat.completions
            .create({ model: 'gemma', messages: [{ role: 'user', content: `job ${i}` }], max_tokens: 120 }, { headers: { 'x-priority': 'batch' } })
            .catch(() => undefined);
        }
      })(),
    );
  }
}, 60_000);

afterAll(async () => {
  stop = true;
  await Promise.allSettled(loops);
  await c?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const call = <T>(channel: string, input: unknown) => c.call<T>(channel, input);

describe('advisor on the demo fleet', () => {
  it('a saturated batch pool with GPU headroom yields "raise batch slots"; apply changes the caps through the proxy, audited with who', async () => {
    let list: AdvisorList | null = null;
    await until(
      async () => {
        list = await call<AdvisorList>('advisor.list', {});
        return list.recommendations.some((r) => r.upstream === UPSTREAM);
      },
      { timeoutMs: 40_000, intervalMs: 500 },
    );
    const rec = list!.recommendations.find((r) => r.upstream === UPSTREAM)!;
    console.log(`demo advice: ${rec.title}\n  ${rec.because.join('\n  ')}`);
    expect(rec).toMatchObject({ kind: 'raise_batch', current: NARROW, windowMs: 60_000 });
    expect(rec.proposed.batch).toBeGreaterThan(2);
    expect(rec.proposed.batch).toBeLessThanOrEqual(8 - NARROW.reservedInteractive);
    expect(rec.figures.gpuUtilP95Pct).not.toBeNull();
    expect(rec.figures.gpuUtilP95Pct!).toBeLessThan(95);
    expect(rec.figures.requests.batch).toBeGreaterThanOrEqual(10);
    expect(rec.title).toBe(`raise batch slots 2 → ${rec.proposed.batch}`);
    // Pushed too (the id may differ while the figures settle into their bucket).
    await until(() => changed.some((l) => l.recommendations.some((r) => r.upstream === UPSTREAM && r.kind === 'raise_batch')), { timeoutMs: 5_000 });

    const applied = await call<{ upstream: string; caps: PoolCaps }>('advisor.apply', { id: rec.id });
    expect(applied).toEqual({ upstream: UPSTREAM, caps: rec.proposed });
    expect(c.app.proxy.snapshot().upstreams.find((u) => u.upstream === UPSTREAM)!.caps).toEqual(rec.proposed);
    const [capsRow] = c.app.store.audit.list({ type: 'proxy.caps.changed', limit: 1 });
    expect(capsRow).toMatchObject({ target: UPSTREAM, actor: expect.stringMatching(/^operator:.+@test$/), payload: { before: NARROW, after: rec.proposed } });
    const [advisorRow] = c.app.store.audit.list({ type: 'advisor.applied', limit: 1 });
    expect(advisorRow).toMatchObject({ target: UPSTREAM, actor: capsRow!.actor, payload: { id: rec.id, kind: 'raise_batch', before: NARROW, after: rec.proposed } });
    expect(advisorRow!.seq).toBeGreaterThan(capsRow!.seq);
    await expect(call('advisor.apply', { id: rec.id })).rejects.toMatchObject({ code: 'ADVISOR_UNKNOWN_RECOMMENDATION' });
  }, 60_000);

  it('refuses bad input with the contract: unknown keys, a malformed id', async () => {
    await expect(call('advisor.apply', { id: 'adv_0000000000000000', upstream: 'x' })).rejects.toMatchObject({ code: expect.stringMatching(/INVALID|INPUT/) });
    await expect(call('advisor.reject', { id: '; rm -rf /' })).rejects.toMatchObject({ code: expect.stringMatching(/INVALID|INPUT/) });
    await expect(call('advisor.reject', { id: 'adv_0000000000000000' })).rejects.toMatchObject({ code: 'ADVISOR_UNKNOWN_RECOMMENDATION' });
  });
});
