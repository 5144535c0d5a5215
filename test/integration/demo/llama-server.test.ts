import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src-main/core/base/index.js';
import { validateConfig } from '../../../src-main/core/config/index.js';
import { DEMO_HOSTS, startDemoFleet, type DemoFleet, type HostProfile } from '../../../src-main/demo/index.js';
import {
  AMD_SYSFS_COMMAND,
  LlamaServerHttpSource,
  httpGetFor,
  llamaHealthFromResponse,
  parseAmdSysfs,
  parseLlamaProps,
  parseLlamaSlots,
  parsePrometheusText,
  readLlamaServerMetrics,
} from '../../../src-main/core/telemetry/index.js';
import { fixtureJson, fixtureText, shapeText, ssePayloads, tinyLlamaProfile } from '../../fixtures/llama-server/fixtures.js';
import { connectSsh, exec, forward, http } from './demo-client.js';
import { RawConnection } from './raw-http.js';
import { urlClient } from '../../helpers/upstream.js';

// The llama-server simulator through the demo hosts' SSH forwards, against the
// recorded b10573 answers: `tiny` runs the recorded server's settings
// (4 slots, -c 4096, -n 256), `strix` is the demo's AMD APU host.
// decodeSpeedFactor 4: 80 tok/s per tiny slot, 288 on strix.

const STRIX = DEMO_HOSTS.find((h) => h.label === 'strix')!;
const TINY_HOST: HostProfile = {
  ...DEMO_HOSTS.find((h) => h.label === 'l20-poc')!,
  label: 'tiny',
  hostname: 'tiny',
  // 80 tok/s per slot at decodeSpeedFactor 4: a 256-token answer takes 3.2 s, long enough to look at busy slots on a loaded machine.
  services: [tinyLlamaProfile({ decodeTokPerSec: 20 })],
};

let dir: string;
let fleet: DemoFleet;
let tiny: Client;
let strix: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-llama-'));
  fleet = await startDemoFleet({ dir, timeScale: 1000, decodeSpeedFactor: 4, profiles: [STRIX, TINY_HOST] });
  tiny = await connectSsh(fleet, fleet.host('tiny'));
  strix = await connectSsh(fleet, fleet.host('strix'));
});

afterAll(async () => {
  tiny?.end();
  strix?.end();
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const PORT = 18181;
const json = (body: string): unknown => JSON.parse(body);
const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'whatever', messages: [{ role: 'user', content }], ...extra });

