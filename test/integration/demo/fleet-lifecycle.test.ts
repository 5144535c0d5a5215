import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGibberish, startDemoFleet, type DemoFleet, type SimulatorState, type VllmSimulator } from '../../../src-main/demo/index.js';
import { connectSsh, exec, forward, http, metricValue } from './demo-client.js';

// timeScale 1000: a 120 s restart takes 0.12 s, a 3 s wake 3 ms, a 20 s reload 20 ms.
let dir: string;
let fleet: DemoFleet;
let tri: Client;
let l20: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-life-'));
  fleet = await startDemoFleet({ dir, timeScale: 1000, decodeSpeedFactor: 20 });
  tri = await connectSsh(fleet, fleet.host('tri-gpu'));
  l20 = await connectSsh(fleet, fleet.host('l20-poc'));
});

afterAll(async () => {
  tri?.end();
  l20?.end();
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function gpuRow(client: Client, index: number): Promise<{ memoryMiB: number; powerW: number }> {
  const out = (await exec(client, `nvidia-smi --query-gpu=memory.used,power.draw -i ${index} --format=csv,noheader,nounits`)).stdout;
  const [memoryMiB, powerW] = out.trim().split(', ').map(Number) as [number, number];
  return { memoryMiB, powerW };
}

function waitForState(sim: VllmSimulator, pred: (s: SimulatorState) => boolean): Promise<SimulatorState> {
  if (pred(sim.state())) return Promise.resolve(sim.state());
  return new Promise((resolve) => {
    const sub = sim.onDidChangeState.on((s) => {
      if (pred(s)) {
        void sub.dispose();
        resolve(s);
      }
    });
  });
}

const ask = (client: Client, port: number, model: string, extra: Record<string, unknown> = {}) =>
  http(client, port, 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Summarise the page.' }], max_tokens: 20, ...extra });

describe('sleep mode', () => {
  it('level 1: VRAM and power fall, requests get 503, wake restores everything', async () => {
    const awake = await gpuRow(tri, 2);
    expect((await ask(tri, 8001, 'olmOCR-2-7B')).status).toBe(200);

    const slept = await http(tri, 8001, 'POST', '/sleep?level=1');
    expect([slept.status, slept.body]).toEqual([200, '']);
    expect(JSON.parse((await http(tri, 8001, 'GET', '/is_sleeping')).body)).toEqual({ is_sleeping: true });
    const asleep = await gpuRow(tri, 2);
    expect(awake.memoryMiB - asleep.memoryMiB).toBeGreaterThan(20_000);
    expect(asleep.memoryMiB).toBeGreaterThan(5_000); // the embedding model on GPU2 stays awake
    const apps = (await exec(tri, 'nvidia-smi --query-compute-apps=pid,used_memory -i 2 --format=csv,noheader,nounits')).stdout.trim().split('\n');
    const ocrRow = apps.map((l) => l.split(', ').map(Number)).find(([pid]) => fleet.host('tri-gpu').simulator('ocr').state().pids.includes(pid!));
    expect(ocrRow![1]).toBeGreaterThanOrEqual(1024);
    expect(ocrRow![1]).toBeLessThanOrEqual(2048);
    const metrics = (await http(tri, 8001, 'GET', '/metrics')).body;
    expect(metricValue(metrics, 'vllm:engine_sleep_state', { sleep_state: 'weights_offloaded' })).toBe(1);
    expect(metricValue(metrics, 'vllm:engine_sleep_state', { sleep_state: 'awake' })).toBe(0);
    expect((await http(tri, 8001, 'GET', '/health')).status).toBe(200);

    const refused = await ask(tri, 8001, 'olmOCR-2-7B');
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toEqual({ error: { message: expect.stringMatching(/sleeping/), type: 'ServiceUnavailableError', param: null, code: 503 } });

    expect((await http(tri, 8001, 'POST', '/wake_up')).status).toBe(200);
    expect(JSON.parse((await http(tri, 8001, 'GET', '/is_sleeping')).body)).toEqual({ is_sleeping: false });
    expect((await gpuRow(tri, 2)).memoryMiB).toBe(awake.memoryMiB);
    const answer = JSON.parse((await ask(tri, 8001, 'olmOCR-2-7B')).body);
    expect(isGibberish(answer.choices[0].message.content)).toBe(false);
  });

  it('power falls to idle while the text model sleeps on GPU0+GPU1', async () => {
    const awake = [await gpuRow(tri, 0), await gpuRow(tri, 1)];
    expect((await http(tri, 8000, 'POST', '/sleep?level=1')).status).toBe(200);
    const asleep = [await gpuRow(tri, 0), await gpuRow(tri, 1)];
    for (let i = 0; i < 2; i++) {
      expect(asleep[i]!.powerW).toBeLessThan(awake[i]!.powerW - 20);
      expect(asleep[i]!.memoryMiB).toBeLessThan(2_048);
    }
    expect((await http(tri, 8000, 'POST', '/wake_up')).status).toBe(200);
  });

  it('level 2 woken without reload_weights answers gibberish; the documented sequence fixes it', async () => {
    const sim = fleet.host('tri-gpu').simulator('gemma');
    expect((await http(tri, 8000, 'POST', '/sleep?level=2')).status).toBe(200);
    expect(metricValue((await http(tri, 8000, 'GET', '/metrics')).body, 'vllm:engine_sleep_state', { sleep_state: 'discard_all' })).toBe(1);
    const l2 = (await gpuRow(tri, 0)).memoryMiB;
    expect(l2).toBeLessThan(1_024);

    expect((await http(tri, 8000, 'POST', '/wake_up')).status).toBe(200);
    const garbage = JSON.parse((await ask(tri, 8000, 'Gemma-3-27B-it')).body).choices[0].message.content as string;
    expect(isGibberish(garbage)).toBe(true);
    expect(sim.state().weightsValid).toBe(false);

    expect((await http(tri, 8000, 'POST', '/sleep?level=2')).status).toBe(200);
    expect((await http(tri, 8000, 'POST', '/collective_rpc', { method: 'reload_weights' })).status).toBe(500); // weights not allocated yet
    expect((await http(tri, 8000, 'POST', '/wake_up?tags=weights')).status).toBe(200);
    expect(JSON.parse((await http(tri, 8000, 'GET', '/is_sleeping')).body)).toEqual({ is_sleeping: true });
    expect((await ask(tri, 8000, 'Gemma-3-27B-it')).status).toBe(503);
    expect((await http(tri, 8000, 'POST', '/collective_rpc', '{nope')).status).toBe(400);
    expect((await http(tri, 8000, 'POST', '/collective_rpc', { args: [] })).status).toBe(400);
    expect((await http(tri, 8000, 'POST', '/collective_rpc', { method: 'reload_weights', args: [], kwargs: {}, timeout: null })).status).toBe(200);
    expect((await http(tri, 8000, 'POST', '/wake_up?tags=kv_cache')).status).toBe(200);
    expect(JSON.parse((await http(tri, 8000, 'GET', '/is_sleeping')).body)).toEqual({ is_sleeping: false });
    const text = JSON.parse((await ask(tri, 8000, 'Gemma-3-27B-it')).body).choices[0].message.content as string;
    expect(isGibberish(text)).toBe(false);
    expect(sim.state()).toMatchObject({ sleepState: 'awake', weightsValid: true });
  });
});

describe('restart through the restart command', () => {
  it('takes the service down, loads, comes back with counters reset and a new pid', async () => {
    const sim = fleet.host('l20-poc').simulator('qwen');
    expect((await ask(l20, 8000, 'Qwen3.6-27B-FP8')).status).toBe(200);
    expect(metricValue((await http(l20, 8000, 'GET', '/metrics')).body, 'vllm:generation_tokens_total')).toBeGreaterThan(0);
    const pidBefore = (await exec(l20, 'nvidia-smi --query-compute-apps=pid --format=csv,noheader')).stdout.trim();
    const sawDown = waitForState(sim, (s) => s.process === 'down');

    const result = await exec(l20, 'docker compose -f /srv/vllm/compose.yaml restart vllm');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Container vllm  Restarting');
    await sawDown;
    // docker compose returns once the container restarted: the model is still loading, so refuse.
    if (sim.state().process !== 'up') await expect(forward(l20, 8000)).rejects.toThrow(/Channel open failure/);

    await waitForState(sim, (s) => s.process === 'up');
    const metrics = (await http(l20, 8000, 'GET', '/metrics')).body;
    expect(metricValue(metrics, 'vllm:generation_tokens_total')).toBe(0);
    expect(metricValue(metrics, 'vllm:request_success_total', { finished_reason: 'stop' })).toBe(0);
    const pidAfter = (await exec(l20, 'nvidia-smi --query-compute-apps=pid --format=csv,noheader')).stdout.trim();
    expect(pidAfter).toMatch(/^\d+$/);
    expect(pidAfter).not.toBe(pidBefore);
    expect((await ask(l20, 8000, 'Qwen3.6-27B-FP8')).status).toBe(200);
  });

  it('shows no process while down and a loading process growing its memory', async () => {
    const sim = fleet.host('tri-gpu').simulator('embed');
    const restart = sim.restart();
    expect(sim.state()).toMatchObject({ process: 'down', pids: [] });
    await expect(forward(tri, 8002)).rejects.toThrow(/Channel open failure/);
    await restart.initiated;
    expect(sim.state().process).toBe('loading');
    expect(sim.state().pids).toHaveLength(1);
    await restart.ready;
    expect((await http(tri, 8002, 'GET', '/health')).status).toBe(200);
  });

  it('a restart via systemctl is matched verbatim', async () => {
    const sim = fleet.host('tri-gpu').simulator('ocr');
    const res = await exec(tri, 'sudo systemctl restart vllm-ocr');
    expect(res).toEqual({ stdout: '', stderr: '', code: 0 });
    expect(sim.state().process).not.toBe('up');
    await waitForState(sim, (s) => s.process === 'up');
    expect((await exec(tri, 'sudo systemctl restart vllm-nope')).code).toBe(127);
  });
});
