import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../src-main/core/base/index.js';
import { LlamaSimulator, type LlamaServiceProfile } from '../../../src-main/demo/index.js';
import { tinyLlamaProfile } from '../../fixtures/llama-server/fixtures.js';

// One LlamaSimulator on its own (no SSH), on a fake clock: restart handles,
// the ghost and kill, the API key.

let sim: LlamaSimulator | null = null;
afterEach(async () => {
  await sim?.dispose();
  sim = null;
});

async function start(over: Partial<LlamaServiceProfile> = {}) {
  const clock = new FakeClock();
  let pid = 1000;
  sim = await LlamaSimulator.start({ profile: tinyLlamaProfile(over), clock, logger: silentLogger, timeScale: 1, decodeSpeedFactor: 1, allocatePid: () => (pid += 10) });
  return { clock, sim };
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('LlamaSimulator', () => {
  it('restart: down (connections refused), loading, serving — with a new pid; the handle says how it went', async () => {
    const { clock, sim } = await start();
    const states: string[] = [];
    sim.onDidChangeState.on((s) => states.push(s.process));
    const pid = sim.state().pid;
    const h = sim.restart();
    expect(sim.state()).toMatchObject({ process: 'down', pid: null });
    expect(sim.acceptsConnections).toBe(false);
    await expect(get(sim.port, '/health')).rejects.toThrow(/socket hang up|ECONNRESET/);
    clock.advance(50);
    await h.initiated;
    expect(sim.acceptsConnections).toBe(true);
    expect((await get(sim.port, '/health')).status).toBe(503);
    clock.advance(250);
    expect(await h.outcome).toBe('serving');
    await h.ready;
    expect((await get(sim.port, '/health')).status).toBe(200);
    expect(states).toEqual(['down', 'loading', 'up']);
    expect(sim.state().pid).not.toBe(pid);
  });

  it('ghost: restarts fail to bind while the old process answers; kill() ends it and the next restart serves', async () => {
    const { clock, sim } = await start();
    const pid = sim.state().pid;
    sim.ghostOnNextRestart();
    expect(await sim.restart().outcome).toBe('address-in-use');
    expect(await sim.restart().outcome).toBe('address-in-use');
    expect(sim.state()).toMatchObject({ process: 'up', pid, ghost: true });
    expect((await get(sim.port, '/health')).status).toBe(200);
    expect(sim.kill(pid! + 1)).toBe(false);
    expect(sim.kill(pid!)).toBe(true);
    expect(sim.state()).toMatchObject({ process: 'down', pid: null, ghost: false });
    const h = sim.restart();
    clock.advance(300);
    expect(await h.outcome).toBe('serving');
  });

  it('with --api-key: every route but /health and the model list answers 401 without it', async () => {
    const { sim } = await start({ apiKey: 'sekrit' });
    expect((await get(sim.port, '/health')).status).toBe(200);
    expect((await get(sim.port, '/v1/models')).status).toBe(200);
    const refused = await get(sim.port, '/props');
    expect([refused.status, refused.body]).toEqual([401, '{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}']);
    expect((await get(sim.port, '/props', { authorization: 'Bearer sekrit' })).status).toBe(200);
    expect((await get(sim.port, '/metrics', { authorization: 'Bearer wrong' })).status).toBe(401);
  });

  it('disposes once, closing its listener', async () => {
    const { sim } = await start();
    await sim.dispose();
    await sim.dispose();
    expect(sim.listening).toBe(false);
    expect(() => sim.restart()).toThrow(expect.objectContaining({ code: 'DEMO_DISPOSED' }));
  });
});