describe('llama-server simulator: the recorded answers', () => {
  it('answers /health, /props, /v1/models and idle /slots as recorded, with the server headers', async () => {
    const health = await http(tiny, PORT, 'GET', '/health');
    expect([health.status, json(health.body)]).toEqual([200, fixtureJson('health.json')]);
    expect(health.headers).toMatchObject({ server: 'llama.cpp', 'access-control-allow-origin': '', 'content-type': 'application/json; charset=utf-8', 'keep-alive': 'timeout=5, max=100' });
    const props = await http(tiny, PORT, 'GET', '/props');
    const recordedProps = fixtureJson<Record<string, unknown>>('props.json');
    expect(shapeText(json(props.body))).toBe(shapeText(recordedProps));
    expect({ ...(json(props.body) as object), media_marker: recordedProps['media_marker'] }).toEqual(recordedProps);
    const models = await http(tiny, PORT, 'GET', '/v1/models');
    expect(shapeText(json(models.body))).toBe(shapeText(fixtureJson('models.json')));
    const slots = await http(tiny, PORT, 'GET', '/slots');
    expect(json(slots.body)).toEqual(fixtureJson('slots.json'));
    // The console reads them.
    expect(llamaHealthFromResponse(health.status, health.body)).toBe('ok');
    expect(parseLlamaProps(props.body)).toMatchObject({ nCtx: 1024, totalSlots: 4, model: 'tiny-random-llama', buildInfo: 'b10573-d775b89', isSleeping: false });
    expect(parseLlamaSlots(slots.body)!.slots.map((s) => [s.nCtx, s.isProcessing])).toEqual(Array(4).fill([1024, false]));
    const metrics = await http(tiny, PORT, 'GET', '/metrics');
    expect(metrics.headers['content-type']).toBe('text/plain; version=0.0.4');
    expect(metrics.headers['process-start-time-unix']).toMatch(/^\d+$/);
    expect(metrics.body).toBe(fixtureText('metrics-idle.txt'));
  });

  it('answers chat completions in the recorded shapes, streaming or not', async () => {
    const full = await http(tiny, PORT, 'POST', '/v1/chat/completions', chat('Say something.', { max_tokens: 32 }));
    expect(full.status).toBe(200);
    const recorded = fixtureJson<{ usage: unknown }>('chat.json');
    expect(shapeText(json(full.body))).toBe(shapeText(recorded));
    expect(json(full.body)).toMatchObject({ object: 'chat.completion', model: 'tiny-random-llama', system_fingerprint: 'b10573-d775b89', choices: [{ finish_reason: 'length' }] });

    const streamed = await http(tiny, PORT, 'POST', '/v1/chat/completions', chat('Say something.', { max_tokens: 16, stream: true, stream_options: { include_usage: true } }));
    expect(streamed.headers).toMatchObject({ 'content-type': 'text/event-stream', 'x-accel-buffering': 'no', 'transfer-encoding': 'chunked' });
    const ours = ssePayloads(streamed.body);
    const theirs = ssePayloads(fixtureText('chat-stream.txt'));
    expect(ours.at(-1)).toBe('[DONE]');
    expect(ours).toHaveLength(theirs.length); // role, 16 tokens, finish, usage, [DONE]
    const kinds = (list: string[]) => list.slice(0, -1).map((p) => shapeText(json(p)));
    expect(kinds(ours)).toEqual(kinds(theirs));
    const usage = json(ours.at(-2)!) as { usage: { completion_tokens: number }; timings: { predicted_n: number } };
    expect([usage.usage.completion_tokens, usage.timings.predicted_n]).toEqual([16, 16]);

    // Without include_usage: no usage chunk; the finish chunk carries the timings.
    const plain = ssePayloads((await http(tiny, PORT, 'POST', '/v1/chat/completions', chat('Again.', { max_tokens: 4, stream: true }))).body);
    expect(plain).toHaveLength(1 + 4 + 1 + 1);
    const last = json(plain.at(-2)!) as Record<string, unknown>;
    expect(last).toMatchObject({ choices: [{ finish_reason: 'length', delta: {} }], timings: { predicted_n: 4 } });
    expect(last).not.toHaveProperty('usage');
  });

  it('answers bad input with the server error shapes', async () => {
    const unknown = await http(tiny, PORT, 'GET', '/nope');
    expect([unknown.status, json(unknown.body)]).toEqual([404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } }]);
    const badJson = await http(tiny, PORT, 'POST', '/v1/chat/completions', '{"messages":');
    expect(badJson.status).toBe(500);
    expect(json(badJson.body)).toEqual({ error: { code: 500, message: expect.stringMatching(/^\[json\.exception\.parse_error\.101\] parse error/), type: 'server_error' } });
    const noMessages = await http(tiny, PORT, 'POST', '/v1/chat/completions', { max_tokens: 4 });
    expect([noMessages.status, json(noMessages.body)]).toEqual([400, { error: { code: 400, message: "'messages' is required", type: 'invalid_request_error' } }]);
    const tooLong = await http(tiny, PORT, 'POST', '/v1/chat/completions', chat('x'.repeat(5000)));
    expect(tooLong.status).toBe(400);
    expect(json(tooLong.body)).toEqual({
      error: { code: 400, message: expect.stringMatching(/^request \(\d+ tokens\) exceeds the available context size \(1024 tokens\), try increasing it$/), type: 'exceed_context_size_error', n_prompt_tokens: expect.any(Number), n_ctx: 1024 },
    });
    const props = await http(tiny, PORT, 'POST', '/props', {});
    expect(props.status).toBe(501);
  });
});

describe('llama-server simulator: busy slots', () => {
  it('queues requests beyond the slots, shows live progress, and moves counters when requests finish', async () => {
    const before = readLlamaServerMetrics(parsePrometheusText((await http(tiny, PORT, 'GET', '/metrics')).body).families);
    const requests = Array.from({ length: 6 }, (_, i) =>
      http(tiny, PORT, 'POST', '/v1/chat/completions', chat(`Write a long story number ${i}.`, { max_tokens: 256, ignore_eos: true, stream: true })),
    );
    await expect.poll(async () => parseLlamaSlots((await http(tiny, PORT, 'GET', '/slots')).body)!.slots.filter((s) => s.isProcessing).length, { interval: 10, timeout: 5000 }).toBe(4);
    const busy = json((await http(tiny, PORT, 'GET', '/slots')).body) as Record<string, unknown>[];
    expect(shapeText(busy[0])).toBe(shapeText(fixtureJson<unknown[]>('slots-busy.json')[0]));
    const noSlot = await http(tiny, PORT, 'GET', '/slots?fail_on_no_slot=1');
    expect([noSlot.status, json(noSlot.body)]).toEqual([503, fixtureJson('slots-fail_on_no_slot-busy-503.json')]);
    const metricsText = (await http(tiny, PORT, 'GET', '/metrics')).body;
    const families = parsePrometheusText(metricsText).families;
    expect(families.map((f) => [f.name, f.type])).toEqual(parsePrometheusText(fixtureText('metrics-busy-deferred.txt')).families.map((f) => [f.name, f.type]));
    expect(readLlamaServerMetrics(families)).toMatchObject({ running: 4, waiting: 2, generationTokensTotal: before.generationTokensTotal });
    expect((await http(tiny, PORT, 'GET', '/health')).status).toBe(200);
    const decoded = () => http(tiny, PORT, 'GET', '/slots').then((r) => parseLlamaSlots(r.body)!.slots[0]!.decodedTokens ?? 0);
    const first = await decoded();
    await new Promise((r) => setTimeout(r, 80));
    expect(await decoded()).toBeGreaterThan(first);
    const answers = await Promise.all(requests);
    for (const a of answers) expect(ssePayloads(a.body).at(-1)).toBe('[DONE]');
    const after = readLlamaServerMetrics(parsePrometheusText((await http(tiny, PORT, 'GET', '/metrics')).body).families);
    expect(after).toMatchObject({ running: 0, waiting: 0, generationTokensTotal: before.generationTokensTotal! + 6 * 256 });
  });

  it('is scraped by the console source (LlamaServerHttpSource) on its loopback port', async () => {
    const sim = fleet.host('strix').llamaServer('coder');
    const source = new LlamaServerHttpSource({ id: 'strix/coder', get: httpGetFor(urlClient(`http://127.0.0.1:${sim.port}`)), clock: systemClock });
    const reading = await source.scrape();
    expect(reading.ok).toBe(true);
  });
});

describe('the strix host (AMD Strix Halo APU)', () => {
  it('has a config the console schema accepts, slots = total_slots', async () => {
    const config = validateConfig({ hosts: fleet.config.hosts }, { home: dir });
    const svc = config.hosts.find((h) => h.label === 'strix')!.services[0]!;
    expect(svc).toMatchObject({ kind: 'llama-server', remotePort: 8080, slots: 2, model: 'Qwen3-Coder-30B-A3B' });
    const props = parseLlamaProps((await http(strix, 8080, 'GET', '/props')).body)!;
    expect(props).toMatchObject({ totalSlots: svc.slots, nCtx: 131072, model: 'Qwen3-Coder-30B-A3B' });
  });

  it('lists llama-server on 127.0.0.1:8080 with its pid, and shows the model and KV in GTT while it decodes', async () => {
    const sim = fleet.host('strix').llamaServer('coder');
    const ss = (await exec(strix, 'ss -ltnpH')).stdout;
    expect(ss).toContain(`127.0.0.1:8080 0.0.0.0:*   users:(("llama-server",pid=${sim.state().pid},fd=3))`);
    expect((await exec(strix, 'nvidia-smi')).code).toBe(127);
    const idle = parseAmdSysfs((await exec(strix, AMD_SYSFS_COMMAND)).stdout).gpus[0]!;
    expect(idle).toMatchObject({ name: 'AMD Radeon 8060S', memoryTotalMiB: 512, gttTotalMiB: 63488, utilizationPct: 0 });
    expect(idle.gttUsedMiB!).toBeGreaterThan(17_697 + 900);
    const long = 'Review this function carefully and explain every line. '.repeat(400); // ~5,600 prompt tokens
    const running = [1, 2].map((i) => http(strix, 8080, 'POST', '/v1/chat/completions', chat(`${i} ${long}`, { max_tokens: 600, ignore_eos: true })));
    await expect.poll(async () => parseAmdSysfs((await exec(strix, AMD_SYSFS_COMMAND)).stdout).gpus[0]!.utilizationPct, { interval: 50, timeout: 40_000 }).toBeGreaterThan(80);
    const busy = parseAmdSysfs((await exec(strix, AMD_SYSFS_COMMAND)).stdout).gpus[0]!;
    // Two slots with ~5,600 prompt tokens each at 52 KB a token: over 500 MiB of KV.
    expect(busy.gttUsedMiB! - idle.gttUsedMiB!).toBeGreaterThan(500);
    const metrics = readLlamaServerMetrics(parsePrometheusText((await http(strix, 8080, 'GET', '/metrics')).body).families);
    expect(metrics.running).toBe(2);
    await Promise.all(running);
  }, 60_000);
});

describe('llama-server simulator: the HTTP library habits', () => {
  it('closes a connection after its 100th request: that answer says Connection: close, a reuse sees no byte', async () => {
    const conn = new RawConnection(await forward(tiny, PORT));
    for (let i = 1; i < 100; i++) {
      const r = await conn.request('GET', '/health');
      if (r === 'closed') throw new Error(`closed after ${i - 1} requests`);
      expect(r.headers['keep-alive']).toBe('timeout=5, max=100');
    }
    const hundredth = await conn.request('GET', '/health');
    expect(hundredth).not.toBe('closed');
    expect((hundredth as Exclude<typeof hundredth, 'closed'>).headers['connection']).toBe('close');
    const reuse = await conn.request('GET', '/health');
    expect(reuse).toBe('closed');
    expect(conn.bytesSinceLastAnswer).toBe(0);
  });

  it('closes an idle keep-alive connection after 5 s', async () => {
    const sim = fleet.host('tiny').llamaServer('tiny');
    const socket = connect(sim.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const conn = new RawConnection(socket);
    expect(await conn.request('GET', '/health')).toMatchObject({ status: 200 });
    const answeredAt = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    expect(await conn.request('GET', '/health')).toMatchObject({ status: 200 }); // still open at 3 s, and the clock restarts
    const again = Date.now();
    await conn.closed;
    const idleMs = Date.now() - again;
    expect(idleMs).toBeGreaterThan(4500);
    expect(idleMs).toBeLessThan(8000);
    expect(again - answeredAt).toBeGreaterThan(2900);
  }, 20_000);
});
